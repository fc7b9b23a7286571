// pk/spec.h: the pkc spec language, as plain C++ that any compiler or editor accepts.
//
// A spec is a function marked PK_KERNEL whose parameters are tensors and whose body says
// which tiles to load, what to compute and what to communicate. pkc parses it with Clang
// and lowers the subset declared here to the pk dialect; the functions are declarations
// only (pkc gives them meaning), so a spec type-checks but never links into a program.
// No standard library includes: parsing a spec must stay in the millisecond range.
#ifndef PK_SPEC_H
#define PK_SPEC_H

#if __cplusplus < 201703L
#error "pk/spec.h needs C++17 or later (pkc's default is -std=c++20)"
#endif

// Marks a kernel. The annotation is what pkc looks for; other functions are ignored.
#define PK_KERNEL [[clang::annotate("pk.kernel")]]

namespace pk {

// Element types. Tags only: a spec never touches single elements.
struct bf16;
struct f16;
struct f32;
struct i32;  // signed integers: token and expert ids, counts, offsets
struct i64;
// 8-bit signed integers: storage for int8-quantised weights and activations. Arithmetic on i8
// tiles wraps at 8 bits, as on i32 tiles at 32; cast<i8>(t) of a float tile rounds toward zero
// and saturates to [-128, 127] (NaN gives 0), of a wider integer tile it wraps. Row indices,
// counters and histograms take i32 or i64, and reductions refuse i8: cast<i32>(t) first.
struct i8;
// fp8 (OCP E4M3 and E5M2): storage for quantised tensors. Tiles of them compute in fp32 like
// bf16 ones; cast<f8e4m3>(t) rounds to nearest even and saturates to the largest finite value
// (448; 57344 for e5m2), so scale first: cast<f8e4m3>(t * (448 / row_max(abs(t)))).
struct f8e4m3;
struct f8e5m2;

// Which operations take which element types. Math, row reductions and float scalars are for
// float tiles; %, integer scalars and integer masks for integer tiles (i32, i64). An operation
// used on the wrong kind of tile is a C++ overload error at its source location.
template <bool B, class T = void> struct EnableIf {};
template <class T> struct EnableIf<true, T> { using type = T; };
template <class T> struct IsFloat { static constexpr bool value = false; };
template <> struct IsFloat<bf16> { static constexpr bool value = true; };
template <> struct IsFloat<f16> { static constexpr bool value = true; };
template <> struct IsFloat<f32> { static constexpr bool value = true; };
template <> struct IsFloat<f8e4m3> { static constexpr bool value = true; };
template <> struct IsFloat<f8e5m2> { static constexpr bool value = true; };
template <class T> struct AlwaysFalse { static constexpr bool value = false; };  // a static_assert's
template <class T> struct IsInt { static constexpr bool value = false; };
template <> struct IsInt<i32> { static constexpr bool value = true; };
template <> struct IsInt<i64> { static constexpr bool value = true; };
template <> struct IsInt<i8> { static constexpr bool value = true; };
// The integer types that index rows and count: i8 would wrap past 127.
template <class T> struct IsIndexInt { static constexpr bool value = false; };
template <> struct IsIndexInt<i32> { static constexpr bool value = true; };
template <> struct IsIndexInt<i64> { static constexpr bool value = true; };
// C++ integer scalars (literals, index values); never a float, which would truncate silently.
template <class T> struct IsIntegral { static constexpr bool value = false; };
template <> struct IsIntegral<int> { static constexpr bool value = true; };
template <> struct IsIntegral<long> { static constexpr bool value = true; };
template <> struct IsIntegral<long long> { static constexpr bool value = true; };
template <> struct IsIntegral<unsigned> { static constexpr bool value = true; };
template <> struct IsIntegral<unsigned long> { static constexpr bool value = true; };
template <class T, class R> using IfFloat = typename EnableIf<IsFloat<T>::value, R>::type;
template <class T, class I, class R>
using IfIntScalar = typename EnableIf<IsInt<T>::value && IsIntegral<I>::value, R>::type;

// Sizes, offsets, ranks: run-time integers (index in the dialect).
using index = long;
// min and max of two integers (indices, integer arguments, constants) are indices: a clamped
// origin or bound, min(i / 256, 7) * 256.
template <class A, class B>
using IfIndices = typename EnableIf<IsIntegral<A>::value && IsIntegral<B>::value, index>::type;
template <class A, class B> IfIndices<A, B> min(A, B);
template <class A, class B> IfIndices<A, B> max(A, B);

enum Reduce { Sum, Max, Min };           // reductions over ranks or along rows
enum Transport { Ldst, Tma, Multimem };  // how a primitive moves bytes
enum Scope { Block, Grid };              // who shares a flag slot

// A peer's copy of a symmetric tensor: the destination of stores into other ranks.
template <class T, int Rank> struct Peer {};

// The scalar an element reads as: an index for integer tensors, a float for float ones.
template <class T> struct ScalarOf { using type = float; };
template <> struct ScalarOf<i32> { using type = index; };
template <> struct ScalarOf<i64> { using type = index; };
template <> struct ScalarOf<i8> { using type = index; };

// A tensor in this rank's global memory; its sizes are known at launch.
template <class T, int Rank> struct Tensor {
  // One element, read by every thread (a count, an offset); outside the tensor it reads 0.
  template <class... I> typename ScalarOf<T>::type at(I... i) const;
  index dim(int d) const;
  index size() const;  // dimension 0
  index rows() const;  // dimension 0
  index cols() const;  // dimension 1
  // Peers' copies are a Sym's; this overload turns `x.on(p)` into an error that says so.
  template <class P>
  auto on(P) const {  // deduced: the message is instantiated at the call
    static_assert(sizeof(P) == 0,
                  "only a symmetric tensor has copies on other ranks: declare the parameter "
                  "Sym<T, R> (allocated on every rank with one shape) instead of Tensor<T, R>");
    return 0;
  }
};

// A symmetric tensor: allocated on every rank with one shape, addressable by peers.
template <class T, int Rank> struct Sym {
  index dim(int d) const;
  index size() const;
  index rows() const;
  index cols() const;
  Peer<T, Rank> on(index peer) const;  // the copy that lives on rank `peer`
  // Scalar reads are of local tensors only; this overload turns `y.at(i)` into an error that
  // says what to write instead.
  template <class... I>
  auto at(I...) const {  // deduced: the body, and its message, are instantiated at the call
    static_assert(sizeof...(I) == ~0ul,
                  "a symmetric tensor has no .at(): read the element as a 1 x 1 tile, "
                  "load<1, 1>(y, i), which broadcasts against any tile, or read a local Tensor");
    return 0.0f;
  }
};

// A symmetric tensor the caller lends as workspace: a Sym whose contents after the kernel are
// unspecified. pkc may skip writing it when a fused template makes the writes unnecessary (the
// product of a GEMM that is all-reduced, the landing rows of an all-gather feeding a GEMM);
// stores into a plain Sym or Tensor are always performed.
template <class T, int Rank> struct Scratch : Sym<T, Rank> {};

// Tiles: statically shaped blocks in registers (Tile) or shared memory (SmemTile).
template <class T, long... Shape> struct Tile {};
template <class T, long... Shape> struct SmemTile {};

// A flag slot for the explicit synchronisation primitives.
struct Flag {};

// This GPU's rank and the number of ranks: run-time values, never constants.
index rank();
index world_size();
index next_rank();  // (rank() + 1) % world_size(): the ring neighbour a shift sends to
index prev_rank();  // (rank() + world_size() - 1) % world_size()

// Tile loops. `for (auto [m, n] : tiles(M, N, {128, 256}))` visits every tile origin of
// [0, M) x [0, N) in parallel and in no fixed order; steps are integer constants.
// `for (auto k : range(lo, hi, step))` is a sequential loop; values assigned inside it
// carry over to the next iteration.
struct Steps1 { long s0; };
struct Steps2 { long s0, s1; };
struct Steps3 { long s0, s1, s2; };
struct Origin2 { index i0, i1; };
struct Origin3 { index i0, i1, i2; };
template <class V> struct LoopIter {
  V operator*() const;
  LoopIter &operator++();
  bool operator!=(const LoopIter &) const;
};
template <class V> struct Loop {
  LoopIter<V> begin() const;
  LoopIter<V> end() const;
};
Loop<index> tiles(index n, Steps1 steps);
Loop<Origin2> tiles(index m, index n, Steps2 steps);
Loop<Origin3> tiles(index a, index b, index c, Steps3 steps);
Loop<index> range(index lo, index hi, index step = 1);

// Loads and stores of this rank's tensors. The tile shape is given explicitly:
// `load<128, 64>(A, m, k)`; tiles at an edge are clipped.
template <long... S, class T, int R, class... I> Tile<T, S...> load(const Tensor<T, R> &, I...);
template <long... S, class T, int R, class... I> Tile<T, S...> load(const Sym<T, R> &, I...);
template <long... S, class T, int R, class... I>
SmemTile<T, S...> load_smem(const Tensor<T, R> &, I...);
template <long... S, class T, int R, class... I>
SmemTile<T, S...> load_smem(const Sym<T, R> &, I...);
template <class X, class T, int R, class... I> void store(const Tensor<T, R> &, X tile, I...);
template <class X, class T, int R, class... I> void store(const Sym<T, R> &, X tile, I...);
// The tile at an origin of rank p's copy, pulled by NVLink loads: `load<16, 256>(y.on(p), m, n)`.
// pkc orders the pull after the peers' earlier writes (as for tiles stored into peers).
template <long... S, class T, int R, class... I> Tile<T, S...> load(const Peer<T, R> &, I...);

// Rows by an index tile: embedding lookups, MoE dispatch and combine. `idx` is an integer
// tile of R row indices (shaped R or R x 1). A row index outside the tensor reads a row of
// zeros and is dropped on writes: never an out-of-bounds access. The tensor is this rank's
// (a Tensor, or a Sym's own copy) or a peer's copy, `y.on(p)`: rows pulled from or pushed into
// rank p over NVLink, ordered after (and before) the peers' other phases by pkc.
// load_rows<R, C>(x, idx, n): row r of the result is x[idx[r], n .. n + C).
template <long R, long C, class T, class I, long... IS>
typename EnableIf<IsIndexInt<I>::value, Tile<T, R, C>>::type load_rows(const Tensor<T, 2> &, Tile<I, IS...> idx,
                                                                 index col);
template <long R, long C, class T, class I, long... IS>
typename EnableIf<IsIndexInt<I>::value, Tile<T, R, C>>::type load_rows(const Sym<T, 2> &, Tile<I, IS...> idx,
                                                                 index col);
template <long R, long C, class T, class I, long... IS>
typename EnableIf<IsIndexInt<I>::value, Tile<T, R, C>>::type load_rows(const Peer<T, 2> &, Tile<I, IS...> idx,
                                                                 index col);
// store_rows(y, t, idx, n): row r of t to y[idx[r], n ..]; where several rows are sent to one
// index (by several tiles or ranks), what lands is unspecified and may mix pieces (16-byte runs)
// of the rows sent. store_add_rows adds each row instead (atomically), so rows sent to one index
// all arrive.
template <class T, long R, long C, class I, long... IS>
typename EnableIf<IsIndexInt<I>::value>::type store_rows(const Tensor<T, 2> &, Tile<T, R, C> tile, Tile<I, IS...> idx,
                                                    index col);
template <class T, long R, long C, class I, long... IS>
typename EnableIf<IsIndexInt<I>::value>::type store_rows(const Sym<T, 2> &, Tile<T, R, C> tile, Tile<I, IS...> idx,
                                                    index col);
template <class T, long R, long C, class I, long... IS>
typename EnableIf<IsIndexInt<I>::value>::type store_rows(const Peer<T, 2> &, Tile<T, R, C> tile, Tile<I, IS...> idx,
                                                    index col);
template <class T, long R, long C, class I, long... IS>
typename EnableIf<IsIndexInt<I>::value>::type store_add_rows(const Tensor<T, 2> &, Tile<T, R, C> tile, Tile<I, IS...> idx,
                                                        index col);
template <class T, long R, long C, class I, long... IS>
typename EnableIf<IsIndexInt<I>::value>::type store_add_rows(const Sym<T, 2> &, Tile<T, R, C> tile, Tile<I, IS...> idx,
                                                        index col);
template <class T, long R, long C, class I, long... IS>
typename EnableIf<IsIndexInt<I>::value>::type store_add_rows(const Peer<T, 2> &, Tile<T, R, C> tile, Tile<I, IS...> idx,
                                                        index col);
// Row moves written with a float index tile or a 1-D tensor say what to write instead of
// Clang's bare "no matching function".
template <class I> void row_index_type() {
  static_assert(IsIndexInt<I>::value, "rows move by an integer index tile (i32 or i64): cast it first "
                                      "(cast<i32>(row_index<16, 1>(m)))");
}
template <class T> void row_move_rank() {
  static_assert(AlwaysFalse<T>::value, "load_rows, store_rows and store_add_rows move rows of a 2-D tensor: "
                                       "declare a [N] tensor as [N, 1] (Tensor<T, 2>)");
}
#define PK_SPEC_ROW_MOVE_MISUSES(Ten)                                                                  \
  template <long R, long C, class T, class I, long... IS, class = typename EnableIf<!IsIndexInt<I>::value>::type> \
  Tile<T, R, C> load_rows(const Ten<T, 2> &, Tile<I, IS...>, index) {                                 \
    row_index_type<I>();                                                                               \
    return Tile<T, R, C>();                                                                            \
  }                                                                                                    \
  template <class T, long R, long C, class I, long... IS, class = typename EnableIf<!IsIndexInt<I>::value>::type> \
  void store_rows(const Ten<T, 2> &, Tile<T, R, C>, Tile<I, IS...>, index) { row_index_type<I>(); }   \
  template <class T, long R, long C, class I, long... IS, class = typename EnableIf<!IsIndexInt<I>::value>::type> \
  void store_add_rows(const Ten<T, 2> &, Tile<T, R, C>, Tile<I, IS...>, index) { row_index_type<I>(); } \
  template <long R, long C, class T, class I, long... IS>                                              \
  Tile<T, R, C> load_rows(const Ten<T, 1> &, Tile<I, IS...>, index) {                                  \
    row_move_rank<T>();                                                                                \
    return Tile<T, R, C>();                                                                            \
  }                                                                                                    \
  template <class T, class U, long... S, class I, long... IS>                                          \
  void store_rows(const Ten<T, 1> &, Tile<U, S...>, Tile<I, IS...>, index) { row_move_rank<T>(); }    \
  template <class T, class U, long... S, class I, long... IS>                                          \
  void store_add_rows(const Ten<T, 1> &, Tile<U, S...>, Tile<I, IS...>, index) { row_move_rank<T>(); }
PK_SPEC_ROW_MOVE_MISUSES(Tensor)
PK_SPEC_ROW_MOVE_MISUSES(Sym)
PK_SPEC_ROW_MOVE_MISUSES(Peer)
#undef PK_SPEC_ROW_MOVE_MISUSES
// claim(counter, idx): element i gets the value counter[idx[i]] had and adds one to it,
// atomically, so every slot of a counter is handed out once (in no fixed order) across all
// tiles: the place of each row of an expert in an MoE dispatch. An index outside the counter
// claims nothing and gives -1, a row that store_rows drops. The counter is this rank's.
template <class C, class I, long... S>
typename EnableIf<IsIndexInt<C>::value && IsIndexInt<I>::value, Tile<C, S...>>::type claim(const Tensor<C, 1> &,
                                                                                 Tile<I, S...> idx);
template <class C, class I, long... S>
typename EnableIf<IsIndexInt<C>::value && IsIndexInt<I>::value, Tile<C, S...>>::type claim(const Sym<C, 1> &,
                                                                                 Tile<I, S...> idx);

// Compute on register tiles.
template <class T, long... S> Tile<T, S...> zeros();
// zeros<f32>(128, 256): a tile's shape is part of its type, so it is written in the template
// arguments; this overload only turns the call into an error that says so.
template <class T, class... Extents>
auto zeros(Extents...) {  // deduced: the body, and its message, are instantiated at the call
  static_assert(sizeof...(Extents) == ~0ul,
                "a tile's shape goes in the template arguments: zeros<f32, 128, 256>(), not zeros<f32>(128, 256)");
  return Tile<T, 1>();
}
template <class A, class B, long M, long N>
Tile<f32, M, N> mma(A a, B b, Tile<f32, M, N> acc);  // acc + a @ b
// acc + a @ b^T, with b stored N x K (a linear layer's weight, K-major).
template <class A, class B, long M, long N>
Tile<f32, M, N> mma_t(A a, B b, Tile<f32, M, N> acc);
// i8 a and b with an i32 accumulator: exact integer sums (W8A8: the tensor cores' int8 path).
template <class A, class B, long M, long N>
Tile<i32, M, N> mma(A a, B b, Tile<i32, M, N> acc);
template <class A, class B, long M, long N>
Tile<i32, M, N> mma_t(A a, B b, Tile<i32, M, N> acc);
// Binary element-wise ops take tiles of one shape, or an M x N tile and an M x 1 tile (one
// value per row, as row_sum gives) or a 1 x N tile (one per column), broadcast over the other
// dimension: `x - row_max(x)`.
constexpr long broadcast_dim(long a, long b) { return a == b ? a : a == 1 ? b : b == 1 ? a : -1; }
template <class X, class Y, class = void> struct Broadcast {};
template <class T, long... A, long... B>
struct Broadcast<Tile<T, A...>, Tile<T, B...>,
                 typename EnableIf<sizeof...(A) == sizeof...(B) &&
                                   ((broadcast_dim(A, B) > 0) && ...)>::type> {
  using type = Tile<T, broadcast_dim(A, B)...>;
};
template <class X, class Y> using Broadcasted = typename Broadcast<X, Y>::type;
// Two tiles of one element type whose shapes do not broadcast: these overloads turn the bare
// "no matching function" into an error that says why.
template <class> struct ToVoid { using type = void; };
template <class X, class Y, class = void> struct Broadcasts { static constexpr bool value = false; };
template <class X, class Y>
struct Broadcasts<X, Y, typename ToVoid<typename Broadcast<X, Y>::type>::type> { static constexpr bool value = true; };
template <class T, long... A, long... B>
Tile<T, A...> shapes_do_not_broadcast(Tile<T, A...>, Tile<T, B...>) {
  static_assert(sizeof...(A) == sizeof...(B), "the two tiles have different ranks: broadcasting adds no dimensions; "
                                              "reshape one first (reshape<32, 1>(t) makes a [32] tile a column)");
  static_assert(sizeof...(A) != sizeof...(B), "the two tiles' extents differ in a dimension where neither is 1: each "
                                              "dimension must match, or be 1 in one of them (an [M, 1] column, a "
                                              "[1, N] row)");
  return Tile<T, A...>();
}
#define PK_SPEC_SHAPES(op)                                                                     \
  template <class T, long... A, long... B,                                                     \
            class = typename EnableIf<!Broadcasts<Tile<T, A...>, Tile<T, B...>>::value>::type> \
  Tile<T, A...> op(Tile<T, A...> a, Tile<T, B...> b) { return shapes_do_not_broadcast(a, b); }
PK_SPEC_SHAPES(operator+)
PK_SPEC_SHAPES(operator-)
PK_SPEC_SHAPES(operator*)
PK_SPEC_SHAPES(operator/)
PK_SPEC_SHAPES(operator<)
PK_SPEC_SHAPES(operator<=)
PK_SPEC_SHAPES(operator>)
PK_SPEC_SHAPES(operator>=)
PK_SPEC_SHAPES(operator==)
PK_SPEC_SHAPES(operator!=)
PK_SPEC_SHAPES(operator&&)
PK_SPEC_SHAPES(operator||)
#undef PK_SPEC_SHAPES
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator+(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator-(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator*(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator/(Tile<T, A...>, Tile<T, B...>);
template <class T, long... S> Tile<T, S...> operator-(Tile<T, S...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> max(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> min(Tile<T, A...>, Tile<T, B...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> exp(Tile<T, S...>);
// Math, element by element (fp32 inside, rounded to the element type after each op); float
// tiles only. On integer tiles + - * / % are integer arithmetic (wrapping; / truncates toward
// zero; / and % by zero give 0), and abs, max, min and unary - work alike.
template <class T, long... S> IfFloat<T, Tile<T, S...>> sqrt(Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> rsqrt(Tile<T, S...>);  // 1 / sqrt(x)
template <class T, long... S> IfFloat<T, Tile<T, S...>> log(Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> tanh(Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> sigmoid(Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> silu(Tile<T, S...>);      // x * sigmoid(x)
template <class T, long... S> IfFloat<T, Tile<T, S...>> gelu(Tile<T, S...>);      // the tanh approximation
template <class T, long... S> IfFloat<T, Tile<T, S...>> gelu_erf(Tile<T, S...>);  // the exact (erf) form
template <class T, long... S> IfFloat<T, Tile<T, S...>> erf(Tile<T, S...>);       // the error function
template <class T, long... S> IfFloat<T, Tile<T, S...>> sin(Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> cos(Tile<T, S...>);
template <class T, long... S> Tile<T, S...> abs(Tile<T, S...>);
// To a whole number (still a float): round takes half-way cases to even (as torch.round and
// rintf), floor down, ceil up. Quantising: cast<i8>(round(t * (127 / amax))).
template <class T, long... S> IfFloat<T, Tile<T, S...>> round(Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> floor(Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> ceil(Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> pow(Tile<T, S...>, float exponent);
// A tile exponent is not a power by a scalar: say what to write instead.
template <class T, class U, long... A, long... B> Tile<T, A...> pow(Tile<T, A...>, Tile<U, B...>) {
  static_assert(AlwaysFalse<T>::value, "pow takes a float exponent (a constant or a float argument); for a tile "
                                       "of exponents write exp(e * log(x)) (x > 0)");
  return Tile<T, A...>();
}
// The same math on float scalars (kernel arguments, constants, sizes), computed once in fp32:
// `rsqrt(float(x.cols()))`, `sqrt(eps)`, `max(scale, 1e-6f)`.
float exp(float);
float sqrt(float);
float rsqrt(float);
float log(float);
float tanh(float);
float sigmoid(float);
float silu(float);
float gelu(float);
float gelu_erf(float);
float erf(float);
float sin(float);
float cos(float);
float abs(float);
float round(float);
float floor(float);
float ceil(float);
float pow(float, float exponent);
float max(float, float);
float min(float, float);
// Tiles of two element types do not combine: these overloads turn `mask_i32 * mask_f32` into
// an error that says to cast one side.
template <class T, class U> struct IsSame { static constexpr bool value = false; };
template <class T> struct IsSame<T, T> { static constexpr bool value = true; };
template <class T, class U, long... A, long... B>
auto mixed_element_types(Tile<T, A...>, Tile<U, B...>) {
  static_assert(IsSame<T, U>::value, "the two tiles have different element types: cast one side to "
                                      "the other's type first (cast<f32>(mask), cast<i32>(t))");
  return Tile<T, A...>();
}
#define PK_SPEC_MIXED(op)                                                                      \
  template <class T, class U, long... A, long... B,                                            \
            class = typename EnableIf<!IsSame<T, U>::value>::type>                              \
  auto op(Tile<T, A...> a, Tile<U, B...> b) { return mixed_element_types(a, b); }
PK_SPEC_MIXED(operator+)
PK_SPEC_MIXED(operator-)
PK_SPEC_MIXED(operator*)
PK_SPEC_MIXED(operator/)
PK_SPEC_MIXED(max)
PK_SPEC_MIXED(min)
#undef PK_SPEC_MIXED
// Masks of two element types (an f32 comparison and an i32 one) join as an f32 mask: masks hold
// only 0 and 1, so nothing is lost.
template <class T, class U, long... A, long... B, class = typename EnableIf<!IsSame<T, U>::value>::type>
Broadcasted<Tile<f32, A...>, Tile<f32, B...>> operator&&(Tile<T, A...>, Tile<U, B...>);
template <class T, class U, long... A, long... B, class = typename EnableIf<!IsSame<T, U>::value>::type>
Broadcasted<Tile<f32, A...>, Tile<f32, B...>> operator||(Tile<T, A...>, Tile<U, B...>);

// A float scalar (a `float` kernel parameter or a constant such as 0.5f) combines with a tile
// as a tile whose every element is that value: `x * rsqrt(row_sum(x * x) * inv_n + eps)`.
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator+(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator+(float, Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator-(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator-(float, Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator*(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator*(float, Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator/(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator/(float, Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> max(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> min(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> max(float, Tile<T, S...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> min(float, Tile<T, S...>);
// An integer scalar (an index value, a literal) combines with an integer tile the same way:
// `id - rank() * rows`, `e % experts`.
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator+(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator+(I, Tile<T, S...>);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator-(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator-(I, Tile<T, S...>);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator*(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator*(I, Tile<T, S...>);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator/(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator/(I, Tile<T, S...>);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator%(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator%(I, Tile<T, S...>);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> max(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> min(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> max(I, Tile<T, S...>);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> min(I, Tile<T, S...>);
template <class T, long... S>
typename EnableIf<IsInt<T>::value, Tile<T, S...>>::type operator%(Tile<T, S...>, Tile<T, S...>);
// Bits of integer tiles (packed int4 / int8 weights, hashes): & | ^, and shifts by 0 .. bits - 1
// (>> is arithmetic: the sign is copied in; a count outside 0 .. bits - 1 gives 0 for << and the
// sign fill for >>). `(w >> (4 * j)) & 15` is the j-th nibble of w.
#define PK_SPEC_BITS(op)                                                                       \
  template <class T, long... A, long... B>                                                     \
  typename EnableIf<IsInt<T>::value, Broadcasted<Tile<T, A...>, Tile<T, B...>>>::type op(     \
      Tile<T, A...>, Tile<T, B...>);                                                           \
  template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> op(Tile<T, S...>, I); \
  template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> op(I, Tile<T, S...>);
PK_SPEC_BITS(operator&)
PK_SPEC_BITS(operator|)
PK_SPEC_BITS(operator^)
PK_SPEC_BITS(operator<<)
PK_SPEC_BITS(operator>>)
#undef PK_SPEC_BITS
// Casts convert element by element: float to integer rounds toward zero and saturates (NaN
// gives 0), integer to float gives the nearest float.
template <class To, class T, long... S> Tile<To, S...> cast(Tile<T, S...>);
// Running sums and counts (an MoE layout's per-expert counts and offsets). cumsum(t): element i
// is the sum of elements 0..i of a 1-D tile. histogram<E>(ids): element e counts the elements
// of an integer tile equal to e (others are not counted).
// cumsum of an M x N tile: the running sums along each row (element (r, j): row r's 0..j); of a
// 3-D or 4-D tile, along its last dimension. The sums keep the tile's type, so an i8 tile is
// refused (its sums would wrap at 8 bits): cumsum(cast<i32>(t)).
template <class T, long... S> Tile<T, S...> cumsum(Tile<T, S...>) {
  static_assert(sizeof...(S) >= 1 && sizeof...(S) <= 4, "cumsum sums along the last dimension of a tile of rank 1 to 4");
  static_assert(!IsSame<T, i8>::value, "cumsum of an i8 tile would wrap at 8 bits: sum it as i32, cumsum(cast<i32>(t))");
  return Tile<T, S...>();
}
template <long E, class I, long... S>
typename EnableIf<IsIndexInt<I>::value, Tile<i32, E>>::type histogram(Tile<I, S...> ids);
template <long E, class I, long... S>
typename EnableIf<!IsIndexInt<I>::value, Tile<i32, E>>::type histogram(Tile<I, S...>) {
  static_assert(AlwaysFalse<I>::value, "histogram counts i32 or i64 ids: cast<i32>(t) a float or i8 tile first");
  return Tile<i32, E>();
}
// transpose(t): element (j, i) of the N x M result is element (i, j) of the M x N tile.
template <class T, long M, long N> Tile<T, N, M> transpose(Tile<T, M, N>);
template <class T, long A, long B, long... S> Tile<T, A, B, S...> transpose(Tile<T, A, B, S...>) {
  static_assert(AlwaysFalse<T>::value, "transpose takes a 2-D tile: drop leading dimensions of 1 first "
                                       "(transpose(reshape<16, 16>(t)) of a [1, 16, 16] tile, reshape back)");
  return Tile<T, A, B, S...>();
}
template <class T, long N> Tile<T, N> transpose(Tile<T, N>) {
  static_assert(AlwaysFalse<T>::value, "transpose takes a 2-D tile: a 1-D one is a row or a column by "
                                       "reshape<1, N>(t) or reshape<N, 1>(t)");
  return Tile<T, N>();
}
// reshape<1, 64>(t): the same elements, in the same order, with dimensions of 1 added or dropped
// (a cumsum's [64] as a [1, 64] row that broadcasts over rows, or as a [64, 1] column).
template <long... S, class T, long... In> Tile<T, S...> reshape(Tile<T, In...>);
// reshape of a tensor (set 41: a [N] weight reshaped to read it as a column) says what to load
// instead: a deleted overload with its reason (Clang's = delete("...") is C++26, accepted earlier
// as an extension; other compilers just see a deleted function).
#if defined(__clang__)
#define PK_DELETED(why) delete (why)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc++26-extensions"
#else
#define PK_DELETED(why) delete
#endif
template <long... S, class T, int R>
Tile<T, S...> reshape(const Tensor<T, R>&) = PK_DELETED("reshape takes a tile, not a tensor: load the tensor first; "
                                                        "a [N] tensor reads as a column tile by load<M, 1>(w, m) and "
                                                        "as a row by load<1, N>(w, n)");
template <long... S, class T, int R>
Tile<T, S...> reshape(const Sym<T, R>&) = PK_DELETED("reshape takes a tile, not a tensor: load the tensor first");
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
#undef PK_DELETED
// Masks: comparisons give 1 where true and 0 where false; where(c, a, b) takes a where c is not
// 0 and b elsewhere (b is never combined with a, so a -inf fill stays -inf). row_index and
// col_index hold each element's row / column in the tensor (the tile origin plus its offset):
// a causal mask is where(col_index<M, N>(n) <= row_index<M, N>(m), s, -1e30f).
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator<(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator<=(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator>(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator>=(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator==(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator!=(Tile<T, A...>, Tile<T, B...>);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator<(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator<=(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator>(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator>=(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator==(Tile<T, S...>, float);
template <class T, long... S> IfFloat<T, Tile<T, S...>> operator!=(Tile<T, S...>, float);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator<(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator<=(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator>(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator>=(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator==(Tile<T, S...>, I);
template <class T, class I, long... S> IfIntScalar<T, I, Tile<T, S...>> operator!=(Tile<T, S...>, I);
// The mask and the values broadcast against each other as the element-wise ops do (a row's
// mask against a tile, a column of values against a mask): the result takes the larger extent.
template <class C, class T, long... A, long... B, long... D>
Broadcasted<Broadcasted<Tile<T, A...>, Tile<T, B...>>, Tile<T, D...>>
where(Tile<C, A...> c, Tile<T, B...> a, Tile<T, D...> b);
template <class C, class T, long... A, long... B>
IfFloat<T, Broadcasted<Tile<T, A...>, Tile<T, B...>>> where(Tile<C, A...> c, Tile<T, B...> a, float b);
template <class C, class T, long... A, long... B>
IfFloat<T, Broadcasted<Tile<T, A...>, Tile<T, B...>>> where(Tile<C, A...> c, float a, Tile<T, B...> b);
template <class C, class T, class I, long... A, long... B>
IfIntScalar<T, I, Broadcasted<Tile<T, A...>, Tile<T, B...>>> where(Tile<C, A...> c, Tile<T, B...> a, I b);
template <class C, class T, class I, long... A, long... B>
IfIntScalar<T, I, Broadcasted<Tile<T, A...>, Tile<T, B...>>> where(Tile<C, A...> c, I a, Tile<T, B...> b);
// Two scalars: an f32 tile of the mask's shape (an i32 one for two integers).
// A mask and a value tile whose shapes do not broadcast: say why (shapes_do_not_broadcast).
template <class C, class T, class X, long... A, long... B,
          class = typename EnableIf<!Broadcasts<Tile<T, A...>, Tile<T, B...>>::value &&
                                    (IsIntegral<X>::value || IsSame<X, float>::value)>::type>
Tile<T, B...> where(Tile<C, A...>, Tile<T, B...> a, X) { return shapes_do_not_broadcast(a, Tile<T, A...>()); }
template <class C, class T, class X, long... A, long... B,
          class = typename EnableIf<!Broadcasts<Tile<T, A...>, Tile<T, B...>>::value &&
                                    (IsIntegral<X>::value || IsSame<X, float>::value)>::type>
Tile<T, B...> where(Tile<C, A...>, X, Tile<T, B...> b) { return shapes_do_not_broadcast(b, Tile<T, A...>()); }
// An integer value tile against a float scalar: say which side to change.
template <class T, long... B>
Tile<T, B...> int_tile_float_scalar(Tile<T, B...> a) {
  static_assert(!IsInt<T>::value, "where() takes values of one element type: this integer tile is "
                                  "against a float scalar; cast the tile (cast<f32>(t)) or use an "
                                  "integer scalar");
  return a;
}
template <class C, class T, long... A, long... B, class = typename EnableIf<IsInt<T>::value && Broadcasts<Tile<T, A...>, Tile<T, B...>>::value>::type>
Tile<T, B...> where(Tile<C, A...>, Tile<T, B...> a, float) { return int_tile_float_scalar(a); }
template <class C, class T, long... A, long... B, class = typename EnableIf<IsInt<T>::value && Broadcasts<Tile<T, A...>, Tile<T, B...>>::value>::type>
Tile<T, B...> where(Tile<C, A...>, float, Tile<T, B...> b) { return int_tile_float_scalar(b); }
template <class C, long... S> Tile<f32, S...> where(Tile<C, S...> c, float a, float b);
// Two integers of any C++ integer types (an index beside a literal -1): the i32 where, never the
// float one (which would round values past 2^24).
template <class C, class I, class J, long... S>
typename EnableIf<IsIntegral<I>::value && IsIntegral<J>::value, Tile<i32, S...>>::type where(Tile<C, S...> c, I a,
                                                                                                J b);
template <long M, long N> Tile<f32, M, N> row_index(index m);
template <long M, long N> Tile<f32, M, N> col_index(index n);
// dim_index<D, S...>(origin): each element's coordinate along dimension D plus origin, for tiles
// of any rank (row_index<M, N>(m) is dim_index<0, M, N>(m)).
template <long D, long... S> Tile<f32, S...> dim_index(index origin);
// Masks combine with && and || and flip with !: 1 where true, 0 where false, a tile being true
// where it is not 0 (as where() takes it). A sliding causal window:
// (col_index<M, N>(n) <= row_index<M, N>(m)) && (col_index<M, N>(n) > row_index<M, N>(m) - w).
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator&&(Tile<T, A...>, Tile<T, B...>);
template <class T, long... A, long... B>
Broadcasted<Tile<T, A...>, Tile<T, B...>> operator||(Tile<T, A...>, Tile<T, B...>);
template <class T, long... S> Tile<T, S...> operator!(Tile<T, S...>);
// A mask and a C++ bool (a run-time flag) do not combine: say what to write instead.
template <class T, long... S> Tile<T, S...> mask_with_bool(Tile<T, S...>) {
  static_assert(AlwaysFalse<T>::value, "a mask combines with tiles, not with a C++ bool: make the flag a tile "
                                       "(zeros<f32, M, N>() + float(flag) != 0.0f) and combine that");
  return Tile<T, S...>();
}
template <class T, long... S> Tile<T, S...> operator&&(Tile<T, S...> t, bool) { return mask_with_bool(t); }
template <class T, long... S> Tile<T, S...> operator&&(bool, Tile<T, S...> t) { return mask_with_bool(t); }
template <class T, long... S> Tile<T, S...> operator||(Tile<T, S...> t, bool) { return mask_with_bool(t); }
template <class T, long... S> Tile<T, S...> operator||(bool, Tile<T, S...> t) { return mask_with_bool(t); }
// A mask times a bool (`(owner == p) * (n == 0)`, the && of masks written as a product): the same
// (B is deduced, so an int or float scalar still takes the overloads above).
template <class B, class T, long... S>
typename EnableIf<IsSame<B, bool>::value, Tile<T, S...>>::type operator*(Tile<T, S...> t, B) { return mask_with_bool(t); }
template <class B, class T, long... S>
typename EnableIf<IsSame<B, bool>::value, Tile<T, S...>>::type operator*(B, Tile<T, S...> t) { return mask_with_bool(t); }
// Random numbers: uniform<S...>(seed, i0, i1, ...) holds in each element a number in [0, 1)
// made from the seed and the element's coordinates in the tensor (the origins plus its offsets)
// alone, so an element gets the same number however the loop is tiled, and another seed gives
// others (docs/language.md gives the hash). As load and store, it takes one origin per dimension
// of the tensor the tile is of: uniform<64, 128>(seed, h, m, 0) for a [H, S, D] tensor. Dropout: where(uniform<64, 128>(seed, m, n) < p, 0.f,
// x * (1 / (1 - p))).
template <long... S, class... I> Tile<f32, S...> uniform(index seed, I... origin);
// row_topk<K>(t): each row's K largest elements, largest first (an M x K tile); ties go to the
// lower column. row_topk_index<K>(t): their columns in the tile (0 .. N-1), i32. NaN and a
// clipped load's padding are never chosen: past a row's last candidate, -inf and -1. (Both of
// one tile and K are computed once.) An MoE router's top-k: row_topk_index<2>(logits).
// Along the last dimension of a tile of any rank: a [N] tile is one row ([K] results), a
// [B, S, V] tile B x S rows ([B, S, K] results).
template <long K, class T, long M, long N> IfFloat<T, Tile<T, M, K>> row_topk(Tile<T, M, N>);
template <long K, class T, long M, long N> IfFloat<T, Tile<i32, M, K>> row_topk_index(Tile<T, M, N>);
template <long K, class T, long N> IfFloat<T, Tile<T, K>> row_topk(Tile<T, N>);
template <long K, class T, long N> IfFloat<T, Tile<i32, K>> row_topk_index(Tile<T, N>);
template <long K, class T, long A, long B, long N> IfFloat<T, Tile<T, A, B, K>> row_topk(Tile<T, A, B, N>);
template <long K, class T, long A, long B, long N> IfFloat<T, Tile<i32, A, B, K>> row_topk_index(Tile<T, A, B, N>);
template <long K, class T, long A, long B, long C, long N>
IfFloat<T, Tile<T, A, B, C, K>> row_topk(Tile<T, A, B, C, N>);
template <long K, class T, long A, long B, long C, long N>
IfFloat<T, Tile<i32, A, B, C, K>> row_topk_index(Tile<T, A, B, C, N>);
// row_topk of an integer tile: an error that says what to write (deduced, so it shows at the call).
template <long K, class T, long... S>
auto row_topk_of_integers(Tile<T, S...>) {
  static_assert(K < 0, "row_topk / row_topk_index rank float tiles: rank cast<f32>(t) (exact for integers "
                       "below 2^24 in magnitude); row_topk_index<K> then gives the columns");
  return Tile<T, S...>();
}
template <long K, class T, long... S, class = typename EnableIf<IsInt<T>::value, T>::type>
auto row_topk(Tile<T, S...> t) { return row_topk_of_integers<K>(t); }
template <long K, class T, long... S, class = typename EnableIf<IsInt<T>::value, T>::type>
auto row_topk_index(Tile<T, S...> t) { return row_topk_of_integers<K>(t); }
template <class T, long M, long N> IfFloat<T, Tile<T, M, 1>> row_sum(Tile<T, M, N>);
template <class T, long M, long N> IfFloat<T, Tile<T, M, 1>> row_max(Tile<T, M, N>);
template <class T, long M, long N> IfFloat<T, Tile<T, M, 1>> row_min(Tile<T, M, N>);
// Row reductions of i32 and i64 tiles: exact, in the tile's type (sums wrap as integer ops do).
template <class T, long M, long N> typename EnableIf<IsIndexInt<T>::value, Tile<T, M, 1>>::type row_sum(Tile<T, M, N>);
template <class T, long M, long N> typename EnableIf<IsIndexInt<T>::value, Tile<T, M, 1>>::type row_max(Tile<T, M, N>);
template <class T, long M, long N> typename EnableIf<IsIndexInt<T>::value, Tile<T, M, 1>>::type row_min(Tile<T, M, N>);
// Row reductions of i8 tiles: an error that says what to write (deduced, so the message appears
// at the call).
template <class T, long M, long N, class = typename EnableIf<IsInt<T>::value && !IsIndexInt<T>::value, T>::type>
auto row_reduction_of_integers(Tile<T, M, N>) {
  static_assert(M < 0, "row_sum / row_max / row_min of i8 tiles would wrap at 8 bits: reduce cast<i32>(t) "
                       "(exact, in i32)");
  return Tile<T, M, 1>();
}
template <class T, long M, long N, class = typename EnableIf<IsInt<T>::value && !IsIndexInt<T>::value, T>::type>
auto row_sum(Tile<T, M, N> t) { return row_reduction_of_integers(t); }
template <class T, long M, long N, class = typename EnableIf<IsInt<T>::value && !IsIndexInt<T>::value, T>::type>
auto row_max(Tile<T, M, N> t) { return row_reduction_of_integers(t); }
template <class T, long M, long N, class = typename EnableIf<IsInt<T>::value && !IsIndexInt<T>::value, T>::type>
auto row_min(Tile<T, M, N> t) { return row_reduction_of_integers(t); }
// Row reductions of tiles of another rank: an error that says how to make them 2-D.
template <class T, long... S>
auto row_reduction_of_rank(Tile<T, S...>) {
  static_assert(sizeof...(S) == 2, "row_sum / row_max / row_min reduce the rows of a 2-D M x N tile: "
                                   "reshape it first (a [1, M, N] tile of trailing dimensions is "
                                   "reshape<M, N>(t); a 1-D [N] tile reshape<1, N>(t))");
  return Tile<T, 1, 1>();
}
template <class T, long N> auto row_sum(Tile<T, N> t) { return row_reduction_of_rank(t); }
template <class T, long N> auto row_max(Tile<T, N> t) { return row_reduction_of_rank(t); }
template <class T, long N> auto row_min(Tile<T, N> t) { return row_reduction_of_rank(t); }
template <class T, long A, long B, long N> auto row_sum(Tile<T, A, B, N> t) { return row_reduction_of_rank(t); }
template <class T, long A, long B, long N> auto row_max(Tile<T, A, B, N> t) { return row_reduction_of_rank(t); }
template <class T, long A, long B, long N> auto row_min(Tile<T, A, B, N> t) { return row_reduction_of_rank(t); }
template <class T, long A, long B, long C, long N>
auto row_sum(Tile<T, A, B, C, N> t) { return row_reduction_of_rank(t); }
template <class T, long A, long B, long C, long N>
auto row_max(Tile<T, A, B, C, N> t) { return row_reduction_of_rank(t); }
template <class T, long A, long B, long C, long N>
auto row_min(Tile<T, A, B, C, N> t) { return row_reduction_of_rank(t); }

// Communication intent: what must move; pkc picks mechanism, overlap and signals.
template <class T, int R, class Out> void all_reduce(Reduce, const Sym<T, R> &in, const Out &out);
template <class T, int R, class Out> void reduce_scatter(Reduce, const Sym<T, R> &in, const Out &out);
template <class T, int R, class Out> void all_gather(const Sym<T, R> &in, const Out &out);
// Along dimension `dim` (a constant) instead of the first: all_gather(x, y, 1) concatenates
// the ranks' column shards; reduce_scatter(Sum, x, y, 1) leaves rank r column block r.
template <class T, int R, class Out> void reduce_scatter(Reduce, const Sym<T, R> &in, const Out &out, int dim);
template <class T, int R, class Out> void all_gather(const Sym<T, R> &in, const Out &out, int dim);
template <class T, int R, class Out> void all_to_all(const Sym<T, R> &in, const Out &out);
// Split along `split_dim`, concatenate along `concat_dim` (constants), as sequence and head
// parallelism exchange [H, S/W, D] for [H/W, S, D]: rank r's block j along split_dim lands
// on rank j as block r along concat_dim. all_to_all(x, y, 0, 1) and back all_to_all(y, x, 1, 0).
// Both d: one shape, W blocks along d (all_to_all(x, y, 1, 1): column blocks of [R, C]).
template <class T, int R, class Out>
void all_to_all(const Sym<T, R> &in, const Out &out, int split_dim, int concat_dim);
// Rooted collectives; `root` is a rank (a run-time value).
template <class T, int R, class Out> void broadcast(const Sym<T, R> &in, const Out &out, index root);
template <class T, int R, class Out> void reduce(Reduce, const Sym<T, R> &in, const Out &out, index root);
template <class T, int R, class Out> void gather(const Sym<T, R> &in, const Out &out, index root);
template <class T, int R, class Out> void scatter(const Sym<T, R> &in, const Out &out, index root);
// A collective's input read from a local Tensor says what to declare (instead of Clang's bare "no
// matching function"): peers read the input, so it is symmetric.
template <class T> void collective_input() {
  static_assert(AlwaysFalse<T>::value, "a collective's input must be symmetric: declare it Sym<T, R> (its peers "
                                       "read every rank's copy); the output may be a local Tensor");
}
template <class T, int R, class Out> void all_reduce(Reduce, const Tensor<T, R> &, const Out &) { collective_input<T>(); }
template <class T, int R, class Out> void reduce_scatter(Reduce, const Tensor<T, R> &, const Out &) { collective_input<T>(); }
template <class T, int R, class Out> void reduce_scatter(Reduce, const Tensor<T, R> &, const Out &, int) { collective_input<T>(); }
template <class T, int R, class Out> void all_gather(const Tensor<T, R> &, const Out &) { collective_input<T>(); }
template <class T, int R, class Out> void all_gather(const Tensor<T, R> &, const Out &, int) { collective_input<T>(); }
template <class T, int R, class Out> void all_to_all(const Tensor<T, R> &, const Out &) { collective_input<T>(); }
template <class T, int R, class Out> void all_to_all(const Tensor<T, R> &, const Out &, int, int) { collective_input<T>(); }
template <class T, int R, class Out> void broadcast(const Tensor<T, R> &, const Out &, index) { collective_input<T>(); }
template <class T, int R, class Out> void reduce(Reduce, const Tensor<T, R> &, const Out &, index) { collective_input<T>(); }
template <class T, int R, class Out> void gather(const Tensor<T, R> &, const Out &, index) { collective_input<T>(); }
template <class T, int R, class Out> void scatter(const Tensor<T, R> &, const Out &, index) { collective_input<T>(); }
// A tile stored into / added into a peer's copy: `store(C.on(p), t, m, n)`. A ring shift
// is `store(C.on(next_rank()), t, ...)`.
template <class X, class T, int R, class... I> void store(const Peer<T, R> &, X tile, I...);
template <class X, class T, int R, class... I> void store_add(const Peer<T, R> &, X tile, I...);
// A tile added into this rank's 2-D tensor at [m, n] (red.global.add per element): tiles that
// meet all arrive, in any order (column sums over row tiles: store_add(db, colsum, 0, n)).
template <class X, class T, int R, class... I> void store_add(const Tensor<T, R> &, X tile, I...);
// ... and into this rank's own copy of a symmetric tensor (as store(sym, ...) writes it).
template <class X, class T, int R, class... I> void store_add(const Sym<T, R> &, X tile, I...);

// The eight device primitives, for experts who write the protocol themselves.
namespace prim {
template <class X, class T, int R, class... I>
void store_async(Transport, const Peer<T, R> &, X tile, I...);
template <class X, class T, int R, class... I>
void store_add_async(Transport, const Peer<T, R> &, X tile, I...);
template <long... S, class T, int R, class... I>
Tile<T, S...> reduce(Reduce, Transport, const Sym<T, R> &, I...);
template <long... S, class T, int R, class... I>
void all_reduce(Reduce, Transport, const Sym<T, R> &src, const Sym<T, R> &dst, I...);
template <long... S, class T, int R, class... I>
Tile<T, S...> load_peer(Transport, const Peer<T, R> &, I...);
template <long... S, class T, int R, class... I>
SmemTile<T, S...> load_peer_smem(Transport, const Peer<T, R> &, I...);
Flag flag(long slot, Scope scope = Block);
void signal(Flag, index peer);
void signal_all(Flag);  // every other rank (not the caller): W - 1 signals
void wait(Flag, index count);
void barrier(Flag);
} // namespace prim

} // namespace pk

#endif // PK_SPEC_H

// Register tiles of the general tile path: a statically shaped tile of up to four dimensions,
// spread over the THREADS threads of a block in runs of kVec = 8 consecutive elements: run g
// (elements 8g .. 8g + 7, row-major over the tile) lives in thread g % THREADS, slots
// 8 (g / THREADS) .. + 7. Every element type shares the layout (casts and maps work slot by
// slot), and a run is 16 bytes of bf16 / f16 (32 of f32; 8, 32 and 64 of i8, i32 and i64), so a
// tile wholly inside its tensor loads and stores with vector accesses that consecutive threads
// coalesce. Float values are kept as fp32 and rounded to T after every operation, so a bf16 tile
// computes exactly as bf16 arithmetic rounded per op would; integer tiles (signed char, int,
// long long) keep their own type. A tile of one element (a row statistic, a scalar) is held by
// every slot of every thread, so broadcasting it needs no shared memory: loads and reductions
// give it to all threads, stores write it once.
// Every function here is called by all threads of the block alike.
#pragma once
#include <pk/device/bf16.cuh>
#include <pk/device/launch_context.cuh>
#include <pk/device/reduce.cuh>
#include <pk/device/store.cuh>
#include <pk/tile/divisor.cuh>
#include <pk/tile/int_math.cuh>
#include <pk/tile/math.cuh>
#include <pk/tile/walk.cuh>

namespace pk {
namespace tile {

// The register type of a tile of T's elements: fp32 for the float types, integers as they are.
template <class T> struct value_of { using type = float; };
template <> struct value_of<int> { using type = int; };
template <> struct value_of<long long> { using type = long long; };
template <> struct value_of<signed char> { using type = signed char; };  // i8: wraps like the others
template <class T> constexpr bool is_integer_v = !::pk::is_same<typename value_of<T>::type, float>::value;
template <bool B, class A, class C> struct pick_type { using type = A; };
template <class A, class C> struct pick_type<false, A, C> { using type = C; };

template <class T, int R, int S0, int S1, int S2, int S3, int THREADS>
struct rt {
  using elem = T;
  using value = typename value_of<T>::type;
  static constexpr int kRank = R;
  static constexpr int kThreads = THREADS;
  static constexpr long long kCount = 1ll * S0 * S1 * S2 * S3;
  static constexpr int kVec = 8;
  static constexpr int kSlots = static_cast<int>((kCount + kVec * THREADS - 1) / (kVec * THREADS)) * kVec;
  value v[kSlots];
  // How many leading indices along dimension 0 hold elements that came from inside a tensor
  // (all of them unless a load was clipped; element-wise ops keep the least of their
  // operands'). A scatter or gather by an index tile skips the rest: a clipped load's zeros
  // are padding, not row 0.
  long long valid0 = S0;
  // The same along dimension 1, where a transpose makes it valid0 (an index row transposed into
  // a column keeps its padding).
  long long valid1 = S1;
  // The same along dimensions 2 and 3, so a reshape that drops leading unit dimensions (an
  // index row of a [B, 1, T] tensor) keeps the trailing dimensions' padding.
  long long valid2 = S2;
  long long valid3 = S3;
  __device__ long long valid_along(int d) const { return d == 0 ? valid0 : d == 1 ? valid1 : d == 2 ? valid2 : valid3; }
  // Whether tile element i lies past a valid extent (a clipped load's padding) in any dimension.
  __device__ bool padding(long long i) const {
    bool past = false;
#pragma unroll
    for (int d = R - 1; d >= 0; --d) {
      past |= i % dim(d) >= valid_along(d);
      i /= dim(d);
    }
    return past;
  }
  // Whether no element holds data (past a tensor's end in some dimension).
  __device__ bool empty() const {
    bool none = false;
#pragma unroll
    for (int d = 0; d < R; ++d) none |= valid_along(d) <= 0;
    return none;
  }
  // How many leading elements hold data, for a tile with one dimension of more than one element
  // (an index row or column): none when any dimension holds none.
  __device__ long long valid_count() const {
    long long n = empty() ? 0 : kCount;
#pragma unroll
    for (int d = 0; d < R; ++d)
      if (dim(d) > 1 && valid_along(d) < n) n = valid_along(d);
    return n;
  }
  // Extent of dimension d (a function: arrays indexed at run time are not constant in device code).
  __host__ __device__ static constexpr int dim(int d) {
    return d == 0 ? S0 : d == 1 ? S1 : d == 2 ? S2 : S3;
  }

  // The tile element slot s of this thread holds (kCount or more when past the end).
  __device__ static long long index(int s) {
    // 32-bit (kCount < 2^31), and telling the compiler the block's size lets it fold the row
    // of a run (index / columns) where every run of a thread lies in one row.
    const int t = static_cast<int>(threadIdx.x);
    __builtin_assume(t >= 0 && t < THREADS);
    return ((s / kVec) * THREADS + t) * kVec + s % kVec;
  }
  // Whether the element index(s) of a run is inside the tile: always, without a compare, when
  // the tile is whole runs of every thread (the block has THREADS threads).
  __device__ static bool holds(long long i) {
    if constexpr (kCount % (1ll * kVec * THREADS) == 0) return true;
    else return i < kCount;
  }
  // The element slot s carries: its own, or element 0 in every slot of a one-element tile.
  __device__ static long long source(int s) { return kCount == 1 ? 0 : index(s); }
  // Row and column of element i, seeing the tile as rows x last dimension.
  static constexpr int kCols = R == 1 ? S0 : R == 2 ? S1 : R == 3 ? S2 : S3;
  static constexpr long long kRows = kCount / kCols;
  static_assert(THREADS % 32 == 0, "whole warps");
  static_assert(kCount < (1ll << 31), "a register tile's element indices are 32-bit");
};

// Whether this thread holds no element of a small tile (fewer elements than one run per
// thread): element-wise work on it is skipped, warp by warp, so an index tile of 16 rows in a
// 1024-thread block costs one warp's instructions, not 32. A one-element tile is held by every
// thread (Tile::source), so it is never idle.
template <class Tile>
__device__ __forceinline__ bool idle() {
  if constexpr (Tile::kCount == 1 || Tile::kCount >= 1ll * Tile::kVec * Tile::kThreads) return false;
  else return 1ll * threadIdx.x * Tile::kVec >= Tile::kCount;
}

// fp32 -> T -> fp32: the value a T element can hold.
template <class T>
__device__ __forceinline__ float round_to(float x) {
  if constexpr (sizeof(T) == 4) return x;
  else return to_float(from_float<T>(x));
}

// x as the register value of a T element: floats rounded to T, integers to the nearest T; float
// to integer rounds toward zero and saturates (NaN gives 0), as cvt.rzi does; integers narrow by
// wrapping.
template <class T, class X>
__device__ __forceinline__ typename value_of<T>::type convert(X x) {
  if constexpr (!is_integer_v<T> && is_integer_v<X> && sizeof(T) == 2) return round_to<T>(to_float_odd(x));
  else if constexpr (!is_integer_v<T>) return round_to<T>(static_cast<float>(x));
  else if constexpr (is_integer_v<X>)
    return static_cast<typename value_of<T>::type>(x);
  else if constexpr (sizeof(T) == 4) return __float2int_rz(x);
  else if constexpr (sizeof(T) == 1) {  // cvt.rzi.sat.s8 in two steps: NaN gives 0 in both
    const int v = __float2int_rz(x);
    return static_cast<signed char>(v < -128 ? -128 : v > 127 ? 127 : v);
  } else return x != x ? 0ll : __float2ll_rz(x);  // cvt.rzi.s64 gives INT64_MIN for NaN
}

// A tensor element as a register value, and back.
template <class T>
__device__ __forceinline__ typename value_of<T>::type load_value(T x) {
  if constexpr (is_integer_v<T>) return x;
  else return to_float(x);
}
template <class T, class V>
__device__ __forceinline__ T store_value(V x) {
  if constexpr (is_integer_v<T>) return static_cast<T>(x);
  else return from_float<T>(x);
}

// The tensor offset of tile element i at `origin`, or -1 when it falls outside the tensor.
template <class Tile>
__device__ __forceinline__ long long tensor_offset(long long i, const long long* shape,
                                                   const long long* origin) {
  // Tile coordinates in 32 bits (kCount < 2^31): a division by a constant extent that is not a
  // power of two is then a 32-bit multiply-high, not a 64-bit sequence whose temporaries spill.
  int coord[4];
  int rest = static_cast<int>(i);
#pragma unroll
  for (int d = Tile::kRank - 1; d >= 0; --d) {
    coord[d] = rest % Tile::dim(d);
    rest /= Tile::dim(d);
  }
  long long off = 0;
  for (int d = 0; d < Tile::kRank; ++d) {
    const long long c = origin[d] + coord[d];
    if (c < 0 || c >= shape[d]) return -1;
    off = off * shape[d] + c;
  }
  return off;
}

// Whether the tile at `origin` lies wholly inside a tensor (of the tile's rank) whose rows, the
// tile's rows and `origin` keep every run of kVec elements in one row and 16-byte aligned: then
// loads and stores move whole runs (uniform over the block, so no divergence). A tile of rank 3
// or 4 is rows of its last dimension too (an NHWC image's channels, a head's [S, D] rows).
template <class Tile, class T>
__device__ __forceinline__ bool runs_fit(const T* data, const long long* shape, const long long* origin) {
  if constexpr (Tile::kCols % Tile::kVec != 0 ||
                !(sizeof(T) <= 2 || ::pk::is_same<T, float>::value || is_integer_v<T>)) {
    return false;
  } else {
    // Branch-free, and per dimension one unsigned compare of the origin (0 <= origin <=
    // shape - dim) beside a loop-invariant one: this runs for every load and store of a trip.
    const long long last = shape[Tile::kRank - 1], at = origin[Tile::kRank - 1];
    bool fit = last % Tile::kVec == 0 && reinterpret_cast<unsigned long long>(data) % 16 == 0;
    fit &= at % Tile::kVec == 0;
#pragma unroll
    for (int d = 0; d < Tile::kRank; ++d)
      fit &= shape[d] >= Tile::dim(d) &&
             static_cast<unsigned long long>(origin[d]) <= static_cast<unsigned long long>(shape[d] - Tile::dim(d));
    return fit;
  }
}

// The tensor offset of the run starting at tile element i (runs_fit holds).
template <class Tile>
__device__ __forceinline__ long long run_offset(long long i, const long long* shape, const long long* origin) {
  if constexpr (Tile::kRank == 1) return origin[0] + i;
  else if constexpr (Tile::kRank == 2) {
    const int e = static_cast<int>(i);  // 32-bit, as tensor_offset
    return (origin[0] + e / Tile::kCols) * shape[1] + origin[1] + e % Tile::kCols;
  } else {
    // The run's row, split over the leading dimensions (constant extents: shifts and multiplies).
    const int e = static_cast<int>(i);
    int row = e / Tile::kCols;
    long long coord[Tile::kRank];
    coord[Tile::kRank - 1] = e % Tile::kCols;
#pragma unroll
    for (int d = Tile::kRank - 2; d >= 0; --d) {
      coord[d] = row % Tile::dim(d);
      row /= Tile::dim(d);
    }
    long long off = 0;
#pragma unroll
    for (int d = 0; d < Tile::kRank; ++d) off = off * shape[d] + origin[d] + coord[d];
    return off;
  }
}

// 8 elements at p (run-aligned: 16 bytes of bf16 / f16, 8 of fp8) to floats, and back.
__device__ __forceinline__ void load_run(const float* p, float* v) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
// fp8: a run is 8 bytes.
template <class T>
__device__ __forceinline__ void load_run_f8(const T* p, float* v) {
  const uint2 u = *reinterpret_cast<const uint2*>(p);
  const unsigned w[2] = {u.x, u.y};
#pragma unroll
  for (int k = 0; k < 8; k += 2) unpack2_f8<T>(static_cast<unsigned short>(w[k / 4] >> (8 * (k % 4))), v[k], v[k + 1]);
}
__device__ __forceinline__ void load_run(const f8e4m3* p, float* v) { load_run_f8(p, v); }
__device__ __forceinline__ void load_run(const f8e5m2* p, float* v) { load_run_f8(p, v); }
template <class T>
__device__ __forceinline__ void load_run(const T* p, float* v) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int k = 0; k < 8; ++k) v[k] = to_float(T{static_cast<unsigned short>(w[k / 2] >> (16 * (k % 2)))});
}
// A run of 8 elements packed in T apart from its store: a tile whose runs are stored many
// times (the MoE dispatch's rows, once per choice and peer) packs them once, ahead of the
// stores' conditions, and the compiler can keep the packed words instead of converting the
// run again at every store.
template <class T> struct PackedRun { uint4 w; };  // bf16, f16: 16 bytes
template <> struct PackedRun<float> { float4 a, b; };
template <> struct PackedRun<f8e4m3> { uint2 w; };
template <> struct PackedRun<f8e5m2> { uint2 w; };
template <class T>
__device__ __forceinline__ PackedRun<T> pack_run(const float* v) {
  if constexpr (::pk::is_same<T, float>::value) {
    return {make_float4(v[0], v[1], v[2], v[3]), make_float4(v[4], v[5], v[6], v[7])};
  } else if constexpr (::pk::is_same<T, f8e4m3>::value || ::pk::is_same<T, f8e5m2>::value) {
    unsigned w[2] = {0, 0};
#pragma unroll
    for (int k = 0; k < 8; k += 2) w[k / 4] |= static_cast<unsigned>(pack2_f8<T>(v[k], v[k + 1])) << (8 * (k % 4));
    return {make_uint2(w[0], w[1])};
  } else {
    return {make_uint4(pack2<T>(v[0], v[1]), pack2<T>(v[2], v[3]), pack2<T>(v[4], v[5]), pack2<T>(v[6], v[7]))};
  }
}
// Stores go through __stwb: a plain 16-byte assignment is split into four 4-byte stores once
// several tiles' stores share a kernel (seen in the PTX of batched loops), quartering store
// throughput.
template <class T>
__device__ __forceinline__ void store_packed(T* p, const PackedRun<T>& run) {
  if constexpr (::pk::is_same<T, float>::value) {
    __stwb(reinterpret_cast<float4*>(p), run.a);
    __stwb(reinterpret_cast<float4*>(p) + 1, run.b);
  } else if constexpr (::pk::is_same<T, f8e4m3>::value || ::pk::is_same<T, f8e5m2>::value) {
    __stwb(reinterpret_cast<uint2*>(p), run.w);
  } else {
    __stwb(reinterpret_cast<uint4*>(p), run.w);
  }
}

// A run's 8 values, packed and stored.
template <class T>
__device__ __forceinline__ void store_run(T* p, const float* v) { store_packed(p, pack_run<T>(v)); }

// An integer run (i8, i32, i64 kept as they are): 8 elements moved as whole words, 8, 32 or 64
// bytes, 16-byte accesses where the run is that long (run_offset keeps it aligned).
template <class V>
__device__ __forceinline__ void load_run(const V* p, V* v) {
  if constexpr (sizeof(V) == 1) {
    const uint2 u = *reinterpret_cast<const uint2*>(p);
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = static_cast<V>(static_cast<unsigned char>((k < 4 ? u.x : u.y) >> (8 * (k % 4))));
  } else if constexpr (sizeof(V) == 4) {
    const int4 a = reinterpret_cast<const int4*>(p)[0], b = reinterpret_cast<const int4*>(p)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const longlong2 q = reinterpret_cast<const longlong2*>(p)[j];
      v[2 * j] = q.x, v[2 * j + 1] = q.y;
    }
  }
}
template <class V>
__device__ __forceinline__ void store_int_run(V* p, const V* v) {
  if constexpr (sizeof(V) == 1) {
    unsigned w[2] = {0, 0};
#pragma unroll
    for (int k = 0; k < 8; ++k) w[k / 4] |= static_cast<unsigned>(static_cast<unsigned char>(v[k])) << (8 * (k % 4));
    __stwb(reinterpret_cast<uint2*>(p), make_uint2(w[0], w[1]));
  } else if constexpr (sizeof(V) == 4) {
    __stwb(reinterpret_cast<int4*>(p), make_int4(v[0], v[1], v[2], v[3]));
    __stwb(reinterpret_cast<int4*>(p) + 1, make_int4(v[4], v[5], v[6], v[7]));
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) __stwb(reinterpret_cast<longlong2*>(p) + j, make_longlong2(v[2 * j], v[2 * j + 1]));
  }
}

// One element of row-major `data` of `shape` at `at...` (a count, an offset), read by every
// thread: an integer as long long, a float as fp32; outside the tensor it reads 0.
template <class T, class... I>
__device__ __forceinline__ auto read_scalar(const T* data, const long long* shape, I... at) {
  const long long idx[] = {static_cast<long long>(at)...};
  long long off = 0;
  bool inside = true;
#pragma unroll
  for (int d = 0; d < static_cast<int>(sizeof...(I)); ++d) {
    // One unsigned compare: a negative index wraps past every extent (extents are >= 0).
    inside &= static_cast<unsigned long long>(idx[d]) < static_cast<unsigned long long>(shape[d]);
    off = off * shape[d] + idx[d];
  }
  using Out = typename pick_type<is_integer_v<T>, long long, float>::type;
  return inside ? static_cast<Out>(load_value(data[off])) : Out(0);
}

// read_scalar(data, shape, row0 + r, col) of a 2-D tensor, for the rows r (0 <= r < 2^31) a
// thread holds of a tile at row0 (a row vector's column loads, pk/tile/rows.cuh): the address
// is the part every thread shares, data + row0 * cols + col, plus r rows, so a thread's own
// arithmetic is one 32 x 64-bit multiply-add. Unsigned arithmetic: the address of a row outside
// the tensor is computed (never dereferenced) without overflow.
template <class T>
__device__ __forceinline__ auto read_column(const T* data, const long long* shape, long long row0, long long r,
                                            long long col) {
  using U = unsigned long long;
  const bool inside = static_cast<U>(row0 + r) < static_cast<U>(shape[0]) && static_cast<U>(col) < static_cast<U>(shape[1]);
  const T* const first = data + (static_cast<U>(row0) * static_cast<U>(shape[1]) + static_cast<U>(col));
  const T* const at = first + static_cast<U>(static_cast<unsigned>(r)) * static_cast<U>(shape[1]);
  using Out = typename pick_type<is_integer_v<T>, long long, float>::type;
  return inside ? static_cast<Out>(load_value(*at)) : Out(0);
}

// Fills t run by run from at(i), the address of the run that starts at tile element i.
template <class Tile, class At>
__device__ __forceinline__ void load_runs(Tile& t, At at) {
#pragma unroll
  for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
    const long long i = Tile::index(s);
    typename Tile::value run[Tile::kVec] = {};  // a local run, so the tile's slots stay in registers
    if (Tile::holds(i)) load_run(at(i), run);
#pragma unroll
    for (int k = 0; k < Tile::kVec; ++k) t.v[s + k] = run[k];
  }
}

// The valid extents of a tile loaded at `origin` of a tensor of `shape`.
template <class Tile>
__device__ __forceinline__ void set_extents(Tile& t, const long long* shape, const long long* origin) {
  // Padding is what lies past a tensor's end; elements before its start (a load at t - 1: a
  // token shift, an exclusive scan) read as zero and count as data. So a tile past the end of
  // any dimension holds no data (in every dimension: a transpose must not turn its columns into
  // rows), and one at a negative origin keeps its rows.
  bool inside = true;
  for (int d = 0; d < Tile::kRank; ++d) inside &= origin[d] < shape[d];
  auto extent = [&](int d) -> long long {
    const long long rest = shape[d] - origin[d];
    return !inside ? 0 : rest < Tile::dim(d) ? rest : Tile::dim(d);
  };
  t.valid0 = extent(0);
  if constexpr (Tile::kRank >= 2) t.valid1 = extent(1);
  if constexpr (Tile::kRank >= 3) t.valid2 = extent(2);
  if constexpr (Tile::kRank >= 4) t.valid3 = extent(3);
}

// Loads the tile at `origin` from row-major `data` of `shape`; elements outside read as zero.
template <class Tile, class T>
__device__ void load(Tile& t, const T* data, const long long* shape, const long long* origin) {
  set_extents(t, shape, origin);
  if (idle<Tile>()) return;
  if constexpr (!is_integer_v<T>) {
    if (runs_fit<Tile>(data, shape, origin)) {
      load_runs(t, [&](long long i) { return data + run_offset<Tile>(i, shape, origin); });
      return;
    }
  } else if constexpr (::pk::is_same<typename Tile::value, T>::value) {  // integers as they are
    if (runs_fit<Tile>(data, shape, origin)) {
      load_runs(t, [&](long long i) { return data + run_offset<Tile>(i, shape, origin); });
      return;
    }
  }
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const long long i = Tile::source(s);
    const long long off = i < Tile::kCount ? tensor_offset<Tile>(i, shape, origin) : -1;
    t.v[s] = off >= 0 ? load_value(data[off]) : typename Tile::value(0);
  }
}

// Stores the tile at `origin`; elements outside the tensor are dropped.
template <class Tile, class T>
__device__ void store(const Tile& t, T* data, const long long* shape, const long long* origin) {
  if (idle<Tile>()) return;
  if constexpr (!is_integer_v<T>) {
    if (runs_fit<Tile>(data, shape, origin)) {
#pragma unroll
      for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
        const long long i = Tile::index(s);
        float run[Tile::kVec];
#pragma unroll
        for (int k = 0; k < Tile::kVec; ++k) run[k] = t.v[s + k];
        if (Tile::holds(i)) store_run(data + run_offset<Tile>(i, shape, origin), run);
      }
      return;
    }
  } else if constexpr (::pk::is_same<typename Tile::value, T>::value) {
    if (runs_fit<Tile>(data, shape, origin)) {
#pragma unroll
      for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
        const long long i = Tile::index(s);
        if (Tile::holds(i)) store_int_run(data + run_offset<Tile>(i, shape, origin), &t.v[s]);
      }
      return;
    }
  }
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const long long i = Tile::index(s);
    const long long off = i < Tile::kCount ? tensor_offset<Tile>(i, shape, origin) : -1;
    if (off >= 0) data[off] = store_value<T>(t.v[s]);
  }
}

// Adds the tile into `data` at `origin` element by element (red.global.add at system scope, so
// peers' copies and concurrent adders are fine); elements outside the tensor are dropped.
template <class Tile, class T>
__device__ void store_add(const Tile& t, T* data, const long long* shape, const long long* origin) {
  if (idle<Tile>()) return;
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const long long i = Tile::index(s);
    const long long off = i < Tile::kCount ? tensor_offset<Tile>(i, shape, origin) : -1;
    if (off >= 0) ::pk::detail::red_add(data + off, store_value<T>(t.v[s]));
  }
}

// The tile at `origin` reduced over every rank's copy of `src` (peer loads, fp32 combine);
// elements outside the tensor read as zero. The caller has waited for the peers' data.
template <ReduceOp Op, class Tile, class T>
__device__ void load_reduce(Tile& t, const LaunchContext& c, const SymTensor<T>& src,
                            const long long* origin) {
  set_extents(t, src.shape, origin);  // a clipped load's padding, as load() marks it
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const long long i = Tile::source(s);
    const long long off = i < Tile::kCount ? tensor_offset<Tile>(i, src.shape, origin) : -1;
    t.v[s] = off >= 0 ? convert<T>(::pk::detail::reduce_elem<Op>(c, src, off)) : typename value_of<T>::type(0);
  }
}

// out = a where cond is not zero, b elsewhere (element by element; b never mixes with a).
template <class Tile, class Mask>
__device__ void select(Tile& out, const Mask& cond, const Tile& a, const Tile& b) {
  static_assert(Tile::kCount == Mask::kCount && Tile::kThreads == Mask::kThreads, "mask shape");
  out.valid0 = min(cond.valid0, min(a.valid0, b.valid0));
  out.valid1 = min(cond.valid1, min(a.valid1, b.valid1));
  out.valid2 = min(cond.valid2, min(a.valid2, b.valid2));
  out.valid3 = min(cond.valid3, min(a.valid3, b.valid3));
  if (idle<Tile>()) return;
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) out.v[s] = cond.v[s] != 0 ? a.v[s] : b.v[s];
}

// Element (i0, i1, ...) = origin + i<dim>, rounded to the tile's type.
template <class Tile>
__device__ void iota(Tile& t, long long origin, int dim) {
  if (idle<Tile>()) return;
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    int rest = static_cast<int>(Tile::index(s)), coord = 0;  // 32-bit, as tensor_offset
#pragma unroll
    for (int d = Tile::kRank - 1; d >= 0; --d) {
      if (d == dim) coord = rest % Tile::dim(d);
      rest /= Tile::dim(d);
    }
    t.v[s] = convert<typename Tile::elem>(origin + coord);
  }
}

// Every element set to x (rounded to the tile's type).
template <class Tile, class X>
__device__ void fill(Tile& t, X x) {
  const typename Tile::value v = convert<typename Tile::elem>(x);
  if (idle<Tile>()) return;
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) t.v[s] = v;
}

template <class Tile>
__device__ void zeros(Tile& t) {
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) t.v[s] = 0;
}

// Converts element by element, rounding to the destination type.
template <class To, class From>
__device__ void cast(To& out, const From& in) {
  static_assert(To::kCount == From::kCount, "cast keeps the shape");
  out.valid0 = in.valid0;
  out.valid1 = in.valid1;
  out.valid2 = in.valid2;
  out.valid3 = in.valid3;
  if (idle<To>()) return;
  using T = typename To::elem;
  if constexpr ((is_same<T, bf16>::value || is_same<T, f16>::value) &&
                is_same<typename From::value, float>::value) {
    // Two elements per packed conversion (slots come in runs of 8, so in pairs).
#pragma unroll
    for (int s = 0; s < To::kSlots; s += 2) {
      const unsigned w = pack2<T>(in.v[s], in.v[s + 1]);
      out.v[s] = to_float(T{static_cast<unsigned short>(w)});
      out.v[s + 1] = to_float(T{static_cast<unsigned short>(w >> 16)});
    }
  } else if constexpr ((is_same<T, f8e4m3>::value || is_same<T, f8e5m2>::value) &&
                       is_same<typename From::value, float>::value) {
#pragma unroll
    for (int s = 0; s < To::kSlots; s += 2) unpack2_f8<T>(pack2_f8<T>(in.v[s], in.v[s + 1]), out.v[s], out.v[s + 1]);
  } else {
#pragma unroll
    for (int s = 0; s < To::kSlots; ++s) out.v[s] = convert<T>(in.v[s]);
  }
}

// The same elements under a shape with unit dimensions added or dropped (row-major order, so
// the same slots). The dimensions other than 1 keep their valid extents, in order; a unit
// dimension is valid unless the tile holds no element from inside a tensor at all.
template <class To, class From>
__device__ void reshape(To& out, const From& in) {
  static_assert(To::kCount == From::kCount && To::kThreads == From::kThreads &&
                    is_same<typename To::elem, typename From::elem>::value,
                "reshape keeps the elements");
  bool any = true;
#pragma unroll
  for (int d = 0; d < From::kRank; ++d) any &= in.valid_along(d) > 0;
  long long valid[4] = {To::dim(0), To::dim(1), To::dim(2), To::dim(3)};
  int f = 0;  // the next dimension of `in` to match
#pragma unroll
  for (int d = 0; d < To::kRank; ++d) {
    if (To::dim(d) == 1) {
      valid[d] = any ? 1 : 0;
      continue;
    }
    while (f < From::kRank && From::dim(f) == 1) ++f;
    valid[d] = !any ? 0 : f < From::kRank && From::dim(f) == To::dim(d) ? in.valid_along(f) : To::dim(d);
    ++f;
  }
  out.valid0 = valid[0];
  out.valid1 = valid[1];
  out.valid2 = valid[2];
  out.valid3 = valid[3];
#pragma unroll
  for (int s = 0; s < To::kSlots; ++s) out.v[s] = in.v[s];
}

// out = f(a) element by element.
template <class Tile, class F>
__device__ void map(Tile& out, const Tile& a, F f) {
  out.valid0 = a.valid0;
  out.valid1 = a.valid1;
  out.valid2 = a.valid2;
  out.valid3 = a.valid3;
  if (idle<Tile>()) return;
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) out.v[s] = convert<typename Tile::elem>(f(a.v[s]));
}

// out = f(a, b) for tiles of one shape.
template <class Tile, class F>
__device__ void map(Tile& out, const Tile& a, const Tile& b, F f) {
  out.valid0 = min(a.valid0, b.valid0);
  out.valid1 = min(a.valid1, b.valid1);
  out.valid2 = min(a.valid2, b.valid2);
  out.valid3 = min(a.valid3, b.valid3);
  if (idle<Tile>()) return;
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s)
    out.v[s] = convert<typename Tile::elem>(f(a.v[s], b.v[s]));
}

}  // namespace tile
}  // namespace pk

// Row reductions and row/column broadcasts of register tiles (pk/tile/rt.cuh). Elements of one
// row live in many threads, so these pass through a shared-memory stage in chunks: correct for
// every shape, one pass over the tile's elements per chunk.
#pragma once
#include <pk/tile/rt.cuh>

namespace pk {
namespace tile {

constexpr int kStageFloats = 4096;  // the kernel's __shared__ stage (16 KB)
constexpr int kMaxRows = 4096;      // its __shared__ row accumulators (16 KB)

// Takes a shared buffer a kernel declares whether or not its tile ops use it (row reductions
// kept in registers use neither the stage nor the row accumulators): a use to nvcc, no code.
__device__ __forceinline__ void declared(const float*) {}

enum class RowOp { sum, max, min };

__device__ __forceinline__ float row_combine(RowOp op, float a, float b) {
  return op == RowOp::sum ? a + b : op == RowOp::max ? fmaxf(a, b) : fminf(a, b);
}
__device__ __forceinline__ float row_identity(RowOp op) {
  const float inf = __int_as_float(0x7f800000);
  return op == RowOp::sum ? 0.f : op == RowOp::max ? -inf : inf;
}

// Integer rows (i32, i64) reduce exactly in their own type; sums wrap, as the other integer ops do.
template <class A>
__device__ __forceinline__ A int_row_combine(RowOp op, A a, A b) {
  using U = typename pick_type<sizeof(A) == 8, unsigned long long, unsigned>::type;
  return op == RowOp::sum ? static_cast<A>(static_cast<U>(a) + static_cast<U>(b)) : op == RowOp::max ? (a > b ? a : b)
                                                                                                       : (a < b ? a : b);
}
__device__ __forceinline__ int row_combine(RowOp op, int a, int b) { return int_row_combine(op, a, b); }
__device__ __forceinline__ long long row_combine(RowOp op, long long a, long long b) {
  return int_row_combine(op, a, b);
}
// The identity of `op` in the accumulator type A (f32, or an integer's extremes).
template <class A>
__device__ __forceinline__ A row_identity_of(RowOp op) {
  if constexpr (::pk::is_same<A, float>::value) {
    return row_identity(op);
  } else {
    using U = typename pick_type<sizeof(A) == 8, unsigned long long, unsigned>::type;
    const A top = static_cast<A>(static_cast<U>(-1) >> 1), bottom = static_cast<A>(~(static_cast<U>(-1) >> 1));
    return op == RowOp::sum ? A(0) : op == RowOp::max ? bottom : top;
  }
}

// out = the row results in `rows` (shared memory), after a barrier so that `rows` is complete.
// Every user of the stage and of `rows` opens with a barrier before it writes, so none needs
// one at its end: the next user's opening barrier waits for these reads.
template <class Out, class A>
__device__ __forceinline__ void write_rows(Out& out, const A* rows) {
  __syncthreads();
#pragma unroll
  for (int s = 0; s < Out::kSlots; ++s) {
    const long long i = Out::source(s);
    if (i < Out::kCount) out.v[s] = convert<typename Out::elem>(rows[i]);
  }
}

// Rows of whole multiples of kVec x kThreads elements: every thread holds the same number of
// runs of each row, so each thread reduces its own runs, each warp shuffles, and the warps'
// partials meet in `partials` (rows x warps floats of shared memory): the whole block works on
// every row (a row of 8192 elements no longer waits on one warp), and each thread combines the
// partials of the rows it holds after one barrier. The caller makes sure no thread still reads
// `partials` from an earlier call.
template <class Out, class In>
__device__ void reduce_rows_blockwide(Out& out, const In& in, RowOp op, float* partials) {
  constexpr int warps = In::kThreads / 32;
  constexpr int groups = static_cast<int>(In::kCols / (In::kVec * In::kThreads));  // runs per row
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  out.valid0 = in.valid0;  // a padding row's reduction is padding too (never an index)
#pragma unroll
  for (int r = 0; r < static_cast<int>(In::kRows); ++r) {
    float acc = row_identity(op);
#pragma unroll
    for (int s = r * groups * In::kVec; s < (r + 1) * groups * In::kVec; ++s) acc = row_combine(op, acc, in.v[s]);
    for (int o = 16; o > 0; o >>= 1) acc = row_combine(op, acc, __shfl_xor_sync(0xffffffffu, acc, o));
    if (lane == 0) partials[r * warps + warp] = acc;
  }
  __syncthreads();
  if constexpr (In::kRows == 1 && (warps & (warps - 1)) == 0) {
    // One row: each group of `warps` lanes reads the warps' partials and combines them by
    // shuffles, so every lane has the row's result after one shared load (not one per warp).
    float acc = partials[lane % warps];
#pragma unroll
    for (int o = warps / 2; o > 0; o >>= 1) acc = row_combine(op, acc, __shfl_xor_sync(0xffffffffu, acc, o));
    const float result = round_to<typename Out::elem>(acc);
#pragma unroll
    for (int s = 0; s < Out::kSlots; ++s) out.v[s] = result;
  } else {  // an else, not a return: nvcc warns of an unreachable loop after one
#pragma unroll
    for (int s = 0; s < Out::kSlots; ++s) {
      const long long r = Out::source(s);
      if (r >= Out::kCount) continue;
      float acc = row_identity(op);
#pragma unroll
      for (int w = 0; w < warps; ++w) acc = row_combine(op, acc, partials[r * warps + w]);
      out.v[s] = round_to<typename Out::elem>(acc);
    }
  }
}

// The block-wide reduction with its partials in one half of `partials` (2 x `half` floats of
// shared memory that nothing else uses), alternating halves call by call through `parity`: the
// half a reduction writes was last read two reductions ago, and every thread finished those
// reads before it reached the barrier of the reduction in between, so no opening barrier is
// needed (one barrier per reduction instead of two).
template <class Out, class In>
__device__ void reduce_rows(Out& out, const In& in, RowOp op, float* partials, int half, int& parity) {
  static_assert(!is_integer_v<typename In::elem>, "row reductions are of float tiles (pk/spec.h)");
  static_assert(In::kCols % (In::kVec * In::kThreads) == 0 && In::kRows <= 64 && Out::kCount == In::kRows,
                "the block-wide route: whole runs of every row in every thread, at most 64 rows");
  float* mine = partials + parity * half;
  parity ^= 1;
  reduce_rows_blockwide(out, in, op, mine);
}

// out (rows x 1) = the reduction of each row (the last dimension) of in. `stage` holds
// kStageFloats floats and `rows` kMaxRows, both in shared memory.
// Float tiles reduce in f32; i32 and i64 tiles in their own type (exact), through the same
// buffers viewed as that type (an i64 stage holds half as many elements).
template <class Out, class In>
__device__ void reduce_rows(Out& out, const In& in, RowOp op, float* stage_floats, float* row_floats) {
  using A = typename In::value;
  static_assert(sizeof(A) == 4 || sizeof(A) == 8, "row reductions of f32-held, i32 or i64 tiles (pk/spec.h)");
  A* const stage = reinterpret_cast<A*>(stage_floats);
  A* const rows = reinterpret_cast<A*>(row_floats);
  constexpr long long kStageElems = kStageFloats * 4ll / sizeof(A);
  if constexpr (!is_integer_v<typename In::elem> && In::kCols % (In::kVec * In::kThreads) == 0 && In::kRows <= 64 &&
                In::kRows * (In::kThreads / 32) <= kStageFloats) {
    static_assert(Out::kCount == In::kRows, "one result per row");
    __syncthreads();  // earlier users of the stage are done
    reduce_rows_blockwide(out, in, op, stage);
    return;
  }
  static_assert(Out::kCount == In::kRows, "one result per row");
  static_assert(In::kRows <= kMaxRows * 4ll / sizeof(A), "too many rows for the row stage");
  out.valid0 = in.valid0;
  constexpr long long cols = In::kCols;
  constexpr long long chunk = cols <= kStageElems ? (kStageElems / cols) * cols : kStageElems;
  constexpr int warps = In::kThreads / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // earlier users of the stage are done
  for (long long r = threadIdx.x; r < In::kRows; r += In::kThreads) rows[r] = row_identity_of<A>(op);
  for (long long e0 = 0; e0 < In::kCount; e0 += chunk) {
    __syncthreads();
#pragma unroll
    for (int s = 0; s < In::kSlots; ++s) {
      const long long i = In::index(s);
      if (i >= e0 && i < e0 + chunk && i < In::kCount) stage[i - e0] = in.v[s];
    }
    __syncthreads();
    // The row segments inside this chunk, one warp each.
    const long long end = e0 + chunk < In::kCount ? e0 + chunk : In::kCount;
    const long long r0 = e0 / cols, r1 = (end - 1) / cols;
    for (long long r = r0 + warp; r <= r1; r += warps) {
      const long long a = r * cols > e0 ? r * cols : e0;
      const long long b = (r + 1) * cols < end ? (r + 1) * cols : end;
      A acc = row_identity_of<A>(op);
      for (long long i = a + lane; i < b; i += 32) acc = row_combine(op, acc, stage[i - e0]);
      for (int o = 16; o > 0; o >>= 1) acc = row_combine(op, acc, __shfl_xor_sync(0xffffffffu, acc, o));
      if (lane == 0) rows[r] = row_combine(op, rows[r], acc);
    }
  }
  write_rows(out, rows);
}

// A rows x 1 (or 1-D) vector that every thread computes itself for the rows it holds of a
// `Full` tile, into registers, instead of receiving it through the stage: the emitter builds
// `at(s, r)` (slot s of Full, row r) from the loads, maps and selects that made the vector (the
// MoE routing: owner == p ? place : -1), so moving rows by it, or broadcasting it, needs no
// barrier. Computed where it is declared, so its loads are issued before the stores or loads
// that use it (a loop's column loads at the top of each trip). One value per run when runs do
// not cross rows, else one per slot. valid0 is the vector's rt::valid0.
template <class Full, class T>
struct RowValues {
  static constexpr bool kPerRun = Full::kCols % Full::kVec == 0;
  static constexpr int kCount = kPerRun ? Full::kSlots / Full::kVec : Full::kSlots;
  T v[kCount];
  long long valid0;
  // The value of slot s's row (r, the row itself, is what a lazily computed vector would need).
  __device__ __forceinline__ T at(int s, long long) const { return v[kPerRun ? s / Full::kVec : s]; }
};
template <class Full, class F>
__device__ __forceinline__ auto row_values(F at, long long valid0) {
  RowValues<Full, decltype(at(0, 0LL))> out;
  out.valid0 = valid0;
#pragma unroll
  for (int j = 0; j < out.kCount; ++j) {
    const int s = out.kPerRun ? j * Full::kVec : j;
    const long long i = Full::index(s);
    out.v[j] = i < Full::kCount ? at(s, i / Full::kCols) : decltype(at(0, 0LL))(0);
  }
  return out;
}
// Whether a row vector made for `Full`'s rows may be read by slots of `Tile`: the same slots
// hold the same rows.
template <class Tile, class Full>
constexpr bool same_rows_v = Tile::kSlots == Full::kSlots && Tile::kCols == Full::kCols &&
                             Tile::kThreads == Full::kThreads && Tile::kCount == Full::kCount;
// rt::valid0 of a load of `rows` rows at `origin` of a rank-R tensor (as load() sets it).
template <int R>
__device__ __forceinline__ long long valid_rows(long long rows, const long long* shape,
                                                const long long (&origin)[R]) {
  // As pk::tile::load: only what lies past a tensor's end is padding (before its start is zero data).
  bool inside = true;
#pragma unroll
  for (int d = 0; d < R; ++d) inside &= origin[d] < shape[d];
  const long long rest = shape[0] - origin[0];
  return !inside ? 0 : rest < rows ? rest : rows;
}

// map_broadcast with a rows x 1 vector that every thread computes itself: no stage, no barrier.
template <class Full, class Made, class T, class Fn>
__device__ void map_broadcast(Full& out, const Full& full, const RowValues<Made, T>& vec, bool vec_first,
                              Fn f, float*) {
  static_assert(Full::kRank == 2, "broadcasts are between 2-D tiles");
  static_assert(same_rows_v<Full, Made>, "a row vector made for another tile's rows");
  out.valid0 = min(full.valid0, vec.valid0);
  out.valid1 = full.valid1;
  out.valid2 = full.valid2;
  out.valid3 = full.valid3;
  if (idle<Full>()) return;
#pragma unroll
  for (int s = 0; s < Full::kSlots; s += Full::kVec) {
    const long long i = Full::index(s);
    // One row per run when runs do not cross rows: its element is computed once.
    const auto y0 = vec.at(s, i / Full::kCols);
#pragma unroll
    for (int k = 0; k < Full::kVec; ++k) {
      const auto y = Full::kCols % Full::kVec == 0 ? y0 : vec.at(s + k, (i + k) / Full::kCols);
      const auto x = full.v[s + k];
      out.v[s + k] = convert<typename Full::elem>(vec_first ? f(y, x) : f(x, y));
    }
  }
}

// The index in a tile of Vec's shape of the element that broadcasts to element i of a tile of
// Full's shape (Vec's extents are Full's or 1, as pk.tile.map's verifier requires).
template <class Full, class Vec>
__device__ __forceinline__ long long broadcast_index(long long i) {
  static_assert(Vec::kRank == Full::kRank, "a broadcast keeps the rank");
  long long j = 0, vec_stride = 1;
#pragma unroll
  for (int d = Full::kRank - 1; d >= 0; --d) {
    // i < kCount, so what is left of it at dimension 0 is already its index there.
    if (Vec::dim(d) != 1) j += (d == 0 ? i : i % Full::dim(d)) * vec_stride;
    i /= Full::dim(d);
    vec_stride *= Vec::dim(d);
  }
  return j;
}

// Calls g(s, y) for each of this thread's slots s of a Full-shaped tile with y the element of
// vec that broadcasts to it, vec passing through the stage in chunks of its capacity.
template <class Full, class Vec, class G>
__device__ __forceinline__ void for_each_broadcast(const Vec& vec, float* stage, G g) {
  static_assert(Full::kRank == Vec::kRank, "a broadcast keeps the rank");
  using V = typename Vec::value;  // the stage holds the vector's own values (ints stay exact)
  constexpr long long cap = kStageFloats * sizeof(float) / sizeof(V);
  V* st = reinterpret_cast<V*>(stage);
  for (long long j0 = 0; j0 < Vec::kCount; j0 += cap) {
    __syncthreads();
#pragma unroll
    for (int s = 0; s < Vec::kSlots; ++s) {
      const long long j = Vec::index(s);
      if (j >= j0 && j < j0 + cap && j < Vec::kCount) st[j - j0] = vec.v[s];
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < Full::kSlots; ++s) {
      const long long i = Full::index(s);
      if (i >= Full::kCount) continue;
      const long long j = broadcast_index<Full, Vec>(i);
      if (j >= j0 && j < j0 + cap) g(s, st[j - j0]);
    }
  }
}

// Valid extents along each dimension of a broadcast's result: an operand counts in a
// dimension where it has the result's extent (a vector's padding rows are padding there too).
template <class Out, class Vec>
__device__ __forceinline__ long long broadcast_valid(int d, long long out_valid, const Vec& vec) {
  if (vec.empty()) return 0;  // computed from no data at all (a load past the end): no data
  const long long vec_valid = vec.valid_along(d);
  return Vec::dim(d) == Out::dim(d) && vec_valid < out_valid ? vec_valid : out_valid;
}

// out = f(full, vec) (or f(vec, full) with vec_first) where vec broadcasts to full's shape
// (each extent full's or 1: a rows x 1 or 1 x cols tile of a 2-D one, a bias row of heads).
template <class Full, class Vec, class F>
__device__ void map_broadcast_staged(Full& out, const Full& full, const Vec& vec, bool vec_first, F f,
                                     float* stage) {
  out.valid0 = broadcast_valid<Full>(0, full.valid0, vec);
  out.valid1 = broadcast_valid<Full>(1, full.valid1, vec);
  out.valid2 = broadcast_valid<Full>(2, full.valid2, vec);
  out.valid3 = broadcast_valid<Full>(3, full.valid3, vec);
  if constexpr (Vec::kCount > kStageFloats * sizeof(float) / sizeof(typename Vec::value)) zeros(out);  // see transpose
  for_each_broadcast<Full>(vec, stage, [&](int s, typename Vec::value y) {
    const auto x = full.v[s];
    out.v[s] = convert<typename Full::elem>(vec_first ? f(y, x) : f(x, y));
  });
}

// out = vec broadcast to out's shape, where neither operand of a map has the result's shape
// ([M, 1] x [1, N]): the map then broadcasts its other operand against out.
template <class Out, class Vec>
__device__ void broadcast_to(Out& out, const Vec& vec, float* stage) {
  out.valid0 = broadcast_valid<Out>(0, Out::dim(0), vec);
  out.valid1 = broadcast_valid<Out>(1, Out::dim(1), vec);
  out.valid2 = broadcast_valid<Out>(2, Out::dim(2), vec);
  out.valid3 = broadcast_valid<Out>(3, Out::dim(3), vec);
  if constexpr (Vec::kCount > kStageFloats * sizeof(float) / sizeof(typename Vec::value)) zeros(out);  // see transpose
  for_each_broadcast<Out>(vec, stage, [&](int s, typename Vec::value y) { out.v[s] = y; });
}

// out = f(full, vec) (or f(vec, full)): vec a rows x 1 or 1 x cols tile (through the stage), or
// a one-element tile of any rank, which every thread holds (rt.cuh): no stage, no barrier. A
// one-element tile stands for a column of the full tile's rows only when that has one row.
template <class Full, class Vec, class F>
__device__ void map_broadcast(Full& out, const Full& full, const Vec& vec, bool vec_first, F f,
                              float* stage) {
  if constexpr (Vec::kCount == 1) {
    // A one-element operand from past a tensor's end makes the result padding.
    const bool none = vec.empty();
    out.valid0 = none ? 0 : full.valid0;
    out.valid1 = none ? 0 : full.valid1;
    out.valid2 = none ? 0 : full.valid2;
    out.valid3 = none ? 0 : full.valid3;
#pragma unroll
    for (int s = 0; s < Full::kSlots; ++s)
      out.v[s] = convert<typename Full::elem>(vec_first ? f(vec.v[0], full.v[s]) : f(full.v[s], vec.v[0]));
  } else {
    map_broadcast_staged(out, full, vec, vec_first, f, stage);
  }
}

// out (1 x N) = the reduction of each column of in (M x N): what transpose(row_sum(transpose(in)))
// computes (pkc emits this for that form), every row included, in one pass through the stage in
// chunks of whole rows instead of three (sums of pooled rows: embedding bags, segment sums).
template <class Out, class In>
__device__ void reduce_cols(Out& out, const In& in, RowOp op, float* stage) {
  static_assert(!is_integer_v<typename In::elem>, "column reductions are of float tiles");
  static_assert(In::kRank == 2 && Out::kRank == 2 && Out::dim(0) == 1 && Out::dim(1) == In::dim(1),
                "reduce the columns of an M x N tile into a 1 x N one");
  constexpr long long M = In::dim(0), N = In::dim(1);
  static_assert(N <= kStageFloats, "a row of the tile must fit the stage");
  constexpr long long chunk = kStageFloats / N;  // rows a pass holds
  out.valid1 = in.valid1;  // a clipped load's padding columns stay padding
  float acc[Out::kSlots];
#pragma unroll
  for (int s = 0; s < Out::kSlots; ++s) acc[s] = row_identity(op);
  for (long long r0 = 0; r0 < M; r0 += chunk) {
    __syncthreads();  // earlier users of the stage are done
#pragma unroll
    for (int s = 0; s < In::kSlots; ++s) {
      const long long i = In::index(s);
      if (i < In::kCount && i >= r0 * N && i < (r0 + chunk) * N) stage[i - r0 * N] = in.v[s];
    }
    __syncthreads();
    const long long rows = M - r0 < chunk ? M - r0 : chunk;
#pragma unroll
    for (int s = 0; s < Out::kSlots; ++s) {
      const long long c = Out::source(s);
      if (c >= Out::kCount) continue;
      for (long long r = 0; r < rows; ++r) acc[s] = row_combine(op, acc[s], stage[r * N + c]);
    }
  }
#pragma unroll
  for (int s = 0; s < Out::kSlots; ++s) out.v[s] = round_to<typename Out::elem>(acc[s]);
}

// out (N x M) = the transpose of in (M x N), through the stage in chunks of its capacity.
template <class Out, class In>
__device__ void transpose(Out& out, const In& in, float* stage) {
  static_assert(In::kRank == 2 && Out::kRank == 2 && Out::dim(0) == In::dim(1) && Out::dim(1) == In::dim(0),
                "transpose an M x N tile into an N x M one");
  using V = typename In::value;
  constexpr long long cap = kStageFloats * sizeof(float) / sizeof(V);
  V* st = reinterpret_cast<V*>(stage);
  out.valid0 = in.valid1;  // its rows are the input's columns: a clipped load's padding stays padding
  out.valid1 = in.valid0;
  // Slots filled chunk by chunk start defined: NVRTC (CUDA 13.0) was seen to give every slot the last
  // chunk's value when they start undefined (row_topk of 8 x 2048 tiles in eight
  // groups, pk/tile/topk.cuh; the broadcasts above and cumsum fill their slots the same way).
  if constexpr (In::kCount > cap) zeros(out);
  for (long long e0 = 0; e0 < In::kCount; e0 += cap) {
    __syncthreads();
#pragma unroll
    for (int s = 0; s < In::kSlots; ++s) {
      const long long i = In::index(s);
      if (i >= e0 && i < e0 + cap && i < In::kCount) st[i - e0] = in.v[s];
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < Out::kSlots; ++s) {
      const long long o = Out::source(s);
      if (o >= Out::kCount) continue;
      const long long i = (o % Out::dim(1)) * In::dim(1) + o / Out::dim(1);
      if (i >= e0 && i < e0 + cap) out.v[s] = st[i - e0];
    }
  }
}

}  // namespace tile
}  // namespace pk

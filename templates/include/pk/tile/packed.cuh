// Register tiles held packed (pt): a tile of 16- or 8-bit floats that a kernel only loads and
// moves (rows scattered by index: the MoE dispatch's tokens) never needs its fp32 values, so
// its runs stay the loaded bytes. A bf16 run takes 4 registers instead of 8 and is converted
// neither way, which leaves registers for more runs in flight. Same layout, extents and padding
// as rt (pk/tile/rt.cuh); pkc declares a tile this way only when every use is a plain row
// scatter into a tensor of its own element type. Paths other than the whole-run ones unpack
// into an rt and take its code.
#pragma once
#include <pk/tile/gather.cuh>

namespace pk {
namespace tile {

template <class T, int R, int S0, int S1, int S2, int S3, int THREADS>
struct pt {
  using Unpacked = rt<T, R, S0, S1, S2, S3, THREADS>;
  using elem = T;
  using value = typename Unpacked::value;
  static_assert(!is_integer_v<T> && sizeof(T) <= 2, "packed tiles hold 16- or 8-bit floats");
  static constexpr int kRank = R;
  static constexpr int kThreads = THREADS;
  static constexpr long long kCount = Unpacked::kCount;
  static constexpr int kVec = Unpacked::kVec;
  static constexpr int kSlots = Unpacked::kSlots;
  static constexpr int kCols = Unpacked::kCols;
  static constexpr long long kRows = Unpacked::kRows;
  PackedRun<T> runs[kSlots / kVec];
  long long valid0 = S0, valid1 = S1, valid2 = S2, valid3 = S3;
  __host__ __device__ static constexpr int dim(int d) { return Unpacked::dim(d); }
  __device__ static long long index(int s) { return Unpacked::index(s); }
  __device__ static bool holds(long long i) { return Unpacked::holds(i); }
};

// The rt a packed tile stands for (its runs converted to fp32, its extents kept).
template <class T, int R, int S0, int S1, int S2, int S3, int THREADS>
__device__ __forceinline__ rt<T, R, S0, S1, S2, S3, THREADS> unpacked(const pt<T, R, S0, S1, S2, S3, THREADS>& p) {
  rt<T, R, S0, S1, S2, S3, THREADS> t;
  t.valid0 = p.valid0, t.valid1 = p.valid1, t.valid2 = p.valid2, t.valid3 = p.valid3;
#pragma unroll
  for (int s = 0; s < t.kSlots; s += t.kVec) load_run(reinterpret_cast<const T*>(&p.runs[s / t.kVec]), t.v + s);
  return t;
}

// Loads a packed tile at `origin`: whole runs as their bytes, anything else through an rt.
template <class T, int R, int S0, int S1, int S2, int S3, int THREADS, class U>
__device__ void load(pt<T, R, S0, S1, S2, S3, THREADS>& t, const U* data, const long long* shape,
                     const long long* origin) {
  using P = pt<T, R, S0, S1, S2, S3, THREADS>;
  if constexpr (::pk::is_same<T, U>::value) {
    set_extents(t, shape, origin);
    if (idle<P>()) return;
    if (runs_fit<P>(data, shape, origin)) {
#pragma unroll
      for (int s = 0; s < P::kSlots; s += P::kVec) {
        const long long i = P::index(s);
        PackedRun<T> run = {};
        if (P::holds(i)) run = *reinterpret_cast<const PackedRun<T>*>(data + run_offset<P>(i, shape, origin));
        t.runs[s / P::kVec] = run;
      }
      return;
    }
  }
  typename P::Unpacked u;
  load(u, data, shape, origin);
  t.valid0 = u.valid0, t.valid1 = u.valid1, t.valid2 = u.valid2, t.valid3 = u.valid3;
#pragma unroll
  for (int s = 0; s < P::kSlots; s += P::kVec) t.runs[s / P::kVec] = pack_run<T>(u.v + s);
}

// Rows of a packed tile scattered by a row vector of int indices (store_rows in gather.cuh):
// whole runs move as their bytes; other cases unpack.
template <bool Add, class T, int R, int S0, int S1, int S2, int S3, int THREADS, class Made, class I, class U>
__device__ void store_rows(const pt<T, R, S0, S1, S2, S3, THREADS>& t, const RowValues<Made, I>& idx, U* data,
                           const long long* shape, long long col, float* stage) {
  using P = pt<T, R, S0, S1, S2, S3, THREADS>;
  static_assert(same_rows_v<P, Made>, "row indices made for another tile's rows");
  if constexpr (!Add && ::pk::is_same<T, U>::value && int_row_runs_v<P, Made, I, U>) {
    if (row_runs_fit<P>(data, shape, col)) {
      RowValues<Made, I> moved = idx;  // rows past the tile's valid rows move nowhere
      if (t.valid0 < moved.valid0) moved.valid0 = t.valid0;
      const IndexedRuns<P> runs(moved.valid0, shape, col, data);
      if (runs.all_rows()) store_indexed_runs<true, P>(t.runs, runs, moved, data);
      else store_indexed_runs<false, P>(t.runs, runs, moved, data);
      return;
    }
  }
  store_rows<Add>(unpacked(t), idx, data, shape, col, stage);
}
template <bool Add, class T, int R, int S0, int S1, int S2, int S3, int THREADS, class Idx, class U>
__device__ void store_rows(const pt<T, R, S0, S1, S2, S3, THREADS>& t, const Idx& idx, U* data, const long long* shape,
                           long long col, float* stage) {
  store_rows<Add>(unpacked(t), idx, data, shape, col, stage);
}

}  // namespace tile
}  // namespace pk

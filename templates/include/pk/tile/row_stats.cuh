// Row statistics kept in registers: a row reduction of a register tile whose rows each lie in
// one aligned group of at most 32 threads (rows of 8 to 256 elements, whole runs of kVec) is
// reduced by shuffles inside that group, with no shared memory and no barrier, and its result
// stays where the tile's rows are: a RowValues (pk/tile/rows.cuh) in which every thread holds
// the statistic of each row it holds. Broadcasting it back over the rows, or computing with it,
// then needs no stage either (the emitter rebuilds such columns per row, RowVectors.cpp), and
// storing it is done by the one thread that holds each row's first run, so a 32-row tile's
// statistics are written by 32 threads rather than by the 4 that hold an rt column (the
// per-block scales of an fp8 quantisation).
#pragma once
#include <pk/tile/gather.cuh>

namespace pk {
namespace tile {

// Whether each row of `In` lies in one aligned group of kCols / kVec threads of one warp.
template <class In>
constexpr bool rows_in_warps_v = In::kRank == 2 && In::kCols % In::kVec == 0 &&
                                 In::kCols / In::kVec <= 32 && 32 % (In::kCols / In::kVec) == 0;

// The reduction of each row of `in`, rounded to OutElem, held by every thread for its rows.
// Called by all threads of the block (the shuffles need every lane of a warp).
template <class OutElem, class In>
__device__ RowValues<In, float> reduce_rows_in_warps(const In& in, RowOp op) {
  static_assert(!is_integer_v<typename In::elem>, "row reductions are of float tiles (pk/spec.h)");
  static_assert(rows_in_warps_v<In>, "rows of whole runs in groups of at most 32 threads");
  constexpr int group = static_cast<int>(In::kCols / In::kVec);  // threads per row
  RowValues<In, float> out;
  out.valid0 = in.valid0;
#pragma unroll
  for (int j = 0; j < out.kCount; ++j) {
    const int s = j * In::kVec;
    float acc = row_identity(op);
    if (In::holds(In::index(s))) {
#pragma unroll
      for (int k = 0; k < In::kVec; ++k) acc = row_combine(op, acc, in.v[s + k]);
    }
#pragma unroll
    for (int o = group / 2; o > 0; o >>= 1) acc = row_combine(op, acc, __shfl_xor_sync(0xffffffffu, acc, o));
    out.v[j] = round_to<OutElem>(acc);
  }
  return out;
}

// The row of slot s's run when that run opens its row (one thread per row writes), else -1.
template <class Made>
__device__ __forceinline__ long long row_opened(int s) {
  const long long i = Made::index(s);
  return i < Made::kCount && i % Made::kCols == 0 ? i / Made::kCols : -1;
}

// The rows x 1 column `vals` stored into a 2-D tensor at `origin` (rows outside it dropped).
template <class Made, class V, class T>
__device__ void store_row_values(const RowValues<Made, V>& vals, T* data, const long long* shape,
                                 const long long* origin) {
  static_assert(RowValues<Made, V>::kPerRun, "one value per run");
#pragma unroll
  for (int j = 0; j < vals.kCount; ++j) {
    const long long r = row_opened<Made>(j * Made::kVec);
    if (r < 0) continue;
    const long long row = origin[0] + r, col = origin[1];
    if (row < 0 || row >= shape[0] || col < 0 || col >= shape[1]) continue;
    data[row * shape[1] + col] = store_value<T>(vals.v[j]);
  }
}

// scatter_row_values' int-index path, every tile row holding data (AllRows) or not.
template <bool Add, bool AllRows, class Made, class V, class I, class T>
__device__ __forceinline__ void scatter_indexed_values(const RowValues<Made, V>& vals, const RowValues<Made, I>& idx,
                                                       const IndexedRuns<Made>& runs, T* data) {
#pragma unroll
  for (int j = 0; j < vals.kCount; ++j) {
    const int s = j * Made::kVec;
    T* p = data;
    if (row_opened<Made>(s) < 0 || !runs.template at<AllRows>(s, idx.v[j], data, p)) continue;
    if constexpr (Add) ::pk::detail::red_add(p, store_value<T>(vals.v[j]));
    else *p = store_value<T>(vals.v[j]);
  }
}

// The rows x 1 column `vals` stored (or added, red.global.add) at rows idx[0..R) of a 2-D
// tensor, column `col`; rows with index -1 or outside the tensor are dropped.
template <bool Add, class Made, class V, class I, class T>
__device__ void scatter_row_values(const RowValues<Made, V>& vals, const RowValues<Made, I>& idx, T* data,
                                   const long long* shape, long long col) {
  static_assert(RowValues<Made, V>::kPerRun, "one value per run");
  using U = unsigned long long;
  if constexpr (::pk::is_same<I, int>::value) {
    // int indices (the MoE routing): checked and addressed as gather.cuh's IndexedRuns does;
    // the run that opens a row is at column 0 of the tile, so its address is the row's at `col`.
    if (static_cast<U>(col) >= static_cast<U>(shape[1])) return;
    // Rows that are padding of the values (computed from a clipped load) move nowhere either.
    const IndexedRuns<Made> runs(idx.valid0 < vals.valid0 ? idx.valid0 : vals.valid0, shape, col, data);
    if (runs.all_rows()) scatter_indexed_values<Add, true>(vals, idx, runs, data);
    else scatter_indexed_values<Add, false>(vals, idx, runs, data);
  } else {  // an else, not a return: nvcc warns of the loop below as unreachable otherwise
#pragma unroll
    for (int j = 0; j < vals.kCount; ++j) {
      const int s = j * Made::kVec;
      const long long r = row_opened<Made>(s);
      if (r < 0) continue;
      const long long row = RowsOf<Made, I>{idx, vals.valid0}(s, r);
      // Unsigned compares: a negative row or column (-1: no row) wraps past every extent.
      if (static_cast<U>(row) >= static_cast<U>(shape[0]) || static_cast<U>(col) >= static_cast<U>(shape[1]))
        continue;
      if constexpr (Add) ::pk::detail::red_add(data + row * shape[1] + col, store_value<T>(vals.v[j]));
      else data[row * shape[1] + col] = store_value<T>(vals.v[j]);
    }
  }
}

}  // namespace tile
}  // namespace pk

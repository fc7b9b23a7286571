// Each row's K largest elements of a register tile (pk/tile/rt.cuh) and their columns: an MoE
// router's top-k, a sampler's top-k filter. Rows pass through the block's shared-memory stage in
// groups that fit it, a warp per row; each of K passes finds the largest element still below the
// last one chosen in the order (value descending, column ascending), so ties go to the lower
// column and every element is chosen once. NaN and a clipped load's padding (staged as NaN) are
// never chosen.
#pragma once
#include <pk/tile/rows.cuh>

namespace pk {
namespace tile {

// Whether (x, i) comes before (y, j): larger first, then the lower column.
__device__ __forceinline__ bool topk_before(float x, int i, float y, int j) {
  return x > y || (x == y && i < j);
}

// values, indices (M x K) = each row's K largest elements of in (M x N) and their columns; -inf
// and -1 past a row's last candidate. Padding rows of `in` stay padding rows of the results. A
// tile of another rank has its rows along the last dimension (results: K there, the rest kept).
template <class Values, class Indices, class In>
__device__ void row_topk(Values& values, Indices& indices, const In& in, float* stage) {
  static_assert(Values::kRank == In::kRank && Indices::kRank == In::kRank, "results of the input's rank");
  constexpr int n = In::kCols, k = Values::kCols;
  constexpr long long rows = In::kRows;
  static_assert(Values::kRows == rows && Indices::kRows == rows && Indices::kCols == k, "rows x K results");
  static_assert(n + 2 * k <= kStageFloats, "a row and its results must fit the stage");
  // Rows per group: each staged as n floats, then its k values and k columns.
  constexpr long long group = kStageFloats / (n + 2 * k) < rows ? kStageFloats / (n + 2 * k) : rows;
  float* staged = stage;
  float* best = stage + group * n;
  int* column = reinterpret_cast<int*>(best + group * k);
  constexpr int warps = In::kThreads / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const float inf = __int_as_float(0x7f800000), nan = __int_as_float(0x7fffffff);
  // Slots filled group by group start defined (why: transpose in pk/tile/rows.cuh).
  if constexpr (rows > group) zeros(values), zeros(indices);
  for (long long r0 = 0; r0 < rows; r0 += group) {
    __syncthreads();  // earlier users of the stage (and the last group's reads) are done
#pragma unroll
    for (int s = 0; s < In::kSlots; ++s) {
      const long long i = In::index(s);
      if (i >= r0 * n && i < (r0 + group) * n && i < In::kCount)
        staged[i - r0 * n] = in.padding(i) ? nan : static_cast<float>(in.v[s]);
    }
    __syncthreads();
    for (long long r = r0 + warp; r < r0 + group && r < rows; r += warps) {
      const float* row = staged + (r - r0) * n;
      float last = inf;  // the last choice; none yet: everything comes after (inf, -1)
      int last_col = -1;
      for (int p = 0; p < k; ++p) {
        float x = 0.f;
        int col = -1;  // none
        for (int j = lane; j < n; j += 32) {
          const float y = row[j];
          if (y != y || !topk_before(last, last_col, y, j)) continue;  // NaN, or chosen already
          if (col < 0 || topk_before(y, j, x, col)) x = y, col = j;
        }
        for (int o = 16; o > 0; o >>= 1) {
          const float ox = __shfl_xor_sync(0xffffffffu, x, o);
          const int oc = __shfl_xor_sync(0xffffffffu, col, o);
          if (oc >= 0 && (col < 0 || topk_before(ox, oc, x, col))) x = ox, col = oc;
        }
        if (lane == 0) {
          best[(r - r0) * k + p] = col < 0 ? -inf : x;
          column[(r - r0) * k + p] = col;
        }
        if (col < 0) {  // nothing left: the rest of the row's results are empty too
          for (int q = p + 1 + lane; q < k; q += 32) best[(r - r0) * k + q] = -inf, column[(r - r0) * k + q] = -1;
          break;
        }
        last = x, last_col = col;
      }
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < Values::kSlots; ++s) {
      const long long i = Values::index(s);
      if (i >= r0 * k && i < (r0 + group) * k && i < Values::kCount) {
        values.v[s] = round_to<typename Values::elem>(best[i - r0 * k]);
        indices.v[s] = column[i - r0 * k];
      }
    }
  }
  // The leading dimensions' padding stays padding (the last dimension holds K results).
  if constexpr (In::kRank > 1) values.valid0 = indices.valid0 = in.valid0;
  if constexpr (In::kRank > 2) values.valid1 = indices.valid1 = in.valid1;
  if constexpr (In::kRank > 3) values.valid2 = indices.valid2 = in.valid2;
}

}  // namespace tile
}  // namespace pk

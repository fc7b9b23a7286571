// Running sums and counts of register tiles (pk/tile/rt.cuh): the per-expert counts and
// offsets of an MoE layout. Both pass through the block's shared-memory stage; integers stay
// exact, and a clipped load's padding (and anything computed from it) counts as nothing.
#pragma once
#include <pk/tile/rows.cuh>

namespace pk {
namespace tile {

// out = the inclusive prefix sums of the 1-D tile in: each thread sums a contiguous chunk of
// the staged values, thread 0 turns the chunk totals into offsets, and each thread adds its
// offset back (two passes over the values, three barriers).
template <class Out, class In>
__device__ void cumsum(Out& out, const In& in, float* stage) {
  static_assert(In::kRank == 1 && Out::kCount == In::kCount, "prefix sums of a 1-D tile");
  using V = typename In::value;
  constexpr long long n = In::kCount, threads = In::kThreads;
  static_assert((n + threads) * sizeof(V) <= kStageFloats * sizeof(float), "cumsum: tile too long");
  V* values = reinterpret_cast<V*>(stage);
  V* totals = values + n;
  __syncthreads();  // earlier users of the stage are done
#pragma unroll
  for (int s = 0; s < In::kSlots; ++s) {
    const long long i = In::index(s);
    if (i < n) values[i] = i < in.valid0 ? in.v[s] : V(0);
  }
  __syncthreads();
  constexpr long long chunk = (n + threads - 1) / threads;
  const long long lo = threadIdx.x * chunk, hi = lo + chunk < n ? lo + chunk : n;
  V sum = 0;
  for (long long i = lo; i < hi; ++i) values[i] = sum += values[i];
  totals[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    V run = 0;
    for (long long t = 0; t < threads; ++t) {
      const V x = totals[t];
      totals[t] = run;
      run += x;
    }
  }
  __syncthreads();
  for (long long i = lo; i < hi; ++i) values[i] += totals[threadIdx.x];
  __syncthreads();
#pragma unroll
  for (int s = 0; s < Out::kSlots; ++s) {
    const long long o = Out::source(s);
    if (o < n) out.v[s] = convert<typename Out::elem>(values[o]);
  }
  out.valid0 = in.valid0;
  out.valid1 = in.valid1;
}

// out (E counts, i32) = how many elements of the integer tile ids equal each of 0..E-1. A
// clipped load's padding is no index: elements past valid0 along dimension 0 or past valid1
// along dimension 1 count nowhere (not as value 0).
template <class Out, class Ids>
__device__ void histogram(Out& out, const Ids& ids, float* stage) {
  static_assert(Out::kRank == 1 && is_integer_v<typename Ids::elem>, "counts of an integer tile");
  constexpr long long bins_count = Out::kCount, per_row = Ids::kCount / Ids::dim(0);
  constexpr long long per_col = per_row / Ids::dim(1);  // elements per index along dimension 1
  static_assert(bins_count <= kStageFloats, "histogram: too many bins");
  int* bins = reinterpret_cast<int*>(stage);
  __syncthreads();
  for (long long e = threadIdx.x; e < bins_count; e += Ids::kThreads) bins[e] = 0;
  __syncthreads();
#pragma unroll
  for (int s = 0; s < Ids::kSlots; ++s) {
    const long long i = Ids::index(s);
    if (i >= Ids::kCount || i / per_row >= ids.valid0 || i % per_row / per_col >= ids.valid1) continue;
    const long long v = ids.v[s];
    if (v >= 0 && v < bins_count) atomicAdd(bins + v, 1);
  }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < Out::kSlots; ++s) {
    const long long o = Out::source(s);
    if (o < bins_count) out.v[s] = bins[o];
  }
}

}  // namespace tile
}  // namespace pk

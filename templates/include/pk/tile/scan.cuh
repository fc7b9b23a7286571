// Running sums and counts of register tiles (pk/tile/rt.cuh): the per-expert counts and
// offsets of an MoE layout. Both pass through the block's shared-memory stage; integers stay
// exact. A running sum takes every element as the tile holds it, as row_sum does (a clipped
// load's padding loads as zero; what is computed from it counts like any value, so a mask
// written over the padding works); a count skips padding, as an index it is not.
#pragma once
#include <pk/tile/rows.cuh>

namespace pk {
namespace tile {

// out = the inclusive prefix sums along the last dimension of `in` (a 1-D tile: one run; an
// M x N tile: each row on its own), through the stage in chunks of its capacity (less a total
// per thread and the carry). A segmented scan: each thread sums a contiguous part of the chunk's
// staged values, restarting at each row's first element, and keeps the sum since the part's
// last restart and whether it restarted; thread 0 turns those into the offset each part adds
// to its values before its first restart, carrying the sum across chunks; each thread adds its
// offset back (two passes over the values, four barriers a chunk). Padding sums as it holds.
// A sum of the scan: integer sums wrap (through the unsigned type: signed overflow is undefined
// in C++), as the language promises for integer arithmetic.
template <class V>
__device__ __forceinline__ V scan_add(V a, V b) {
  if constexpr (::pk::is_same<V, float>::value) return a + b;
  else return wrap_add(a, b);
}

template <class Out, class In>
__device__ void cumsum(Out& out, const In& in, float* stage) {
  static_assert(Out::kCount == In::kCount, "prefix sums of a 1-D tile, or along the last dimension");
  using V = typename In::value;
  constexpr long long n = In::kCount, threads = In::kThreads;
  constexpr long long row = In::kCols;  // the run each sum restarts after: the last dimension
  constexpr long long cap =
      (kStageFloats * static_cast<long long>(sizeof(float)) - threads) / sizeof(V) - threads - 1;
  static_assert(cap > 0, "cumsum: the stage holds no values beside the block's totals");
  V* values = reinterpret_cast<V*>(stage);
  V* totals = values + cap;  // threads part totals, then the carry
  unsigned char* restarts = reinterpret_cast<unsigned char*>(totals + threads + 1);
  if constexpr (n > cap) zeros(out);  // as transpose (rows.cuh): slots filled chunk by chunk start defined
  for (long long j0 = 0; j0 < n; j0 += cap) {
    const long long len = n - j0 < cap ? n - j0 : cap;
    __syncthreads();  // earlier users of the stage (and the last chunk's reads) are done
#pragma unroll
    for (int s = 0; s < In::kSlots; ++s) {
      const long long i = In::index(s);
      if (i >= j0 && i < j0 + len) values[i - j0] = i < n ? in.v[s] : V(0);
    }
    __syncthreads();
    const long long part = (len + threads - 1) / threads;
    const long long lo = threadIdx.x * part, hi = lo + part < len ? lo + part : len;
    V sum = 0;
    bool restarted = false;
    for (long long i = lo; i < hi; ++i) {
      if ((j0 + i) % row == 0) sum = 0, restarted = true;
      values[i] = sum = scan_add(sum, values[i]);
    }
    totals[threadIdx.x] = sum;
    restarts[threadIdx.x] = restarted;
    __syncthreads();
    if (threadIdx.x == 0) {
      V run = j0 == 0 ? V(0) : totals[threads];
      for (long long t = 0; t < threads; ++t) {
        const V x = totals[t];
        totals[t] = run;
        run = restarts[t] ? x : scan_add(run, x);
      }
      totals[threads] = run;
    }
    __syncthreads();
    for (long long i = lo; i < hi; ++i) {
      if ((j0 + i) % row == 0) break;  // from here on the part's values sum their own rows
      values[i] = scan_add(values[i], totals[threadIdx.x]);
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < Out::kSlots; ++s) {
      const long long o = Out::source(s);
      if (o >= j0 && o < j0 + len) out.v[s] = convert<typename Out::elem>(values[o - j0]);
    }
  }
  out.valid0 = in.valid0;
  out.valid1 = in.valid1;
  out.valid2 = in.valid2;
  out.valid3 = in.valid3;
}

// out (E counts, i32) = how many elements of the integer tile ids equal each of 0..E-1. A
// clipped load's padding is no index: elements past a valid extent in any dimension count
// nowhere (not as value 0).
template <class Out, class Ids>
__device__ void histogram(Out& out, const Ids& ids, float* stage) {
  static_assert(Out::kRank == 1 && is_integer_v<typename Ids::elem>, "counts of an integer tile");
  constexpr long long bins_count = Out::kCount;
  static_assert(bins_count <= kStageFloats, "histogram: too many bins");
  int* bins = reinterpret_cast<int*>(stage);
  __syncthreads();
  for (long long e = threadIdx.x; e < bins_count; e += Ids::kThreads) bins[e] = 0;
  __syncthreads();
#pragma unroll
  for (int s = 0; s < Ids::kSlots; ++s) {
    const long long i = Ids::index(s);
    if (i >= Ids::kCount || ids.padding(i)) continue;
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

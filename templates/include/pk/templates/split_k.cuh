// Split-K for the GEMM template: when an output has too few tiles to fill the SMs (a decode
// GEMM, M = 1..256 rows against a large weight), each tile's K steps are cut into `splits`
// pieces that different blocks run at once. Each piece writes its consumer's 64 x 256 partial
// sums into a workspace; the piece that finishes last adds all of them in piece order (so the
// result does not depend on which finished last: bit-identical from run to run) and runs the
// epilogue and the store as an unsplit tile would.
//
// Workspace (pk-param kind `workspace`, zeroed once by the runtime): kSplitCounters arrival
// counters, one per tile and consumer, then the partials, tile by tile, consumer by consumer,
// piece by piece, 64 x 256 floats each in the accumulators' register order (thread-major in
// float4s, so every access is a coalesced 16-byte one). The last arrival sets its counter back to
// zero, and no launch writes anything else into the counters' fixed region (partials of another
// shape would land on counters that followed them), so the workspace needs no clearing between
// launches of any shape. A split launch has at most half as many tiles as SMs, far below the
// region's 512 tiles; a launch with more runs unsplit (split_count). Ordering is the classic last-block reduction:
// every thread's partial stores, a fence, a barrier of the consumer's warpgroup, then one
// atomic add; the last arrival fences again before it reads the others' partials through L2.
#pragma once
#include <pk/templates/warpgroup.cuh>

namespace pk {
namespace gemm {

constexpr int kSplitPartial = 64 * 256;  // floats of one consumer's partial
constexpr int kMaxSplits = 16;
constexpr int kSplitBarrier = 2;         // named barriers 2, 3: one per consumer warpgroup
constexpr int kSplitCounters = 1024;     // the workspace's first 4 KiB: counters of up to 512 tiles

// K steps [first, end) of piece `split` of `splits` over `ksteps` (balanced: sizes differ by one).
__device__ __forceinline__ void split_range(int ksteps, int split, int splits, int& first, int& end) {
  first = static_cast<int>(static_cast<long long>(ksteps) * split / splits);
  end = static_cast<int>(static_cast<long long>(ksteps) * (split + 1) / splits);
}


// a += b on the bits of two s32 sums, wrapping (as the tensor core's accumulation does).
__device__ __forceinline__ void split_wrap_add(float& a, float b) {
  a = __int_as_float(static_cast<int>(static_cast<unsigned int>(__float_as_int(a)) +
                                      static_cast<unsigned int>(__float_as_int(b))));
}

// Piece `split` of tile `tile` is done for this consumer (`acc`: its partial sums; IntSums: the
// bits of s32 sums, added as integers). Returns true in the piece that arrived last, with acc
// now the whole tile's sums; false in the others, which have nothing more to do for the tile.
// `live`: whether this warp's 16 rows hold any output row (rows past M are neither written nor
// read: a decode GEMM's one real row tile saves three quarters of the traffic).
template <bool IntSums, int Consumers>
__device__ __forceinline__ bool split_reduce(float* ws, int tile, int split, int splits, int consumer, bool live,
                                             float (&acc)[128]) {
  const int t = wg::thread();
  float4* const partials = reinterpret_cast<float4*>(
      ws + kSplitCounters + (static_cast<long long>(tile) * Consumers + consumer) * splits * kSplitPartial);
  if (live) {
    float4* const mine = partials + split * (kSplitPartial / 4);
#pragma unroll
    for (int j = 0; j < 32; ++j)
      __stcg(mine + j * wg::kThreads + t, make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
  }
  __threadfence();  // this thread's partial is visible device-wide before the arrival below
  __shared__ int last_arrival[Consumers];
  asm volatile("bar.sync %0, %1;" ::"r"(kSplitBarrier + consumer), "n"(wg::kThreads) : "memory");
  if (t == 0) {
    unsigned int* const counter = reinterpret_cast<unsigned int*>(ws) + tile * Consumers + consumer;
    const bool last = atomicAdd(counter, 1u) == static_cast<unsigned int>(splits - 1);
    if (last) atomicExch(counter, 0u);  // ready for the next launch, whatever its shape
    last_arrival[consumer] = last;
  }
  asm volatile("bar.sync %0, %1;" ::"r"(kSplitBarrier + consumer), "n"(wg::kThreads) : "memory");
  if (!last_arrival[consumer]) return false;
  __threadfence();  // acquire side: the other pieces' partials, published before their arrivals
  if (!live) return true;
#pragma unroll
  for (int j = 0; j < 128; ++j) acc[j] = 0;
  for (int s = 0; s < splits; ++s) {  // piece order, whichever arrived last
    const float4* const piece = partials + s * (kSplitPartial / 4);
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const float4 v = __ldcg(piece + j * wg::kThreads + t);
      if constexpr (IntSums) {  // s32 sums wrap exactly as one unsplit loop's would
        split_wrap_add(acc[4 * j], v.x);
        split_wrap_add(acc[4 * j + 1], v.y);
        split_wrap_add(acc[4 * j + 2], v.z);
        split_wrap_add(acc[4 * j + 3], v.w);
      } else {
        acc[4 * j] += v.x;
        acc[4 * j + 1] += v.y;
        acc[4 * j + 2] += v.z;
        acc[4 * j + 3] += v.w;
      }
    }
  }
  return true;
}

}  // namespace gemm
}  // namespace pk

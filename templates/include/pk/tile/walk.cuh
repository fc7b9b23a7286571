// A block's way through a tile loop's iteration space: tile t, t + stride, t + 2 * stride, ...
// (the grid stride), as coordinates row-major over the loop's tile counts (dimension 0
// slowest). Dividing a 64-bit tile number by the counts takes about a hundred instructions per
// dimension, as many as a thread's whole share of a small tile's work; so the coordinates are
// divided out once and then advanced by the stride's digits with carries. The digits of
// dimensions 1 .. N-1 are 32-bit: row kernels run at the edge of 64 registers a thread, and
// their 64-bit digits made the softmax and norms spill.
#pragma once
#include <pk/device/check.cuh>

namespace pk {
namespace tile {

// Whether every tile count past dimension 0 fits a TileWalk digit (at most 2^31 - 1: a tensor of
// 2^31 columns of tiles does not). Else thread 0 of block 0 records which dimension and count (the
// launch's first error wins, as a failed check does) and the caller runs none of the loop: pkc
// emits this before each walk of two or more dimensions. Counts are the same in every thread.
template <int N>
__device__ __forceinline__ bool walk_counts_fit(const LaunchContext& c, const long long (&counts)[N]) {
#pragma unroll
  for (int d = 1; d < N; ++d) {
    if (counts[d] <= 0x7fffffffLL) continue;
    if (blockIdx.x == 0 && threadIdx.x == 0)
      record_wait_timeout(c, d, 0x7fffffffULL, static_cast<unsigned long long>(counts[d]), kErrorTileCount);
    return false;
  }
  return true;
}

template <int N>
struct TileWalk {
  long long first, first_step;  // dimension 0: coordinate and stride digit (unbounded)
  int digit[N], step[N], count[N];  // dimensions 1 .. N-1 (index 0 unused)

  __device__ TileWalk(long long t, long long stride, const long long (&counts)[N]) {
#pragma unroll
    for (int d = N - 1; d > 0; --d) {
      // A count past 2^31 - 1 along a later dimension does not fit a digit: pkc's kernels have
      // stopped before (walk_counts_fit); anything else stops here rather than walk wrong tiles.
      if (counts[d] > 0x7fffffffLL) __trap();
      count[d] = static_cast<int>(counts[d]);
      digit[d] = static_cast<int>(t % counts[d]), t /= counts[d];
      step[d] = static_cast<int>(stride % counts[d]), stride /= counts[d];
    }
    // Dimension 0 takes the rest unwrapped: past the last tile the loop's own bound stops it.
    first = t, first_step = stride;
  }

  // The current tile's coordinate along dimension d.
  __device__ __forceinline__ long long at(int d) const { return d == 0 ? first : digit[d]; }

  // Moves to the tile `stride` further on: each digit stays below its count, so one carry.
  __device__ __forceinline__ void advance() {
    int carry = 0;
#pragma unroll
    for (int d = N - 1; d > 0; --d) {
      digit[d] += step[d] + carry;
      carry = digit[d] >= count[d];
      if (carry) digit[d] -= count[d];
    }
    first += first_step + carry;
  }

  // The walk k strides further on (a later trip's tile).
  __device__ __forceinline__ TileWalk ahead(int k) const {
    TileWalk w = *this;
    for (int i = 0; i < k; ++i) w.advance();
    return w;
  }
};

}  // namespace tile
}  // namespace pk

// A block's way through a tile loop's iteration space: tile t, t + stride, t + 2 * stride, ...
// (the grid stride), as coordinates row-major over the loop's tile counts (dimension 0
// slowest). Dividing a 64-bit tile number by the counts takes about a hundred instructions per
// dimension, as many as a thread's whole share of a small tile's work; so the coordinates are
// divided out once and then advanced by the stride's digits with carries.
#pragma once

namespace pk {
namespace tile {

template <int N>
struct TileWalk {
  long long at[N];    // the current tile's coordinates
  long long step[N];  // the stride's digits in the same mixed radix
  long long count[N > 1 ? N - 1 : 1];  // the counts of dimensions 1 .. N-1 (0 is unbounded)

  __device__ TileWalk(long long t, long long stride, const long long (&counts)[N]) {
#pragma unroll
    for (int d = N - 1; d > 0; --d) {
      count[d - 1] = counts[d];
      at[d] = t % counts[d], t /= counts[d];
      step[d] = stride % counts[d], stride /= counts[d];
    }
    // Dimension 0 takes the rest unwrapped: past the last tile the loop's own bound stops it.
    at[0] = t, step[0] = stride;
  }

  // Moves to the tile `stride` further on: each digit stays below its count, so one carry.
  __device__ __forceinline__ void advance() {
    int carry = 0;
#pragma unroll
    for (int d = N - 1; d > 0; --d) {
      at[d] += step[d] + carry;
      carry = at[d] >= count[d - 1];
      if (carry) at[d] -= count[d - 1];
    }
    at[0] += step[0] + carry;
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

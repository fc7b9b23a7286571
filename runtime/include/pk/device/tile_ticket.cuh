// A dynamic tile counter for persistent kernels whose tiles cost different amounts (causal
// attention): a block that finishes a tile takes the next unclaimed one, as the hardware block
// scheduler would, instead of a fixed share that drifts apart from the others'.
#pragma once

namespace pk {

// One 64-bit word per kernel name in the context (Context::tile_ticket), and this launch's
// number for it. The word holds the launch number in its high half and the tiles handed out so
// far in its low half: the first take of a launch sees another launch's number and starts the
// count afresh, so the word is never reset and a launch that died midway leaves nothing behind.
// Launches that share a word must run one after another (one stream), as flags require.
struct TileTicket {
  unsigned long long* word;
  unsigned long long epoch;
};

#ifdef __CUDACC__
// The next tile of this launch (0, 1, 2, ... across all blocks), by one compare-and-swap
// (retried only when another block took a tile in between). Callers stagger their takes (each
// block's first tile is blockIdx.x, with the count starting past the grid), so blocks rarely
// collide.
__device__ __forceinline__ int take_tile(const TileTicket& t) {
  const unsigned long long mine = t.epoch & 0xffffffffull;
  unsigned long long seen = *reinterpret_cast<volatile unsigned long long*>(t.word);
  for (;;) {
    const bool fresh = (seen >> 32) == mine;
    const unsigned long long next = fresh ? seen + 1 : (mine << 32) | 1ull;
    const unsigned long long was = atomicCAS(t.word, seen, next);
    if (was == seen) return fresh ? static_cast<int>(seen & 0xffffffffull) : 0;
    seen = was;
  }
}
#endif

}  // namespace pk

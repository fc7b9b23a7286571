// A dynamic tile counter for persistent kernels whose tiles cost different amounts (causal
// attention): a block that finishes a tile takes the next unclaimed one, as the hardware block
// scheduler would, instead of a fixed share that drifts apart from the others'.
#pragma once

namespace pk {

// One 64-bit word per kernel name in the context (Context::tile_ticket), and this launch's
// number for it. The word holds the launch number in its high half and the tiles handed out so
// far in its low half: the first take of a launch sees another launch's number and starts the
// count afresh, so the word is never reset and a launch that died midway leaves nothing behind.
// Launches that share a word must run one after another (one stream), as flags require. The
// count stays far below 2^32: a launch hands out its tiles plus one failed take per block.
struct TileTicket {
  unsigned long long* word;
  unsigned long long epoch;
};

#ifdef __CUDACC__
// The next tile of this launch (0, 1, 2, ... across all blocks): one atomicAdd, which the L2
// serves back to back for any number of blocks (a compare-and-swap loop measured 1.3-2.3x
// slower causal attention: a take per retry round trip). The first takes of a launch find
// another launch's number: they swap in this launch's, with the count at 1 for the one whose
// swap lands (it takes 0), from whatever stale value the word holds, and the others add again.
// Stale takers never add twice while the word is stale, so once their first adds are in, the
// next swap lands (adding again before swapping, as a first version did, let two stale takers
// spoil each other's expected value forever).
__device__ __forceinline__ int take_tile(const TileTicket& t) {
  const unsigned long long mine = t.epoch & 0xffffffffull;
  unsigned long long seen = atomicAdd(t.word, 1ull);
  while ((seen >> 32) != mine) {
    const unsigned long long now = *reinterpret_cast<volatile unsigned long long*>(t.word);
    if ((now >> 32) == mine) {
      seen = atomicAdd(t.word, 1ull);
    } else if (atomicCAS(t.word, now, (mine << 32) | 1ull) == now) {
      return 0;
    }
  }
  return static_cast<int>(seen & 0xffffffffull);
}
#endif

}  // namespace pk

// Stream-K for the last wave: a persistent grid of B blocks walking T tiles runs T / B whole
// waves, and when B does not divide T the last T % B tiles would leave the other blocks idle
// for a whole tile time. Instead the tail's K steps are shared evenly: block b takes steps
// [b * I / B, (b + 1) * I / B) of the tail's I = (T % B) * ksteps, so a tile may be split
// between consecutive blocks. The block holding a tile's K step 0 finishes it: it adds the
// fp32 partials of the blocks that took the tile's later steps, then stores as usual.
//
// A block's range starts anywhere and ends anywhere, so only its first tail unit can start
// past step 0: each block writes at most one partial (slot b), from a unit that waits on no
// other block. The finisher's wait is therefore a one-way hand-off between
// resident blocks of one kernel (the plans never launch more blocks than fit), like the
// skeleton's mbarrier waits; the flag holds the launch epoch and is compared with >=.
#pragma once
#include <pk/templates/gemm_tile.cuh>

namespace pk {
namespace gemm {

struct SplitTail {
  int first;            // tiles [first, count) are split by K steps; count when none are
  float4* partials;     // [blocks][kConsumers][32][128 threads]: each block's one partial
  unsigned int* flags;  // [blocks][kConsumers]: the epoch once that partial is written
  unsigned int epoch;   // this launch's, from 1
};

struct WorkUnit {
  int tile;    // index in the TileOrder walk
  int k0, k1;  // K steps [k0, k1)
  __host__ __device__ bool finishes() const { return k0 == 0; }
};

// One compute block's units, in order: whole tiles block, block + blocks, ... below
// split.first (a multiple of blocks), then its share of the tail's K steps.
struct WorkWalk {
  int block, blocks, tiles, ksteps;
  SplitTail split;
  int t = 0;
  long long it = 0, end = 0;

  __host__ __device__ long long tail_begin(int b) const {
    return 1ll * (tiles - split.first) * ksteps * b / blocks;
  }
  __host__ __device__ WorkWalk(int block_, int blocks_, int tiles_, int ksteps_, const SplitTail& s)
      : block(block_), blocks(blocks_), tiles(tiles_), ksteps(ksteps_), split(s), t(block_),
        it(tail_begin(block_)), end(tail_begin(block_ + 1)) {}

  __host__ __device__ bool next(WorkUnit& u) {
    if (t < split.first) {
      u = WorkUnit{t, 0, ksteps};
      t += blocks;
      return true;
    }
    if (it >= end) return false;
    const int k0 = static_cast<int>(it % ksteps);
    const long long left = end - it;
    u = WorkUnit{split.first + static_cast<int>(it / ksteps), k0,
                 left < ksteps - k0 ? k0 + static_cast<int>(left) : ksteps};
    it += u.k1 - u.k0;
    return true;
  }
};

__device__ __forceinline__ void consumer_barrier(int consumer) {
  asm volatile("bar.sync %0, %1;" ::"r"(1 + consumer), "n"(wg::kThreads) : "memory");
}

__device__ __forceinline__ float4* partial_slot(const SplitTail& s, int block, int consumer) {
  return s.partials + static_cast<long long>(block * kConsumers + consumer) * 32 * wg::kThreads;
}

// Consumer warpgroup, unit that does not finish its tile: its accumulators to the block's
// slot (coalesced: float4 j of every thread side by side), then the flag.
__device__ __forceinline__ void write_partial(const SplitTail& s, int block, int consumer,
                                              const float (&acc)[128]) {
  float4* dst = partial_slot(s, block, consumer);
  const int t = wg::thread();
#pragma unroll
  for (int j = 0; j < 32; ++j)
    dst[j * wg::kThreads + t] = make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
  __threadfence();
  consumer_barrier(consumer);  // every thread's part is out before the flag
  if (t == 0)
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(&s.flags[block * kConsumers + consumer]),
                 "r"(s.epoch)
                 : "memory");
}

// Consumer warpgroup, unit that finishes tile `tile`: adds the partials of the blocks whose
// ranges begin inside the tile (the next blocks, in order).
__device__ __forceinline__ void add_partials(const WorkWalk& w, int tile, int consumer,
                                             float (&acc)[128]) {
  const long long tile_end = 1ll * (tile - w.split.first + 1) * w.ksteps;
  const int t = wg::thread();
  for (int q = w.block + 1; q < w.blocks && w.tail_begin(q) < tile_end; ++q) {
    if (t == 0) {
      const unsigned int* f = &w.split.flags[q * kConsumers + consumer];
      unsigned int v;
      do {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
      } while (v < w.split.epoch);
    }
    consumer_barrier(consumer);
    const float4* src = partial_slot(w.split, q, consumer);
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const float4 v = __ldcg(&src[j * wg::kThreads + t]);  // L2: written during this launch
      acc[4 * j] += v.x;
      acc[4 * j + 1] += v.y;
      acc[4 * j + 2] += v.z;
      acc[4 * j + 3] += v.w;
    }
  }
}

}  // namespace gemm
}  // namespace pk

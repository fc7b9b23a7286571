// The one-way protocol of the fused GEMMs that add finished tiles into other ranks' output
// buffers (GEMM + reduce-scatter, GEMM + all-reduce). Nothing is zeroed: every output tile has
// an owner rank, whose walk visits its own tiles first (phase 1) and stores them plainly into
// every copy that receives the tile; every other rank visits the tile in its phase 2 and
// reduce-adds into the same copies, after the owner said its phase-1 stores are complete.
//   ready: block 0 tells every peer "this launch has started" (one signal per launch), and each
//          storer waits for every peer's ready before its first store into that peer (the
//          peer's previous output is no longer being read);
//   phase: each storer, once its phase-1 stores have completed (bulk_wait_complete), tells
//          every peer; a phase-2 tile waits until all of its owner's blocks have;
//   done:  each storer, after its reduce-adds have completed, tells every peer; block 0 waits
//          for all peers' blocks so the launch ends only when this rank's output holds every
//          contribution.
// Flags are monotone: targets are epoch multiples, compared with >=. Against zeroing the
// output and adding every contribution, this saves the memset (64-128 MiB per launch at
// 8192^3) and turns 1/W of the adds into plain stores.
#pragma once
#include <pk/device/signal.cuh>
#include <pk/device/store.cuh>
#include <pk/device/wait.cuh>

namespace pk {
namespace gemm {

constexpr int kReadySlot = 0;   // + rank of the rank that is ready
constexpr int kPhaseSlot = 32;  // + rank: that rank's blocks whose phase-1 stores are complete
constexpr int kDoneSlot = 64;   // blocks of peers that have finished

__device__ __forceinline__ void peer_reduce_begin(const LaunchContext& c, int block) {
  if (block == 0) signal_all(c, kReadySlot + c.rank);
  for (int r = 0; r < c.world; ++r)
    if (r != c.rank) wait_ge(c, kReadySlot + r, c.epoch);
  proxy_fence_after_wait();  // the TMA stores that follow are ordered after the peers' start
}

// Does this block's walk (positions block, block + blocks, ... below n) reach phase 2 (the
// positions from n1 on)?
__device__ __forceinline__ bool reaches_phase2(int block, int blocks, int n1, int n) {
  const int first = block >= n1 ? block : block + (n1 - block + blocks - 1) / blocks * blocks;
  return first < n;
}

// Before the boxes of walk position t, whose tile `owner` stores first; positions below n1
// are this rank's own (phase 1: plain stores, nothing to wait for). At the block's first
// phase-2 position its phase-1 stores are completed and published; every phase-2 tile then
// waits for all of its owner's blocks.
__device__ __forceinline__ void first_writer_before_tile(const LaunchContext& c, int t, int n1,
                                                         int owner, int blocks) {
  if (t < n1) return;
  if (t - blocks < n1) {
    bulk_wait_complete();
    signal_all(c, kPhaseSlot + c.rank);
  }
  wait_ge(c, kPhaseSlot + owner, c.epoch * static_cast<unsigned long long>(blocks));
  proxy_fence_after_wait();  // the TMA adds that follow come after the owner's stores
}

// Called after bulk_wait_complete(): the adds this block issued are performed.
// n1, n: as for first_writer_before_tile (a block that never reached phase 2 publishes its
// phase-1 stores here).
__device__ __forceinline__ void peer_reduce_end(const LaunchContext& c, int block, int blocks,
                                                int n1, int n) {
  if (!reaches_phase2(block, blocks, n1, n)) signal_all(c, kPhaseSlot + c.rank);
  signal_all(c, kDoneSlot);
  if (block == 0)
    wait_ge(c, kDoneSlot, c.epoch * static_cast<unsigned long long>(c.world - 1) * blocks);
}

}  // namespace gemm
}  // namespace pk

// The one-way protocol of the fused GEMMs that reduce-add finished tiles into other ranks'
// output buffers (GEMM + reduce-scatter, GEMM + all-reduce). Each rank zeroes its own output
// on its stream before the launch; then
//   ready: block 0 tells every peer "my output is zeroed" (one signal per launch), and each
//          storer waits for every peer's ready before its first reduce-add into that peer;
//   done:  each storer, after its reduce-adds have completed (bulk_wait_complete), tells every
//          peer; block 0 waits for all peers' blocks so the launch ends only when this rank's
//          output holds every contribution.
// Flags are monotone: targets are epoch multiples, compared with >=.
#pragma once
#include <pk/device/signal.cuh>
#include <pk/device/wait.cuh>

namespace pk {
namespace gemm {

constexpr int kReadySlot = 0;   // + rank of the rank that is ready
constexpr int kDoneSlot = 64;   // blocks of peers that have finished

__device__ __forceinline__ void peer_reduce_begin(const LaunchContext& c, int block) {
  if (block == 0) signal_all(c, kReadySlot + c.rank);
  for (int r = 0; r < c.world; ++r)
    if (r != c.rank) wait_ge(c, kReadySlot + r, c.epoch);
  proxy_fence_after_wait();  // the TMA adds that follow are ordered after the peers' zeroing
}

// Called after bulk_wait_complete(): the adds this block issued are performed.
__device__ __forceinline__ void peer_reduce_end(const LaunchContext& c, int block, int blocks) {
  signal_all(c, kDoneSlot);
  if (block == 0)
    wait_ge(c, kDoneSlot, c.epoch * static_cast<unsigned long long>(c.world - 1) * blocks);
}

}  // namespace gemm
}  // namespace pk

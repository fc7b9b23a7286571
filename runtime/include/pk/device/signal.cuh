// signal / signal_all: one-way, system-scope release of a flag on a peer.
#pragma once
#include <pk/device/launch_context.cuh>
#include <pk/device/ptx.cuh>

namespace pk {

// Adds `inc` to flags[peer][slot]. Called by ONE thread.
//
// Ordering: the caller must order the block's prior writes (the data this signal publishes)
// before this call, normally with __syncthreads(); the emitter emits it. Why that is enough:
// bar.sync puts the other threads' writes before this thread's next instructions in causality
// order at CTA scope, and PTX fences are cumulative, so the system-scope fence below makes every
// write that precedes it in causality order - not only this thread's own - visible at system
// scope before any later write of this thread. The flag add comes after the fence, so a peer
// that observes the new flag value with a system-scope acquire also observes the data. The add
// itself is also a release (free on top of the fence) so the pattern reads as release/acquire.
// Writes issued by TMA are not covered: wait for them with bulk_wait_complete() first.
__device__ __forceinline__ void signal_after_fence(const LaunchContext& c, int peer, int slot,
                                                   unsigned long long inc) {
  unsigned long long* f = c.flags[peer] + slot;
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(f), "l"(inc) : "memory");
}

__device__ __forceinline__ void signal(const LaunchContext& c, int peer, int slot,
                                       unsigned long long inc = 1) {
  fence_acq_rel_sys();
  signal_after_fence(c, peer, slot, inc);
}

// signal() to every rank except this one; one fence covers all the adds.
__device__ __forceinline__ void signal_all(const LaunchContext& c, int slot,
                                           unsigned long long inc = 1) {
  fence_acq_rel_sys();
  for (int r = 0; r < c.world; ++r)
    if (r != c.rank) signal_after_fence(c, r, slot, inc);
}

}  // namespace pk

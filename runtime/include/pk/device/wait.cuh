// wait_ge: bounded, system-scope acquire wait on a local flag.
#pragma once
#include <pk/device/launch_context.cuh>
#include <pk/device/ptx.cuh>

namespace pk {

// Records a timed-out wait in the host-visible error slot; the first error of a launch wins.
// code: 1 for a flag wait, 3 for an LL wait (slot is then the source rank; see WaitError), and
// 4 for a tile addressed to a rank outside the world (pk/device/check.cuh's peer_in_range).
__device__ __forceinline__ void record_wait_timeout(const LaunchContext& c, int slot,
                                                    unsigned long long expected,
                                                    unsigned long long seen,
                                                    unsigned int code = 1) {
  if (c.error == nullptr) return;
  if (atomic_cas_u32(&c.error->code, 0u, code) != 0u) return;
  c.error->rank = c.rank;
  c.error->slot = slot;
  c.error->block = static_cast<int>(blockIdx.x);
  c.error->expected = expected;
  c.error->seen = seen;
  fence_acq_rel_sys();
}

// Spins until flags[rank][slot] >= target, then returns true; the load that sees the value is
// an acquire at system scope, so data published before the matching signals is visible to this
// thread (and, after a __syncthreads(), to the block). Gives up after c.timeout_ns (measured with
// %globaltimer), records rank/slot/block/expected/seen in *c.error and returns false: the caller
// should then skip its work and exit, and the host turns the record into an error Status.
// Called by ONE thread. Flags only grow (monotone epochs), hence >= and never ==.
__device__ __forceinline__ bool wait_ge(const LaunchContext& c, int slot,
                                        unsigned long long target) {
  const unsigned long long* f = c.flags[c.rank] + slot;
  unsigned long long v = ld_acquire_sys(f);
  if (v >= target) return true;
  const unsigned long long start = globaltimer_ns();
  for (unsigned int spins = 0;; ++spins) {
    v = ld_acquire_sys(f);
    if (v >= target) return true;
    // Hot spin first (hand-off latency matters), then back off so a long wait does not steal
    // issue slots from co-resident compute warps.
    if (spins > 256) nanosleep_ns(64);
    if ((spins & 63) == 0 && globaltimer_ns() - start > c.timeout_ns) {
      record_wait_timeout(c, slot, target, v);
      return false;
    }
  }
}

// After a wait, data that will be read through the async proxy (TMA loads) needs this fence:
// the acquire orders generic-proxy accesses only.
__device__ __forceinline__ void proxy_fence_after_wait() {
  asm volatile("fence.proxy.async;" ::: "memory");
}

}  // namespace pk

// Launch-time argument checks: a failed check is reported like a wait timeout, through the
// launch's error slot, and the kernel leaves before it signals anyone.
#pragma once
#include <pk/device/launch_context.cuh>
#include <pk/device/ptx.cuh>
#include <pk/device/wait.cuh>

namespace pk {

constexpr unsigned int kErrorCheckFailed = 2;

// Called by one thread (block 0, thread 0). The first error of a launch wins. What check
// `check` requires is written beside it in the generated CUDA (`// pk-check <id>: ...`).
__device__ inline void report_check_failure(const LaunchContext& c, int check, long long expected,
                                           long long actual) {
  if (atomic_cas_u32(&c.error->code, 0u, kErrorCheckFailed) == 0u) {
    c.error->rank = c.rank;
    c.error->slot = check;
    c.error->block = static_cast<int>(blockIdx.x);
    c.error->expected = static_cast<unsigned long long>(expected);
    c.error->seen = static_cast<unsigned long long>(actual);
    __threadfence_system();
  }
}

constexpr unsigned int kErrorBadStep = 5;

// Whether a range() loop's run-time step is positive. Else thread 0 of each block that meets it
// records it (the launch's first error wins) and the caller skips the loop, which would never
// end. The step is the same in every thread of a block, so the skip never splits its barriers.
__device__ inline bool range_step_ok(const LaunchContext& c, long long step) {
  if (step > 0) return true;
  if (threadIdx.x == 0 && atomic_cas_u32(&c.error->code, 0u, kErrorBadStep) == 0u) {
    c.error->rank = c.rank;
    c.error->slot = -1;
    c.error->block = static_cast<int>(blockIdx.x);
    c.error->expected = 1;
    c.error->seen = static_cast<unsigned long long>(step);
    __threadfence_system();
  }
  return false;
}

// The next trip of a range() loop with a run-time step, or `hi` once the step passes it: the
// plain `k += step` overflows for a step near 2^63 and wraps k negative, so the loop would run
// on. hi - k is exact as unsigned while k < hi, and the step is positive (range_step_ok).
__device__ __forceinline__ long long range_next(long long k, long long step, long long hi) {
  return static_cast<unsigned long long>(hi) - static_cast<unsigned long long>(k) >
                 static_cast<unsigned long long>(step)
             ? k + step
             : hi;
}

constexpr unsigned int kErrorBadFlagSlot = 6;
// Words of a kernel's flag region (pk/runtime/context.h's kKernelFlagRegion; host only).
constexpr long long kFlagRegionWords = 2048;

// Whether flag slot `slot`, computed at run time (`prim::flag(m / 16)`), lies in the kernel's
// flag region: slot s holds words [s * gridDim.x, (s + 1) * gridDim.x). Else thread 0 records
// it (the launch's first error wins) and the caller's block leaves before using the flag; the
// slot is the same in every thread of a block, so no barrier is split.
__device__ inline bool flag_slot_ok(const LaunchContext& c, long long slot) {
  const long long slots = kFlagRegionWords / static_cast<long long>(gridDim.x);
  if (slot >= 0 && slot < slots) return true;
  if (threadIdx.x == 0 && atomic_cas_u32(&c.error->code, 0u, kErrorBadFlagSlot) == 0u) {
    c.error->rank = c.rank;
    c.error->slot = -1;
    c.error->block = static_cast<int>(blockIdx.x);
    c.error->expected = static_cast<unsigned long long>(slots);
    c.error->seen = static_cast<unsigned long long>(slot);
    __threadfence_system();
  }
  return false;
}

constexpr unsigned int kErrorBadPeer = 4;
// A tile loop's count past 2^31 - 1 along a later dimension (pk/tile/walk.cuh's walk_counts_fit).
constexpr unsigned int kErrorTileCount = 7;

// Whether rank p exists (0 <= p < world), for a tile read from or written to `x.on(p)` with p
// computed at run time. Else thread 0 of each block that meets it records it in the error slot
// (the launch's first error wins) and the caller skips the access: a peer outside the world is
// an error the host reports, never an access past the peer table. p is the same in every
// thread of a block (index scalars are), so the skip never splits a block's barriers.
__device__ inline bool peer_in_range(const LaunchContext& c, long long p) {
  if (p >= 0 && p < c.world) return true;
  if (threadIdx.x == 0)
    record_wait_timeout(c, -1, static_cast<unsigned long long>(c.world), static_cast<unsigned long long>(p),
                        kErrorBadPeer);
  return false;
}

}  // namespace pk

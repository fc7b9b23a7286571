// Launch-time argument checks: a failed check is reported like a wait timeout, through the
// launch's error slot, and the kernel leaves before it signals anyone.
#pragma once
#include <pk/device/launch_context.cuh>
#include <pk/device/ptx.cuh>

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

}  // namespace pk

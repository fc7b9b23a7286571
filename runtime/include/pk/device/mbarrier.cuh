// Shared-memory mbarrier wrappers for intra-block hand-offs (loader -> consumer -> storer).
#pragma once
#include <pk/device/ptx.cuh>

namespace pk {

// A barrier object lives in shared memory: `__shared__ alignas(8) Mbarrier bar;`.
struct alignas(8) Mbarrier {
  unsigned long long state;
};

// One thread initialises; `count` arrivals complete a phase. The fence makes the initialised
// barrier visible to the async proxy (TMA completes transactions on it) and to other threads
// after the following __syncthreads().
__device__ __forceinline__ void mbarrier_init(Mbarrier* bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count)
               : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Arrive (one of `count`) and announce `bytes` of TMA transactions this phase will receive.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(Mbarrier* bar, unsigned int bytes) {
  asm volatile(
      "{\n\t.reg .b64 st;\n\t"
      "mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(smem_addr(bar)),
      "r"(bytes)
      : "memory");
}

// Plain arrival (release at CTA scope: the caller's prior writes are visible to the waiter).
__device__ __forceinline__ void mbarrier_arrive(Mbarrier* bar) {
  asm volatile(
      "{\n\t.reg .b64 st;\n\t"
      "mbarrier.arrive.shared::cta.b64 st, [%0];\n\t}" ::"r"(smem_addr(bar))
      : "memory");
}

// True once the phase with the given parity (0, 1, 0, ...) has completed (acquire at CTA scope).
// While it has not, the thread may be suspended for up to kMbarrierSuspendNs, and is woken as
// soon as the phase completes: a long wait (the storer's, through a whole main loop) then
// does not keep issuing instructions beside the math warps.
constexpr unsigned int kMbarrierSuspendNs = 10000000;
__device__ __forceinline__ bool mbarrier_try_wait_parity(Mbarrier* bar, unsigned int parity) {
  unsigned int done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity), "n"(kMbarrierSuspendNs)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ void mbarrier_wait_parity(Mbarrier* bar, unsigned int parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

}  // namespace pk

// Warpgroup roles and the register split between them (setmaxnreg, sm_90a).
#pragma once

namespace pk {
namespace wg {

constexpr int kThreads = 128;  // 4 consecutive warps issue one wgmma together

__device__ __forceinline__ int index() { return threadIdx.x / kThreads; }
__device__ __forceinline__ int thread() { return threadIdx.x % kThreads; }

// Registers move from the data-movement warpgroup (few live values) to the math warpgroups
// (128 fp32 accumulators each). Only effective with __launch_bounds__(threads, 1); each
// warpgroup must execute exactly one of these, in one branch of its role switch.
template <int N>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

}  // namespace wg
}  // namespace pk

// barrier: all ranks meet, on monotone epoch counters.
#pragma once
#include <pk/device/signal.cuh>
#include <pk/device/wait.cuh>

namespace pk {

// Every rank bumps `slot` on every other rank, then waits until its own counter reaches
// epoch * (world - 1): each launch adds exactly world-1 to every rank's counter, so after
// launch e all of them have arrived exactly when the counter is >= e * (world - 1).
// Called by ONE thread per rank and at most once per slot per launch (use distinct slots for
// several barriers in one kernel). The caller orders the block's writes before it with
// __syncthreads() (see signal()) and broadcasts the result after it.
//
// Why not reset-and-compare-equal ("wait until flag == world-1, then set it to 0"): launches are
// asynchronous, so a fast rank can finish launch e, start launch e+1 and signal again before a
// slow rank has read its counter for launch e. The slow rank then sees world (never equal to
// world-1) and hangs, or its reset erases the early signal of launch e+1 and the next launch
// hangs. Monotone counters compared with >= absorb early arrivals and never need a reset.
__device__ __forceinline__ bool barrier(const LaunchContext& c, int slot) {
  signal_all(c, slot, 1);
  return wait_ge(c, slot, c.epoch * static_cast<unsigned long long>(c.world - 1));
}

// Block-level form: orders the block's writes, runs barrier() on thread 0, and returns its
// outcome to every thread. Every thread of the block must call it.
__device__ __forceinline__ bool barrier_block(const LaunchContext& c, int slot) {
  __syncthreads();
  int ok = 1;
  if (block_thread() == 0) ok = barrier(c, slot) ? 1 : 0;
  return __syncthreads_and(ok) != 0;  // also the barrier that publishes the outcome
}

}  // namespace pk

// A shared-memory ring of stages handed between a producer and consumers by mbarrier phases:
// `full[s]` completes when stage s holds data (TMA transaction bytes), `empty[s]` when every
// consumer has released it. Both sides walk the stages in the same order and flip their phase
// bit at each wrap, so no counter is ever reset.
#pragma once
#include <pk/device/mbarrier.cuh>

namespace pk {

template <int Stages>
struct RingCursor {
  int stage = 0;
  unsigned int phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

template <int Stages>
struct Ring {
  Mbarrier full[Stages];
  Mbarrier empty[Stages];

  // One thread, before the block-wide barrier that publishes the ring.
  __device__ __forceinline__ void init(unsigned int consumer_arrivals) {
    for (int s = 0; s < Stages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], consumer_arrivals);
    }
  }
  // Producer: waits until the stage is free. A fresh barrier counts its (virtual) previous
  // phase as complete, so the first pass waits on parity 1 and returns at once.
  __device__ __forceinline__ void wait_empty(const RingCursor<Stages>& c) {
    mbarrier_wait_parity(&empty[c.stage], c.phase ^ 1u);
  }
  __device__ __forceinline__ void wait_full(const RingCursor<Stages>& c) {
    mbarrier_wait_parity(&full[c.stage], c.phase);
  }
  __device__ __forceinline__ void release(int stage) { mbarrier_arrive(&empty[stage]); }
};

}  // namespace pk

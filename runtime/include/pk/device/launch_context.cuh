// The kernel ABI shared by emitted code and the host runtime: what every pk kernel receives.
#pragma once

#ifndef PK_MAX_RANKS
#define PK_MAX_RANKS 16
#endif

namespace pk {

// Filled by a bounded wait that gave up; the host reads it after the launch.
struct WaitError {
  unsigned int code;            // 0: no error, 1: wait timed out, 2: argument check failed,
                                // 3: LL wait timed out (slot: the source rank),
                                // 4: a tile addressed rank `seen`, outside the world,
                                // 5: a range() loop's run-time step was `seen` (<= 0)
  int rank;                     // rank that waited
  int slot;                     // flag slot it waited on
  int block;                    // block that waited
  unsigned long long expected;  // value it waited for (>=)
  unsigned long long seen;      // value it last read
};

// Passed by value as the first argument of every pk kernel.
struct LaunchContext {
  int rank;
  int world;
  // Monotone launch counter: 1 for the first launch, +1 per launch. Flags only grow, so a wait
  // for "count signals per launch" compares flag >= epoch * count and never needs a reset.
  unsigned long long epoch;
  unsigned long long timeout_ns;                // bound on every wait
  unsigned long long* flags[PK_MAX_RANKS];      // each rank's flag array, mapped into this rank
  WaitError* error;                             // this rank's error slot (device memory)
  // This kernel's landing buffer on every rank (symmetric, landing_bytes each; null and 0 when
  // the context has none): small collectives push into it instead of handshaking (push_small.cuh).
  unsigned char* landing[PK_MAX_RANKS];
  unsigned long long landing_bytes;
  // After those landing_bytes, ll_bytes of LL words (pk/device/push_ll.cuh), zeroed when
  // allocated; 0 turns the LL path off.
  unsigned long long ll_bytes;
};

// A symmetric tensor: the same shape on every rank, every rank's copy addressable.
// Contiguous, row-major.
template <class T>
struct SymTensor {
  T* peer[PK_MAX_RANKS];
  long long shape[4];
  long long numel;
};

// A tensor that lives on this rank only. Contiguous, row-major.
template <class T>
struct Tensor {
  T* data;
  long long shape[4];
  long long numel;
};

}  // namespace pk

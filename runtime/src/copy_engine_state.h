// Per-context state of the copy-engine route (copy_engine.cpp): created at its first use,
// destroyed with the context.
#pragma once
#include <cuda_runtime_api.h>

#include <memory>

#include <pk/runtime/module.h>

namespace pk {

struct CopyEngineState {
  static constexpr int kSides = 4;
  // Second streams: pieces of the peers' pulls and the local copy run there, beside the pulls
  // on the caller's stream; forked after the ready round, joined before the done round.
  cudaStream_t side[kSides] = {};
  cudaEvent_t fork = nullptr, join[kSides] = {};
  std::unique_ptr<Module> module;  // the one-block sync kernel
  Kernel sync;
  ~CopyEngineState() {
    for (cudaEvent_t e : join)
      if (e) cudaEventDestroy(e);
    if (fork) cudaEventDestroy(fork);
    for (cudaStream_t s : side)
      if (s) cudaStreamDestroy(s);
  }
};

}  // namespace pk

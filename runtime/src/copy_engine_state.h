// Per-context state of the copy-engine route (copy_engine.cpp): created at its first use,
// destroyed with the context.
#pragma once
#include <cuda_runtime_api.h>

#include <memory>

#include <pk/runtime/module.h>

namespace pk {

struct CopyEngineState {
  cudaStream_t side = nullptr;  // the local part's copy runs here, beside the peers' pulls
  cudaEvent_t fork = nullptr, join = nullptr;
  std::unique_ptr<Module> module;  // the one-block sync kernel
  Kernel sync;
  ~CopyEngineState() {
    if (join) cudaEventDestroy(join);
    if (fork) cudaEventDestroy(fork);
    if (side) cudaStreamDestroy(side);
  }
};

}  // namespace pk

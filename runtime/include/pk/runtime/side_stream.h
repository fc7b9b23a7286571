// A second stream of the current device with the events that fork work onto it from a caller's
// stream and join it back: host-driven copies run there beside a kernel or another copy.
#pragma once
#include <cuda_runtime_api.h>

#include <pk/runtime/cuda_check.h>
#include <pk/runtime/status.h>

namespace pk {

struct SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;

  SideStream() = default;
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  ~SideStream() {
    if (join) cudaEventDestroy(join);
    if (fork) cudaEventDestroy(fork);
    if (stream) cudaStreamDestroy(stream);
  }

  // Creates the stream (non-blocking) and the two events on the current device.
  Status create() {
    PK_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    PK_CUDA_TRY(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    PK_CUDA_TRY(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    return Status::ok();
  }
};

}  // namespace pk

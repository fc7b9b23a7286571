// CUDA runtime error codes as Status values.
#include <pk/runtime/cuda_check.h>

#include <string>

namespace pk {

Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return Status::error(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                       cudaGetErrorString(e) + ")");
}

}  // namespace pk

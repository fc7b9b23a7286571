// Turns CUDA runtime and NCCL return codes into Status values.
#pragma once
#include <cuda_runtime_api.h>

#include <pk/runtime/status.h>

namespace pk {

Status cuda_status(cudaError_t e, const char* what);

}  // namespace pk

#define PK_CUDA_TRY(call) PK_RETURN_IF_ERROR(::pk::cuda_status((call), #call))

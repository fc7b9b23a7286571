// The CUDA driver API, loaded lazily with dlopen so binaries start on machines without a GPU.
#pragma once
#include <cuda.h>  // types and enums only; nothing links libcuda

#include <pk/runtime/status.h>

namespace pk {

// Entry points pk uses, fetched once from libcuda.so.1.
struct DriverApi {
  CUresult (*init)(unsigned int);
  CUresult (*get_error_string)(CUresult, const char**);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*ctx_get_current)(CUcontext*);
  CUresult (*module_load_data)(CUmodule*, const void*);
  CUresult (*module_unload)(CUmodule);
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*);
  CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*occupancy_max_active_blocks)(int*, CUfunction, int, size_t);
  CUresult (*launch_kernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                            unsigned int, unsigned int, unsigned int, CUstream, void**, void**);
  CUresult (*tensor_map_encode_tiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                      const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                      const cuuint32_t*, CUtensorMapInterleave,
                                      CUtensorMapSwizzle, CUtensorMapL2promotion,
                                      CUtensorMapFloatOOBfill);
};

// Loads the driver on first use (thread-safe) and calls cuInit; an error if there is none.
Result<const DriverApi*> driver();

// "what: CUDA_ERROR_X (description)" for a failed call, ok for CUDA_SUCCESS.
Status cu_status(CUresult r, const char* what);

}  // namespace pk

// Lazy libcuda loading: dlopen on first use so nothing links the driver.
#include <pk/runtime/driver.h>

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace pk {
namespace {

struct Loaded {
  DriverApi api{};
  Status status;
};

template <class F>
bool sym(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

Loaded load() {
  Loaded l;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    l.status = Status::error(std::string("cannot load the CUDA driver (libcuda.so.1): ") +
                             (e ? e : "unknown error"));
    return l;
  }
  DriverApi& a = l.api;
  const char* missing = nullptr;
  if (!sym(lib, "cuInit", a.init)) missing = "cuInit";
  else if (!sym(lib, "cuGetErrorString", a.get_error_string)) missing = "cuGetErrorString";
  else if (!sym(lib, "cuDeviceGet", a.device_get)) missing = "cuDeviceGet";
  else if (!sym(lib, "cuDeviceGetAttribute", a.device_get_attribute)) missing = "cuDeviceGetAttribute";
  else if (!sym(lib, "cuCtxGetCurrent", a.ctx_get_current)) missing = "cuCtxGetCurrent";
  else if (!sym(lib, "cuModuleLoadData", a.module_load_data)) missing = "cuModuleLoadData";
  else if (!sym(lib, "cuModuleUnload", a.module_unload)) missing = "cuModuleUnload";
  else if (!sym(lib, "cuModuleGetFunction", a.module_get_function)) missing = "cuModuleGetFunction";
  else if (!sym(lib, "cuFuncSetAttribute", a.func_set_attribute)) missing = "cuFuncSetAttribute";
  else if (!sym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor", a.occupancy_max_active_blocks))
    missing = "cuOccupancyMaxActiveBlocksPerMultiprocessor";
  else if (!sym(lib, "cuLaunchKernel", a.launch_kernel)) missing = "cuLaunchKernel";
  else if (!sym(lib, "cuTensorMapEncodeTiled", a.tensor_map_encode_tiled))
    missing = "cuTensorMapEncodeTiled";
  if (missing) {
    l.status = Status::error(std::string("the CUDA driver lacks ") + missing);
    return l;
  }
  l.status = cu_status(a.init(0), "cuInit");
  return l;
}

}  // namespace

Result<const DriverApi*> driver() {
  static const Loaded loaded = load();  // thread-safe one-time initialisation
  if (!loaded.status.is_ok()) return loaded.status;
  return &loaded.api;
}

Status cu_status(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return Status::ok();
  std::string desc = "error " + std::to_string(static_cast<int>(r));
  auto d = driver();
  const char* s = nullptr;
  if (d.is_ok() && (*d)->get_error_string(r, &s) == CUDA_SUCCESS && s) desc = s;
  return Status::error(std::string(what) + ": " + desc);
}

}  // namespace pk

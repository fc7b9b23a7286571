// Module loading and kernel launch through the lazily loaded driver.
#include <pk/runtime/module.h>

#include <pk/runtime/capabilities.h>
#include <pk/runtime/cuda_check.h>
#include <pk/runtime/driver.h>
#include <pk/runtime/shared_gpu.h>

namespace pk {

Result<std::unique_ptr<Module>> Module::load(const std::vector<char>& image) {
  PK_ASSIGN_OR_RETURN(const DriverApi* d, driver());
  // The runtime creates the device's primary context lazily; make sure it is current.
  PK_CUDA_TRY(cudaFree(nullptr));
  std::unique_ptr<Module> m(new Module());
  CUmodule mod = nullptr;
  PK_RETURN_IF_ERROR(cu_status(d->module_load_data(&mod, image.data()), "cuModuleLoadData"));
  m->module_ = mod;
  return m;
}

Result<std::unique_ptr<Module>> Module::compile_and_load(CompileRequest req) {
  if (req.arch.empty()) {
    int dev = 0, major = 0, minor = 0;
    PK_CUDA_TRY(cudaGetDevice(&dev));
    PK_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    PK_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    req.arch = arch_for(major, minor);
  }
  PK_ASSIGN_OR_RETURN(CompileOutput out, compile(req));
  return load(out.image);
}

Module::~Module() {
  if (!module_) return;
  auto d = driver();
  if (d.is_ok()) (*d)->module_unload(static_cast<CUmodule>(module_));
}

Result<Kernel> Module::kernel(const std::string& name) const {
  PK_ASSIGN_OR_RETURN(const DriverApi* d, driver());
  CUfunction f = nullptr;
  PK_RETURN_IF_ERROR(cu_status(d->module_get_function(&f, static_cast<CUmodule>(module_), name.c_str()),
                               ("cuModuleGetFunction(" + name + ")").c_str()));
  Kernel k;
  k.function_ = f;
  k.name_ = name;
  return k;
}

// Ranks sharing the GPU spin on each other: refuse a grid whose copies cannot all be resident.
Status Kernel::check_fits_shared_gpu(const LaunchConfig& cfg) const {
  PK_ASSIGN_OR_RETURN(const DriverApi* d, driver());
  int device = 0, per_sm = 0;
  PK_CUDA_TRY(cudaGetDevice(&device));
  const int threads = static_cast<int>(cfg.block.x * cfg.block.y * cfg.block.z);
  PK_RETURN_IF_ERROR(cu_status(d->occupancy_max_active_blocks(&per_sm, static_cast<CUfunction>(function_),
                                                              threads, cfg.shared_bytes),
                               "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
  const long long grid = static_cast<long long>(cfg.grid.x) * cfg.grid.y * cfg.grid.z;
  return check_co_resident(device, name_, grid, per_sm);
}

Status Kernel::launch(const LaunchConfig& cfg, cudaStream_t stream, KernelArgs& args) const {
  if (!args.ok()) return Status::error("kernel " + name_ + ": arguments exceed 32 KiB");
  PK_ASSIGN_OR_RETURN(const DriverApi* d, driver());
  auto f = static_cast<CUfunction>(function_);
  SharedAllowance& allowed = *shared_allowed_;
  if (cfg.shared_bytes > allowed.bytes.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(allowed.raise);
    if (cfg.shared_bytes > allowed.bytes.load(std::memory_order_relaxed)) {
      PK_RETURN_IF_ERROR(cu_status(
          d->func_set_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                static_cast<int>(cfg.shared_bytes)),
          "cuFuncSetAttribute(max dynamic shared memory)"));
      allowed.bytes.store(cfg.shared_bytes, std::memory_order_release);
    }
  }
  if (shared_gpu_ranks_exist()) PK_RETURN_IF_ERROR(check_fits_shared_gpu(cfg));
  const CUresult r = d->launch_kernel(f, cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x,
                                      cfg.block.y, cfg.block.z, cfg.shared_bytes,
                                      reinterpret_cast<CUstream>(stream), args.pointers(), nullptr);
  if (r == CUDA_SUCCESS) return Status::ok();  // the message is built only on failure
  return cu_status(r, ("cuLaunchKernel(" + name_ + ")").c_str());
}

}  // namespace pk

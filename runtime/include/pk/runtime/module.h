// Loaded kernels: a module from a cubin (cuModuleLoadData via the lazily loaded driver) and
// launches of its functions on a rank's stream.
#pragma once
#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pk/runtime/context.h>
#include <pk/runtime/kernel_args.h>
#include <pk/runtime/nvrtc_compile.h>
#include <pk/runtime/status.h>

namespace pk {

struct LaunchConfig {
  dim3 grid{1, 1, 1};
  dim3 block{128, 1, 1};
  unsigned int shared_bytes = 0;  // dynamic shared memory, opted into automatically
};

class Kernel {
 public:
  // Launches on `stream` (the caller's stream; cudaStream_t and CUstream are the same handle).
  // While ranks share this GPU (pk/runtime/shared_gpu.h), first an error unless all their
  // grids of this shape can be resident at once.
  Status launch(const LaunchConfig& cfg, cudaStream_t stream, KernelArgs& args) const;
  const std::string& name() const { return name_; }

 private:
  friend class Module;
  Status check_fits_shared_gpu(const LaunchConfig& cfg) const;
  void* function_ = nullptr;  // CUfunction
  std::string name_;
  // The dynamic shared memory the function is already allowed (shared by copies of this
  // Kernel), so a launch calls cuFuncSetAttribute only when it needs more. It starts at 0, not
  // 48 KiB: a function's default allowance is 48 KiB less its static shared memory.
  struct SharedAllowance {
    std::atomic<unsigned> bytes{0};
    std::mutex raise;  // one raise at a time, so the attribute never drops below `bytes`
  };
  std::shared_ptr<SharedAllowance> shared_allowed_ = std::make_shared<SharedAllowance>();
};

class Module {
 public:
  // Loads `image` (cubin or PTX) into the current device's primary context. Call on the rank's
  // thread after cudaSetDevice (Context::create does that).
  static Result<std::unique_ptr<Module>> load(const std::vector<char>& image);
  // compile() for the current device's architecture (unless req.arch is set), then load().
  static Result<std::unique_ptr<Module>> compile_and_load(CompileRequest req);
  ~Module();

  // An `extern "C"` kernel of the module.
  Result<Kernel> kernel(const std::string& name) const;

 private:
  Module() = default;
  void* module_ = nullptr;  // CUmodule
};

// Launches `kernel` for its next epoch on ctx's stream with arguments
// (launch context, rest...): the signature every emitted kernel has. The launch context
// carries the kernel's own flag region and epoch.
template <class... Rest>
Status launch(Context& ctx, const Kernel& kernel, const LaunchConfig& cfg, const Rest&... rest) {
  PK_ASSIGN_OR_RETURN(LaunchContext lc, ctx.make_launch_context(kernel.name()));
  KernelArgs args;
  args.add(lc);
  (args.add(rest), ...);
  Status s = kernel.launch(cfg, ctx.stream(), args);
  if (!s.is_ok()) ctx.retract_launch(kernel.name());  // nothing ran: keep the epochs in step
  return s;
}

}  // namespace pk

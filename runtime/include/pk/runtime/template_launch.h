// Builds a template kernel's parameter block from its description (pk/runtime/template_params.h):
// TMA descriptors encoded through the lazily loaded driver, pointers, the launch context and
// the ints the description computes. No template-specific host code.
#pragma once
#include <type_traits>
#include <vector>

#include <cuda_runtime_api.h>

#include <pk/device/launch_context.cuh>
#include <pk/device/tensor_map.cuh>
#include <pk/runtime/context.h>
#include <pk/runtime/module.h>
#include <pk/runtime/template_params.h>

namespace pk {

// One kernel argument as the block needs it: a tensor's local data, every rank's copy for a
// symmetric one (indexed by rank, `world` entries), its extents (dims past its rank are 1) and
// element size; or a scalar (integer, or floating for `real`).
struct TemplateArg {
  bool tensor = false;
  const void* local = nullptr;
  const void* const* peers = nullptr;
  long long shape[4] = {1, 1, 1, 1};
  long long numel = 0;
  int element_bytes = 0;
  long long scalar = 0;
  bool real = false;
  double real_value = 0;
};

// A typed launcher's arguments as TemplateArgs (`rank`: this rank, for a symmetric tensor's
// local copy).
template <class T>
TemplateArg template_arg(const SymTensor<T>& t, int rank) {
  TemplateArg a;
  a.tensor = true;
  a.local = t.peer[rank];
  a.peers = reinterpret_cast<const void* const*>(t.peer);
  for (int k = 0; k < 4; ++k) a.shape[k] = t.shape[k];
  a.numel = t.numel;
  a.element_bytes = sizeof(T);
  return a;
}
template <class T>
TemplateArg template_arg(const Tensor<T>& t, int) {
  TemplateArg a;
  a.tensor = true;
  a.local = t.data;
  for (int k = 0; k < 4; ++k) a.shape[k] = t.shape[k];
  a.numel = t.numel;
  a.element_bytes = sizeof(T);
  return a;
}
template <class T>
TemplateArg template_arg(T scalar, int) {
  TemplateArg a;
  a.scalar = static_cast<long long>(scalar);
  a.real = std::is_floating_point_v<T>;
  a.real_value = static_cast<double>(scalar);
  return a;
}

// What the description's expressions read for these arguments on ctx's rank (sms left 0).
// Keeps a reference to `args`.
HostValues template_values(const Context& ctx, const std::vector<TemplateArg>& args);

// A bf16 row-major tensor map: dims and box innermost first (2 or 3 of each), 128-byte
// swizzle (or none), out-of-bounds reads as zero. Errors name the alignment or size rule broken. Maps are
// memoised by (base, dims, box), so repeated calls on the same tensors skip the driver.
Result<TensorMap> encode_bf16_tensor_map(const void* base, const std::vector<long long>& dims,
                                         const std::vector<int>& box, bool swizzle = true);

// The block (t.params_bytes, zero where no field lies), evaluated with `values` (world, rank,
// sms, argument extents); `ctx` is the launch's context, `ticket` its tile counter and
// `workspace` what a workspace field points to.
Result<std::vector<unsigned char>> build_template_params(const TemplateLaunch& t,
                                                         const std::vector<TemplateArg>& args,
                                                         const HostValues& values,
                                                         const LaunchContext& ctx,
                                                         const TileTicket& ticket = {},
                                                         void* workspace = nullptr);

// Whether `t` can take these arguments (an error naming the first rule broken): its TMA
// descriptors' tensors with 16-byte aligned bases and extents TMA takes (each in [1, 2^31)), its
// int parameters in range. A caller with a fallback kernel launches that one instead.
Status check_template_fits(const Context& ctx, const TemplateLaunch& t, const std::vector<TemplateArg>& args);

// Launches `kernel` (the template kernel `t` describes; its arguments already checked) for
// ctx's next epoch on `stream`: the grid from the sizes and this rank's SMs, the outputs it
// accumulates into zeroed, the stream's workspace if it asks for one, a flag region per
// configuration, the parameter block, one launch.
// `code_tag` joins the region's key: kernels of one name but other code keep their own epochs.
Status launch_template(Context& ctx, const Kernel& kernel, const TemplateLaunch& t,
                       const std::vector<TemplateArg>& args, cudaStream_t stream,
                       const std::string& code_tag = "");

}  // namespace pk

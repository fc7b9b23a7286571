// Builds a template kernel's parameter block from its description (pk/runtime/template_params.h):
// TMA descriptors encoded through the lazily loaded driver, pointers, the launch context and
// the ints the description computes. No template-specific host code.
#pragma once
#include <vector>

#include <pk/device/launch_context.cuh>
#include <pk/device/tensor_map.cuh>
#include <pk/runtime/template_params.h>

namespace pk {

// One kernel argument as the block needs it: its local data and, for a symmetric tensor,
// every rank's copy (indexed by rank, `world` entries).
struct TemplateArg {
  const void* local = nullptr;
  const void* const* peers = nullptr;
};

// A bf16 row-major tensor map: dims and box innermost first (2 or 3 of each), 128-byte
// swizzle, out-of-bounds reads as zero. Errors name the alignment or size rule broken.
Result<TensorMap> encode_bf16_tensor_map(const void* base, const std::vector<long long>& dims,
                                         const std::vector<int>& box);

// The block (t.params_bytes, zero where no field lies), evaluated with `values` (world, rank,
// sms, argument extents); `ctx` is the launch's context.
Result<std::vector<unsigned char>> build_template_params(const TemplateLaunch& t,
                                                         const std::vector<TemplateArg>& args,
                                                         const HostValues& values,
                                                         const LaunchContext& ctx);

}  // namespace pk

// Host: TMA descriptors for the GEMM templates (bf16, 128-byte swizzle, boxes of 64 columns),
// in the nvcc host plans' terms; the runtime's encoder (pk/runtime/template_launch.h), which
// the launch descriptions use too, does the work and the alignment checks TMA needs.
#pragma once
#include <pk/runtime/template_launch.h>

namespace pk {
namespace gemm {

// Row-major [layers, rows, cols] bf16 at `base`, boxes of [1, box_rows, 64]; a 2-D map
// ([rows, cols]) unless `three_d`. Out-of-bounds box elements read as zero and are not written.
inline Result<TensorMap> encode_bf16_map(const void* base, unsigned long long layers,
                                         unsigned long long rows, unsigned long long cols,
                                         unsigned int box_rows, bool three_d = false) {
  if (rows == 0 || cols == 0 || layers == 0) return Status::error("gemm: empty matrix");
  std::vector<long long> dims = {static_cast<long long>(cols), static_cast<long long>(rows)};
  std::vector<int> box = {64, static_cast<int>(box_rows)};
  if (three_d) dims.push_back(static_cast<long long>(layers)), box.push_back(1);
  return encode_bf16_tensor_map(base, dims, box);
}

}  // namespace gemm
}  // namespace pk

// Host: TMA descriptors for the GEMM templates (bf16, 128-byte swizzle, boxes of 64 columns),
// encoded through the lazily loaded driver, with the alignment checks TMA needs.
#pragma once
#include <cstring>
#include <string>

#include <pk/runtime/driver.h>
#include <pk/runtime/status.h>
#include <pk/device/tensor_map.cuh>

namespace pk {
namespace gemm {

// Row-major [layers, rows, cols] bf16 at `base`, boxes of [1, box_rows, 64]; a 2-D map
// ([rows, cols]) unless `three_d`. Out-of-bounds box elements read as zero and are not written.
inline Result<TensorMap> encode_bf16_map(const void* base, unsigned long long layers,
                                         unsigned long long rows, unsigned long long cols,
                                         unsigned int box_rows, bool three_d = false) {
  if (reinterpret_cast<unsigned long long>(base) % 16 != 0)
    return Status::error("gemm: matrix base address must be 16-byte aligned");
  if (cols % 8 != 0)
    return Status::error("gemm: the innermost dimension (" + std::to_string(cols) +
                         ") must be a multiple of 8 bf16 elements: TMA row pitches are 16-byte "
                         "multiples");
  if (rows == 0 || cols == 0 || layers == 0) return Status::error("gemm: empty matrix");
  if (rows >= (1ull << 31) || cols >= (1ull << 31))
    return Status::error("gemm: dimension too large for a TMA descriptor");
  PK_ASSIGN_OR_RETURN(const DriverApi* d, driver());
  const cuuint64_t dims[3] = {cols, rows, layers};
  const cuuint64_t strides[2] = {cols * 2, rows * cols * 2};
  const cuuint32_t box[3] = {64, box_rows, 1};
  const cuuint32_t estr[3] = {1, 1, 1};
  const cuuint32_t rank = three_d ? 3 : 2;
  CUtensorMap m;
  PK_RETURN_IF_ERROR(cu_status(
      d->tensor_map_encode_tiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, rank,
                                 const_cast<void*>(base), dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      "cuTensorMapEncodeTiled"));
  TensorMap out;
  static_assert(sizeof(TensorMap) == sizeof(CUtensorMap), "TensorMap must mirror CUtensorMap");
  std::memcpy(&out, &m, sizeof(out));
  return out;
}

}  // namespace gemm
}  // namespace pk

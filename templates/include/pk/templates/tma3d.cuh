// 3-D TMA tensor copies (the runtime's load.cuh/store.cuh have the 2-D ones): a shard index as
// the outer coordinate lets a box clip at a shard's last row instead of running into the next.
#pragma once
#include <pk/device/mbarrier.cuh>
#include <pk/device/tensor_map.cuh>

namespace pk {

// Box at (x = innermost, y, z) into shared memory, completing its bytes on `bar`.
__device__ __forceinline__ void load_async_tensor_3d(void* smem_dst, const TensorMap* map, int x,
                                                     int y, int z, Mbarrier* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], "
      "[%1, {%3, %4, %5}], [%2];" ::"r"(smem_addr(smem_dst)),
      "l"(map), "r"(smem_addr(bar)), "r"(x), "r"(y), "r"(z)
      : "memory");
}

// Box from shared memory to (x, y, z); elements outside the tensor are not written.
__device__ __forceinline__ void store_async_tensor_3d(const TensorMap* map, const void* smem_src,
                                                      int x, int y, int z) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(map),
      "r"(smem_addr(smem_src)), "r"(x), "r"(y), "r"(z)
      : "memory");
}

// Waits until at most N committed bulk groups of this thread still read their shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read_n() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

}  // namespace pk

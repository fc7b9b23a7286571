// Tile loads from a peer's buffer (pull): ld/st copy and TMA bulk / tensor loads.
#pragma once
#include <pk/device/elem.cuh>
#include <pk/device/launch_context.cuh>
#include <pk/device/mbarrier.cuh>
#include <pk/device/tensor_map.cuh>

namespace pk {

// Block-cooperative copy of src.peer[peer][offset, offset + count) into dst[0, count) (local
// global or shared memory). Loads bypass L1 (data may have been published during this launch).
template <class T>
__device__ __forceinline__ void load_tile(const LaunchContext& c, const SymTensor<T>& src,
                                          int peer, long long offset, T* dst, long long count) {
  (void)c;
  constexpr int V = VecTraits<T>::per16;
  const int tid = block_thread(), nthr = block_threads();
  const T* s = src.peer[peer] + offset;
  long long done = 0;
  if (is_aligned16(s) && is_aligned16(dst)) {
    const long long nvec = count / V;
    for (long long i = tid; i < nvec; i += nthr)
      reinterpret_cast<Vec16*>(dst)[i] = ld_cg_v4(s + i * V);
    done = nvec * V;
  }
  for (long long k = done + tid; k < count; k += nthr)
    dst[k] = from_acc<T>(ld_cg_elem(s + k));
}

// TMA bulk load of `bytes` from a (peer) global address into this block's shared memory; the
// transfer completes `bytes` transactions on `bar`, whose phase the issuing thread armed with
// mbarrier_arrive_expect_tx(bar, bytes). Addresses and bytes are multiples of 16. After a flag
// wait, call proxy_fence_after_wait() before issuing.
__device__ __forceinline__ void load_async_bulk(void* smem_dst, const void* peer_src,
                                                unsigned int bytes, Mbarrier* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_addr(smem_dst)),
      "l"(peer_src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

// 2-D tensor-map load of the box at (x = innermost, y) into shared memory, completing on `bar`.
__device__ __forceinline__ void load_async_tensor_2d(void* smem_dst, const TensorMap* map, int x,
                                                     int y, Mbarrier* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], "
      "[%1, {%3, %4}], [%2];" ::"r"(smem_addr(smem_dst)),
      "l"(map), "r"(smem_addr(bar)), "r"(x), "r"(y)
      : "memory");
}

}  // namespace pk

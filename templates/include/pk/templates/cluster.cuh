// Thread-block clusters for the GEMM main loop (sm_90): a block's rank in its cluster, the
// cluster-wide barrier, an mbarrier arrival on another block of the cluster, and the TMA load
// that multicasts one box into every block of the cluster.
#pragma once
#include <pk/device/mbarrier.cuh>
#include <pk/device/ptx.cuh>
#include <pk/device/tensor_map.cuh>

namespace pk {
namespace cluster {

__device__ __forceinline__ unsigned int cta_rank() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Every thread of every block of the cluster; release/acquire, so barriers initialised before
// it may then receive remote arrivals and multicast transactions.
__device__ __forceinline__ void sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}

// Arrives once on the barrier at `bar`'s offset in block `cta` of this cluster (this block
// too), releasing at cluster scope: the caller's shared-memory reads are done.
__device__ __forceinline__ void arrive(Mbarrier* bar, unsigned int cta) {
  asm volatile(
      "{\n\t.reg .b32 remote;\n\t"
      "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n\t}" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}

// 2-D tensor-map load of the box at (x, y) into `smem_dst`'s offset in every block of
// `cta_mask`, completing its bytes on the barrier at `bar`'s offset in each of them.
__device__ __forceinline__ void load_tensor_2d_multicast(void* smem_dst, const TensorMap* map,
                                                         int x, int y, Mbarrier* bar,
                                                         unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_addr(smem_dst)),
      "l"(map), "r"(smem_addr(bar)), "r"(x), "r"(y), "h"(cta_mask)
      : "memory");
}

}  // namespace cluster
}  // namespace pk

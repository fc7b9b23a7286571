// The Load-Compute-Store-Communicate skeleton: one persistent kernel whose first
// `comm_blocks` blocks are communicators (inter-SM overlap) and whose other blocks each run
// a loader, two consumers and a storer (intra-SM overlap), visiting tiles in TileOrder.
// Compute blocks run in clusters of kClusterM that take adjacent row tiles of one column tile:
// each block loads its own A tile and 1/kClusterM of the shared B tile, multicast into every
// block of the cluster, so L2 serves each B tile once per cluster.
//
//   warpgroup 0, warp 0: loader   - TMA loads of A and B into the ring (mbarrier full/empty)
//   warpgroup 0, warp 1: storer   - takes finished boxes from the consumers (mbarrier
//                                   c_full/c_empty) and stores, reduce-adds or sends them
//   warpgroups 1, 2:     consumers - wgmma on the ring, fp32 accumulators, bf16 hand-over
//
// A Job supplies the data placement and communication:
//   struct Params { TileOrder order; TensorMap b; int k; int comm_blocks; ... };
//   kHasCommunicator;  communicate(p, smem, comm_block)            (communicator blocks)
//   before_loads(p, tile)                                            (loader, once per tile)
//   load_a(p, tile, k0, smem, bar)                                   (loader; B is p.b, [N, K])
//   store_rows(p, tile), store_cols(p)                               (clip limits, storer)
//   storer_begin(p, block); store_box(p, tile, row, col, box); storer_end(p, block)  (storer)
// comm_blocks and the grid are multiples of kClusterM (the host plans see to it).
#pragma once
#include <pk/templates/gemm_tile.cuh>
#include <pk/templates/tile_order.cuh>

namespace pk {
namespace gemm {

// A block's place in the walk: its cluster (the walk's unit) and its rank inside it.
struct WalkSlot {
  int cluster, clusters, cta;
};

template <class Job>
__device__ __forceinline__ void run_loader(const typename Job::Params& p, SharedStorage& ss,
                                           WalkSlot w) {
  RingCursor<kStages> cur;
  const int ksteps = k_steps(p.k);
  const int n = p.order.count();
  for (int t = w.cluster; t < n; t += w.clusters) {
    const TileCoord tile = p.order.at(t, w.cta);
    Job::before_loads(p, tile);
    for (int k = 0; k < ksteps; ++k) {
      ss.ring.wait_empty(cur);  // free in every block of the cluster
      Mbarrier* full = &ss.ring.full[cur.stage];
      // This block's A, its B part and the other blocks' B parts; out-of-bounds boxes still
      // count fully. A peer's multicast may land before this arming: the phase cannot
      // complete without this arrival.
      mbarrier_arrive_expect_tx(full, kStageBytes);
      Job::load_a(p, tile, k * kBK, &ss.a[cur.stage][0], full);
      bf16* b_part = &ss.b[cur.stage][w.cta * kBRows * kBK];
      const int b_row = tile.ni * kBN + w.cta * kBRows;
      if constexpr (kClusterM == 1)
        load_async_tensor_2d(b_part, &p.b, k * kBK, b_row, full);
      else
        cluster::load_tensor_2d_multicast(b_part, &p.b, k * kBK, b_row, full,
                                          static_cast<unsigned short>((1u << kClusterM) - 1u));
      cur.advance();
    }
  }
  // The other blocks' consumers arrive on this block's empty barriers up to their last stage:
  // the block must outlive those arrivals, so wait one more lap of releases.
  for (int s = 0; s < kStages; ++s) {
    ss.ring.wait_empty(cur);
    cur.advance();
  }
}

template <class Job>
__device__ __forceinline__ void run_consumer(const typename Job::Params& p, SharedStorage& ss,
                                             int consumer, WalkSlot w) {
  RingCursor<kStages> cur;
  const int ksteps = k_steps(p.k);
  const int n = p.order.count();
  unsigned int handoffs = 0;
  float acc[128];
  for (int t = w.cluster; t < n; t += w.clusters) {
    mma_tile(ss, cur, ksteps, consumer, acc);
    // Pass 0 then pass 1; each waits until the storer's TMA has read the previous pair.
    mbarrier_wait_parity(&ss.c_empty[consumer], (handoffs & 1u) ^ 1u);
    write_epilogue_boxes<0>(ss.c[consumer], acc);
    fence_proxy_async_smem();  // generic smem writes -> visible to the TMA store
    mbarrier_arrive(&ss.c_full[consumer]);
    ++handoffs;
    mbarrier_wait_parity(&ss.c_empty[consumer], (handoffs & 1u) ^ 1u);
    write_epilogue_boxes<1>(ss.c[consumer], acc);
    fence_proxy_async_smem();
    mbarrier_arrive(&ss.c_full[consumer]);
    ++handoffs;
  }
}

template <class Job>
__device__ __forceinline__ void run_storer(const typename Job::Params& p, SharedStorage& ss,
                                           int block, WalkSlot w) {
  Job::storer_begin(p, block);
  const int n = p.order.count();
  const int cols = Job::store_cols(p);
  unsigned int handoffs = 0;
  for (int t = w.cluster; t < n; t += w.clusters) {
    const TileCoord tile = p.order.at(t, w.cta);
    const int rows = Job::store_rows(p, tile);
    for (int pass = 0; pass < kBN / kEpiCols; ++pass, ++handoffs) {
      for (int w = 0; w < kConsumers; ++w) {
        mbarrier_wait_parity(&ss.c_full[w], handoffs & 1u);
        const int row = tile.mi * kBM + w * kBoxRows;
        for (int b = 0; b < kEpiCols / kBoxCols; ++b) {
          const int col = tile.ni * kBN + pass * kEpiCols + b * kBoxCols;
          if (tile.valid && row < rows && col < cols)  // boxes wholly outside carry nothing
            Job::store_box(p, tile, row, col, &ss.c[w][b * kBoxElems]);
        }
        bulk_commit();
        bulk_wait_read();  // the consumer may overwrite the boxes once TMA has read them
        mbarrier_arrive(&ss.c_empty[w]);
      }
    }
  }
  bulk_wait_complete();  // every store performed before the job publishes completion
  Job::storer_end(p, block);
}

// The whole kernel body; a kernel (lcsc_kernel below, or one pkc emits) wraps it with
// __launch_bounds__(kThreads, 1), which setmaxnreg needs, __cluster_dims__(kClusterM, 1, 1)
// and kSharedBytes of dynamic smem.
template <class Job>
__device__ __forceinline__ void lcsc_run(const typename Job::Params& p) {
  extern __shared__ unsigned char smem_raw[];
  if constexpr (Job::kHasCommunicator) {
    if (static_cast<int>(blockIdx.x) < p.comm_blocks) {
      Job::communicate(p, smem_raw, blockIdx.x);
      return;
    }
  }
  const int block = blockIdx.x - p.comm_blocks;
  const int blocks = gridDim.x - p.comm_blocks;
  const WalkSlot w{block / kClusterM, blocks / kClusterM, static_cast<int>(cluster::cta_rank())};
  SharedStorage& ss = shared_storage(smem_raw);
  if (threadIdx.x == 0) {
    ss.ring.init(kStageReleases);
    for (int c = 0; c < kConsumers; ++c) {
      mbarrier_init(&ss.c_full[c], wg::kThreads);
      mbarrier_init(&ss.c_empty[c], 1);
    }
  }
  cluster::sync();  // every block's barriers exist before any multicast or remote arrival
  if (wg::index() == 0) {
    wg::release_registers<kLoaderRegs>();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (warp == 0 && lane == 0) run_loader<Job>(p, ss, w);
    else if (warp == 1 && lane == 0) run_storer<Job>(p, ss, block, w);
  } else {
    wg::claim_registers<kConsumerRegs>();
    run_consumer<Job>(p, ss, wg::index() - 1, w);
  }
}

template <class Job>
__global__ void __cluster_dims__(kClusterM, 1, 1) __launch_bounds__(kThreads, 1) lcsc_kernel(const __grid_constant__ typename Job::Params p) {
  lcsc_run<Job>(p);
}

}  // namespace gemm
}  // namespace pk

// The Load-Compute-Store-Communicate skeleton: one persistent kernel whose first
// `comm_blocks` blocks are communicators (inter-SM overlap) and whose other blocks each run
// a loader, two consumers and a storer (intra-SM overlap), visiting tiles in TileOrder.
//
//   warpgroup 0, warp 0: loader   - TMA loads of A and B into the ring (mbarrier full/empty)
//   warpgroup 0, warp 1: storer   - takes finished boxes from the consumers (mbarrier
//                                   c_full/c_empty) and stores, reduce-adds or sends them
//   warpgroups 1, 2:     consumers - wgmma on the ring, fp32 accumulators, bf16 hand-over
//   (where B is fp8 or i8 beside a bf16 / f16 A, kWidenB, the consumers first widen each stage's
//   8-bit B to wgmma's operand: widen_b.cuh; i8 A and B, kA == s8, accumulate in s32, whose bits
//   the epilogue and an i32 output take)
//
// A Job supplies the data placement and communication:
//   struct Params { TileOrder order; int k; int comm_blocks; ... };
//   kHasCommunicator;  communicate(p, smem, comm_block)            (communicator blocks)
//   before_loads(p, tile)                                            (loader, once per tile)
//   load_a / load_b(p, tile, k0, smem, bar)                          (loader)
//   store_rows(p, tile), store_cols(p)                               (clip limits, storer)
//   storer_begin(p, block); store_box(p, tile, row, col, box); storer_end(p, block)  (storer)
// and, through JobDefaults unless it says otherwise, the operand types (kA, kB), the output type
// (kF16Out; kOutBytes 4 for f32 and i32, which kDirectStore stores from the consumers' registers,
// bypassing the storer), B's and A's layouts (kBNMajor, kAMMajor) and an epilogue on the accumulators (kHasEpilogue;
// epilogue<First, Count>(p, tile, row0, col0, acc) on accumulators [First, First + Count), consumers).
#pragma once
#include <pk/templates/gemm_tile.cuh>
#include <pk/templates/split_k.cuh>
#include <pk/templates/tile_order.cuh>

namespace pk {
namespace gemm {

// bf16 operands and output, B K-major (C = A * B^T), no epilogue.
struct JobDefaults {
  static constexpr bool kF16Out = false, kBNMajor = false, kAMMajor = false, kHasEpilogue = false;
  static constexpr int kOutBytes = 2;
  static constexpr bool kDirectStore = false;  // the consumers store C themselves (store_direct)
  static constexpr bool kWidenB = false;  // B's fp8 box widened in the ring (widen_b.cuh)
  // Whether the job may cut each tile's K steps into Params::splits pieces (split_k.cuh); it then
  // has Params::splits and split_ws, and store_direct for every output type.
  static constexpr bool kSplitK = false;
  using WidenFrom = f8e4m3;
  using WidenTo = bf16;
  static constexpr wg::Operand kA = wg::Operand::bf16, kB = wg::Operand::bf16;
  template <int First, int Count, class Params>
  __device__ static void epilogue(const Params&, const TileCoord&, int, int, float (&)[128]) {}
  // The K steps of one tile (a job with a trailing product adds its own).
  template <class Params>
  __device__ static int steps(const Params& p) { return k_steps(p.k); }
};

// A 2-D B of one K step for tile column `ni`: [N, K] as one 256 x 64 box, or [K, N] (BNMajor) as
// four 64 x 64 boxes (wgmma's N-major layout, one 128-byte swizzle row per K-row and box).
template <bool BNMajor>
__device__ __forceinline__ void load_b_2d(const TensorMap* map, int ni, int k0, void* dst, Mbarrier* bar) {
  constexpr int kBox = 64;
  if constexpr (BNMajor) {
#pragma unroll
    for (int j = 0; j < kBN / kBox; ++j)
      load_async_tensor_2d(static_cast<unsigned char*>(dst) + j * kBox * kBK * 2, map, ni * kBN + j * kBox, k0, bar);
  } else {
    load_async_tensor_2d(dst, map, k0, ni * kBN, bar);
  }
}

// Pieces per tile: 1 unless the job splits K and this launch asked for more (and its tiles' counters
// fit the workspace's region, as the launch description's rule keeps them).
template <class Job>
__device__ __forceinline__ int split_count(const typename Job::Params& p) {
  if constexpr (Job::kSplitK)
    return p.splits > 1 && p.order.count() * kConsumers <= kSplitCounters ? p.splits : 1;
  else return 1;
}

template <class Job>
__device__ __forceinline__ void run_loader(const typename Job::Params& p, SharedStorage& ss,
                                           int block, int blocks) {
  RingCursor<kStages> cur;
  const int ksteps = Job::steps(p);
  const int splits = split_count<Job>(p);
  const int n = p.order.count() * splits;
  for (int w = block; w < n; w += blocks) {  // work items: tile w / splits, its piece w % splits
    const TileCoord tile = p.order.at(w / splits);
    int first, end;
    split_range(ksteps, w % splits, splits, first, end);
    Job::before_loads(p, tile);
    for (int k = first; k < end; ++k) {
      ss.ring.wait_empty(cur);
      Mbarrier* full = &ss.ring.full[cur.stage];
      if constexpr (Job::kWidenB) {  // the fp8 box apart: the consumers widen it (widen_b.cuh)
        mbarrier_arrive_expect_tx(full, kABytes);
        Job::load_a(p, tile, k * kBK, &ss.a[cur.stage][0], full);
        Mbarrier* raw = &ss.raw_full[cur.stage];
        mbarrier_arrive_expect_tx(raw, kBBytes / 2);
        Job::load_b(p, tile, k * kBK, reinterpret_cast<unsigned char*>(&ss.b[cur.stage][0]) + kRawOffset, raw);
      } else {
        mbarrier_arrive_expect_tx(full, kStageBytes);  // out-of-bounds boxes still count fully
        Job::load_a(p, tile, k * kBK, &ss.a[cur.stage][0], full);
        Job::load_b(p, tile, k * kBK, &ss.b[cur.stage][0], full);
      }
      cur.advance();
    }
  }
}

template <class Job>
__device__ __forceinline__ void run_consumer(const typename Job::Params& p, SharedStorage& ss,
                                             int consumer, int block, int blocks) {
  RingCursor<kStages> cur;
  const int ksteps = Job::steps(p);
  const int splits = split_count<Job>(p);
  const int n = p.order.count() * splits;
  unsigned int handoffs = 0;
  float acc[128];
  for (int w = block; w < n; w += blocks) {
    const int t = w / splits, piece = w % splits;
    int first, end;
    split_range(ksteps, piece, splits, first, end);
    const int steps = end - first;
    if constexpr (Job::kWidenB) {
      mma_tile<Job::kA, Job::kB, false, false, typename Job::WidenFrom, typename Job::WidenTo>(ss, cur, steps,
                                                                                             consumer, acc);
    } else if constexpr (Job::kA == wg::Operand::s8) {
      // s32 accumulators: the epilogue and the stores take their bits in the float registers.
      int sums[128];
      mma_tile<Job::kA, Job::kB, false, false>(ss, cur, steps, consumer, sums);
#pragma unroll
      for (int j = 0; j < 128; ++j) acc[j] = __int_as_float(sums[j]);
    } else {
      mma_tile<Job::kA, Job::kB, Job::kBNMajor, Job::kAMMajor>(ss, cur, steps, consumer, acc);
    }
    const TileCoord tile = p.order.at(t);
    const int row0 = tile.mi * kBM + consumer * kBoxRows, col0 = tile.ni * kBN;
    if constexpr (Job::kSplitK) {
      if (splits > 1) {  // the last piece to finish sums them all, then stores like kDirectStore
        const int rows = Job::store_rows(p, tile);
        if (row0 >= rows) continue;  // no output row in this consumer's half: no partials either
        const bool live = row0 + 16 * (wg::thread() / 32) < rows;
        if (!split_reduce<Job::kA == wg::Operand::s8, kConsumers>(p.split_ws, t, piece, splits, consumer, live, acc))
          continue;
        if constexpr (Job::kHasEpilogue) Job::template epilogue<0, 128>(p, tile, row0, col0, acc);
        Job::store_direct(p, tile, row0, col0, acc);
        continue;
      }
    }
    if constexpr (Job::kDirectStore) {
      if constexpr (Job::kHasEpilogue) Job::template epilogue<0, 128>(p, tile, row0, col0, acc);
      Job::store_direct(p, tile, row0, col0, acc);
      continue;
    }
    // Pass 0 then pass 1; each waits until the storer's TMA has read the previous pair. The
    // epilogue of pass 1's columns runs while the storer sends pass 0.
    if constexpr (Job::kHasEpilogue) Job::template epilogue<0, 64>(p, tile, row0, col0, acc);
    mbarrier_wait_parity(&ss.c_empty[consumer], (handoffs & 1u) ^ 1u);
    write_epilogue_boxes<0, Job::kF16Out>(ss.c[consumer], acc);
    fence_proxy_async_smem();  // generic smem writes -> visible to the TMA store
    mbarrier_arrive(&ss.c_full[consumer]);
    ++handoffs;
    if constexpr (Job::kHasEpilogue) Job::template epilogue<64, 64>(p, tile, row0, col0, acc);
    mbarrier_wait_parity(&ss.c_empty[consumer], (handoffs & 1u) ^ 1u);
    write_epilogue_boxes<1, Job::kF16Out>(ss.c[consumer], acc);
    fence_proxy_async_smem();
    mbarrier_arrive(&ss.c_full[consumer]);
    ++handoffs;
  }
}

template <class Job>
__device__ __forceinline__ void run_storer(const typename Job::Params& p, SharedStorage& ss,
                                           int block, int blocks) {
  Job::storer_begin(p, block);
  if (Job::kDirectStore || split_count<Job>(p) > 1) {  // the consumers store C; nothing reaches the storer
    Job::storer_end(p, block);
    return;
  }
  const int n = p.order.count();
  const int cols = Job::store_cols(p);
  unsigned int handoffs = 0;
  for (int t = block; t < n; t += blocks) {
    const TileCoord tile = p.order.at(t);
    const int rows = Job::store_rows(p, tile);
    for (int pass = 0; pass < kBN / kEpiCols; ++pass, ++handoffs) {
      for (int w = 0; w < kConsumers; ++w) {
        mbarrier_wait_parity(&ss.c_full[w], handoffs & 1u);
        const int row = tile.mi * kBM + w * kBoxRows;
        for (int b = 0; b < kEpiCols / kBoxCols; ++b) {
          const int col = tile.ni * kBN + pass * kEpiCols + b * kBoxCols;
          if (row < rows && col < cols)  // boxes wholly outside the output carry nothing
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
// __launch_bounds__(kThreads, 1), which setmaxnreg needs, and kSharedBytes of dynamic smem.
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
  SharedStorage& ss = shared_storage(smem_raw);
  if (threadIdx.x == 0) {
    ss.ring.init(kConsumers * wg::kThreads);
    for (int s = 0; s < kStages; ++s) mbarrier_init(&ss.raw_full[s], 1);
    for (int w = 0; w < kConsumers; ++w) {
      mbarrier_init(&ss.c_full[w], wg::kThreads);
      mbarrier_init(&ss.c_empty[w], 1);
    }
  }
  __syncthreads();
  if (wg::index() == 0) {
    wg::release_registers<kLoaderRegs>();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (warp == 0 && lane == 0) run_loader<Job>(p, ss, block, blocks);
    else if (warp == 1 && lane == 0) run_storer<Job>(p, ss, block, blocks);
  } else {
    wg::claim_registers<kConsumerRegs>();
    run_consumer<Job>(p, ss, wg::index() - 1, block, blocks);
  }
}

template <class Job>
__global__ void __launch_bounds__(kThreads, 1) lcsc_kernel(const __grid_constant__ typename Job::Params p) {
  lcsc_run<Job>(p);
}

}  // namespace gemm
}  // namespace pk

// Job: GEMM + reduce-scatter, intra-SM overlap. Every rank holds A[M, K] and B[N, K] or [K, N] (K is the
// sharded axis: each rank has its own slice of the reduction), and rank o ends with
// C_o[M / W, N] = sum over ranks of rows [o * M / W, (o + 1) * M / W) of A * B^T. The storer
// reduce-adds each finished 64 x 64 box straight into its owner's buffer with
// cp.reduce.async.bulk.tensor (bf16 add); tiles alternate between owners, starting at the next
// rank, so ranks start on different owners and traffic is spread over the whole run.
#pragma once
#include <pk/templates/lcsc.cuh>
#include <pk/templates/peer_reduce.cuh>

namespace pk {
namespace gemm {

template <bool BNMajor = false>
struct GemmRsJobT : JobDefaults {
  static constexpr bool kBNMajor = BNMajor;
  struct Params {
    TensorMap a;                  // [M, K]
    TensorMap b;                  // [N, K], or [K, N] (BNMajor: C = A * B)
    TensorMap c[PK_MAX_RANKS];    // rank r's output [M / W, N]
    LaunchContext ctx;
    TileOrder order;              // segments = owners, interleaved, first = rank + 1
    int k, m_own, n;
    int comm_blocks;              // always 0
    int blocks;                   // compute blocks, the same on every rank
  };
  static constexpr bool kHasCommunicator = false;
  __device__ static void communicate(const Params&, unsigned char*, int) {}
  __device__ static void before_loads(const Params&, const TileCoord&) {}
  __device__ static void load_a(const Params& p, const TileCoord& t, int k0, void* dst, Mbarrier* bar) {
    // Rows past the owner's last row read the next owner's rows; their results are clipped.
    load_async_tensor_2d(dst, &p.a, k0, t.seg * p.m_own + t.mi * kBM, bar);
  }
  __device__ static void load_b(const Params& p, const TileCoord& t, int k0, void* dst, Mbarrier* bar) {
    load_b_2d<BNMajor>(&p.b, t.ni, k0, dst, bar);
  }
  __device__ static int store_rows(const Params& p, const TileCoord&) { return p.m_own; }
  __device__ static int store_cols(const Params& p) { return p.n; }
  __device__ static void storer_begin(const Params& p, int block) { peer_reduce_begin(p.ctx, block); }
  __device__ static void store_box(const Params& p, const TileCoord& t, int row, int col, const bf16* box) {
    store_add_async_tensor_2d(&p.c[t.seg], box, col, row);
  }
  __device__ static void storer_end(const Params& p, int block) {
    peer_reduce_end(p.ctx, block, p.blocks);
  }
};

using GemmRsJob = GemmRsJobT<>;  // B [N, K]: the nvcc plans' job

}  // namespace gemm
}  // namespace pk

// Job: GEMM + all-reduce, intra-SM overlap. Every rank holds A[M, K] and B[N, K] or [K, N] (its slice of
// the reduction) and ends with C[M, N] = sum over ranks of A * B^T. The storer reduce-adds each
// finished box into every rank's C (one-shot push: (W - 1) x C leaves each rank, the same bytes
// as a two-shot for W = 2). Ranks start their walks at different tiles so that their adds into
// one buffer do not meet on the same lines.
#pragma once
#include <pk/templates/lcsc.cuh>
#include <pk/templates/peer_reduce.cuh>

namespace pk {
namespace gemm {

template <bool BNMajor = false>
struct GemmArJobT : JobDefaults {
  static constexpr bool kBNMajor = BNMajor;
  struct Params {
    TensorMap a;                  // [M, K]
    TensorMap b;                  // [N, K], or [K, N] (BNMajor: C = A * B)
    TensorMap c[PK_MAX_RANKS];    // rank r's output [M, N]
    LaunchContext ctx;
    TileOrder order;              // one segment, rotated by rank
    int k, m, n;
    int comm_blocks;              // always 0
    int blocks;
  };
  static constexpr bool kHasCommunicator = false;
  __device__ static void communicate(const Params&, unsigned char*, int) {}
  __device__ static void before_loads(const Params&, const TileCoord&) {}
  __device__ static void load_a(const Params& p, const TileCoord& t, int k0, void* dst, Mbarrier* bar) {
    load_async_tensor_2d(dst, &p.a, k0, t.mi * kBM, bar);
  }
  __device__ static void load_b(const Params& p, const TileCoord& t, int k0, void* dst, Mbarrier* bar) {
    load_b_2d<BNMajor>(&p.b, t.ni, k0, dst, bar);
  }
  __device__ static int store_rows(const Params& p, const TileCoord&) { return p.m; }
  __device__ static int store_cols(const Params& p) { return p.n; }
  __device__ static void storer_begin(const Params& p, int block) { peer_reduce_begin(p.ctx, block); }
  __device__ static void store_box(const Params& p, const TileCoord&, int row, int col, const bf16* box) {
    for (int i = 1; i <= p.ctx.world; ++i)  // peers first, own copy last
      store_add_async_tensor_2d(&p.c[(p.ctx.rank + i) % p.ctx.world], box, col, row);
  }
  __device__ static void storer_end(const Params& p, int block) {
    peer_reduce_end(p.ctx, block, p.blocks);
  }
};

using GemmArJob = GemmArJobT<>;  // B [N, K]: the nvcc plans' job

}  // namespace gemm
}  // namespace pk

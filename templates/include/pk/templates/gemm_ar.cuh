// Job: GEMM + all-reduce, intra-SM overlap. Every rank holds A[M, K] and B[N, K] (its slice of
// the reduction) and ends with C[M, N] = sum over ranks of A * B^T. The storer sends each
// finished box into every rank's C (one-shot push: (W - 1) x C leaves each rank, the same bytes
// as a two-shot for W = 2). Rank r's walk starts at tile floor(T r / W) of the T tiles, and the
// first floor(T (r + 1) / W) - floor(T r / W) tiles of it are r's own: it stores them plainly
// into every copy (phase 1). Every other rank reduce-adds the tile into every copy in its phase
// 2, once the owner's phase-1 stores are complete (peer_reduce.cuh). Nothing is zeroed.
#pragma once
#include <pk/templates/lcsc.cuh>
#include <pk/templates/peer_reduce.cuh>

namespace pk {
namespace gemm {

struct GemmArJob {
  struct Params {
    TensorMap a;                  // [M, K]
    TensorMap b;                  // [N, K]
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
    load_async_tensor_2d(dst, &p.b, k0, t.ni * kBN, bar);
  }
  __device__ static int store_rows(const Params& p, const TileCoord&) { return p.m; }
  __device__ static int store_cols(const Params& p) { return p.n; }
  // The first walk position of rank r's own tiles, and how many there are.
  __device__ static int own_start(const Params& p, int r) {
    return static_cast<int>(1ll * p.order.count() * r / p.ctx.world);
  }
  __device__ static int own_count(const Params& p) {
    return own_start(p, p.ctx.rank + 1) - own_start(p, p.ctx.rank);
  }
  // The rank whose own tiles include walk position `pos` of this rank's walk.
  __device__ static int owner(const Params& p, int pos) {
    const long long T = p.order.count(), u = (pos + own_start(p, p.ctx.rank)) % T;
    return static_cast<int>(((u + 1) * p.ctx.world + T - 1) / T - 1);
  }
  __device__ static void storer_begin(const Params& p, int block) { peer_reduce_begin(p.ctx, block); }
  __device__ static void before_store(const Params& p, const TileCoord&, int pos, int) {
    first_writer_before_tile(p.ctx, pos, own_count(p), owner(p, pos), p.blocks);
  }
  __device__ static void store_box(const Params& p, const TileCoord&, int pos, int row, int col, const bf16* box) {
    const bool first = pos < own_count(p);
    for (int i = 1; i <= p.ctx.world; ++i) {  // peers first, own copy last
      const TensorMap* c = &p.c[(p.ctx.rank + i) % p.ctx.world];
      if (first) store_async_tensor_2d(c, box, col, row);
      else store_add_async_tensor_2d(c, box, col, row);
    }
  }
  __device__ static void storer_end(const Params& p, int block) {
    peer_reduce_end(p.ctx, block, p.blocks, own_count(p), p.order.count());
  }
};

}  // namespace gemm
}  // namespace pk

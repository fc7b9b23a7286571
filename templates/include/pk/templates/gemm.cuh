// Job: C[M, N] = A[M, K] * B[N, K]^T on one GPU (no communication); the reference point for
// the fused kernels and pkc's GEMM alone.
#pragma once
#include <pk/templates/lcsc.cuh>

namespace pk {
namespace gemm {

struct GemmJob {
  struct Params {
    TensorMap a;  // [M, K], box 128 x 64, 128-byte swizzle
    TensorMap b;  // [N, K], box 256 x 64, 128-byte swizzle
    TensorMap c;  // [M, N], box 64 x 64, 128-byte swizzle
    TileOrder order;
    int k, m, n;
    int comm_blocks;  // always 0
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
  __device__ static void storer_begin(const Params&, int) {}
  __device__ static void store_box(const Params& p, const TileCoord&, int row, int col, const bf16* box) {
    store_async_tensor_2d(&p.c, box, col, row);
  }
  __device__ static void storer_end(const Params&, int) {}
};

}  // namespace gemm
}  // namespace pk

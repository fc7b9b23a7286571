// C[M, N] = A[M, K] * B[N, K]^T on one GPU, bf16 in and out, f32 accumulation: the GEMM the
// fused kernels build on. pkc recognises the loop and instantiates the Hopper GEMM template
// (TMA ring, wgmma, warp-specialised loader/storer); tails in M and N are clipped.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void gemm(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

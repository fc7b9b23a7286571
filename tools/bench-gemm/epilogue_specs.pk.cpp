// The parts of the fused bias + GELU epilogue apart, for pk-bench-gemm-specs' epilogue rows:
// the same bf16 A * B^T loop (128 x 256 x 64) with only the bias row, only GELU, or a column
// mask against an integer argument (a padded vocabulary), each timed against the GEMM alone.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void gemm_t_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<1, 256>(bias, 0, n))), m, n);
  }
}

PK_KERNEL void gemm_t_gelu(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(gelu(acc)), m, n);
  }
}

PK_KERNEL void gemm_t_vocab_mask(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(where(col_index<128, 256>(n) < c.cols() - 64, acc, -1e4f)), m, n);
  }
}

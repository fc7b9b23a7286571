// GEMM loops a user writes that the Hopper GEMM template takes through its variants: B stored
// [K, N] (mma) or [N, K] (mma_t), f16 or bf16 operands, bf16, f16 or f32 output, any tile
// shape (retiled), and element-wise epilogues fused into the consumers (bias rows, row scales,
// residual tiles, float arguments, activations, masks by row and column index). jit_gemm_test compiles each through the JIT and checks it
// against a float64 reference.
#include <pk/spec.h>
using namespace pk;

// C = gelu(A * B + bias), B stored [K, N], bias a [1, N] row.
PK_KERNEL void gemm_bias_gelu(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(c, cast<bf16>(gelu(acc + cast<f32>(load<1, 64>(bias, 0, n)))), m, n);
  }
}

// C = (A * B + bias) * scale, with bias a [N] and scale an [M] 1-D tensor: read as a 1 x N row
// and an M x 1 column of the output tile.
PK_KERNEL void gemm_vectors_1d(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 1> bias, Tensor<f32, 1> scale,
                               Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k, n), acc);
    store(c, cast<bf16>((acc + cast<f32>(load<1, 256>(bias, n))) * load<128, 1>(scale, m)), m, n);
  }
}

// C = A * B^T stored in f32 (no cast): the storer hands over 32-column f32 boxes.
PK_KERNEL void gemm_f32_out(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// C = relu(A * B + bias) in f32 from f16 operands, B stored [K, N], bias an f32 [N] row.
PK_KERNEL void gemm_f32_ab_bias_relu(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> bias, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<64, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, max(acc + load<1, 128>(bias, n), 0.0f), m, n);
  }
}

// C = A * B^T + R (a residual tile at the output's position).
PK_KERNEL void gemm_residual(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> r, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 64})) {
    auto acc = zeros<f32, 128, 64>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<128, 64>(r, m, n))), m, n);
  }
}

// C = A * B in bf16, B stored [K, N], the template's own tile.
PK_KERNEL void gemm_ab(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma(load_smem<128, 64>(a, m, k), load_smem<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// C = A * B^T in f16 (operands and output).
PK_KERNEL void gemm_f16(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<128, 64>(b, n, k), acc);
    store(c, cast<f16>(acc), m, n);
  }
}

// C = silu(alpha * (A * B) * s) in bf16 from f16 operands, B stored [K, N], s a [M, 1] column
// of row scales.
PK_KERNEL void gemm_f16_ab_scaled_silu(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> s, Tensor<bf16, 2> c,
                                       float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<64, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, cast<bf16>(silu(acc * alpha * load<64, 1>(s, m, 0))), m, n);
  }
}

// C = max(2 A * B - 1, 0): whole-number constants in a fused epilogue (printed as 2.0f, not 2f).
PK_KERNEL void gemm_relu_consts(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(max(acc * 2.0f - 1.0f, 0.0f)), m, n);
  }
}

// C = A * B in f16, B stored [K, N].
PK_KERNEL void gemm_f16_ab(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma(load_smem<128, 64>(a, m, k), load_smem<64, 256>(b, k, n), acc);
    store(c, cast<f16>(acc), m, n);
  }
}

// C = gelu(A * B^T + bias) in bf16: a linear layer with its bias and activation fused.
PK_KERNEL void gemm_t_bias_gelu(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(gelu(acc + cast<f32>(load<1, 256>(bias, 0, n)))), m, n);
  }
}

// C = A * B^T in bf16 from fp8 operands (e4m3 A, e5m2 B; fp8 wgmma reads B stored [N, K]), with a
// scale on the product, stepping K by 128 fp8 elements (128 bytes a row, as bf16's 64).
PK_KERNEL void gemm_fp8_scaled(Tensor<f8e4m3, 2> a, Tensor<f8e5m2, 2> b, Tensor<bf16, 2> c, float scale) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 128))
      acc = mma_t(load_smem<128, 128>(a, m, k), load_smem<256, 128>(b, n, k), acc);
    store(c, cast<bf16>(acc * scale), m, n);
  }
}

// An LM head over a vocabulary padded to the tile: logits of columns past `vocab` (an integer
// argument) masked to -1e4, as Megatron masks its padded vocabulary.
PK_KERNEL void gemm_t_vocab_mask(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index vocab) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(where(col_index<128, 256>(n) < vocab, acc, -1e4f)), m, n);
  }
}

// The lower triangle of A * B in f32 (column <= row), and only the columns before b.cols() - 3
// (an extent the host computes): masks by both indices in one epilogue.
PK_KERNEL void gemm_ab_tril_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<64, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    auto keep = (col_index<64, 128>(n) <= row_index<64, 128>(m)) * (col_index<64, 128>(n) < b.cols() - 3);
    store(c, where(keep, acc, 0.0f), m, n);
  }
}

// The weight gradient's product, C = A^T B with A stored [K, M] (dW = dY^T X): A read transposed
// takes the template's M-major A.
PK_KERNEL void gemm_at_b(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.cols(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.rows(), 64))
      acc = mma(transpose(load<64, 128>(a, k, m)), load<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// Batched GEMMs: one product per index of the operands' first dimension, C[z] = A[z] B[z]^T or
// A[z] B[z]. All but the last take the GEMM template's batched form (3-D TMA maps, the tile
// order's segments the batches; the epilogue's prepare() takes the batch), with their
// general-path twins for sizes the template cannot take. The last two multiply every batch by
// one 2-D weight (x @ W^T, x @ W): B's TMA map stays 2-D.
#include <pk/spec.h>
using namespace pk;

// bf16, B stored [B, N, K] (mma_t), bf16 output.
PK_KERNEL void bmm_t(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc), z, m, n);
  }
}

// f16, B stored [B, K, N] (mma), an f32 output with a bias row over N, other tile sizes.
PK_KERNEL void bmm_kn_f32_bias(Tensor<f16, 3> a, Tensor<f16, 3> b, Tensor<f32, 1> bias, Tensor<f32, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(2), {1, 64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.dim(2), 32))
      acc = mma(load<64, 32>(a, z, m, k), load<32, 128>(b, z, k, n), acc);
    store(c, acc + load<1, 128>(bias, n), z, m, n);
  }
}

// bf16 with a GELU (tanh form) epilogue and an f16 output: the epilogue's rows count inside the batch.
PK_KERNEL void bmm_t_gelu_rows(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<128, 64>(b, z, n, k), acc);
    auto rows = cast<f32>(row_index<128, 128>(m));
    store(c, cast<f16>(gelu(acc) + rows * 0.001f), z, m, n);
  }
}

// A scale per batch (s.at(z)): the epilogue reads it once per tile, at the tile's batch.
PK_KERNEL void bmm_batch_scale(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 1> s, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc * s.at(z)), z, m, n);
  }
}

// A residual per batch ([B, M, N], read at the tile's batch) added before the cast.
PK_KERNEL void bmm_t_residual(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> r, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<128, 256>(r, z, m, n))), z, m, n);
  }
}

// One weight for every batch (B [N, K] beside A [B, M, K]).
PK_KERNEL void bmm_shared_weight(Tensor<bf16, 3> a, Tensor<bf16, 2> w, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), w.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(w, n, k), acc);
    store(c, cast<bf16>(acc), z, m, n);
  }
}

// One weight [K, N] for every batch (x @ W), f16, with a bias row and a SiLU, f16 output.
PK_KERNEL void bmm_shared_weight_kn(Tensor<f16, 3> x, Tensor<f16, 2> w, Tensor<f32, 1> bias, Tensor<f16, 3> y) {
  for (auto [z, m, n] : tiles(x.dim(0), x.dim(1), w.cols(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.dim(2), 64))
      acc = mma(load<128, 64>(x, z, m, k), load<64, 256>(w, k, n), acc);
    store(y, cast<f16>(silu(acc + load<1, 256>(bias, n))), z, m, n);
  }
}

// Weight-only quantised GEMMs: a bf16 or f16 activation times fp8 weights stored [N, K] (e4m3 or
// e5m2), the weights cast to the activation's type inside the K loop. pkc lowers them to the
// Hopper GEMM template, which widens each stage's fp8 box in its ring (widen_b.cuh); shapes the
// template's TMA cannot take (K not a multiple of 16) run the general-path twin.
// Tested by test/gpu/gemm_forms_jit_test.cu; routes by test/Compile/weight-only-gemm.test.
#include <pk/spec.h>
using namespace pk;

// y = bf16(x w^T), e4m3 weights.
PK_KERNEL void wo_e4m3_bf16(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// y = bf16(x w^T), e5m2 weights, cast through f32 (the same values).
PK_KERNEL void wo_e5m2_bf16(Tensor<bf16, 2> x, Tensor<f8e5m2, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64))
      acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(cast<f32>(load<256, 64>(w, n, k))), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// y = f16(x w^T), f16 activations, e4m3 weights.
PK_KERNEL void wo_e4m3_f16(Tensor<f16, 2> x, Tensor<f8e4m3, 2> w, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<f16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<f16>(acc), m, n);
  }
}

// y = f16(x w^T), f16 activations, e5m2 weights.
PK_KERNEL void wo_e5m2_f16(Tensor<f16, 2> x, Tensor<f8e5m2, 2> w, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<f16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<f16>(acc), m, n);
  }
}

// y = (x w^T) * s[n] in f32: per-channel scales, the spec's own 64 x 128 tiles.
PK_KERNEL void wo_e4m3_scaled_f32(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<f32, 2> s, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), cast<bf16>(load<128, 64>(w, n, k)), acc);
    store(y, acc * load<1, 128>(s, 0, n), m, n);
  }
}

// y = bf16((x w^T) * s[n, 0]): per-channel scales stored as a column [N, 1], read transposed as a row.
PK_KERNEL void wo_e4m3_colscale_bf16(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc * transpose(load<256, 1>(s, n, 0))), m, n);
  }
}

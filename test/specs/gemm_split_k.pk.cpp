// GEMMs of few rows against long K (decoding): the template splits each tile's K steps over
// several blocks at launch (templates/include/pk/templates/split_k.cuh) when the output has fewer
// tiles than the SMs. One kernel per form the split must keep exact: both layouts, 16-bit and f32
// outputs, an epilogue of row and column vectors, fp8 weights widened in the ring, i8 operands
// summed in i32, A stored [K, M], a batched product and a trailing one. test/gpu/gemm_split_k_jit_test.cu
// runs them against float64 and checks that a split result is the same bits on every run.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void sk_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

PK_KERNEL void sk_f16_kn(Tensor<f16, 2> x, Tensor<f16, 2> w, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma(load<128, 64>(x, m, k), load<64, 256>(w, k, n), acc);
    store(y, cast<f16>(acc), m, n);
  }
}

// y = (x w^T) * s[m] + bias[n], in f32.
PK_KERNEL void sk_scale_bias_f32(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<f32, 2> s, Tensor<f32, 1> bias,
                                 Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(y, acc * load<128, 1>(s, m, 0) + load<1, 256>(bias, n), m, n);
  }
}

PK_KERNEL void sk_wo_e4m3(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// The i32 sums s, stored as s - (s >> 3) (an integer epilogue on the summed pieces).
PK_KERNEL void sk_i8_s32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> d) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(d, acc - (acc >> 3), m, n);
  }
}

// A stored [K, M] (a weight gradient's dY^T X), B [K, N].
PK_KERNEL void sk_a_km(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.cols(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.rows(), 64)) acc = mma(transpose(load<64, 128>(a, k, m)), load<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

PK_KERNEL void sk_bmm(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc), z, m, n);
  }
}

// A low-rank product after the K loop (LoRA): y = x w^T + u l^T, its rank R = 64.
PK_KERNEL void sk_lora(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> u, Tensor<bf16, 2> l, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    acc = mma_t(load<128, 64>(u, m, 0), load<256, 64>(l, n, 0), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

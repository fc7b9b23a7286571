// Inputs of weight-only-gemm.test: a form of a weight-only GEMM the template's widening does not take, and one
// it takes through a chain of casts.
#include <pk/spec.h>
using namespace pk;

// B stored [K, N] (mma): the widening reads the [N, K] form only.
PK_KERNEL void wo_kn(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma(load<128, 64>(x, m, k), cast<bf16>(load<64, 256>(w, k, n)), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// The weights cast through f16 to bf16 (exact: both hold every fp8 value): widened as one cast.
PK_KERNEL void wo_through_f16(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64))
      acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(cast<f16>(load<256, 64>(w, n, k))), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

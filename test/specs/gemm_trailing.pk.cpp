// GEMMs with a second product after the K loop added into the same accumulator (LoRA's u lb^T beside
// x w^T): pkc streams it through the GEMM template's ring as further K steps. Tested by
// test/gpu/gemm_forms_jit_test.cu; routes by test/Compile/user_specs24.test (LoRA) and weight-only-gemm.test.
#include <pk/spec.h>
using namespace pk;

// y = f16(x w^T + u lb^T) * s[n] (f16 operands, B stored [N, K], a scale row in the epilogue).
PK_KERNEL void trail_f16_scaled(Tensor<f16, 2> x, Tensor<f16, 2> w, Tensor<f16, 2> u, Tensor<f16, 2> lb,
                                Tensor<f32, 2> s, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    acc = mma_t(load<128, 32>(u, m, 0), load<256, 32>(lb, n, 0), acc);
    store(y, cast<f16>(acc * load<1, 256>(s, 0, n)), m, n);
  }
}

// y = bf16(x w + u lb) with B stored [K, N] (mma) for both products, rank 96 (two K steps of the ring).
PK_KERNEL void trail_kn_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> u, Tensor<bf16, 2> lb,
                             Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma(load<128, 64>(x, m, k), load<64, 256>(w, k, n), acc);
    acc = mma(load<128, 96>(u, m, 0), load<96, 256>(lb, 0, n), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// fp8 tensors and tiles (e4m3, e5m2) on the general tile path: casts both ways, and the
// quantisation of a bf16 tensor with one scale per row and block of 128 columns, then back.
#include <pk/spec.h>
using namespace pk;

// q = e4m3(x), r = e5m2(x), y = f32(q) - f32(r): every conversion rounds to nearest even and
// saturates; 16 x 128 tiles, so a row of 8 fp8 elements is an 8-byte run.
PK_KERNEL void fp8_round_trip(Tensor<f32, 2> x, Tensor<f8e4m3, 2> q, Tensor<f8e5m2, 2> r, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = load<16, 128>(x, m, n);
    auto a = cast<f8e4m3>(t);
    auto b = cast<f8e5m2>(t);
    store(q, a, m, n);
    store(r, b, m, n);
    store(y, cast<f32>(a) - cast<f32>(b), m, n);
  }
}

// Per-block quantisation: each row's 128 columns share the scale amax / 448, stored in s.
PK_KERNEL void fp8_quantise(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = cast<f32>(load<16, 128>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-30f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(s, amax * 0.002232142857f, m, n / 128);
  }
}

// y = q * s, the scale broadcast over its block's columns.
PK_KERNEL void fp8_dequantise(Tensor<f8e4m3, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 128}))
    store(y, cast<bf16>(cast<f32>(load<16, 128>(q, m, n)) * load<16, 1>(s, m, n / 128)), m, n);
}

// fp8 operands of mma and mma_t (e4m3 times e5m2, f32 accumulation), on the general path.
PK_KERNEL void fp8_mma(Tensor<f8e4m3, 2> a, Tensor<f8e5m2, 2> b, Tensor<f8e5m2, 2> bt, Tensor<f32, 2> c,
                       Tensor<f32, 2> ct) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {32, 32})) {
    auto acc = zeros<f32, 32, 32>();
    auto acct = zeros<f32, 32, 32>();
    for (auto k : range(0, a.cols(), 32)) {
      auto x = load<32, 32>(a, m, k);
      acc = mma(x, load<32, 32>(b, k, n), acc);
      acct = mma_t(x, load<32, 32>(bt, n, k), acct);
    }
    store(c, acc, m, n);
    store(ct, acct, m, n);
  }
}

// Reproducers of test/specs/specs29_findings.md (set 29: W8A8 GEMMs and integer register tiles). Each kernel is
// valid; the findings are in what pkc emits for it (test/Compile/user_specs29.test checks the emitted lines).
#include <pk/spec.h>
using namespace pk;

// Finding 1. An i32 output computed in floats and cast back: c[m, n] = i32(f32(acc) * 0.5) (toward zero). On the
// template the final cast<i32> is dropped and the f32 value's bits are stored as the integer.
PK_KERNEL void p1_i32_from_float(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, cast<i32>(cast<f32>(acc) * 0.5f), m, n);
  }
}

// Finding 1, the requantisation a user writes: c[m, n] = i32(round(f32(acc) * s[m, 0])).
PK_KERNEL void p1_i32_requant_round(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> s, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, cast<i32>(round(cast<f32>(acc) * load<128, 1>(s, m, 0))), m, n);
  }
}

// Finding 1's workaround: an integer step after the cast keeps it (c = i32(f32(acc) * 0.5) + 0).
PK_KERNEL void p1_i32_from_float_plus0(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, cast<i32>(cast<f32>(acc) * 0.5f) + 0, m, n);
  }
}

// Finding 2. y[m, n] = f32(bf16(acc)) * 2: bf16(acc) rounds the integer once (the general path: to_float_odd);
// the template's epilogue rounds it to f32 first, then to bf16 (acc = 2^25 + 2^17 + 1 gives 2^25, not 2^25 + 2^18).
PK_KERNEL void p2_bf16_of_sums(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(y, cast<f32>(cast<bf16>(acc)) * 2.0f, m, n);
  }
}

// Finding 3. y[m, n] = bf16(acc) stored directly: the general path ("the stored tile must be computed from the
// f32 accumulator"), where cast<bf16>(cast<f32>(acc)) takes the template.
PK_KERNEL void p3_bf16_store_of_sums(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// Finding 4. The int8 route's --explain line: it starts by describing the bf16 route (wgmma m64n256k16, fp32
// accumulators) before the int8 clause.
PK_KERNEL void p4_explain_int8(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

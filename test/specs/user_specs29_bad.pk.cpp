// Mistakes a user of W8A8 GEMMs and integer tiles could plausibly make (test/Compile/user_specs29.test checks each
// is refused at its line with a message that names the fix). Kernels that Clang itself refuses sit behind
// PK_CXX_<ID> so that the others compile; each pkc refusal is checked with --kernel.
#include <pk/spec.h>
using namespace pk;

// b1: i8 activations times bf16 weights into an i32 accumulator (the weight must be i8, or x cast to bf16 with an
// f32 accumulator).
PK_KERNEL void b1_i8_times_bf16(Tensor<i8, 2> x, Tensor<bf16, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// b2: i8 operands into an f32 accumulator.
PK_KERNEL void b2_i8_into_f32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// b3: bf16 operands into an i32 accumulator.
PK_KERNEL void b3_bf16_into_i32(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// b4: i32 operands (the sums of another GEMM) multiplied again.
PK_KERNEL void b4_i32_operands(Tensor<i32, 2> x, Tensor<i32, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// b5: the i32 sums stored into an f32 tensor without a cast.
PK_KERNEL void b5_i32_into_f32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// b6: the i32 sums stored into an i8 tensor without a cast.
PK_KERNEL void b6_i32_into_i8(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i8, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// b7: fp8 activations times i8 weights.
PK_KERNEL void b7_fp8_times_i8(Tensor<f8e4m3, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// b8: an accumulator of the wrong shape (64 x 128 for 64 x 64 tiles).
PK_KERNEL void b8_acc_shape(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<i32, 64, 128>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

#ifdef PK_CXX_B9
// b9: a row sum of the i32 sums (an integer reduction: reduce cast<f32>(acc)).
PK_KERNEL void b9_row_sum_i32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(c, row_sum(acc), m, 0);
  }
}
#endif

// b10: an i8 tile shifted by a run-time index (narrowed to 8 bits first).
PK_KERNEL void b10_i8_shift_by_index(Tensor<i8, 2> x, Tensor<i8, 2> y, index s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n) >> s, m, n);
}

// b11: an i8 constant that does not fit (200).
PK_KERNEL void b11_i8_wide_constant(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n) & 200, m, n);
}

#ifdef PK_CXX_B12
// b12: an i64 accumulator.
PK_KERNEL void b12_i64_acc(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i64, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<i64, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(c, acc, m, n);
  }
}
#endif

#ifdef PK_CXX_B13
// b13: the i32 sums times a per-row f32 scale without cast<f32>(acc).
PK_KERNEL void b13_acc_times_scale(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> s, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(y, acc * load<128, 1>(s, m, 0), m, n);
  }
}
#endif

#ifdef PK_CXX_B14
// b14: the i32 sums plus a float argument.
PK_KERNEL void b14_acc_plus_float(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> y, float bias) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(y, cast<f32>(acc + bias), m, n);
  }
}
#endif

#ifdef PK_CXX_B15
// b15: an i8 accumulator.
PK_KERNEL void b15_i8_acc(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i8, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<i8, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(c, acc, m, n);
  }
}
#endif

#ifdef PK_CXX_B16
// b16: an i8 residual added to the i32 sums without widening it.
PK_KERNEL void b16_i8_plus_i32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i8, 2> r, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, acc + load<128, 256>(r, m, n), m, n);
  }
}
#endif

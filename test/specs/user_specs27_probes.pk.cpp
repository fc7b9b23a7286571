// The twenty-seventh user set, part (c): reproducers of the findings in test/specs/specs27_findings.md.
// The kernels outside #ifdef compile (what they compute is the finding); refusals sit behind -D PK_PROBE_<ID>.
#include <pk/spec.h>
using namespace pk;

// P1 (finding 1): keep the int8 values below a threshold given as an index argument:
// y = q < thr ? q : 0, meant for any thr (thr = 200 keeps every value). The index was narrowed to i8 first
// (200 -> -56), so only q < -56 were kept; now refused at the index, as a constant 200 there is.
#ifdef PK_PROBE_P1
PK_KERNEL void p1_i8_below_index_threshold(Tensor<i8, 2> q, Tensor<i8, 2> y, index thr) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) {
    auto t = load<16, 64>(q, m, n);
    store(y, where(t < thr, t, 0), m, n);
  }
}
#endif

// P2 (finding 1): an arithmetic shift by a run-time count: y = q >> s (s = 259: the sign fill, as for any count
// past 7). The count was narrowed to i8 first (259 -> 3), so y was q >> 3; now refused at the count.
#ifdef PK_PROBE_P2
PK_KERNEL void p2_i8_shift_by_index(Tensor<i8, 2> q, Tensor<i8, 2> y, index s) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) store(y, load<16, 64>(q, m, n) >> s, m, n);
}
#endif

// P3 (finding 2): running sums of int8 lengths: cumsum of an i8 tile was accepted and wrapped at 8 bits (lengths
// 100, 100 gave offsets 100, -56), while row_sum, store_add and the collectives refuse i8 with cast<i32>(t). Now
// refused by pk/spec.h's static assertion (a Clang error, so behind -D PK_PROBE_P3).
#ifdef PK_PROBE_P3
PK_KERNEL void p3_i8_cumsum_wraps(Tensor<i8, 1> len, Tensor<i8, 1> off) {
  for (auto z : tiles(1, {1})) store(off, cumsum(load<1024>(len, 0)), 0);
}
#endif

// P4 (finding 4): t - 128 is refused ("128 does not fit ... it would wrap") while t + -128, the same wrapping
// value, is accepted.
PK_KERNEL void p4_i8_plus_minus128(Tensor<i8, 2> q, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) store(y, load<16, 64>(q, m, n) + -128, m, n);
}
#ifdef PK_PROBE_P4
PK_KERNEL void p4b_i8_minus_128(Tensor<i8, 2> q, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) store(y, load<16, 64>(q, m, n) - 128, m, n);
}
#endif

// P5 (finding 5, slow route): a GEMM whose epilogue masks by an int8 mask tensor takes the general path
// ("integer tiles in an epilogue must be i32"); the same mask stored as i32 takes the template.
PK_KERNEL void p5_gemm_i8_mask_epilogue(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<i8, 2> mk, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(where(load<128, 256>(mk, m, n) != 0, acc, 0.0f)), m, n);
  }
}
PK_KERNEL void p5b_gemm_i32_mask_epilogue(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<i32, 2> mk, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(where(load<128, 256>(mk, m, n) != 0, acc, 0.0f)), m, n);
  }
}

// P6 (finding 5, slow route): a per-tensor scale stored as one i8 exponent, read as a scalar in the epilogue:
// y = bf16((x w^T) * float(e[0])) takes the general path ("an epilogue load must be bf16, f16, f32 or i32").
PK_KERNEL void p6_gemm_i8_scalar_epilogue(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<i8, 1> e, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc * float(e.at(0))), m, n);
  }
}

// P7 (beside finding 5): i8 arithmetic in a GEMM epilogue (mk + mk wraps at 8 bits) keeps the general path, where
// it wraps as the language says: y = acc * float(wrap8(mk + mk)).
PK_KERNEL void p7_gemm_i8_sum_epilogue(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<i8, 2> mk, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    auto t = load<128, 256>(mk, m, n);
    store(y, cast<bf16>(acc * cast<f32>(t + t)), m, n);
  }
}

// Reproducers of test/specs/specs28_findings.md (the twenty-eighth user set: GEMM epilogues). Each kernel compiles
// (no error, no warning); the finding is in its emitted CUDA or its --explain route.
#include <pk/spec.h>
using namespace pk;

// Finding 1: a row picked by a 64-bit integer argument. The spec reads tbl[sel, n] (0 outside tbl). The template's
// epilogue bounds the coordinate by (unsigned)e.i0 < (unsigned)e.t2_rows: sel = 2^32 + 1 passes as row 1 and the
// load reads tbl + (2^32 + 1) * cols, far past the tensor (the general path reads 0).
PK_KERNEL void p1_row_at_wide_index(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> tbl, Tensor<bf16, 2> y,
                                    index sel) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc * load<1, 256>(tbl, sel, n)), m, n);
  }
}

// Finding 2: two i8 masks joined by && (the product of two 0 / 1 values) send the GEMM to the general path
// ("integer tiles in an epilogue must be i32"), while the same masks joined by || (their maximum) take the template.
PK_KERNEL void p2_i8_masks_and(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i8, 2> k8, Tensor<i8, 2> r8,
                               Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(where((load<128, 256>(k8, m, n) > 0) && (load<128, 1>(r8, m, 0) > 0), acc, 0.0f)), m, n);
  }
}
PK_KERNEL void p2_i8_masks_or(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i8, 2> k8, Tensor<i8, 2> r8,
                              Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(where((load<128, 256>(k8, m, n) > 0) || (load<128, 1>(r8, m, 0) > 0), acc, 0.0f)), m, n);
  }
}

// Finding 3: bit operations on i32 tiles (a hand-written hash of row * 31 + col, >>, ^) send the GEMM to the general
// path, and the message offers "a hash", which no spec can write (uniform's steps).
PK_KERNEL void p3_i32_bits(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto h = cast<i32>(row_index<128, 256>(m)) * 31 + cast<i32>(col_index<128, 256>(n));
    store(y, cast<bf16>(where(((h ^ (h >> 3)) % 2) == 0, acc, 0.0f)), m, n);
  }
}

// Finding 4: an i64 index tile (cast<i64>(row_index)) in an epilogue takes the general path with a message about
// i8 tiles ("an i8 tile may be loaded, compared, selected, min / max-ed and cast"), which does not say what to do
// with an i64 one (cast<i32>).
PK_KERNEL void p4_i64_rows(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc + cast<f32>(cast<i64>(row_index<128, 256>(m)) * 3)), m, n);
  }
}

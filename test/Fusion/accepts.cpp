// RUN: pkc %s --emit=device-mlir | FileCheck %s
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Tests that the fusions whose data flow the templates implement still lower to them, and that
// --explain reports only decisions that reach the output.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @gemm_ar_scratch
// CHECK-SAME: %{{.*}}: !pk.sym<?x?xbf16> {pk.scratch}
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 1 : i64, b_layout = "nk", c = 3 : i64, fallback = "gemm_ar_scratch__general", job = "gemm_ar"}
// CHECK-NOT: pk.effect
// CHECK: pk.return
// EXPLAIN-LABEL: decisions for kernel 'gemm_ar_scratch'
// EXPLAIN-NOT: rule 1 (
// EXPLAIN: pk.coll.all_reduce at {{.*}}accepts.cpp:{{.*}}: intra_sm, fused with the GEMM
// EXPLAIN-NOT: rule 1 (
// EXPLAIN: template: pk.tile.foreach
PK_KERNEL void gemm_ar_scratch(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}

// A plain GEMM into a symmetric tensor stays a GEMM and its store is performed.
// CHECK-LABEL: pk.kernel @gemm_into_sym
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 1 : i64, b_layout = "nk", c = 2 : i64, fallback = "gemm_into_sym__general", in = "bf16", job = "gemm", out = "bf16"}
PK_KERNEL void gemm_into_sym(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> p) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
}

// CHECK-LABEL: pk.kernel @ag_gemm_scratch
// CHECK-SAME: pk.gemm = {a = 0 : i64, b = 2 : i64, b_layout = "nk", c = 3 : i64, fallback = "ag_gemm_scratch__general", job = "ag_gemm", landing = 1 : i64}
// EXPLAIN-LABEL: decisions for kernel 'ag_gemm_scratch'
// EXPLAIN-NOT: rule 1 (
// EXPLAIN: pk.coll.all_gather at {{.*}}: inter_sm, fused with the GEMM
PK_KERNEL void ag_gemm_scratch(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a_full.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a_full.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a_full, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// A reduce-scatter written as adds into the owners of a.rows() / world_size() rows.
// CHECK-LABEL: pk.kernel @gemm_rs_rows
// CHECK-SAME: job = "gemm_rs"
PK_KERNEL void gemm_rs_rows(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  index rows = a.rows() / world_size();
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(m / rows), cast<bf16>(acc), m % rows, n);
  }
}

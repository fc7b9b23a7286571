// RUN: pkc %s --emit=device-mlir --explain -o /dev/null 2>&1 | FileCheck %s
// Tests that specs a fused GEMM template cannot implement as written compile to what they say,
// not to a different kernel: the GEMM and the collective as separate launches (pk-split-launches),
// or the loop on the general tile path, with the reason the fused template refused them.
#include <pk/spec.h>
using namespace pk;

#define GEMM_LOOP(A, B, OUT)                                                           \
  for (auto [m, n] : tiles(A.rows(), B.rows(), {128, 256})) {                          \
    auto acc = zeros<f32, 128, 256>();                                                 \
    for (auto k : range(0, A.cols(), 64))                                              \
      acc = mma_t(load_smem<128, 64>(A, m, k), load_smem<256, 64>(B, n, k), acc);      \
    store(OUT, cast<bf16>(acc), m, n);                                                 \
  }

// A reduce-scatter of a product the caller may read (a Sym, not a Scratch): gemm_rs never writes it.
// CHECK-LABEL: decisions for kernel 'gemm_then_rs':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: GEMM + reduce-scatter: the fused template never writes the product that feeds the reduce-scatter
PK_KERNEL void gemm_then_rs(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_LOOP(a, b, p)
  reduce_scatter(Sum, p, c);
}

// Along dimension 1 the hint to add tiles into row owners would be another operation.
// CHECK-LABEL: decisions for kernel 'gemm_then_rs_cols':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}the fused reduce-scatter (gemm_rs) scatters whole rows to their owners; this one scatters along dimension 1
PK_KERNEL void gemm_then_rs_cols(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_LOOP(a, b, p)
  reduce_scatter(Sum, p, c, 1);
}

// An f32 product beside a collective takes the plain GEMM template in a launch of its own.
// CHECK-LABEL: decisions for kernel 'gemm_f32_then_rs_cols':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}(the GEMM template){{.*}}the fused templates store a bf16 product; this GEMM stores f32
// CHECK: decisions for kernel 'gemm_f32_then_rs_cols_launch0':
// CHECK: template: {{.*}}gemm: persistent LCSC kernel{{.*}}f32 output
PK_KERNEL void gemm_f32_then_rs_cols(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<f32, 2> p, Sym<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(p, acc, m, n);
  }
  reduce_scatter(Sum, p, c, 1);
}

// A max all-reduce cannot ride on the template's reduce-add.
// CHECK-LABEL: decisions for kernel 'gemm_then_ar_max':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: GEMM + all-reduce: the fused template reduce-adds every tile into the ranks' outputs,
PK_KERNEL void gemm_then_ar_max(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_LOOP(a, b, p)
  all_reduce(Max, p, c);
}

// The caller may read `p`, so the fused template (which never writes it) is refused.
// CHECK-LABEL: decisions for kernel 'gemm_then_ar_kept':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: GEMM + all-reduce: the fused template never writes the product
PK_KERNEL void gemm_then_ar_kept(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_LOOP(a, b, p)
  all_reduce(Sum, p, c);
}

// An all-reduce of a tensor the loop does not write is a separate collective.
// CHECK-LABEL: decisions for kernel 'gemm_then_ar_other':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: 'pk.coll.all_reduce' cannot be part of a kernel whose GEMM loop becomes the gemm template
PK_KERNEL void gemm_then_ar_other(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> q, Sym<bf16, 2> c) {
  GEMM_LOOP(a, b, p)
  all_reduce(Sum, q, c);
}

// An all-gather whose output the GEMM does not read.
// CHECK-LABEL: decisions for kernel 'ag_unused':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: 'pk.coll.all_gather' cannot be part of a kernel whose GEMM loop becomes the gemm template
PK_KERNEL void ag_unused(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  GEMM_LOOP(a, b, c)
}

// An all-gather into the B operand: the template gathers only A.
// CHECK-LABEL: decisions for kernel 'ag_wrong_operand':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: 'pk.coll.all_gather' cannot be part of a kernel whose GEMM loop becomes the gemm template
PK_KERNEL void ag_wrong_operand(Tensor<bf16, 2> a, Sym<bf16, 2> b, Scratch<bf16, 2> b_full, Tensor<bf16, 2> c) {
  all_gather(b, b_full);
  GEMM_LOOP(a, b_full, c)
}

// An all-gather after the loop that reads its output: the loop would read stale rows.
// CHECK-LABEL: decisions for kernel 'ag_after':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: 'pk.coll.all_gather' cannot be part of a kernel whose GEMM loop becomes the gemm template
PK_KERNEL void ag_after(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  GEMM_LOOP(a_full, b, c)
  all_gather(a, a_full);
}

// The gathered rows are a plain argument: the template would leave this rank's rows unwritten.
// CHECK-LABEL: decisions for kernel 'ag_kept':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: AG + GEMM: the fused template leaves this rank's own rows of the all-gather's output
PK_KERNEL void ag_kept(Sym<bf16, 2> a, Sym<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  GEMM_LOOP(a_full, b, c)
}

// A reduce-scatter along other rows than a.rows() / world_size().
// CHECK-LABEL: decisions for kernel 'rs_wrong_rows':
// CHECK: general tile path (register tiles, pk/tile/mma.cuh): the loop does not take a fused GEMM template: GEMM + reduce-scatter: each rank must own a.rows() / world_size() rows
PK_KERNEL void rs_wrong_rows(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(m / 256), cast<bf16>(acc), m % 256, n);
  }
}

// A cast to f16 before the collective: the fused templates' output is bf16.
// CHECK-LABEL: decisions for kernel 'cast_f16':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: GEMM with fused communication: the fused templates take bf16 A[m, k] times B[n, k] (mma_t) or B[k, n] (mma), any tile shape,
PK_KERNEL void cast_f16(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<f16, 2> p, Sym<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<f16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}

// A second consumer of the scratch product: the template never writes it, so neither the whole kernel nor the
// GEMM with its all-reduce alone takes gemm_ar (the all-gather would read an unwritten product).
// CHECK-LABEL: decisions for kernel 'second_consumer':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}second_consumer_launch0 = the tile loop at {{.*}} (the GEMM template); second_consumer_launch1 = the phases at {{.*}}no fused GEMM template takes the whole kernel: 'pk.coll.all_gather' cannot be part of a kernel whose GEMM loop becomes the gemm_ar
PK_KERNEL void second_consumer(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c, Sym<bf16, 2> q) {
  GEMM_LOOP(a, b, p)
  all_reduce(Sum, p, c);
  all_gather(p, q);
}

// An unrelated collective beside a GEMM.
// CHECK-LABEL: decisions for kernel 'gemm_and_ar':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}no fused GEMM template takes the whole kernel: 'pk.coll.all_reduce' cannot be part of a kernel whose GEMM loop becomes the gemm template
PK_KERNEL void gemm_and_ar(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, Sym<f32, 1> x, Sym<f32, 1> y) {
  all_reduce(Sum, x, y);
  GEMM_LOOP(a, b, c)
}

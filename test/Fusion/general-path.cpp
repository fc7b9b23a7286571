// RUN: pkc %s --emit=device-mlir | FileCheck %s
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Tests that GEMM-like loops of kernels that only compute locally, which the Hopper template
// does not implement as written, keep their loops for the general tile path (which computes
// exactly what they say) instead of being refused or reshaped into the template.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @half_rows
// CHECK-NOT: pk.gemm
// CHECK: pk.tile.foreach
// EXPLAIN-LABEL: decisions for kernel 'half_rows'
// EXPLAIN: general tile path {{.*}}GEMM tile loop: must cover the rows of A and the rows of B
PK_KERNEL void half_rows(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows() / 2, b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// CHECK-LABEL: pk.kernel @half_k
// CHECK: scf.for
// EXPLAIN-LABEL: decisions for kernel 'half_k'
// EXPLAIN: general tile path {{.*}}GEMM K loop: must run to the columns of A
PK_KERNEL void half_k(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index k_end) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, k_end, 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// Two stores in the loop: both are performed.
// CHECK-LABEL: pk.kernel @extra_store
// CHECK-COUNT-2: pk.tile.store
// EXPLAIN-LABEL: decisions for kernel 'extra_store'
// EXPLAIN: general tile path {{.*}}GEMM: the tile loop must store one tile
PK_KERNEL void extra_store(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, Tensor<bf16, 2> d) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
    store(d, load<128, 256>(a, m, n), m, n);
  }
}

// An epilogue that is not element-wise (a row reduction of the accumulator) keeps the general
// path, and --explain names the op.
// CHECK-LABEL: pk.kernel @row_reduced_epilogue
// CHECK: pk.tile.reduce_rows
// EXPLAIN-LABEL: decisions for kernel 'row_reduced_epilogue'
// EXPLAIN: general tile path {{.*}}GEMM epilogue: 'pk.tile.reduce_rows': not an element-wise epilogue operation
PK_KERNEL void row_reduced_epilogue(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc - row_max(acc)), m, n);
  }
}

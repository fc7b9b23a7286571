// pk-fold-products: products written in equivalent forms become the one the templates take
// (set 36, findings 3, 5 and 6): mma of a transposed B as mma_t, acc + mma(a, b, 0) as
// mma(a, b, acc), and an accumulator started at zeros + a bias row started at zeros, the row
// added after the K loop. Each loop then takes the GEMM template.
// RUN: rm -rf %t && mkdir -p %t
// RUN: pkc %s --emit=mlir -o %t/spec.mlir
// RUN: pkc-opt %t/spec.mlir --pk-fold-products | FileCheck %s
// RUN: pkc %s --explain -o %t/out.cu 2>&1 | FileCheck %s --check-prefix=ROUTE
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @transposed_b
// CHECK-NOT: pk.tile.transpose
// CHECK: pk.tile.mma %{{.*}}, %{{.*}}, %{{.*}} {transpose_b} : !pk.tile<128x64xbf16>, !pk.tile<128x64xbf16>, !pk.tile<128x128xf32>
// ROUTE: template: pk.tile.foreach at {{.*}}fold-products.cpp:[[@LINE+2]]:3: gemm: persistent LCSC kernel
PK_KERNEL void transposed_b(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), transpose(load<128, 64>(b, n, k)), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// CHECK-LABEL: pk.kernel @added_product
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK-NOT: pk.tile.map <add>
// CHECK: %[[P:.*]] = pk.tile.mma %{{.*}}, %{{.*}}, %[[ACC]] {transpose_b}
// CHECK-NEXT: scf.yield %[[P]]
// ROUTE: template: pk.tile.foreach at {{.*}}fold-products.cpp:[[@LINE+2]]:3: gemm: persistent LCSC kernel
PK_KERNEL void added_product(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = acc + mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), zeros<f32, 128, 256>());
    store(c, cast<bf16>(acc), m, n);
  }
}

// CHECK-LABEL: pk.kernel @started_bias
// CHECK: %[[ROW:.*]] = pk.tile.load {{.*}} -> !pk.tile<1x256xf32>
// CHECK: %[[Z:.*]] = pk.tile.zeros : !pk.tile<128x256xf32>
// CHECK: %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[Z]])
// CHECK: pk.tile.map <add> %[[SUM]], %[[ROW]] : !pk.tile<128x256xf32>, !pk.tile<1x256xf32> -> !pk.tile<128x256xf32>
// ROUTE: template: pk.tile.foreach at {{.*}}fold-products.cpp:[[@LINE+2]]:3: gemm: persistent LCSC kernel
PK_KERNEL void started_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>() + load<1, 256>(bias, 0, n);
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// An accumulator read inside the loop besides its product (a running check) stays as written.
// CHECK-LABEL: pk.kernel @read_inside
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[INIT:.*]])
// CHECK-NOT: pk.tile.zeros
// CHECK: pk.tile.store
PK_KERNEL void read_inside(Tensor<f32, 2> c0, Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = load<64, 64>(c0, m, n);
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), max(acc, 0.0f));
    store(c, acc, m, n);
  }
}

// The running sum stored inside the loop as well (each trip's partial sum): started from c0 it
// stays as written, or the stored partial sums would lack c0.
// CHECK-LABEL: pk.kernel @partial_sums
// CHECK: %[[C0:.*]] = pk.tile.load %arg0{{.*}} -> !pk.tile<64x64xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[C0]])
// CHECK-NOT: pk.tile.zeros
// CHECK: pk.tile.store
PK_KERNEL void partial_sums(Tensor<f32, 2> c0, Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 3> parts) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = load<64, 64>(c0, m, n);
    for (auto k : range(0, a.cols(), 64)) {
      acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
      store(parts, reshape<1, 64, 64>(acc), k / 64, m, n);
    }
  }
}


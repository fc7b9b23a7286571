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


// Scores masked before a constant scale: where(mask, qk, -1e30) * 0.125 is where(mask, qk * 0.125,
// -1.25e29), the attention template's form (set 36, k44); a scale argument is not folded and says
// how to write it.
// CHECK-LABEL: pk.kernel @mask_then_scale
// CHECK: %[[QK:.*]] = pk.tile.mma
// CHECK: %[[S:.*]] = pk.tile.map <mul> %[[QK]], %{{.*}} : !pk.tile<64x64xf32>
// CHECK: %[[FILL:.*]] = pk.tile.splat %{{.*}} : f32 -> !pk.tile<64x64xf32>
// CHECK: pk.tile.select %{{.*}}, %[[S]], %[[FILL]]
// ROUTE-LABEL: decisions for kernel 'mask_then_scale'
// ROUTE: template: pk.tile.foreach at {{.*}}fold-products.cpp:[[@LINE+2]]:3: attention: the loop is an online-softmax attention, head dim 64;
PK_KERNEL void mask_then_scale(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = where(col_index<64, 64>(n) < k.rows(), mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()), -1e30f) * 0.125f;
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}
// ROUTE-LABEL: decisions for kernel 'mask_then_scale_arg'
// ROUTE: not the attention template: the scores are masked before they are scaled by a value pkc cannot fold (a constant scale is folded): row_max must read where(mask, scores, -huge); write where(mask, s * scale, -huge)
PK_KERNEL void mask_then_scale_arg(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = where(col_index<64, 64>(n) < k.rows(), mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()), -1e30f) * scale;
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

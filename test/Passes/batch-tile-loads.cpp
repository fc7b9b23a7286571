// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pkc %s --tile-batch=1 -o - | FileCheck %s --check-prefix=OFF
// RUN: pkc %s --tile-batch=3 --kernel=copy -o - | FileCheck %s --check-prefix=THREE
// RUN: not pkc %s --tile-batch=9 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// Tests that general-path tile loops issue the loads of several tiles before computing any
// (pk-batch-tile-loads), and which loops and loads may not.
#include <pk/spec.h>
using namespace pk;

// No block waits on another, so blocks have 1024 threads; a bf16 8 x 1024 tile is then 8
// registers per thread, and four tiles fit the budget of 64. The loads of all four come first
// (the last ones clamped to the loop's last tile), then each tile's stores behind a guard.
// CHECK: constexpr int kThreads = 1024;
// CHECK-LABEL: void __launch_bounds__(1024) copy(
// CHECK: for (long long [[T:pk_tile[0-9]+]] = blockIdx.x; [[T]] < [[TOTAL:.*]]; [[T]] += 4LL * gridDim.x) {
// CHECK: min([[T]] + 0LL * gridDim.x, [[TOTAL]] - 1);
// CHECK: pk::tile::load([[A:tile[0-9]+]], arg0.data
// CHECK: min([[T]] + 3LL * gridDim.x, [[TOTAL]] - 1);
// CHECK: pk::tile::load([[D:tile[0-9]+]], arg0.data
// CHECK-NOT: pk::tile::load
// CHECK: if ([[T]] + 0LL * gridDim.x < [[TOTAL]]) {
// CHECK-NEXT: pk::tile::store([[A]], arg1.data
// CHECK: if ([[T]] + 3LL * gridDim.x < [[TOTAL]]) {
// CHECK-NEXT: pk::tile::store([[D]], arg1.data
// EXPLAIN: general path: pk.kernel at {{.*}}batch-tile-loads.cpp:[[@LINE+4]]:16: 1024 threads per block: no block waits on another
// EXPLAIN: general path: pk.tile.foreach at {{.*}}batch-tile-loads.cpp:[[@LINE+4]]:3: each block takes 4 tiles at a time and issues their 1 load(s) each before computing any (64 KiB in flight per block of 1024 threads instead of 16){{.*}}fit 32 registers per thread
// OFF-LABEL: copy(
// OFF: [[T:pk_tile[0-9]+]] += gridDim.x) {
PK_KERNEL void copy(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024})) store(y, load<8, 1024>(x, m, n), m, n);
}
// THREE: += 3LL * gridDim.x) {

// The load of y follows a store into y in the same tile, so it stays where it is (it must see
// that store); only the load of x moves ahead, four tiles of it.
// CHECK-LABEL: reload(
// CHECK: += 4LL * gridDim.x) {
// CHECK-COUNT-4: pk::tile::load({{tile[0-9]+}}, arg0.data
// CHECK-NOT: pk::tile::load
// CHECK: if (
// CHECK: pk::tile::store({{tile[0-9]+}}, arg1.data
// CHECK-NEXT: pk::tile::rt
// CHECK-NEXT: pk::tile::load({{tile[0-9]+}}, arg1.data
// CHECK: pk::tile::store({{tile[0-9]+}}, arg2.data
PK_KERNEL void reload(Tensor<bf16, 2> x, Tensor<bf16, 2> y, Tensor<bf16, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024})) {
    store(y, load<8, 1024>(x, m, n), m, n);
    store(z, load<8, 1024>(y, m, n), m, n);
  }
}

// Two loads of 8 registers each (bf16 8 x 1024 over 1024 threads): two tiles per batch fit the
// 1024-thread budget of 32.
// CHECK-LABEL: add(
// CHECK: += 2LL * gridDim.x) {
// CHECK-COUNT-4: pk::tile::load(
// CHECK: if (
PK_KERNEL void add(Tensor<bf16, 2> x, Tensor<bf16, 2> y, Tensor<bf16, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024})) store(z, load<8, 1024>(x, m, n) + load<8, 1024>(y, m, n), m, n);
}

// Three loads of 16 registers each leave no room for a second tile: not batched.
// CHECK-LABEL: three_loads(
// CHECK: += gridDim.x) {
PK_KERNEL void three_loads(Tensor<bf16, 2> x, Tensor<bf16, 2> y, Tensor<bf16, 2> w, Tensor<bf16, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 1024}))
    store(z, load<16, 1024>(x, m, n) + load<16, 1024>(y, m, n) + load<16, 1024>(w, m, n), m, n);
}

// A loop with a nested K loop (mma) keeps its order: not batched.
// CHECK-LABEL: small_gemm(
// CHECK: += gridDim.x) {
PK_KERNEL void small_gemm(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(c, acc, m, n);
  }
}
// BAD: --tile-batch must be 0 (chosen by pkc) or a tile count from 1 to 8

// A kernel with a collective keeps 512-thread blocks (its blocks wait on flags).
// CHECK-LABEL: void __launch_bounds__(512) scale_then_sum(
PK_KERNEL void scale_then_sum(Tensor<f32, 1> x, Sym<f32, 1> y, Sym<f32, 1> z) {
  for (auto i : tiles(x.size(), {4096})) store(y, load<4096>(x, i) * 2.0f, i);
  all_reduce(Sum, y, z);
}

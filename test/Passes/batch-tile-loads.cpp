// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pkc %s --tile-batch=1 -o - | FileCheck %s --check-prefix=OFF
// RUN: pkc %s --tile-batch=3 --kernel=copy -o - | FileCheck %s --check-prefix=THREE
// RUN: not pkc %s --tile-batch=9 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// Tests pk-batch-tile-loads: 1024-thread blocks for kernels whose blocks never wait on each
// other, and loops with row reductions issuing the loads of several tiles before computing any;
// which loops and loads may not.
#include <pk/spec.h>
using namespace pk;

// No block waits on another, so blocks have 1024 threads. A bf16 1 x 8192 row is 8 registers
// per thread, and four rows fit the 1024-thread budget of 32: the loads of all four come first
// (the last ones clamped to the loop's last tile), then each row's reductions and stores behind
// a guard.
// CHECK: constexpr int kThreads = 1024;
// CHECK-LABEL: void __launch_bounds__(1024) softmax(
// CHECK: for (long long [[T:pk_tile[0-9]+]] = blockIdx.x; [[T]] < [[TOTAL:.*]]; [[T]] += 4LL * gridDim.x) {
// CHECK: min([[T]] + 0LL * gridDim.x, [[TOTAL]] - 1);
// CHECK: pk::tile::load([[A:tile[0-9]+]], arg0.data
// CHECK: min([[T]] + 3LL * gridDim.x, [[TOTAL]] - 1);
// CHECK: pk::tile::load([[D:tile[0-9]+]], arg0.data
// CHECK-NOT: pk::tile::load
// CHECK: if ([[T]] + 0LL * gridDim.x < [[TOTAL]]) {
// CHECK: pk::tile::cast({{tile[0-9]+}}, [[A]]);
// CHECK: if ([[T]] + 3LL * gridDim.x < [[TOTAL]]) {
// CHECK: pk::tile::cast({{tile[0-9]+}}, [[D]]);
// EXPLAIN: general path: pk.kernel at {{.*}}batch-tile-loads.cpp:[[@LINE+4]]:16: 1024 threads per block: no block waits on another
// EXPLAIN: general path: pk.tile.foreach at {{.*}}batch-tile-loads.cpp:[[@LINE+4]]:3: each block takes 4 tiles at a time and issues their 1 load(s) each before computing any (64 KiB in flight per block of 1024 threads instead of 16){{.*}}fit 32 registers per thread
// OFF-LABEL: softmax(
// OFF: [[T:pk_tile[0-9]+]] += gridDim.x) {
PK_KERNEL void softmax(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = cast<f32>(load<1, 8192>(x, m, n));
    auto e = exp(t - row_max(t));
    store(y, cast<bf16>(e / row_sum(e)), m, n);
  }
}

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
PK_KERNEL void reload(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = load<1, 8192>(x, m, n);
    store(y, t / row_sum(t), m, n);
    store(z, load<1, 8192>(y, m, n) * 2.0f, m, n);
  }
}

// Element-wise loops are not batched (their 32 warps per SM keep enough loads in flight);
// --tile-batch sets K for them too.
// CHECK-LABEL: void __launch_bounds__(1024) copy(
// CHECK: += gridDim.x) {
// THREE: += 3LL * gridDim.x) {
PK_KERNEL void copy(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024})) store(y, load<8, 1024>(x, m, n), m, n);
}

// Three rows of 16 registers each leave no room for a second tile: not batched.
// CHECK-LABEL: three_loads(
// CHECK: += gridDim.x) {
PK_KERNEL void three_loads(Tensor<f32, 2> x, Tensor<f32, 2> w, Tensor<f32, 2> b, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 8192})) {
    auto t = load<1, 8192>(x, m, n);
    store(z, t / row_sum(t) * load<1, 8192>(w, 0, n) + load<1, 8192>(b, 0, n), m, n);
  }
}

// A kernel with a collective keeps 512-thread blocks (its blocks wait on flags).
// CHECK-LABEL: void __launch_bounds__(512) scale_then_sum(
PK_KERNEL void scale_then_sum(Tensor<f32, 1> x, Sym<f32, 1> y, Sym<f32, 1> z) {
  for (auto i : tiles(x.size(), {4096})) store(y, load<4096>(x, i) * 2.0f, i);
  all_reduce(Sum, y, z);
}
// BAD: --tile-batch must be 0 (chosen by pkc) or a tile count from 1 to 8

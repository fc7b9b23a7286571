// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --emit=cubin -o %t.cubin
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHY
// WHY: general path: pk.tile.load at {{.*}}packed-tiles.cpp:{{[0-9]+}}:{{[0-9]+}}: this tile is only moved (its rows scattered by index), so it stays packed
// Tests which loaded tiles are held packed (pk/tile/packed.cuh): 16- and 8-bit float tiles whose
// every use scatters their rows (store_rows, not adding) into a tensor of their own type. A tile
// that is also computed on, added, or of f32 stays an rt (fp32 registers).
#include <pk/spec.h>
using namespace pk;

// CHECK: #include <pk/tile/packed.cuh>
// CHECK-LABEL: scatter(
// CHECK: pk::tile::pt<pk::bf16, 2, 16, 256, 1, 1, {{[0-9]+}}> [[T:tile[0-9]+]];  // held packed: only moved
// CHECK: pk::tile::load([[T]], arg0.data
// CHECK: pk::tile::store_rows<false>([[T]],
// CHECK: pk::tile::store_rows<false>([[T]],
PK_KERNEL void scatter(Tensor<bf16, 2> x, Tensor<i32, 1> ids, Tensor<bf16, 2> y, Tensor<bf16, 2> z) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto rows = load<16, 256>(x, t, n);
    auto slot = load<16>(ids, t);
    store_rows(y, rows, slot, n);
    store_rows(z, rows, slot + 1, n);
  }
}

// CHECK-LABEL: scatter_fp8(
// CHECK: pk::tile::pt<pk::f8e4m3, 2, 16, 128, 1, 1, {{[0-9]+}}> {{tile[0-9]+}};  // held packed: only moved
PK_KERNEL void scatter_fp8(Tensor<f8e4m3, 2> x, Tensor<i32, 1> ids, Tensor<f8e4m3, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 128})) store_rows(y, load<16, 128>(x, t, n), load<16>(ids, t), n);
}

// Also computed on: fp32.
// CHECK-LABEL: scatter_and_scale(
// CHECK-NOT: pk::tile::pt<
// CHECK: pk::tile::rt<pk::bf16, 2, 16, 256, 1, 1, {{[0-9]+}}> [[T:tile[0-9]+]];
// CHECK: pk::tile::store_rows<false>([[T]],
PK_KERNEL void scatter_and_scale(Tensor<bf16, 2> x, Tensor<i32, 1> ids, Tensor<bf16, 2> y, Tensor<bf16, 2> z) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto rows = load<16, 256>(x, t, n);
    store_rows(y, rows, load<16>(ids, t), n);
    store(z, rows * 2.0f, t, n);
  }
}

// Added into its rows: fp32 (red.global.add takes the values).
// CHECK-LABEL: scatter_add(
// CHECK-NOT: pk::tile::pt<
// CHECK: pk::tile::store_rows<true>(
PK_KERNEL void scatter_add(Tensor<bf16, 2> x, Tensor<i32, 1> ids, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 256})) store_add_rows(y, load<16, 256>(x, t, n), load<16>(ids, t), n);
}

// f32 tiles are already their registers.
// CHECK-LABEL: scatter_f32(
// CHECK-NOT: pk::tile::pt<
// CHECK: pk::tile::store_rows<false>(
PK_KERNEL void scatter_f32(Tensor<f32, 2> x, Tensor<i32, 1> ids, Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 256})) store_rows(y, load<16, 256>(x, t, n), load<16>(ids, t), n);
}

// RUN: pkc %s --emit=mlir | FileCheck %s
// Tests that an N x 1 column and a 1 x N row load from and store into a 1-D tensor, and a tile
// with a unit extent between others into a 2-D one: the unit extents are dropped by a reshape.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @col_sum
// CHECK: pk.tile.reshape %{{.*}} : !pk.tile<48x1xf32> -> !pk.tile<48xf32>
// CHECK: pk.tile.store
PK_KERNEL void col_sum(Tensor<f32, 2> x, Tensor<f32, 1> y) {
  for (auto n : tiles(x.cols(), {48})) {
    auto acc = zeros<f32, 48, 1>();
    for (auto m : range(0, x.rows(), 32)) acc = acc + row_sum(transpose(load<32, 48>(x, m, n)));
    store(y, acc, n);
  }
}

// CHECK-LABEL: pk.kernel @column_of_vector
// CHECK: pk.tile.load {{.*}} -> !pk.tile<64xf32>
// CHECK: pk.tile.reshape %{{.*}} : !pk.tile<64xf32> -> !pk.tile<64x1xf32>
// CHECK: pk.tile.reshape %{{.*}} : !pk.tile<4x1x8xf32> -> !pk.tile<4x8xf32>
PK_KERNEL void column_of_vector(Tensor<f32, 1> v, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 32})) {
    store(y, load<64, 32>(x, m, n) * load<64, 1>(v, m), m, n);
    store(y, load<4, 1, 8>(x, m, n), m, n);
  }
}

// Tests that reshape<...> adds and drops unit dimensions: a cumsum's [64] as a row and a column.
// CHECK-LABEL: pk.kernel @cumsum_row_and_column
// CHECK: pk.tile.cumsum
// CHECK: pk.tile.reshape %{{.*}} : !pk.tile<64xf32> -> !pk.tile<1x64xf32>
// CHECK: pk.tile.reshape %{{.*}} : !pk.tile<64xf32> -> !pk.tile<64x1xf32>
PK_KERNEL void cumsum_row_and_column(Tensor<f32, 1> lens, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64})) {
    auto c = cumsum(load<64>(lens, 0));
    store(y, load<64, 64>(x, m, n) - reshape<1, 64>(c) + reshape<64, 1>(c), m, n);
  }
}

// Tests that store_add into a local 2-D tensor adds the tile's rows by index (rows m.. as an i32
// iota), every row of them (all_rows): a column sum over row tiles.
// CHECK-LABEL: pk.kernel @column_sum_by_adds
// CHECK: %[[ROWS:.*]] = pk.tile.iota %{{.*}} dim 0 : !pk.tile<1xi32>
// CHECK: pk.tile.store_rows %{{.*}}, %{{.*}}[%[[ROWS]], %{{.*}}] {add, all_rows} : !pk.tile<1x128xf32>
PK_KERNEL void column_sum_by_adds(Tensor<f32, 2> dy, Tensor<f32, 2> db) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {16, 128}))
    store_add(db, transpose(row_sum(transpose(load<16, 128>(dy, m, n)))), 0, n);
}

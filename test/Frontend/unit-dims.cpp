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

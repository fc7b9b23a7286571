// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests that a tiles() loop nested in another one (directly, or through a range loop) walks all
// of its tiles in order inside the block that runs the outer tile. Dealing both loops to the
// blocks ran tile (i, j) only where i and j met the same block: most tiles were never written.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: rows_then_cols(
// CHECK: for (long long {{pk_tile[0-9]+}} = blockIdx.x; {{.*}} += gridDim.x
// CHECK: for (long long [[T:pk_tile[0-9]+]] = 0; [[T]] < 1LL * {{pk_tiles[0-9]+}}; ++[[T]], {{pk_walk[0-9]+}}.advance()) {
PK_KERNEL void rows_then_cols(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : tiles(x.cols(), {64})) store(y, load<16, 64>(x, m, n) * 2.0f, m, n);
}

// CHECK-LABEL: through_range(
// CHECK: for (long long {{pk_tile[0-9]+}} = blockIdx.x;
// CHECK: for (long long {{k[0-9]+}} =
// CHECK: for (long long [[T:pk_tile[0-9]+]] = 0; [[T]] <
PK_KERNEL void through_range(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto h : tiles(x.dim(0), {1}))
    for (auto k : range(0, 2))
      for (auto [m, n] : tiles(x.dim(1), x.dim(2), {16, 64}))
        store(y, load<16, 64>(x, h, m, n) + 1.0f, h, m, n);
}

// A float local updated in a range loop is carried like an index.
// CHECK-LABEL: decaying_sum(
// CHECK: float [[W:carried[0-9]+]] = {{c[0-9]+}};
// CHECK: float [[N:next[0-9]+]] =
// CHECK: [[W]] = [[N]];
PK_KERNEL void decaying_sum(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    float w = 1.0f;
    auto acc = zeros<f32, 16, 64>();
    for (auto k : range(0, 4)) {
      acc = acc + load<16, 64>(x, m, k * 64) * w;
      w = w * 0.5f;
    }
    store(y, acc, m, 0);
  }
}

// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests that a walk of a tile loop of two or more dimensions is preceded by the check that every tile count after
// the first fits the walk's 32-bit digits (pk::tile::walk_counts_fit): past 2^31 - 1 tiles along a later
// dimension the launch reports the count as its error and runs no tile (it was a device trap, which ends the
// process's CUDA context: set 30, finding 19). A 1-D loop has no later dimension and no check.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: scale_2d(
// CHECK: if (!pk::tile::walk_counts_fit(ctx, {[[C0:pk_tiles[0-9]+]], [[C1:pk_tiles[0-9]+]]})) return;
// CHECK-NEXT: pk::tile::TileWalk<2> {{pk_walk[0-9]+}}(blockIdx.x, gridDim.x, {[[C0]], [[C1]]});
PK_KERNEL void scale_2d(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n) * 2.0f, m, n);
}

// CHECK-LABEL: scale_1d(
// CHECK-NOT: walk_counts_fit
// CHECK: pk::tile::TileWalk<1>
PK_KERNEL void scale_1d(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024}))
    store(y, load<1024>(x, i) * 2.0f, i);
}

// RUN: pkc %s --emit=mlir | FileCheck %s
// RUN: not pkc %s --emit=mlir -DBARE 2>&1 | FileCheck %s --check-prefix=BARE
// Tests that a tiles() loop may bind the origin as one value of spec.h's Origin2 / Origin3
// type and read its coordinates as o.i0, o.i1, o.i2, like the names of `auto [m, n]`.
#include <pk/spec.h>
using namespace pk;

#ifndef BARE
// CHECK-LABEL: pk.kernel @origin2
// CHECK: pk.tile.foreach (%[[M:.*]], %[[N:.*]]) to
// CHECK: pk.tile.load %{{.*}}[%[[M]], %[[N]]]
// CHECK: pk.tile.store %{{.*}}, %{{.*}}[%[[M]], %[[N]]]
PK_KERNEL void origin2(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (Origin2 o : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, o.i0, o.i1), o.i0, o.i1);
}

// CHECK-LABEL: pk.kernel @origin3
// CHECK: pk.tile.foreach (%[[A:.*]], %[[B:.*]], %[[C:.*]]) to
// CHECK: pk.tile.load %{{.*}}[%[[A]], %[[B]], %[[C]]]
PK_KERNEL void origin3(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto o : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 4, 32}))
    store(y, load<1, 4, 32>(x, o.i0, o.i1, o.i2), o.i0, o.i1, o.i2);
}
#else
PK_KERNEL void bare(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<i32, 1> z) {
  for (Origin2 o : tiles(x.rows(), x.cols(), {16, 32}))
// BARE: origin-loop.cpp:[[@LINE+1]]:30: error: a tile origin is read by its coordinates: o.i0, o.i1, ...
    store(y, load<16, 32>(x, o, o.i1), o.i0, o.i1);
}
#endif

// RUN: pkc %s --emit=mlir | FileCheck %s
// Tests that max and min take a scalar on either side of a tile, as the arithmetic operators
// do (docs/language.md: "a float on either side is splatted"), for float and integer tiles.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @scalar_first
// CHECK: %[[ONE:.*]] = pk.tile.splat %{{.*}} : f32 -> !pk.tile<256xf32>
// CHECK: pk.tile.map <max> %[[ONE]], %{{.*}} : !pk.tile<256xf32>, !pk.tile<256xf32>
// CHECK: %[[A:.*]] = pk.tile.splat %arg4 : f32 -> !pk.tile<256xf32>
// CHECK: pk.tile.map <min> %[[A]], %{{.*}} : !pk.tile<256xf32>, !pk.tile<256xf32>
// CHECK: %[[THREE:.*]] = pk.tile.splat %{{.*}} : index -> !pk.tile<256xi32>
// CHECK: pk.tile.map <max> %[[THREE]], %{{.*}} : !pk.tile<256xi32>, !pk.tile<256xi32>
// CHECK: %[[R:.*]] = pk.tile.splat %{{.*}} : index -> !pk.tile<256xi32>
// CHECK: pk.tile.map <min> %[[R]], %{{.*}} : !pk.tile<256xi32>, !pk.tile<256xi32>
PK_KERNEL void scalar_first(Tensor<f32, 1> x, Tensor<f32, 1> y, Tensor<i32, 1> u, Tensor<i32, 1> v, float a) {
  for (auto i : tiles(x.size(), {256})) {
    auto t = load<256>(x, i);
    store(y, max(1.0f, t) - min(a, t), i);
    store(v, max(3, load<256>(u, i)) + min(rank(), load<256>(u, i)), i);
  }
}

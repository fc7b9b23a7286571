// RUN: pkc %s --emit=mlir | FileCheck %s
// Tests that tiles(...) loops lower to pk.tile.foreach with constant steps.
#include <pk/spec.h>
using namespace pk;
#define TM 64

// CHECK-LABEL: pk.kernel @tiles1
PK_KERNEL void tiles1(Tensor<f32, 1> y) {
  // CHECK: %[[N:.*]] = pk.dim
  // CHECK: pk.tile.foreach (%[[I:.*]]) to (%[[N]]) step [4096]
  for (auto i : tiles(y.size(), {4096})) {
    // CHECK: pk.tile.load %{{.*}}[%[[I]]]
    auto t = load<4096>(y, i);
  }
}

// CHECK-LABEL: pk.kernel @tiles2
PK_KERNEL void tiles2(Tensor<f32, 2> y) {
  // CHECK: pk.tile.foreach (%[[M:.*]], %[[N:.*]]) to (%{{.*}}, %{{.*}}) step [64, 256]
  for (auto [m, n] : tiles(y.rows(), y.cols(), {TM, 4 * 64})) {
    // CHECK: pk.tile.load %{{.*}}[%[[M]], %[[N]]] : !pk.tensor<?x?xf32> -> !pk.tile<64x256xf32>
    auto t = load<TM, 256>(y, m, n);
  }
}

// CHECK-LABEL: pk.kernel @tiles3
PK_KERNEL void tiles3(Tensor<f32, 3> y) {
  // CHECK: pk.tile.foreach (%{{.*}}, %{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}, %{{.*}}) step [1, 16, 32]
  // CHECK: pk.tile.foreach
  for (auto [b, m, n] : tiles(y.dim(0), y.dim(1), y.dim(2), {1, 16, 32}))
    for (auto [i, j] : tiles(y.dim(1), y.dim(2), {8, 8})) {}
}

// RUN: pkc %s --emit=mlir -o - | FileCheck %s
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests that min and max of two integers (indices, constants, integer arguments) are index
// values (arith.minsi / arith.maxsi), usable as origins and bounds, while min and max of floats
// stay float scalars (specs13 finding 8: min(i / 256, 7) was a float, refused as an index).
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @clamp_blocks
// CHECK: %[[LO:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: arith.muli %[[LO]], %{{.*}} : index
// CHECK: %[[HI:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK: arith.muli %[[HI]], %{{.*}} : index
PK_KERNEL void clamp_blocks(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {256})) {
    auto t = load<256>(x, min(i / 256, 7) * 256) + load<256>(x, max(i / 256 - 2, 0) * 256);
    store(y, t, i);
  }
}

// CHECK-LABEL: pk.kernel @clamped_bound
// CHECK: arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: scf.for
// CHECK: pk.scalar_map <max>
PK_KERNEL void clamped_bound(Tensor<f32, 2> x, Tensor<f32, 2> y, index keep, float floor) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 64>();
    for (auto k : range(0, min(x.cols(), keep), 64)) acc = acc + load<16, 64>(x, m, k);
    store(y, acc * max(floor, 0.5f), m, 0);
  }
}

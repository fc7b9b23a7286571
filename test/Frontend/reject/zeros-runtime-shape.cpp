// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that zeros<f32>(rows, cols), the shape as call arguments (as a sketch might write it),
// is an error that shows where the shape goes, with a note at the spec's line.
#include <pk/spec.h>
using namespace pk;
// CHECK: error: static assertion failed{{.*}}a tile's shape goes in the template arguments: zeros<f32, 128, 256>(), not zeros<f32>(128, 256)
// CHECK: zeros-runtime-shape.cpp:[[@LINE+4]]:{{[0-9]+}}: note: in instantiation
PK_KERNEL void k(Tensor<f32, 2> a, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    store(c, acc + zeros<f32>(128, 256), m, n);
  }
}

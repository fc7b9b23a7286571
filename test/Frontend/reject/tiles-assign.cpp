// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a tiles() loop assigning an outer variable is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 1> x) {
  auto acc = zeros<f32, 16>();
  for (auto i : tiles(x.size(), {16}))
// CHECK: tiles-assign.cpp:[[@LINE+1]]:{{[0-9]+}}: error: the iterations of a tiles() loop run in parallel
  acc = load<16>(x, i);
}

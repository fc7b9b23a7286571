// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a constant range() step of zero or less (a loop that never ends) is rejected at its location.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x) {
  for (auto i : range(0, x.size(),
// CHECK: range-zero-step.cpp:[[@LINE+1]]:{{[0-9]+}}: error: the step of range() must be positive (a step of 0 never reaches hi)
    0)) {}
}

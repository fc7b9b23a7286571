// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that an early return is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
// CHECK: early-return.cpp:[[@LINE+1]]:{{[0-9]+}}: error: return is only allowed as the kernel's last statement
  return;
  all_reduce(Sum, x, y);
}

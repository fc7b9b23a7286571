// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that recursion is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
// CHECK: recursion.cpp:[[@LINE+1]]:{{[0-9]+}}: error: recursion is not in the spec language
k(x, y);
}

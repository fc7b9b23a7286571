// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that throw is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x) {
// CHECK: throw.cpp:[[@LINE+1]]:{{[0-9]+}}: error: exceptions are not in the spec language
  throw 1;
}

// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that heap allocation with new is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x) {
// CHECK: new.cpp:[[@LINE+1]]:{{[0-9]+}}: error: heap allocation is not in the spec language; tensors come in as kernel parameters
  new int(3);
}

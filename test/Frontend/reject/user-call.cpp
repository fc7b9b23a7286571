// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a call to a user function is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
void helper(Sym<f32, 1> x);
PK_KERNEL void k(Sym<f32, 1> x) {
// CHECK: user-call.cpp:[[@LINE+1]]:{{[0-9]+}}: error: calls to 'helper' are not in the spec language; only pk/spec.h operations can be called
  helper(x);
}

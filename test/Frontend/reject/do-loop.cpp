// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a do loop is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, index n) {
// CHECK: do-loop.cpp:[[@LINE+1]]:{{[0-9]+}}: error: this loop is not in the spec language
  do { n = n - 1; } while (n);
}

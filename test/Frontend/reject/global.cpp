// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a global variable is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
index g;
PK_KERNEL void k(Sym<f32, 1> x) {
// CHECK: global.cpp:[[@LINE+1]]:{{[0-9]+}}: error: 'g' is not a kernel parameter or a local variable of the kernel
  auto n = g + 1;
}

// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that inline assembly is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x) {
// CHECK: inline-asm.cpp:[[@LINE+1]]:{{[0-9]+}}: error: inline assembly is not in the spec language
  asm volatile("membar.sys;");
}

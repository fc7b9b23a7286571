// RUN: rm -f %t.out
// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a float variable initialised from an index is rejected at its location with what
// to write instead (index values do not convert to float scalars).
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x) {
// CHECK: float-var.cpp:[[@LINE+1]]:{{[0-9]+}}: error: a float variable takes a float value (a constant such as 2.0f or a float parameter)
  float scale = x.size();
}

// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a kernel returning a value is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL
// CHECK: return-value.cpp:[[@LINE+1]]:{{[0-9]+}}: error: a kernel returns void
index k(Sym<f32, 1> x) { return 0; }

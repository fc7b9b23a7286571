// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a file without a kernel is rejected at its location with what to write instead.
// CHECK: no-kernel.cpp:{{[0-9]+}}:{{[0-9]+}}: error: no kernel in this file; mark one with PK_KERNEL
#include <pk/spec.h>
using namespace pk;
void f();

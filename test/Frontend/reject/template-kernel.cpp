// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a kernel template is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
template <class T>
PK_KERNEL void
// CHECK: template-kernel.cpp:[[@LINE+1]]:{{[0-9]+}}: error: a kernel cannot be a template
k(Sym<T, 1> x) {}

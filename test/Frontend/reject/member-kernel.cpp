// RUN: not pkc %s --emit=mlir 2>&1 | FileCheck %s
// RUN: not pkc %s --emit=mlir -DTEMPLATE 2>&1 | FileCheck %s --check-prefix=TEMPLATE
// Tests that PK_KERNEL on a member function is an error at the function (kernels are free
// functions), not "no kernel in this file".
#include <pk/spec.h>
using namespace pk;
#ifndef TEMPLATE
struct S {
// CHECK: member-kernel.cpp:[[@LINE+1]]:18: error: a kernel is a free function, not a member function
  PK_KERNEL void k(Sym<f32, 2> x) {}
};
#else
template <class T> struct S {
// TEMPLATE: member-kernel.cpp:[[@LINE+1]]:18: error: a kernel is a free function, not a member function
  PK_KERNEL void k(Sym<f32, 2> x) {}
};
#endif
// CHECK-NOT: no kernel in this file
// TEMPLATE-NOT: no kernel in this file

// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that an unsupported parameter type is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x,
// CHECK: param-type.cpp:[[@LINE+1]]:{{[0-9]+}}: error: unsupported kernel parameter type 'float *'; parameters are Tensor<T, Rank>, Sym<T, Rank>, Scratch<T, Rank>, index or float
    float *p) {
}

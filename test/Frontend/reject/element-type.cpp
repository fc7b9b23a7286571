// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that an unsupported element type is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(
// CHECK: element-type.cpp:[[@LINE+1]]:{{[0-9]+}}: error: unsupported kernel parameter type 'Tensor<int, 1>'
    Tensor<int, 1> x) {
}

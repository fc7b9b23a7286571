// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that Clang's own errors pass through unchanged, with Clang's wording.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
  // CHECK: clang-errors.cpp:[[@LINE+1]]:3: error: use of undeclared identifier 'undeclared_thing'
  undeclared_thing(x);
  // CHECK: clang-errors.cpp:[[@LINE+1]]:3: error: no matching function for call to 'all_gather'
  all_gather(x);
}

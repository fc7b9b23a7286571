// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that tiles() used outside a for loop is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x) {
// CHECK: range-outside-for.cpp:[[@LINE+1]]:{{[0-9]+}}: error: tiles() and range() are only allowed as the range of a for loop
  tiles(x.size(), {16});
}

// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a tile step not known at compile time is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, index s) {
  for (auto i : tiles(x.size(), {
// CHECK: tiles-step.cpp:[[@LINE+1]]:{{[0-9]+}}: error: tile steps must be positive integer constants
    s})) {}
}

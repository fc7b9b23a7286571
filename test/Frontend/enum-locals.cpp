// RUN: pkc %s --emit=mlir -o - | FileCheck %s
// RUN: not pkc %s -DMUTABLE --emit=mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=MUTABLE
// Tests that a choice named by a const local (`const Reduce op = Max;`) is read where the
// operation takes it, and that a mutable one is an error that says how to declare it.
#include <pk/spec.h>
using namespace pk;
#ifndef MUTABLE
// CHECK-LABEL: pk.kernel @named_choice
// CHECK: pk.coll.all_reduce <max>
PK_KERNEL void named_choice(Sym<f32, 1> x, Sym<f32, 1> y) {
  const Reduce op = Max;
  all_reduce(op, x, y);
}
#else
PK_KERNEL void mutable_choice(Sym<f32, 1> x, Sym<f32, 1> y) {
// MUTABLE: enum-locals.cpp:[[@LINE+1]]:10: error: a Reduce, Transport or Scope variable names a constant choice: declare it const with a constant value, e.g. `const Reduce op = Max;`
  Reduce op = Max;
  all_reduce(op, x, y);
}
#endif

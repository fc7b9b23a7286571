// RUN: rm -f %t.d %t.mlir
// RUN: pkc %s --emit=mlir -I %S/Inputs/include -o %t.mlir -MD -MF %t.d
// RUN: FileCheck %s --input-file=%t.d
// Tests that the depfile lists the spec and the user headers it read, not the embedded ones.
// CHECK: depfile.cpp
// CHECK: mylib/tiles.h
// CHECK-NOT: spec.h
// CHECK-NOT: __pkc__
#include <mylib/tiles.h>
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) { all_reduce(Sum, x, y); }

// RUN: pkc %s --emit=mlir --mlir-print-debuginfo | FileCheck %s
// Tests that every op carries the spec's file:line:col.
#include <pk/spec.h>
using namespace pk;

// CHECK: pk.coll.all_reduce {{.*}} loc(#[[AR:loc[0-9]*]])
// CHECK: pk.return loc(#[[K:loc[0-9]*]])
// CHECK-DAG: #[[AR]] = loc("{{.*}}locations.cpp":12:3)
// CHECK-DAG: #[[K]] = loc("{{.*}}locations.cpp":11:16)
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
  all_reduce(Sum, x, y);
}

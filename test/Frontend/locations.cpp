// RUN: pkc %s --emit=mlir --mlir-print-debuginfo | FileCheck %s
// Tests that every op and every kernel argument carries the spec's file:line:col.
#include <pk/spec.h>
using namespace pk;

// Tests that a kernel argument's location carries its parameter name (for diagnostics).
// CHECK-DAG: #[[X:loc[0-9]*]] = loc("{{.*}}locations.cpp":16:30)
// CHECK-DAG: #[[Y:loc[0-9]*]] = loc("{{.*}}locations.cpp":16:48)
// CHECK: pk.kernel @k(%{{.*}} loc("x"(#[[X]])), %{{.*}} loc("y"(#[[Y]])))
// CHECK: pk.dim {{.*}} loc(#[[D:loc[0-9]*]])
// CHECK: pk.coll.all_reduce {{.*}} loc(#[[AR:loc[0-9]*]])
// CHECK: pk.return loc(#[[K:loc[0-9]*]])
// CHECK-DAG: #[[D]] = loc("{{.*}}locations.cpp":17:14)
// CHECK-DAG: #[[AR]] = loc("{{.*}}locations.cpp":18:3)
// CHECK-DAG: #[[K]] = loc("{{.*}}locations.cpp":16:16)
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
  auto n = x.size();
  all_reduce(Sum, x, y);
}

// RUN: pkc %s --emit=device-mlir | FileCheck %s
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests that collectives of N-D tensors lower as on the flat tensor (blocks of whole rows are
// contiguous runs of elements), with launch-time checks that the other dimensions agree and
// that an all-to-all's blocks are whole rows; the result compiles to an sm_90a cubin.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @ar2d
// CHECK: %[[R:.*]] = pk.dim %{{.*}}, 0
// CHECK: %[[C:.*]] = pk.dim %{{.*}}, 1
// CHECK: arith.muli %[[R]], %[[C]]
// CHECK: pk.check {{.*}} "pk.coll.all_reduce: dimension 1 of the input and the output must agree"
PK_KERNEL void ar2d(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_reduce(Sum, x, y); }

// CHECK-LABEL: pk.kernel @ag3d
// CHECK: "pk.coll.all_gather: dimension 2 of the input and the output must agree"
PK_KERNEL void ag3d(Sym<f32, 3> x, Sym<f32, 3> y) { all_gather(x, y); }

// CHECK-LABEL: pk.kernel @a2a2d
// CHECK: "pk.coll.all_to_all: the rows must be a multiple of world_size (remainder shown)"
PK_KERNEL void a2a2d(Sym<f16, 2> x, Sym<f16, 2> y) { all_to_all(x, y); }

// CHECK-LABEL: pk.kernel @rs2d
PK_KERNEL void rs2d(Sym<f32, 2> x, Sym<f32, 2> y) { reduce_scatter(Max, x, y); }

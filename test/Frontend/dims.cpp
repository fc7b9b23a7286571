// RUN: pkc %s --emit=mlir | FileCheck %s
// Tests rank(), world_size(), dims and index arithmetic.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @dims
// CHECK-SAME: (%[[A:.*]]: !pk.tensor<?x?xbf16>, %[[X:.*]]: !pk.sym<?x?xbf16>)
PK_KERNEL void dims(Tensor<bf16, 2> a, Sym<bf16, 2> x) {
  // CHECK: %[[R:.*]] = pk.rank
  // CHECK: %[[W:.*]] = pk.world_size
  // CHECK: %[[M:.*]] = pk.dim %[[A]], 0
  // CHECK: %[[N:.*]] = pk.dim %[[X]], 1
  // CHECK: %[[D:.*]] = pk.dim %[[A]], 1
  // CHECK: %[[S:.*]] = pk.dim %[[X]], 0
  auto r = rank();
  auto w = world_size();
  auto m = a.rows();
  auto n = x.cols();
  auto d = a.dim(1);
  auto s = x.size();
  // CHECK: %[[C1:.*]] = arith.constant 1 : index
  // CHECK: %[[P:.*]] = arith.addi %[[R]], %[[C1]]
  // CHECK: arith.remsi %[[P]], %[[W]]
  auto next = (r + 1) % w;
  // CHECK: arith.muli
  // CHECK: arith.divsi
  // CHECK: arith.subi
  auto t = (m * n) / w - d;
  // CHECK: arith.addi
  t += s;
}

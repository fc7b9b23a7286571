// RUN: pkc %s --emit=mlir | FileCheck %s
// Tests that range() loops lower to scf.for, carrying the variables they assign.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @gemm
// CHECK-SAME: (%[[A:.*]]: !pk.tensor<?x?xbf16>, %[[B:.*]]: !pk.tensor<?x?xbf16>, %[[C:.*]]: !pk.tensor<?x?xf32>)
PK_KERNEL void gemm(Tensor<bf16, 2> A, Tensor<bf16, 2> B, Tensor<f32, 2> C) {
  for (auto [m, n] : tiles(A.rows(), B.cols(), {128, 256})) {
    // CHECK: %[[Z:.*]] = pk.tile.zeros : !pk.tile<128x256xf32>
    auto acc = zeros<f32, 128, 256>();
    // CHECK: %[[C0:.*]] = arith.constant 0 : index
    // CHECK: %[[K:.*]] = pk.dim %[[A]], 1
    // CHECK: %[[C64:.*]] = arith.constant 64 : index
    // CHECK: %[[R:.*]] = scf.for %[[IV:.*]] = %[[C0]] to %[[K]] step %[[C64]] iter_args(%[[ACC:.*]] = %[[Z]]) -> (!pk.tile<128x256xf32>)
    // CHECK: %[[TA:.*]] = pk.tile.load %[[A]][%{{.*}}, %[[IV]]] {{.*}} -> !pk.tile<128x64xbf16, smem>
    // CHECK: %[[TB:.*]] = pk.tile.load %[[B]][%[[IV]], %{{.*}}] {{.*}} -> !pk.tile<64x256xbf16, smem>
    // CHECK: %[[NEW:.*]] = pk.tile.mma %[[TA]], %[[TB]], %[[ACC]]
    // CHECK: scf.yield %[[NEW]]
    for (auto k : range(0, A.cols(), 64))
      acc = mma(load_smem<128, 64>(A, m, k), load_smem<64, 256>(B, k, n), acc);
    // CHECK: pk.tile.store %[[R]], %[[C]]
    store(C, acc, m, n);
  }
}

// CHECK-LABEL: pk.kernel @plain
PK_KERNEL void plain(Tensor<f32, 1> x) {
  // Tests that a loop without carried values has an empty yield, and the default step 1.
  // CHECK: %[[ONE:.*]] = arith.constant 1 : index
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[ONE]] {
  // CHECK: pk.tile.load
  for (auto i : range(0, x.size())) {
    auto t = load<16>(x, i);
  }
}

// CHECK-LABEL: pk.kernel @counter
PK_KERNEL void counter(Tensor<f32, 1> x) {
  // Tests that an index variable is carried too.
  // CHECK: scf.for {{.*}} iter_args(%[[O:.*]] = %{{.*}}) -> (index)
  // CHECK: arith.addi %[[O]]
  auto off = x.size();
  for (auto i : range(0, 4, 1)) off = off + i;
}

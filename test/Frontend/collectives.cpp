// RUN: pkc %s --emit=mlir | FileCheck %s
// Tests communication intent: the four collectives and tiles stored or added into peers.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @colls
PK_KERNEL void colls(Sym<bf16, 2> x, Sym<bf16, 2> y, Tensor<bf16, 2> z) {
  // CHECK: pk.coll.all_reduce <max> %{{.*}} into %{{.*}} : !pk.sym<?x?xbf16>, !pk.tensor<?x?xbf16>
  all_reduce(Max, x, z);
  // CHECK: pk.coll.reduce_scatter <sum> %{{.*}} into %{{.*}} : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  reduce_scatter(Sum, x, y);
  // CHECK: pk.coll.all_gather %{{.*}} into %{{.*}} : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  all_gather(y, x);
  // CHECK: pk.coll.all_to_all %{{.*}} into %{{.*}} : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  all_to_all(x, y);
}

// CHECK-LABEL: pk.kernel @peers
// CHECK-SAME: (%[[A:.*]]: !pk.tensor<?x?xbf16>, %[[C:.*]]: !pk.sym<?x?xbf16>)
PK_KERNEL void peers(Tensor<bf16, 2> A, Sym<bf16, 2> C) {
  for (auto [m, n] : tiles(A.rows(), A.cols(), {128, 256})) {
    auto t = load<128, 256>(A, m, n);
    // CHECK: %[[W:.*]] = pk.world_size
    // CHECK: %[[O:.*]] = arith.remsi %{{.*}}, %[[W]]
    // CHECK: pk.coll.add_tile %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] on %[[O]] : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
    store_add(C.on((m / 128) % world_size()), t, m, n);
    // A ring shift: the tile goes to the next rank.
    // CHECK: %[[R:.*]] = pk.rank
    // CHECK: %[[W2:.*]] = pk.world_size
    // CHECK: %[[P:.*]] = arith.addi %[[R]]
    // CHECK: %[[NX:.*]] = arith.remsi %[[P]], %[[W2]]
    // CHECK: pk.coll.store_tile %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] on %[[NX]]
    store(C.on(next_rank()), t, m, n);
    // CHECK: pk.coll.store_tile {{.*}} on %{{.*}}
    store(C.on(prev_rank()), t, m, n);
  }
}

// RUN: pkc-opt %s -pk-lower-peer-tiles | FileCheck %s
// Tests that a peer tile next to a collective in one kernel is lowered in place, with no worker
// or flags of its own: the kernel is one of phases, and pk-lower-collectives orders them with
// grid-wide barriers (test/Passes/peer-tile-phases.cpp).

// CHECK-LABEL: pk.kernel @with_collective
// CHECK-NOT: pk.worker
// CHECK-NOT: pk.sync
// CHECK: pk.comm.store_async <ldst> %{{.*}}, %{{.*}}[%{{.*}}] on %{{.*}} : !pk.tile<1024xf32>, !pk.sym<?xf32>
// CHECK: pk.coll.all_reduce
pk.kernel @with_collective(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>, %z: !pk.sym<?xf32>) {
  %n = pk.dim %x, 0 : !pk.sym<?xf32>
  pk.tile.foreach (%i) to (%n) step [1024] {
    %c0 = arith.constant 0 : index
    %t = pk.tile.load %x[%i] : !pk.sym<?xf32> -> !pk.tile<1024xf32>
    pk.coll.store_tile %t, %y[%i] on %c0 : !pk.tile<1024xf32>, !pk.sym<?xf32>
  }
  pk.coll.all_reduce <sum> %y into %z : !pk.sym<?xf32>, !pk.sym<?xf32>
  pk.return
}

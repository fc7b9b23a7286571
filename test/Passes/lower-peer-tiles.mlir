// RUN: pkc-opt %s -split-input-file -pk-lower-peer-tiles | FileCheck %s
// RUN: pkc-opt %s -split-input-file -pk-lower-peer-tiles -pk-lower-collectives -pk-verify-protocol
// Tests that tiles stored or added into peers from a general tile loop become register-path
// primitives inside one worker, between per-block arrive and depart flag rounds.

// CHECK-LABEL: pk.kernel @ring
// CHECK: pk.worker <communicator> blocks 132
// CHECK: %[[ARRIVE:.*]] = pk.sync.flag 0 <block>
// CHECK: %[[DEPART:.*]] = pk.sync.flag 1 <block>
// CHECK: %[[W:.*]] = pk.world_size
// CHECK: %[[PEERS:.*]] = arith.subi %[[W]]
// CHECK: pk.sync.signal_all %[[ARRIVE]]
// CHECK: pk.sync.wait %[[ARRIVE]], %[[PEERS]]
// CHECK: pk.tile.foreach
// CHECK: %[[T:.*]] = pk.tile.load
// CHECK: pk.comm.store_async <ldst> %[[T]], %arg1[%{{.*}}, %{{.*}}] on %{{.*}}
// CHECK-NOT: pk.coll.store_tile
// CHECK: pk.sync.signal_all %[[DEPART]]
// CHECK: pk.sync.wait %[[DEPART]], %[[PEERS]]
pk.kernel @ring(%x: !pk.sym<?x?xbf16>, %y: !pk.sym<?x?xbf16>) {
  %m = pk.dim %x, 0 : !pk.sym<?x?xbf16>
  %n = pk.dim %x, 1 : !pk.sym<?x?xbf16>
  pk.tile.foreach (%i, %j) to (%m, %n) step [64, 64] {
    %r = pk.rank
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %s = arith.addi %r, %c1 : index
    %p = arith.remsi %s, %w : index
    %t = pk.tile.load %x[%i, %j] : !pk.sym<?x?xbf16> -> !pk.tile<64x64xbf16>
    pk.coll.store_tile %t, %y[%i, %j] on %p : !pk.tile<64x64xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}

// -----

// CHECK-LABEL: pk.kernel @add_everywhere
// CHECK: pk.worker <communicator>
// CHECK: scf.for %[[P:.*]] =
// CHECK: pk.comm.store_add_async <ldst> %{{.*}}, %arg1[%{{.*}}] on %[[P]]
pk.kernel @add_everywhere(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>) {
  %n = pk.dim %x, 0 : !pk.sym<?xf32>
  pk.tile.foreach (%i) to (%n) step [1024] {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %w = pk.world_size
    %t = pk.tile.load %x[%i] : !pk.sym<?xf32> -> !pk.tile<1024xf32>
    scf.for %p = %c0 to %w step %c1 {
      pk.coll.add_tile %t, %y[%i] on %p : !pk.tile<1024xf32>, !pk.sym<?xf32>
    }
  }
  pk.return
}

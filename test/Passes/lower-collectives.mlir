// RUN: pkc-opt %s -split-input-file -verify-diagnostics --pk-select-transport --pk-lower-collectives | FileCheck %s
// Rule 3: communication intent becomes one-way signals and direct reads into the output.

// Tests the one-shot all-reduce protocol: arrive, wait for the peers, reduce each tile from
// every rank straight into the output, depart, wait for the peers' departure.
// CHECK-LABEL: pk.kernel @all_reduce
// CHECK-SAME: pk.level = "device"
// CHECK: pk.worker <communicator> blocks {{[0-9]+}} {
// CHECK: %[[ARRIVE:.*]] = pk.sync.flag 0 <block>
// CHECK: %[[DEPART:.*]] = pk.sync.flag 1 <block>
// CHECK: %[[W:.*]] = pk.world_size
// CHECK: %[[PEERS:.*]] = arith.subi %[[W]]
// CHECK: pk.sync.signal_all %[[ARRIVE]]
// CHECK-NEXT: pk.sync.wait %[[ARRIVE]], %[[PEERS]]
// CHECK: pk.tile.foreach (%[[I:.*]]) to
// CHECK-NEXT: %[[T:.*]] = pk.comm.reduce <sum> <ldst> %{{.*}}[%[[I]]] : !pk.sym<?xbf16> -> !pk.tile<4096xbf16>
// CHECK-NEXT: pk.tile.store %[[T]], %{{.*}}[%[[I]]]
// CHECK: pk.sync.signal_all %[[DEPART]]
// CHECK-NEXT: pk.sync.wait %[[DEPART]], %[[PEERS]]
// CHECK-NOT: pk.coll
pk.kernel @all_reduce(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}

// -----

pk.kernel @two_d(%x: !pk.sym<?x?xbf16>, %y: !pk.tensor<?x?xbf16>) {
  // expected-error @+1 {{lowering supports 1-D tensors for now; flatten the tensor}}
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?x?xbf16>, !pk.tensor<?x?xbf16>
  pk.return
}

// RUN: pkc-opt %s -pk-lower-collectives -split-input-file | FileCheck %s
// Lowering of collective intent to one-way flags and direct pulls (rule 3).

// Tests that a gather pulls on the root only (the tile bound is 0 elsewhere), copies every
// rank's input to its row block without staging, between one arrival and one departure.
// CHECK-LABEL: pk.kernel @gather
// CHECK: pk.worker <communicator> blocks 8
// CHECK: %[[ARRIVE:.*]] = pk.sync.flag 0 <block>
// CHECK: %[[DEPART:.*]] = pk.sync.flag 1 <block>
// CHECK: %[[RANK:.*]] = pk.rank
// CHECK: %[[WORLD:.*]] = pk.world_size
// CHECK: %[[PEERS:.*]] = arith.subi %[[WORLD]]
// CHECK: pk.sync.signal_all %[[ARRIVE]]
// CHECK-NEXT: pk.sync.wait %[[ARRIVE]], %[[PEERS]]
// CHECK: %[[N:.*]] = pk.dim %arg0, 0
// CHECK: %[[ISROOT:.*]] = arith.cmpi eq, %[[RANK]], %arg2
// CHECK: %[[BOUND:.*]] = arith.select %[[ISROOT]], %[[N]]
// CHECK: pk.tile.foreach (%[[K:.*]], %[[I:.*]]) to (%[[WORLD]], %[[BOUND]]) step [1, 1024]
// The k-th trip over ranks pulls from rank (rank + 1 + k) mod W.
// CHECK: %[[NEXT:.*]] = arith.addi %[[RANK]], %c1
// CHECK: %[[S:.*]] = arith.addi %[[K]], %[[NEXT]]
// CHECK: %[[WRAPS:.*]] = arith.cmpi sge, %[[S]], %[[WORLD]]
// CHECK: %[[LESS:.*]] = arith.subi %[[S]], %[[WORLD]]
// CHECK: %[[R:.*]] = arith.select %[[WRAPS]], %[[LESS]], %[[S]]
// CHECK: %[[ROW:.*]] = arith.muli %[[R]], %[[N]]
// CHECK: %[[AT:.*]] = arith.addi %[[ROW]], %[[I]]
// CHECK: pk.comm.copy <ldst> %arg0[%[[I]]] on %[[R]] into %arg1[%[[AT]]] count
// CHECK: pk.sync.signal_all %[[DEPART]]
// CHECK-NEXT: pk.sync.wait %[[DEPART]], %[[PEERS]]
pk.kernel @gather(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>, %root: index) {
  pk.coll.gather %x into %y root %root {transport = #pk.transport<ldst>, pk.blocks = 8 : i64, pk.tile = 1024 : i64} : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

// Tests that an all-reduce left open branches at run time between two-shot (reduce own shard
// into every rank's output: no destination rank) and one-shot (into this rank's output), both
// inside the same arrival/departure pair.
// CHECK-LABEL: pk.kernel @all_reduce_auto
// CHECK: pk.sync.wait
// CHECK: %[[TWO:.*]] = arith.cmpi sge
// CHECK: scf.if %[[TWO]] {
// CHECK: pk.comm.reduce_into <sum> <ldst> %arg0[%[[AT:.*]]] into %arg1[%[[AT]]] count
// CHECK: } else {
// CHECK: pk.comm.reduce_into <sum> <ldst> %arg0[%[[I:.*]]] into %arg1[%[[I]]] on %{{.*}} count
// CHECK: }
// CHECK: pk.sync.signal_all
// CHECK-NOT: pk.sync.signal_all
pk.kernel @all_reduce_auto(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_reduce <sum> %x into %y {transport = #pk.transport<ldst>, pk.two_shot_min_bytes = 307008 : i64} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// Tests that all-to-all pulls block `rank` of every peer into row block `peer`.
// CHECK-LABEL: pk.kernel @all_to_all
// CHECK: %[[RANK:.*]] = pk.rank
// CHECK: %[[WORLD:.*]] = pk.world_size
// CHECK: %[[M:.*]] = arith.divsi %{{.*}}, %[[WORLD]]
// CHECK: %[[MINE:.*]] = arith.muli %[[RANK]], %[[M]]
// CHECK: pk.tile.foreach (%[[K:.*]], %[[I:.*]]) to (%[[WORLD]], %[[M]])
// CHECK: %[[R:.*]] = arith.select
// CHECK: %[[SRC:.*]] = arith.addi %[[MINE]], %[[I]]
// CHECK: pk.comm.copy <ldst> %arg0[%[[SRC]]] on %[[R]] into %arg1[%{{.*}}] on %[[RANK]] count
pk.kernel @all_to_all(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_to_all %x into %y {transport = #pk.transport<ldst>} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// Tests that a collective with a push cut-off first offers the one-round path (its launch
// counters for the flag and LL paths follow the arrive and depart slots, then its lane slots
// take ceil(512 / 64) = 8 slot units; the LL cut-off comes from pk.ll_max_bytes), and runs the
// direct protocol only when that path was not taken.
// CHECK-LABEL: pk.kernel @push_small_first
// CHECK: %[[ARRIVE:.*]] = pk.sync.flag 0 <block>
// CHECK: %[[DEPART:.*]] = pk.sync.flag 1 <block>
// CHECK: %[[COUNT:.*]] = pk.sync.flag 2 <block>
// CHECK: %[[LLCOUNT:.*]] = pk.sync.flag 3 <block>
// CHECK: %[[LANES:.*]] = pk.sync.flag 4 <block>
// CHECK: %[[TAKEN:.*]] = pk.comm.push_small <reduce> reduce <max> %arg0, %arg1 root %arg2 flags(%[[COUNT]], %[[LLCOUNT]], %[[LANES]]) max 65536 ll 4096
// CHECK: %[[NO:.*]] = arith.constant false
// CHECK: %[[DIRECT:.*]] = arith.cmpi eq, %[[TAKEN]], %[[NO]]
// CHECK: scf.if %[[DIRECT]] {
// CHECK: pk.sync.signal_all %[[ARRIVE]]
// CHECK: pk.comm.reduce_into <max>
// CHECK: pk.sync.wait %[[DEPART]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: pk.return
// A kernel with two collectives keeps the direct path only (they would share its landing
// buffer): no push_small, and the second collective's flags follow the first's two.
// CHECK-LABEL: pk.kernel @push_small_next_slots
// CHECK-SAME: no one-round path: the kernel has 2 collectives
// CHECK-NOT: pk.comm.push_small
// CHECK: pk.sync.flag 2 <block>
// CHECK-NOT: pk.comm.push_small
pk.kernel @push_small_first(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>, %root: index) {
  pk.coll.reduce <max> %x into %y root %root {transport = #pk.transport<ldst>, pk.blocks = 64 : i64, pk.tile = 1024 : i64, pk.push_max_bytes = 65536 : i64, pk.ll_max_bytes = 4096 : i64} : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}
pk.kernel @push_small_next_slots(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>, %z: !pk.sym<?xf32>) {
  pk.coll.all_gather %x into %y {transport = #pk.transport<ldst>, pk.blocks = 64 : i64, pk.tile = 1024 : i64, pk.push_max_bytes = 65536 : i64} : !pk.sym<?xf32>, !pk.sym<?xf32>
  pk.coll.all_gather %x into %z {transport = #pk.transport<ldst>, pk.blocks = 64 : i64, pk.tile = 1024 : i64, pk.push_max_bytes = 65536 : i64} : !pk.sym<?xf32>, !pk.sym<?xf32>
  pk.return
}

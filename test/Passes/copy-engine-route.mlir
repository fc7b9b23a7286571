// RUN: pkc-opt %s -pk-select-algorithm="profile=%S/Inputs/crossover.profile" -split-input-file | FileCheck %s
// RUN: pkc-opt %s -pk-select-algorithm="copy-engine-min-bytes=0 profile=%S/Inputs/crossover.profile" -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: pkc-opt %s -pk-select-algorithm="world-size=2 profile=%S/Inputs/crossover.profile" -split-input-file | FileCheck %s --check-prefix=W2
// RUN: pkc-opt %s -pk-select-algorithm="copy-engine-min-bytes=4096 profile=%S/Inputs/crossover.profile" -split-input-file | FileCheck %s --check-prefix=SET
// The copy-engine route of pk-select-algorithm (rule 1): copy-only collectives that are their
// kernel's whole body get `pk.copy_engine = "<collective>:<min bytes>:<x>:<y>:<root>"` for the
// launchers; the default size is 20 MiB per message, 96 MiB where only the root sends.

// Tests that a run-time size gets the route with the default threshold.
// CHECK-LABEL: pk.kernel @all_gather_dynamic
// CHECK-SAME: pk.copy_engine = "all_gather:20971520:0:1:-1"
// CHECK: copy engine for messages of at least 20 MiB
// OFF-LABEL: pk.kernel @all_gather_dynamic
// OFF-NOT: pk.copy_engine =
// OFF: SM copies only: the copy-engine route is off
// SET-LABEL: pk.kernel @all_gather_dynamic
// SET-SAME: pk.copy_engine = "all_gather:4096:0:1:-1"
pk.kernel @all_gather_dynamic(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// Tests both sides of the threshold with static sizes: 20 MiB takes it, one element less not.
// CHECK-LABEL: pk.kernel @at_threshold
// CHECK-SAME: pk.copy_engine = "all_gather:20971520:0:1:-1"
pk.kernel @at_threshold(%x: !pk.sym<10485760xbf16>, %y: !pk.sym<20971520xbf16>) {
  pk.coll.all_gather %x into %y : !pk.sym<10485760xbf16>, !pk.sym<20971520xbf16>
  pk.return
}

// -----

// CHECK-LABEL: pk.kernel @below_threshold
// CHECK-NOT: pk.copy_engine =
// CHECK: SM copies only: 20 MiB per message is below the copy engine's 20 MiB
pk.kernel @below_threshold(%x: !pk.sym<10485759xbf16>, %y: !pk.sym<20971518xbf16>) {
  pk.coll.all_gather %x into %y : !pk.sym<10485759xbf16>, !pk.sym<20971518xbf16>
  pk.return
}

// -----

// Tests that an all-to-all's message is a 1/W block when the world size is known.
// W2-LABEL: pk.kernel @all_to_all_block
// W2-NOT: pk.copy_engine =
// W2: SM copies only: 10 MiB per message
// CHECK-LABEL: pk.kernel @all_to_all_block
// CHECK-SAME: pk.copy_engine = "all_to_all:20971520:0:1:-1"
pk.kernel @all_to_all_block(%x: !pk.sym<10485760xbf16>, %y: !pk.sym<10485760xbf16>) {
  pk.coll.all_to_all %x into %y : !pk.sym<10485760xbf16>, !pk.sym<10485760xbf16>
  pk.return
}

// -----

// Tests a rooted collective: the root is the third argument, the output may be local.
// CHECK-LABEL: pk.kernel @broadcast
// CHECK-SAME: pk.copy_engine = "broadcast:100663296:0:1:2"
pk.kernel @broadcast(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %root: index) {
  pk.coll.broadcast %x into %y root %root : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}

// -----

// Tests the root-sends threshold (96 MiB) from below with a static size, and an explicit one.
// CHECK-LABEL: pk.kernel @broadcast_below
// CHECK-NOT: pk.copy_engine =
// CHECK: SM copies only: 96 MiB per message is below the copy engine's 96 MiB
// SET-LABEL: pk.kernel @broadcast_below
// SET-SAME: pk.copy_engine = "broadcast:4096:0:1:2"
pk.kernel @broadcast_below(%x: !pk.sym<50331647xbf16>, %y: !pk.tensor<50331647xbf16>, %root: index) {
  pk.coll.broadcast %x into %y root %root : !pk.sym<50331647xbf16>, !pk.tensor<50331647xbf16>
  pk.return
}

// -----

// Tests that arguments in another order keep their indices.
// CHECK-LABEL: pk.kernel @scatter_reordered
// CHECK-SAME: pk.copy_engine = "scatter:100663296:2:0:1"
pk.kernel @scatter_reordered(%y: !pk.tensor<?xf32>, %root: index, %x: !pk.sym<?xf32>) {
  pk.coll.scatter %x into %y root %root : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

// Tests that a constant root (not an argument) keeps the kernel.
// CHECK-LABEL: pk.kernel @constant_root
// CHECK-NOT: pk.copy_engine =
// CHECK: SM copies only: the copy-engine route needs the input, output and root as kernel arguments
pk.kernel @constant_root(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  %c0 = arith.constant 0 : index
  pk.coll.gather %x into %y root %c0 : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}

// -----

// Tests that a kernel with two collectives keeps its kernel: the route replaces a whole launch.
// CHECK-LABEL: pk.kernel @two_collectives
// CHECK-NOT: pk.copy_engine =
// CHECK: SM copies only: the copy-engine route replaces a whole launch
pk.kernel @two_collectives(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>, %z: !pk.sym<?xbf16>) {
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %z : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// Tests that reductions never get the route (the copy engine cannot add).
// CHECK-LABEL: pk.kernel @all_reduce
// CHECK-NOT: pk.copy_engine =
// CHECK-NOT: rule 1 (mechanism)
pk.kernel @all_reduce(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// Tests that transport = copy_engine asks for the route at every size, even a static small one.
// CHECK-LABEL: pk.kernel @forced
// CHECK-SAME: pk.copy_engine = "all_gather:1:0:1:-1"
// CHECK: copy engine at every size (transport = copy_engine)
pk.kernel @forced(%x: !pk.sym<16xbf16>, %y: !pk.sym<32xbf16>) {
  pk.coll.all_gather %x into %y {transport = #pk.transport<copy_engine>} : !pk.sym<16xbf16>, !pk.sym<32xbf16>
  pk.return
}

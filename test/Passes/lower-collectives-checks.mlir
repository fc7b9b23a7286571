// RUN: pkc-opt %s -split-input-file --pk-select-transport --pk-select-algorithm --pk-lower-collectives | FileCheck %s
// Tests that run-time size rules become launch-time checks before the arrival signal.

// CHECK-LABEL: pk.kernel @all_gather
// CHECK: %[[W:.*]] = pk.world_size
// CHECK: %[[N:.*]] = pk.dim %arg0, 0
// CHECK: %[[M:.*]] = pk.dim %arg1, 0
// CHECK: %[[WANT:.*]] = arith.muli %[[W]], %[[N]]
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[WANT]], %[[M]]
// CHECK: pk.check %[[OK]], "pk.coll.all_gather: the output must hold world_size times the input's elements" expected %[[WANT]] got %[[M]]
// CHECK: pk.sync.signal_all
pk.kernel @all_gather(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// CHECK-LABEL: pk.kernel @all_to_all
// CHECK: arith.remsi
// CHECK: pk.check {{.*}}"pk.coll.all_to_all: the element count must be a multiple of world_size (remainder shown)"
// CHECK: pk.check {{.*}}"pk.coll.all_to_all: input and output must have the same element count"
// CHECK: pk.sync.signal_all
pk.kernel @all_to_all(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_to_all %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// CHECK-LABEL: pk.kernel @broadcast
// CHECK: arith.cmpi ult, %arg2
// CHECK: pk.check {{.*}}"pk.coll.broadcast: the root must be a rank below world_size
// CHECK: pk.sync.signal_all
pk.kernel @broadcast(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>, %root: index) {
  pk.coll.broadcast %x into %y root %root : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// RUN: not pkc-opt %s --pk-check-effects 2>&1 | FileCheck %s
// RUN: pkc-opt %s --pk-track-effects | FileCheck %s --check-prefix=TRACK
// Tests the effect ledger: pk-track-effects numbers the ops with effects, and pk-check-effects
// reports a numbered op that vanished without being marked lowered, at that op's location.

// TRACK-LABEL: pk.kernel @tracked
// TRACK-SAME: pk.effects = {{\[}}["pk.coll.all_reduce", {{.*}}]]
// TRACK: pk.coll.all_reduce <sum> {{.*}} {pk.effect = 0 : i64}
pk.kernel @tracked(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xf32>, !pk.sym<?xf32>
  pk.return
}

// An all-reduce numbered 0 and a store numbered 1 were in the kernel; the store was lowered
// (marked), the all-reduce vanished.
// CHECK: check-effects.mlir:7:3: error: 'pk.coll.all_reduce' was dropped by a lowering without being lowered
// CHECK-NOT: pk.tile.store' was dropped
pk.kernel @dropped(%x: !pk.sym<?xf32>) attributes {
    pk.effects = [["pk.coll.all_reduce", loc("check-effects.mlir":7:3)],
                  ["pk.tile.store", loc("check-effects.mlir":8:3)]],
    pk.lowered = array<i64: 1>} {
  pk.return
}

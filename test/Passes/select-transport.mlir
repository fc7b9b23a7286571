// RUN: pkc-opt %s -split-input-file --pk-select-transport=profile=%S/Inputs/crossover.profile | FileCheck %s
// RUN: pkc-opt %s -split-input-file --pk-select-transport=allow-multicast=true | FileCheck %s --check-prefix=MULTICAST
// RUN: not pkc-opt %s --pk-select-transport=profile=%t.missing 2>&1 | FileCheck %s --check-prefix=NOPROFILE
// Rule 1: each transfer's mechanism by message size, with the reason recorded.

// Tests that reductions read through registers, and through multimem only when allowed.
// CHECK-LABEL: pk.kernel @reduce
// CHECK-SAME: rule 1 (transport): pk.coll.all_reduce at {{.*}}: ldst: reduces on read
// CHECK: pk.coll.all_reduce <sum> {{.*}} {transport = #pk.transport<ldst>}
// MULTICAST-LABEL: pk.kernel @reduce
// MULTICAST: pk.coll.all_reduce <sum> {{.*}} {transport = #pk.transport<multimem>}
// NOPROFILE: error: cannot read profile
pk.kernel @reduce(%x: !pk.sym<1048576xbf16>, %y: !pk.tensor<1048576xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<1048576xbf16>, !pk.tensor<1048576xbf16>
  pk.return
}

// -----

// Tests both sides of the ld/st-TMA crossover: 1 KiB is latency-bound (ld/st), 1 MiB goes by
// TMA, 64 MiB by ld/st with many SMs; a size that is not a multiple of 16 bytes never uses
// TMA; an unknown size uses ld/st.
// CHECK-LABEL: pk.kernel @sizes
// CHECK-SAME: ldst: 1 KiB: ldst has the highest profiled bandwidth
// CHECK-SAME: tma: 1 MiB: tma has the highest profiled bandwidth
// CHECK-SAME: ldst: 64 MiB: ldst has the highest profiled bandwidth
// CHECK-SAME: ldst: {{.*}}: TMA would be faster but moves multiples of 16 bytes only
// CHECK-SAME: ldst: size known only at run time
// CHECK: pk.coll.all_gather {{.*}} {transport = #pk.transport<ldst>} : !pk.sym<512xbf16>
// CHECK: pk.coll.all_gather {{.*}} {transport = #pk.transport<tma>} : !pk.sym<524288xbf16>
// CHECK: pk.coll.all_gather {{.*}} {transport = #pk.transport<ldst>} : !pk.sym<33554432xbf16>
// CHECK: pk.coll.all_to_all {{.*}} {transport = #pk.transport<ldst>} : !pk.sym<524289xbf16>
// CHECK: pk.coll.all_to_all {{.*}} {transport = #pk.transport<ldst>} : !pk.sym<?xbf16>
pk.kernel @sizes(%a: !pk.sym<512xbf16>, %a2: !pk.sym<1024xbf16>,
                 %b: !pk.sym<524288xbf16>, %b2: !pk.sym<1048576xbf16>,
                 %c: !pk.sym<33554432xbf16>, %c2: !pk.sym<67108864xbf16>,
                 %d: !pk.sym<524289xbf16>, %e: !pk.sym<?xbf16>) {
  pk.coll.all_gather %a into %a2 : !pk.sym<512xbf16>, !pk.sym<1024xbf16>
  pk.coll.all_gather %b into %b2 : !pk.sym<524288xbf16>, !pk.sym<1048576xbf16>
  pk.coll.all_gather %c into %c2 : !pk.sym<33554432xbf16>, !pk.sym<67108864xbf16>
  pk.coll.all_to_all %d into %d : !pk.sym<524289xbf16>, !pk.sym<524289xbf16>
  pk.coll.all_to_all %e into %e : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// Tests that a prescribed transport is kept and records no decision.
// CHECK-LABEL: pk.kernel @prescribed
// CHECK-NOT: pk.decisions
// CHECK: {transport = #pk.transport<copy_engine>}
pk.kernel @prescribed(%a: !pk.sym<?xbf16>) {
  pk.coll.all_to_all %a into %a {transport = #pk.transport<copy_engine>} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// Tests that a tile sent to a peer is sized by the tile (64 KiB of bf16 here).
// CHECK-LABEL: pk.kernel @tile
// CHECK-SAME: rule 1 (transport): pk.coll.store_tile at {{.*}}: {{ldst|tma}}: 64 KiB
pk.kernel @tile(%c: !pk.sym<?x?xbf16>, %p: index) {
  %t = pk.tile.zeros : !pk.tile<128x256xf32>
  %b = pk.tile.cast %t : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
  pk.coll.store_tile %b, %c[%p, %p] on %p : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  pk.return
}

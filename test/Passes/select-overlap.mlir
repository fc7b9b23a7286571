// RUN: pkc-opt %s -split-input-file --pk-select-transport --pk-select-overlap | FileCheck %s
// Rule 2: intra-SM overlap when the transfer has the compute tile's granularity, inter-SM
// otherwise.

// Tests that a tile computed in the loop and stored to a peer goes from the storer (intra-SM).
// CHECK-LABEL: pk.kernel @computed
// CHECK-SAME: rule 2 (overlap): pk.coll.store_tile at {{.*}}: intra_sm: the transfer has the compute tile's granularity
// CHECK: pk.coll.store_tile {{.*}}overlap = #pk.overlap<intra_sm>
pk.kernel @computed(%a: !pk.tensor<?x?xbf16>, %c: !pk.sym<?x?xbf16>, %m: index, %p: index) {
  pk.tile.foreach (%i, %j) to (%m, %m) step [128, 256] {
    %acc = pk.tile.zeros : !pk.tile<128x256xf32>
    %b = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.coll.store_tile %b, %c[%i, %j] on %p : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a register reduce-add needs communicator blocks (inter-SM).
// CHECK-LABEL: pk.kernel @reduce_add
// CHECK-SAME: inter_sm: a register reduce-add needs many threads
// CHECK: pk.coll.add_tile {{.*}}overlap = #pk.overlap<inter_sm>
pk.kernel @reduce_add(%c: !pk.sym<?x?xbf16>, %m: index, %p: index) {
  pk.tile.foreach (%i, %j) to (%m, %m) step [128, 256] {
    %acc = pk.tile.zeros : !pk.tile<128x256xf32>
    %b = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    pk.coll.add_tile %b, %c[%i, %j] on %p {transport = #pk.transport<ldst>} : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a tile not computed in the loop has another granularity (inter-SM).
// CHECK-LABEL: pk.kernel @foreign
// CHECK-SAME: inter_sm: the tile is not computed in this tile loop
// CHECK: pk.coll.store_tile {{.*}}overlap = #pk.overlap<inter_sm>
pk.kernel @foreign(%c: !pk.sym<?x?xbf16>, %m: index, %p: index) {
  %acc = pk.tile.zeros : !pk.tile<128x256xf32>
  %b = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
  pk.tile.foreach (%i, %j) to (%m, %m) step [128, 256] {
    pk.coll.store_tile %b, %c[%i, %j] on %p : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
  }
  pk.return
}

// -----

// Tests that a whole-tensor collective runs on communicator blocks.
// CHECK-LABEL: pk.kernel @collective
// CHECK-SAME: rule 2 (overlap): pk.coll.all_reduce at {{.*}}: inter_sm: a whole-tensor collective
pk.kernel @collective(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}

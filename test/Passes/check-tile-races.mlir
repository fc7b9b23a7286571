// RUN: pkc-opt %s -split-input-file -verify-diagnostics --pk-check-tile-races | FileCheck %s
// pk-check-tile-races: a tile loop may read a tensor it writes only at the tile it writes.

// Tests that an element-wise update in place is accepted.
// CHECK-LABEL: pk.kernel @in_place_square
pk.kernel @in_place_square(%x: !pk.tensor<?xf32>) {
  %n = pk.dim %x, 0 : !pk.tensor<?xf32>
  pk.tile.foreach (%i) to (%n) step [256] {
    %t = pk.tile.load %x[%i] : !pk.tensor<?xf32> -> !pk.tile<256xf32>
    %s = pk.tile.map <mul> %t, %t : !pk.tile<256xf32>, !pk.tile<256xf32> -> !pk.tile<256xf32>
    pk.tile.store %s, %x[%i] : !pk.tile<256xf32>, !pk.tensor<?xf32>
  }
  pk.return
}

// -----

// Tests that reading another tile of the tensor the loop writes is refused.
pk.kernel @shift(%x: !pk.tensor<?xf32>) {
  %n = pk.dim %x, 0 : !pk.tensor<?xf32>
  %c1 = arith.constant 1 : index
  pk.tile.foreach (%i) to (%n) step [256] {
    %j = arith.addi %i, %c1 : index
    // expected-error @+1 {{this tile loop reads a tensor at other tiles than it writes}}
    %t = pk.tile.load %x[%j] : !pk.tensor<?xf32> -> !pk.tile<256xf32>
    // expected-note @+1 {{the write}}
    pk.tile.store %t, %x[%i] : !pk.tile<256xf32>, !pk.tensor<?xf32>
  }
  pk.return
}

// -----

// Tests that a loop reading rows of a tensor it scatters rows into is refused: the indices
// are data, so no two iterations provably touch different rows.
pk.kernel @gather_scattered(%x: !pk.tensor<?x?xf32>, %ids: !pk.tensor<?xi32>) {
  %n = pk.dim %ids, 0 : !pk.tensor<?xi32>
  %c0 = arith.constant 0 : index
  pk.tile.foreach (%i) to (%n) step [16] {
    %r = pk.tile.load %ids[%i] : !pk.tensor<?xi32> -> !pk.tile<16xi32>
    // expected-error @+1 {{this tile loop reads a tensor at other tiles than it writes}}
    %t = pk.tile.load_rows %x[%r, %c0] : !pk.tensor<?x?xf32>, !pk.tile<16xi32> -> !pk.tile<16x64xf32>
    // expected-note @+1 {{the write}}
    pk.tile.store_rows %t, %x[%r, %c0] {add} : !pk.tile<16x64xf32>, !pk.tensor<?x?xf32>, !pk.tile<16xi32>
  }
  pk.return
}

// -----

// Tests that a scalar read of a tensor the loop writes is refused (it was a silent race: the
// element may be another iteration's tile).
pk.kernel @scalar_of_written(%x: !pk.tensor<?xf32>, %y: !pk.tensor<?xf32>) {
  %n = pk.dim %x, 0 : !pk.tensor<?xf32>
  %c0 = arith.constant 0 : index
  pk.tile.foreach (%i) to (%n) step [256] {
    // expected-error @+1 {{this tile loop reads a tensor at other tiles than it writes}}
    %s = pk.load_scalar %y[%c0] : !pk.tensor<?xf32> -> f32
    %t = pk.tile.splat %s : f32 -> !pk.tile<256xf32>
    // expected-note @+1 {{the write}}
    pk.tile.store %t, %y[%i] : !pk.tile<256xf32>, !pk.tensor<?xf32>
  }
  pk.return
}

// -----

// Tests that reading a counter the loop claims slots from is refused (claims are atomic among
// themselves only).
pk.kernel @claim_and_read(%ids: !pk.tensor<?xi32>, %fill: !pk.tensor<?xi32>, %out: !pk.tensor<?xi32>) {
  %n = pk.dim %ids, 0 : !pk.tensor<?xi32>
  pk.tile.foreach (%i) to (%n) step [16] {
    %e = pk.tile.load %ids[%i] : !pk.tensor<?xi32> -> !pk.tile<16xi32>
    // expected-note @+1 {{the write}}
    %s = pk.tile.claim %fill[%e] : !pk.tensor<?xi32>, !pk.tile<16xi32> -> !pk.tile<16xi32>
    // expected-error @+1 {{this tile loop reads a tensor at other tiles than it writes}}
    %f = pk.tile.load %fill[%i] : !pk.tensor<?xi32> -> !pk.tile<16xi32>
    %sum = pk.tile.map <add> %s, %f : !pk.tile<16xi32>, !pk.tile<16xi32> -> !pk.tile<16xi32>
    pk.tile.store %sum, %out[%i] : !pk.tile<16xi32>, !pk.tensor<?xi32>
  }
  pk.return
}

// -----

// Tests that an iteration may read and write different places of a cell no other iteration
// touches: both halves of its rows read, then both written (rotary embedding in place).
// CHECK-LABEL: pk.kernel @halves_in_place
pk.kernel @halves_in_place(%x: !pk.tensor<?x?xf32>) {
  %n = pk.dim %x, 0 : !pk.tensor<?x?xf32>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  pk.tile.foreach (%m) to (%n) step [16] {
    %a = pk.tile.load %x[%m, %c0] : !pk.tensor<?x?xf32> -> !pk.tile<16x64xf32>
    %b = pk.tile.load %x[%m, %c64] : !pk.tensor<?x?xf32> -> !pk.tile<16x64xf32>
    pk.tile.store %b, %x[%m, %c0] : !pk.tile<16x64xf32>, !pk.tensor<?x?xf32>
    pk.tile.store %a, %x[%m, %c64] : !pk.tile<16x64xf32>, !pk.tensor<?x?xf32>
  }
  pk.return
}

// -----

// Tests that a read of the cell by a range loop before a second range loop rewrites it is
// accepted when both tiles have one shape (a norm of rows wider than one tile, in place).
// CHECK-LABEL: pk.kernel @norm_chunks_in_place
pk.kernel @norm_chunks_in_place(%x: !pk.tensor<?x?xf32>) {
  %rows = pk.dim %x, 0 : !pk.tensor<?x?xf32>
  %cols = pk.dim %x, 1 : !pk.tensor<?x?xf32>
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  pk.tile.foreach (%m) to (%rows) step [4] {
    scf.for %n = %c0 to %cols step %c256 {
      %t = pk.tile.load %x[%m, %n] : !pk.tensor<?x?xf32> -> !pk.tile<4x256xf32>
    }
    scf.for %n = %c0 to %cols step %c256 {
      %t = pk.tile.load %x[%m, %n] : !pk.tensor<?x?xf32> -> !pk.tile<4x256xf32>
      %s = pk.tile.map <mul> %t, %t : !pk.tile<4x256xf32>, !pk.tile<4x256xf32> -> !pk.tile<4x256xf32>
      pk.tile.store %s, %x[%m, %n] : !pk.tile<4x256xf32>, !pk.tensor<?x?xf32>
    }
  }
  pk.return
}

// -----

// Tests that a read taller than the step leaves the cell: it races with the next iteration's write.
pk.kernel @read_taller_than_step(%x: !pk.tensor<?x?xf32>) {
  %n = pk.dim %x, 0 : !pk.tensor<?x?xf32>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  pk.tile.foreach (%m) to (%n) step [16] {
    // expected-error @+1 {{this tile loop reads a tensor at other tiles than it writes}}
    %a = pk.tile.load %x[%m, %c0] : !pk.tensor<?x?xf32> -> !pk.tile<32x64xf32>
    %b = pk.tile.load %x[%m, %c64] : !pk.tensor<?x?xf32> -> !pk.tile<16x64xf32>
    // expected-note @+1 {{the write}}
    pk.tile.store %b, %x[%m, %c64] : !pk.tile<16x64xf32>, !pk.tensor<?x?xf32>
  }
  pk.return
}

// -----

// Tests that overlapping places of one iteration with tiles of different shapes are refused:
// another thread may hold each element of the read than of the write.
pk.kernel @overlap_other_shape(%x: !pk.tensor<?x?xf32>) {
  %n = pk.dim %x, 0 : !pk.tensor<?x?xf32>
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  pk.tile.foreach (%m) to (%n) step [16] {
    // expected-error @+1 {{this tile loop reads a tensor at other tiles than it writes}}
    %a = pk.tile.load %x[%m, %c0] : !pk.tensor<?x?xf32> -> !pk.tile<16x64xf32>
    %b = pk.tile.load %x[%m, %c32] : !pk.tensor<?x?xf32> -> !pk.tile<16x32xf32>
    // expected-note @+1 {{the write}}
    pk.tile.store %b, %x[%m, %c0] : !pk.tile<16x32xf32>, !pk.tensor<?x?xf32>
  }
  pk.return
}

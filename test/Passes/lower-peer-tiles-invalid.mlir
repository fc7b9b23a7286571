// RUN: pkc-opt %s -split-input-file -pk-lower-peer-tiles -verify-diagnostics
// Tests that a peer tile next to a collective in one kernel is refused at the tile's line.

pk.kernel @with_collective(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>, %z: !pk.sym<?xf32>) {
  %n = pk.dim %x, 0 : !pk.sym<?xf32>
  pk.tile.foreach (%i) to (%n) step [1024] {
    %c0 = arith.constant 0 : index
    %t = pk.tile.load %x[%i] : !pk.sym<?xf32> -> !pk.tile<1024xf32>
    // expected-error @+1 {{this tile is written into a peer in a kernel that also runs a collective}}
    pk.coll.store_tile %t, %y[%i] on %c0 : !pk.tile<1024xf32>, !pk.sym<?xf32>
  }
  // expected-note @+1 {{the collective}}
  pk.coll.all_reduce <sum> %y into %z : !pk.sym<?xf32>, !pk.sym<?xf32>
  pk.return
}

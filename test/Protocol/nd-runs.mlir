// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s
// Element runs (pk.comm.copy offsets) in a 2-D tensor are compared with tiles in the tensor's
// own coordinates: a run is the rows (and part rows) it covers, not a box of element offsets
// beside row indices. pk.model_dims makes the modelled y [3, 8].

// Tests that a run into row 1 of the next rank's y races with that rank's own tile store into
// row 1 (element offsets [8, 16) read as rows used to miss it).
pk.kernel @run_meets_tile(%x: !pk.sym<?x?xf32>, %y: !pk.sym<?x?xf32>) attributes {pk.model_dims = [array<i64: 1, -1, 1, 8>]} {
  pk.worker <communicator> blocks 1 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %d = pk.sync.flag 1 <block> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s = arith.addi %r, %c1 : index
    %next = arith.remsi %s, %w : index
    %peers = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    pk.sync.wait %a, %peers
    %cols = pk.dim %y, 1 : !pk.sym<?x?xf32>
    pk.comm.copy <ldst> %x[%c0] on %r into %y[%cols] on %next count %cols : !pk.sym<?x?xf32>, !pk.sym<?x?xf32>
    %t = pk.tile.load %x[%c0, %c0] : !pk.sym<?x?xf32> -> !pk.tile<1x16xf32>
    // expected-error @+1 {{race for world size 2: rank 0 writes rank 0's copy of argument 1 here while rank 1 writes it}}
    pk.tile.store %t, %y[%c1, %c0] : !pk.tile<1x16xf32>, !pk.sym<?x?xf32>
    pk.sync.signal_all %d
    pk.sync.wait %d, %peers
  }
  pk.return
}

// -----

// Tests that a run into row 0 does not meet a tile store into row 2 (element offsets [0, 8)
// read as rows used to report a race).
pk.kernel @run_beside_tile(%x: !pk.sym<?x?xf32>, %y: !pk.sym<?x?xf32>) attributes {pk.model_dims = [array<i64: 1, -1, 1, 8>]} {
  pk.worker <communicator> blocks 1 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %d = pk.sync.flag 1 <block> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %s = arith.addi %r, %c1 : index
    %next = arith.remsi %s, %w : index
    %peers = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    pk.sync.wait %a, %peers
    %cols = pk.dim %y, 1 : !pk.sym<?x?xf32>
    pk.comm.copy <ldst> %x[%c0] on %r into %y[%c0] on %next count %cols : !pk.sym<?x?xf32>, !pk.sym<?x?xf32>
    %t = pk.tile.load %x[%c0, %c0] : !pk.sym<?x?xf32> -> !pk.tile<1x16xf32>
    pk.tile.store %t, %y[%c2, %c0] : !pk.tile<1x16xf32>, !pk.sym<?x?xf32>
    pk.sync.signal_all %d
    pk.sync.wait %d, %peers
  }
  pk.return
}

// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s
// Seeded bugs: waits whose expected count does not match the signals of one launch.

// Tests that a wait with no signal at all on its flag is reported.
pk.kernel @no_arrive_signal(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    // expected-error @+1 {{wait on flag slot 0 can never complete for world size 2: rank 0 expects 1 signals per launch but at most 0 arrive}}
    pk.sync.wait %a, %p
  }
  pk.return
}

// -----

// Tests that waiting for every rank (the world size) instead of every peer hangs.
pk.kernel @counts_itself(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %w = pk.world_size
    pk.sync.signal_all %a
    // expected-error @+1 {{wait on flag slot 0 can never complete for world size 1: rank 0 expects 1 signals per launch but at most 0 arrive}}
    pk.sync.wait %a, %w
  }
  pk.return
}

// -----

// Tests that a ring signal (one peer) cannot satisfy a wait for all peers from 3 ranks on.
pk.kernel @ring_vs_all(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 2 <block> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    pk.sync.signal %a on %next
    // Alone, a rank signals itself: one arrives where none is expected.
    // expected-error @+2 {{wait on flag slot 2 can be overtaken for world size 1: rank 0 expects 0 signals per launch but 1 arrive}}
    // expected-error @+1 {{wait on flag slot 2 can never complete for world size 3: rank 0 expects 2 signals per launch but at most 1 arrive}}
    pk.sync.wait %a, %p
  }
  pk.return
}

// -----

// Tests that signalling a flag twice per launch lets the next launch's wait pass early.
pk.kernel @double_signal(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    pk.sync.signal_all %a
    // expected-error @+1 {{wait on flag slot 0 can be overtaken for world size 2: rank 0 expects 1 signals per launch but 2 arrive}}
    pk.sync.wait %a, %p
  }
  pk.return
}

// -----

// Tests that a signal inside a tile loop is counted once per tile: with four tiles per
// block the flag outruns a wait that expects one signal per peer.
pk.kernel @signal_per_tile(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    %n = pk.dim %x, 0 : !pk.sym<?xbf16>
    pk.tile.foreach (%i) to (%n) step [4096] {
      pk.sync.signal_all %a
    }
    // Blocks that get no tile send nothing at all:
    // expected-error @+2 {{wait on flag slot 0 can never complete for world size 2: rank 0 expects 1 signals per launch but at most 0 arrive}}
    // expected-error @+1 {{wait on flag slot 0 can be overtaken for world size 2: rank 0 expects 1 signals per launch but 4 arrive}}
    pk.sync.wait %a, %p
  }
  pk.return
}

// -----

// Tests that a <grid> flag counts the signals of every block: two blocks signal, the wait
// expects one per peer.
pk.kernel @grid_flag_many_blocks(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 2 {
    %a = pk.sync.flag 0 <grid> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    // expected-error @+1 {{wait on flag slot 0 can be overtaken for world size 2: rank 0 expects 1 signals per launch but 2 arrive}}
    pk.sync.wait %a, %p
  }
  pk.return
}

// -----

// Tests that a barrier and an extra signal on the same flag overtake the barrier's wait (on a
// <grid> flag the barrier meets every block of every rank: world x blocks signals).
pk.kernel @barrier_shares_flag(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 1 {
    %a = pk.sync.flag 3 <grid> : !pk.flag
    pk.sync.signal_all %a
    // expected-error @+1 {{wait on flag slot 3 can be overtaken for world size 2: rank 0 expects 2 signals per launch but 3 arrive}}
    pk.sync.barrier %a
  }
  pk.return
}

// -----

// Tests that a signal to rank + 1 without wrapping around targets a rank that does not exist.
pk.kernel @peer_out_of_range(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    %next = arith.addi %r, %c1 : index
    // expected-error @+1 {{signal on flag slot 0 targets rank 1, outside [0, 1) for world size 1}}
    pk.sync.signal %a on %next
    pk.sync.wait %a, %p
  }
  pk.return
}

// -----

// Tests that deleting the departure signal of the one-shot all-reduce hangs the departure wait.
pk.kernel @all_reduce_no_depart_signal(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %d = pk.sync.flag 1 <block> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    pk.sync.wait %a, %p
    %n = pk.dim %x, 0 : !pk.sym<?xbf16>
    pk.tile.foreach (%i) to (%n) step [4096] {
      %t = pk.comm.reduce <sum> <ldst> %x[%i] : !pk.sym<?xbf16> -> !pk.tile<4096xbf16>
      pk.tile.store %t, %y[%i] : !pk.tile<4096xbf16>, !pk.tensor<?xbf16>
    }
    // expected-error @+1 {{wait on flag slot 1 can never complete for world size 2: rank 0 expects 1 signals per launch but at most 0 arrive}}
    pk.sync.wait %d, %p
  }
  pk.return
}

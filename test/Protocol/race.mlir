// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s
// Seeded bugs: accesses to symmetric buffers that no wait orders (races and reuse hazards).

// Tests that deleting the departure wait of the one-shot all-reduce is a reuse hazard: a
// rank may finish and have its input rewritten while a peer still reads it.
pk.kernel @all_reduce_no_depart_wait(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
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
      // expected-error @+1 {{reuse hazard for world size 2: rank 1 reads rank 0's copy of argument 0 here, but rank 0 can finish the kernel}}
      %t = pk.comm.reduce <sum> <ldst> %x[%i] : !pk.sym<?xbf16> -> !pk.tile<4096xbf16>
      pk.tile.store %t, %y[%i] : !pk.tile<4096xbf16>, !pk.tensor<?xbf16>
    }
    pk.sync.signal_all %d
  }
  pk.return
}

// -----

// Tests that deleting both departure ops is the same reuse hazard.
pk.kernel @all_reduce_no_depart(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    pk.sync.wait %a, %p
    %n = pk.dim %x, 0 : !pk.sym<?xbf16>
    pk.tile.foreach (%i) to (%n) step [4096] {
      // expected-error @+1 {{reuse hazard for world size 2: rank 1 reads rank 0's copy of argument 0 here}}
      %t = pk.comm.reduce <sum> <ldst> %x[%i] : !pk.sym<?xbf16> -> !pk.tile<4096xbf16>
      pk.tile.store %t, %y[%i] : !pk.tile<4096xbf16>, !pk.tensor<?xbf16>
    }
  }
  pk.return
}

// -----

// Tests that deleting the arrival wait lets a rank read a peer's input before the peer has
// made it ready for this launch.
pk.kernel @all_reduce_no_arrive_wait(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %d = pk.sync.flag 1 <block> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    %n = pk.dim %x, 0 : !pk.sym<?xbf16>
    pk.tile.foreach (%i) to (%n) step [4096] {
      // expected-error @+1 {{race for world size 2: rank 1 reads rank 0's copy of argument 0 here with no wait ordering it after rank 0 made the buffer ready}}
      %t = pk.comm.reduce <sum> <ldst> %x[%i] : !pk.sym<?xbf16> -> !pk.tile<4096xbf16>
      pk.tile.store %t, %y[%i] : !pk.tile<4096xbf16>, !pk.tensor<?xbf16>
    }
    pk.sync.signal_all %d
    pk.sync.wait %d, %p
  }
  pk.return
}

// -----

// Tests that reading a landing buffer before waiting for the peer's signal is a race.
pk.kernel @read_before_wait(%y: !pk.sym<?xf32>, %o: !pk.tensor<?xf32>) {
  pk.worker <communicator> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    %t = pk.tile.zeros : !pk.tile<256xf32>
    // Nothing tells the writer that the owner has read the tile either:
    // expected-error @+1 {{reuse hazard for world size 2: rank 1's next launch writes rank 0's copy of argument 0 here}}
    pk.comm.store_async <ldst> %t, %y[%c0] on %next : !pk.tile<256xf32>, !pk.sym<?xf32>
    pk.sync.signal %f on %next
    // expected-error @+1 {{race for world size 2: rank 0 reads rank 0's copy of argument 0 here while rank 1 writes it}}
    %v = pk.tile.load %y[%c0] : !pk.sym<?xf32> -> !pk.tile<256xf32>
    pk.sync.wait %f, %c1
    pk.tile.store %v, %o[%c0] : !pk.tile<256xf32>, !pk.tensor<?xf32>
  }
  pk.return
}

// -----

// Tests that a landing buffer read after the wait is still reused too early: the next
// launch's store can land while the owner reads this launch's tile (no "done" signal back).
pk.kernel @landing_reuse(%y: !pk.sym<?xf32>, %o: !pk.tensor<?xf32>) {
  pk.worker <communicator> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    %t = pk.tile.zeros : !pk.tile<256xf32>
    // expected-error @+1 {{reuse hazard for world size 2: rank 1's next launch writes rank 0's copy of argument 0 here before rank 0's access}}
    pk.comm.store_async <ldst> %t, %y[%c0] on %next : !pk.tile<256xf32>, !pk.sym<?xf32>
    pk.sync.signal %f on %next
    pk.sync.wait %f, %c1
    %v = pk.tile.load %y[%c0] : !pk.sym<?xf32> -> !pk.tile<256xf32>
    pk.tile.store %v, %o[%c0] : !pk.tile<256xf32>, !pk.tensor<?xf32>
  }
  pk.return
}

// -----

// Tests that two peers storing (not adding) the same tile of one rank's buffer race.
pk.kernel @two_writers(%y: !pk.sym<?xf32>) {
  pk.worker <communicator> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    %t = pk.tile.zeros : !pk.tile<256xf32>
    // expected-error @+1 {{race for world size 2: rank 0 writes rank 0's copy of argument 0 here while rank 1 writes it}}
    pk.comm.store_async <ldst> %t, %y[%c0] on %c0 : !pk.tile<256xf32>, !pk.sym<?xf32>
    pk.sync.signal_all %f
    pk.sync.wait %f, %p
  }
  pk.return
}

// -----

// Tests a race between two workers of one rank: the storer writes a symmetric buffer that
// the communicator reads with no flag between them.
pk.kernel @workers_unordered(%x: !pk.sym<?xf32>, %o: !pk.tensor<?xf32>) {
  pk.worker <storer> blocks 1 {
    %c0 = arith.constant 0 : index
    %t = pk.tile.zeros : !pk.tile<256xf32>
    pk.tile.store %t, %x[%c0] : !pk.tile<256xf32>, !pk.sym<?xf32>
  }
  pk.worker <communicator> blocks 1 {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{race for world size 1: block 1 of rank 0 reads rank 0's copy of argument 0 here while block 0 of rank 0 writes it}}
    %v = pk.tile.load %x[%c0] : !pk.sym<?xf32> -> !pk.tile<256xf32>
    pk.tile.store %v, %o[%c0] : !pk.tile<256xf32>, !pk.tensor<?xf32>
  }
  pk.return
}

// -----

// Tests that an in-kernel all_reduce of a buffer with no arrival wait races with the
// owner's preparation of its input.
pk.kernel @comm_all_reduce_unguarded(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>) {
  pk.worker <communicator> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    // expected-error @+1 {{race for world size 2}}
    pk.comm.all_reduce <sum> <ldst> %x[%c0] into %y {shape = array<i64: 256>} : !pk.sym<?xf32>, !pk.sym<?xf32>
    pk.sync.signal_all %f
    pk.sync.wait %f, %p
  }
  pk.return
}

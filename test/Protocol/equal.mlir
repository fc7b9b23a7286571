// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s
// Seeded bugs: waits that compare a reused flag for equality.

// Tests that an == wait on a per-launch flag is rejected: the next launch's flag value
// has already passed the expected count.
pk.kernel @equal_across_launches(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    // expected-error @+1 {{wait on flag slot 0 compares for equality, but the flag is reused by every launch without a reset}}
    pk.sync.wait %a, %p compare <eq>
  }
  pk.return
}

// -----

// Tests that an == wait inside a tile loop is rejected, naming the loop's reuse as well.
pk.kernel @equal_in_loop(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 1 {
    %a = pk.sync.flag 4 <grid> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    %n = pk.dim %x, 0 : !pk.sym<?xbf16>
    pk.tile.foreach (%i) to (%n) step [4096] {
      pk.sync.signal_all %a
      // expected-error @+2 {{wait on flag slot 4 compares for equality, but the flag is reused by every iteration of the tile loop and every launch}}
      // expected-error @+1 {{wait on flag slot 4 can be overtaken for world size 2}}
      pk.sync.wait %a, %p compare <eq>
    }
  }
  pk.return
}

// -----

// Tests that an == barrier-style wait is rejected even when its counts are right.
pk.kernel @equal_barrier(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 1 {
    %a = pk.sync.flag 2 <grid> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    // expected-error @+1 {{wait on flag slot 2 compares for equality}}
    pk.sync.wait %a, %p compare <eq>
  }
  pk.return
}

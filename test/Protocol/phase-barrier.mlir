// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s
// Tests the grid-wide barrier between dependent phases of one worker: with it, a phase that
// reads (from a peer) what an earlier phase wrote is proved; without it (a seeded removal),
// and with a literal block count instead of pk.grid_blocks, it is not.

// Tests that the barrier orders phase 2's peer reads after every block's phase-1 writes, with
// 132 blocks modelled by stand-ins (the waits count pk.grid_blocks).
pk.kernel @with_barrier(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>, %z: !pk.tensor<?xf32>) {
  pk.worker <communicator> blocks 132 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %d = pk.sync.flag 1 <block> : !pk.flag
    %g = pk.sync.flag 2 <grid> : !pk.flag
    %w = pk.world_size
    %r = pk.rank
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    pk.sync.wait %a, %p
    %n = pk.dim %x, 0 : !pk.sym<?xf32>
    pk.tile.foreach (%i) to (%n) step [1024] {
      %t = pk.tile.load %x[%i] : !pk.sym<?xf32> -> !pk.tile<1024xf32>
      pk.tile.store %t, %y[%i] : !pk.tile<1024xf32>, !pk.sym<?xf32>
    }
    %b = pk.grid_blocks
    %all = arith.muli %w, %b : index
    pk.sync.signal_all %g
    pk.sync.signal %g on %r
    pk.sync.wait %g, %all
    %s = arith.addi %r, %c1 : index
    %next = arith.remsi %s, %w : index
    pk.tile.foreach (%i) to (%n) step [1024] {
      %t = pk.comm.load_peer <ldst> %y[%i] on %next : !pk.sym<?xf32> -> !pk.tile<1024xf32>
      pk.tile.store %t, %z[%i] : !pk.tile<1024xf32>, !pk.tensor<?xf32>
    }
    pk.sync.signal_all %d
    pk.sync.wait %d, %p
  }
  pk.return
}

// -----

// Tests that removing the barrier is a race: a peer's block may still write the tile.
pk.kernel @without_barrier(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>, %z: !pk.tensor<?xf32>) {
  pk.worker <communicator> blocks 132 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %d = pk.sync.flag 1 <block> : !pk.flag
    %w = pk.world_size
    %r = pk.rank
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    pk.sync.signal_all %a
    pk.sync.wait %a, %p
    %n = pk.dim %x, 0 : !pk.sym<?xf32>
    pk.tile.foreach (%i) to (%n) step [1024] {
      %t = pk.tile.load %x[%i] : !pk.sym<?xf32> -> !pk.tile<1024xf32>
      // expected-error @+1 {{race for world size 2: rank 0 writes rank 0's copy of argument 1 here while rank 1 reads it}}
      pk.tile.store %t, %y[%i] : !pk.tile<1024xf32>, !pk.sym<?xf32>
    }
    %s = arith.addi %r, %c1 : index
    %next = arith.remsi %s, %w : index
    pk.tile.foreach (%i) to (%n) step [1024] {
      %t = pk.comm.load_peer <ldst> %y[%i] on %next : !pk.sym<?xf32> -> !pk.tile<1024xf32>
      pk.tile.store %t, %z[%i] : !pk.tile<1024xf32>, !pk.tensor<?xf32>
    }
    pk.sync.signal_all %d
    pk.sync.wait %d, %p
  }
  pk.return
}

// -----

// Tests that a grid barrier counting a literal 132 blocks is not modelled with stand-ins.
pk.kernel @literal_count(%x: !pk.sym<?xf32>) {
  // expected-warning @+1 {{protocol not verified: a <grid> flag is bumped outside a tile loop}}
  pk.worker <communicator> blocks 132 {
    %g = pk.sync.flag 0 <grid> : !pk.flag
    %w = pk.world_size
    %r = pk.rank
    %c132 = arith.constant 132 : index
    %all = arith.muli %w, %c132 : index
    pk.sync.signal_all %g
    pk.sync.signal %g on %r
    pk.sync.wait %g, %all
  }
  pk.return
}

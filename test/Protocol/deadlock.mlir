// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s
// Seeded bugs: signals that all exist but come after waits that need them.

// Tests that waiting for the peers before announcing arrival deadlocks every rank.
pk.kernel @wait_before_signal(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    // expected-error @+1 {{deadlock for world size 2 in launch 1: rank 0 waits on flag slot 0 (0 of 1), rank 1 waits on flag slot 0 (0 of 1)}}
    pk.sync.wait %a, %p
    pk.sync.signal_all %a
  }
  pk.return
}

// -----

// Tests that a ring hand-off with no rank to start it deadlocks: every rank waits for its
// left neighbour before signalling its right neighbour.
pk.kernel @ring_without_start(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 0 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    // expected-error @+1 {{deadlock for world size 1 in launch 1: rank 0 waits on flag slot 0 (0 of 1)}}
    pk.sync.wait %a, %c1
    pk.sync.signal %a on %next
  }
  pk.return
}

// -----

// Tests a cycle across two flags: every rank waits on slot 1 before signalling slot 0,
// and slot 1 is signalled only after the wait on slot 0.
pk.kernel @two_flag_cycle(%x: !pk.sym<?xbf16>) {
  pk.worker <communicator> blocks 1 {
    %f0 = pk.sync.flag 0 <grid> : !pk.flag
    %f1 = pk.sync.flag 1 <grid> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    // expected-error @+1 {{deadlock for world size 2 in launch 1: rank 0 waits on flag slot 1 (0 of 1), rank 1 waits on flag slot 1 (0 of 1)}}
    pk.sync.wait %f1, %p
    pk.sync.signal_all %f0
    pk.sync.wait %f0, %p
    pk.sync.signal_all %f1
  }
  pk.return
}

// -----

// Tests a deadlock between two workers of one kernel on the same rank: the storer waits
// for the communicator, which waits for the storer's peers first.
pk.kernel @workers_wait_each_other(%x: !pk.sym<?xbf16>) {
  pk.worker <storer> blocks 1 {
    %f0 = pk.sync.flag 0 <grid> : !pk.flag
    %f1 = pk.sync.flag 1 <grid> : !pk.flag
    %r = pk.rank
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{deadlock for world size 1 in launch 1: block 0 of rank 0 waits on flag slot 1 (0 of 1), block 1 of rank 0 waits on flag slot 0 (0 of 1)}}
    pk.sync.wait %f1, %c1
    pk.sync.signal %f0 on %r
  }
  pk.worker <communicator> blocks 1 {
    %f0 = pk.sync.flag 0 <grid> : !pk.flag
    %f1 = pk.sync.flag 1 <grid> : !pk.flag
    %r = pk.rank
    %c1 = arith.constant 1 : index
    pk.sync.wait %f0, %c1
    pk.sync.signal %f1 on %r
  }
  pk.return
}


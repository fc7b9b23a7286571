// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s
// Seeded bugs: TMA ordering. A release must follow the bulk group's completion, and a TMA
// read of acquired data must follow a proxy fence.

// Tests that a signal right after a TMA store publishes a tile that may still be in flight.
pk.kernel @tma_store_no_bulk_wait(%y: !pk.sym<?x?xbf16>, %src: !pk.tensor<?x?xbf16>) {
  pk.worker <storer> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    // Every rank has made its buffers ready for this launch before peers write them.
    %go = pk.sync.flag 7 <grid> : !pk.flag
    pk.sync.barrier %go
    %r = pk.rank
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    %t = pk.tile.load %src[%c0, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
    pk.comm.store_async <tma> %t, %y[%c0, %c0] on %next : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    // expected-error @+1 {{release signal on flag slot 0 for world size 1: rank 0's TMA store at}}
    pk.sync.signal %f on %next
    pk.sync.wait %f, %c1
  }
  pk.return
}

// -----

// Tests the same for a TMA reduce-add published with signal_all.
pk.kernel @tma_add_no_bulk_wait(%y: !pk.sym<?x?xbf16>, %src: !pk.tensor<?x?xbf16>) {
  pk.worker <storer> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    // Every rank has made its buffers ready for this launch before peers write them.
    %go = pk.sync.flag 7 <grid> : !pk.flag
    pk.sync.barrier %go
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    %t = pk.tile.load %src[%c0, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
    pk.comm.store_add_async <tma> %t, %y[%c0, %c0] on %c0 : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    // expected-error @+1 {{release signal on flag slot 0 for world size 2: rank 0's TMA store at}}
    pk.sync.signal_all %f
    pk.sync.wait %f, %p
  }
  pk.return
}

// -----

// Tests that a bulk wait placed before the store does not cover it.
pk.kernel @bulk_wait_too_early(%y: !pk.sym<?x?xbf16>, %src: !pk.tensor<?x?xbf16>) {
  pk.worker <storer> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    // Every rank has made its buffers ready for this launch before peers write them.
    %go = pk.sync.flag 7 <grid> : !pk.flag
    pk.sync.barrier %go
    %r = pk.rank
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    %t = pk.tile.load %src[%c0, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
    pk.comm.bulk_wait
    pk.comm.store_async <tma> %t, %y[%c0, %c0] on %next : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    // expected-error @+1 {{may still be in flight; add pk.comm.bulk_wait before the signal}}
    pk.sync.signal %f on %next
    pk.sync.wait %f, %c1
  }
  pk.return
}

// -----

// Tests that a TMA store in a tile loop needs its bulk wait before the signal after the loop.
pk.kernel @tma_loop_no_bulk_wait(%y: !pk.sym<?x?xbf16>, %src: !pk.tensor<?x?xbf16>) {
  pk.worker <storer> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    // Every rank has made its buffers ready for this launch before peers write them.
    %go = pk.sync.flag 7 <grid> : !pk.flag
    pk.sync.barrier %go
    %r = pk.rank
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    %m = pk.dim %y, 0 : !pk.sym<?x?xbf16>
    pk.tile.foreach (%i, %j) to (%m, %m) step [128, 256] {
      %t = pk.tile.load %src[%i, %j] : !pk.tensor<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
      pk.comm.store_async <tma> %t, %y[%i, %j] on %next : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    }
    // expected-error @+1 {{release signal on flag slot 0 for world size 1}}
    pk.sync.signal %f on %next
    pk.sync.wait %f, %c1
  }
  pk.return
}

// -----

// Tests that a TMA load of a peer's published tile right after the wait lacks the proxy fence.
pk.kernel @tma_read_no_fence(%x: !pk.sym<?x?xbf16>, %o: !pk.tensor<?x?xbf16>) {
  pk.worker <loader> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    %g = pk.sync.flag 1 <grid> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    %prev0 = arith.addi %r, %w : index
    %prev1 = arith.subi %prev0, %c1 : index
    %prev = arith.remui %prev1, %w : index
    pk.sync.signal %f on %next
    pk.sync.wait %f, %c1
    // expected-error @+1 {{TMA read after the wait at}}
    %t = pk.comm.load_peer <tma> %x[%c0, %c0] on %prev : !pk.sym<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
    pk.tile.store %t, %o[%c0, %c0] : !pk.tile<128x64xbf16, smem>, !pk.tensor<?x?xbf16>
    pk.sync.signal %g on %prev
    pk.sync.wait %g, %c1
  }
  pk.return
}

// -----

// Tests that a proxy fence before the wait does not order the later TMA read.
pk.kernel @fence_before_wait(%x: !pk.sym<?x?xbf16>, %o: !pk.tensor<?x?xbf16>) {
  pk.worker <loader> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    %g = pk.sync.flag 1 <grid> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    %prev0 = arith.addi %r, %w : index
    %prev1 = arith.subi %prev0, %c1 : index
    %prev = arith.remui %prev1, %w : index
    pk.sync.signal %f on %next
    pk.sync.proxy_fence
    pk.sync.wait %f, %c1
    // expected-error @+1 {{needs pk.sync.proxy_fence between the wait and the read}}
    %t = pk.comm.load_peer <tma> %x[%c0, %c0] on %prev : !pk.sym<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
    pk.tile.store %t, %o[%c0, %c0] : !pk.tile<128x64xbf16, smem>, !pk.tensor<?x?xbf16>
    pk.sync.signal %g on %prev
    pk.sync.wait %g, %c1
  }
  pk.return
}

// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s | FileCheck %s
// RUN: pkc-opt --pk-to-device %specs/all_reduce.mlir | pkc-opt --pk-verify-protocol -verify-diagnostics | FileCheck %s --check-prefix=SHIPPED
// RUN: pkc-opt --pk-to-device --dump-pass-pipeline %specs/all_reduce.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE

// The shipped all-reduce, lowered, verifies clean, and the device pipeline starts with the
// effect ledger and ends with its check and the protocol check.
// SHIPPED-LABEL: pk.kernel @all_reduce
// SHIPPED: pk.sync.wait
// PIPELINE: pk-track-effects
// PIPELINE: pk-lower-collectives
// PIPELINE-NEXT: pk-check-effects
// PIPELINE-NEXT: pk-verify-protocol

// Tests that the one-shot all-reduce protocol verifies for every world size and leaves
// the IR unchanged.
// CHECK-LABEL: pk.kernel @one_shot_all_reduce
// CHECK: pk.sync.signal_all
// CHECK: pk.sync.wait
pk.kernel @one_shot_all_reduce(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
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
    pk.sync.signal_all %d
    pk.sync.wait %d, %p
  }
  pk.return
}

// -----

// Tests that a push into a ring neighbour's landing buffer verifies when the reader sends
// "done" back and the writer waits for it before finishing, and TMA is ordered by
// bulk_wait and proxy_fence.
// CHECK-LABEL: pk.kernel @ring_push
pk.kernel @ring_push(%y: !pk.sym<?x?xbf16>, %src: !pk.tensor<?x?xbf16>, %o: !pk.tensor<?x?xbf16>) {
  pk.worker <storer> blocks 1 {
    %ready = pk.sync.flag 0 <grid> : !pk.flag
    // Every rank has made its buffers ready for this launch before peers write them.
    %go = pk.sync.flag 7 <grid> : !pk.flag
    pk.sync.barrier %go
    %done = pk.sync.flag 1 <grid> : !pk.flag
    %r = pk.rank
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.addi %r, %c1 : index
    %next = arith.remui %n, %w : index
    %m = arith.addi %r, %w : index
    %m1 = arith.subi %m, %c1 : index
    %prev = arith.remui %m1, %w : index
    %t = pk.tile.load %src[%c0, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
    pk.comm.store_async <tma> %t, %y[%c0, %c0] on %next : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    pk.comm.bulk_wait
    pk.sync.signal %ready on %next
    pk.sync.wait %ready, %c1
    pk.sync.proxy_fence
    %v = pk.comm.load_peer <tma> %y[%c0, %c0] on %r : !pk.sym<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
    pk.tile.store %v, %o[%c0, %c0] : !pk.tile<128x256xbf16, smem>, !pk.tensor<?x?xbf16>
    pk.sync.signal %done on %prev
    pk.sync.wait %done, %c1
  }
  pk.return
}

// -----

// Tests that reduce-adds from every rank into one owner need no order among themselves.
// CHECK-LABEL: pk.kernel @adds_commute
pk.kernel @adds_commute(%y: !pk.sym<?xf32>, %o: !pk.tensor<?xf32>) {
  pk.worker <communicator> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    // Every rank has made its buffers ready for this launch before peers write them.
    %go = pk.sync.flag 7 <grid> : !pk.flag
    pk.sync.barrier %go
    %w = pk.world_size
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.subi %w, %c1 : index
    %t = pk.tile.zeros : !pk.tile<256xf32>
    pk.comm.store_add_async <ldst> %t, %y[%c0] on %c0 : !pk.tile<256xf32>, !pk.sym<?xf32>
    pk.sync.barrier %f
  }
  pk.return
}

// -----

// Tests that IR the model cannot evaluate is reported as not verified, not as a bug.
pk.kernel @unmodelled(%x: !pk.sym<?xbf16>, %k: i64) {
  pk.worker <communicator> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    %c = arith.constant 3 : i64
    // expected-warning @+1 {{protocol not verified: the protocol checker cannot evaluate this arith op}}
    %s = arith.shli %k, %c : i64
    %i = arith.index_cast %s : i64 to index
    pk.sync.wait %f, %i
  }
  pk.return
}

// RUN: pkc-opt %s | pkc-opt | FileCheck %s
// Round trip of the ops the protocol checker needs: TMA completion and the proxy fence.

// Tests that bulk_wait and proxy_fence print and parse back.
// CHECK-LABEL: pk.kernel @tma_ordering
pk.kernel @tma_ordering(%c: !pk.sym<?x?xbf16>, %src: !pk.tensor<?x?xbf16>) {
  pk.worker <storer> blocks 1 {
    %f = pk.sync.flag 0 <grid> : !pk.flag
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = pk.tile.load %src[%c0, %c0] : !pk.tensor<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
    pk.comm.store_async <tma> %t, %c[%c0, %c0] on %c1 : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    // CHECK: pk.comm.store_async <tma>
    // CHECK-NEXT: pk.comm.bulk_wait
    // CHECK-NEXT: pk.sync.signal
    pk.comm.bulk_wait
    pk.sync.signal %f on %c1
    pk.sync.wait %f, %c1
    // CHECK: pk.sync.wait
    // CHECK-NEXT: pk.sync.proxy_fence
    // CHECK-NEXT: pk.comm.load_peer <tma>
    pk.sync.proxy_fence
    %p = pk.comm.load_peer <tma> %c[%c0, %c0] on %c1 : !pk.sym<?x?xbf16> -> !pk.tile<128x256xbf16, smem>
  }
  pk.return
}

// Tests that a flag with a run-time slot (slot + offset) prints and parses back.
// CHECK-LABEL: pk.kernel @tile_flags
// CHECK: pk.sync.flag 1 + %{{.*}} <block> : !pk.flag
// CHECK: pk.sync.flag 0 <grid> : !pk.flag
pk.kernel @tile_flags(%n: index) {
  pk.worker <communicator> blocks 1 {
    %f = pk.sync.flag 1 + %n <block> : !pk.flag
    %g = pk.sync.flag 0 <grid> : !pk.flag
    %c1 = arith.constant 1 : index
    pk.sync.signal %f on %c1
    pk.sync.wait %g, %c1
  }
  pk.return
}

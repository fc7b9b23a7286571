// RUN: pkc %s --emit=cuda -o - | FileCheck %s
// Tests the emission of the ordering ops: a completed bulk group and the proxy fence.

// CHECK-LABEL: extern "C" __global__
// CHECK: pk::bulk_wait_complete();
// CHECK-NEXT: pk::proxy_fence_after_wait();
pk.kernel @fences() attributes {pk.level = "device"} {
  pk.worker <communicator> blocks 1 {
    pk.comm.bulk_wait
    pk.sync.proxy_fence
  }
  pk.return
}

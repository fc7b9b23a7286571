// RUN: pkc %s --emit=cuda -o - | FileCheck %s
// Tests that a launch-time argument check reports once and leaves before any signal.

// CHECK: // pk-check 0: pk.coll.all_gather: the output must hold world_size times the input's elements
// CHECK-NEXT: if (!([[OK:p[0-9]+]])) {
// CHECK-NEXT: if (blockIdx.x == 0 && threadIdx.x == 0) pk::report_check_failure(ctx, 0, {{.*}}, {{.*}});
// CHECK-NEXT: return;
// CHECK-NEXT: }
// CHECK: pk::signal_all
pk.kernel @ag(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

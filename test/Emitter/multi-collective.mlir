// RUN: pkc %s -o - | FileCheck %s
// Text tier: a kernel with more than one collective.

// Tests that a kernel with two collectives keeps the direct path only (the one-round path
// would share the kernel's landing buffer between them), and its waits count every launch.
// CHECK-LABEL: // Kernel 'two_collectives', decisions taken:
// CHECK: no one-round path: the kernel has 2 collectives
// CHECK: // pk-launch two_collectives
// CHECK-NOT: push_small
// CHECK: pk::wait_ge(ctx, {{flag[0-9]+}}, ctx.epoch *
// CHECK-NOT: push_small
pk.kernel @two_collectives(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>, %w: !pk.sym<?xf32>,
                           %z: !pk.tensor<?xf32>) {
  pk.coll.all_gather %x into %y : !pk.sym<?xf32>, !pk.sym<?xf32>
  pk.coll.reduce_scatter <min> %w into %z : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

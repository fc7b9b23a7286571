// RUN: pkc %s --emit=cuda -o - | FileCheck %s
// Tests that a launch-time argument check reports once and leaves before any signal, and that
// pkc writes it for the host as well.

// The host evaluates the same check before a launch (the launchers and the JIT read this line).
// CHECK: // pk-launch ag
// CHECK-NEXT: // pk-host-check ag 0 if=eq(mul(world,dim(0,0)),dim(1,0)) expected=mul(world,dim(0,0)) actual=dim(1,0) pk.coll.all_gather: the output must hold world_size times the input's elements
// CHECK-NEXT: extern "C" __global__
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

// A rooted collective's root check reads a scalar argument; each kernel numbers its own checks.
// CHECK-LABEL: // pk-launch bc
// CHECK-NEXT: // pk-host-check bc 0 if=eq(dim(0,0),dim(1,0)) expected=dim(0,0) actual=dim(1,0) pk.coll.broadcast: input and output must have the same element count
// CHECK-NEXT: // pk-host-check bc 1 if=ult(arg(2),world) expected=world actual=arg(2) pk.coll.broadcast: the root must be a rank below world_size
// CHECK: // pk-check 0: pk.coll.broadcast: input and output
// CHECK: // pk-check 1: pk.coll.broadcast: the root
pk.kernel @bc(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>, %root: index) {
  pk.coll.broadcast %x into %y root %root : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// RUN: pkc %s --emit=device-mlir 2>&1 | FileCheck %s
// RUN: pkc %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests that a collective between grid-wide barriers of a phased kernel pays no arrival round
// after the barrier before it and no departure round before the barrier after it (the
// barriers already order every block of every rank around its pulls), that a collective with
// no barrier on one side keeps that side's round, and that the protocol checker proves both
// (no warning).
#include <pk/spec.h>
using namespace pk;

// Compute -> all-reduce -> compute: two grid-wide barriers and no collective rounds at all.
// CHECK-LABEL: pk.kernel @phased_norm
// CHECK-NOT: <block>
// CHECK: pk.sync.flag {{[0-9]+}} <grid>
// CHECK: pk.sync.wait
// CHECK-NOT: pk.sync
// CHECK: pk.comm.reduce_into
// CHECK-NOT: <block>
// CHECK: pk.sync.flag {{[0-9]+}} <grid>
// CHECK-NOT: <block>
// CHECK: pk.return
// EXPLAIN-LABEL: decisions for kernel 'phased_norm'
// EXPLAIN: pk.coll.all_reduce at {{.*}}phase-rounds.cpp:[[@LINE+8]]:3: no arrival or departure round: the grid-wide barrier beside the collective
// EXPLAIN: each block reads the peers' symmetric inputs directly into the destination in {{[0-9]+}}-element tiles (no staging buffer)
// EXPLAIN-NOT: warning
PK_KERNEL void phased_norm(Tensor<f32, 2> x, Sym<f32, 2> ss, Sym<f32, 2> total, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 256>(x, m, 0);
    store(ss, row_sum(t * t), m, 0);
  }
  all_reduce(Sum, ss, total);
  for (auto m : tiles(x.rows(), {8})) store(y, load<8, 256>(x, m, 0) * load<8, 1>(total, m, 0), m, 0);
}

// All-reduce -> all-gather: the first keeps its arrival (nothing before it), the second its
// departure (nothing after it); the barrier between them replaces the other two rounds.
// CHECK-LABEL: pk.kernel @ar_then_ag
// CHECK: %[[A:.*]] = pk.sync.flag {{[0-9]+}} <block>
// CHECK: pk.sync.signal_all %[[A]]
// CHECK: pk.comm.reduce_into
// CHECK: %[[G:.*]] = pk.sync.flag {{[0-9]+}} <grid>
// CHECK: pk.sync.signal_all %[[G]]
// CHECK: pk.sync.wait %[[G]]
// CHECK-NEXT: %[[D:.*]] = pk.sync.flag {{[0-9]+}} <block>
// CHECK-NOT: pk.sync
// CHECK: pk.comm.copy
// CHECK-NOT: pk.sync
// CHECK: pk.sync.signal_all %[[D]]
// CHECK: pk.return
// EXPLAIN-LABEL: decisions for kernel 'ar_then_ag'
// EXPLAIN: pk.coll.all_reduce at {{.*}}: no departure round
// EXPLAIN: pk.coll.all_gather at {{.*}}: no arrival round
// EXPLAIN-NOT: warning
PK_KERNEL void ar_then_ag(Sym<bf16, 1> x, Sym<bf16, 1> y, Sym<bf16, 1> z) {
  all_reduce(Sum, x, y); all_gather(y, z);
}

// Two independent collectives keep the direct path only (they would share the landing buffer),
// and the explain says that separate kernels keep the one-round paths (set 37, finding 3).
// EXPLAIN-LABEL: decisions for kernel 'two_collectives'
// EXPLAIN: no one-round path: the kernel has 2 collectives, which would share its landing buffer (as separate kernels each keeps its one-round paths)
PK_KERNEL void two_collectives(Sym<bf16, 1> a, Sym<bf16, 1> b, Sym<f32, 1> c, Sym<f32, 1> d) {
  all_gather(a, b);
  all_reduce(Sum, c, d);
}

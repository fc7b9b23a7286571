// RUN: pkc %s --emit=device-mlir 2>&1 | FileCheck %s
// RUN: pkc %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests that tiles written into peers and collectives share a kernel: the phases run in one
// worker, a phase that writes into peers has a grid-wide barrier before it and one after the
// last such phase, the protocol checker proves the result (test/Protocol/peer-tile-phases.mlir
// removes each barrier and is caught), and the kernels compile for sm_90a.
#include <pk/spec.h>
using namespace pk;

// A ring shift of tiles, then an all-reduce of what arrived.
// CHECK-LABEL: pk.kernel @shift_then_ar
// CHECK-COUNT-1: pk.worker <communicator> blocks 132
// CHECK: %[[G0:.*]] = pk.sync.flag {{[0-9]+}} <grid>
// CHECK: pk.sync.wait %[[G0]]
// CHECK: pk.tile.foreach
// CHECK: pk.comm.store_async <ldst>
// CHECK: %[[G1:.*]] = pk.sync.flag {{[0-9]+}} <grid>
// CHECK: pk.sync.wait %[[G1]]
// CHECK: pk.comm.reduce_into
// CHECK-NOT: pk.worker
// CHECK: pk.return
// EXPLAIN-LABEL: decisions for kernel 'shift_then_ar'
// EXPLAIN: pk.tile.foreach at {{.*}}peer-tile-phases.cpp:[[@LINE+4]]:3: this phase writes tiles into peers' copies (or reads rows from them): a grid-wide barrier first
// EXPLAIN: pk.coll.all_reduce at {{.*}}peer-tile-phases.cpp:[[@LINE+5]]:3: this phase uses a tensor an earlier phase of the kernel wrote
// EXPLAIN: (2 grid-wide barriers between dependent phases)
PK_KERNEL void shift_then_ar(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y.on(next_rank()), load<16, 256>(x, m, n), m, n);
  all_reduce(Sum, y, z);
}

// An all-reduce, then tiles of its result added into rank 0: the barrier before the adds
// orders them after the all-reduce, the one after keeps rank 0 in the kernel until they land.
// CHECK-LABEL: pk.kernel @ar_then_add
// CHECK: pk.comm.reduce_into
// CHECK: %[[G0:.*]] = pk.sync.flag {{[0-9]+}} <grid>
// CHECK: pk.sync.wait %[[G0]]
// CHECK: pk.comm.store_add_async <ldst>
// CHECK: %[[G1:.*]] = pk.sync.flag {{[0-9]+}} <grid>
// CHECK: pk.sync.wait %[[G1]]
// CHECK-NEXT: }
// CHECK-NEXT: pk.return
// EXPLAIN-LABEL: decisions for kernel 'ar_then_add'
// EXPLAIN: pk.tile.foreach at {{.*}}: the last phase that writes into peers (or reads from them): a grid-wide barrier after it
PK_KERNEL void ar_then_add(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z) {
  all_reduce(Sum, x, y);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 256}))
    store_add(z.on(0), load<16, 256>(y, m, n) * 2.0f, m, n);
}

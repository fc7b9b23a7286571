// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests that peer tiles of general tile loops lower with the three rules stated: ld/st from
// registers, inside the computing block, one-way flags around the kernel; and that the
// protocol checker proves them (no warning) and the result compiles for sm_90a.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: decisions for kernel 'ring_shift'
// CHECK: rule 3 (one-way sync): pk.kernel {{.*}}tiles or rows written into or read from peers
// CHECK: rule 1 (transport): pk.coll.store_tile at {{.*}}peer-tiles-explain.cpp:[[@LINE+5]]:5: ldst: a register tile
// CHECK: rule 2 (overlap): pk.coll.store_tile {{.*}}intra_sm
// CHECK-NOT: warning
PK_KERNEL void ring_shift(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64}))
    store(y.on(next_rank()), load<64, 64>(x, m, n), m, n);
}

// CHECK-LABEL: decisions for kernel 'add_to_owner'
// CHECK: rule 1 (transport): pk.coll.add_tile {{.*}}red.global.add
// CHECK-NOT: warning
PK_KERNEL void add_to_owner(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64}))
    store_add(y.on(0), exp(load<32, 64>(x, m, n)), m, n);
}

// Tiles pulled from peers (`load(x.on(p), ...)`): register loads, the same flags.
// CHECK-LABEL: decisions for kernel 'pull'
// CHECK: rule 3 (one-way sync): pk.kernel {{.*}}tiles or rows written into or read from peers
// CHECK: rule 1 (transport): pk.comm.load_peer at {{.*}}peer-tiles-explain.cpp:[[@LINE+4]]:14: ldst: a register tile of the general path pulled
// CHECK-NOT: warning
PK_KERNEL void pull(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64}))
    store(y, load<32, 64>(x.on(prev_rank()), m, n), m, n);
}

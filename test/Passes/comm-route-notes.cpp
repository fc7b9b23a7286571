// RUN: pkc %s --allow-multicast --explain -o %t.cu 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=CUDA --input-file=%t.cu
// Tests what --explain says of two communication routes (set 37 findings 5 and 6): a collective
// allowed multicast is lowered to register pulls, and says so (no multimem instruction in the
// CUDA); a peer tile under 128 bytes gets a note on its size.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: decisions for kernel 'ar_multicast'
// CHECK: transport 'multimem' is lowered as ldst: no lowering uses multicast yet (pkc's runtime maps no multicast addresses)
// CUDA-NOT: pk::{{[a-z_]*}}multimem
PK_KERNEL void ar_multicast(Sym<f32, 1> x, Sym<f32, 1> y) { all_reduce(Sum, x, y); }

// CHECK-LABEL: decisions for kernel 'tiny_ring_shift'
// CHECK: rule 1 (transport): pk.coll.store_tile at {{.*}}: the tile is 32 bytes: one thread moves it
PK_KERNEL void tiny_ring_shift(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {8})) store(y.on(next_rank()), load<8>(x, i), i);
}

// CHECK-LABEL: decisions for kernel 'ring_shift'
// CHECK-NOT: bytes: one thread moves it
// CHECK: pkc: wrote
PK_KERNEL void ring_shift(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {4096})) store(y.on(next_rank()), load<4096>(x, i), i);
}

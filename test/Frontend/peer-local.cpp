// RUN: pkc %s --emit=mlir -o - | FileCheck %s
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests a peer's copy named once in a local (`auto ny = y.on(next_rank());`, the type
// pk/spec.h's Sym::on returns) and used by later loads and stores, as if `.on(p)` were written
// there with p's value at the declaration.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @ring_shift
// CHECK: %[[ME:.*]] = pk.rank
// CHECK: %[[NEXT:.*]] = arith.remsi
// CHECK: pk.tile.foreach
// CHECK: pk.coll.store_tile %{{.*}}, %arg1[%{{.*}}, %{{.*}}] on %[[NEXT]]
PK_KERNEL void ring_shift(Tensor<f32, 2> x, Sym<f32, 2> y) {
  auto ny = y.on(next_rank());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(ny, load<16, 128>(x, m, n), m, n);
}

// CHECK-LABEL: pk.kernel @pull_prev
// CHECK: pk.comm.load_peer
PK_KERNEL void pull_prev(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  auto px = x.on(prev_rank());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store(y, prim::load_peer<32, 128>(Ldst, px, m, n), m, n);
  prim::barrier(prim::flag(1));
}

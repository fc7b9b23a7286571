// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pkc %s --allow-multicast -o - | FileCheck %s
// Tests that a reduction primitive the spec asks to run by Multimem reads every rank's copy by
// ld/st (pkc's runtime maps no multicast addresses, even when multicast is allowed) and that
// --explain says why; the code has no multimem instruction.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: mm_reduce(
// CHECK: pk::reduce_tile<pk::ReduceOp::sum>(ctx, arg0,
// EXPLAIN-LABEL: decisions for kernel 'mm_reduce'
// EXPLAIN: rule 1 (transport): pk.comm.reduce at {{.*}}prim-multimem-ldst.cpp:[[@LINE+3]]:51: ldst: the spec asks for Multimem, but pkc's runtime maps no multicast addresses
PK_KERNEL void mm_reduce(Sym<f32, 1> x, Tensor<f32, 1> y) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {4096})) store(y, prim::reduce<4096>(Sum, Multimem, x, i), i);
  prim::barrier(prim::flag(1));
}

// CHECK-LABEL: mm_all_reduce(
// CHECK: pk::tile::load_reduce<pk::ReduceOp::max>(
// CHECK: for (int r = 0; r < ctx.world; ++r) pk::tile::store(
// EXPLAIN-LABEL: decisions for kernel 'mm_all_reduce'
// EXPLAIN: rule 1 (transport): pk.comm.all_reduce at {{.*}}prim-multimem-ldst.cpp:[[@LINE+5]]:5: ldst: the spec asks for Multimem
PK_KERNEL void mm_all_reduce(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  prim::barrier(prim::flag(0));
  index rows = x.rows() / world_size();  // each rank reduces its own band of rows
  for (auto [m, n] : tiles(rows, x.cols(), {1, 256}))
    prim::all_reduce<1, 256>(Max, Multimem, x, y, m + rank() * rows, n);
  prim::barrier(prim::flag(1));
}
// CHECK-NOT: multimem

// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pkc %s --allow-multicast -o - | FileCheck %s
// Tests that a reduction primitive the spec asks to run by Multimem reads every rank's copy by
// ld/st (pkc's runtime maps no multicast addresses, even when multicast is allowed) and that
// --explain says why; the code has no multimem instruction.
#include <pk/spec.h>
using namespace pk;

// The fused reduce-and-store moves only what lies inside both x and y (a shorter y, an origin
// before 0: test/specs/audit3_findings.md, finding 2).
// CHECK-LABEL: mm_reduce(
// CHECK: const long long [[LO:pk_lo[0-9]+]] = [[I:[a-z0-9]+]] < 0 ? -[[I]] : 0;
// CHECK-NEXT: const long long [[N:pk_n[0-9]+]] = min(min(4096LL, arg0.numel - [[I]]), arg1.numel - [[I]]) - [[LO]];
// CHECK-NEXT: if ([[N]] > 0) pk::reduce_tile<pk::ReduceOp::sum>(ctx, arg0, [[I]] + [[LO]], [[N]], arg1.data + [[I]] + [[LO]]);
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

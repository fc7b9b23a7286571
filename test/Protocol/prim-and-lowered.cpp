// RUN: pkc %s -o - 2>&1 | FileCheck %s
// Tests that a spec's own pk::prim flags and the flags pkc adds for a collective or for tiles
// stored into peers never share a slot (the spec's move up past pkc's), and that the spec's
// protocol around a lowered collective is proved, not skipped.
#include <pk/spec.h>
using namespace pk;
// CHECK-NOT: warning
// CHECK-LABEL: void __launch_bounds__(512, 1) prim_and_collective(
// CHECK: const int [[U0:flag[0-9]+]] = 8 * gridDim.x + blockIdx.x;
// CHECK: pk::barrier(ctx, [[U0]])
// CHECK: worker <communicator>
// CHECK: const int {{flag[0-9]+}} = 0 * gridDim.x + blockIdx.x;
// CHECK: const int [[U1:flag[0-9]+]] = 9 * gridDim.x + blockIdx.x;
// CHECK: pk::barrier(ctx, [[U1]])
PK_KERNEL void prim_and_collective(Sym<f32, 1> x, Sym<f32, 1> y) {
  prim::barrier(prim::flag(0));
  all_reduce(Sum, x, y);
  prim::barrier(prim::flag(1));
}

// CHECK-LABEL: prim_and_peer_tiles(
// CHECK: const int {{flag[0-9]+}} = 0 * gridDim.x + blockIdx.x;
// CHECK: const int {{flag[0-9]+}} = 1 * gridDim.x + blockIdx.x;
// CHECK: const int {{flag[0-9]+}} = 2 * gridDim.x + blockIdx.x;
// CHECK: const int {{flag[0-9]+}} = 3 * gridDim.x + blockIdx.x;
PK_KERNEL void prim_and_peer_tiles(Tensor<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y.on(next_rank()), load<16, 32>(x, m, n), m, n);
  prim::barrier(prim::flag(1));
}

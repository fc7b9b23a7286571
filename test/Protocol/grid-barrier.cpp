// RUN: pkc %s -o - 2>&1 | FileCheck %s
// RUN: not pkc %s -o /dev/null -DROWS 2>&1 | FileCheck %s --check-prefix=ROWS
// Tests that prim::barrier on a Grid flag is a grid-wide barrier (every block of every rank
// bumps the flag on every rank, itself too, and waits for all of them), so a spec with its own
// flags can order a tile loop before a collective that reads its result; and that the checker
// models several tiles along every dimension of a spec's own protocol, so a flag per row of
// tiles waited on once per tile is caught (the columns' tiles overtake it).
#include <pk/spec.h>
using namespace pk;
#ifndef ROWS
// CHECK-NOT: error
// CHECK-NOT: warning
// CHECK: pk::signal_all(ctx, [[G:flag[0-9]+]]); pk::signal(ctx, ctx.rank, [[G]]);
// CHECK-NEXT: pk::wait_ge(ctx, [[G]], ctx.epoch * (unsigned long long)(ctx.world) * gridDim.x)
PK_KERNEL void scale_then_gather(Sym<f32, 2> x, Sym<f32, 2> s, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 64})) store(s, load<16, 64>(x, m, n) * 2.0f, m, n);
  prim::barrier(prim::flag(1, Grid));
  all_gather(s, y);
}
#else
PK_KERNEL void row_flags(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto f = prim::flag(1 + m / 16, Grid);
    auto t = load<16, 128>(x, m, n);
    prim::store_async(Ldst, y.on(next_rank()), t, m, n);
    prim::signal(f, next_rank());
// ROWS: grid-barrier.cpp:[[@LINE+1]]:5: error: wait on flag slot 1 can be overtaken
    prim::wait(f, 1);
    store(out, load<16, 128>(y, m, n) + t, m, n);
  }
  prim::barrier(prim::flag(14));
}
#endif

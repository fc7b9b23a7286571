// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// RUN: not pkc %s -o /dev/null -DBLOCKS 2>&1 | FileCheck %s --check-prefix=BLOCKS
// Tests that protocol errors name a spec's flag by the slot the spec wrote, with the slot pkc
// moved it to (above a collective's flags) beside it; and that a race between two blocks of
// one rank names the blocks and says that only a grid-wide barrier orders them.
#include <pk/spec.h>
using namespace pk;
#ifndef BLOCKS
PK_KERNEL void reused_slot(Sym<f32, 2> x, Sym<f32, 2> s, Sym<f32, 2> y, Tensor<f32, 2> out) {
  all_reduce(Sum, x, s);
// CHECK: spec-flag-messages.cpp:[[@LINE+1]]:3: error: wait on flag slot 0 (slot {{[1-9][0-9]*}} after pkc's own flags) can be overtaken for world size 2
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 128})) {
    auto ready = prim::flag(1 + m / 16 * ((s.cols() + 127) / 128) + n / 128);
    auto t = load<16, 128>(s, m, n);
    prim::store_async(Ldst, y.on(next_rank()), t, m, n);
    prim::signal(ready, next_rank());
    prim::wait(ready, 1);
    store(out, load<16, 128>(y, m, n) + t, m, n);
  }
  prim::barrier(prim::flag(0));
}
#else
PK_KERNEL void no_grid_barrier(Sym<f32, 2> x, Sym<f32, 2> s, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 64}))
// BLOCKS: spec-flag-messages.cpp:[[@LINE+2]]:3: error: race for world size 1: block {{[0-9]+}} of rank 0 reads rank 0's copy of argument 1 (s) here while block {{[0-9]+}} of rank 0 writes it at {{.*}}spec-flag-messages.cpp:[[@LINE+1]]:5, with no wait ordering the two; blocks of one rank are ordered only by a grid-wide barrier
    store(s, load<16, 64>(x, m, n) * 2.0f, m, n);
  all_gather(s, y);
}
#endif

// RUN: pkc %s --emit=cubin -o %t.cubin 2>&1 | FileCheck %s --allow-empty
// Tests that kernels written with the explicit primitives (no worker: the whole body runs on
// the general grid) and rooted collectives (a root constant outside the worker) are modelled
// and proved, not skipped with a "protocol not verified" warning, and compile for sm_90a.
#include <pk/spec.h>
using namespace pk;

// CHECK-NOT: warning
// A pull between two barriers: every rank's x is ready before any peer reads it, and no rank
// leaves (letting its x be reused) before every peer finished reading.
PK_KERNEL void pull(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64}))
    store(y, prim::load_peer<64, 64>(Ldst, x.on(prev_rank()), m, n), m, n);
  prim::barrier(prim::flag(1));
}

// A push between two barriers.
PK_KERNEL void push(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64}))
    prim::store_async(Ldst, y.on(next_rank()), load<64, 64>(x, m, n), m, n);
  prim::barrier(prim::flag(1));
}

PK_KERNEL void bcast(Sym<f32, 1> x, Sym<f32, 1> y) { broadcast(x, y, 0); }
PK_KERNEL void to_root(Sym<bf16, 1> x, Sym<bf16, 1> y) { reduce(Sum, x, y, 1); }

// A 2-D tile reduced over the ranks into registers, scaled, stored locally.
PK_KERNEL void reduce_2d(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y, prim::reduce<16, 256>(Sum, Ldst, x, m, n) * 0.5f, m, n);
  prim::barrier(prim::flag(1));
}

// A hand-written all-reduce of 2-D rows: each rank reduces its own share of rows into every
// rank's copy (disjoint writes, so no race).
PK_KERNEL void all_reduce_rows(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows() / world_size(), x.cols(), {1, 256}))
    prim::all_reduce<1, 256>(Max, Ldst, x, y, m + rank() * (x.rows() / world_size()), n);
  prim::barrier(prim::flag(1));
}

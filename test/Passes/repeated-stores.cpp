// RUN: pkc %s -o - 2>&1 | FileCheck %s
// RUN: not pkc %s -o /dev/null -DCONSTANT 2>&1 | FileCheck %s --check-prefix=CONSTANT
// Tests that a store whose place ignores one of the tile loop's dimensions (every tile along
// it writes the same place, in no order) gets a launch check that the loop has one tile along
// that dimension (host and device), naming the store; a tile sent to a peer counts its rank as
// part of the place; a larger constant extent is an error at compile time.
#include <pk/spec.h>
using namespace pk;
#ifndef CONSTANT
// CHECK-LABEL: pk-launch rows_only
// CHECK: pk-host-check rows_only 0 if=sle(dim(0,1),256) expected=256 actual=dim(0,1) the store at {{.*}}repeated-stores.cpp:[[@LINE+3]]:60 does not depend on the tile loop's dimension 1
// CHECK: if (!(
PK_KERNEL void rows_only(Tensor<f32, 2> x, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) store(s, row_sum(load<16, 256>(x, m, n)), m, 0);
}

// The same element of every rank's counts (the sender's row of them, as moe_dispatch writes):
// the rank is part of the place, so no check.
// CHECK-LABEL: pk-launch to_every_rank
// CHECK-NOT: pk-host-check to_every_rank
// CHECK: extern "C"
PK_KERNEL void to_every_rank(Tensor<f32, 1> c, Sym<f32, 1> counts) {
  for (auto [p, l] : tiles(world_size(), c.size(), {1, 1}))
    store(counts.on(p), load<1>(c, l), rank() * c.size() + l);
}
#else
PK_KERNEL void fixed(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), 64, {16, 32}))
// CONSTANT: repeated-stores.cpp:[[@LINE+1]]:5: error: every tile along dimension 1 of the tile loop (64 / 32 tiles) writes the same place here
    store(y, load<16, 32>(x, m, 0), m, 0);
}
#endif

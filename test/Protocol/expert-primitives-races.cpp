// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests that hand-written primitive kernels missing a barrier are refused at the access the
// protocol checker finds unordered.
#include <pk/spec.h>
using namespace pk;

// No barrier before the push: a fast rank writes a peer's y while that peer's previous kernel
// may still use it.
// CHECK: expert-primitives-races.cpp:[[@LINE+4]]:5: error: race for world size 2: rank 1 writes rank 0's copy of argument 1 ({{[a-z_0-9]+}}) here with no wait ordering it after rank 0 made the buffer ready for this launch
PK_KERNEL void push_early(Sym<f32, 2> x, Sym<f32, 2> y) {
  auto f = prim::flag(0);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64}))
    prim::store_async(Ldst, y.on(next_rank()), load<64, 64>(x, m, n), m, n);
  prim::barrier(f);
}

// No barrier after the pull: a rank may leave, and its x be reused, while a peer still reads it.
// CHECK: expert-primitives-races.cpp:[[@LINE+4]]:14: error: reuse hazard for world size 2: rank 1 reads rank 0's copy of argument 0 ({{[a-z_0-9]+}}) here, but rank 0 can finish the kernel
PK_KERNEL void pull_late(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64}))
    store(y, prim::load_peer<64, 64>(Ldst, x.on(prev_rank()), m, n), m, n);
}

// Every rank writes the same tiles of every rank's y: the writes race (even with equal values).
// CHECK: expert-primitives-races.cpp:[[@LINE+4]]:5: error: race for world size 2: rank 0 writes rank 0's copy of argument 1 ({{[a-z_0-9]+}}) here while rank 1 writes it
PK_KERNEL void all_reduce_everywhere(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::all_reduce<16, 256>(Max, Ldst, x, y, m, n);
  prim::barrier(prim::flag(1));
}

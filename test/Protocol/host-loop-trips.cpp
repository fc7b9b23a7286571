// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// RUN: pkc %s -o /dev/null -DFIXED 2>&1 | FileCheck %s --check-prefix=FIXED
// Tests that the protocol checker models the trips a host loop makes (pk.trips: the first, and
// the second at small world sizes), not an integer argument's stand-in value: a hand ring pass
// whose blocks sit at b * rows + m races at a block's last tile, and the report names real rows
// (a tile read past its block, at trip 0) with the fix; the fixes compile (set 34, finding 2).
#include <pk/spec.h>
using namespace pk;
#ifndef FIXED
// CHECK: host-loop-trips.cpp:[[@LINE+6]]:32: error: race for world size 2: rank 0 reads rank 0's copy of argument 1 (y) here while rank 1 writes it at {{.*}}, with no wait ordering the two: rank 0 reads a tile at rows [48, 64) that reaches into rows [49, 65) rank 1 stores (a load clips only at the end of the tensor it reads
PK_KERNEL void ring_rows(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), rank() * x.rows() + m, n);
  for (auto s : range(0, world_size() - 1, 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
      auto b = (rank() + world_size() - s) % world_size();
      store(y.on(next_rank()), load<16, 64>(y, b * x.rows() + m, n), b * x.rows() + m, n);
    }
}
#else
// FIXED-NOT: error
// FIXED-NOT: warning
// FIXED: pkc: wrote
// The blocks in a dimension of their own: y [W, R, C].
PK_KERNEL void ring_blocks(Sym<f32, 2> x, Sym<f32, 3> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, reshape<1, 16, 64>(load<16, 64>(x, m, n)), rank(), m, n);
  for (auto s : range(0, world_size() - 1, 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
      auto b = (rank() + world_size() - s) % world_size();
      store(y.on(next_rank()), load<1, 16, 64>(y, b, m, n), b, m, n);
    }
}
// Blocks a whole number of tiles apart.
PK_KERNEL void ring_padded(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n), rank() * ((x.rows() + 15) / 16 * 16) + m, n);
  for (auto s : range(0, world_size() - 1, 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
      auto b = (rank() + world_size() - s) % world_size() * ((x.rows() + 15) / 16 * 16);
      store(y.on(next_rank()), load<16, 64>(y, b + m, n), b + m, n);
    }
}
// Bounds from integer arguments (which the model ties to one value): the trips are modelled
// anyway, not reported unverified.
PK_KERNEL void trips_from_arguments(Sym<f32, 2> x, Sym<f32, 3> y, index a, index b) {
  for (auto s : range(a, min(b, world_size()), 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(y.on(prev_rank()), reshape<1, 16, 64>(load<16, 64>(x, m, n) * float(s)), s - a, m, n);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(x, load<16, 64>(x, m, n) + reshape<16, 64>(load<1, 16, 64>(y, s - a, m, n)), m, n);
  }
}
#endif

// RUN: pkc %s -o - | FileCheck %s
// Tests where a tile moved to or from rank p is guarded by pk::peer_in_range: a rank computed
// from data or arithmetic is checked at run time (error code 4, the access skipped), while a
// loop over the peers (from 0 to world_size()) and this rank itself are in range by
// construction and keep their accesses unguarded.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: gather_from_peers(
// CHECK-NOT: peer_in_range
// CHECK: pk::tile::load({{tile[0-9]+}}, arg0.peer[
// CHECK-LABEL: push_to_owner(
PK_KERNEL void gather_from_peers(Sym<f32, 2> x, Tensor<f32, 2> sum) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto p : range(0, world_size())) acc = acc + load<16, 128>(x.on(p), m, n);
    store(sum, acc, m, n);
  }
}

// CHECK: if (pk::peer_in_range(ctx, {{v[0-9]+}})) { {{.*}} pk::tile::store_add(
PK_KERNEL void push_to_owner(Sym<f32, 2> part, Sym<f32, 2> acc, index shift) {
  for (auto [m, n] : tiles(part.rows(), part.cols(), {32, 128}))
    store_add(acc.on(rank() + shift), load<32, 128>(part, m, n), m, n);
}

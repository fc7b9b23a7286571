// RUN: pkc %s -o - | FileCheck %s
// Tests where a tile moved to or from rank p is guarded by pk::peer_in_range: a rank computed
// from data or arithmetic is checked at run time (error code 4, the access skipped), while a
// loop over the peers (from 0 to world_size()), this rank itself and a non-negative value
// modulo world_size() (next_rank(), prev_rank()) are in range by construction and keep their
// accesses unguarded. A run-time root is compared as unsigned, so a negative one fails.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: gather_from_peers(
// CHECK-NOT: peer_in_range
// CHECK: pk::tile::load({{tile[0-9]+}}, arg0.peer[
// CHECK-LABEL: ring_neighbours(
PK_KERNEL void gather_from_peers(Sym<f32, 2> x, Tensor<f32, 2> sum) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto p : range(0, world_size())) acc = acc + load<16, 128>(x.on(p), m, n);
    store(sum, acc, m, n);
  }
}

// CHECK-NOT: peer_in_range
// CHECK: pk::tile::load({{tile[0-9]+}}, arg0.peer[
// CHECK-NOT: peer_in_range
// CHECK: pk::tile::store({{.*}}arg1.peer[
// CHECK-NOT: peer_in_range
// CHECK: pk::tile::store({{.*}}arg2.peer[
// CHECK-LABEL: push_to_owner(
PK_KERNEL void ring_neighbours(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = load<16, 128>(x.on(prev_rank()), m, n);
    store(y.on(next_rank()), t, m, n);
    store(z.on((rank() + 2) % world_size()), t, m, n);
  }
}

// CHECK: if (pk::peer_in_range(ctx, {{v[0-9]+}})) { {{.*}} pk::tile::store_add(
// CHECK-LABEL: shift_by_arg(
PK_KERNEL void push_to_owner(Sym<f32, 2> part, Sym<f32, 2> acc, index shift) {
  for (auto [m, n] : tiles(part.rows(), part.cols(), {32, 128}))
    store_add(acc.on(rank() + shift), load<32, 128>(part, m, n), m, n);
}

// CHECK: if (pk::peer_in_range(ctx, {{v[0-9]+}})) { {{.*}} pk::tile::store(
// CHECK-LABEL: bcast_from(
PK_KERNEL void shift_by_arg(Sym<f32, 2> x, Sym<f32, 2> y, index shift) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y.on((rank() + shift) % world_size()), load<16, 128>(x, m, n), m, n);
}

// CHECK: const bool [[OK:p[0-9]+]] = (unsigned long long)arg2 < (unsigned long long)
// CHECK: if (!([[OK]]))
PK_KERNEL void bcast_from(Sym<f32, 2> x, Sym<f32, 2> y, index root) { broadcast(x, y, root); }

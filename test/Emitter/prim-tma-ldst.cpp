// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Tests that a primitive the spec asks to move by Tma moves by ld/st and --explain says why:
// a register tile (TMA moves tiles through shared memory), and a shared-memory tile (the
// general tile path holds it in registers; no template takes explicit primitives); and that a
// tile pulled by prim::load_peer_smem with Ldst is loaded like a load_smem tile.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: push_tma(
// CHECK: pk::tile::store({{tile[0-9]+}}, arg1.peer[
// EXPLAIN-LABEL: decisions for kernel 'push_tma'
// EXPLAIN: rule 1 (transport): pk.comm.store_async at {{.*}}prim-tma-ldst.cpp:[[@LINE+5]]:5: ldst: the spec asks for Tma, but TMA moves a tile through shared memory and this tile is in registers
PK_KERNEL void push_tma(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n) * 2.0f;
    prim::store_async(Tma, y.on(next_rank()), t, m, n);
  }
  prim::barrier(prim::flag(1));
}

// CHECK-LABEL: add_tma(
// CHECK: pk::tile::store_add({{tile[0-9]+}}, arg1.peer[
// EXPLAIN-LABEL: decisions for kernel 'add_tma'
// EXPLAIN: rule 1 (transport): pk.comm.store_add_async at {{.*}}prim-tma-ldst.cpp:[[@LINE+4]]:5: ldst:
PK_KERNEL void add_tma(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    prim::store_add_async(Tma, y.on(next_rank()), load<16, 64>(x, m, n), m, n);
  prim::barrier(prim::flag(1));
}

// CHECK-LABEL: pull_smem(
// CHECK: pk::tile::load({{tile[0-9]+}}, arg0.peer[
// CHECK: pk::tile::store(
PK_KERNEL void pull_smem(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, prim::load_peer_smem<16, 64>(Ldst, x.on(prev_rank()), m, n), m, n);
  prim::barrier(prim::flag(1));
}

// CHECK-LABEL: pull_tma(
// CHECK: pk::tile::load({{tile[0-9]+}}, arg0.peer[
// EXPLAIN-LABEL: decisions for kernel 'pull_tma'
// EXPLAIN: rule 1 (transport): pk.comm.load_peer at {{.*}}prim-tma-ldst.cpp:[[@LINE+4]]:14: ldst: the spec asks for Tma, but TMA moves a tile through shared memory and this tile is in registers
PK_KERNEL void pull_tma(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, prim::load_peer<16, 64>(Tma, x.on(prev_rank()), m, n), m, n);
  prim::barrier(prim::flag(1));
}

// CHECK-LABEL: forward_smem(
// CHECK: pk::tile::load({{tile[0-9]+}}, arg0.peer[
// CHECK: pk::tile::store({{tile[0-9]+}}, arg1.peer[
// EXPLAIN-LABEL: decisions for kernel 'forward_smem'
// EXPLAIN: rule 1 (transport): pk.comm.load_peer at {{.*}}prim-tma-ldst.cpp:[[@LINE+5]]:14: ldst: the spec asks for Tma, but primitives run on the general tile path, which holds shared-memory tiles in registers
// EXPLAIN: rule 1 (transport): pk.comm.store_async at {{.*}}prim-tma-ldst.cpp:[[@LINE+5]]:5: ldst: the spec asks for Tma, but primitives run on the general tile path
PK_KERNEL void forward_smem(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = prim::load_peer_smem<16, 64>(Tma, x.on(prev_rank()), m, n);
    prim::store_async(Tma, y.on(next_rank()), t, m, n);
  }
  prim::barrier(prim::flag(1));
}

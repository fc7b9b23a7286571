// RUN: not pkc %s --emit=mlir 2>&1 | FileCheck %s
// Tests that Multimem on a move to or from one peer (no multicast form) is an error at the
// transport argument, naming the primitives Multimem is for.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void mm_store(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
// CHECK: multimem-one-peer.cpp:[[@LINE+1]]:23: error: 'prim::store_async' moves a tile to or from one peer, which has no multicast form; Multimem is for reductions over every rank (prim::reduce, prim::all_reduce): write Ldst or Tma
    prim::store_async(Multimem, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
}
PK_KERNEL void mm_add(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
// CHECK: multimem-one-peer.cpp:[[@LINE+1]]:27: error: 'prim::store_add_async' moves a tile to or from one peer
    prim::store_add_async(Multimem, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
}
PK_KERNEL void mm_load(Sym<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
// CHECK: multimem-one-peer.cpp:[[@LINE+1]]:39: error: 'prim::load_peer' moves a tile to or from one peer
    store(y, prim::load_peer<16, 128>(Multimem, x.on(prev_rank()), m, n), m, n);
}
PK_KERNEL void mm_load_smem(Sym<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64}))
// CHECK: multimem-one-peer.cpp:[[@LINE+1]]:43: error: 'prim::load_peer_smem' moves a tile to or from one peer
    store(y, prim::load_peer_smem<64, 64>(Multimem, x.on(prev_rank()), m, n), m, n);
}

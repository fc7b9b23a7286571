// RUN: pkc %s --emit=mlir -o - | FileCheck %s
// RUN: not pkc %s -DSMEM --emit=mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: pkc %s --emit=cubin -o %t.cubin 2>&1 | FileCheck %s --check-prefix=CUBIN --implicit-check-not=warning
// Tests that a tile of a tensor's trailing dimensions (one head of [H, S, D]) loads as the tile
// with leading 1s reshaped, and stores through the reverse reshape, locally and with peers.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @one_head
// CHECK: %[[T:.*]] = pk.tile.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}] : !pk.tensor<?x?x?xbf16> -> !pk.tile<1x16x32xbf16>
// CHECK-NEXT: %[[R:.*]] = pk.tile.reshape %[[T]] : !pk.tile<1x16x32xbf16> -> !pk.tile<16x32xbf16>
// CHECK: %[[B:.*]] = pk.tile.reshape %{{.*}} : !pk.tile<16x32xbf16> -> !pk.tile<1x16x32xbf16>
// CHECK: pk.tile.store %[[B]], %arg1[%{{.*}}, %{{.*}}, %{{.*}}] : !pk.tile<1x16x32xbf16>, !pk.tensor<?x?x?xbf16>
PK_KERNEL void one_head(Tensor<bf16, 3> x, Tensor<bf16, 3> y) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    auto t = load<16, 32>(x, h, m, 0);
    store(y, exp(t), h, m, 0);
  }
}

// Tests the same into and out of a peer's copy: the ldst peer paths take the tile with leading
// 1s, and the protocol check proves the kernel (no warning).
// CHECK-LABEL: pk.kernel @peer_heads
// CHECK: %[[B:.*]] = pk.tile.reshape %{{.*}} : !pk.tile<16x32xbf16> -> !pk.tile<1x16x32xbf16>
// CHECK: pk.coll.store_tile %[[B]], %arg1[%{{.*}}, %{{.*}}, %{{.*}}] on %{{.*}} : !pk.tile<1x16x32xbf16>, !pk.sym<?x?x?xbf16>
// CHECK: %[[P:.*]] = pk.comm.load_peer <ldst> %arg0[%{{.*}}, %{{.*}}, %{{.*}}] on %{{.*}} : !pk.sym<?x?x?xbf16> -> !pk.tile<1x16x32xbf16>
// CHECK-NEXT: pk.tile.reshape %[[P]] : !pk.tile<1x16x32xbf16> -> !pk.tile<16x32xbf16>
// CUBIN: pkc: wrote
PK_KERNEL void peer_heads(Sym<bf16, 3> x, Sym<bf16, 3> y, Tensor<bf16, 3> z) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    store(y.on(next_rank()), load<16, 32>(x, h, m, 0), h, m, 0);
    store(z, load<16, 32>(x.on(prev_rank()), h, m, 0), h, m, 0);
  }
}

// Tests the primitives the same way (specs12 finding 7): prim::store_async and store_add_async
// take a tile of the trailing dimensions as store does, prim::load_peer and prim::reduce give
// one; the kernel's own protocol is proved (no warning).
// CHECK-LABEL: pk.kernel @prim_steps
// CHECK: %[[S:.*]] = pk.tile.reshape %{{.*}} : !pk.tile<16x128xf32> -> !pk.tile<1x16x128xf32>
// CHECK: pk.comm.store_async <ldst> %[[S]], %arg1[%{{.*}}, %{{.*}}, %{{.*}}] on %{{.*}} : !pk.tile<1x16x128xf32>, !pk.sym<?x?x?xf32>
// CHECK: pk.comm.store_add_async <ldst> %{{.*}}, %arg1[%{{.*}}, %{{.*}}, %{{.*}}] on %{{.*}} : !pk.tile<1x16x128xf32>, !pk.sym<?x?x?xf32>
// CHECK: %[[L:.*]] = pk.comm.load_peer <ldst> %arg1[%{{.*}}, %{{.*}}, %{{.*}}] on %{{.*}} : !pk.sym<?x?x?xf32> -> !pk.tile<1x16x128xf32>
// CHECK-NEXT: pk.tile.reshape %[[L]] : !pk.tile<1x16x128xf32> -> !pk.tile<16x128xf32>
// CHECK: %[[R:.*]] = pk.comm.reduce <sum> <ldst> %arg1[%{{.*}}, %{{.*}}, %{{.*}}] : !pk.sym<?x?x?xf32> -> !pk.tile<1x16x128xf32>
// CHECK-NEXT: pk.tile.reshape %[[R]] : !pk.tile<1x16x128xf32> -> !pk.tile<16x128xf32>
PK_KERNEL void prim_steps(Sym<f32, 2> x, Sym<f32, 3> buf, Tensor<f32, 3> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto s : range(0, 2, 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      prim::store_async(Ldst, buf.on(next_rank()), load<16, 128>(x, m, n) * float(s + 1), s, m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_add_async(Ldst, buf.on(next_rank()), load<16, 128>(x, m, n), 2, m, n);
  prim::barrier(prim::flag(1, Grid));
  for (auto s : range(0, 2, 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      store(out, prim::load_peer<16, 128>(Ldst, buf.on(prev_rank()), s, m, n), s, m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, prim::reduce<16, 128>(Sum, Ldst, buf, 2, m, n), 2, m, n);
  prim::barrier(prim::flag(2, Grid));
}

#ifdef SMEM
// SMEM: trailing-tiles.cpp:[[@LINE+3]]:14: error: load_smem takes one extent per tensor dimension (write the leading 1s)
PK_KERNEL void smem_head(Tensor<bf16, 3> x, Tensor<bf16, 3> y) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    auto t = load_smem<16, 32>(x, h, m, 0);
    store(y, t, h, m, 0);
  }
}
#endif

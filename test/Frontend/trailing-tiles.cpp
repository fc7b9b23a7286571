// RUN: pkc %s --emit=mlir -o - | FileCheck %s
// RUN: not pkc %s -DSMEM --emit=mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMEM
// Tests that a tile of a tensor's trailing dimensions (one head of [H, S, D]) loads as the tile
// with leading 1s reshaped, and stores through the reverse reshape.
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

#ifdef SMEM
// SMEM: trailing-tiles.cpp:[[@LINE+3]]:14: error: load_smem takes one extent per tensor dimension (write the leading 1s)
PK_KERNEL void smem_head(Tensor<bf16, 3> x, Tensor<bf16, 3> y) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    auto t = load_smem<16, 32>(x, h, m, 0);
    store(y, t, h, m, 0);
  }
}
#endif

// RUN: pkc %s --emit=mlir -o - | FileCheck %s
// RUN: pkc %s -o - | FileCheck %s --check-prefix=CUDA
// Tests broadcasts as pk/spec.h types them: in each dimension the result takes the extent of
// the operand that is not 1 there, at any rank, and from both sides (an outer product).
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @bias_over_heads
// CHECK: pk.tile.map <add> %{{.*}}, %{{.*}} : !pk.tile<4x16x64xf32>, !pk.tile<1x1x64xf32> -> !pk.tile<4x16x64xf32>
// CHECK: pk.tile.map <sub> %{{.*}}, %{{.*}} : !pk.tile<4x16x64xf32>, !pk.tile<4x16x1xf32> -> !pk.tile<4x16x64xf32>
// CHECK: pk.tile.map <mul> %{{.*}}, %{{.*}} : !pk.tile<4x16x64xf32>, !pk.tile<4x1x64xf32> -> !pk.tile<4x16x64xf32>
// CUDA-LABEL: bias_over_heads(
// CUDA-COUNT-3: pk::tile::map_broadcast({{.*}}, pk_stage);
PK_KERNEL void bias_over_heads(Tensor<f32, 3> x, Tensor<f32, 3> bias, Tensor<f32, 3> w, Tensor<f32, 3> y) {
  for (auto [b, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {4, 16, 64})) {
    auto t = load<4, 16, 64>(x, b, s, d) + load<1, 1, 64>(bias, 0, 0, d);
    store(y, (t - load<4, 16, 1>(x, b, s, 0)) * load<4, 1, 64>(w, b, 0, d), b, s, d);
  }
}

// CHECK-LABEL: pk.kernel @outer
// CHECK: pk.tile.map <mul> %{{.*}}, %{{.*}} : !pk.tile<32x1xf32>, !pk.tile<1x64xf32> -> !pk.tile<32x64xf32>
// The column is broadcast to the full shape first, then the row against it.
// CUDA-LABEL: outer(
// CUDA: pk::tile::broadcast_to([[FULL:tile[0-9]+]], {{tile[0-9]+}}, pk_stage);
// CUDA-NEXT: pk::tile::map_broadcast({{tile[0-9]+}}, [[FULL]], {{tile[0-9]+}}, false,
PK_KERNEL void outer(Tensor<f32, 2> u, Tensor<f32, 2> v, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {32, 64}))
    store(y, load<32, 1>(u, m, 0) * load<1, 64>(v, 0, n), m, n);
}

// RUN: pkc %s --emit=mlir | FileCheck %s
// Tests float scalars (kernel parameters and constants) splatted beside tiles, the math
// functions, and row broadcasts.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @rms_norm
// CHECK-SAME: %{{.*}}: f32, %[[EPS:.*]]: f32)
// CHECK: %[[SS:.*]] = pk.tile.reduce_rows <sum> {{.*}} -> !pk.tile<8x1xf32>
// CHECK: pk.tile.splat %{{.*}} : f32 -> !pk.tile<8x1xf32>
// CHECK: pk.tile.splat %[[EPS]] : f32 -> !pk.tile<8x1xf32>
// CHECK: pk.tile.map <rsqrt>
// CHECK: pk.tile.map <mul> %{{.*}}, %{{.*}} : !pk.tile<8x4096xf32>, !pk.tile<8x1xf32> -> !pk.tile<8x4096xf32>
PK_KERNEL void rms_norm(Tensor<f32, 2> x, Tensor<f32, 2> y, float inv_n, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 4096})) {
    auto t = load<8, 4096>(x, m, n);
    store(y, t * rsqrt(row_sum(t * t) * inv_n + eps), m, n);
  }
}

// CHECK-LABEL: pk.kernel @math
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: pk.tile.map <pow>
// CHECK: pk.tile.map <silu>
// CHECK: pk.tile.map <gelu_tanh>
// CHECK: pk.tile.map <gelu_erf>
// CHECK: pk.tile.map <sigmoid>
// CHECK: pk.tile.map <tanh>
// CHECK: pk.tile.map <log>
// CHECK: pk.tile.map <sin>
// CHECK: pk.tile.map <cos>
// CHECK: pk.tile.map <sqrt>
PK_KERNEL void math(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = load<1024>(x, i);
    auto a = pow(abs(t), 2.0f) + silu(t) + gelu(t) + gelu_erf(t) + sigmoid(t) + tanh(t);
    store(y, a + log(abs(t) + 1.0f) + sin(t) + cos(t) + sqrt(abs(t)), i);
  }
}

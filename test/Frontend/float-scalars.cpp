// RUN: pkc %s --emit=mlir -o - | FileCheck %s
// RUN: pkc %s -o - | FileCheck %s --check-prefix=CUDA
// RUN: pkc %s --kernel=scalar_math --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Tests float scalar arithmetic as C++ writes it: + - * / of float parameters and literals
// (arith.addf, subf, mulf, divf), an integer operand converted to float first, and unary minus
// of a float (times -1); the result combines with tiles like any float scalar.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @layer_norm_256
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[N:.*]] = arith.constant 2.560000e+02 : f32
// CHECK: %[[INV:.*]] = arith.divf %[[ONE]], %[[N]] : f32
// CHECK: pk.tile.splat %[[INV]] : f32
// CUDA-LABEL: layer_norm_256(
// CUDA: const float [[INV:v[0-9]+]] = {{c[0-9]+}} / {{c[0-9]+}};
// CUDA: pk::tile::fill({{tile[0-9]+}}, static_cast<float>([[INV]]));
PK_KERNEL void layer_norm_256(Tensor<f32, 2> x, Tensor<f32, 2> y, float eps) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {4, 256})) {
    auto v = load<4, 256>(x, t, n);
    auto d = v - row_sum(v) * (1.0f / 256.0f);
    store(y, d * rsqrt(row_sum(d * d) * (1.0f / 256.0f) + eps), t, n);
  }
}

// CHECK-LABEL: pk.kernel @scaled
// CHECK-SAME: %[[S:[^:]*]]: f32, %[[B:[^:]*]]: f32)
// CHECK: %[[C:.*]] = pk.dim %arg0, 1
// CHECK: %[[I:.*]] = arith.index_cast %[[C]] : index to i64
// CHECK: %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: %[[Q:.*]] = arith.divf %[[S]], %[[F]] : f32
// CHECK: %[[M1:.*]] = arith.constant -1.000000e+00 : f32
// CHECK: %[[NB:.*]] = arith.mulf %[[M1]], %[[B]] : f32
// CHECK: %[[T:.*]] = arith.mulf %[[Q]], %{{.*}} : f32
// CHECK: %[[U:.*]] = arith.subf %[[T]], %[[NB]] : f32
// CHECK: pk.tile.splat %[[U]] : f32
PK_KERNEL void scaled(Tensor<f32, 2> x, Tensor<f32, 2> y, float scale, float bias) {
  float per_col = scale / x.cols();
  float neg = -bias;
  float k = per_col * 2.0f - neg;
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 128})) store(y, load<16, 128>(x, t, n) * k, t, n);
}

// Tests math on float scalars (pk.scalar_map, the fp32 expression of the tile map kind) and
// casts the user writes: float(x.cols()) is the size as a float, static_cast<long> of an index
// the index itself.
// CHECK-LABEL: pk.kernel @scalar_math
// CHECK: %[[COLS:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: %[[R:.*]] = pk.scalar_map <rsqrt> %[[COLS]]
// CHECK: %[[Q:.*]] = pk.scalar_map <sqrt> %[[EPS:[^ ]*]]
// CHECK: pk.scalar_map <max> %[[Q]], %{{.*}}
// CHECK: pk.scalar_map <pow> %[[EPS]], %{{.*}}
// CHECK: pk.scalar_map <abs>
// Scalar math leaves the blocks independent, so the kernel takes the general path's block
// choice (it took the 512-thread default, unexplained, while pk.scalar_map was not counted).
// EXPLAIN: general path: pk.kernel {{.*}} threads per block, {{[0-9]+}} block(s) per SM{{.*}}: no block waits on another
// CUDA-LABEL: scalar_math(
// CUDA: = rsqrtf({{v[0-9]+}});
// CUDA: = sqrtf(arg2);
// CUDA: = fmaxf({{v[0-9]+}}, {{c[0-9]+}});
PK_KERNEL void scalar_math(Tensor<f32, 2> x, Tensor<f32, 2> y, float eps) {
  for (auto [t, n] : tiles(x.rows(), static_cast<long>(x.cols()), {4, 256})) {
    const float scale = rsqrt(float(x.cols())) * max(sqrt(eps), 0.25f) - pow(eps, 2.0f) + abs(-eps);
    store(y, load<4, 256>(x, t, n) * scale, t, n);
  }
}

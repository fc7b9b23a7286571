// RUN: pkc %s --emit=mlir | FileCheck %s
// RUN: pkc %s --kernel erf_tile_and_scalar -o - | FileCheck %s --check-prefix=ERF_CU
// Tests tile compute: zeros, element-wise operators, max/min/exp, casts, row reductions.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @softmax_pieces
PK_KERNEL void softmax_pieces(Tensor<f32, 2> s, Tensor<bf16, 2> o) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {64, 128})) {
    // CHECK: %[[X:.*]] = pk.tile.load {{.*}} -> !pk.tile<64x128xf32>
    auto x = load<64, 128>(s, m, n);
    // CHECK: %[[Z:.*]] = pk.tile.zeros : !pk.tile<64x128xf32>
    auto z = zeros<f32, 64, 128>();
    // CHECK: %[[A:.*]] = pk.tile.map <add> %[[X]], %[[Z]]
    // CHECK: %[[S:.*]] = pk.tile.map <sub> %[[A]], %[[X]]
    // CHECK: %[[M:.*]] = pk.tile.map <mul> %[[S]], %[[X]]
    // CHECK: %[[D:.*]] = pk.tile.map <div> %[[M]], %[[X]]
    auto y = (x + z - x) * x / x;
    // CHECK: pk.tile.map <neg> %[[D]]
    // CHECK: pk.tile.map <max>
    // CHECK: pk.tile.map <min>
    // CHECK: pk.tile.map <exp>
    auto e = exp(min(max(-y, x), z));
    // CHECK: pk.tile.reduce_rows <max> {{.*}} : !pk.tile<64x128xf32> -> !pk.tile<64x1xf32>
    // CHECK: pk.tile.reduce_rows <sum>
    // CHECK: pk.tile.reduce_rows <min>
    auto rm = row_max(e);
    auto rs = row_sum(e);
    auto rn = row_min(e);
    // CHECK: %[[C:.*]] = pk.tile.cast %{{.*}} : !pk.tile<64x128xf32> to !pk.tile<64x128xbf16>
    // CHECK: pk.tile.store %[[C]], %{{.*}}[%{{.*}}, %{{.*}}] : !pk.tile<64x128xbf16>, !pk.tensor<?x?xbf16>
    store(o, cast<bf16>(e), m, n);
  }
}

// Tests that erf of a tile and of a float scalar lower to the erf map, emitted as a one-operand
// lambda (its kind once fell among the comparisons' range and took two operands).
// ERF_CU: pk::tile::map({{.*}}, [](float x) { return erff(x); });
// CHECK-LABEL: pk.kernel @erf_tile_and_scalar
// CHECK: pk.scalar_map <erf>
// CHECK: pk.tile.map <erf>
PK_KERNEL void erf_tile_and_scalar(Tensor<f32, 2> x, Tensor<f32, 2> y, float a) {
  float e = erf(a);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, erf(load<16, 64>(x, m, n)) * e, m, n);
}

// RUN: pkc %s --emit=mlir | FileCheck %s
// RUN: not pkc %s -DBAD_MASK --emit=mlir 2>&1 | FileCheck %s --check-prefix=BAD
// Tests masks: index tiles (row_index / col_index), comparisons of tiles and of a tile with a
// float, and where() with a tile or a float on either side (a negative literal fill included).
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @causal
// CHECK: pk.tile.foreach (%[[M:.*]], %[[N:.*]]) to
// CHECK: %[[COLS:.*]] = pk.tile.iota %[[N]] dim 1 : !pk.tile<16x256xf32>
// CHECK: %[[ROWS:.*]] = pk.tile.iota %[[M]] dim 0 : !pk.tile<16x256xf32>
// CHECK: %[[MASK:.*]] = pk.tile.map <le> %[[COLS]], %[[ROWS]]
// CHECK: %[[S:.*]] = pk.tile.load
// CHECK: %[[FILL:.*]] = arith.constant -1.000000e+30 : f32
// CHECK: %[[F:.*]] = pk.tile.splat %[[FILL]]
// CHECK: pk.tile.select %[[MASK]], %[[S]], %[[F]]
PK_KERNEL void causal(Tensor<f32, 2> s, Tensor<f32, 2> p) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 256}))
    store(p, where(col_index<16, 256>(n) <= row_index<16, 256>(m), load<16, 256>(s, m, n), -1e30f),
          m, n);
}

// CHECK-LABEL: pk.kernel @compare
// CHECK: pk.tile.map <gt>
// CHECK: pk.tile.map <lt>
// CHECK: pk.tile.map <ge>
// CHECK: pk.tile.map <eq>
// CHECK: pk.tile.map <ne>
// CHECK: pk.tile.select
PK_KERNEL void compare(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64})) {
    auto t = load<32, 64>(x, m, n);
    auto keep = (t > 0.5f) * (t < 1.5f) + (t >= 2.0f) * (t == t) * (t != 0.0f);
    store(y, where(keep, 0.0f, t), m, n);
  }
}

#ifdef BAD_MASK
// A mask that does not broadcast against the values (16 x 32 against 16 x 16) is a C++ type
// error already (pk/spec.h ties the shapes together; a 16 x 1 mask would broadcast), a static
// assertion that says why, at the user's line.
// BAD: error: static assertion failed{{.*}}the two tiles' extents differ in a dimension where neither is 1
// BAD: masks.cpp:[[@LINE+3]]:14: note: in instantiation of function template specialization 'pk::where
PK_KERNEL void bad(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 16}))
    store(y, where(load<16, 32>(x, m, n) > 0.0f, load<16, 16>(x, m, n), 0.0f), m, n);
}
#endif

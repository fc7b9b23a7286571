// RUN: pkc %s --emit=mlir -o - | FileCheck %s
// Tests that an index where a float is expected converts as in C++ (a float variable set from a
// size, a mask against a size, an integer literal beside a tile), to index_cast + sitofp.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @from_size
// CHECK: %[[N:.*]] = pk.dim %arg0, 0
// CHECK: %[[I:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: pk.tile.splat %[[F]]
PK_KERNEL void from_size(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  float n = x.size();
  for (auto i : tiles(x.size(), {1024})) store(y, load<1024>(x, i) / n, i);
}

// Keys past the end of k masked out: columns n.. compared with k.rows() as a float.
// CHECK-LABEL: pk.kernel @mask_by_size
// CHECK: pk.tile.iota
// CHECK: arith.sitofp
// CHECK: pk.tile.map <lt>
// CHECK: pk.tile.select
PK_KERNEL void mask_by_size(Tensor<f32, 2> s, Tensor<f32, 2> k, Tensor<f32, 2> p) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 64}))
    store(p, where(col_index<16, 64>(n) < k.rows(), load<16, 64>(s, m, n), -1e30f), m, n);
}

// An integer literal beside a tile is a float constant, no conversion op.
// CHECK-LABEL: pk.kernel @literal
// CHECK-NOT: arith.sitofp
// CHECK: arith.constant 2.000000e+00 : f32
PK_KERNEL void literal(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) store(y, load<1024>(x, i) * 2, i);
}

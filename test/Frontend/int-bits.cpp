// RUN: pkc %s --emit=mlir | FileCheck %s
// RUN: pkc %s -o %t.cu && FileCheck %s --check-prefix=CUDA --input-file=%t.cu
// RUN: not pkc %s -DBITS_OF_FLOAT --emit=mlir 2>&1 | FileCheck %s --check-prefix=FLOAT
// Bit operations on integer tiles (& | ^ << >>, with tiles or integer scalars on either side)
// lower to pk.tile.map kinds the emitter writes as C++ bit operators, the shifts through
// pk::tile::wrap_shl / wrap_shr (defined for every count); on a float tile they are a Clang
// error at the operator.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @nibbles(
// CHECK: %[[W:.*]] = pk.tile.load {{.*}} -> !pk.tile<16x32xi32>
// CHECK: %[[SH:.*]] = pk.tile.splat %{{.*}} : index -> !pk.tile<16x32xi32>
// CHECK: %[[R:.*]] = pk.tile.map <shr> %[[W]], %[[SH]]
// CHECK: %[[F:.*]] = pk.tile.splat %{{.*}} : index -> !pk.tile<16x32xi32>
// CHECK: pk.tile.map <bit_and> %[[R]], %[[F]]
// CHECK: pk.tile.map <bit_or>
// CHECK: pk.tile.map <bit_xor>
// CHECK: pk.tile.map <shl>
// CUDA: [](int x, int y) { return pk::tile::wrap_shr(x, y); }
// CUDA: [](int x, int y) { return x & y; }
// CUDA: [](int x, int y) { return x | y; }
// CUDA: [](int x, int y) { return x ^ y; }
// CUDA: [](int x, int y) { return pk::tile::wrap_shl(x, y); }
PK_KERNEL void nibbles(Tensor<i32, 2> w, Tensor<i32, 2> y, index j) {
  for (auto [n, c] : tiles(w.rows(), w.cols(), {16, 32})) {
    auto t = load<16, 32>(w, n, c);
    auto nib = (t >> (4 * j)) & 15;
    store(y, ((nib | t) ^ 5) + (1 << nib), n, c);
  }
}

#ifdef BITS_OF_FLOAT
// FLOAT: int-bits.cpp:[[@LINE+3]]:{{[0-9]+}}: error: invalid operands to binary expression
PK_KERNEL void float_bits(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
    store(y, load<16, 32>(x, m, n) & load<16, 32>(x, m, n), m, n);
}
#endif

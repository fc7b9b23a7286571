// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests that a reshape that would reorder elements (not only add or drop unit dimensions) is an
// error at the call naming both shapes.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
// CHECK: reshape-not-unit.cpp:[[@LINE+1]]:14: error: reshape adds or drops dimensions of 1 only, keeping the others in order (a [64] tile can become [1, 64] or [64, 1]); [16, 64] cannot become [64, 16]
    store(y, reshape<64, 16>(load<16, 64>(x, m, n)), m, n);
}

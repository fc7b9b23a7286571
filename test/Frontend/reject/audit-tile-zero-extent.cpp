// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: a tile extent of 0 is an error at the load that says extents must be positive.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
// CHECK: audit-tile-zero-extent.cpp:[[@LINE+1]]:14: error: the result must be a tile: give its shape as template arguments with positive extents (load<128, 64>(A, m, k))
    store(y, load<0, 32>(x, m, n), m, n);
}

// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a row reduction of an integer tile is an error that says to reduce a float cast,
// with a note at the spec's line.
#include <pk/spec.h>
using namespace pk;
// CHECK: error: static assertion failed{{.*}}row_sum / row_max / row_min reduce float tiles: reduce cast<f32>(t)
// CHECK: int-row-reduction.cpp:[[@LINE+3]]:{{[0-9]+}}: note: in instantiation
PK_KERNEL void k(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 512}))
    store(y, row_max(load<8, 512>(x, m, n)), m, n / 512);
}

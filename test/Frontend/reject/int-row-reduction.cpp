// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a row reduction of an i8 tile (which would wrap at 8 bits) is an error that says to
// reduce an i32 cast, with a note at the spec's line. (i32 and i64 tiles reduce exactly.)
#include <pk/spec.h>
using namespace pk;
// CHECK: error: static assertion failed{{.*}}row_sum / row_max / row_min of i8 tiles would wrap at 8 bits: reduce cast<i32>(t)
// CHECK: int-row-reduction.cpp:[[@LINE+3]]:{{[0-9]+}}: note: in instantiation
PK_KERNEL void k(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 512}))
    store(y, row_max(load<8, 512>(x, m, n)), m, n / 512);
}

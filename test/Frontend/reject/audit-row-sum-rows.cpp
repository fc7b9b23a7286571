// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: a row reduction of more than 4096 rows is an error at the reduction naming the limit.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {8192}))
// CHECK: audit-row-sum-rows.cpp:[[@LINE+1]]:14: error: the general tile path reduces tiles of at most 4096 rows (this one has 8192); use a tile of fewer rows
    store(y, row_sum(load<8192, 8>(x, m, 0)), m, 0);
}

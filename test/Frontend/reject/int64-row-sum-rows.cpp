// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// An i64 row reduction holds its row accumulators in 64 bits: more than 2048 rows is an error at
// the reduction naming the limit (an i32 one of 4096 rows compiles).
// RUN: pkc %s -DI32 -o /dev/null
#include <pk/spec.h>
using namespace pk;
#ifdef I32
PK_KERNEL void k(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto m : tiles(x.rows(), {4096})) store(y, row_sum(load<4096, 8>(x, m, 0)), m, 0);
}
#else
PK_KERNEL void k(Tensor<i64, 2> x, Tensor<i64, 2> y) {
  for (auto m : tiles(x.rows(), {4096}))
// CHECK: int64-row-sum-rows.cpp:[[@LINE+1]]:14: error: the general tile path reduces tiles of at most 2048 rows (this one has 4096); use a tile of fewer rows
    store(y, row_sum(load<4096, 8>(x, m, 0)), m, 0);
}
#endif

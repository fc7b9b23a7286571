// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: continue inside a tile loop is an error at the statement.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
// CHECK: audit-continue.cpp:[[@LINE+1]]:5: error: break and continue are not in the spec language
    continue;
  }
}

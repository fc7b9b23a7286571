// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: a conditional operator, even on index values, is an error at the condition.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
// CHECK: audit-ternary.cpp:[[@LINE+1]]:15: error: the conditional operator is not in the spec language
    index o = rank() == 0 ? m : n;
    store(y, load<16, 32>(x, o, n), m, n);
  }
}

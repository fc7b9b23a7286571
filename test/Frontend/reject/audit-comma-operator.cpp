// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: the comma operator is an error at the comma.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
// CHECK: audit-comma-operator.cpp:[[@LINE+1]]:17: error: the comma operator is not in the spec language; write one statement each
    index a = (m, n);
    store(y, load<16, 32>(x, a, n), m, n);
  }
}

// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: an mma whose operands' inner dimensions differ is an error at the call, naming both shapes.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {32, 32})) {
    auto acc = zeros<f32, 32, 32>();
// CHECK: audit-mma-inner-dims.cpp:[[@LINE+1]]:11: error: mma: inner dimensions differ: a is 32x16, b is 32x32
    acc = mma(load<32, 16>(a, m, 0), load<32, 32>(b, 0, n), acc);
    store(c, acc, m, n);
  }
}

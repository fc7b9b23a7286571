// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: a negative constant range() step is an error at the step.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
// CHECK: audit-range-negative-step.cpp:[[@LINE+1]]:38: error: the step of range() must be positive (a step of -32 never reaches hi)
    for (auto n : range(0, x.cols(), -32)) store(y, load<16, 32>(x, m, n), m, n);
}

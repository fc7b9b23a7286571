// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests that a tile loop whose register tiles need more than 512 values a thread at once (here
// 1024 x 1024 f32 tiles over at most 1024 threads) is an error at the loop, not minutes of
// NVRTC spilling them.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
// CHECK: register-budget.cpp:[[@LINE+1]]:3: error: this tile loop holds {{[0-9]+}} register values a thread at once (its live tiles over 1024 threads); the general path keeps tiles in registers, at most 512 a thread: use smaller tiles
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1024, 1024})) store(y, exp(load<1024, 1024>(x, m, n)), m, n);
}

// RUN: not pkc %s -o %t.cu 2>&1 | FileCheck %s
// Tests that tile loops depending on each other inside a range loop are an error at the
// dependent loop (pkc does not put barriers inside range loops yet), never a silent race.
#include <pk/spec.h>
using namespace pk;

// CHECK: phases-in-loop.cpp:[[@LINE+4]]:5: error: this phase depends on another phase inside the same range loop
// CHECK-NOT: see current operation
PK_KERNEL void steps(Tensor<f32, 1> x, Scratch<f32, 1> s) {
  for (auto k : range(0, 4)) {
    for (auto i : tiles(x.size(), {1024})) store(s, load<1024>(x, i) * 2.0f, i);
    for (auto i : tiles(x.size(), {1024})) store(x, load<1024>(s, x.size() - 1024 - i), i);
  }
}

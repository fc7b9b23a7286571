// RUN: pkc %s -o %t.cu --explain 2>&1 | FileCheck %s
// RUN: not pkc %s -DNESTED -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED
// Tests that tile loops depending on each other inside a range loop run as a host loop of
// launches, each trip one launch with a grid-wide barrier between its phases, never a silent
// race; and that the same inside a second range loop is an error at the dependent loop.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: decisions for kernel 'steps':
// CHECK-NEXT: launches: {{.*}}for each trip of the range loop at {{.*}}phases-in-loop.cpp:[[@LINE+6]]:3, a host loop: steps_launch0 = the phases at
// CHECK-LABEL: decisions for kernel 'steps_launch0':
// CHECK: this phase uses a tensor an earlier phase of the kernel wrote (or writes one it read): a grid-wide barrier first
// CHECK-NOT: warning
// CHECK-NOT: see current operation
PK_KERNEL void steps(Tensor<f32, 1> x, Scratch<f32, 1> s) {
  for (auto k : range(0, 4)) {
    for (auto i : tiles(x.size(), {1024})) store(s, load<1024>(x, i) * 2.0f, i);
    for (auto i : tiles(x.size(), {1024})) store(x, load<1024>(s, x.size() - 1024 - i), i);
  }
}

#ifdef NESTED
// NESTED: phases-in-loop.cpp:[[@LINE+5]]:7: error: this phase depends on another phase inside the same range loop
// NESTED-NOT: see current operation
PK_KERNEL void nested(Tensor<f32, 1> x, Scratch<f32, 1> s) {
  for (auto k : range(0, 4))
    for (auto j : range(0, 2)) {
      for (auto i : tiles(x.size(), {1024})) store(s, load<1024>(x, i) * 2.0f, i);
      for (auto i : tiles(x.size(), {1024})) store(x, load<1024>(s, x.size() - 1024 - i), i);
    }
}
#endif

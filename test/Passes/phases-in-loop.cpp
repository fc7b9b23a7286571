// RUN: pkc %s -o %t.cu --explain 2>&1 | FileCheck %s
// RUN: pkc %s -DNESTED --kernel=nested -o - --explain 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not pkc %s -DBOUND --kernel=bound -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOUND
// Tests that tile loops depending on each other inside a range loop run as a host loop of
// launches, each trip one launch with a grid-wide barrier between its phases, never a silent
// race; the same inside a second range loop as nested host loops; and an inner loop whose
// bound is the outer loop's variable is an error at the inner loop.
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
// NESTED: launches: {{.*}}for each trip of the range loop at {{.*}}phases-in-loop.cpp:[[@LINE+6]]:3, a host loop: for each trip of the range loop at {{.*}}:[[@LINE+7]]:5, a host loop: nested_launch0 = the phases at
// NESTED: launch 0 of 1 of kernel 'nested' (in a host loop: its last arguments are the trips' induction variables, outermost first)
// NESTED: // pk-sequence nested parts=nested_launch0 loop=0:1:0;4;1 loop=0:1:0;2;1 args=
// NESTED: // pk-launch nested_launch0 {{.*}}args=!pk.tensor<?xf32>,!pk.sym<?xf32>,index,index
// NESTED-NOT: see current operation
PK_KERNEL void nested(Tensor<f32, 1> x, Scratch<f32, 1> s) {
  for (auto k : range(0, 4))
    for (auto j : range(0, 2)) {
      for (auto i : tiles(x.size(), {1024})) store(s, load<1024>(x, i) * 2.0f, i);
      for (auto i : tiles(x.size(), {1024})) store(x, load<1024>(s, x.size() - 1024 - i), i);
    }
}
#endif

#ifdef BOUND
// BOUND: phases-in-loop.cpp:[[@LINE+3]]:5: error: this range loop holds phases a launch cannot order {{.*}}not an enclosing loop's variable)
PK_KERNEL void bound(Tensor<f32, 1> x, Scratch<f32, 1> s) {
  for (auto k : range(1, 4))
    for (auto j : range(0, k)) {
      for (auto i : tiles(x.size(), {1024})) store(s, load<1024>(x, i) * 2.0f, i);
      for (auto i : tiles(x.size(), {1024})) store(x, load<1024>(s, x.size() - 1024 - i), i);
    }
}
#endif

// A ring all-gather written by hand as a host loop (set 37, k52): the explain says what each
// trip costs and which collective moves the blocks in one launch.
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=RING
// RING-LABEL: decisions for kernel 'hand_ring'
// RING: a host loop: {{.*}} each trip of that loop is a launch with its own flag rounds, so a ring written this way moves one block per launch; where it forwards every rank's block to every rank, all_gather, reduce_scatter or all_to_all move them all in one launch;
PK_KERNEL void hand_ring(Sym<bf16, 2> x, Sym<bf16, 3> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) store(y, load<64, 256>(x, m, n), rank(), m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 256})) {
      index blk = (rank() - s + world_size()) % world_size();
      store(y.on(next_rank()), load<64, 256>(y, blk, m, n), blk, m, n);
    }
  }
}

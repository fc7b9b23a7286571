// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s
// Tests that local tile compute and a collective of its result in one kernel run as ordered
// phases (one worker, a grid-wide barrier between them), proved by the protocol checker,
// instead of being refused or emitted as two phases that race.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: decisions for kernel 'scale_then_ar'
// CHECK: pk.coll.all_reduce at {{.*}}compute-and-collective.cpp:[[@LINE+6]]:3: this phase uses a tensor an earlier phase of the kernel wrote
// CHECK: one worker of 132 blocks runs the kernel's phases in order (1 grid-wide barrier between dependent phases)
// CHECK-NOT: warning
PK_KERNEL void scale_then_ar(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024}))
    store(x, load<1024>(x, i) * load<1024>(x, i), i);
  all_reduce(Sum, x, y);
}

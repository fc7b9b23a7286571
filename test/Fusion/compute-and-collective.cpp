// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests that local tile compute and a collective in one kernel are refused (their order is
// not lowered yet), instead of being emitted as two phases that race.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void scale_then_ar(Sym<f32, 1> x, Sym<f32, 1> y) {
  // CHECK: compute-and-collective.cpp:[[@LINE+1]]:3: error: this tile loop and a collective are in one kernel
  for (auto i : tiles(x.size(), {1024}))
    store(x, load<1024>(x, i) * load<1024>(x, i), i);
  // CHECK: compute-and-collective.cpp:[[@LINE+1]]:3: note: the collective
  all_reduce(Sum, x, y);
}

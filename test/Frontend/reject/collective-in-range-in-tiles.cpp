// RUN: not pkc %s --emit=cubin -o %t.out 2>&1 | FileCheck %s
// Tests that a collective in a range loop inside a tiles() loop is refused at its location.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {256}))
    for (auto k : range(0, 2))
// CHECK: collective-in-range-in-tiles.cpp:[[@LINE+1]]:7: error: a collective moves whole tensors once per launch
      all_gather(x, y);
}

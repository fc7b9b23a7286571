// RUN: not pkc %s --emit=cubin -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a collective inside a tiles() loop is refused at its location (pk-lower-collectives
// crashed on it before), also through a range loop.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {256}))
// CHECK: collective-in-tiles.cpp:[[@LINE+1]]:5: error: a collective moves whole tensors once per launch, so it cannot sit inside a tiles() loop
    all_reduce(Sum, x, y);
}

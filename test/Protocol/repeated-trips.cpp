// RUN: pkc %s --kernel=ring_repeated -o - | FileCheck %s
// RUN: not pkc %s --kernel=ring_repeated_racy -o /dev/null 2>&1 | FileCheck %s --check-prefix=RACE
// Tests that the protocol checker models a loop whose trips repeat the same accesses (its index
// unused, no signal or wait inside) by two trips: 4000 trips of a ring shift compile at once
// (the race check was quadratic in the trips: minutes), and a race inside such a loop is
// still found.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: ring_repeated(
PK_KERNEL void ring_repeated(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto a : range(0, 4000, 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 1}))
      store(y.on(next_rank()), load<1, 1>(x, m, n), m, n);
  }
}

PK_KERNEL void ring_repeated_racy(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> z) {
  for (auto a : range(0, 4000, 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 1})) {
      store(y.on(next_rank()), load<1, 1>(x, m, n), m, n);
// RACE: repeated-trips.cpp:[[@LINE+1]]:16: error: race for world size 2: rank 0 reads rank 0's copy of argument 1 (y) here while rank 1 writes it
      store(z, load<1, 1>(y, m, n), m, n);
    }
  }
}

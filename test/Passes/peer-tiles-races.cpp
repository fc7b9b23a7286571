// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests that peer-tile specs whose writes race are refused by the protocol checker at the
// racing access: every rank storing (not adding) the same tile into one owner, and a rank
// reading its own copy while the previous rank writes into it.
#include <pk/spec.h>
using namespace pk;

// CHECK: peer-tiles-races.cpp:[[@LINE+3]]:5: error: race for world size 2: rank 0 writes rank 0's copy of argument 1 ({{[a-z_0-9]+}}) here while rank 1 writes it
PK_KERNEL void all_store_to_zero(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64}))
    store(y.on(0), load<32, 64>(x, m, n), m, n);
}

// CHECK: peer-tiles-races.cpp:[[@LINE+4]]:14: error: race for world size 2: rank 0 reads rank 0's copy of argument 1 ({{[a-z_0-9]+}}) here while rank 1 writes it
PK_KERNEL void shift_then_read(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64})) {
    store(y.on(next_rank()), load<32, 64>(x, m, n), m, n);
    store(z, load<32, 64>(y, m, n), m, n);
  }
}

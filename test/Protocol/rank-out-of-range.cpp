// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests that a tile addressed to a rank outside the world for every world size the checker
// models (`.on(p + 1)` at the last peer) is reported as that, not as a race with a copy that
// does not exist ("rank 0 writes rank 2's copy ... while rank 1 writes it").
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void shift_past_the_end(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
// CHECK: rank-out-of-range.cpp:[[@LINE+1]]:43: error: for world size {{[0-9]+}}, rank {{[0-9]+}} addresses rank {{[0-9]+}}'s copy of argument 1 ({{[a-z_0-9]+}}) here, outside ranks 0..{{[0-9]+}} (`.on(p)` needs 0 <= p < world_size())
    for (auto p : range(0, world_size())) store(y.on(p + 1), load<16, 128>(x, m, n), m, n);
}

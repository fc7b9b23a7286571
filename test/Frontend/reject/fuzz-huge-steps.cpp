// RUN: not pkc %s --emit=cuda -o %t.cu 2>&1 | FileCheck %s --check-prefix=TILES
// RUN: not pkc %s --emit=cuda -DRANGE -o %t.cu 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not test -e %t.cu
// Tests that a constant tile or range() step past 2^31 - 1 is an error at the step. Fuzzing
// found `tiles(x.size(), {9223372036854775807})` compiled to a tile count of
// (n + 9223372036854775806) / 9223372036854775807, which overflows (no tile stored), and a range
// step of 2^63 - 1 from 5 wrapped the index negative, so the loop ran on.
#include <pk/spec.h>
using namespace pk;
#ifdef RANGE
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 64>();
// RANGE: fuzz-huge-steps.cpp:[[@LINE+1]]:38: error: the step of range() must be at most 2147483647, not 9223372036854775807 (the index would overflow past hi)
    for (auto k : range(5, x.cols(), 9223372036854775807)) acc = acc + load<16, 64>(x, m, k);
    store(y, acc, m, 0);
  }
}
#else
PK_KERNEL void k(Tensor<f32, 1> x, Tensor<f32, 1> y) {
// TILES: fuzz-huge-steps.cpp:[[@LINE+1]]:34: error: a tile step must be at most 2147483647, not 9223372036854775807 (the tile count, (size + step - 1) / step, would overflow)
  for (auto i : tiles(x.size(), {9223372036854775807})) store(y, load<256>(x, i) * 2.0f, i);
}
#endif

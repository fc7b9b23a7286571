// RUN: timeout 120 pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests that kernels mixing a collective's element runs (16384-element steps) with tile loops
// of 16 rows are verified at sizes chosen by the tile loops: they were modelled with 49153
// rows, ran for minutes in the race check, and then stayed unverified.
// CHECK-NOT: protocol not verified
// CHECK: pkc: wrote
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void a2a_then_tiles(Sym<bf16, 3> x, Sym<bf16, 3> h, Sym<bf16, 3> h2) {
  all_to_all(x, h, 0, 1);
  for (auto [a, m] : tiles(h.dim(0), h.dim(1), {1, 16}))
    store(h2, load<16, 64>(h, a, m, 0), a, m, 0);
}

PK_KERNEL void a2a_tiles_a2a(Sym<bf16, 3> x, Sym<bf16, 3> h, Sym<bf16, 3> h2, Sym<bf16, 3> y) {
  all_to_all(x, h, 0, 1);
  for (auto [a, m, d] : tiles(h.dim(0), h.dim(1), h.dim(2), {1, 16, 64}))
    store(h2, load<1, 16, 64>(h, a, m, d) * 2.0f, a, m, d);
  all_to_all(h2, y, 1, 0);
}

PK_KERNEL void ag_then_tiles(Sym<f32, 3> x, Sym<f32, 3> h, Tensor<f32, 3> y) {
  all_gather(x, h);
  for (auto [a, m, d] : tiles(h.dim(0), h.dim(1), h.dim(2), {1, 16, 64}))
    store(y, load<1, 16, 64>(h, a, m, d) + 1.0f, a, m, d);
}

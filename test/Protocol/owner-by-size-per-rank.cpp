// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=warning
// Tests that an extent the spec divides by world_size() (heads per rank, `x.dim(0) /
// world_size()`) is modelled as a multiple of it, as the spec needs: owners `h / hpr` then stay
// inside 0 .. world_size() - 1 and `h % hpr` does not fold heads onto each other (specs10 finding
// 5: refused as a peer out of range, or a race at world size 5). Races the spec really has are
// still found: 16-row tiles whose padding rows reach the next rank's block, and every head sent
// to one row.
#include <pk/spec.h>
using namespace pk;
// CHECK-NOT: error
PK_KERNEL void heads_by_owner(Tensor<bf16, 3> x, Sym<bf16, 3> y) {
  index hpr = x.dim(0) / world_size();
  for (auto [h, s] : tiles(x.dim(0), x.dim(1), {1, 1}))
    store(y.on(h / hpr), load<1, 64>(x, h, s, 0), h % hpr, rank() * x.dim(1) + s, 0);
}
// CHECK: owner-by-size-per-rank.cpp:[[@LINE+4]]:5: error: race for world size 2
PK_KERNEL void heads_by_owner_padded(Tensor<bf16, 3> x, Sym<bf16, 3> y) {
  index hpr = x.dim(0) / world_size();
  for (auto [h, s] : tiles(x.dim(0), x.dim(1), {1, 16}))
    store(y.on(h / hpr), load<16, 64>(x, h, s, 0), h % hpr, rank() * x.dim(1) + s, 0);
}
// CHECK: owner-by-size-per-rank.cpp:[[@LINE+4]]:5: error: race for world size 1
PK_KERNEL void heads_to_one_row(Tensor<bf16, 3> x, Sym<bf16, 3> y) {
  index hpr = x.dim(0) / world_size();
  for (auto [h, s] : tiles(x.dim(0), x.dim(1), {1, 1}))
    store(y.on(h / hpr), load<1, 64>(x, h, s, 0), 0, rank() * x.dim(1) + s, 0);
}

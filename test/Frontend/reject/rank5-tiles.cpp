// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not pkc %s --emit=mlir -DCOLLECTIVE -o %t.out 2>&1 | FileCheck %s --check-prefix=COLLECTIVE
// RUN: not test -e %t.out
// Tests that a 5-D tensor parameter is refused at its location: a launch passes four extents a
// tensor, so a fifth would be read from past them (a 5-D collective moved numel^2 elements
// before), and the tile library addresses up to 4 dimensions.
#include <pk/spec.h>
using namespace pk;
#ifdef COLLECTIVE
// COLLECTIVE: rank5-tiles.cpp:[[@LINE+1]]:42: error: a kernel's tensors have 1 to 4 dimensions (a launch passes four extents); this one has 5: merge two of its dimensions
PK_KERNEL void all_gather_5d(Sym<f32, 5> x, Sym<f32, 4> y) { all_gather(x, y); }
#else
// CHECK: rank5-tiles.cpp:[[@LINE+1]]:33: error: a kernel's tensors have 1 to 4 dimensions (a launch passes four extents); this one has 5: merge two of its dimensions
PK_KERNEL void k(Tensor<f32, 5> x, Tensor<f32, 4> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 1, 1}))
    store(y, load<1, 1, 4, 4>(x, a, b, c, 0), a, b, c, 0);
}
#endif

// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that a tile of a 5-D tensor is refused at its location (the tile library addresses up
// to 4 dimensions; it was an NVRTC error in the generated CUDA before).
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 5> x, Tensor<f32, 5> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 1, 1}))
// CHECK: rank5-tiles.cpp:[[@LINE+1]]:14: error: tiles and elements are addressed in tensors of at most 4 dimensions; this one has 5
    store(y, load<1, 1, 1, 4, 4>(x, a, b, c, 0, 0), a, b, c, 0, 0);
}

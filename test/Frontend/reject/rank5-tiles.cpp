// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not pkc %s --emit=mlir -DTRAILING -o %t.out 2>&1 | FileCheck %s --check-prefix=TRAILING
// RUN: not test -e %t.out
// Tests that a tile of a 5-D tensor is refused at its location (the tile library addresses up
// to 4 dimensions; it was an NVRTC error in the generated CUDA before): a 5-D tile for what
// it is, a tile of the trailing dimensions for the tensor's rank.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 5> x, Tensor<f32, 5> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 1, 1}))
#ifdef TRAILING
// TRAILING: rank5-tiles.cpp:[[@LINE+1]]:14: error: tiles and elements are addressed in tensors of at most 4 dimensions; this one has 5
    store(y, load<4, 4>(x, a, b, c, 0, 0), a, b, c, 0, 0);
#else
// CHECK: rank5-tiles.cpp:[[@LINE+1]]:14: error: a tile has 1 to 4 dimensions; this one has 5
    store(y, load<1, 1, 1, 4, 4>(x, a, b, c, 0, 0), a, b, c, 0, 0);
#endif
}

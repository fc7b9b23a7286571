// RUN: not pkc %s --emit=cuda -o %t.cu 2>&1 | FileCheck %s
// RUN: not pkc %s --emit=cuda -DZEROS -o %t.cu 2>&1 | FileCheck %s --check-prefix=ZEROS
// RUN: not test -e %t.cu
// Tests that a 5-D tile of a 4-D tensor (a leading 1 in front of its trailing dimensions) is an
// error at the call that makes it; fuzzing found it accepted and then refused by NVRTC (the
// tile library's reshape holds up to 4 dimensions).
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 4> x, Sym<f32, 4> y) {
#ifdef ZEROS
  for (auto i : tiles(x.size(), {1})) {
// ZEROS: fuzz-rank5-tile.cpp:[[@LINE+1]]:14: error: a tile has 1 to 4 dimensions; this one has 5 (leave out leading extents of 1)
    auto t = zeros<f32, 1, 1, 2, 16, 64>();
    store(y, t, i, 0, 0, 0);
  }
#else
  for (auto i : tiles(x.size(), {1}))
// CHECK: fuzz-rank5-tile.cpp:[[@LINE+1]]:14: error: a tile has 1 to 4 dimensions; this one has 5 (leave out leading extents of 1)
    store(y, load<1, 2, 16, 64, 32>(x, i, 0, 0, 1), i, 0, 0, 0);
#endif
}

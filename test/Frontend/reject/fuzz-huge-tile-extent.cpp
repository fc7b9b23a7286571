// RUN: not pkc %s --emit=cuda -o %t.cu 2>&1 | FileCheck %s
// RUN: not pkc %s --emit=cuda -DPRODUCT -o %t.cu 2>&1 | FileCheck %s --check-prefix=PRODUCT
// RUN: not test -e %t.cu
// Tests that a tile of more elements than the tile library counts in an int is an error at the
// call that makes it (fuzzing found `load<16, 9223372036854775807>` accepted, then refused
// by NVRTC), also where each extent fits but their product does not.
#include <pk/spec.h>
using namespace pk;
#ifdef PRODUCT
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
// PRODUCT: fuzz-huge-tile-extent.cpp:[[@LINE+1]]:14: error: this tile has more than 2147483647 elements: use smaller tiles
    store(y, load<65536, 65536>(x, m, n), m, n);
}
#else
PK_KERNEL void k(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
// CHECK: fuzz-huge-tile-extent.cpp:[[@LINE+1]]:22: error: this tile has more than 2147483647 elements: use smaller tiles
    store(y, sigmoid(load<16, 9223372036854775807>(x, m, n)), m, n);
}
#endif

// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// Tests that reshape of a tensor (set 41: a [N] weight reshaped to read it as a column) says to load the
// tensor first, and how, at the call.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void k(Tensor<f32, 2> x, Tensor<f32, 1> w, Sym<f32, 1> s, Tensor<f32, 2> y) {
  for (auto [r, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    // CHECK: reshape-tensor.cpp:[[@LINE+1]]:50: error: call to deleted function 'reshape': reshape takes a tile, not a tensor: load the tensor first; a [N] tensor reads as a column tile by load<M, 1>(w, m) and as a row by load<1, N>(w, n)
    store(y, load<16, 64>(x, r, n) * load<16, 1>(reshape<16, 1>(w), r, 0), r, n);
    // CHECK: reshape-tensor.cpp:[[@LINE+1]]:50: error: call to deleted function 'reshape': reshape takes a tile, not a tensor
    store(y, load<16, 64>(x, r, n) * load<1, 64>(reshape<1, 64>(s), 0, n), r, n);
  }
}

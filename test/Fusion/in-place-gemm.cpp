// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests that a GEMM writing one of its operands is refused: the tiles that read A race with the
// tiles that write it.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void in_place(Tensor<bf16, 2> a, Tensor<bf16, 2> b) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      // CHECK: in-place-gemm.cpp:[[@LINE+1]]:19: error: this tile loop reads a tensor at other tiles than it writes
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    // CHECK: in-place-gemm.cpp:[[@LINE+1]]:5: note: the write
    store(a, cast<bf16>(acc), m, n);
  }
}

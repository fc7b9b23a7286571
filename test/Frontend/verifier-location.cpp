// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that dialect verifier errors point at the spec line.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void k(Tensor<bf16, 2> A) {
  for (auto [m, n] : tiles(A.rows(), A.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    // CHECK: verifier-location.cpp:[[@LINE+1]]:{{[0-9]+}}: error: mma: inner dimensions differ
    acc = mma(load_smem<128, 64>(A, m, n), load_smem<32, 128>(A, m, n), acc);
  }
}

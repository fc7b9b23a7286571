// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: storing an f32 tile into a bf16 tensor without a cast is an error at the store.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
// CHECK: audit-store-elem-type.cpp:[[@LINE+1]]:5: error: store: tile element type 'f32' does not match tensor element type 'bf16'
    store(y, load<16, 32>(x, m, n), m, n);
}

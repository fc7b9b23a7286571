// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that store_add into a local tensor is rejected at its location with what to write instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {16}))
// CHECK: store-add-local.cpp:[[@LINE+1]]:{{[0-9]+}}: error: no matching function for call to 'store_add'
  store_add(y, load<16>(x, i), i);
}

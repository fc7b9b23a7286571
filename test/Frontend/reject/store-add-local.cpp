// RUN: not pkc %s --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// Tests that store_add into a local 1-D tensor (rows are added by index into 2-D ones) is an
// error at its location that says to declare it [1, N].
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {16}))
// CHECK: store-add-local.cpp:[[@LINE+1]]:3: error: store_add into a local tensor takes a 2-D tensor (it adds the tile's rows by index, as store_add_rows does); view a 1-D one as [1, N]
  store_add(y, load<16>(x, i), i);
}

// RUN: pkc %s --kernel good --emit=mlir | FileCheck %s
// RUN: not pkc %s --emit=mlir 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: not pkc %s --kernel bad --emit=mlir 2>&1 | FileCheck %s --check-prefix=ALL
// Tests that `--kernel` lowers only the kernel asked for, so another kernel of the file that
// the spec language rejects (one still being written) does not stop it; compiling that kernel,
// or the whole file, still reports its error at its line.
#include <pk/spec.h>
using namespace pk;

// CHECK: pk.kernel @good
// CHECK-NOT: pk.kernel @bad
PK_KERNEL void good(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * 2.0f, i);
}

// ALL: only-kernel.cpp:[[@LINE+2]]:9: error: a float scalar cannot initialise an index variable
PK_KERNEL void bad(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  index k = x.at(0);
  for (auto i : tiles(k, {256})) store(y, load<256>(x, i), i);
}

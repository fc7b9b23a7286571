// RUN: not pkc %s --emit=mlir -o %t.mlir 2>&1 | FileCheck %s --check-prefix=DIM
// RUN: not pkc %s --emit=mlir -DSHIFT -o %t.mlir 2>&1 | FileCheck %s --check-prefix=SHIFT
// RUN: not test -e %t.mlir
// Tests that a constant which changes value on its way into spec.h is an error, not a warning
// beside a kernel that then reads another dimension: fuzzing found `x.dim(4294967296)`
// compiled as x.dim(0) and `all_gather(x, y, 4294967296)` as dimension 0.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 1> x, Tensor<f32, 1> y) {
#ifdef SHIFT
// SHIFT: fuzz-constant-conversion.cpp:[[@LINE+1]]:70: error: shift count >= width of type
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i + (1 << 40)), i);
#else
// DIM: fuzz-constant-conversion.cpp:[[@LINE+1]]:29: error: implicit conversion from 'long' to 'int' changes value from 4294967296 to 0
  for (auto i : tiles(x.dim(4294967296), {256})) store(y, load<256>(x, i) * 2.0f, i);
#endif
}

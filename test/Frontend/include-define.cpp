// RUN: pkc %s --emit=mlir -I %S/Inputs/include -DSTEP=32 -DUSE_MAX | FileCheck %s
// RUN: pkc %s --emit=mlir -I %S/Inputs/include -DSTEP=16 | FileCheck %s --check-prefix=SUM
// RUN: not pkc %s --emit=mlir -DSTEP=16 2>&1 | FileCheck %s --check-prefix=NOINC
// RUN: pkc %s --emit=mlir -I %S/Inputs/include -DSTEP=16 -std=c++17 | FileCheck %s --check-prefix=SUM
// Tests that -I, -D and -std reach Clang.
#include <mylib/tiles.h>
#include <pk/spec.h>
#include <stdint.h>
using namespace pk;

// CHECK: step [128, 32]
// CHECK: <max>
// SUM: step [128, 16]
// SUM: <sum>
// NOINC: include-define.cpp:6:10: fatal error: 'mylib/tiles.h' file not found
PK_KERNEL void k(Sym<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {MY_TILE, STEP})) {}
#ifdef USE_MAX
  all_reduce(Max, x, y);
#else
  all_reduce(Sum, x, y);
#endif
  static_assert(sizeof(int32_t) == 4, "builtin headers are served from memory");
}

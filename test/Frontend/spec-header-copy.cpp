// RUN: pkc %s --emit=mlir -I %S/../../compiler/frontend/include | FileCheck %s
// RUN: pkc %s --emit=mlir -DBY_PATH | FileCheck %s
// Tests that the spec.h operations are recognised when `-I` points at a copy of pk/spec.h
// (the source tree's, an installed one): the embedded header is searched first; and when a
// spec includes a copy by its path, its declarations are still the spec language's.
#ifdef BY_PATH
#include "../../compiler/frontend/include/pk/spec.h"
#else
#include <pk/spec.h>
#endif
using namespace pk;

// CHECK-LABEL: pk.kernel @gather
// CHECK: pk.tile.foreach
// CHECK: pk.coll.all_gather
PK_KERNEL void gather(Sym<f32, 2> x, Sym<f32, 2> s, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 64})) store(s, load<16, 64>(x, m, n) * 2.0f, m, n);
  all_gather(s, y);
}

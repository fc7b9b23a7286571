// RUN: not pkc %s -o /dev/null -DDOUBLE 2>&1 | FileCheck %s --check-prefix=DOUBLE
// RUN: not pkc %s -o /dev/null -DVARIADIC 2>&1 | FileCheck %s --check-prefix=VARIADIC
// RUN: not pkc %s -o /dev/null -DROOT 2>&1 | FileCheck %s --check-prefix=ROOT
// RUN: not pkc %s -o /dev/null -DWAIT 2>&1 | FileCheck %s --check-prefix=WAIT
// Tests that what the spec states as constants is checked when pkc runs: a double parameter
// (narrowed to f32 otherwise), a variadic kernel, a negative constant root, a negative wait count.
#include <pk/spec.h>
using namespace pk;
#ifdef DOUBLE
// DOUBLE: constant-ranges.cpp:[[@LINE+1]]:61: error: a 'double' parameter would be narrowed to float; scalars compute in f32, declare it float
PK_KERNEL void k(Tensor<f32, 1> x, Tensor<f32, 1> y, double s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * s, i);
}
#endif
#ifdef VARIADIC
// VARIADIC: constant-ranges.cpp:[[@LINE+1]]:16: error: a kernel takes a fixed list of parameters, not `...`
PK_KERNEL void k(Tensor<f32, 1> x, ...) {}
#endif
#ifdef ROOT
// ROOT: constant-ranges.cpp:[[@LINE+1]]:66: error: the root is a rank, 0 to world_size() - 1; got -1
PK_KERNEL void k(Sym<f32, 1> x, Sym<f32, 1> y) { broadcast(x, y, -1); }
#endif
#ifdef WAIT
PK_KERNEL void k(Sym<f32, 1> x) {
  auto f = prim::flag(0);
  prim::signal_all(f);
// WAIT: constant-ranges.cpp:[[@LINE+1]]:17: error: a wait counts the signals it needs per launch, 0 or more; got -1
  prim::wait(f, -1);
}
#endif

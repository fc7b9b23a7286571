// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests that a Reduce or Transport value that names no enumerator (Reduce(7)) is an error at the
// argument, not lowered as Sum or Ldst.
#include <pk/spec.h>
using namespace pk;
// CHECK: enum-range.cpp:[[@LINE+1]]:61: error: 7 is not a Reduce: write one of Sum, Max, Min
PK_KERNEL void k(Sym<f32, 1> x, Sym<f32, 1> y) { all_reduce(Reduce(7), x, y); }
PK_KERNEL void k2(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
// CHECK: enum-range.cpp:[[@LINE+1]]:39: error: 9 is not a Transport: write one of Ldst, Tma, Multimem
    store(y, prim::load_peer<32, 128>(Transport(9), x.on(next_rank()), m, n), m, n);
  prim::barrier(prim::flag(1));
}

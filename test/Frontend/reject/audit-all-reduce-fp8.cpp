// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: an fp8 all-reduce is an error at the call that says what to reduce in instead.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f8e4m3, 1> x, Sym<f8e4m3, 1> y) {
// CHECK: audit-all-reduce-fp8.cpp:[[@LINE+1]]:3: error: all_reduce: reductions support bf16, f16, f32, i32 and i64, got 'f8e4m3'; fp8 values do not add
  all_reduce(Sum, x, y);
}

// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: a collective's dimension outside the tensor's rank is an error at the call.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 2> x, Sym<f32, 2> y) {
// CHECK: audit-gather-dim-range.cpp:[[@LINE+1]]:3: error: all_gather: dimension 2 is out of range for a tensor of rank 2
  all_gather(x, y, 2);
}

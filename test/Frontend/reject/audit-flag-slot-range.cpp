// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// Audit: a flag slot outside [0, 1024) is an error at the flag.
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x) {
// CHECK: audit-flag-slot-range.cpp:[[@LINE+1]]:28: error: flag slots are in [0, 1024), got -1
  prim::barrier(prim::flag(-1));
}

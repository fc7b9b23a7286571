// RUN: pkc %s --explain -o %t.cu 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: not pkc %s -DALL_GATHER -o /dev/null 2>&1 | FileCheck %s --check-prefix=A2A
// Tests that in-place collectives lower to race-free paths (the protocol checker proves them:
// no error, no warning) and say how; in-place forms not lowered yet are errors at the op.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: decisions for kernel 'ar'
// CHECK-NOT: rule 1 (small messages)
// CHECK: in place: two-shot on the direct path
// CHECK-NOT: warning
// CUDA-LABEL: void __launch_bounds__({{.*}}) ar(
// CUDA-NOT: pk::push_small
// CUDA: pk::reduce_into
PK_KERNEL void ar(Sym<bf16, 1> x) { all_reduce(Sum, x, x); }

// CHECK-LABEL: decisions for kernel 'bc'
// CHECK: SM copies only: in place
// CHECK: in place: the root keeps its data
PK_KERNEL void bc(Sym<f32, 1> x, index root) { broadcast(x, x, root); }

// CHECK-LABEL: decisions for kernel 'rd'
// CHECK: in place: only the root writes
PK_KERNEL void rd(Sym<f32, 1> x) { reduce(Max, x, x, 1); }

// CHECK-LABEL: decisions for kernel 'a2a'
// CHECK: in place: for each pair of ranks the lower one swaps the two blocks
// CUDA-LABEL: void __launch_bounds__({{.*}}) a2a(
// CUDA: pk::swap_elems
PK_KERNEL void a2a(Sym<bf16, 2> x) { all_to_all(x, x); }

#ifdef ALL_GATHER
// An in-place all-gather would need the input to be a slice of the output.
// A2A: in-place-collectives.cpp:[[@LINE+1]]:36: error: 'pk.coll.all_gather' op cannot run in place (the same tensor as input and output): its output and input differ in size by a factor of world_size
PK_KERNEL void ag(Sym<f32, 1> x) { all_gather(x, x); }
#endif

// RUN: pkc %s --explain -o %t.cu 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// Tests that in-place collectives lower to race-free paths (the protocol checker proves them:
// no error, no warning) and say how, the size-changing ones in NCCL's chunked form.
#include <pk/spec.h>
using namespace pk;

// An all-reduce keeps its one-round paths (LL and push: peers read only landing slots, each
// block reads its groups of x before writing them); its direct path is two-shot.
// CHECK-LABEL: decisions for kernel 'ar'
// CHECK: rule 1 (small messages)
// CHECK: rule 1 (LL)
// CHECK: in place: two-shot on the direct path{{.*}}the one-round paths (LL, push) stay
// CHECK-NOT: warning
// CUDA-LABEL: void __launch_bounds__({{.*}}) ar(
// CUDA: pk::push_small<pk::SmallCollective::all_reduce
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

// CHECK-LABEL: decisions for kernel 'ag'
// CHECK: in place: chunk r of the tensor is rank r's input
// CUDA-LABEL: void __launch_bounds__({{.*}}) ag(
// CUDA: in place, the tensor holds world_size equal chunks: its element count must be a multiple of world_size
PK_KERNEL void ag(Sym<f32, 1> x) { all_gather(x, x); }

// CHECK-LABEL: decisions for kernel 'rs'
// CHECK: in place: the tensor holds world_size chunks and chunk r is rank r's output; rank r alone writes it
// CUDA-LABEL: void __launch_bounds__({{.*}}) rs(
// CUDA: its row count must be a multiple of world_size
PK_KERNEL void rs(Sym<bf16, 2> x) { reduce_scatter(Sum, x, x); }

// CHECK-LABEL: decisions for kernel 'ga'
// CHECK: in place: chunk r of the tensor is rank r's input
PK_KERNEL void ga(Sym<f32, 1> x, index root) { gather(x, x, root); }

// CHECK-LABEL: decisions for kernel 'sc'
// CHECK: in place: {{.*}} rank r copies it from the root's chunk r
PK_KERNEL void sc(Sym<f32, 1> x) { scatter(x, x, 1); }

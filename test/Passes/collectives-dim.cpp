// RUN: pkc %s --explain -o %t.cu 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: pkc %s --emit=cubin -o %t.cubin
// RUN: not pkc %s -DBAD_DIM -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not pkc %s -DBAD_A2A -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD_A2A
// RUN: not pkc %s -DBAD_A2A_DIM -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD_A2A_DIM
// RUN: pkc %s --emit=launcher-impl -o %t.cpp
// RUN: FileCheck %s --check-prefix=HOST < %t.cpp
// RUN: not pkc %s -DRUNTIME_DIM -o /dev/null 2>&1 | FileCheck %s --check-prefix=RUNTIME
// Tests that all_gather and reduce_scatter along a dimension other than the first (column
// shards) lower to strided pulls proved by the protocol checker (no warning), with the
// one-round and copy-engine paths off and the run-time shape rule of that dimension, and
// that a bad or non-constant dimension is an error at the call.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: decisions for kernel 'ag_cols'
// CHECK: rule 1 (small messages): {{.*}} off: along dimension 1 a peer's part is strided
// CHECK: rule 1 (mechanism): {{.*}} SM copies only: along a dimension other than the first
// CHECK-NOT: warning
// CUDA-LABEL: void __launch_bounds__({{.*}}) ag_cols(
// CUDA: dimension 1 of the output must be world_size times the input's
// CUDA: dimension 0 of the input and the output must agree
// CUDA: pk::copy
PK_KERNEL void ag_cols(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_gather(x, y, 1); }

// CHECK-LABEL: decisions for kernel 'rs_cols'
// CHECK: rule 1 (small messages): {{.*}} off: along dimension 1
// CUDA-LABEL: void __launch_bounds__({{.*}}) rs_cols(
// CUDA: dimension 1 of the input must be world_size times the output's
// CUDA: pk::reduce_into
PK_KERNEL void rs_cols(Sym<f32, 2> x, Sym<f32, 2> y) { reduce_scatter(Sum, x, y, 1); }

// A middle dimension of a 3-D tensor, and both in place.
// CHECK-LABEL: decisions for kernel 'ag_mid'
PK_KERNEL void ag_mid(Sym<f32, 3> x, Sym<f32, 3> y) { all_gather(x, y, 1); }
// CHECK-LABEL: decisions for kernel 'ag_cols_in_place'
// CHECK: in place: chunk r of the tensor is rank r's input
// CUDA-LABEL: void __launch_bounds__({{.*}}) ag_cols_in_place(
// CUDA: in place, dimension 1 holds world_size equal chunks
PK_KERNEL void ag_cols_in_place(Sym<bf16, 2> x) { all_gather(x, x, 1); }
// CHECK-LABEL: decisions for kernel 'rs_cols_in_place'
// CHECK: in place: the tensor holds world_size chunks
PK_KERNEL void rs_cols_in_place(Sym<f32, 2> x) { reduce_scatter(Max, x, x, 1); }

// All-to-all split along one dimension and concatenated along another (sequence to head
// parallelism and back): strided pulls from the deeper dimension's runs, shape rules per side.
// CHECK-LABEL: decisions for kernel 'a2a_seq_to_heads'
// CHECK: rule 1 (small messages): {{.*}} off: along dimension 1 a peer's part is strided
// CHECK-NOT: warning
// CUDA-LABEL: void __launch_bounds__({{.*}}) a2a_seq_to_heads(
// CUDA: dimension 0 (split) of the input must be world_size times the output's
// CUDA: dimension 1 (concat) of the output must be world_size times the input's
// CUDA: dimension 2 of the input and the output must agree
// CUDA: pk::copy
PK_KERNEL void a2a_seq_to_heads(Sym<bf16, 3> x, Sym<bf16, 3> y) { all_to_all(x, y, 0, 1); }
// CHECK-LABEL: decisions for kernel 'a2a_heads_to_seq'
// CHECK-NOT: warning
PK_KERNEL void a2a_heads_to_seq(Sym<bf16, 3> x, Sym<bf16, 3> y) { all_to_all(x, y, 1, 0); }
// CHECK-LABEL: decisions for kernel 'a2a_cols_to_rows'
PK_KERNEL void a2a_cols_to_rows(Sym<f32, 2> x, Sym<f32, 2> y) { all_to_all(x, y, 1, 0); }

// All-to-all within one dimension other than the first (column block j of rank r lands on
// rank j as column block r): the same strided pulls, the dimension a multiple of world_size,
// and in place pairwise swaps of strided blocks.
// CHECK-LABEL: decisions for kernel 'a2a_cols'
// CHECK: rule 1 (small messages): {{.*}} off: along dimension 1 a peer's part is strided
// CHECK-NOT: warning
// CUDA-LABEL: void __launch_bounds__({{.*}}) a2a_cols(
// CUDA: dimension 1 holds world_size equal blocks: it must be a multiple of world_size
// CUDA: dimension 0 of the input and the output must agree
// CUDA: dimension 1 of the input and the output must agree
// CUDA: pk::copy
// HOST-LABEL: pk::Status a2a_cols(
// HOST: if (!(x.shape[1] % world == 0))
// HOST-NEXT: return pk::Status::error("a2a_cols: x.shape[1] must be a multiple of the world size (pk.coll.all_to_all)");
PK_KERNEL void a2a_cols(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_to_all(x, y, 1, 1); }
// CHECK-LABEL: decisions for kernel 'a2a_last'
// CHECK-NOT: warning
PK_KERNEL void a2a_last(Sym<f32, 3> x, Sym<f32, 3> y) { all_to_all(x, y, 2, 2); }
// CHECK-LABEL: decisions for kernel 'a2a_cols_in_place'
// CHECK: in place: for each pair of ranks the lower one swaps the two blocks
// CHECK-NOT: warning
// CUDA-LABEL: void __launch_bounds__({{.*}}) a2a_cols_in_place(
// CUDA: dimension 1 holds world_size equal blocks
// CUDA-NOT: dimension 0 of the input and the output must agree
// CUDA: pk::swap_elems
PK_KERNEL void a2a_cols_in_place(Sym<f32, 3> x) { all_to_all(x, x, 1, 1); }

#ifdef BAD_DIM
// BAD: collectives-dim.cpp:[[@LINE+1]]:57: error: all_gather: dimension 2 is out of range for a tensor of rank 2
PK_KERNEL void ag_bad(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_gather(x, y, 2); }
#endif
#ifdef BAD_A2A
// BAD_A2A: collectives-dim.cpp:[[@LINE+1]]:58: error: all_to_all: in place needs split_dim == concat_dim
PK_KERNEL void a2a_bad(Sym<bf16, 3> x, Sym<bf16, 3> y) { all_to_all(x, x, 0, 1); }
#endif
#ifdef BAD_A2A_DIM
// BAD_A2A_DIM: collectives-dim.cpp:[[@LINE+1]]:62: error: all_to_all: dimension 2 is out of range for a tensor of rank 2
PK_KERNEL void a2a_bad_dim(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_to_all(x, y, 2, 2); }
#endif
#ifdef RUNTIME_DIM
// RUNTIME: collectives-dim.cpp:[[@LINE+1]]:82: error: the dimension of 'all_gather' must be a constant integer
PK_KERNEL void ag_rt(Sym<bf16, 2> x, Sym<bf16, 2> y, index d) { all_gather(x, y, d); }
#endif

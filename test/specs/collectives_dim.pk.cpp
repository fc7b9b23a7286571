// Collectives along a dimension other than the first: the column shards tensor-parallel layers
// gather and scatter. test/gpu/collectives_dim_test.cu runs them at W = 1-4 against float64
// references; test/Passes/collectives-dim.cpp checks their lowering.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void all_gather_cols(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_gather(x, y, 1); }
PK_KERNEL void reduce_scatter_cols(Sym<f32, 2> x, Sym<f32, 2> y) { reduce_scatter(Sum, x, y, 1); }
PK_KERNEL void all_gather_mid(Sym<f32, 3> x, Sym<f32, 3> y) { all_gather(x, y, 1); }
PK_KERNEL void all_gather_cols_in_place(Sym<bf16, 2> x) { all_gather(x, x, 1); }
PK_KERNEL void reduce_scatter_cols_in_place(Sym<f32, 2> x) { reduce_scatter(Max, x, x, 1); }
// Outputs that are plain local tensors: every rank pulls the peers' symmetric inputs into its own.
PK_KERNEL void all_gather_local(Sym<f32, 1> x, Tensor<f32, 1> y) { all_gather(x, y); }
PK_KERNEL void all_gather_cols_local(Sym<f32, 2> x, Tensor<f32, 2> y) { all_gather(x, y, 1); }
PK_KERNEL void all_to_all_local(Sym<f32, 2> x, Tensor<f32, 2> y) { all_to_all(x, y); }
PK_KERNEL void all_to_all_heads_local(Sym<f32, 3> x, Tensor<f32, 3> y) { all_to_all(x, y, 0, 1); }
// All-to-all within one dimension other than the first: rank r's block j along it lands on
// rank j as block r (columns, the last of three dimensions, in place, into a local output).
PK_KERNEL void all_to_all_cols(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_to_all(x, y, 1, 1); }
PK_KERNEL void all_to_all_last(Sym<f32, 3> x, Sym<f32, 3> y) { all_to_all(x, y, 2, 2); }
PK_KERNEL void all_to_all_mid_in_place(Sym<f32, 3> x) { all_to_all(x, x, 1, 1); }
PK_KERNEL void all_to_all_cols_local(Sym<f32, 2> x, Tensor<f32, 2> y) { all_to_all(x, y, 1, 1); }

// In-place collectives (the same symmetric tensor as input and output), as dist.all_reduce(t)
// calls them. test/gpu/in_place_test.cu runs them at W = 1-4 against float64 references.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void all_reduce_in_place(Sym<bf16, 1> x) { all_reduce(Sum, x, x); }
PK_KERNEL void all_reduce_max_in_place(Sym<f32, 2> x) { all_reduce(Max, x, x); }
PK_KERNEL void broadcast_in_place(Sym<f32, 1> x) { broadcast(x, x, world_size() - 1); }
PK_KERNEL void reduce_in_place(Sym<f32, 1> x) { reduce(Sum, x, x, 0); }
PK_KERNEL void all_to_all_in_place(Sym<bf16, 2> x) { all_to_all(x, x); }
// The size-changing ones in NCCL's in-place form: the tensor holds world_size chunks, and chunk r
// is rank r's input (all_gather, gather) or its output (reduce_scatter, scatter).
PK_KERNEL void all_gather_in_place(Sym<f32, 1> x) { all_gather(x, x); }
PK_KERNEL void reduce_scatter_in_place(Sym<f32, 2> x) { reduce_scatter(Sum, x, x); }
PK_KERNEL void gather_in_place(Sym<f32, 1> x, index root) { gather(x, x, root); }
PK_KERNEL void scatter_in_place(Sym<bf16, 1> x) { scatter(x, x, 0); }

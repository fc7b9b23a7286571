// In-place collectives (the same symmetric tensor as input and output), as dist.all_reduce(t)
// calls them. test/gpu/in_place_test.cu runs them at W = 1-4 against float64 references.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void all_reduce_in_place(Sym<bf16, 1> x) { all_reduce(Sum, x, x); }
PK_KERNEL void all_reduce_max_in_place(Sym<f32, 2> x) { all_reduce(Max, x, x); }
PK_KERNEL void broadcast_in_place(Sym<f32, 1> x) { broadcast(x, x, world_size() - 1); }
PK_KERNEL void reduce_in_place(Sym<f32, 1> x) { reduce(Sum, x, x, 0); }
PK_KERNEL void all_to_all_in_place(Sym<bf16, 2> x) { all_to_all(x, x); }

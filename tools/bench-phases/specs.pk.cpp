// Kernels of pk-bench-phases: an all-reduce out of place and in place, an all-gather, and the
// all-reduce followed by the all-gather of its result in one kernel (two dependent phases).
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void all_reduce_out(Sym<bf16, 1> x, Sym<bf16, 1> y) { all_reduce(Sum, x, y); }
PK_KERNEL void all_reduce_in_place(Sym<bf16, 1> x) { all_reduce(Sum, x, x); }
PK_KERNEL void all_gather_of(Sym<bf16, 1> y, Sym<bf16, 1> z) { all_gather(y, z); }
PK_KERNEL void all_reduce_then_gather(Sym<bf16, 1> x, Sym<bf16, 1> y, Sym<bf16, 1> z) {
  all_reduce(Sum, x, y);
  all_gather(y, z);
}

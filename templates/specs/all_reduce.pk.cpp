// All-reduce (sum) of a symmetric bf16 vector of any length over any number of ranks:
// after the kernel, y on every rank holds the element-wise sum of x over all ranks.
// The C++ twin of all_reduce.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void all_reduce(Sym<bf16, 1> x, Sym<bf16, 1> y) { pk::all_reduce(Sum, x, y); }

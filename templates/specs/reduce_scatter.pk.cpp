// Reduce-scatter (sum): rank r receives the sum over ranks of the r-th block of x.
// The C++ twin of reduce_scatter.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void reduce_scatter(Sym<bf16, 1> x, Tensor<bf16, 1> y) { pk::reduce_scatter(Sum, x, y); }

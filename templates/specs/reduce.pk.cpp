// Reduce (sum) to a root: y on rank root holds the sum of x over all ranks.
// The C++ twin of reduce.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void reduce(Sym<bf16, 1> x, Tensor<bf16, 1> y, index root) { pk::reduce(Sum, x, y, root); }

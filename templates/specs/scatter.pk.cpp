// Scatter: rank r receives the r-th block of x on rank root.
// The C++ twin of scatter.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void scatter(Sym<bf16, 1> x, Tensor<bf16, 1> y, index root) { pk::scatter(x, y, root); }

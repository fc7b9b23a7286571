// Gather: y on rank root holds every rank's x, concatenated by rank.
// The C++ twin of gather.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void gather(Sym<bf16, 1> x, Tensor<bf16, 1> y, index root) { pk::gather(x, y, root); }

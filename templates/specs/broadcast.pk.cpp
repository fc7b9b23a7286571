// Broadcast: y on every rank becomes a copy of x on rank root.
// The C++ twin of broadcast.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void broadcast(Sym<bf16, 1> x, Tensor<bf16, 1> y, index root) { pk::broadcast(x, y, root); }

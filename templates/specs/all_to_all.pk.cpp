// All-to-all: rank r sends its j-th block of x to rank j, which stores it as block r of y.
// The C++ twin of all_to_all.mlir.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void all_to_all(Sym<bf16, 1> x, Sym<bf16, 1> y) { pk::all_to_all(x, y); }

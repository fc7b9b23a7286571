#include <pk/spec.h>
using namespace pk;
struct S { PK_KERNEL void k(Sym<f32, 1> x) { all_reduce(Sum, x, x); } };

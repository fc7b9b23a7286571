#include <pk/spec.h>
using namespace pk;
struct B { virtual index f() const; };
PK_KERNEL void k(Sym<f32, 1> x) { auto n = B{}.f(); }

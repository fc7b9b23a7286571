#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<double, 1> x) {}

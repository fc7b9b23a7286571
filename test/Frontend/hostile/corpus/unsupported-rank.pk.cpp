#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 9> x) {}

#include <pk/spec.h>
using namespace pk;
index counter = 0;
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
  auto n = counter;
}

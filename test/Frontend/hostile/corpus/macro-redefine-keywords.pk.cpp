#define for while
#define auto int
#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : range(0, 4)) {}
}

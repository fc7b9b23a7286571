#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : range(0, x.size(), 99999999999999999999)) {}
}

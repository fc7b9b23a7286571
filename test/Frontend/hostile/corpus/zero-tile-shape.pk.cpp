#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 1> x) {
  for (auto i : tiles(x.size(), {16})) { auto t = load<0>(x, i); }
}

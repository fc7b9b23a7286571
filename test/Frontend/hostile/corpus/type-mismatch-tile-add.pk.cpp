#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 1> x, Tensor<bf16, 1> y) {
  for (auto i : tiles(x.size(), {16})) { auto t = load<16>(x, i) + load<16>(y, i); }
}

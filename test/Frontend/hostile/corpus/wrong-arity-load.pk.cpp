#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<f32, 2> x) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 16})) { auto t = load<16, 16>(x, m); }
}

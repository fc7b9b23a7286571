#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Sym<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {16})) prim::store_async(Tma, x.on(0), load<16>(y, i), i);
}

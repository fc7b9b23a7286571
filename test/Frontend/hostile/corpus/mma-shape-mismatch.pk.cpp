#include <pk/spec.h>
using namespace pk;
PK_KERNEL void k(Tensor<bf16, 2> A) {
  auto acc = zeros<f32, 64, 64>();
  for (auto [m, n] : tiles(A.rows(), A.cols(), {64, 64})) { auto r = mma(load<64, 32>(A, m, n), load<16, 64>(A, m, n), acc); }
}

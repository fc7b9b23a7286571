// RUN: pkc %s -o /dev/null 2>&1 | FileCheck %s --allow-empty
// Tests that an in-place update whose load and store write the same index expression twice
// (`64 + n`, two SSA values) is the same tile to the race check, not a read of another tile.
#include <pk/spec.h>
using namespace pk;
// CHECK-NOT: error
PK_KERNEL void right_half(Tensor<f32, 2> x) {
  for (auto [m, n] : tiles(x.rows(), 64, {8, 64}))
    store(x, load<8, 64>(x, m, 64 + n) * 2.0f, m, 64 + n);
}

// A spec that includes a header of its own (test/Driver/stdin.test).
#include <pk/spec.h>
#include "with_header.h"
using namespace pk;

PK_KERNEL void scale_rows(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {kRowsPerTile, 64}))
    store(y, load<kRowsPerTile, 64>(x, m, n) * 2.0f, m, n);
}

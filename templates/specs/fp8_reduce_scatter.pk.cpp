// fp8_reduce_scatter: a sum reduce-scatter of bf16 rows whose bytes cross the links as fp8
// (e4m3) with one f32 scale per row and block of 128 columns. Every rank holds x [M, N]; rank r
// gets y [M / W, N], the sum over ranks of their rows r * M / W onwards. Each rank quantises
// its x into q and s (scale = the block's largest magnitude / 448), then, after a grid-wide
// barrier, each rank reads its rows of every peer's q and s, dequantises and sums in f32. Each
// term carries e4m3's error: at most 2^-4 of its value (plus 2^-10 of its block's scale).
// q and s are workspace (Scratch): their contents afterwards are unspecified.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void fp8_reduce_scatter(Tensor<bf16, 2> x, Scratch<f8e4m3, 2> q, Scratch<f32, 2> s,
                                  Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = cast<f32>(load<16, 128>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-30f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(s, amax * 0.002232142857f, m, n / 128);
  }
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto p : range(0, world_size())) {
      auto row = rank() * y.rows() + m;
      acc = acc + cast<f32>(load<16, 128>(q.on(p), row, n)) * load<16, 1>(s.on(p), row, n / 128);
    }
    store(y, cast<bf16>(acc), m, n);
  }
}

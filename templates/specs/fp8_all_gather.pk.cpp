// fp8_all_gather: an all-gather of bf16 rows sent as fp8 (e4m3) with one f32 scale per row and
// block of 128 columns, half the bytes of bf16 on the links. Each rank quantises its x [M, N]
// into its q and s (scale = the block's largest magnitude / 448, so nothing saturates), the
// ranks all-gather q and s into gq [W * M, N] and gs [W * M, N / 128] (N / 128 rounded up),
// and each rank dequantises gq into y [W * M, N]: rank r's rows land at r * M. The error is
// e4m3's: at most 2^-4 of each value (plus 2^-10 of its block's scale below e4m3's normals).
// q, s, gq and gs are workspace (Scratch): their contents afterwards are unspecified.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void fp8_all_gather(Tensor<bf16, 2> x, Scratch<f8e4m3, 2> q, Scratch<f32, 2> s,
                              Scratch<f8e4m3, 2> gq, Scratch<f32, 2> gs, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = cast<f32>(load<16, 128>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-30f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(s, amax * 0.002232142857f, m, n / 128);
  }
  all_gather(q, gq);
  all_gather(s, gs);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128}))
    store(y, cast<bf16>(cast<f32>(load<16, 128>(gq, m, n)) * load<16, 1>(gs, m, n / 128)), m, n);
}

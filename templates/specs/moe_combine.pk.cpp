// MoE combine: the experts' outputs come back to each token's home rank, summed with the
// router's weights. `y` [W El T, H] holds each rank's expert outputs in moe_dispatch's layout,
// and `ids`, `weights` [T, K] and `slot` [T, K] are this rank's routing and what moe_dispatch
// recorded: out[t] = sum over k of weights[t, k] y[slot[t, k]] of rank ids[t, k] / El, in f32,
// rounded once to bf16. A choice with slot -1 (an expert id outside [0, E)) adds nothing. The
// rows are pulled from the experts' ranks by NVLink loads; `experts` is El, experts per rank.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void moe_combine(Sym<bf16, 2> y, Tensor<i32, 2> ids, Tensor<f32, 2> weights,
                           Tensor<i32, 2> slot, Tensor<bf16, 2> out, index experts) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 512})) {
    auto acc = zeros<f32, 32, 512>();
    for (auto k : range(0, ids.cols())) {
      auto owner = load<32, 1>(ids, t, k) / experts;
      auto place = load<32, 1>(slot, t, k);
      auto w = load<32, 1>(weights, t, k);
      for (auto p : range(0, world_size()))
        acc = acc + cast<f32>(load_rows<32, 512>(y.on(p), where(owner == p, place, -1), n)) * w;
    }
    store(out, cast<bf16>(acc), t, n);
  }
}

// Attention in f16: the shipped attention specs' loops with q, k, v and o f16 (p cast to f16),
// which take the Hopper attention template's f16 instance (attention_template_test runs them
// against float64). One [S, D] kernel at head dim 128 and one [H, S, D] causal kernel at 64.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void attention_f16_d128(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o,
                                  Tensor<f32, 2> lse, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
    store(lse, mx + log(l), m, 0);
  }
}

PK_KERNEL void attention_heads_f16_causal_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v,
                                              Tensor<f16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// Grouped-query attention (GQA / MQA) on [H, S, D] tensors: query head h reads K and V head
// h / G, with G query heads per K/V head, written the two ways a user would: G from the sizes
// (q.dim(0) / k.dim(0)) or G as an integer argument. Each takes the Hopper attention template
// (K and V loaded at h / G); the last one stores its log-sum-exp into a 1-D [S] tensor.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void gqa_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                       Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index kh = h / (q.dim(0) / k.dim(0));
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, kh, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, kh, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// G as an argument, the division written at each load.
PK_KERNEL void gqa_causal_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                               Tensor<f32, 3> lse, index group, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h / group, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// One head, the log-sum-exp into a 1-D [S] tensor (the [S, 1] memory layout).
PK_KERNEL void attention_lse_1d_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                    Tensor<f32, 1> lse, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, mx + log(l), m);
  }
}

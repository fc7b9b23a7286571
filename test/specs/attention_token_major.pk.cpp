// Attention on token-major tensors, q, k, v, o [S, H, D] (flash-attn's layout, and Ulysses' after
// its all-to-all): one head's rows are a [rows, 1, D] tile at [m, h, 0]. pk-lower-attention takes
// them on the Hopper attention template (3-D tensor maps over {D, H, S}, boxes of one head's rows);
// run by attention_template_test against float64 attention, lit test/Passes/lower-attention-token-major.test.
#include <pk/spec.h>
using namespace pk;

#define TOKEN_MAJOR_ATTENTION(NAME, D, CAUSAL_MASK)                                                           \
  PK_KERNEL void NAME(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,             \
                      Tensor<f32, 3> lse, float scale) {                                                      \
    for (auto [h, m] : tiles(q.dim(1), q.dim(0), {1, 64})) {                                                  \
      auto qt = reshape<64, D>(load<64, 1, D>(q, m, h, 0));                                                   \
      auto mx = zeros<f32, 64, 1>() - 1e30f;                                                                  \
      auto l = zeros<f32, 64, 1>();                                                                           \
      auto acc = zeros<f32, 64, D>();                                                                         \
      for (auto n : range(0, k.dim(0), 64)) {                                                                 \
        auto s = mma_t(qt, reshape<64, D>(load<64, 1, D>(k, n, h, 0)), zeros<f32, 64, 64>()) * scale;         \
        s = where((col_index<64, 64>(n) < k.dim(0)) CAUSAL_MASK, s, -1e30f);                                  \
        auto mnew = max(mx, row_max(s));                                                                      \
        auto p = exp(s - mnew);                                                                               \
        auto corr = exp(mx - mnew);                                                                           \
        l = l * corr + row_sum(p);                                                                            \
        acc = mma(cast<bf16>(p), reshape<64, D>(load<64, 1, D>(v, n, h, 0)), acc * corr);                     \
        mx = mnew;                                                                                            \
      }                                                                                                       \
      store(o, reshape<64, 1, D>(cast<bf16>(acc / l)), m, h, 0);                                              \
      store(lse, reshape<64, 1, 1>(mx + log(l)), m, h, 0);                                                    \
    }                                                                                                         \
  }

// o = softmax(q k^T * scale) v per head; lse [S, H, 1] the rows' log-sum-exp.
TOKEN_MAJOR_ATTENTION(token_major_d64, 64, )
TOKEN_MAJOR_ATTENTION(token_major_d128, 128, )
// Causal: key j visible to query i when j <= i.
TOKEN_MAJOR_ATTENTION(token_major_causal_d64, 64, *(col_index<64, 64>(n) <= row_index<64, 64>(m)))
TOKEN_MAJOR_ATTENTION(token_major_causal_d128, 128, *(col_index<64, 64>(n) <= row_index<64, 64>(m)))

// Grouped-query, token-major: k, v [S, Hk, D], query head h reads K/V head h / G with
// G = q.dim(1) / k.dim(1) (the launch checks that q's heads are G x k's).
PK_KERNEL void token_major_gqa_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                   Tensor<f32, 3> lse, float scale) {
  index g = q.dim(1) / k.dim(1);
  for (auto [h, m] : tiles(q.dim(1), q.dim(0), {1, 64})) {
    auto qt = reshape<64, 64>(load<64, 1, 64>(q, m, h, 0));
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(0), 64)) {
      auto s = mma_t(qt, reshape<64, 64>(load<64, 1, 64>(k, n, h / g, 0)), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(0), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), reshape<64, 64>(load<64, 1, 64>(v, n, h / g, 0)), acc * corr);
      mx = mnew;
    }
    store(o, reshape<64, 1, 64>(cast<bf16>(acc / l)), m, h, 0);
    store(lse, reshape<64, 1, 1>(mx + log(l)), m, h, 0);
  }
}

// Mixed layouts stay on the general path: q token-major, k head-major [Hk, S, D].
PK_KERNEL void token_major_q_only_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                      float scale) {
  for (auto [h, m] : tiles(q.dim(1), q.dim(0), {1, 64})) {
    auto qt = reshape<64, 64>(load<64, 1, 64>(q, m, h, 0));
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, reshape<64, 64>(load<1, 64, 64>(k, h, n, 0)), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), reshape<64, 64>(load<1, 64, 64>(v, h, n, 0)), acc * corr);
      mx = mnew;
    }
    store(o, reshape<64, 1, 64>(cast<bf16>(acc / l)), m, h, 0);
  }
}

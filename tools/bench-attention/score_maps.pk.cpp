// Attention with score maps over [H, S, D] heads, for tools/bench-attention/bench_score_maps.py:
// a sliding window (Mistral), ALiBi (BLOOM) and logit soft-capping (Gemma 2), each causal, at head
// dims 64 and 128. Each takes pkc's attention template with the spec's scores applied per score
// in the consumers (`--explain` says "with a score map").
#include <pk/spec.h>
using namespace pk;

#define PK_WINDOW(NAME, D)                                                                               \
  PK_KERNEL void NAME(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index window, \
                      float scale) {                                                                     \
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {                                             \
      auto qt = load<64, D>(q, h, m, 0);                                                                 \
      auto mx = zeros<f32, 64, 1>() - 1e30f;                                                             \
      auto l = zeros<f32, 64, 1>();                                                                      \
      auto acc = zeros<f32, 64, D>();                                                                    \
      for (auto n : range(0, m + 64, 64)) {                                                             \
        auto s = mma_t(qt, load<64, D>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;                       \
        auto col = col_index<64, 64>(n);                                                                 \
        auto row = row_index<64, 64>(m);                                                                 \
        s = where((col <= row) * (col > row - window) * (col < k.dim(1)), s, -1e30f);                    \
        auto mnew = max(mx, row_max(s));                                                                 \
        auto p = exp(s - mnew);                                                                          \
        auto corr = exp(mx - mnew);                                                                      \
        l = l * corr + row_sum(p);                                                                       \
        acc = mma(cast<bf16>(p), load<64, D>(v, h, n, 0), acc * corr);                                   \
        mx = mnew;                                                                                       \
      }                                                                                                  \
      store(o, cast<bf16>(acc / l), h, m, 0);                                                            \
    }                                                                                                    \
  }
PK_WINDOW(window_causal_d64, 64)
PK_WINDOW(window_causal_d128, 128)

#define PK_ALIBI(NAME, D)                                                                                \
  PK_KERNEL void NAME(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) { \
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {                                             \
      float slope = pow(2.0f, -8.0f * float(h + 1) / float(q.dim(0)));                                   \
      auto qt = load<64, D>(q, h, m, 0);                                                                 \
      auto mx = zeros<f32, 64, 1>() - 1e30f;                                                             \
      auto l = zeros<f32, 64, 1>();                                                                      \
      auto acc = zeros<f32, 64, D>();                                                                    \
      for (auto n : range(0, m + 64, 64)) {                                                             \
        auto col = col_index<64, 64>(n);                                                                 \
        auto row = row_index<64, 64>(m);                                                                 \
        auto s = mma_t(qt, load<64, D>(k, h, n, 0), zeros<f32, 64, 64>()) * scale - (row - col) * slope; \
        s = where((col <= row) * (col < k.dim(1)), s, -1e30f);                                           \
        auto mnew = max(mx, row_max(s));                                                                 \
        auto p = exp(s - mnew);                                                                          \
        auto corr = exp(mx - mnew);                                                                      \
        l = l * corr + row_sum(p);                                                                       \
        acc = mma(cast<bf16>(p), load<64, D>(v, h, n, 0), acc * corr);                                   \
        mx = mnew;                                                                                       \
      }                                                                                                  \
      store(o, cast<bf16>(acc / l), h, m, 0);                                                            \
    }                                                                                                    \
  }
PK_ALIBI(alibi_causal_d64, 64)
PK_ALIBI(alibi_causal_d128, 128)

#define PK_SOFTCAP(NAME, D)                                                                              \
  PK_KERNEL void NAME(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale, \
                      float cap) {                                                                       \
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {                                             \
      auto qt = load<64, D>(q, h, m, 0);                                                                 \
      auto mx = zeros<f32, 64, 1>() - 1e30f;                                                             \
      auto l = zeros<f32, 64, 1>();                                                                      \
      auto acc = zeros<f32, 64, D>();                                                                    \
      for (auto n : range(0, m + 64, 64)) {                                                             \
        auto s = tanh(mma_t(qt, load<64, D>(k, h, n, 0), zeros<f32, 64, 64>()) * (scale / cap)) * cap;   \
        s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f); \
        auto mnew = max(mx, row_max(s));                                                                 \
        auto p = exp(s - mnew);                                                                          \
        auto corr = exp(mx - mnew);                                                                      \
        l = l * corr + row_sum(p);                                                                       \
        acc = mma(cast<bf16>(p), load<64, D>(v, h, n, 0), acc * corr);                                   \
        mx = mnew;                                                                                       \
      }                                                                                                  \
      store(o, cast<bf16>(acc / l), h, m, 0);                                                            \
    }                                                                                                    \
  }
PK_SOFTCAP(softcap_causal_d64, 64)
PK_SOFTCAP(softcap_causal_d128, 128)

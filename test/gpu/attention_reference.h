// The attention tests' float64 reference and check: softmax(Q K^T * scale) V and the row
// log-sum-exp for random Q, K, V (uniform in [-2, 2), fresh per case), outputs poisoned first,
// the kernel launched by the caller.
#pragma once
#include <functional>
#include <string>

#include "tile_test_util.h"

namespace pkt {

using AttentionLaunch = std::function<void(const DevTensor<pk::bf16>& q, const DevTensor<pk::bf16>& k,
                                           const DevTensor<pk::bf16>& v, const DevTensor<pk::bf16>& o,
                                           const DevTensor<float>& lse, float scale)>;

inline void check_attention(const std::string& name, const AttentionLaunch& launch, long long d,
                            long long sq, long long sk, bool causal, unsigned seed = 1) {
  const float scale = 1.f / std::sqrt(float(d));
  DevTensor<pk::bf16> q({sq, d}, seed), k({sk, d}, seed + 1), v({sk, d}, seed + 2), o({sq, d}, 0, true);
  DevTensor<float> lse({sq, 1}, 0, true);
  launch(q, k, v, o, lse, scale);
  PKT_CUDA(cudaDeviceSynchronize());
  std::vector<double> want_o(sq * d), want_lse(sq), s(sk);
  for (long long r = 0; r < sq; ++r) {
    const long long keys = causal ? std::min(sk, r + 1) : sk;
    double mx = -INFINITY;
    for (long long c = 0; c < keys; ++c) {
      double dot = 0;
      for (long long j = 0; j < d; ++j) dot += q.at(r * d + j) * k.at(c * d + j);
      s[c] = dot * scale;
      mx = std::max(mx, s[c]);
    }
    double sum = 0;
    for (long long c = 0; c < keys; ++c) sum += std::exp(s[c] - mx);
    want_lse[r] = mx + std::log(sum);
    for (long long j = 0; j < d; ++j) want_o[r * d + j] = 0;
    for (long long c = 0; c < keys; ++c) {
      const double p = std::exp(s[c] - mx) / sum;
      for (long long j = 0; j < d; ++j) want_o[r * d + j] += p * v.at(c * d + j);
    }
  }
  const std::string base = name + " " + std::to_string(sq) + "x" + std::to_string(sk);
  // P is rounded to bf16 before P V (as FlashAttention does), and O is bf16.
  expect((base + " O").c_str(), o, [&](long long i) { return want_o[i]; }, 2e-2, 2e-2);
  expect((base + " lse").c_str(), lse, [&](long long i) { return want_lse[i]; }, 1e-3, 1e-4);
}

}  // namespace pkt

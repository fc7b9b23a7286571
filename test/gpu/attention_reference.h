// The attention tests' float64 reference and check: softmax(Q K^T * scale) V and the row
// log-sum-exp for random Q, K, V (uniform in [-2, 2), fresh per case), outputs poisoned first,
// the kernel launched by the caller. heads = 0: [S, D] tensors; else [heads, S, D], each head
// its own attention. The scale is scale_factor / sqrt(d). kv_heads > 0 (grouped-query): K and V
// are [kv_heads, S, D] and query head h reads their head h / (heads / kv_heads). lse_1d: lse is
// a 1-D [S] tensor (one head).
#pragma once
#include <functional>
#include <type_traits>
#include <string>

#include "tile_test_util.h"

namespace pkt {

// q, k, v and o are T: bf16, or f16 for the f16 kernels.
template <class T = pk::bf16>
using AttentionLaunchOf = std::function<void(const DevTensor<T>& q, const DevTensor<T>& k, const DevTensor<T>& v,
                                             const DevTensor<T>& o, const DevTensor<float>& lse, float scale)>;
using AttentionLaunch = AttentionLaunchOf<>;

// One head in float64: o [sq, d] = softmax(q k^T * scale) v and lse [sq] its row log-sum-exp,
// for row-major q [sq, d], k and v [sk, d]; causal: row r sees keys 0..r.
inline void reference_head(const double* q, const double* k, const double* v, long long sq, long long sk,
                           long long d, bool causal, double scale, double* o, double* lse) {
  std::vector<double> s(sk);
  for (long long r = 0; r < sq; ++r) {
    const long long keys = causal ? std::min(sk, r + 1) : sk;
    double mx = -INFINITY;
    for (long long c = 0; c < keys; ++c) {
      double dot = 0;
      for (long long j = 0; j < d; ++j) dot += q[r * d + j] * k[c * d + j];
      s[c] = dot * scale;
      mx = std::max(mx, s[c]);
    }
    double sum = 0;
    for (long long c = 0; c < keys; ++c) sum += std::exp(s[c] - mx);
    lse[r] = mx + std::log(sum);
    for (long long j = 0; j < d; ++j) o[r * d + j] = 0;
    for (long long c = 0; c < keys; ++c) {
      const double p = std::exp(s[c] - mx) / sum;
      for (long long j = 0; j < d; ++j) o[r * d + j] += p * v[c * d + j];
    }
  }
}

// One head in float64 with a score map and a mask: o [sq, d] = softmax over the visible keys of
// score(i, j, q_i . k_j), times v; lse (if not null) the row log-sum-exp.
inline void reference_head_mapped(const double* q, const double* k, const double* v, long long sq, long long sk,
                                  long long d, const std::function<double(long long, long long, double)>& score,
                                  const std::function<bool(long long, long long)>& visible, double* o, double* lse) {
  std::vector<double> s(sk);
  for (long long i = 0; i < sq; ++i) {
    double mx = -INFINITY;
    for (long long j = 0; j < sk; ++j) {
      if (!visible(i, j)) continue;
      double dot = 0;
      for (long long c = 0; c < d; ++c) dot += q[i * d + c] * k[j * d + c];
      s[j] = score(i, j, dot);
      mx = std::max(mx, s[j]);
    }
    double sum = 0;
    for (long long j = 0; j < sk; ++j)
      if (visible(i, j)) sum += std::exp(s[j] - mx);
    if (lse) lse[i] = mx + std::log(sum);
    for (long long c = 0; c < d; ++c) o[i * d + c] = 0;
    for (long long j = 0; j < sk; ++j)
      if (visible(i, j))
        for (long long c = 0; c < d; ++c) o[i * d + c] += std::exp(s[j] - mx) / sum * v[j * d + c];
  }
}

// T is given (check_attention<pk::f16>(...)), not deduced from the lambda: the launch type is a
// non-deduced context.
template <class T = pk::bf16>
void check_attention(const std::string& name, const typename std::common_type<AttentionLaunchOf<T>>::type& launch,
                     long long d, long long sq,
                     long long sk, bool causal, unsigned seed = 1, long long heads = 0, float scale_factor = 1.f,
                     long long kv_heads = 0, bool lse_1d = false, bool token_major = false) {
  const float scale = scale_factor / std::sqrt(float(d));
  const long long kvh = kv_heads ? kv_heads : heads;
  // [H, S, D], token-major [S, H, D], or [S, D] without heads.
  auto shape = [&](long long h, long long rows, long long cols) {
    return !h ? std::vector<long long>{rows, cols}
              : token_major ? std::vector<long long>{rows, h, cols} : std::vector<long long>{h, rows, cols};
  };
  // Element (head h, row i, column c) of a tensor of `hn` heads and `rows` rows in that layout.
  auto at = [&](long long hn, long long rows, long long cols, long long h, long long i, long long c) {
    return token_major ? (i * hn + h) * cols + c : (h * rows + i) * cols + c;
  };
  DevTensor<T> q(shape(heads, sq, d), seed), k(shape(kvh, sk, d), seed + 1), v(shape(kvh, sk, d), seed + 2),
      o(shape(heads, sq, d), 0, true);
  DevTensor<float> lse(lse_1d ? std::vector<long long>{sq} : shape(heads, sq, 1), 0, true);
  launch(q, k, v, o, lse, scale);
  PKT_CUDA(cudaDeviceSynchronize());
  const long long hs = heads ? heads : 1;
  std::vector<double> want_o(hs * sq * d), want_lse(hs * sq), qd(q.numel()), kd(k.numel()), vd(v.numel());
  // The reference works head by head on [H, S, D] copies.
  for (long long h = 0; h < hs; ++h)
    for (long long i = 0; i < sq; ++i)
      for (long long c = 0; c < d; ++c) qd[(h * sq + i) * d + c] = q.at(at(hs, sq, d, h, i, c));
  for (long long h = 0; h < (kvh ? kvh : 1); ++h)
    for (long long i = 0; i < sk; ++i)
      for (long long c = 0; c < d; ++c)
        kd[(h * sk + i) * d + c] = k.at(at(kvh ? kvh : 1, sk, d, h, i, c)),
        vd[(h * sk + i) * d + c] = v.at(at(kvh ? kvh : 1, sk, d, h, i, c));
  const long long group = kv_heads ? heads / kv_heads : 1;
  for (long long h = 0; h < hs; ++h)
    reference_head(qd.data() + h * sq * d, kd.data() + h / group * sk * d, vd.data() + h / group * sk * d, sq, sk,
                   d, causal, scale, want_o.data() + h * sq * d, want_lse.data() + h * sq);
  // Back to the kernel's layout for the comparison.
  std::vector<double> o_at(want_o.size()), lse_at(want_lse.size());
  for (long long h = 0; h < hs; ++h)
    for (long long i = 0; i < sq; ++i) {
      for (long long c = 0; c < d; ++c) o_at[at(hs, sq, d, h, i, c)] = want_o[(h * sq + i) * d + c];
      lse_at[at(hs, sq, 1, h, i, 0)] = want_lse[h * sq + i];
    }
  const std::string base = name + " " + (token_major ? "token-major " : "") + (heads ? std::to_string(heads) + "x" : "") +
                           (kv_heads ? "(kv " + std::to_string(kv_heads) + ")x" : "") + std::to_string(sq) + "x" +
                           std::to_string(sk) + (scale_factor != 1.f ? " scale x" + std::to_string(scale_factor) : "");
  // P is rounded to bf16 (f16) before P V (as FlashAttention does), and O is bf16 (f16).
  expect((base + " O").c_str(), o, [&](long long i) { return o_at[i]; }, 2e-2, 2e-2);
  expect((base + " lse").c_str(), lse, [&](long long i) { return lse_at[i]; }, 1e-3, 1e-4);
}

}  // namespace pkt

// The shipped attention spec (templates/specs/attention.pk.cpp: one head, online softmax on the
// general tile path) on one GPU: head dims 64 and 128, causal and not, lengths that are not
// multiples of the 64-row tiles (and more keys than queries), against a float64 reference of
// softmax(Q K^T * scale) V and of the row log-sum-exp. Outputs are poisoned first.
#include PK_ATTENTION_CU
#include "tile_test_util.h"

namespace {

using pkt::DevTensor;
using pkt::expect;
using pk::bf16;

using Kernel = void (*)(pk::LaunchContext, pk::Tensor<bf16>, pk::Tensor<bf16>, pk::Tensor<bf16>,
                        pk::Tensor<bf16>, pk::Tensor<float>, float);

void check(const char* name, Kernel kernel, int threads, long long d, long long sq, long long sk, bool causal) {
  const float scale = 1.f / std::sqrt(float(d));
  DevTensor<bf16> q({sq, d}, 1), k({sk, d}, 2), v({sk, d}, 3), o({sq, d}, 0, true);
  DevTensor<float> lse({sq, 1}, 0, true);
  kernel<<<132, threads>>>(pk::LaunchContext{}, q.view(), k.view(), v.view(), o.view(), lse.view(), scale);
  PKT_CUDA(cudaDeviceSynchronize());
  std::vector<double> want_o(sq * d), want_lse(sq);
  std::vector<double> s(sk);
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
    for (long long j = 0; j < d; ++j) {
      double acc = 0;
      for (long long c = 0; c < keys; ++c) acc += std::exp(s[c] - mx) / sum * v.at(c * d + j);
      want_o[r * d + j] = acc;
    }
  }
  const std::string base = std::string(name) + " " + std::to_string(sq) + "x" + std::to_string(sk);
  // P is rounded to bf16 before P V (as FlashAttention does), and O is bf16.
  expect((base + " O").c_str(), o, [&](long long i) { return want_o[i]; }, 2e-2, 2e-2);
  expect((base + " lse").c_str(), lse, [&](long long i) { return want_lse[i]; }, 1e-3, 1e-4);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  for (auto [sq, sk] : {std::pair{200LL, 333LL}, std::pair{64LL, 64LL}, std::pair{1LL, 70LL}}) {
    check("attention_d64", attention_d64, pk_attention_d64::kThreads, 64, sq, sk, false);
    check("attention_d128", attention_d128, pk_attention_d128::kThreads, 128, sq, sk, false);
  }
  for (long long s : {300LL, 64LL, 65LL}) {
    check("attention_causal_d64", attention_causal_d64, pk_attention_causal_d64::kThreads, 64, s, s, true);
    check("attention_causal_d128", attention_causal_d128, pk_attention_causal_d128::kThreads, 128, s, s, true);
  }
  if (cudaGetLastError() != cudaSuccess) pkt::fail("a launch failed");
  return pkt::finish("attention_test");
}

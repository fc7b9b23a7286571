// The shipped attention specs (templates/specs/attention.pk.cpp: one head, online softmax;
// attention_heads.pk.cpp: [H, S, D] tensors, a head per tile) compiled with --templates=false,
// so on the general tile path, on one GPU: head dims 64 and 128, causal and not, lengths that
// are not multiples of the 64-row tiles (and more keys than queries), against a float64
// reference (attention_reference.h). The template path is attention_template_test's.
#include PK_ATTENTION_CU
#include PK_ATTENTION_HEADS_CU
#include "attention_reference.h"

namespace {

using pk::bf16;
using Kernel = void (*)(pk::LaunchContext, pk::Tensor<bf16>, pk::Tensor<bf16>, pk::Tensor<bf16>,
                        pk::Tensor<bf16>, pk::Tensor<float>, float);

void check(const char* name, Kernel kernel, int threads, long long d, long long sq, long long sk, bool causal,
           long long heads = 0) {
  pkt::check_attention(
      name,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
        kernel<<<132, threads>>>(pk::LaunchContext{}, q.view(), k.view(), v.view(), o.view(), lse.view(), scale);
      },
      d, sq, sk, causal, 1, heads);
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
  // One head per tile of [H, S, D] tensors (tiles of the trailing dimensions).
  check("attention_heads_d64", attention_heads_d64, pk_attention_heads_d64::kThreads, 64, 100, 150, false, 3);
  check("attention_heads_causal_d128", attention_heads_causal_d128, pk_attention_heads_causal_d128::kThreads, 128,
        130, 130, true, 2);
  if (cudaGetLastError() != cudaSuccess) pkt::fail("a launch failed");
  return pkt::finish("attention_test");
}

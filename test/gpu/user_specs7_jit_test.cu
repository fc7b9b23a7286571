// The kernel of the seventh user-written spec set (test/specs/user_specs7.pk.cpp) that takes the
// Hopper attention template, run through the JIT (the static test cannot fill the attention
// template's parameter block): attention_odd_lse_d128, one head at head dim 128, with query and
// key lengths that are multiples of nothing (odd, one key, one query), against float64. It must
// report the attention template. One PASS or FAIL line per shape.
#include <pk/jit/compile.h>

#include "attention_reference.h"
#include "sym_test_util.h"

int main() {
  pkt::require_gpus(1);
  auto text = pk::jit::read_spec(PK_USER_SPECS7_SPEC);
  if (!text.is_ok()) {
    pkt::fail(std::string("read the spec: ") + text.status().message());
    return pkt::finish("user_specs7_jit_test");
  }
  pk::jit::Options options;
  options.kernel = "attention_odd_lse_d128";
  auto att = pk::jit::compile_spec(PK_USER_SPECS7_SPEC, *text, options, pk::jit::pkc_frontend(PK_PKC));
  if (!att.is_ok()) {
    pkt::fail("compile attention_odd_lse_d128: " + att.status().message());
    return pkt::finish("user_specs7_jit_test");
  }
  PKT_CHECK(att->info().tmpl.kernel == "attention_odd_lse_d128", "attention_odd_lse_d128 did not take the attention template");
  pkt::run_ranks(1, [&](pk::Context& ctx) {
    cudaStream_t s;
    PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    PKT_OK(att->load(ctx));
    unsigned seed = 950;
    for (auto [sq, sk] : {std::pair{1001LL, 999LL}, std::pair{77LL, 131LL}, std::pair{129LL, 1LL}, std::pair{1LL, 77LL}}) {
      const int before = pkt::failure_count();
      pkt::check_attention(
          "attention_odd_lse_d128",
          [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
            PKT_OK(att->launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
            PKT_CUDA(cudaStreamSynchronize(s));
          },
          128, sq, sk, false, seed += 3);
      std::printf("%s user_specs7 attention_odd_lse_d128 %lldx%lld (template; tolerance 2e-2, see attention_reference.h)\n",
                  pkt::failure_count() == before ? "PASS" : "FAIL", sq, sk);
    }
    PKT_CUDA(cudaStreamDestroy(s));
  });
  return pkt::finish("user_specs7_jit_test");
}

// The shipped attention spec through pk-lower-attention and the Hopper attention template
// (templates/include/pk/templates/attention.cuh), JIT-compiled by a pkc executable and launched
// from its launch description: head dims 64 and 128, causal and not, lengths that are not
// multiples of the 128-row tiles, more keys than queries and the reverse, enough key tiles to
// wrap the K/V rings several times, the [H, S, D] forms (attention_heads.pk.cpp) with several
// heads in one launch (more tiles than blocks, so a block walks several), and scales that are
// large, negative or zero; grouped-query attention (test/specs/attention_gqa.pk.cpp: K and V at
// head h / G, G from the sizes or an argument, including G = heads: multi-query) and a 1-D
// log-sum-exp; f16 kernels (test/specs/attention_f16.pk.cpp); token-major [S, H, D] tensors
// (test/specs/attention_token_major.pk.cpp, GQA too); against a float64 reference
// (attention_reference.h). A q whose columns are not
// the head dim, or q heads that are not G x k's, are refused at the call, launching nothing.
#include <pk/jit/compile.h>

#include <map>

#include "attention_reference.h"
#include "harness.h"

namespace {

using pk::bf16;

std::map<std::string, pk::jit::Kernel> g_kernels;

bool compile_all() {
  for (const char* file : {"attention", "attention_heads"}) {
    const std::string spec = std::string(PK_SPECS "/") + file + ".pk.cpp";
    auto text = pk::jit::read_spec(spec);
    if (!text.is_ok()) return pkt::fail("read " + spec + ": " + text.status().message()), false;
    for (const char* kind : {"_d64", "_d128", "_causal_d64", "_causal_d128"}) {
      const std::string name = file + std::string(kind);
      pk::jit::Options options;
      options.kernel = name;
      auto k = pk::jit::compile_spec(spec, *text, options, pk::jit::pkc_frontend(PK_PKC));
      if (!k.is_ok()) return pkt::fail("compile " + name + ": " + k.status().message()), false;
      PKT_CHECK(k->info().tmpl.kernel == name, name + " did not take the attention template");
      g_kernels.emplace(name, std::move(*k));
    }
  }
  auto from = [](const std::string& spec, std::initializer_list<const char*> names) {
    auto text = pk::jit::read_spec(spec);
    if (!text.is_ok()) return pkt::fail("read " + spec + ": " + text.status().message()), false;
    for (const char* name : names) {
      pk::jit::Options options;
      options.kernel = name;
      auto k = pk::jit::compile_spec(spec, *text, options, pk::jit::pkc_frontend(PK_PKC));
      if (!k.is_ok()) return pkt::fail(std::string("compile ") + name + ": " + k.status().message()), false;
      PKT_CHECK(k->info().tmpl.kernel == name, std::string(name) + " did not take the attention template");
      g_kernels.emplace(name, std::move(*k));
    }
    return true;
  };
  return from(PK_GQA_SPEC, {"gqa_d64", "gqa_causal_d128", "attention_lse_1d_d64"}) &&
         from(PK_F16_SPEC, {"attention_f16_d128", "attention_heads_f16_causal_d64"}) &&
         from(PK_TOKEN_MAJOR_SPEC, {"token_major_d64", "token_major_d128", "token_major_causal_d64",
                                    "token_major_causal_d128", "token_major_gqa_d64"});
}

// The f16 kernels (test/specs/attention_f16.pk.cpp): q, k, v and o f16.
void check_f16(pk::Context& ctx, cudaStream_t s, const std::string& name, long long d, long long sq, long long sk,
               bool causal, unsigned seed, long long heads = 0, float scale_factor = 1.f) {
  const pk::jit::Kernel& kernel = g_kernels.at(name);
  pkt::check_attention<pk::f16>(
      name,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
        PKT_OK(kernel.launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
        PKT_CUDA(cudaStreamSynchronize(s));
      },
      d, sq, sk, causal, seed, heads, scale_factor);
}

// Grouped-query attention: heads query heads over kv_heads K/V heads; `group_arg` passes G as
// the kernel's integer argument (gqa_causal_d128's form).
void check_gqa(pk::Context& ctx, cudaStream_t s, const std::string& name, long long d, long long sq, long long sk,
               bool causal, unsigned seed, long long heads, long long kv_heads, bool group_arg) {
  const pk::jit::Kernel& kernel = g_kernels.at(name);
  pkt::check_attention(
      name,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
        if (group_arg)
          PKT_OK(kernel.launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(),
                               static_cast<long long>(heads / kv_heads), scale));
        else
          PKT_OK(kernel.launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
        PKT_CUDA(cudaStreamSynchronize(s));
      },
      d, sq, sk, causal, seed, heads, 1.f, kv_heads);
}

// Token-major [S, H, D] q, k, v, o and [S, H, 1] lse (kv_heads: grouped-query).
void check_token_major(pk::Context& ctx, cudaStream_t s, const std::string& name, long long d, long long sq,
                       long long sk, bool causal, unsigned seed, long long heads, long long kv_heads = 0) {
  const pk::jit::Kernel& kernel = g_kernels.at(name);
  pkt::check_attention(
      name,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
        PKT_OK(kernel.launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
        PKT_CUDA(cudaStreamSynchronize(s));
      },
      d, sq, sk, causal, seed, heads, 1.f, kv_heads, false, /*token_major=*/true);
}

void check(pk::Context& ctx, cudaStream_t s, const std::string& name, long long d, long long sq, long long sk,
           bool causal, unsigned seed, long long heads = 0, float scale_factor = 1.f) {
  const pk::jit::Kernel& kernel = g_kernels.at(name);
  pkt::check_attention(
      name,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
        PKT_OK(kernel.launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
        PKT_CUDA(cudaStreamSynchronize(s));
      },
      d, sq, sk, causal, seed, heads, scale_factor);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("attention_template_test");
  pkt::run_ranks(1, [](pk::Context& ctx) {
    cudaStream_t s;
    PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (auto& [name, k] : g_kernels) PKT_OK(k.load(ctx));
    unsigned seed = 10;
    for (long long d : {64LL, 128LL}) {
      const std::string plain = "attention_d" + std::to_string(d), causal = "attention_causal_d" + std::to_string(d);
      for (auto [sq, sk] : {std::pair{200LL, 333LL}, std::pair{128LL, 128LL}, std::pair{1LL, 70LL},
                            std::pair{333LL, 129LL}, std::pair{256LL, 2100LL}})
        check(ctx, s, plain, d, sq, sk, false, seed += 3);
      for (long long n : {300LL, 64LL, 129LL, 1000LL})
        check(ctx, s, causal, d, n, n, true, seed += 3);
      // Heads in one launch ([H, S, D]): tails, one head, and heads that outnumber the SMs' tiles.
      const std::string hp = "attention_heads_d" + std::to_string(d), hc = "attention_heads_causal_d" + std::to_string(d);
      check(ctx, s, hp, d, 200, 333, false, seed += 3, 3);
      check(ctx, s, hp, d, 130, 130, false, seed += 3, 1);
      check(ctx, s, hp, d, 64, 200, false, seed += 3, 40);
      // More tiles than blocks (the grid is one block per SM): each block walks several tiles,
      // its rings and Q barrier running on from one tile into the next.
      check(ctx, s, hp, d, 130, 300, false, seed += 3, 300);
      check(ctx, s, hc, d, 257, 257, true, seed += 3, 200);
      check(ctx, s, hc, d, 300, 300, true, seed += 3, 3);
      check(ctx, s, hc, d, 129, 129, true, seed += 3, 5);
      // Scales that move the running max by more than the template's slack on many key steps
      // (x8), reverse the order of the scores (negative) and make every key weigh the same (0).
      for (float factor : {8.f, -1.f, 0.f}) {
        check(ctx, s, plain, d, 200, 1000, false, seed += 3, 0, factor);
        check(ctx, s, causal, d, 700, 700, true, seed += 3, 0, factor);
      }
    }
    // Grouped-query: groups of 2 and 4, one K/V head for all (multi-query), tails, more tiles
    // than blocks; G from the sizes (gqa_d64) and as an argument (gqa_causal_d128).
    check_gqa(ctx, s, "gqa_d64", 64, 200, 333, false, seed += 3, 8, 4, false);
    check_gqa(ctx, s, "gqa_d64", 64, 130, 77, false, seed += 3, 12, 3, false);
    check_gqa(ctx, s, "gqa_d64", 64, 64, 500, false, seed += 3, 32, 1, false);
    check_gqa(ctx, s, "gqa_d64", 64, 1000, 1000, false, seed += 3, 40, 8, false);
    check_gqa(ctx, s, "gqa_causal_d128", 128, 300, 300, true, seed += 3, 8, 2, true);
    check_gqa(ctx, s, "gqa_causal_d128", 128, 129, 129, true, seed += 3, 6, 6, true);
    check_gqa(ctx, s, "gqa_causal_d128", 128, 1000, 1000, true, seed += 3, 32, 4, true);
    // Token-major: tails, one head, more tiles than blocks, causal, grouped-query (G = 3, and one
    // K/V head for all).
    check_token_major(ctx, s, "token_major_d64", 64, 200, 333, false, seed += 3, 3);
    check_token_major(ctx, s, "token_major_d64", 64, 130, 130, false, seed += 3, 1);
    check_token_major(ctx, s, "token_major_d128", 128, 300, 70, false, seed += 3, 5);
    check_token_major(ctx, s, "token_major_d128", 128, 130, 300, false, seed += 3, 300);
    check_token_major(ctx, s, "token_major_causal_d64", 64, 257, 257, true, seed += 3, 200);
    check_token_major(ctx, s, "token_major_causal_d128", 128, 1000, 1000, true, seed += 3, 4);
    check_token_major(ctx, s, "token_major_gqa_d64", 64, 200, 333, false, seed += 3, 12, 4);
    check_token_major(ctx, s, "token_major_gqa_d64", 64, 130, 77, false, seed += 3, 8, 1);
    // The log-sum-exp into a 1-D [S] tensor.
    for (auto [sq, sk] : {std::pair{200LL, 333LL}, std::pair{1LL, 70LL}, std::pair{700LL, 129LL}}) {
      const pk::jit::Kernel& k1 = g_kernels.at("attention_lse_1d_d64");
      pkt::check_attention(
          "attention_lse_1d_d64",
          [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse, float scale) {
            PKT_OK(k1.launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
            PKT_CUDA(cudaStreamSynchronize(s));
          },
          64, sq, sk, false, seed += 3, 0, 1.f, 0, true);
    }
    // f16: tails, more keys than queries, several heads, many tiles per block, a large scale.
    check_f16(ctx, s, "attention_f16_d128", 128, 200, 333, false, seed += 3);
    check_f16(ctx, s, "attention_f16_d128", 128, 1, 70, false, seed += 3);
    check_f16(ctx, s, "attention_f16_d128", 128, 256, 2100, false, seed += 3, 0, 8.f);
    check_f16(ctx, s, "attention_heads_f16_causal_d64", 64, 300, 300, true, seed += 3, 3);
    check_f16(ctx, s, "attention_heads_f16_causal_d64", 64, 257, 257, true, seed += 3, 200);
    {  // q's heads must be G x k's: 6 query heads over 4 K/V heads is refused before any launch.
      pkt::DevTensor<bf16> q({6, 64, 64}, 1), k({4, 64, 64}, 2), v({4, 64, 64}, 3), o({6, 64, 64}, 0, true);
      pkt::DevTensor<float> lse({6, 64, 1}, 0, true);
      pk::Status st = g_kernels.at("gqa_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), 0.1f);
      PKT_CHECK(!st.is_ok() && st.message().find("G x k's heads") != std::string::npos,
                "6 query heads over 4 K/V heads were not refused: " + st.message());
    }
    // q's columns must be the head dim: refused before any launch.
    pkt::DevTensor<bf16> q({64, 96}, 1), k({64, 128}, 2), v({64, 128}, 3), o({64, 128}, 0, true);
    pkt::DevTensor<float> lse({64, 1}, 0, true);
    pk::Status st = g_kernels.at("attention_d128").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                          lse.view(), 0.1f);
    PKT_CHECK(!st.is_ok() && st.message().find("head dim") != std::string::npos,
              "a q of 96 columns for head dim 128 was not refused: " + st.message());
    cudaStreamDestroy(s);
  });
  return pkt::finish("attention_template_test");
}

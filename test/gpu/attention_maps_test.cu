// test/specs/attention_maps.pk.cpp's score-map kernels through the JIT, on the attention template
// and on the general tile path (templates = false), against float64 with the spec's scores:
// grouped-query attention with a sliding window, a T5-style [Sq, Sk] bias tensor (Sq != Sk), a
// prefix-LM mask, bidirectional ALiBi with its log-sum-exp and packed sequences masked by one
// segment-id tensor read as a column and a row, at lengths that are not multiples
// of a tile and span several blocks. Outputs poisoned first, inputs fresh and random. One PASS or
// FAIL line per case.
#include <pk/jit/compile.h>

#include <cmath>
#include <functional>
#include <map>

#include "attention_reference.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pkt::DevTensor;
using LL = long long;

std::map<std::string, pk::jit::Kernel> g_kernels;  // "name" (template) and "name/general"

bool compile_all() {
  auto text = pk::jit::read_spec(PK_ATTENTION_MAPS_SPEC);
  if (!text.is_ok()) return pkt::fail(std::string("read the spec: ") + text.status().message()), false;
  for (const char* name : {"gqa_window_d128", "t5_bias_d64", "prefix_lm_d64", "alibi_bidirectional_d128",
                           "packed_segments_d128"})
    for (bool templates : {true, false}) {
      pk::jit::Options options;
      options.kernel = name;
      options.templates = templates;
      auto k = pk::jit::compile_spec(PK_ATTENTION_MAPS_SPEC, *text, options, pk::jit::pkc_frontend(PK_PKC));
      if (!k.is_ok()) return pkt::fail(std::string("compile ") + name + ": " + k.status().message()), false;
      PKT_CHECK(k->info().tmpl.kernel.empty() != templates,
                std::string(name) + (templates ? " did not take the attention template" : " took a template"));
      g_kernels.emplace(std::string(name) + (templates ? "" : "/general"), std::move(*k));
    }
  return true;
}

void report(const std::string& what, int before) {
  std::printf("%s attention_maps %s\n", pkt::failure_count() == before ? "PASS" : "FAIL", what.c_str());
  std::fflush(stdout);
}

std::vector<double> widen(const DevTensor<bf16>& t) {
  std::vector<double> d(t.numel());
  for (LL i = 0; i < t.numel(); ++i) d[i] = t.at(i);
  return d;
}

using Score = std::function<double(LL h, LL i, LL j, double dot)>;
using Visible = std::function<bool(LL i, LL j)>;

// Launches `kernel` through `launch`, then checks o (and lse) against float64 per query head,
// K and V read at head h / group.
void check(const std::string& what, LL H, LL group, LL sq, LL sk, LL D, unsigned seed, const Score& score,
           const Visible& visible, bool with_lse,
           const std::function<void(const DevTensor<bf16>&, const DevTensor<bf16>&, const DevTensor<bf16>&,
                                     const DevTensor<bf16>&, const DevTensor<float>&)>& launch) {
  const int before = pkt::failure_count();
  DevTensor<bf16> q({H, sq, D}, seed), k({H / group, sk, D}, seed + 1), v({H / group, sk, D}, seed + 2),
      o({H, sq, D}, 0, true);
  DevTensor<float> lse({H, sq, 1}, 0, true);
  launch(q, k, v, o, lse);
  PKT_CUDA(cudaDeviceSynchronize());
  auto qd = widen(q), kd = widen(k), vd = widen(v);
  std::vector<double> want(H * sq * D), wl(H * sq);
  for (LL h = 0; h < H; ++h)
    pkt::reference_head_mapped(&qd[h * sq * D], &kd[h / group * sk * D], &vd[h / group * sk * D], sq, sk, D,
                               [&](LL i, LL j, double x) { return score(h, i, j, x); }, visible, &want[h * sq * D],
                               &wl[h * sq]);
  // P is rounded to bf16 before P V (attention_reference.h's tolerance).
  pkt::expect((what + ".o").c_str(), o, [&](LL i) { return want[i]; }, 2e-2, 2e-2);
  // fp32 sums and ex2.approx: about 2^-22 relative.
  if (with_lse) pkt::expect((what + ".lse").c_str(), lse, [&](LL i) { return wl[i]; }, 1e-3, 1e-4);
  report(what, before);
}

void run_all(pk::Context& ctx, cudaStream_t s) {
  for (auto& [name, k] : g_kernels) PKT_OK(k.load(ctx));
  unsigned seed = 100;
  for (const char* path : {"", "/general"}) {
    const std::string tag = *path ? " (general path)" : " (template)";
    {
      const LL H = 8, G = 4, S = 333, D = 128, window = 100;
      const float scale = float(1 / std::sqrt(128.0));
      check("gqa_window_d128 8 over 2 heads, S=333, window 100" + tag, H, G, S, S, D, seed += 3,
            [&](LL, LL, LL, double x) { return x * scale; },
            [&](LL i, LL j) { return j <= i && i - j < window; }, false,
            [&](auto& q, auto& k, auto& v, auto& o, auto&) {
              PKT_OK(g_kernels.at(std::string("gqa_window_d128") + path).launch(ctx, s, q.view(), k.view(), v.view(),
                                                                                o.view(), window, scale));
            });
    }
    {
      const LL H = 3, SQ = 200, SK = 150, D = 64;
      const float scale = 0.125f;
      DevTensor<float> bias({SQ, SK}, seed += 3);
      check("t5_bias_d64 3 heads, Sq=200 Sk=150" + tag, H, 1, SQ, SK, D, seed += 3,
            [&](LL, LL i, LL j, double x) { return x * scale + double(bias.at(i * SK + j)); },
            [](LL, LL) { return true; }, false,
            [&](auto& q, auto& k, auto& v, auto& o, auto&) {
              PKT_OK(g_kernels.at(std::string("t5_bias_d64") + path).launch(ctx, s, q.view(), k.view(), v.view(),
                                                                            o.view(), bias.view(), scale));
            });
    }
    {
      const LL H = 2, S = 300, D = 64, prefix = 77;
      const float scale = 0.125f;
      check("prefix_lm_d64 2 heads, S=300, prefix 77" + tag, H, 1, S, S, D, seed += 3,
            [&](LL, LL, LL, double x) { return x * scale; },
            [&](LL i, LL j) { return j <= i || j < prefix; }, false,
            [&](auto& q, auto& k, auto& v, auto& o, auto&) {
              PKT_OK(g_kernels.at(std::string("prefix_lm_d64") + path).launch(ctx, s, q.view(), k.view(), v.view(),
                                                                              o.view(), prefix, scale));
            });
    }
    {
      const LL H = 4, S = 257, D = 128;
      const float scale = float(1 / std::sqrt(128.0));
      check("alibi_bidirectional_d128 4 heads, S=257, with lse" + tag, H, 1, S, S, D, seed += 3,
            [&](LL h, LL i, LL j, double x) {
              return x * scale - std::pow(2.0, -8.0 * double(h + 1) / double(H)) * std::fabs(double(i - j));
            },
            [](LL, LL) { return true; }, true,
            [&](auto& q, auto& k, auto& v, auto& o, auto& lse) {
              PKT_OK(g_kernels.at(std::string("alibi_bidirectional_d128") + path)
                         .launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), scale));
            });
    }
    {
      // Segments of 1 to 150 tokens (one of a single token), packed one after another.
      const LL H = 2, S = 700, D = 128;
      const float scale = float(1 / std::sqrt(128.0));
      std::vector<int32_t> ids(S);
      const LL lengths[] = {150, 1, 97, 64, 130, 3};
      LL at = 0;
      for (int g = 0; at < S; ++g)
        for (LL j = 0; j < lengths[g % 6] && at < S; ++j) ids[at++] = g;
      pkt::DevLocal<int32_t> seg({S}, ids);
      check("packed_segments_d128 2 heads, S=700, one id tensor" + tag, H, 1, S, S, D, seed += 3,
            [&](LL, LL, LL, double x) { return x * scale; },
            [&](LL i, LL j) { return ids[i] == ids[j]; }, false,
            [&](auto& q, auto& k, auto& v, auto& o, auto&) {
              PKT_OK(g_kernels.at(std::string("packed_segments_d128") + path)
                         .launch(ctx, s, q.view(), k.view(), v.view(), o.view(), seg.view(), scale));
            });
    }
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("attention_maps_test");
  pkt::run_ranks(1, [&](pk::Context& ctx) {
    cudaStream_t s;
    PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    run_all(ctx, s);
    PKT_CUDA(cudaStreamDestroy(s));
  });
  return pkt::finish("attention_maps_test");
}

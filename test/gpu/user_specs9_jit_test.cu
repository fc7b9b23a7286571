// The ninth user-written spec set (test/specs/user_specs9.pk.cpp) through the JIT at world size 1,
// each kernel compiled twice, on its template (where pkc takes one) and with templates = false,
// both run against a float64 host reference: the attention score maps (soft-capping with a scale
// from the head dim, sliding windows written >=, <=, as an extent, bidirectional, one key wider,
// with grouped-query heads and the lse, attention sinks, head scalars by h % 4 and h / 2,
// bottom-right causal prefill with Sq != Sk, a 2-D soft-capped window with a 1-D lse, a soft
// window penalty, slopes from a [H] tensor by .at(h) and from a [H, 1] one as a 1 x 1 tile, a
// per-head [H, Sq, Sk] bias, document masks by integer division and by i32 segment ids, a bias
// stored key-major and read transposed, on the template since the thirty-ninth session); the GEMM epilogues
// (soft-capped logits with a vocabulary mask, 1 / sqrt(K) with a bias row, SiLU on the first half
// of the columns, row and column masks, a residual with row scale and clamped alpha, GELU on the
// even columns by an i32 column index) and the two the template refuses (a block scale read by .at
// at the tile's origin, a scalar from the tile origin);
// and three general-path kernels (Gemma RMSNorm, a windowed row softmax, a lengths-masked softmax).
// Inputs random and fresh per case, outputs poisoned first. One PASS or FAIL line per case.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "attention_reference.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f16;
using pkt::Dev;
using pkt::DevTensor;
using LL = long long;

constexpr double kBf16 = 1.0 / 128, kF16 = 1.0 / 1024;  // two ulps of the output type, relative

// Kernels and whether their loop takes a template (true) or stays on the general path anyway.
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"softcap30_dimscale_d128", true}, {"window_ge_d64", true},          {"window_le_d64", true},
    {"window_extent_d128", true},      {"local_bidir_d64", true},        {"window_ge_w_d64", true},
    {"gqa_window_lse_d128", true},     {"sink_window_d64", true},        {"head_mod_scalars_d64", true},
    {"causal_bottom_right_d128", true}, {"softcap_window_2d_d64", true}, {"window_soft_penalty_d64", true},
    {"masks_min_hf_fill_d128", true}, {"key_padding_bias_cross_d128", true},
    {"alibi_slopes_tensor_d128", true}, {"alibi_slopes_column_d64", true}, {"rel_bias_per_head_d64", true},
    {"rel_bias_transposed_d64", true},  {"doc_mask_intdiv_d64", true},
    {"segment_ids_mask_d64", true},   {"gemm_t_softcap_logits_f32", true}, {"gemm_ab_rsqrtk_bias", true},
    {"gemm_t_half_silu_f16", true},    {"gemm_ab_row_col_mask_f32", true}, {"gemm_t_residual_rowscale", true},
    {"gemm_t_block_scale_at", false},  {"gemm_ab_origin_scalar_f32", false}, {"gemm_t_parity_gelu", true},
    {"gemma_rmsnorm", false},          {"window_softmax_rows", false},   {"lengths_masked_softmax", false},
};

std::map<std::string, pk::jit::Kernel> g_kernels;  // "name" (templates on) and "name/general"

bool compile_all() {
  auto text = pk::jit::read_spec(PK_USER_SPECS9_SPEC);
  if (!text.is_ok()) return pkt::fail(std::string("read the spec: ") + text.status().message()), false;
  for (auto [name, tmpl] : kKernels)
    for (bool templates : {true, false}) {
      pk::jit::Options options;
      options.kernel = name;
      options.templates = templates;
      auto k = pk::jit::compile_spec(PK_USER_SPECS9_SPEC, *text, options, pk::jit::pkc_frontend(PK_PKC));
      if (!k.is_ok()) return pkt::fail(std::string("compile ") + name + ": " + k.status().message()), false;
      const bool took = !k->info().tmpl.kernel.empty();
      PKT_CHECK(took == (templates && tmpl), std::string(name) + (took ? " took a template" : " took no template") +
                                                 (templates ? "" : " with templates = false"));
      g_kernels.emplace(std::string(name) + (templates ? "" : "/general"), std::move(*k));
    }
  return true;
}

void report(const std::string& what, int before) {
  std::printf("%s user_specs9 %s\n", pkt::failure_count() == before ? "PASS" : "FAIL", what.c_str());
  std::fflush(stdout);
}

template <class T>
std::vector<double> widen(const DevTensor<T>& t) {
  std::vector<double> d(t.numel());
  for (LL i = 0; i < t.numel(); ++i) d[i] = t.at(i);
  return d;
}

// ================================================================ attention ==

using Score = std::function<double(LL h, LL i, LL j, double dot)>;
using Visible = std::function<bool(LL h, LL i, LL j)>;
struct Shape {
  LL H, group, sq, sk, D;
  bool two_d = false;  // [S, D] tensors and a 1-D [S] lse (H = 1)
};
using AttnLaunch = std::function<void(const DevTensor<bf16>&, const DevTensor<bf16>&, const DevTensor<bf16>&,
                                      const DevTensor<bf16>&, const DevTensor<float>&)>;

// Launches, then checks o (and lse) per query head against float64, K and V at head h / group.
// Every case's rows see at least one key (no row without a softmax).
void check_attention(const std::string& what, const Shape& sh, unsigned seed, const Score& score,
                     const Visible& visible, bool with_lse, double o_tol, double lse_tol, const AttnLaunch& launch) {
  const int before = pkt::failure_count();
  const LL H = sh.H, KH = sh.H / sh.group;
  auto shape3 = [&](LL h, LL s) { return sh.two_d ? std::vector<LL>{s, sh.D} : std::vector<LL>{h, s, sh.D}; };
  DevTensor<bf16> q(shape3(H, sh.sq), seed), k(shape3(KH, sh.sk), seed + 1), v(shape3(KH, sh.sk), seed + 2),
      o(shape3(H, sh.sq), 0, true);
  DevTensor<float> lse(sh.two_d ? std::vector<LL>{sh.sq} : std::vector<LL>{H, sh.sq, 1}, 0, true);
  launch(q, k, v, o, lse);
  PKT_CUDA(cudaDeviceSynchronize());
  auto qd = widen(q), kd = widen(k), vd = widen(v);
  std::vector<double> want(H * sh.sq * sh.D), wl(H * sh.sq);
  for (LL h = 0; h < H; ++h)
    pkt::reference_head_mapped(&qd[h * sh.sq * sh.D], &kd[h / sh.group * sh.sk * sh.D],
                               &vd[h / sh.group * sh.sk * sh.D], sh.sq, sh.sk, sh.D,
                               [&](LL i, LL j, double x) { return score(h, i, j, x); },
                               [&](LL i, LL j) { return visible(h, i, j); }, &want[h * sh.sq * sh.D], &wl[h * sh.sq]);
  pkt::expect((what + ".o").c_str(), o, [&](LL i) { return want[i]; }, o_tol, o_tol);
  if (with_lse) pkt::expect((what + ".lse").c_str(), lse, [&](LL i) { return wl[i]; }, lse_tol, 1e-4);
  report(what, before);
}

// P is rounded to bf16 before P V and O is bf16 (attention_reference.h): 2e-2. The lse: fp32 sums
// and ex2.approx, about 2^-22 relative: 1e-3. Soft-capping: tanh.approx (about 2^-11 relative)
// times the cap moves each score by up to cap * 5e-4 (0.015 at 30, 0.025 at 50): 3e-2 on o and
// cap * 1e-3 on the lse.
constexpr double kO = 2e-2, kLse = 1e-3;

void attention(pk::Context& ctx, cudaStream_t s) {
  unsigned seed = 900;
  for (const char* path : {"", "/general"}) {
    const std::string tag = *path ? " (general path)" : " (template)";
    auto K = [&](const char* name) -> pk::jit::Kernel& { return g_kernels.at(std::string(name) + path); };
    auto causal = [](LL, LL i, LL j) { return j <= i; };
    {
      const Shape sh{3, 1, 333, 333, 128};
      const double sc = 1 / std::sqrt(128.0);
      check_attention("softcap30_dimscale_d128 H=3 S=333 with lse" + tag, sh, seed += 3,
                      [&](LL, LL, LL, double x) { return 30 * std::tanh(x * sc / 30); }, causal, true, 3e-2, 3e-2,
                      [&](auto& q, auto& k, auto& v, auto& o, auto& lse) {
                        PKT_OK(K("softcap30_dimscale_d128").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                                   lse.view()));
                      });
    }
    // The windows: 300 rows (three 128-row blocks of the template, five 64-row tiles), windows
    // below, across and above a key step, so skipped steps and partial windows both occur.
    for (LL W : {1LL, 70LL, 200LL}) {
      const Shape sh{2, 1, 300, 300, 64};
      const float scale = 0.125f;
      auto sc = [&](LL, LL, LL, double x) { return x * scale; };
      const std::string w = " W=" + std::to_string(W);
      for (const char* name : {"window_ge_d64", "window_le_d64"})
        check_attention(std::string(name) + " S=300" + w + tag, sh, seed += 3, sc,
                        [&](LL, LL i, LL j) { return j <= i && i - j < W; }, false, kO, kLse,
                        [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                          PKT_OK(K(name).launch(ctx, s, q.view(), k.view(), v.view(), o.view(), W, scale));
                        });
      // One key wider: i - W <= j <= i.
      check_attention("window_ge_w_d64 S=300" + w + tag, sh, seed += 3, sc,
                      [&](LL, LL i, LL j) { return j <= i && i - j <= W; }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("window_ge_w_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(), W, scale));
                      });
      check_attention("local_bidir_d64 S=300" + w + tag, sh, seed += 3, sc,
                      [&](LL, LL i, LL j) { return std::llabs(i - j) < W; }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("local_bidir_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(), W, scale));
                      });
      // Causal and window by min, filled with -10000, the key bound in a second where (-1e30).
      check_attention("masks_min_hf_fill_d128 S=300" + w + tag, Shape{2, 1, 300, 300, 128}, seed += 3,
                      [&](LL, LL, LL, double x) { return x * scale; },
                      [&](LL, LL i, LL j) { return j <= i && i - j < W; }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("masks_min_hf_fill_d128").launch(ctx, s, q.view(), k.view(), v.view(), o.view(), W,
                                                                  scale));
                      });
      // Attention sinks: 4 first keys plus the window.
      check_attention("sink_window_d64 S=300 sinks=4" + w + tag, sh, seed += 3, sc,
                      [&](LL, LL i, LL j) { return j <= i && (i - j < W || j < 4); }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("sink_window_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(), LL(4), W,
                                                           scale));
                      });
      // A soft window: keys at or before i - W lose 8 from their score, none is masked.
      check_attention("window_soft_penalty_d64 S=300" + w + tag, sh, seed += 3,
                      [&](LL, LL i, LL j, double x) { return x * scale - (j > i - W ? 0.0 : 8.0); }, causal, false,
                      kO, kLse, [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("window_soft_penalty_d64")
                                   .launch(ctx, s, q.view(), k.view(), v.view(), o.view(), W, scale));
                      });
    }
    {
      const Shape sh{2, 1, 517, 517, 128};  // window 517 / 4 = 129 keys: one more than a key step
      const float scale = float(1 / std::sqrt(128.0));
      check_attention("window_extent_d128 S=517 (window 129)" + tag, sh, seed += 3,
                      [&](LL, LL, LL, double x) { return x * scale; },
                      [&](LL, LL i, LL j) { return j <= i && j > i - 517 / 4; }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("window_extent_d128").launch(ctx, s, q.view(), k.view(), v.view(), o.view(), scale));
                      });
    }
    {
      const Shape sh{8, 4, 333, 333, 128};
      const LL W = 150;
      const float scale = float(1 / std::sqrt(128.0));
      check_attention("gqa_window_lse_d128 8 over 2 heads S=333 W=150 with lse" + tag, sh, seed += 3,
                      [&](LL, LL, LL, double x) { return x * scale; },
                      [&](LL, LL i, LL j) { return j <= i && i - j < W; }, true, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto& lse) {
                        PKT_OK(K("gqa_window_lse_d128")
                                   .launch(ctx, s, q.view(), k.view(), v.view(), o.view(), lse.view(), LL(4), W, scale));
                      });
    }
    {  // Cross attention (Sq = 150, Sk = 333) with an additive f32 bias per key [Sk].
      const Shape sh{3, 1, 150, 333, 128};
      const float scale = float(1 / std::sqrt(128.0));
      DevTensor<float> kb({333}, seed += 3);
      check_attention("key_padding_bias_cross_d128 H=3 Sq=150 Sk=333" + tag, sh, seed += 3,
                      [&](LL, LL, LL j, double x) { return x * scale + double(kb.at(j)); },
                      [](LL, LL, LL) { return true; }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("key_padding_bias_cross_d128")
                                   .launch(ctx, s, q.view(), k.view(), v.view(), o.view(), kb.view(), scale));
                      });
    }
    {
      const Shape sh{6, 1, 257, 257, 64};
      const float scale = 0.125f;
      check_attention("head_mod_scalars_d64 H=6 S=257 with lse" + tag, sh, seed += 3,
                      [&](LL h, LL i, LL j, double x) {
                        const float temp = 1.0f + 0.25f * float(h % 4), slope = 1.0f / float(1 + h / 2);
                        return x * double(scale / temp) - double(i - j) * double(slope);
                      },
                      causal, true, kO, kLse, [&](auto& q, auto& k, auto& v, auto& o, auto& lse) {
                        PKT_OK(K("head_mod_scalars_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                                lse.view(), scale));
                      });
    }
    {
      const Shape sh{2, 1, 150, 333, 128};  // 183 cached keys, 150 new queries
      const float scale = float(1 / std::sqrt(128.0));
      check_attention("causal_bottom_right_d128 Sq=150 Sk=333" + tag, sh, seed += 3,
                      [&](LL, LL, LL, double x) { return x * scale; },
                      [&](LL, LL i, LL j) { return j <= i + (333 - 150); }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("causal_bottom_right_d128").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                                    scale));
                      });
    }
    {
      Shape sh{1, 1, 400, 400, 64};
      sh.two_d = true;
      const LL W = 100;
      const float scale = 0.125f;
      check_attention("softcap_window_2d_d64 S=400 W=100 with 1-D lse" + tag, sh, seed += 3,
                      [&](LL, LL, LL, double x) { return 50 * std::tanh(x * double(scale / 50.0f)); },
                      [&](LL, LL i, LL j) { return j <= i && i - j < W; }, true, 3e-2, 5e-2,
                      [&](auto& q, auto& k, auto& v, auto& o, auto& lse) {
                        PKT_OK(K("softcap_window_2d_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                                 lse.view(), W, scale));
                      });
    }
    // Maps that read tensors at the head, integer masks and a transposed bias.
    {
      const Shape sh{4, 1, 200, 200, 128};
      const float scale = float(1 / std::sqrt(128.0));
      DevTensor<float> slopes({4}, seed += 3);
      check_attention("alibi_slopes_tensor_d128 H=4 S=200" + tag, sh, seed += 3,
                      [&](LL h, LL i, LL j, double x) { return x * scale - double(i - j) * slopes.at(h); }, causal,
                      false, kO, kLse, [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("alibi_slopes_tensor_d128").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                                    slopes.view(), scale));
                      });
    }
    {  // [H, 1] slopes read as a 1 x 1 tile at [h, 0], non-causal, |i - j| distances
      const Shape sh{3, 1, 170, 170, 64};
      const float scale = 0.125f;
      DevTensor<float> slopes({3, 1}, seed += 3);
      check_attention("alibi_slopes_column_d64 H=3 S=170" + tag, sh, seed += 3,
                      [&](LL h, LL i, LL j, double x) { return x * scale - double(std::llabs(i - j)) * slopes.at(h); },
                      [](LL, LL, LL) { return true; }, false, kO, kLse, [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("alibi_slopes_column_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                                   slopes.view(), scale));
                      });
    }
    {  // a per-head bias [H, S, S] read at [h, m, n], causal
      const Shape sh{3, 1, 190, 190, 64};
      const float scale = 0.125f;
      DevTensor<float> bias({3, 190, 190}, seed += 3);
      check_attention("rel_bias_per_head_d64 H=3 S=190" + tag, sh, seed += 3,
                      [&](LL h, LL i, LL j, double x) { return x * scale + bias.at((h * 190 + i) * 190 + j); }, causal,
                      false, kO, kLse, [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("rel_bias_per_head_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                                 bias.view(), scale));
                      });
    }
    {
      const Shape sh{2, 1, 130, 190, 64};
      const float scale = 0.125f;
      DevTensor<float> bt({190, 130}, seed += 3);  // [Sk, Sq]
      check_attention("rel_bias_transposed_d64 Sq=130 Sk=190" + tag, sh, seed += 3,
                      [&](LL, LL i, LL j, double x) { return x * scale + bt.at(j * 130 + i); },
                      [](LL, LL, LL) { return true; }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("rel_bias_transposed_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                                   bt.view(), scale));
                      });
    }
    {
      const Shape sh{2, 1, 250, 250, 64};
      const float scale = 0.125f;
      const LL L = 48;
      check_attention("doc_mask_intdiv_d64 S=250 L=48" + tag, sh, seed += 3,
                      [&](LL, LL, LL, double x) { return x * scale; },
                      [&](LL, LL i, LL j) { return j <= i && i / L == j / L; }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("doc_mask_intdiv_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(), L,
                                                               scale));
                      });
    }
    {
      const Shape sh{2, 1, 210, 210, 64};
      const float scale = 0.125f;
      std::vector<int> ids(210);
      for (LL i = 0; i < 210; ++i) ids[i] = int(i < 30 ? 0 : i < 100 ? 1 : i < 101 ? 2 : 3);  // a one-token segment
      Dev<int> segq(ids, {210}), segk(ids, {210});
      check_attention("segment_ids_mask_d64 S=210" + tag, sh, seed += 3,
                      [&](LL, LL, LL, double x) { return x * scale; },
                      [&](LL, LL i, LL j) { return ids[i] == ids[j]; }, false, kO, kLse,
                      [&](auto& q, auto& k, auto& v, auto& o, auto&) {
                        PKT_OK(K("segment_ids_mask_d64").launch(ctx, s, q.view(), k.view(), v.view(), o.view(),
                                                                segq.view(), segk.view(), scale));
                      });
    }
  }
}

// ================================================================ GEMMs ==

// Operands uniform in [-2, 2): fp32 sums over K in another order (about 1e-4 sqrt(K) absolute)
// and one rounding of the output (2 ulps relative); tanh.approx adds cap * 1e-3.
void gemms(pk::Context& ctx, cudaStream_t s) {
  const LL M = 200, N = 264, K = 136;  // K and N whole 16-byte rows: the template runs
  const double acc_tol = 1e-3 * std::sqrt(double(K));
  for (const char* path : {"", "/general"}) {
    const std::string tag = *path ? " (general path)" : " (template)";
    auto G = [&](const char* name) -> pk::jit::Kernel& { return g_kernels.at(std::string(name) + path); };
    {
      const int before = pkt::failure_count();
      const float cap = 20.f;
      const LL pad = 40;
      DevTensor<bf16> a({M, K}, 11), b({N, K}, 12);
      DevTensor<float> c({M, N}, 0, true);
      PKT_OK(G("gemm_t_softcap_logits_f32").launch(ctx, s, a.view(), b.view(), c.view(), cap, pad));
      PKT_CUDA(cudaStreamSynchronize(s));
      pkt::expect("gemm_t_softcap_logits_f32", c, [&](LL i) {
        return i % N < N - pad ? cap * std::tanh(pkt::gemm_dot(a, b, false, i / N, i % N, N, K) / cap) : -1e4;
      }, acc_tol + cap * 1e-3, 1e-4);
      report("gemm_t_softcap_logits_f32" + tag, before);
    }
    {
      const int before = pkt::failure_count();
      DevTensor<bf16> a({M, K}, 13), b({K, N}, 14), bias({N}, 15), c({M, N}, 0, true);
      PKT_OK(G("gemm_ab_rsqrtk_bias").launch(ctx, s, a.view(), b.view(), bias.view(), c.view()));
      PKT_CUDA(cudaStreamSynchronize(s));
      pkt::expect("gemm_ab_rsqrtk_bias", c, [&](LL i) {
        return pkt::gemm_dot(a, b, true, i / N, i % N, N, K) / std::sqrt(double(K)) + bias.at(i % N);
      }, acc_tol, kBf16);
      report("gemm_ab_rsqrtk_bias" + tag, before);
    }
    {
      const int before = pkt::failure_count();
      DevTensor<f16> a({M, K}, 16), b({N, K}, 17), c({M, N}, 0, true);
      PKT_OK(G("gemm_t_half_silu_f16").launch(ctx, s, a.view(), b.view(), c.view()));
      PKT_CUDA(cudaStreamSynchronize(s));
      pkt::expect("gemm_t_half_silu_f16", c, [&](LL i) {
        const double y = pkt::gemm_dot(a, b, false, i / N, i % N, N, K);
        return i % N < N / 2 ? pkt::silu(y) : y;
      }, acc_tol, 2 * kF16);
      report("gemm_t_half_silu_f16" + tag, before);
    }
    {
      const int before = pkt::failure_count();
      const LL rows_valid = 131, col0 = 77;
      const float alpha = -0.75f;
      DevTensor<bf16> a({M, K}, 18), b({K, N}, 19);
      DevTensor<float> c({M, N}, 0, true);
      PKT_OK(G("gemm_ab_row_col_mask_f32").launch(ctx, s, a.view(), b.view(), c.view(), rows_valid, col0, alpha));
      PKT_CUDA(cudaStreamSynchronize(s));
      pkt::expect("gemm_ab_row_col_mask_f32", c, [&](LL i) {
        return i / N < rows_valid && i % N >= col0 ? alpha * pkt::gemm_dot(a, b, true, i / N, i % N, N, K) : 0.0;
      }, acc_tol, 1e-5);
      report("gemm_ab_row_col_mask_f32" + tag, before);
    }
    for (float alpha : {0.5f, 3.0f}) {  // min(alpha, 1): the argument, then the clamp
      const int before = pkt::failure_count();
      DevTensor<bf16> a({M, K}, 20), b({N, K}, 21), r({M, N}, 22), c({M, N}, 0, true);
      DevTensor<float> bias({N}, 23), rs({M}, 24);
      PKT_OK(G("gemm_t_residual_rowscale").launch(ctx, s, a.view(), b.view(), bias.view(), rs.view(), r.view(), c.view(),
                                                  alpha));
      PKT_CUDA(cudaStreamSynchronize(s));
      pkt::expect("gemm_t_residual_rowscale", c, [&](LL i) {
        return r.at(i) + (pkt::gemm_dot(a, b, false, i / N, i % N, N, K) + bias.at(i % N)) * std::min(alpha, 1.0f) * rs.at(i / N);
      }, 2 * acc_tol, kBf16);
      report("gemm_t_residual_rowscale alpha=" + std::to_string(alpha) + tag, before);
    }
    {  // Refused by the template: both paths are the general tile path.
      const int before = pkt::failure_count();
      DevTensor<bf16> a({M, K}, 25), b({N, K}, 26), c({M, N}, 0, true);
      DevTensor<float> sc({(M + 127) / 128, (N + 127) / 128}, 27);
      PKT_OK(G("gemm_t_block_scale_at").launch(ctx, s, a.view(), b.view(), sc.view(), c.view()));
      PKT_CUDA(cudaStreamSynchronize(s));
      const LL scols = (N + 127) / 128;
      pkt::expect("gemm_t_block_scale_at", c, [&](LL i) {
        return pkt::gemm_dot(a, b, false, i / N, i % N, N, K) * sc.at(i / N / 128 * scols + i % N / 128);
      }, 2 * acc_tol, kBf16);
      report("gemm_t_block_scale_at" + tag, before);
    }
    {
      const int before = pkt::failure_count();
      DevTensor<bf16> a({M, K}, 28), b({K, N}, 29);
      DevTensor<float> c({M, N}, 0, true);
      PKT_OK(G("gemm_ab_origin_scalar_f32").launch(ctx, s, a.view(), b.view(), c.view()));
      PKT_CUDA(cudaStreamSynchronize(s));
      pkt::expect("gemm_ab_origin_scalar_f32", c, [&](LL i) {
        return pkt::gemm_dot(a, b, true, i / N, i % N, N, K) * double(i / N / 64 + 1);
      }, 4 * acc_tol, 1e-5);
      report("gemm_ab_origin_scalar_f32" + tag, before);
    }
    {  // The template since integer epilogue steps.
      const int before = pkt::failure_count();
      DevTensor<bf16> a({M, K}, 30), b({N, K}, 31), c({M, N}, 0, true);
      PKT_OK(G("gemm_t_parity_gelu").launch(ctx, s, a.view(), b.view(), c.view()));
      PKT_CUDA(cudaStreamSynchronize(s));
      pkt::expect("gemm_t_parity_gelu", c, [&](LL i) {
        const double y = pkt::gemm_dot(a, b, false, i / N, i % N, N, K);
        return i % N % 2 == 0 ? pkt::gelu_erf(y) : y;
      }, acc_tol, kBf16);
      report("gemm_t_parity_gelu" + tag, before);
    }
  }
}

// ================================================================ general path ==

void general(pk::Context& ctx, cudaStream_t s) {
  for (const char* path : {"", "/general"}) {
    const std::string tag = *path ? " (templates off)" : "";
    auto G = [&](const char* name) -> pk::jit::Kernel& { return g_kernels.at(std::string(name) + path); };
    {
      const int before = pkt::failure_count();
      const LL R = 37, C = 1024;
      const float eps = 1e-6f;
      DevTensor<bf16> x({R, C}, 40), w({C}, 41), y({R, C}, 0, true);
      PKT_OK(G("gemma_rmsnorm").launch(ctx, s, x.view(), w.view(), y.view(), eps));
      PKT_CUDA(cudaStreamSynchronize(s));
      std::vector<double> rr(R);
      for (LL r = 0; r < R; ++r) {
        double ss = 0;
        for (LL c = 0; c < C; ++c) ss += x.at(r * C + c) * x.at(r * C + c);
        rr[r] = 1 / std::sqrt(ss / C + eps);
      }
      // fp32 sum of 1024 squares and rsqrt (about 1e-6 relative), one bf16 rounding.
      pkt::expect("gemma_rmsnorm", y, [&](LL i) { return x.at(i) * rr[i / C] * (1 + w.at(i % C)); }, 1e-3, kBf16);
      report("gemma_rmsnorm R=37" + tag, before);
    }
    {
      const int before = pkt::failure_count();
      const LL S = 300, d = 96, W = 45;
      DevTensor<float> sc({S, S}, 42), p({S, S}, 0, true);
      PKT_OK(G("window_softmax_rows").launch(ctx, s, sc.view(), p.view(), d, W));
      PKT_CUDA(cudaStreamSynchronize(s));
      std::vector<double> want(S * S, 0.0);
      for (LL i = 0; i < S; ++i) {
        double mx = -INFINITY, sum = 0;
        for (LL j = std::max(0LL, i - W + 1); j <= i; ++j) mx = std::max(mx, sc.at(i * S + j) / std::sqrt(double(d)));
        for (LL j = std::max(0LL, i - W + 1); j <= i; ++j) sum += std::exp(sc.at(i * S + j) / std::sqrt(double(d)) - mx);
        for (LL j = std::max(0LL, i - W + 1); j <= i; ++j)
          want[i * S + j] = std::exp(sc.at(i * S + j) / std::sqrt(double(d)) - mx) / sum;
      }
      // ex2.approx and a reciprocal multiply: a few ulps of fp32.
      pkt::expect("window_softmax_rows", p, [&](LL i) { return want[i]; }, 1e-6, 1e-5);
      report("window_softmax_rows S=300 W=45" + tag, before);
    }
    {
      const int before = pkt::failure_count();
      const LL R = 40, C = 200;
      std::vector<int> len(R);
      for (LL r = 0; r < R; ++r) len[r] = int(r == 3 ? 0 : r == 5 ? C : (r * 37) % C + 1);
      Dev<int> lens(len, {R});
      DevTensor<float> sc({R, C}, 43), p({R, C}, 0, true);
      PKT_OK(G("lengths_masked_softmax").launch(ctx, s, sc.view(), lens.view(), p.view()));
      PKT_CUDA(cudaStreamSynchronize(s));
      std::vector<double> want(R * C, 0.0);
      for (LL r = 0; r < R; ++r) {
        if (len[r] == 0) {
          for (LL c = 0; c < C; ++c) want[r * C + c] = 1.0 / 256;  // all 256 tile columns equal
          continue;
        }
        double mx = -INFINITY, sum = 0;
        for (LL c = 0; c < len[r]; ++c) mx = std::max(mx, sc.at(r * C + c));
        for (LL c = 0; c < len[r]; ++c) sum += std::exp(sc.at(r * C + c) - mx);
        for (LL c = 0; c < len[r]; ++c) want[r * C + c] = std::exp(sc.at(r * C + c) - mx) / sum;
      }
      pkt::expect("lengths_masked_softmax", p, [&](LL i) { return want[i]; }, 1e-6, 1e-5);
      report("lengths_masked_softmax R=40 C=200 (a row of length 0)" + tag, before);
    }
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs9_jit_test");
  pkt::run_ranks(1, [&](pk::Context& ctx) {
    for (auto& [name, k] : g_kernels) PKT_OK(k.load(ctx));
    cudaStream_t s;
    PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    gemms(ctx, s);
    general(ctx, s);
    attention(ctx, s);
    PKT_CUDA(cudaStreamDestroy(s));
  });
  return pkt::finish("user_specs9_jit_test");
}

// The nineteenth user-written spec set (test/specs/user_specs19.pk.cpp) through the JIT, each kernel
// against a host reference on fresh random inputs (float64, or exact for integers, orders and random
// numbers), with every output poisoned (NaN, or all-ones integers) first. The single-GPU kernels run at
// W = 1 (the attention and GEMM kernels on the Hopper templates also with templates = false,
// "name/general"); the kernels that use rank(), peers or collectives (sp_dropout_global_rows,
// tp_vocab_top4, moe_route_top2_dispatch, moe_combine_top2) at W = 1, 2 and 3 (ranks sharing one GPU;
// PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs.
// uniform() is checked bit for bit against the hash docs/language.md gives (uniform_at in jit_spec_cases.h, as
// test/gpu/masks_random_jit_test.cu reproduces it), with negative seeds and seeds past 2^32; dropout masks,
// Gumbel and exponential noise and stochastic rounding use the same numbers. row_topk / row_topk_index
// are checked exactly against the documented order (largest first, ties to the lower column, NaN and
// padding never chosen, -inf and -1 past a row's last candidate), with ties, NaN, -inf and +-0 planted.
// Shapes leave partial tiles in every tiled dimension. Every GEMM kernel the template takes runs at sizes
// the template takes (for the A-transposed weight gradients an odd number of tokens K, which the template
// allows since K is the outer dimension of both operands) and at sizes that send it to its general-path
// twin, each through both compiles.
//
// Covered: all 45 kernels. With -DPK_SPECS19_W1 (and PK_USER_SPECS19_BAD_SPEC) also finding 1's
// reproducers from user_specs19_bad.pk.cpp: a batched GEMM with dropout seeded per batch (seed + z) and
// an attention with noise seeded per head (seed + h), each on its template and its general path; the
// template forms fail until the finding is fixed (their per-batch / per-head seed split is computed in
// 32-bit ints with the constants 2^32 and 2^31 truncated, so every seed draws seed 0's numbers); and two
// launches whose index arguments pass 2^31 (wgrad_rowscale_mask_bf16 with kmax = 2^40, the batched dropout
// with a seed past 2^31), which the templates' 32-bit parameter blocks refuse while the twins run them.
//
// Ambiguity the specs leave, taken into account: where two candidates of a top-k or argmax of computed
// values (softmax probabilities, sigmoid scores, Gumbel / exponential scores) lie within 1e-5 relative
// of each other, either order is accepted (the device's exp is ex2.approx, its sigmoid __fdividef);
// rows of topk_topp_filter whose boundary mass lies within 1e-4 of top_p are skipped (counted, and few);
// stochastic_round_int8 accepts the neighbouring level where x / scale + u lies within 1e-4 of an integer
// (fma contraction). Shapes the specs fix: the attention kernels' head dims (64 or 128),
// moe_router_softmax_top4 at most 64 experts, moe_router_sigmoid_bias_dense at most 256,
// topk_topp_filter a vocabulary of at most 256, kth_value_count_bf16 rows of 5 to 128, sort_rows_f16_inplace
// rows of at most 32, topk_k_exceeds_row rows of 5 to 8, argmax_long_rows_two_phase at most 32 chunks of
// 2048, tp_vocab_top4 shards of at most 1024 and W <= 16, gumbel_max_sample at most 1024 columns,
// exponential_race_sample at most 512, expert_choice_top16 at most 512 tokens, ce_loss_sum_ignore_index at
// most 512 classes, cumsum_i64_wide_rows rows of at most 1024, reshape_cumsum_row_scale at most 128,
// reshape_3d_topk2 at most 64, exclusive_offsets_i64_3d at most 128, cumsum_4d_bf16_wide_tile a last
// dimension of at most 64, uniform_4d_offset_origins a last dimension of at most 24, colsum_wide_tile_store_add
// at most 256 columns, moe_route_top2_dispatch at most 64 experts.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f16;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Kernels, and whether one of their launches takes a template (true) or none does.
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"attn_causal_and_klen_d64", true},
    {"attn_sinks_window_or_d128", true},
    {"attn_prefix_or_causal_gqa_f16_d64", true},
    {"attn_doc_not_pad_d64", true},
    {"attn_dropout_general_d64", false},
    {"masked_softmax_or_not_3d", false},
    {"alibi_causal_bias_4d", false},
    {"sinusoidal_pos_add_3d", false},
    {"dropout_add_residual_f16_3d", false},
    {"dropout_bwd_regenerate_bf16", false},
    {"sp_dropout_global_rows", false},
    {"drop_path_per_sample_3d", false},
    {"gumbel_max_sample", false},
    {"exponential_race_sample", false},
    {"stochastic_round_int8", false},
    {"uniform_4d_offset_origins", false},
    {"moe_router_softmax_top4", false},
    {"moe_router_sigmoid_bias_dense", false},
    {"topk_topp_filter", false},
    {"kth_value_count_bf16", false},
    {"sort_rows_f16_inplace", false},
    {"topk_k_exceeds_row", false},
    {"argmax_long_rows_two_phase", false},
    {"chunk_top3_candidates", false},
    {"tp_vocab_top4", false},
    {"expert_choice_top16", false},
    {"ce_loss_sum_ignore_index", false},
    {"cumsum_4d_bf16_wide_tile", false},
    {"exclusive_offsets_i64_3d", false},
    {"real_token_positions_i64", false},
    {"cumsum_i64_wide_rows", false},
    {"reshape_cumsum_row_scale", false},
    {"reshape_3d_topk2", false},
    {"conv1d_3tap_bwd_store_add", false},
    {"conv1d_scatter_shifted_adds", false},
    {"colsum_wide_tile_store_add", false},
    {"expert_counts_i64_store_add", false},
    {"wgrad_accumulate_f32_inplace", true},
    {"wgrad_rowscale_mask_bf16", true},
    {"wgrad_t_f16_dropout", true},
    {"wgrad_erf_scalar_f32", true},
    {"linear_erf_gelu_f32", true},
    {"gelu_by_erf_f16_3d", false},
    {"moe_route_top2_dispatch", false},
    {"moe_combine_top2", false},
};
// The template kernels also run with templates = false ("name/general").
const std::vector<const char*> kGeneralToo = {
    "attn_causal_and_klen_d64",     "attn_sinks_window_or_d128", "attn_prefix_or_causal_gqa_f16_d64",
    "attn_doc_not_pad_d64",         "wgrad_accumulate_f32_inplace", "wgrad_rowscale_mask_bf16",
    "wgrad_t_f16_dropout",          "wgrad_erf_scalar_f32",      "linear_erf_gelu_f32"};

KernelSet g_kernels;

#ifdef PK_SPECS19_W1
// Finding 1's reproducers (test/specs/user_specs19_bad.pk.cpp), each on its template and its twin.
const std::vector<std::pair<const char*, bool>> kW1Kernels = {{"w1_bmm_dropout_seed_per_batch", true},
                                                              {"w2_attention_noise_seed_per_head", true}};
const std::vector<const char*> kW1General = {"w1_bmm_dropout_seed_per_batch", "w2_attention_noise_seed_per_head"};
#endif

bool compile_all() {
  if (!compile_set(PK_USER_SPECS19_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return false;
#ifdef PK_SPECS19_W1
  if (!compile_set(PK_USER_SPECS19_BAD_SPEC, kW1Kernels, kW1General, PK_PKC, g_kernels)) return false;
#endif
  return true;
}

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs19", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host references ----

// The attention outputs' bounds: bf16 (p and o rounded to bf16) and f16, and the log-sum-exp.
auto bf_o_tol(const std::vector<double>& w, double extra = 0.0) {
  return [&w, extra](LL i) { return 2 * kBf * std::fabs(w[i]) + 4e-3 + extra; };
}
auto hf_o_tol(const std::vector<double>& w) { return [&w](LL i) { return 4 * kHf * std::fabs(w[i]) + 2e-3; }; }
auto lse_tol(const std::vector<double>& w) { return [&w](LL i) { return 1e-3 * std::fabs(w[i]) + 2e-3; }; }

// The documented top-k order of one row: the columns of its non-NaN values, largest first, ties to the
// lower column (-0 and +0 are equal).
template <class F>
std::vector<LL> topk_order(LL n, const F& value) {
  std::vector<LL> cols;
  for (LL j = 0; j < n; ++j)
    if (!std::isnan(value(j))) cols.push_back(j);
  std::sort(cols.begin(), cols.end(), [&](LL a, LL b) { return value(a) > value(b) || (value(a) == value(b) && a < b); });
  return cols;
}
// Whether the first k of an order computed on the host from values the device computes approximately
// are decided: consecutive values among the first k + 1 differ by more than rel (|a| + |b|) + abs.
template <class F>
bool decided(const std::vector<LL>& order, LL k, const F& value, double rel = 1e-5, double abs = 1e-30) {
  for (LL j = 0; j + 1 < std::min<LL>(k + 1, LL(order.size())); ++j) {
    const double a = value(order[j]), b = value(order[j + 1]);
    if (std::fabs(a - b) <= rel * (std::fabs(a) + std::fabs(b)) + abs) return false;
  }
  return true;
}
// Values with ties (multiples of 1/8 in [-4, 4]) as T.
template <class T>
std::vector<T> tied(LL n, unsigned seed) {
  const auto k = ints<int>(n, -32, 32, seed);
  std::vector<T> v(n);
  for (LL i = 0; i < n; ++i) v[i] = pkt::from_host<T>(float(k[i]) / 8.f);
  return v;
}
// Every row of a row-major [M, N] f32 softmax (float64).
std::vector<double> softmax_rows(const std::vector<float>& x, LL M, LL N) {
  std::vector<double> p(M * N);
  for (LL m = 0; m < M; ++m) {
    double mx = -1e300, s = 0;
    for (LL j = 0; j < N; ++j) mx = std::max(mx, double(x[m * N + j]));
    for (LL j = 0; j < N; ++j) s += (p[m * N + j] = std::exp(double(x[m * N + j]) - mx));
    for (LL j = 0; j < N; ++j) p[m * N + j] /= s;
  }
  return p;
}

// ================================================================ attention masks by && || ! ==

// attn_causal_and_klen_d64: [S, 64] bf16, causal, lse [S].
void attn_causal_and_klen_d64(const Run& r, const std::string& k, LL S, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(S * D, seed), kk = rnd<bf16>(S * D, seed + 1), v = rnd<bf16>(S * D, seed + 2);
  DevLocal<bf16> qd({S, D}, q), kd({S, D}, kk), vd({S, D}, v), o({S, D}, {});
  DevLocal<float> lse({S}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale)) {
    std::vector<double> wo, wl;
    attend(S, S, D, [&](LL i, LL j) { return dot(q, i * D, kk, j * D, D) * scale; }, [](LL i, LL j) { return j <= i; },
           [&](LL j, LL d) { return val(v[j * D + d]); }, wo, wl);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, k + " " + dims({S}), before);
}

// attn_sinks_window_or_d128: [H, S, 128], keys j <= i with j > i - window or j < sinks. window = 1 and no
// sinks: every row sees its own key only (o = v).
void attn_sinks_window_or_d128(const Run& r, const std::string& k, LL H, LL S, LL window, LL sinks, unsigned seed) {
  const LL D = 128;
  const float scale = 0.088388f;
  const auto q = rnd<bf16>(H * S * D, seed), kk = rnd<bf16>(H * S * D, seed + 1), v = rnd<bf16>(H * S * D, seed + 2);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), window, sinks, scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h)
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale; },
             [&](LL i, LL j) { return j <= i && (j > i - window || j < sinks); },
             [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); }, wo.data() + h * S * D, wl.data() + h * S);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, S, window, sinks}), before);
}

// attn_prefix_or_causal_gqa_f16_d64: f16, keys j <= i or j < prefix, K/V head h / G, lse [H, S, 1].
void attn_prefix_or_causal_gqa_f16_d64(const Run& r, const std::string& k, LL H, LL Hk, LL S, LL prefix, unsigned seed) {
  const LL D = 64, G = H / Hk;
  const float scale = 0.125f;
  const auto q = rnd<f16>(H * S * D, seed), kk = rnd<f16>(Hk * S * D, seed + 1), v = rnd<f16>(Hk * S * D, seed + 2);
  DevLocal<f16> qd({H, S, D}, q), kd({Hk, S, D}, kk), vd({Hk, S, D}, v), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), G, prefix, scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h) {
      const LL kh = h / G;
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (kh * S + j) * D, D) * scale; },
             [&](LL i, LL j) { return j <= i || j < prefix; }, [&](LL j, LL d) { return val(v[(kh * S + j) * D + d]); },
             wo.data() + h * S * D, wl.data() + h * S);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, hf_o_tol(wo));
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, k + " " + dims({H, Hk, S, prefix}), before);
}

// attn_doc_not_pad_d64: key j visible to query i when seg[i] == seg[j] and pad[j] == 0. Documents of 1 to
// 40 tokens; pad flags (nonzero, some negative) only on keys that are not their document's first, so every
// query sees at least its document's first key.
void attn_doc_not_pad_d64(const Run& r, const std::string& k, LL S, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(S * D, seed), kk = rnd<bf16>(S * D, seed + 1), v = rnd<bf16>(S * D, seed + 2);
  const auto lens = ints<int>(S, 1, 40, seed + 3), flags = ints<int>(S, -3, 6, seed + 4);
  std::vector<int> seg(S), pad(S);
  for (LL i = 0, d = 0, left = lens[0]; i < S; ++i, --left) {
    if (left == 0) left = lens[++d];
    seg[i] = int(d);
    pad[i] = i > 0 && seg[i - 1] == seg[i] && flags[i] < 0 ? flags[i] : 0;
  }
  DevLocal<bf16> qd({S, D}, q), kd({S, D}, kk), vd({S, D}, v), o({S, D}, {});
  DevLocal<int> sd({S}, seg), pd({S}, pad);
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), sd.view(), pd.view(), scale)) {
    std::vector<double> wo, wl;
    attend(S, S, D, [&](LL i, LL j) { return dot(q, i * D, kk, j * D, D) * scale; },
           [&](LL i, LL j) { return seg[i] == seg[j] && pad[j] == 0; }, [&](LL j, LL d) { return val(v[j * D + d]); }, wo, wl);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({S}), before);
}

// attn_dropout_general_d64: o_i = sum_j [u(seed, h, i, j) >= pd] p_ij / (1 - pd) v_j with p the undropped
// softmax (the running sum takes p itself).
void attn_dropout_general_d64(const Run& r, LL H, LL S, LL seed, float pd, unsigned s) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * S * D, s), kk = rnd<bf16>(H * S * D, s + 1), v = rnd<bf16>(H * S * D, s + 2);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "attn_dropout_general_d64", 1, qd.view(), kd.view(), vd.view(), o.view(), seed, pd, scale)) {
    std::vector<double> wo(H * S * D, 0.0), p(S);
    for (LL h = 0; h < H; ++h)
      for (LL i = 0; i < S; ++i) {
        double mx = -1e300, l = 0;
        for (LL j = 0; j < S; ++j) mx = std::max(mx, p[j] = dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale);
        for (LL j = 0; j < S; ++j) l += (p[j] = std::exp(p[j] - mx));
        for (LL j = 0; j < S; ++j) {
          if (uniform_at(seed, {h, i, j}) < pd) continue;
          for (LL d = 0; d < D; ++d) wo[(h * S + i) * D + d] += p[j] / l / (1.0 - pd) * val(v[(h * S + j) * D + d]);
        }
      }
    check(r, "attn_dropout_general_d64.o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo, 4e-3));
  }
  end_case(r, "attn_dropout_general_d64 " + dims({H, S}), before);
}

// masked_softmax_or_not_3d: p over the keys j with j <= i, or i and j both below pre[b]; 0 elsewhere.
void masked_softmax_or_not_3d(const Run& r, LL B, LL Sq, LL Sk, unsigned seed) {
  const auto s = rnd<float>(B * Sq * Sk, seed, -4.f, 4.f);
  std::vector<long long> pre(B);
  for (LL b = 0; b < B; ++b) pre[b] = (b * 13 + 5) % (Sq + 3);
  DevLocal<float> sd({B, Sq, Sk}, s), p({B, Sq, Sk}, {});
  DevLocal<long long> prd({B}, pre);
  const int before = begin_case(r);
  if (run(r, "masked_softmax_or_not_3d", 1, sd.view(), prd.view(), p.view())) {
    std::vector<double> want(B * Sq * Sk, 0.0);
    for (LL b = 0; b < B; ++b)
      for (LL i = 0; i < Sq; ++i) {
        auto keep = [&](LL j) { return j <= i || (i < pre[b] && j < pre[b]); };
        double mx = -1e300, l = 0;
        const LL row = (b * Sq + i) * Sk;
        for (LL j = 0; j < Sk; ++j)
          if (keep(j)) mx = std::max(mx, double(s[row + j]));
        for (LL j = 0; j < Sk; ++j)
          if (keep(j)) l += (want[row + j] = std::exp(s[row + j] - mx));
        for (LL j = 0; j < Sk; ++j) want[row + j] /= l;
      }
    check(r, "masked_softmax_or_not_3d.p", p.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 2e-5 * want[i] + 1e-7; });
  }
  end_case(r, "masked_softmax_or_not_3d " + dims({B, Sq, Sk}), before);
}

// ================================================================ dim_index on 3-D and 4-D tiles ==

// alibi_causal_bias_4d: out = s scale - 2^(-8 (h + 1) / H) (i - j) where j <= i, -1e30 elsewhere.
void alibi_causal_bias_4d(const Run& r, LL B, LL H, LL Sq, LL Sk, unsigned seed) {
  const float scale = 0.125f;
  const auto s = rnd<float>(B * H * Sq * Sk, seed, -8.f, 8.f);
  DevLocal<float> sd({B, H, Sq, Sk}, s), out({B, H, Sq, Sk}, {});
  const int before = begin_case(r);
  if (run(r, "alibi_causal_bias_4d", 1, sd.view(), out.view(), scale)) {
    auto want = [&](LL x) {
      const LL j = x % Sk, i = x / Sk % Sq, h = x / (Sk * Sq) % H;
      if (j > i) return double(-1e30f);
      return double(s[x]) * scale - std::pow(2.0, -8.0 * double(h + 1) / double(H)) * double(i - j);
    };
    check(r, "alibi_causal_bias_4d.out", out.download(), want, [&](LL x) {
      const LL j = x % Sk, i = x / Sk % Sq;
      return j > i ? 0.0 : 1e-6 * std::fabs(s[x] * scale) + 2e-6 * double(i - j) + 1e-6;
    });
  }
  end_case(r, "alibi_causal_bias_4d " + dims({B, H, Sq, Sk}), before);
}

// sinusoidal_pos_add_3d: y = bf16(x + (d even ? sin : cos)((s + past) / 10000^(2 (d / 2) / D))).
void sinusoidal_pos_add_3d(const Run& r, LL B, LL S, LL D, LL past, unsigned seed) {
  const auto x = rnd<bf16>(B * S * D, seed);
  DevLocal<bf16> xd({B, S, D}, x), y({B, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "sinusoidal_pos_add_3d", 1, xd.view(), y.view(), past)) {
    std::vector<double> want(B * S * D);
    for (LL i = 0; i < B * S * D; ++i) {
      const LL d = i % D, s = i / D % S;
      const double ang = double(s + past) * std::exp(double(d / 2 * 2) * (-9.21034037 / double(D)));
      want[i] = val(x[i]) + (d % 2 == 0 ? std::sin(ang) : std::cos(ang));
    }
    check(r, "sinusoidal_pos_add_3d.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-3; });
  }
  end_case(r, "sinusoidal_pos_add_3d " + dims({B, S, D, past}), before);
}

// ================================================================ uniform(): dropout and noise ==

// dropout_add_residual_f16_3d: y = f16(r + (u(seed, b, s, c) < p ? 0 : h / (1 - p))).
void dropout_add_residual_f16_3d(const Run& r, LL B, LL S, LL C, LL seed, float p, unsigned s) {
  const auto h = rnd<f16>(B * S * C, s, -2.f, 2.f), res = rnd<f16>(B * S * C, s + 1, -2.f, 2.f);
  DevLocal<f16> hd({B, S, C}, h), rd({B, S, C}, res), y({B, S, C}, {});
  const int before = begin_case(r);
  if (run(r, "dropout_add_residual_f16_3d", 1, hd.view(), rd.view(), y.view(), seed, p)) {
    LL dropped = 0;
    std::vector<double> want(B * S * C);
    for (LL i = 0; i < B * S * C; ++i) {
      const bool drop = uniform_at(seed, {i / (S * C), i / C % S, i % C}) < p;
      dropped += drop;
      want[i] = val(res[i]) + (drop ? 0.0 : val(h[i]) * double(1.f / (1.f - p)));
    }
    check(r, "dropout_add_residual_f16_3d.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kHf * std::fabs(want[i]) + 1e-6; });
    const double share = double(dropped) / double(B * S * C);
    if (!(std::fabs(share - p) < 0.03)) pkt::fail("dropout_add_residual_f16_3d: dropped " + std::to_string(share));
  }
  end_case(r, "dropout_add_residual_f16_3d " + dims({B, S, C}) + " seed " + std::to_string(seed), before);
}

// dropout_bwd_regenerate_bf16: dx = bf16(u(seed, m, n) < p ? 0 : dy / (1 - p)); kept = 1 where kept.
void dropout_bwd_regenerate_bf16(const Run& r, LL M, LL N, LL seed, float p, unsigned s) {
  const auto dy = rnd<bf16>(M * N, s, -3.f, 3.f);
  DevLocal<bf16> dyd({M, N}, dy), dx({M, N}, {});
  DevLocal<int> kept({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "dropout_bwd_regenerate_bf16", 1, dyd.view(), dx.view(), kept.view(), seed, p)) {
    auto drop = [&](LL i) { return uniform_at(seed, {i / N, i % N}) < p; };
    check(r, "dropout_bwd_regenerate_bf16.dx", dx.download(),
          [&](LL i) { return drop(i) ? 0.0 : double(float(val(dy[i])) / (1.f - p)); },
          [&](LL i) { return drop(i) ? 0.0 : kBf * std::fabs(val(dy[i]) / (1.0 - p)); });
    check(r, "dropout_bwd_regenerate_bf16.kept", kept.download(), [&](LL i) { return drop(i) ? 0.0 : 1.0; }, exact());
  }
  end_case(r, "dropout_bwd_regenerate_bf16 " + dims({M, N}) + " seed " + std::to_string(seed), before);
}

// sp_dropout_global_rows (multi-rank): rank r's rows are rows r R .. of the sequence; the mask is drawn at
// the global row, so it equals a single GPU's.
void sp_dropout_global_rows(const Run& r, LL R, LL N, LL seed, float p, unsigned s) {
  const int me = r.me;
  const auto x = rnd<bf16>(R * N, s + me, -2.f, 2.f);
  DevLocal<bf16> xd({R, N}, x), y({R, N}, {});
  const int before = begin_case(r);
  if (run(r, "sp_dropout_global_rows", 1, xd.view(), y.view(), seed, p)) {
    auto keep = [&](LL i) { return uniform_at(seed, {me * R + i / N, i % N}) >= p; };
    check(r, "sp_dropout_global_rows.y", y.download(),
          [&](LL i) { return keep(i) ? val(x[i]) * double(1.f / (1.f - p)) : 0.0; },
          [&](LL i) { return keep(i) ? kBf * std::fabs(val(x[i]) / (1.0 - p)) + 1e-6 : 0.0; });
  }
  end_case(r, "sp_dropout_global_rows " + dims({R, N}), before);
}

// drop_path_per_sample_3d: y = x + (u(seed, b, 0, 0) < p ? 0 : f / (1 - p)), one number per sample.
void drop_path_per_sample_3d(const Run& r, LL B, LL S, LL C, LL seed, float p, unsigned s) {
  const auto x = rnd<float>(B * S * C, s), f = rnd<float>(B * S * C, s + 1);
  DevLocal<float> xd({B, S, C}, x), fd({B, S, C}, f), y({B, S, C}, {});
  const int before = begin_case(r);
  if (run(r, "drop_path_per_sample_3d", 1, xd.view(), fd.view(), y.view(), seed, p)) {
    LL kept = 0;
    for (LL b = 0; b < B; ++b) kept += uniform_at(seed, {b, 0, 0}) >= p;
    if (kept == 0 || kept == B) pkt::fail("drop_path_per_sample_3d: choose a seed that keeps some samples and drops others");
    auto want = [&](LL i) {
      const LL b = i / (S * C);
      return double(x[i]) + (uniform_at(seed, {b, 0, 0}) < p ? 0.0 : double(f[i]) * double(1.f / (1.f - p)));
    };
    check(r, "drop_path_per_sample_3d.y", y.download(), want, [&](LL i) { return 1e-6 * (std::fabs(x[i]) + 2 * std::fabs(f[i])) + 1e-7; });
  }
  end_case(r, "drop_path_per_sample_3d " + dims({B, S, C}) + " seed " + std::to_string(seed), before);
}

// gumbel_max_sample: token = argmax_j logits_j / T - log(-log(u(seed, m, j))); the winner must be the host's
// (or within 1e-5 of its score), and score its value.
void gumbel_max_sample(const Run& r, LL M, LL V, LL seed, unsigned s) {
  const float inv_temp = 1.f / 0.7f;
  const auto lg = rnd<float>(M * V, s, -3.f, 3.f);
  DevLocal<float> ld({M, V}, lg), score({M, 1}, {});
  DevLocal<long long> tok({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "gumbel_max_sample", 1, ld.view(), tok.view(), score.view(), seed, inv_temp)) {
    const auto t = tok.download();
    const auto sc = score.download();
    for (LL m = 0; m < M; ++m) {
      auto z = [&](LL j) {
        const double u = uniform_at(seed, {m, j});
        return double(lg[m * V + j]) * inv_temp - std::log(-std::log(u));
      };
      LL best = 0;
      for (LL j = 1; j < V; ++j)
        if (z(j) > z(best)) best = j;
      const LL g = t[m];
      if (g < 0 || g >= V || !(z(g) >= z(best) - 1e-5 * (1 + std::fabs(z(best)))) ||
          !(std::fabs(sc[m] - z(g)) <= 1e-5 * (1 + std::fabs(z(g))))) {
        pkt::fail("gumbel_max_sample row " + std::to_string(m) + ": token " + std::to_string(g) + " score " +
                  std::to_string(sc[m]) + ", want token " + std::to_string(best) + " score " + std::to_string(z(best)));
        break;
      }
    }
  }
  end_case(r, "gumbel_max_sample " + dims({M, V}) + " seed " + std::to_string(seed), before);
}

// exponential_race_sample: token = argmax_j p_j / (-log(1 - u(seed, m, j))), p the softmax of the row.
void exponential_race_sample(const Run& r, LL M, LL V, LL seed, unsigned s) {
  const auto lg = rnd<float>(M * V, s, -2.f, 2.f);
  DevLocal<float> ld({M, V}, lg);
  DevLocal<int> tok({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "exponential_race_sample", 1, ld.view(), tok.view(), seed)) {
    const auto t = tok.download();
    const auto p = softmax_rows(lg, M, V);
    for (LL m = 0; m < M; ++m) {
      auto score = [&](LL j) {
        const double q = -std::log(1.0 - double(uniform_at(seed, {m, j})));
        return q == 0 ? std::numeric_limits<double>::infinity() : p[m * V + j] / q;
      };
      LL best = 0;
      for (LL j = 1; j < V; ++j)
        if (score(j) > score(best)) best = j;
      const LL g = t[m];
      if (g < 0 || g >= V || !(score(g) >= score(best) * (1 - 1e-5))) {
        pkt::fail("exponential_race_sample row " + std::to_string(m) + ": token " + std::to_string(g) + ", want " +
                  std::to_string(best));
        break;
      }
    }
  }
  end_case(r, "exponential_race_sample " + dims({M, V}) + " seed " + std::to_string(seed), before);
}

// stochastic_round_int8: q = clamp(floor(x / scale + u(seed, m, n)), -128, 127).
void stochastic_round_int8(const Run& r, LL M, LL N, LL seed, unsigned s) {
  const float inv_scale = 40.f;
  const auto x = rnd<float>(M * N, s, -3.5f, 3.5f);
  DevLocal<float> xd({M, N}, x);
  DevLocal<int> q({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "stochastic_round_int8", 1, xd.view(), q.view(), inv_scale, seed)) {
    const auto got = q.download();
    LL bad = 0, up = 0;
    for (LL i = 0; i < M * N; ++i) {
      const double v = double(x[i]) * inv_scale + uniform_at(seed, {i / N, i % N});
      auto level = [](double t) { return std::min(std::max(std::floor(t), -128.0), 127.0); };
      const double w = level(v);
      const bool near = std::fabs(v - std::round(v)) < 1e-4;
      const double g = got[i];
      up += g > std::floor(double(x[i]) * inv_scale);
      if (!(g == w || (near && (g == level(v - 1e-3) || g == level(v + 1e-3))))) {
        if (bad++ < 3)
          pkt::fail("stochastic_round_int8 element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
                    std::to_string(w));
      }
    }
    if (bad > 3) pkt::fail("stochastic_round_int8: " + std::to_string(bad) + " elements wrong");
    if (up == 0 || up == M * N) pkt::fail("stochastic_round_int8: no rounding went one way");
  }
  end_case(r, "stochastic_round_int8 " + dims({M, N}) + " seed " + std::to_string(seed), before);
}

// uniform_4d_offset_origins: out[a, b, c, d] = u(seed, a, b + off1, c, d + off3); flat[i] = u(seed, i).
void uniform_4d_offset_origins(const Run& r, LL A, LL B, LL C, LL D, LL N, LL seed, LL off1, LL off3) {
  DevLocal<float> out({A, B, C, D}, {}), flat({N}, {});
  const int before = begin_case(r);
  if (run(r, "uniform_4d_offset_origins", 1, out.view(), flat.view(), seed, off1, off3)) {
    check(r, "uniform_4d_offset_origins.out", out.download(), [&](LL i) {
      return uniform_at(seed, {i / (B * C * D), i / (C * D) % B + off1, i / D % C, i % D + off3});
    }, exact());
    const auto f = flat.download();
    check(r, "uniform_4d_offset_origins.flat", f, [&](LL i) { return uniform_at(seed, {i}); }, exact());
    double sum = 0;
    for (float v : f) sum += v;
    if (!(std::fabs(sum / double(N) - 0.5) < 0.05)) pkt::fail("uniform_4d_offset_origins: mean " + std::to_string(sum / N));
  }
  end_case(r, "uniform_4d_offset_origins " + dims({A, B, C, D, N}) + " seed " + std::to_string(seed), before);
}

// ================================================================ row_topk / row_topk_index ==

// Every element of `got` equal to want(i) (infinities included; NaN never passes).
template <class T>
void check_same(const Run& r, const std::string& what, const std::vector<T>& got, const std::function<double(LL)>& want) {
  LL bad = 0;
  for (LL i = 0; i < LL(got.size()); ++i) {
    const double g = val(got[i]), w = want(i);
    if (!(g == w)) {
      if (bad < 3)
        pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + " element " + std::to_string(i) +
                  ": got " + std::to_string(g) + ", want " + std::to_string(w));
      ++bad;
    }
  }
  if (bad > 3) pkt::fail(what + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) + " elements wrong");
}
const double kInf = std::numeric_limits<double>::infinity();

// moe_router_softmax_top4: the top 4 experts of each token by probability (the order of the logits) and
// their probabilities renormalised over the four.
void moe_router_softmax_top4(const Run& r, LL T, LL E, unsigned seed) {
  const auto lg = rnd<float>(T * E, seed, -3.f, 3.f);
  DevLocal<float> ld({T, E}, lg), w({T, 4}, {});
  DevLocal<int> ids({T, 4}, {});
  const int before = begin_case(r);
  if (run(r, "moe_router_softmax_top4", 1, ld.view(), ids.view(), w.view())) {
    const auto gi = ids.download();
    const auto gw = w.download();
    LL undecided = 0;
    for (LL t = 0; t < T; ++t) {
      auto x = [&](LL j) { return double(lg[t * E + j]); };
      const auto order = topk_order(E, x);
      if (!decided(order, 4, x, 1e-5, 1e-5)) {
        ++undecided;
        continue;
      }
      double s = 0;
      for (int k = 0; k < 4; ++k) s += std::exp(x(order[k]) - x(order[0]));
      for (int k = 0; k < 4; ++k) {
        const double want = std::exp(x(order[k]) - x(order[0])) / s;
        if (gi[t * 4 + k] != order[k] || !(std::fabs(gw[t * 4 + k] - want) <= 1e-5)) {
          pkt::fail("moe_router_softmax_top4 token " + std::to_string(t) + " choice " + std::to_string(k) + ": got " +
                    std::to_string(gi[t * 4 + k]) + " / " + std::to_string(gw[t * 4 + k]) + ", want " +
                    std::to_string(order[k]) + " / " + std::to_string(want));
          t = T;
          break;
        }
      }
    }
    if (undecided > T / 10) pkt::fail("moe_router_softmax_top4: too many near ties");
  }
  end_case(r, "moe_router_softmax_top4 " + dims({T, E}), before);
}

// moe_router_sigmoid_bias_dense: experts chosen by sigmoid(x) + bias (top 6), gates = route_scale s / sum of
// the chosen s (bf16, 0 for the others), ids the top 6 in order.
void moe_router_sigmoid_bias_dense(const Run& r, LL T, LL E, unsigned seed) {
  const float route_scale = 2.5f;
  const auto lg = rnd<float>(T * E, seed, -4.f, 4.f), bias = rnd<float>(E, seed + 1, -0.3f, 0.3f);
  DevLocal<float> ld({T, E}, lg), bd({E}, bias);
  DevLocal<bf16> gates({T, E}, {});
  DevLocal<int> ids({T, 6}, {});
  const int before = begin_case(r);
  if (run(r, "moe_router_sigmoid_bias_dense", 1, ld.view(), bd.view(), gates.view(), ids.view(), route_scale)) {
    const auto gg = gates.download();
    const auto gi = ids.download();
    LL undecided = 0, bad = 0;
    for (LL t = 0; t < T && bad == 0; ++t) {
      auto sc = [&](LL j) { return 1.0 / (1.0 + std::exp(-double(lg[t * E + j]))); };
      auto biased = [&](LL j) { return sc(j) + double(bias[j]); };
      const auto order = topk_order(E, biased);
      if (!decided(order, 6, biased, 1e-5, 1e-5)) {
        ++undecided;
        continue;
      }
      double s = 0;
      std::vector<bool> chosen(E, false);
      for (int k = 0; k < 6; ++k) chosen[order[k]] = true, s += sc(order[k]);
      for (int k = 0; k < 6; ++k) bad += gi[t * 6 + k] != order[k];
      for (LL j = 0; j < E; ++j) {
        const double want = chosen[j] ? sc(j) / s * route_scale : 0.0, g = val(gg[t * E + j]);
        bad += !(std::fabs(g - want) <= kBf * std::fabs(want) + 1e-6);
      }
      if (bad) pkt::fail("moe_router_sigmoid_bias_dense: token " + std::to_string(t) + " wrong");
    }
    if (undecided > T / 10) pkt::fail("moe_router_sigmoid_bias_dense: too many near ties");
  }
  end_case(r, "moe_router_sigmoid_bias_dense " + dims({T, E}), before);
}

// topk_topp_filter: a sorted position is kept while it is among the first top_k and the mass before it is
// below top_p; logits of the kept tokens pass, the others become -1e30. Rows whose boundary mass lies within
// 1e-4 of top_p, or whose order is not decided, are skipped (few).
void topk_topp_filter(const Run& r, LL M, LL V, LL top_k, float top_p, unsigned seed) {
  const auto lg = rnd<float>(M * V, seed, -3.f, 3.f);
  DevLocal<float> ld({M, V}, lg), out({M, V}, {});
  const int before = begin_case(r);
  if (run(r, "topk_topp_filter", 1, ld.view(), out.view(), top_k, top_p)) {
    const auto got = out.download();
    const auto p = softmax_rows(lg, M, V);
    LL skipped = 0, kept_total = 0;
    for (LL m = 0; m < M; ++m) {
      auto pv = [&](LL j) { return p[m * V + j]; };
      const auto order = topk_order(V, pv);
      LL L = 0;
      double before_mass = 0;
      bool ambiguous = false;
      for (LL j = 0; j < V; ++j) {
        ambiguous |= std::fabs(before_mass - top_p) < 1e-4 && j <= top_k;
        if (j < top_k && before_mass < top_p) L = j + 1;
        before_mass += pv(order[j]);
      }
      // Only the boundary between the last kept and the first dropped decides the kept set.
      const bool boundary = L == 0 || L == V || std::fabs(pv(order[L - 1]) - pv(order[L])) > 1e-5 * pv(order[L - 1]);
      if (ambiguous || !boundary) {
        ++skipped;
        continue;
      }
      kept_total += L;
      std::vector<bool> keep(V, false);
      for (LL j = 0; j < L; ++j) keep[order[j]] = true;
      for (LL j = 0; j < V; ++j) {
        const double want = keep[j] ? double(lg[m * V + j]) : double(-1e30f);
        if (!(double(got[m * V + j]) == want)) {
          pkt::fail("topk_topp_filter row " + std::to_string(m) + " column " + std::to_string(j) + ": got " +
                    std::to_string(got[m * V + j]) + ", want " + std::to_string(want) + " (" + std::to_string(L) + " kept)");
          m = M;
          break;
        }
      }
    }
    if (skipped > M / 5) pkt::fail("topk_topp_filter: " + std::to_string(skipped) + " rows skipped");
    if (kept_total == 0) pkt::fail("topk_topp_filter: nothing kept");
  }
  end_case(r, "topk_topp_filter " + dims({M, V, top_k}) + " top_p " + std::to_string(top_p), before);
}

// kth_value_count_bf16: the 5th largest element of each row (duplicates counted) and how many reach it.
void kth_value_count_bf16(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = tied<bf16>(M * N, seed);
  DevLocal<bf16> xd({M, N}, x), kth({M, 1}, {});
  DevLocal<int> count({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "kth_value_count_bf16", 1, xd.view(), kth.view(), count.view())) {
    std::vector<double> k5(M), c(M);
    for (LL m = 0; m < M; ++m) {
      std::vector<double> row(N);
      for (LL j = 0; j < N; ++j) row[j] = val(x[m * N + j]);
      std::sort(row.begin(), row.end(), std::greater<double>());
      k5[m] = row[4];
      c[m] = double(std::count_if(row.begin(), row.end(), [&](double v) { return v >= k5[m]; }));
    }
    check_same(r, "kth_value_count_bf16.kth", kth.download(), [&](LL m) { return k5[m]; });
    check_same(r, "kth_value_count_bf16.count", count.download(), [&](LL m) { return c[m]; });
  }
  end_case(r, "kth_value_count_bf16 " + dims({M, N}), before);
}

// sort_rows_f16_inplace: each row of N <= 32 sorted descending in place (NaN never chosen, so a row with n
// NaN ends in n -inf), ties by column, the order into [M, 32] (-1 past the row's candidates). Planted: NaN,
// +-inf, +-0, ties.
void sort_rows_f16_inplace(const Run& r, LL M, LL N, unsigned seed) {
  auto x = tied<f16>(M * N, seed);
  const auto pick = ints<int>(M * N, 0, 19, seed + 1);
  for (LL i = 0; i < M * N; ++i) {
    const float special[] = {NAN, INFINITY, -INFINITY, 0.f, -0.f};
    if (pick[i] < 5) x[i] = pkt::from_host<f16>(special[pick[i]]);
  }
  DevLocal<f16> xd({M, N}, x);
  DevLocal<int> order({M, 32}, {});
  const int before = begin_case(r);
  if (run(r, "sort_rows_f16_inplace", 1, xd.view(), order.view())) {
    std::vector<double> wv(M * N), wo(M * 32);
    for (LL m = 0; m < M; ++m) {
      const auto o = topk_order(N, [&](LL j) { return val(x[m * N + j]); });
      for (LL j = 0; j < 32; ++j) {
        wo[m * 32 + j] = j < LL(o.size()) ? double(o[j]) : -1.0;
        if (j < N) wv[m * N + j] = j < LL(o.size()) ? val(x[m * N + o[j]]) : -kInf;
      }
    }
    check_same(r, "sort_rows_f16_inplace.x", xd.download(), [&](LL i) { return wv[i]; });
    check_same(r, "sort_rows_f16_inplace.order", order.download(), [&](LL i) { return wo[i]; });
  }
  end_case(r, "sort_rows_f16_inplace " + dims({M, N}), before);
}

// topk_k_exceeds_row: the top 8 of rows of N (< 8): N sorted values and columns, then -inf and -1.
void topk_k_exceeds_row(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = tied<float>(M * N, seed);
  DevLocal<float> xd({M, N}, x), v({M, 8}, {});
  DevLocal<int> i({M, 8}, {});
  const int before = begin_case(r);
  if (run(r, "topk_k_exceeds_row", 1, xd.view(), v.view(), i.view())) {
    std::vector<double> wv(M * 8), wi(M * 8);
    for (LL m = 0; m < M; ++m) {
      const auto o = topk_order(N, [&](LL j) { return double(x[m * N + j]); });
      for (LL j = 0; j < 8; ++j) {
        wi[m * 8 + j] = j < N ? double(o[j]) : -1.0;
        wv[m * 8 + j] = j < N ? double(x[m * N + o[j]]) : -kInf;
      }
    }
    check_same(r, "topk_k_exceeds_row.v", v.download(), [&](LL k) { return wv[k]; });
    check_same(r, "topk_k_exceeds_row.i", i.download(), [&](LL k) { return wi[k]; });
  }
  end_case(r, "topk_k_exceeds_row " + dims({M, N}), before);
}

// argmax_long_rows_two_phase: the first column of each row's maximum (NaN ignored), over rows longer than
// one tile, and each 2048-column chunk's maximum and its column. Row 0: a tie between chunks 0 and 14;
// row 1: the maximum at the last column; row 2: NaN scattered; row 3: all equal (token 0).
void argmax_long_rows_two_phase(const Run& r, LL M, LL V, unsigned seed) {
  const LL C = (V + 2047) / 2048;
  auto lg = rnd<float>(M * V, seed, -5.f, 5.f);
  lg[100] = lg[30000 % V] = 9.f;
  lg[V + V - 1] = 9.5f;
  const auto nanpos = ints<LL>(200, 0, V - 1, seed + 1);
  for (LL p : nanpos) lg[2 * V + p] = NAN;
  for (LL j = 0; j < V; ++j) lg[3 * V + j] = 1.25f;
  DevLocal<float> ld({M, V}, lg), cv({M, C}, {});
  DevLocal<int> ci({M, C}, {});
  DevLocal<long long> tok({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "argmax_long_rows_two_phase", 1, ld.view(), cv.view(), ci.view(), tok.view())) {
    std::vector<double> wv(M * C), wc(M * C), wt(M);
    for (LL m = 0; m < M; ++m) {
      LL best = -1;
      for (LL c = 0; c < C; ++c) {
        LL b = -1;
        for (LL j = c * 2048; j < std::min(V, (c + 1) * 2048); ++j)
          if (!std::isnan(lg[m * V + j]) && (b < 0 || lg[m * V + j] > lg[m * V + b])) b = j;
        wv[m * C + c] = lg[m * V + b], wc[m * C + c] = double(b);
        if (best < 0 || lg[m * V + b] > lg[m * V + best]) best = b;
      }
      wt[m] = double(best);
    }
    check_same(r, "argmax_long_rows_two_phase.cv", cv.download(), [&](LL i) { return wv[i]; });
    check_same(r, "argmax_long_rows_two_phase.ci", ci.download(), [&](LL i) { return wc[i]; });
    check_same(r, "argmax_long_rows_two_phase.token", tok.download(), [&](LL m) { return wt[m]; });
  }
  end_case(r, "argmax_long_rows_two_phase " + dims({M, V}), before);
}

// chunk_top3_candidates: each 96-column chunk's top 3 (ties by column) and their global columns, chunk c
// at columns 3c .. 3c + 2 (the last chunk partial).
void chunk_top3_candidates(const Run& r, LL M, LL N, unsigned seed) {
  const LL C = (N + 95) / 96;
  const auto x = tied<bf16>(M * N, seed);
  DevLocal<bf16> xd({M, N}, x), cv({M, 3 * C}, {});
  DevLocal<int> ci({M, 3 * C}, {});
  const int before = begin_case(r);
  if (run(r, "chunk_top3_candidates", 1, xd.view(), cv.view(), ci.view())) {
    std::vector<double> wv(M * 3 * C), wc(M * 3 * C);
    for (LL m = 0; m < M; ++m)
      for (LL c = 0; c < C; ++c) {
        const LL w = std::min<LL>(96, N - c * 96);
        const auto o = topk_order(w, [&](LL j) { return val(x[m * N + c * 96 + j]); });
        for (LL k = 0; k < 3; ++k) {
          wv[m * 3 * C + 3 * c + k] = k < w ? val(x[m * N + c * 96 + o[k]]) : -kInf;
          wc[m * 3 * C + 3 * c + k] = k < w ? double(c * 96 + o[k]) : double(c * 96 - 1);
        }
      }
    check_same(r, "chunk_top3_candidates.cv", cv.download(), [&](LL i) { return wv[i]; });
    check_same(r, "chunk_top3_candidates.ci", ci.download(), [&](LL i) { return wc[i]; });
  }
  end_case(r, "chunk_top3_candidates " + dims({M, N}), before);
}

// tp_vocab_top4 (multi-rank): rank p's top 4 of its shard (global columns p Vs + j) in every rank's
// candidates at columns 4p ..; then the top 4 of all W x 4 (ties to the lower position, so the lower
// global column), their positions and global columns. Tied values (multiples of 1/8) across ranks.
void tp_vocab_top4(const Run& r, LL M, LL Vs, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> lg(W);
  for (int p = 0; p < W; ++p) lg[p] = tied<float>(M * Vs, seed + p);
  DevLocal<float> ld({M, Vs}, lg[me]), vals({M, 4}, {});
  SymArg<float> cv(r.ctx, {M, 4 * W}, nullptr);
  SymArg<int> ci(r.ctx, {M, 4 * W}, nullptr);
  DevLocal<int> pos({M, 4}, {});
  DevLocal<long long> ids({M, 4}, {});
  const int before = begin_case(r);
  if (run(r, "tp_vocab_top4", 2, ld.view(), cv.view, ci.view, vals.view(), pos.view(), ids.view())) {
    std::vector<double> candv(M * 4 * W), candi(M * 4 * W), wv(M * 4), wp(M * 4), wi(M * 4);
    for (LL m = 0; m < M; ++m) {
      for (int p = 0; p < W; ++p) {
        const auto o = topk_order(Vs, [&](LL j) { return double(lg[p][m * Vs + j]); });
        for (int k = 0; k < 4; ++k)
          candv[m * 4 * W + 4 * p + k] = lg[p][m * Vs + o[k]], candi[m * 4 * W + 4 * p + k] = double(p * Vs + o[k]);
      }
      const auto o = topk_order(4 * W, [&](LL j) { return candv[m * 4 * W + j]; });
      for (int k = 0; k < 4; ++k)
        wv[m * 4 + k] = candv[m * 4 * W + o[k]], wp[m * 4 + k] = double(o[k]), wi[m * 4 + k] = candi[m * 4 * W + o[k]];
    }
    check_same(r, "tp_vocab_top4.cv", cv.download(), [&](LL i) { return candv[i]; });
    check_same(r, "tp_vocab_top4.ci", ci.download(), [&](LL i) { return candi[i]; });
    check_same(r, "tp_vocab_top4.vals", vals.download(), [&](LL i) { return wv[i]; });
    check_same(r, "tp_vocab_top4.pos", pos.download(), [&](LL i) { return wp[i]; });
    check_same(r, "tp_vocab_top4.ids", ids.download(), [&](LL i) { return wi[i]; });
  }
  end_case(r, "tp_vocab_top4 " + dims({M, Vs}), before);
}

// expert_choice_top16: each expert's 16 highest-scoring tokens (ties to the lower token) and their scores.
void expert_choice_top16(const Run& r, LL T, LL E, unsigned seed) {
  const auto sc = tied<float>(T * E, seed);
  DevLocal<float> sd({T, E}, sc), gate({E, 16}, {});
  DevLocal<int> tok({E, 16}, {});
  const int before = begin_case(r);
  if (run(r, "expert_choice_top16", 1, sd.view(), tok.view(), gate.view())) {
    std::vector<double> wt(E * 16), wg(E * 16);
    for (LL e = 0; e < E; ++e) {
      const auto o = topk_order(T, [&](LL t) { return double(sc[t * E + e]); });
      for (LL k = 0; k < 16; ++k) wt[e * 16 + k] = double(o[k]), wg[e * 16 + k] = sc[o[k] * E + e];
    }
    check_same(r, "expert_choice_top16.tok", tok.download(), [&](LL i) { return wt[i]; });
    check_same(r, "expert_choice_top16.gate", gate.download(), [&](LL i) { return wg[i]; });
  }
  end_case(r, "expert_choice_top16 " + dims({T, E}), before);
}

// ce_loss_sum_ignore_index: loss_sum += sum over valid tokens of logsumexp - logit[label]; count += their
// number (labels -100, negative or past V ignored). Both start at nonzero values (one launch).
void ce_loss_sum_ignore_index(const Run& r, LL T, LL V, unsigned seed) {
  const auto lg = rnd<float>(T * V, seed, -4.f, 4.f);
  auto labels = ints<long long>(T, 0, V - 1, seed + 1);
  const auto kind = ints<int>(T, 0, 9, seed + 2);
  for (LL t = 0; t < T; ++t) labels[t] = kind[t] == 0 ? -100 : kind[t] == 1 ? V + 5 : kind[t] == 2 ? -3 : labels[t];
  DevLocal<float> ld({T, V}, lg), ls({1, 1}, std::vector<float>{0.5f}), cnt({1, 1}, std::vector<float>{2.f});
  DevLocal<long long> lb({T}, labels);
  const int before = begin_case(r);
  if (run(r, "ce_loss_sum_ignore_index", 1, ld.view(), lb.view(), ls.view(), cnt.view())) {
    double sum = 0.5, mag = 0, n = 2;
    for (LL t = 0; t < T; ++t) {
      if (labels[t] < 0 || labels[t] >= V) continue;
      double mx = -1e300, s = 0;
      for (LL j = 0; j < V; ++j) mx = std::max(mx, double(lg[t * V + j]));
      for (LL j = 0; j < V; ++j) s += std::exp(lg[t * V + j] - mx);
      const double l = mx + std::log(s) - lg[t * V + labels[t]];
      sum += l, mag += std::fabs(l), n += 1;
    }
    check(r, "ce_loss_sum_ignore_index.sum", ls.download(), [&](LL) { return sum; }, [&](LL) { return 2e-5 * mag + 1e-4; });
    check(r, "ce_loss_sum_ignore_index.count", cnt.download(), [&](LL) { return n; }, exact());
  }
  end_case(r, "ce_loss_sum_ignore_index " + dims({T, V}), before);
}

// ================================================================ cumsum along the last dimension ==

// cumsum_4d_bf16_wide_tile: running sums along D (< 64, one tile) of a 4-D bf16 tensor, rounded to bf16.
void cumsum_4d_bf16_wide_tile(const Run& r, LL A, LL B, LL C, LL D, unsigned seed) {
  const auto x = rnd<bf16>(A * B * C * D, seed);
  DevLocal<bf16> xd({A, B, C, D}, x), y({A, B, C, D}, {});
  const int before = begin_case(r);
  if (run(r, "cumsum_4d_bf16_wide_tile", 1, xd.view(), y.view())) {
    std::vector<double> want(A * B * C * D), mag(A * B * C * D);
    for (LL i = 0; i < A * B * C * D; ++i) {
      const bool first = i % D == 0;
      want[i] = (first ? 0.0 : want[i - 1]) + val(x[i]);
      mag[i] = (first ? 0.0 : mag[i - 1]) + std::fabs(val(x[i]));
    }
    check(r, "cumsum_4d_bf16_wide_tile.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-6 * mag[i]; });
  }
  end_case(r, "cumsum_4d_bf16_wide_tile " + dims({A, B, C, D}), before);
}

// exclusive_offsets_i64_3d: offs = running sums of the counts before each element; total [B, G, 1] the sum.
void exclusive_offsets_i64_3d(const Run& r, LL B, LL G, LL E, unsigned seed) {
  const auto c = ints<long long>(B * G * E, 0, 1000, seed);
  DevLocal<long long> cd({B, G, E}, c), offs({B, G, E}, {}), total({B, G, 1}, {});
  const int before = begin_case(r);
  if (run(r, "exclusive_offsets_i64_3d", 1, cd.view(), offs.view(), total.view())) {
    std::vector<double> want(B * G * E), tot(B * G);
    for (LL i = 0; i < B * G * E; ++i) {
      want[i] = i % E == 0 ? 0.0 : want[i - 1] + double(c[i - 1]);
      tot[i / E] = want[i] + double(c[i]);
    }
    check(r, "exclusive_offsets_i64_3d.offs", offs.download(), [&](LL i) { return want[i]; }, exact());
    check(r, "exclusive_offsets_i64_3d.total", total.download(), [&](LL i) { return tot[i]; }, exact());
  }
  end_case(r, "exclusive_offsets_i64_3d " + dims({B, G, E}), before);
}

// real_token_positions_i64: pos = (real tokens so far) - 1 where the token is real (not pad, below vocab),
// -1 elsewhere.
void real_token_positions_i64(const Run& r, LL B, LL L, unsigned seed) {
  const LL pad = 7, vocab = 1000;
  const auto tok = ints<long long>(B * L, 0, 1100, seed), kind = ints<long long>(B * L, 0, 4, seed + 1);
  std::vector<long long> t(B * L);
  for (LL i = 0; i < B * L; ++i) t[i] = kind[i] == 0 ? pad : tok[i];
  DevLocal<long long> td({B, L}, t);
  DevLocal<int> pos({B, L}, {});
  const int before = begin_case(r);
  if (run(r, "real_token_positions_i64", 1, td.view(), pos.view(), pad, vocab)) {
    std::vector<double> want(B * L);
    for (LL b = 0; b < B; ++b)
      for (LL j = 0, n = 0; j < L; ++j) {
        const bool real = t[b * L + j] != pad && t[b * L + j] < vocab;
        n += real;
        want[b * L + j] = real ? double(n - 1) : -1.0;
      }
    check(r, "real_token_positions_i64.pos", pos.download(), [&](LL i) { return want[i]; }, exact());
  }
  end_case(r, "real_token_positions_i64 " + dims({B, L}), before);
}

// cumsum_i64_wide_rows: exact running sums of i64 rows of values up to 2^40 in magnitude.
void cumsum_i64_wide_rows(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = ints<long long>(M * N, -(LL(1) << 40), LL(1) << 40, seed);
  DevLocal<long long> xd({M, N}, x), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "cumsum_i64_wide_rows", 1, xd.view(), y.view())) {
    std::vector<long long> want(M * N);
    for (LL i = 0; i < M * N; ++i) want[i] = (i % N == 0 ? 0 : want[i - 1]) + x[i];
    const auto got = y.download();
    LL bad = 0;
    for (LL i = 0; i < M * N; ++i)
      if (got[i] != want[i] && bad++ < 3)
        pkt::fail("cumsum_i64_wide_rows element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
                  std::to_string(want[i]));
  }
  end_case(r, "cumsum_i64_wide_rows " + dims({M, N}), before);
}

// ================================================================ reshape ==

// reshape_cumsum_row_scale: y[m, j] = x[m, j] * sum_{i <= j} w[i].
void reshape_cumsum_row_scale(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed), w = rnd<float>(N, seed + 1);
  DevLocal<float> xd({M, N}, x), wd({N}, w), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "reshape_cumsum_row_scale", 1, xd.view(), wd.view(), y.view())) {
    std::vector<double> cw(N), mag(N);
    for (LL j = 0; j < N; ++j) cw[j] = (j ? cw[j - 1] : 0.0) + w[j], mag[j] = (j ? mag[j - 1] : 0.0) + std::fabs(w[j]);
    check(r, "reshape_cumsum_row_scale.y", y.download(), [&](LL i) { return double(x[i]) * cw[i % N]; },
          [&](LL i) { return 1e-6 * std::fabs(x[i]) * mag[i % N] + 1e-7; });
  }
  end_case(r, "reshape_cumsum_row_scale " + dims({M, N}), before);
}

// reshape_3d_topk2: the top 2 of each [V] row of a [B, S, V] tensor and their columns.
void reshape_3d_topk2(const Run& r, LL B, LL S, LL V, unsigned seed) {
  const auto x = tied<float>(B * S * V, seed);
  DevLocal<float> xd({B, S, V}, x), v({B, S, 2}, {});
  DevLocal<int> i({B, S, 2}, {});
  const int before = begin_case(r);
  if (run(r, "reshape_3d_topk2", 1, xd.view(), v.view(), i.view())) {
    std::vector<double> wv(B * S * 2), wi(B * S * 2);
    for (LL row = 0; row < B * S; ++row) {
      const auto o = topk_order(V, [&](LL j) { return double(x[row * V + j]); });
      for (int k = 0; k < 2; ++k) wv[row * 2 + k] = x[row * V + o[k]], wi[row * 2 + k] = double(o[k]);
    }
    check_same(r, "reshape_3d_topk2.v", v.download(), [&](LL k) { return wv[k]; });
    check_same(r, "reshape_3d_topk2.i", i.download(), [&](LL k) { return wi[k]; });
  }
  end_case(r, "reshape_3d_topk2 " + dims({B, S, V}), before);
}

// ================================================================ local store_add ==

// conv1d_3tap_bwd_store_add: dx = dx0 + w0 dy[t] + w1 dy[t + 1] + w2 dy[t + 2] (dy past T is 0).
void conv1d_3tap_bwd_store_add(const Run& r, LL T, LL C, unsigned seed) {
  const auto dy = rnd<float>(T * C, seed), w = rnd<float>(3 * C, seed + 1), dx0 = rnd<float>(T * C, seed + 2);
  DevLocal<float> dyd({T, C}, dy), wd({3, C}, w), dx({T, C}, dx0);
  const int before = begin_case(r);
  if (run(r, "conv1d_3tap_bwd_store_add", 1, dyd.view(), wd.view(), dx.view())) {
    auto want = [&](LL i) {
      const LL t = i / C, c = i % C;
      double s = double(dx0[i]);
      for (LL k = 0; k < 3; ++k)
        if (t + k < T) s += double(w[k * C + c]) * dy[i + k * C];
      return s;
    };
    check(r, "conv1d_3tap_bwd_store_add.dx", dx.download(), want, [&](LL i) { return 1e-6 * (std::fabs(dx0[i]) + 3) + 1e-7; });
  }
  end_case(r, "conv1d_3tap_bwd_store_add " + dims({T, C}), before);
}

// conv1d_scatter_shifted_adds: y = y0 + w0 x[t] + w1 x[t - 1] + w2 x[t + 1] (outside 0..T-1 nothing).
void conv1d_scatter_shifted_adds(const Run& r, LL T, LL C, unsigned seed) {
  const auto x = rnd<float>(T * C, seed), w = rnd<float>(3 * C, seed + 1), y0 = rnd<float>(T * C, seed + 2);
  DevLocal<float> xd({T, C}, x), wd({3, C}, w), y({T, C}, y0);
  const int before = begin_case(r);
  if (run(r, "conv1d_scatter_shifted_adds", 1, xd.view(), wd.view(), y.view())) {
    auto want = [&](LL i) {
      const LL t = i / C, c = i % C;
      double s = double(y0[i]) + double(w[c]) * x[i];
      if (t >= 1) s += double(w[C + c]) * x[i - C];
      if (t + 1 < T) s += double(w[2 * C + c]) * x[i + C];
      return s;
    };
    check(r, "conv1d_scatter_shifted_adds.y", y.download(), want, [&](LL i) { return 1e-6 * (std::fabs(y0[i]) + 3) + 1e-7; });
  }
  end_case(r, "conv1d_scatter_shifted_adds " + dims({T, C}), before);
}

// colsum_wide_tile_store_add: db = db0 + column sums of dy (f32); dg = dg0 + the bf16 column sums of
// dy * xhat per 64-row tile, added in bf16.
void colsum_wide_tile_store_add(const Run& r, LL M, LL N, unsigned seed) {
  const auto dy = rnd<float>(M * N, seed), xh = rnd<float>(M * N, seed + 1), db0 = rnd<float>(N, seed + 2);
  const auto dg0 = rnd<bf16>(N, seed + 3);
  DevLocal<float> dyd({M, N}, dy), xd({M, N}, xh), db({1, N}, db0);
  DevLocal<bf16> dg({1, N}, dg0);
  const int before = begin_case(r);
  if (run(r, "colsum_wide_tile_store_add", 1, dyd.view(), xd.view(), db.view(), dg.view())) {
    const LL tiles = (M + 63) / 64;
    std::vector<double> wb(N), wg(N), mg(N);
    for (LL n = 0; n < N; ++n) {
      wb[n] = db0[n], wg[n] = val(dg0[n]), mg[n] = std::fabs(val(dg0[n]));
      for (LL t = 0; t < tiles; ++t) {
        double part = 0;
        for (LL m = t * 64; m < std::min(M, t * 64 + 64); ++m) wb[n] += dy[m * N + n], part += double(dy[m * N + n]) * xh[m * N + n];
        wg[n] += part, mg[n] += std::fabs(part);
      }
    }
    check(r, "colsum_wide_tile_store_add.db", db.download(), [&](LL n) { return wb[n]; }, [&](LL) { return 1e-4; });
    check(r, "colsum_wide_tile_store_add.dg", dg.download(), [&](LL n) { return wg[n]; },
          [&](LL n) { return kBf * double(tiles + 1) * mg[n] + 1e-3; });
  }
  end_case(r, "colsum_wide_tile_store_add " + dims({M, N}), before);
}

// expert_counts_i64_store_add: counts[b, e] = counts0 + how many of row b's ids equal e (ids outside
// 0..63 counted nowhere).
void expert_counts_i64_store_add(const Run& r, LL B, LL T, unsigned seed) {
  const auto ids = ints<int>(B * T, -1, 70, seed);
  const auto c0 = ints<long long>(B * 64, -(LL(1) << 35), LL(1) << 35, seed + 1);
  DevLocal<int> idd({B, T}, ids);
  DevLocal<long long> c({B, 64}, c0);
  const int before = begin_case(r);
  if (run(r, "expert_counts_i64_store_add", 1, idd.view(), c.view())) {
    std::vector<double> want(c0.begin(), c0.end());
    for (LL i = 0; i < B * T; ++i)
      if (ids[i] >= 0 && ids[i] < 64) want[i / T * 64 + ids[i]] += 1;
    check(r, "expert_counts_i64_store_add.counts", c.download(), [&](LL i) { return want[i]; }, exact());
  }
  end_case(r, "expert_counts_i64_store_add " + dims({B, T}), before);
}

// ================================================================ GEMM with A stored [K, M] ==

// wgrad_accumulate_f32_inplace: dw = dw0 + alpha dyᵀ x (f32, one launch on a random dw0).
void wgrad_accumulate_f32_inplace(const Run& r, const std::string& k, LL T, LL N, LL Kd, unsigned seed) {
  const float alpha = 0.75f;
  const auto dy = rnd<bf16>(T * N, seed), x = rnd<bf16>(T * Kd, seed + 1);
  const auto dw0 = rnd<float>(N * Kd, seed + 2, -4.f, 4.f);
  DevLocal<bf16> dyd({T, N}, dy), xd({T, Kd}, x);
  DevLocal<float> dw({N, Kd}, dw0);
  const int before = begin_case(r);
  if (run(r, k, 1, dyd.view(), xd.view(), dw.view(), alpha)) {
    std::vector<double> acc, mag;
    matmul(N, Kd, T, [&](LL n, LL t) { return val(dy[t * N + n]); }, [&](LL t, LL q) { return val(x[t * Kd + q]); }, acc, mag);
    check(r, k + ".dw", dw.download(), [&](LL i) { return dw0[i] + alpha * acc[i]; },
          [&](LL i) { return 1e-5 * (mag[i] + std::fabs(dw0[i])) + 1e-6; });
  }
  end_case(r, k + " " + dims({T, N, Kd}), before);
}

// wgrad_rowscale_mask_bf16: dw = bf16(k < kmax ? rs[n] dyᵀ x : 0).
void wgrad_rowscale_mask_bf16(const Run& r, const std::string& k, LL T, LL N, LL Kd, LL kmax, unsigned seed) {
  const auto dy = rnd<bf16>(T * N, seed), x = rnd<bf16>(T * Kd, seed + 1);
  const auto rs = rnd<float>(N, seed + 2, 0.25f, 2.f);
  DevLocal<bf16> dyd({T, N}, dy), xd({T, Kd}, x), dw({N, Kd}, {});
  DevLocal<float> rsd({N}, rs);
  const int before = begin_case(r);
  if (run(r, k, 1, dyd.view(), xd.view(), rsd.view(), dw.view(), kmax)) {
    std::vector<double> acc, mag;
    matmul(N, Kd, T, [&](LL n, LL t) { return val(dy[t * N + n]); }, [&](LL t, LL q) { return val(x[t * Kd + q]); }, acc, mag);
    auto want = [&](LL i) { return i % Kd < kmax ? acc[i] * rs[i / Kd] : 0.0; };
    check(r, k + ".dw", dw.download(), want,
          [&](LL i) { return i % Kd < kmax ? kBf * std::fabs(want(i)) + 1e-5 * mag[i] * rs[i / Kd] + 1e-4 : 0.0; });
  }
  end_case(r, k + " " + dims({T, N, Kd, kmax}), before);
}

// wgrad_t_f16_dropout: dw = f16(u(seed, n, k) < p ? 0 : dyᵀ x / (1 - p)), x stored [K, T].
void wgrad_t_f16_dropout(const Run& r, const std::string& k, LL T, LL N, LL Kd, LL seed, float p, unsigned s) {
  const auto dy = rnd<f16>(T * N, s), xt = rnd<f16>(Kd * T, s + 1);
  DevLocal<f16> dyd({T, N}, dy), xd({Kd, T}, xt), dw({N, Kd}, {});
  const int before = begin_case(r);
  if (run(r, k, 1, dyd.view(), xd.view(), dw.view(), seed, p)) {
    std::vector<double> acc, mag;
    matmul(N, Kd, T, [&](LL n, LL t) { return val(dy[t * N + n]); }, [&](LL t, LL q) { return val(xt[q * T + t]); }, acc, mag);
    auto drop = [&](LL i) { return uniform_at(seed, {i / Kd, i % Kd}) < p; };
    const double inv = double(1.f / (1.f - p));
    check(r, k + ".dw", dw.download(), [&](LL i) { return drop(i) ? 0.0 : acc[i] * inv; },
          [&](LL i) { return drop(i) ? 0.0 : kHf * std::fabs(acc[i] * inv) + 1e-5 * mag[i] * inv + 1e-4; });
  }
  end_case(r, k + " " + dims({T, N, Kd}) + " seed " + std::to_string(seed), before);
}

// wgrad_erf_scalar_f32: dw = erf(c) dyᵀ x (f32).
void wgrad_erf_scalar_f32(const Run& r, const std::string& k, LL T, LL N, LL Kd, unsigned seed) {
  const float c = 0.8f;
  const auto dy = rnd<bf16>(T * N, seed), x = rnd<bf16>(T * Kd, seed + 1);
  DevLocal<bf16> dyd({T, N}, dy), xd({T, Kd}, x);
  DevLocal<float> dw({N, Kd}, {});
  const int before = begin_case(r);
  if (run(r, k, 1, dyd.view(), xd.view(), dw.view(), c)) {
    std::vector<double> acc, mag;
    matmul(N, Kd, T, [&](LL n, LL t) { return val(dy[t * N + n]); }, [&](LL t, LL q) { return val(x[t * Kd + q]); }, acc, mag);
    const double e = std::erf(double(c));
    check(r, k + ".dw", dw.download(), [&](LL i) { return acc[i] * e; }, [&](LL i) { return 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({T, N, Kd}), before);
}

// linear_erf_gelu_f32: y = gelu(x wᵀ + b) with the exact GELU written with erf (f32 out).
void linear_erf_gelu_f32(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto x = rnd<bf16>(M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1);
  const auto b = rnd<float>(N, seed + 2);
  DevLocal<bf16> xd({M, Kd}, x), wd({N, Kd}, w);
  DevLocal<float> bd({1, N}, b), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 1, xd.view(), wd.view(), bd.view(), y.view())) {
    std::vector<double> acc, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(w[n * Kd + q]); }, acc, mag);
    check(r, k + ".y", y.download(), [&](LL i) { return gelu_erf(acc[i] + b[i % N]); },
          [&](LL i) { return 1.13 * 1e-5 * mag[i] + 1e-6 * std::fabs(acc[i] + b[i % N]) + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// ================================================================ erf ==

// gelu_by_erf_f16_3d: y0 = f16(0.5 x (1 + erf(x / sqrt 2))), y1 = f16(gelu_erf(x)).
void gelu_by_erf_f16_3d(const Run& r, LL B, LL S, LL D, unsigned seed) {
  const auto x = rnd<f16>(B * S * D, seed, -4.f, 4.f);
  DevLocal<f16> xd({B, S, D}, x), y0({B, S, D}, {}), y1({B, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "gelu_by_erf_f16_3d", 1, xd.view(), y0.view(), y1.view())) {
    auto want = [&](LL i) { return gelu_erf(val(x[i])); };
    auto tol = [&](LL i) { return kHf * std::fabs(want(i)) + 1e-6; };
    check(r, "gelu_by_erf_f16_3d.y0", y0.download(), want, tol);
    check(r, "gelu_by_erf_f16_3d.y1", y1.download(), want, tol);
  }
  end_case(r, "gelu_by_erf_f16_3d " + dims({B, S, D}), before);
}

// ================================================================ MoE routing into a dispatch (multi-rank) ==

// The top 2 experts of a token's logits (the documented order; the logits are distinct).
std::pair<int, int> top2(const std::vector<float>& lg, LL t, LL E) {
  const auto o = topk_order(E, [&](LL j) { return double(lg[t * E + j]); });
  return {int(o[0]), int(o[1])};
}

// moe_route_top2_dispatch: on rank me, ids = each token's top 2 experts of E = W El, wts their softmax over
// the two, slot = (e % El + me El) T + place with the places of one expert 0 .. count - 1 (claimed in any
// order); recv block s El + l holds, in its first counts[s El + l] rows, the rows rank s sent to expert
// me El + l (in any order), the rest untouched; two launches.
void moe_route_top2_dispatch(const Run& r, LL T, LL H, LL El, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL E = W * El;
  std::vector<std::vector<float>> lg(W);
  std::vector<std::vector<bf16>> x(W);
  for (int p = 0; p < W; ++p) lg[p] = rnd<float>(T * E, seed + p, -3.f, 3.f), x[p] = rnd<bf16>(T * H, seed + 50 + p);
  DevLocal<bf16> xd({T, H}, x[me]);
  DevLocal<float> ld({T, E}, lg[me]), wts({T, 2}, {});
  SymArg<int> fill(r.ctx, {E}, nullptr), counts(r.ctx, {E}, nullptr);
  DevLocal<int> ids({T, 2}, {}), slot({T, 2}, {});
  SymArg<bf16> recv(r.ctx, {E * T, H}, nullptr);
  const int before = begin_case(r);
  if (run(r, "moe_route_top2_dispatch", 2, xd.view(), ld.view(), fill.view, ids.view(), wts.view(), slot.view(),
          recv.view, counts.view)) {
    const auto gi = ids.download(), gs = slot.download(), gc = counts.download();
    const auto gw = wts.download();
    const auto rv = recv.download();
    // This rank's routing, weights and places.
    std::map<int, std::set<LL>> places;
    for (LL t = 0; t < T; ++t) {
      const auto [e0, e1] = top2(lg[me], t, E);
      const double v0 = lg[me][t * E + e0], v1 = lg[me][t * E + e1];
      const double w0 = 1 / (1 + std::exp(v1 - v0));
      const int e[2] = {e0, e1};
      for (int k = 0; k < 2; ++k) {
        const LL block = e[k] % El + me * El, place = gs[t * 2 + k] - block * T;
        if (gi[t * 2 + k] != e[k] || !(std::fabs(gw[t * 2 + k] - (k ? 1 - w0 : w0)) <= 1e-6) || place < 0 || place >= T ||
            !places[e[k]].insert(place).second) {
          pkt::fail("moe_route_top2_dispatch token " + std::to_string(t) + " choice " + std::to_string(k) + ": id " +
                    std::to_string(gi[t * 2 + k]) + " weight " + std::to_string(gw[t * 2 + k]) + " slot " +
                    std::to_string(gs[t * 2 + k]) + ", want id " + std::to_string(e[k]));
          t = T;
          break;
        }
      }
    }
    for (auto& [e, ps] : places)
      if (LL(ps.size()) != *ps.rbegin() + 1) pkt::fail("moe_route_top2_dispatch: expert " + std::to_string(e) + "'s places are not 0 .. n - 1");
    // What this rank received: block s El + l from rank s for expert me El + l.
    for (int s = 0; s < W; ++s)
      for (LL l = 0; l < El; ++l) {
        std::vector<LL> sent;
        for (LL t = 0; t < T; ++t) {
          const auto [e0, e1] = top2(lg[s], t, E);
          if (e0 == me * El + l || e1 == me * El + l) sent.push_back(t);
        }
        const LL b = s * El + l;
        if (gc[b] != LL(sent.size())) {
          pkt::fail("moe_route_top2_dispatch counts[" + std::to_string(b) + "] = " + std::to_string(gc[b]) + ", want " +
                    std::to_string(sent.size()));
          continue;
        }
        std::vector<bool> seen(sent.size(), false);
        for (LL row = 0; row < T; ++row) {
          const bf16* got = rv.data() + (b * T + row) * H;
          if (row >= LL(sent.size())) {
            if (!std::isnan(val(got[0])) || !std::isnan(val(got[H - 1])))
              pkt::fail("moe_route_top2_dispatch: recv row " + std::to_string(b * T + row) + " written past the count");
            continue;
          }
          bool found = false;
          for (size_t q = 0; q < sent.size() && !found; ++q) {
            if (seen[q]) continue;
            bool same = true;
            for (LL h = 0; h < H && same; ++h) same = val(got[h]) == val(x[s][sent[q] * H + h]);
            if (same) seen[q] = found = true;
          }
          if (!found) pkt::fail("moe_route_top2_dispatch: recv row " + std::to_string(b * T + row) + " is no row rank " +
                                std::to_string(s) + " sent to expert " + std::to_string(me * El + l));
        }
      }
  }
  end_case(r, "moe_route_top2_dispatch " + dims({T, H, El}), before);
}

// moe_combine_top2: out[t] = bf16(sum_k wts[t, k] yexp_{owner}[slot[t, k]]) with owner = ids / El; ids of
// -1 (dropped choices, slot -1) and slots past the end add nothing. Slots made on the host: expert e's row
// for token t on its owner at (e % El + me El) T + t.
void moe_combine_top2(const Run& r, LL T, LL H, LL El, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL E = W * El, R = E * T;
  std::vector<std::vector<bf16>> y(W);
  for (int p = 0; p < W; ++p) y[p] = rnd<bf16>(R * H, seed + p);
  const auto pick = ints<int>(T * 2, 0, int(E) - 1, seed + 20 + me), kind = ints<int>(T * 2, 0, 9, seed + 30 + me);
  const auto w = rnd<float>(T * 2, seed + 40 + me, 0.f, 1.f);
  std::vector<int> ids(T * 2), slot(T * 2);
  for (LL t = 0; t < T; ++t)
    for (int k = 0; k < 2; ++k) {
      int e = pick[t * 2 + k];
      if (k == 1 && e == ids[t * 2]) e = (e + 1) % int(E);
      ids[t * 2 + k] = kind[t * 2 + k] == 0 ? -1 : e;
      slot[t * 2 + k] = kind[t * 2 + k] == 0 ? -1 : kind[t * 2 + k] == 1 ? int(R + t) : int((e % El + me * El) * T + t);
    }
  DevLocal<int> idd({T, 2}, ids), sd({T, 2}, slot);
  DevLocal<float> wd({T, 2}, w);
  SymArg<bf16> yd(r.ctx, {R, H}, &y[me]);
  DevLocal<bf16> out({T, H}, {});
  const int before = begin_case(r);
  if (run(r, "moe_combine_top2", 2, yd.view, idd.view(), sd.view(), wd.view(), out.view(), El)) {
    std::vector<double> want(T * H, 0.0);
    for (LL t = 0; t < T; ++t)
      for (int k = 0; k < 2; ++k) {
        const int e = ids[t * 2 + k];
        const LL sl = slot[t * 2 + k];
        if (sl < 0 || sl >= R) continue;
        const int owner = e / int(El);
        for (LL h = 0; h < H; ++h) want[t * H + h] += double(w[t * 2 + k]) * val(y[owner][sl * H + h]);
      }
    check(r, "moe_combine_top2.out", out.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-6; });
  }
  end_case(r, "moe_combine_top2 " + dims({T, H, El}), before);
}

#ifdef PK_SPECS19_W1
// w1_bmm_dropout_seed_per_batch: c[z] = bf16(u(seed + z, m, n) < p ? 0 : a[z] b[z]ᵀ / (1 - p)). The template
// form fails until finding 1 is fixed (it draws seed 0's numbers for every seed and batch).
void w1_bmm_dropout_seed_per_batch(const Run& r, const std::string& k, LL Z, LL M, LL N, LL Kd, LL seed, unsigned s) {
  const float p = 0.5f;
  const auto a = rnd<bf16>(Z * M * Kd, s), b = rnd<bf16>(Z * N * Kd, s + 1);
  DevLocal<bf16> ad({Z, M, Kd}, a), bd({Z, N, Kd}, b), c({Z, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 1, ad.view(), bd.view(), c.view(), seed, p)) {
    std::vector<double> want(Z * M * N), mag(Z * M * N);
    for (LL z = 0; z < Z; ++z) {
      std::vector<double> acc, mg;
      matmul(M, N, Kd, [&](LL m, LL q) { return val(a[(z * M + m) * Kd + q]); },
             [&](LL q, LL n) { return val(b[(z * N + n) * Kd + q]); }, acc, mg);
      for (LL i = 0; i < M * N; ++i) {
        const bool drop = uniform_at(seed + z, {i / N, i % N}) < p;
        want[z * M * N + i] = drop ? 0.0 : acc[i] * 2.0, mag[z * M * N + i] = drop ? 0.0 : mg[i] * 2.0;
      }
    }
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({Z, M, N, Kd}) + " seed " + std::to_string(seed), before);
}

// w2_attention_noise_seed_per_head: scores q kᵀ scale + amp u(seed + h, i, j). The template form fails
// until finding 1 is fixed.
void w2_attention_noise_seed_per_head(const Run& r, const std::string& k, LL H, LL S, LL seed, unsigned s) {
  const LL D = 64;
  const float scale = 0.125f, amp = 4.f;
  const auto q = rnd<bf16>(H * S * D, s), kk = rnd<bf16>(H * S * D, s + 1), v = rnd<bf16>(H * S * D, s + 2);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, k, 1, qd.view(), kd.view(), vd.view(), o.view(), seed, amp, scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h)
      attend(S, S, D,
             [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale + amp * uniform_at(seed + h, {i, j}); },
             [](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); }, wo.data() + h * S * D,
             wl.data() + h * S);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, S}) + " seed " + std::to_string(seed), before);
}
#endif

void single_gpu_cases(const Run& r) {
  unsigned s = 100;
  for (const std::string path : {"", "/general"}) {
    // Attention on the template (and with templates off): sequence lengths that are not multiples of 64
    // or 128.
    attn_causal_and_klen_d64(r, "attn_causal_and_klen_d64" + path, 150, s += 100);
    attn_causal_and_klen_d64(r, "attn_causal_and_klen_d64" + path, 77, s += 100);
    attn_sinks_window_or_d128(r, "attn_sinks_window_or_d128" + path, 3, 150, 40, 4, s += 100);
    attn_sinks_window_or_d128(r, "attn_sinks_window_or_d128" + path, 2, 77, 1, 0, s += 100);
    attn_sinks_window_or_d128(r, "attn_sinks_window_or_d128" + path, 2, 300, 20, 70, s += 100);
    attn_prefix_or_causal_gqa_f16_d64(r, "attn_prefix_or_causal_gqa_f16_d64" + path, 4, 2, 150, 70, s += 100);
    attn_prefix_or_causal_gqa_f16_d64(r, "attn_prefix_or_causal_gqa_f16_d64" + path, 3, 1, 77, 0, s += 100);
    attn_doc_not_pad_d64(r, "attn_doc_not_pad_d64" + path, 150, s += 100);
    attn_doc_not_pad_d64(r, "attn_doc_not_pad_d64" + path, 100, s += 100);
    // The weight gradients on the template's A-transposed form (dY's columns and X's a multiple of 8, any
    // number of tokens) and on the twin (dY's columns not a multiple of 8, or X stored [K, T] with T odd).
    wgrad_accumulate_f32_inplace(r, "wgrad_accumulate_f32_inplace" + path, 77, 328, 520, s += 100);
    wgrad_accumulate_f32_inplace(r, "wgrad_accumulate_f32_inplace" + path, 1, 136, 264, s += 100);
    wgrad_accumulate_f32_inplace(r, "wgrad_accumulate_f32_inplace" + path, 50, 100, 70, s += 100);
    wgrad_rowscale_mask_bf16(r, "wgrad_rowscale_mask_bf16" + path, 136, 200, 264, 150, s += 100);
    wgrad_rowscale_mask_bf16(r, "wgrad_rowscale_mask_bf16" + path, 50, 70, 100, 1000, s += 100);
    wgrad_t_f16_dropout(r, "wgrad_t_f16_dropout" + path, 80, 328, 264, -7, 0.3f, s += 100);
    wgrad_t_f16_dropout(r, "wgrad_t_f16_dropout" + path, 77, 200, 136, (LL(5) << 33) + 3, 0.3f, s += 100);
    wgrad_erf_scalar_f32(r, "wgrad_erf_scalar_f32" + path, 77, 200, 264, s += 100);
    wgrad_erf_scalar_f32(r, "wgrad_erf_scalar_f32" + path, 40, 50, 100, s += 100);
    linear_erf_gelu_f32(r, "linear_erf_gelu_f32" + path, 200, 136, 264, s += 100);
    linear_erf_gelu_f32(r, "linear_erf_gelu_f32" + path, 70, 50, 100, s += 100);
  }
  attn_dropout_general_d64(r, 2, 100, 4242, 0.2f, s += 100);
  attn_dropout_general_d64(r, 1, 77, -(LL(1) << 35) - 9, 0.5f, s += 100);
  masked_softmax_or_not_3d(r, 3, 37, 100, s += 100);
  alibi_causal_bias_4d(r, 2, 3, 37, 100, s += 100);
  sinusoidal_pos_add_3d(r, 3, 37, 100, 37, s += 100);
  dropout_add_residual_f16_3d(r, 3, 13, 300, -12345, 0.25f, s += 100);
  dropout_add_residual_f16_3d(r, 2, 9, 200, (LL(1) << 33) + 5, 0.5f, s += 100);
  dropout_bwd_regenerate_bf16(r, 70, 200, 2024, 0.1f, s += 100);
  dropout_bwd_regenerate_bf16(r, 33, 100, -1, 0.6f, s += 100);
  drop_path_per_sample_3d(r, 9, 37, 100, 77, 0.4f, s += 100);
  gumbel_max_sample(r, 37, 1000, 31337, s += 100);
  gumbel_max_sample(r, 9, 100, -(LL(7) << 32), s += 100);
  exponential_race_sample(r, 37, 500, 99, s += 100);
  exponential_race_sample(r, 20, 50, -99, s += 100);
  stochastic_round_int8(r, 70, 300, 5, s += 100);
  stochastic_round_int8(r, 33, 100, -(LL(1) << 40), s += 100);
  uniform_4d_offset_origins(r, 2, 7, 11, 20, 1000, -5, 3, 100);
  uniform_4d_offset_origins(r, 3, 4, 6, 24, 777, (LL(1) << 40) + 7, 0, 0);
  uniform_4d_offset_origins(r, 1, 5, 5, 9, 301, -(LL(3) << 33) - 1, 1000000, 7);
  moe_router_softmax_top4(r, 100, 60, s += 100);
  moe_router_softmax_top4(r, 37, 64, s += 100);
  moe_router_sigmoid_bias_dense(r, 70, 256, s += 100);
  moe_router_sigmoid_bias_dense(r, 37, 200, s += 100);
  topk_topp_filter(r, 70, 200, 50, 0.9f, s += 100);
  topk_topp_filter(r, 37, 256, 5, 0.99f, s += 100);
  topk_topp_filter(r, 37, 100, 256, 0.5f, s += 100);
  kth_value_count_bf16(r, 37, 100, s += 100);
  kth_value_count_bf16(r, 20, 5, s += 100);
  sort_rows_f16_inplace(r, 37, 27, s += 100);
  sort_rows_f16_inplace(r, 10, 32, s += 100);
  topk_k_exceeds_row(r, 10, 5, s += 100);
  topk_k_exceeds_row(r, 7, 8, s += 100);
  argmax_long_rows_two_phase(r, 13, 50000, s += 100);
  argmax_long_rows_two_phase(r, 9, 4100, s += 100);
  chunk_top3_candidates(r, 37, 300, s += 100);
  expert_choice_top16(r, 300, 20, s += 100);
  expert_choice_top16(r, 512, 8, s += 100);
  ce_loss_sum_ignore_index(r, 100, 300, s += 100);
  ce_loss_sum_ignore_index(r, 37, 512, s += 100);
  cumsum_4d_bf16_wide_tile(r, 2, 3, 7, 50, s += 100);
  exclusive_offsets_i64_3d(r, 3, 5, 100, s += 100);
  real_token_positions_i64(r, 9, 300, s += 100);
  cumsum_i64_wide_rows(r, 10, 1000, s += 100);
  cumsum_i64_wide_rows(r, 5, 1024, s += 100);
  reshape_cumsum_row_scale(r, 37, 100, s += 100);
  reshape_3d_topk2(r, 3, 37, 50, s += 100);
  conv1d_3tap_bwd_store_add(r, 33, 300, s += 100);
  conv1d_3tap_bwd_store_add(r, 34, 300, s += 100);
  conv1d_3tap_bwd_store_add(r, 40, 100, s += 100);
  conv1d_scatter_shifted_adds(r, 37, 100, s += 100);
  conv1d_scatter_shifted_adds(r, 16, 64, s += 100);
  colsum_wide_tile_store_add(r, 300, 200, s += 100);
  expert_counts_i64_store_add(r, 5, 1000, s += 100);
  gelu_by_erf_f16_3d(r, 2, 37, 300, s += 100);
#ifdef PK_SPECS19_W1
  for (const std::string path : {"", "/general"}) {
    w1_bmm_dropout_seed_per_batch(r, "w1_bmm_dropout_seed_per_batch" + path, 3, 200, 264, 64, 12345, s += 100);
    w2_attention_noise_seed_per_head(r, "w2_attention_noise_seed_per_head" + path, 3, 100, 777, s += 100);
    // The same 32-bit parameter block refuses an index argument past 2^31 at launch (no fallback to the
    // twin): kmax = 2^40 ("no frozen block") and a batched seed past 2^31.
    wgrad_rowscale_mask_bf16(r, "wgrad_rowscale_mask_bf16" + path, 136, 200, 264, LL(1) << 40, s += 100);
    w1_bmm_dropout_seed_per_batch(r, "w1_bmm_dropout_seed_per_batch" + path, 2, 128, 256, 64, (LL(1) << 31) + 3, s += 100);
  }
#endif
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  sp_dropout_global_rows(r, 37, 300, 555, 0.3f, s += 100);
  tp_vocab_top4(r, 37, 1000, s += 100);
  tp_vocab_top4(r, 20, 7, s += 100);
  moe_route_top2_dispatch(r, 37, 300, 3, s += 100);
  moe_route_top2_dispatch(r, 70, 128, 5, s += 100);
  moe_combine_top2(r, 37, 300, 3, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs19_jit_test");
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs19_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

// The twenty-fourth user-written spec set (test/specs/user_specs24.pk.cpp: inference serving and sequence models:
// KV-cache writes, rotary variants, sampling helpers, vocabulary-parallel top-k / Gumbel / greedy, Mamba / RetNet /
// RWKV recurrences, LoRA and multi-LoRA, quantised linear layers, tensor-parallel decode steps) through the JIT,
// each kernel against a float64 host reference written from its comment (exact for integers, indices, copies and
// scatters) on fresh random inputs, with every output poisoned first (NaN, or -1 for i32 / i64). The single-GPU
// kernels run at W = 1; the kernels that use rank() or collectives (tp_decode_rowparallel_ar_add_rmsnorm,
// tp_decode_colparallel_qkv_allgather, vp_lm_head_greedy, vp_topk8_allgather, vp_gumbel_max_sample) at W = 1, 2,
// 3 and 4 (ranks sharing one GPU; PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others), each rank checking its
// own outputs, with every rank's inputs different where the kernel's semantics allow. Shapes leave partial tiles
// in every tiled dimension (37 rows against 2- to 64-row tiles, 100 / 300 / 1000 / 3000 columns against 128- to
// 4096-column tiles). In-place kernels launch once and are checked against a host copy of their inputs; the
// others launch twice (a zeroing or copying phase must redo its work).
//
// Covered (34 of 38): every kernel but the four below; the template GEMMs (lora_linear_delta_epilogue,
// fp8_w8a8_rowcol_scale_bias, the three TP / vocabulary-parallel decode kernels) on the template (K and N whole
// 16-byte rows) and on their general twins (a row pitch that is not).
// Skipped:
// * topk_topp_sample: its token is a chain of fp32 comparisons (cumsum of a softmax against u z, a keep count
//   against top_p) whose near-ties move the token to another column; an honest check needs an ambiguity band on
//   two coupled thresholds, not written in this pass (time budget);
// * medusa_typical_acceptance: likewise two coupled thresholds (pt against min(eps, delta exp(-H)) with H an fp32
//   entropy) that decide a prefix length; not written in this pass;
// * retnet_chunkwise and linear_attention_elu: both round the decayed scores / the state / phi(q) / kv to bf16
//   before tensor-core products, so a float64 reference needs the device's intermediate roundings to give a
//   meaningful bound; not written in this pass (the recurrent RetNet decode is covered).
//
// Error bounds (each function says which it uses):
// * a bf16 (f16) output: kBf (kHf) = two units in the last place (2^-8 / 2^-11 relative per rounding, twice) of
//   the value, plus the fp32 bound of what it was computed from; f16 outputs add 6e-8, f16's subnormal step
//   (2^-24), where a relative bound says nothing;
// * fp32 element-wise arithmetic (a few operations): 1e-6 of the sum of the terms' magnitudes (each rounding is
//   2^-24 = 6e-8 relative; device exp is ex2.approx, about 2 ulp; log, tanh, sin, cos are the accurate libdevice
//   logf / tanhf / sinf / cosf, 1-2 ulp);
// * fp32 sums (rows, GEMMs over K, cross-rank sums): 1e-5 of the sum of the terms' magnitudes (n eps with n the
//   terms per partial sum stays below it for these sizes; sets 19-23 use the same);
// * recurrences (selective scan, RWKV): each step adds a few fp32 roundings and an exp's 2 ulp of the state's
//   magnitude, and earlier errors are scaled by a decay below 1, so after t steps the bound is c (t + 2) times the
//   magnitude (the constant per function);
// * angles: an fp32 angle's absolute error times (|x1| + |x2|) bounds the rotated pair's error.
//
// Indices and tokens: exact where the float64 reference decides them with a margin; where the reference finds a
// value within the fp32 bound of a decision's threshold (a .5 rounding boundary of SmoothQuant, min-p's threshold,
// the inverse CDF's u, an argmax within the bound of the maximum) every answer the bound allows is accepted, and
// nothing else. vp_gumbel_max_sample's noise is replicated bit for bit from docs/language.md's hash
// (jit_spec_cases.h's uniform_at) at (b, global column), and its token checked against the float64 argmax of
// logits / temp + g, the same for every W.
//
// Padding (docs/language.md): `store` clips at the destination's edges, and here each partial tile is stored into
// a tensor of its own shape, so no padding lands in another tensor's elements; `store_rows` skips padding rows and
// dropped indices, so every cache / table row no token writes must still hold the poison (checked by
// check_or_poison).
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f16;
using pk::f8e4m3;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Kernels tested, and whether one of their launches takes a template.
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"mla_latent_cache_write", false},       {"sliding_window_cache_append", false},
    {"static_cache_decode_write", false},    {"kv_copy_blocks", false},
    {"rope_gptj_interleaved_inplace", false}, {"rope_llama_computed_qk", false},
    {"rope_partial_neox_inplace", false},    {"mrope_qwen2vl_inplace", false},
    {"logit_softcap_temperature_inplace", false}, {"repetition_penalty_gathered", false},
    {"presence_frequency_penalty", false},   {"min_p_filter_wide", false},
    {"vp_topk8_allgather", false},           {"vp_gumbel_max_sample", false},
    {"inverse_cdf_sample_wide", false},      {"beam_search_topk_two_phase", false},
    {"causal_conv1d_silu", false},           {"causal_conv1d_update_inplace", false},
    {"mamba1_selective_scan", false},        {"mamba2_ssd_decode_step", false},
    {"mamba2_gated_rmsnorm_grouped", false}, {"retnet_recurrent_decode", false},
    {"rwkv4_wkv_forward", false},            {"rwkv_token_shift_mix", false},
    {"lora_linear_fused", true},             {"lora_linear_delta_epilogue", true},
    {"multi_lora_bgmv", false},              {"smoothquant_per_token_int8", false},
    {"fp8_w8a8_rowcol_scale_bias", true},    {"w8a16_groupwise_gemm", false},
    {"tp_decode_rowparallel_ar_add_rmsnorm", true}, {"tp_decode_colparallel_qkv_allgather", true},
    {"vp_lm_head_greedy", true},             {"decode_add_layernorm", false},
};
const std::vector<const char*> kGeneralToo = {};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS24_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs24", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host helpers ----

const double kNaN = std::numeric_limits<double>::quiet_NaN();
// Rank p's inputs: a fresh seed per rank.
unsigned rs(unsigned seed, int p) { return seed + 7919u * unsigned(p + 1); }
// 0 .. n-1 shuffled, reproducibly.
std::vector<LL> shuffled(LL n, unsigned seed) {
  std::vector<LL> v(n);
  std::iota(v.begin(), v.end(), 0);
  std::mt19937 g(seed * 69069u + 1u);
  std::shuffle(v.begin(), v.end(), g);
  return v;
}
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

// ================================================================ KV cache writes ==

// mla_latent_cache_write: slots a permutation of the cache rows, every 7th token -1 and every 11th past the cache
// (both write nothing); rows no token writes keep the poison. Latent: kBf of the value + 1e-5 of it (rsqrt's 2 ulp
// and the fp32 sum of squares); rotary: kBf + 1e-6 of the two products' magnitudes.
void mla_write(const Run& r, LL T, LL NS, LL P, unsigned seed) {
  const std::string kn = "mla_latent_cache_write";
  const float eps = 1e-6f;
  const auto ckv = rnd<bf16>(T * 512, seed, -2.f, 2.f), kpe = rnd<bf16>(T * 64, seed + 1, -2.f, 2.f);
  const auto w = rnd<float>(512, seed + 2, 0.5f, 1.5f), cs = rnd<float>(P * 32, seed + 3), sn = rnd<float>(P * 32, seed + 4);
  const auto pos = ints<int>(T, 0, P - 1, seed + 5);
  const auto perm = shuffled(NS, seed + 6);
  std::vector<int> slot(T);
  for (LL t = 0; t < T; ++t) slot[t] = t % 7 == 3 ? -1 : t % 11 == 5 ? int(NS + t) : int(perm[t]);
  DevLocal<bf16> ckvd({T, 512}, ckv), kped({T, 64}, kpe), cache({NS, 576}, {});
  DevLocal<float> wd({1, 512}, w), cd({P, 32}, cs), sd({P, 32}, sn);
  DevLocal<int> pd({T}, pos), sld({T}, slot);
  const int before = begin_case(r);
  if (run(r, kn, 2, ckvd.view(), kped.view(), wd.view(), pd.view(), cd.view(), sd.view(), sld.view(), cache.view(), eps)) {
    std::vector<double> want(NS * 576, kNaN), tol(NS * 576, 0.0);
    for (LL t = 0; t < T; ++t) {
      const LL s = slot[t];
      if (s < 0 || s >= NS) continue;
      double ss = 0;
      for (LL j = 0; j < 512; ++j) ss += val(ckv[t * 512 + j]) * val(ckv[t * 512 + j]);
      const double inv = 1 / std::sqrt(ss / 512 + eps);
      for (LL j = 0; j < 512; ++j) {
        const double v = val(ckv[t * 512 + j]) * inv * w[j];
        want[s * 576 + j] = v, tol[s * 576 + j] = (kBf + 1e-5) * std::fabs(v);
      }
      for (LL i = 0; i < 32; ++i) {
        const double a = val(kpe[t * 64 + i]), b = val(kpe[t * 64 + 32 + i]), c = cs[pos[t] * 32 + i], sv = sn[pos[t] * 32 + i];
        const double m = std::fabs(a * c) + std::fabs(b * sv) + std::fabs(b * c) + std::fabs(a * sv);
        want[s * 576 + 512 + i] = a * c - b * sv, tol[s * 576 + 512 + i] = kBf * std::fabs(a * c - b * sv) + 1e-6 * m;
        want[s * 576 + 544 + i] = b * c + a * sv, tol[s * 576 + 544 + i] = kBf * std::fabs(b * c + a * sv) + 1e-6 * m;
      }
    }
    check_or_poison(r, kn + ".cache", cache.download(), want, [&](LL i) { return tol[i]; });
  }
  end_case(r, kn + " " + dims({T, NS, P}), before);
}

// sliding_window_cache_append: T distinct (sequence, ring slot) pairs, positions slot + win * (0..4); exact
// copies, the other ring rows untouched.
void swa_append(const Run& r, LL T, LL HD, LL S, LL win, unsigned seed) {
  const std::string kn = "sliding_window_cache_append";
  const auto k = rnd<f16>(T * HD, seed), v = rnd<f16>(T * HD, seed + 1);
  const auto pick = shuffled(S * win, seed + 2);
  const auto lap = ints<long long>(T, 0, 4, seed + 3);
  std::vector<long long> seq(T), pos(T);
  for (LL t = 0; t < T; ++t) seq[t] = pick[t] / win, pos[t] = pick[t] % win + win * lap[t];
  DevLocal<f16> kd({T, HD}, k), vd({T, HD}, v), kc({S * win, HD}, {}), vc({S * win, HD}, {});
  DevLocal<long long> sd({T}, seq), pd({T}, pos);
  const int before = begin_case(r);
  if (run(r, kn, 2, kd.view(), vd.view(), sd.view(), pd.view(), kc.view(), vc.view(), win)) {
    std::vector<double> wk(S * win * HD, kNaN), wv(S * win * HD, kNaN);
    for (LL t = 0; t < T; ++t) {
      const LL s = seq[t] * win + pos[t] % win;
      for (LL c = 0; c < HD; ++c) wk[s * HD + c] = val(k[t * HD + c]), wv[s * HD + c] = val(v[t * HD + c]);
    }
    check_or_poison(r, kn + ".kc", kc.download(), wk, exact());
    check_or_poison(r, kn + ".vc", vc.download(), wv, exact());
  }
  end_case(r, kn + " " + dims({T, HD, S, win}), before);
}

// static_cache_decode_write: exact copies at [b, h, cache_pos[b]], every other cache row untouched.
void static_cache(const Run& r, LL B, LL H, LL L, LL D, unsigned seed) {
  const std::string kn = "static_cache_decode_write";
  const auto k = rnd<bf16>(B * H * D, seed), v = rnd<bf16>(B * H * D, seed + 1);
  const auto cp = ints<long long>(B, 0, L - 1, seed + 2);
  DevLocal<bf16> kd({B, H, D}, k), vd({B, H, D}, v), kc({B, H, L, D}, {}), vc({B, H, L, D}, {});
  DevLocal<long long> cpd({B}, cp);
  const int before = begin_case(r);
  if (run(r, kn, 2, kd.view(), vd.view(), cpd.view(), kc.view(), vc.view())) {
    std::vector<double> wk(B * H * L * D, kNaN), wv(B * H * L * D, kNaN);
    for (LL b = 0; b < B; ++b)
      for (LL h = 0; h < H; ++h)
        for (LL d = 0; d < D; ++d) {
          const LL o = ((b * H + h) * L + cp[b]) * D + d, i = (b * H + h) * D + d;
          wk[o] = val(k[i]), wv[o] = val(v[i]);
        }
    check_or_poison(r, kn + ".kc", kc.download(), wk, exact());
    check_or_poison(r, kn + ".vc", vc.download(), wv, exact());
  }
  end_case(r, kn + " " + dims({B, H, L, D}), before);
}

// kv_copy_blocks: disjoint source and destination blocks; kout (holding kin first) gets the sources' rows at the
// destinations, exactly, and nothing else changes.
void kv_copy(const Run& r, LL NB, LL bs, LL HD, LL NP, unsigned seed) {
  const std::string kn = "kv_copy_blocks";
  const auto perm = shuffled(NB, seed);
  std::vector<int> pairs(2 * NP);
  for (LL i = 0; i < NP; ++i) pairs[2 * i] = int(perm[i]), pairs[2 * i + 1] = int(perm[NP + i]);
  const auto kin = rnd<bf16>(NB * bs * HD, seed + 1);
  DevLocal<int> pd({NP, 2}, pairs);
  DevLocal<bf16> ki({NB * bs, HD}, kin), ko({NB * bs, HD}, kin);
  const int before = begin_case(r);
  if (run(r, kn, 2, pd.view(), ki.view(), ko.view(), bs)) {
    std::vector<double> want(NB * bs * HD);
    for (LL i = 0; i < NB * bs * HD; ++i) want[i] = val(kin[i]);
    for (LL i = 0; i < NP; ++i)
      for (LL j = 0; j < bs; ++j)
        for (LL c = 0; c < HD; ++c) want[(pairs[2 * i + 1] * bs + j) * HD + c] = val(kin[(pairs[2 * i] * bs + j) * HD + c]);
    check(r, kn + ".kout", ko.download(), [&](LL i) { return want[i]; }, exact());
    check(r, kn + ".kin", ki.download(), [&](LL i) { return val(kin[i]); }, exact());
  }
  end_case(r, kn + " " + dims({NB, bs, HD, NP}), before);
}

// ================================================================ rotary ==

// rope_gptj_interleaved_inplace: pairs (2i, 2i + 1) of each head; kBf + 1e-6 of the products.
void rope_gptj(const Run& r, LL T, LL H, LL P, unsigned seed) {
  const std::string kn = "rope_gptj_interleaved_inplace";
  const auto x = rnd<bf16>(T * H * 64, seed, -2.f, 2.f);
  const auto pos = ints<int>(T, 0, P - 1, seed + 1);
  const auto cs = rnd<float>(P * 32, seed + 2), sn = rnd<float>(P * 32, seed + 3);
  DevLocal<bf16> xd({T, H, 32, 2}, x);
  DevLocal<int> pd({T}, pos);
  DevLocal<float> cd({P, 32}, cs), sd({P, 32}, sn);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), pd.view(), cd.view(), sd.view())) {
    std::vector<double> want(T * H * 64), tol(T * H * 64);
    for (LL t = 0; t < T; ++t)
      for (LL h = 0; h < H; ++h)
        for (LL i = 0; i < 32; ++i) {
          const LL o = ((t * H + h) * 32 + i) * 2;
          const double x0 = val(x[o]), x1 = val(x[o + 1]), c = cs[pos[t] * 32 + i], s = sn[pos[t] * 32 + i];
          const double m = (std::fabs(x0) + std::fabs(x1)) * (std::fabs(c) + std::fabs(s));
          want[o] = x0 * c - x1 * s, want[o + 1] = x1 * c + x0 * s;
          tol[o] = kBf * std::fabs(want[o]) + 1e-6 * m, tol[o + 1] = kBf * std::fabs(want[o + 1]) + 1e-6 * m;
        }
    check_vec(r, kn + ".x", xd.download(), want, tol);
  }
  end_case(r, kn + " " + dims({T, H, P}), before);
}

// The NeoX rotation of halves of 64 of a [T, Hn 128] tensor by angle(t, j), into want / tol. da(a): the fp32
// angle's absolute error bound; a pair's error is at most (|x1| + |x2|) da, plus kBf of the value and 1e-6 of
// the products (sinf / cosf 2 ulp, three roundings).
void rotate_halves(const std::vector<bf16>& x, LL T, LL Hn, const std::function<double(LL, LL)>& angle,
                   const std::function<double(double)>& da, std::vector<double>& want, std::vector<double>& tol) {
  want.assign(T * Hn * 128, 0.0), tol.assign(T * Hn * 128, 0.0);
  for (LL t = 0; t < T; ++t)
    for (LL h = 0; h < Hn; ++h)
      for (LL j = 0; j < 64; ++j) {
        const LL o1 = t * Hn * 128 + h * 128 + j, o2 = o1 + 64;
        const double a = angle(t, j), c = std::cos(a), s = std::sin(a), x1 = val(x[o1]), x2 = val(x[o2]);
        const double m = std::fabs(x1) + std::fabs(x2);
        want[o1] = x1 * c - x2 * s, want[o2] = x2 * c + x1 * s;
        tol[o1] = kBf * std::fabs(want[o1]) + m * (da(a) + 1e-6);
        tol[o2] = kBf * std::fabs(want[o2]) + m * (da(a) + 1e-6);
      }
}

// rope_llama_computed_qk: f_j = theta^(-j / 64) in float64. The kernel's fp32 angle: log(theta) / 64 (1 ulp),
// times j (the exponent up to 63 * 0.21 = 13, so 13 * 1.2e-7 absolute), exp by ex2.approx (2 ulp plus the
// rounding of its argument times log2 e: 19 * 6e-8), cast of pos and the product (2 roundings): f_j and then a
// within 4e-6 relative; da = 4e-6 |a| + 1e-7.
void rope_llama(const Run& r, LL T, LL Hq, LL Hk, float theta, LL maxpos, unsigned seed) {
  const std::string kn = "rope_llama_computed_qk";
  const auto q = rnd<bf16>(T * Hq * 128, seed, -2.f, 2.f), k = rnd<bf16>(T * Hk * 128, seed + 1, -2.f, 2.f);
  const auto pos = ints<int>(T, 0, maxpos, seed + 2);
  DevLocal<bf16> qd({T, Hq * 128}, q), kd({T, Hk * 128}, k);
  DevLocal<int> pd({T}, pos);
  const int before = begin_case(r);
  if (run(r, kn, 1, qd.view(), kd.view(), pd.view(), theta)) {
    auto angle = [&](LL t, LL j) { return pos[t] * std::pow(double(theta), -double(j) / 64); };
    auto da = [](double a) { return 4e-6 * std::fabs(a) + 1e-7; };
    std::vector<double> want, tol;
    rotate_halves(q, T, Hq, angle, da, want, tol);
    check_vec(r, kn + ".q", qd.download(), want, tol);
    rotate_halves(k, T, Hk, angle, da, want, tol);
    check_vec(r, kn + ".k", kd.download(), want, tol);
  }
  end_case(r, kn + " " + dims({T, Hq, Hk}) + " pos <= " + std::to_string(maxpos), before);
}

// mrope_qwen2vl_inplace: a = pos3[sec(j), t] * inv_freq[j], one fp32 product (da = 1.2e-7 |a|).
void mrope(const Run& r, LL T, LL H, LL P, unsigned seed) {
  const std::string kn = "mrope_qwen2vl_inplace";
  const auto q = rnd<bf16>(T * H * 128, seed, -2.f, 2.f);
  const auto pos3 = ints<int>(3 * T, 0, P - 1, seed + 1);
  std::vector<float> inv(64);
  for (LL j = 0; j < 64; ++j) inv[j] = float(std::pow(10000.0, -double(j) / 64));
  DevLocal<bf16> qd({T, H * 128}, q);
  DevLocal<int> pd({3, T}, pos3);
  DevLocal<float> fd({64}, inv);
  const int before = begin_case(r);
  if (run(r, kn, 1, qd.view(), pd.view(), fd.view())) {
    auto angle = [&](LL t, LL j) {
      const LL sec = j < 16 ? 0 : j < 40 ? 1 : 2;
      return double(pos3[sec * T + t]) * inv[j];
    };
    std::vector<double> want, tol;
    rotate_halves(q, T, H, angle, [](double a) { return 1.2e-7 * std::fabs(a); }, want, tol);
    check_vec(r, kn + ".q", qd.download(), want, tol);
  }
  end_case(r, kn + " " + dims({T, H, P}), before);
}

// rope_partial_neox_inplace: columns 0..31 rotate (kHf + 1e-6 of the products + f16's subnormal step), 32..127
// keep their bits.
void rope_partial(const Run& r, LL T, LL H, LL P, unsigned seed) {
  const std::string kn = "rope_partial_neox_inplace";
  const auto x = rnd<f16>(T * H * 128, seed, -2.f, 2.f);
  const auto pos = ints<long long>(T, 0, P - 1, seed + 1);
  const auto cs = rnd<float>(P * 16, seed + 2), sn = rnd<float>(P * 16, seed + 3);
  DevLocal<f16> xd({T, H, 128}, x);
  DevLocal<long long> pd({T}, pos);
  DevLocal<float> cd({P, 16}, cs), sd({P, 16}, sn);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), pd.view(), cd.view(), sd.view())) {
    std::vector<double> want(T * H * 128), tol(T * H * 128, 0.0);
    for (LL i = 0; i < T * H * 128; ++i) want[i] = val(x[i]);
    for (LL t = 0; t < T; ++t)
      for (LL h = 0; h < H; ++h)
        for (LL j = 0; j < 16; ++j) {
          const LL o = (t * H + h) * 128 + j;
          const double x1 = val(x[o]), x2 = val(x[o + 16]), c = cs[pos[t] * 16 + j], s = sn[pos[t] * 16 + j];
          const double m = (std::fabs(x1) + std::fabs(x2)) * (std::fabs(c) + std::fabs(s));
          want[o] = x1 * c - x2 * s, want[o + 16] = x2 * c + x1 * s;
          tol[o] = kHf * std::fabs(want[o]) + 1e-6 * m + 6e-8;
          tol[o + 16] = kHf * std::fabs(want[o + 16]) + 1e-6 * m + 6e-8;
        }
    check_vec(r, kn + ".x", xd.download(), want, tol);
  }
  end_case(r, kn + " " + dims({T, H, P}), before);
}

// ================================================================ sampling helpers ==

// logit_softcap_temperature_inplace: x * (1 / cap) (2 roundings), tanhf (2 ulp), times cap / temp (2 roundings):
// 1e-6 (cap / temp) (|x / cap| + 1).
void softcap(const Run& r, LL B, LL V, float cap, float temp, unsigned seed) {
  const std::string kn = "logit_softcap_temperature_inplace";
  const auto x = rnd<float>(B * V, seed, -80.f, 80.f);
  DevLocal<float> xd({B, V}, x);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), cap, temp)) {
    const double f = double(cap) / temp;
    check(r, kn + ".logits", xd.download(), [&](LL i) { return f * std::tanh(x[i] / double(cap)); },
          [&](LL i) { return 1e-6 * f * (std::fabs(x[i] / double(cap)) + 1); });
  }
  end_case(r, kn + " " + dims({B, V}), before);
}

// repetition_penalty_gathered: ids with -1 pads and repeats; out = logits except the penalised entries (a product
// by an fp32 reciprocal or the penalty: 2e-7 relative). Launched twice: the copy phase rewrites out.
void rep_penalty(const Run& r, LL B, LL V, LL L, float penalty, unsigned seed) {
  const std::string kn = "repetition_penalty_gathered";
  const auto lg = rnd<float>(B * V, seed, -5.f, 5.f);
  auto prev = ints<int>(B * L, 0, V - 1, seed + 1);
  for (LL i = 0; i < B * L; ++i) {
    if (i % L % 5 == 4) prev[i] = -1;
    else if (i % L % 7 == 6) prev[i] = prev[i - 3];  // a repeat
  }
  DevLocal<float> ld({B * V, 1}, lg), od({B * V, 1}, {});
  DevLocal<int> pd({B, L}, prev);
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), pd.view(), od.view(), V, penalty)) {
    std::vector<double> want(B * V);
    for (LL i = 0; i < B * V; ++i) want[i] = lg[i];
    for (LL i = 0; i < B * L; ++i)
      if (prev[i] >= 0) {
        const LL f = i / L * V + prev[i];
        want[f] = lg[f] > 0 ? lg[f] / double(penalty) : lg[f] * double(penalty);
      }
    check(r, kn + ".out", od.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 2e-7 * std::fabs(want[i]); });
  }
  end_case(r, kn + " " + dims({B, V, L}), before);
}

// presence_frequency_penalty: ids drawn from the first 40 columns and the last (repeats), every 6th -1; counts
// exact (f32 adds of 1); logits -= freq c + pres [c > 0] (1e-6 of the terms). One launch (logits in place).
void presence(const Run& r, LL B, LL V, LL L, float freq, float pres, unsigned seed) {
  const std::string kn = "presence_frequency_penalty";
  const auto lg = rnd<float>(B * V, seed, -5.f, 5.f);
  auto ids = ints<int>(B * L, 0, std::min<LL>(40, V - 1), seed + 1);
  for (LL i = 0; i < B * L; ++i) {
    if (i % 6 == 5) ids[i] = -1;
    else if (i % 9 == 4) ids[i] = int(V - 1);
  }
  DevLocal<int> idd({B, L}, ids);
  DevLocal<float> cd({B * V, 1}, {}), ld({B, V}, lg);
  const int before = begin_case(r);
  if (run(r, kn, 1, idd.view(), cd.view(), ld.view(), freq, pres)) {
    std::vector<double> cnt(B * V, 0.0);
    for (LL i = 0; i < B * L; ++i)
      if (ids[i] >= 0) cnt[i / L * V + ids[i]] += 1;
    check(r, kn + ".counts", cd.download(), [&](LL i) { return cnt[i]; }, exact());
    check(r, kn + ".logits", ld.download(), [&](LL i) { return lg[i] - freq * cnt[i] - (cnt[i] > 0 ? pres : 0.0); },
          [&](LL i) { return 1e-6 * (std::fabs(lg[i]) + freq * cnt[i] + pres); });
  }
  end_case(r, kn + " " + dims({B, V, L}), before);
}

// min_p_filter_wide: e = exp(x / temp - max) in fp32 is within rel(e) = 4e-7 (|x / temp| + |max| + 2) + 1e-6 of
// float64's (argument roundings, ex2.approx); kept-sum fp32 adds 1e-6 more. An element whose e is within twice
// that of min_p may go either way: it may read 0 or its probability, and the other probabilities move by at most
// the sum of such e over the kept sum.
void min_p(const Run& r, LL B, LL V, float temp, float mp, unsigned seed) {
  const std::string kn = "min_p_filter_wide";
  const auto x = rnd<float>(B * V, seed, -6.f, 6.f);
  DevLocal<float> xd({B, V}, x), pd({B, V}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), pd.view(), temp, mp)) {
    std::vector<double> want(B * V), tol(B * V);
    for (LL b = 0; b < B; ++b) {
      double m = -1e300;
      for (LL v = 0; v < V; ++v) m = std::max(m, x[b * V + v] / double(temp));
      double kept = 0, amb = 0;
      std::vector<double> e(V), rel(V);
      std::vector<char> am(V);
      for (LL v = 0; v < V; ++v) {
        const double xt = x[b * V + v] / double(temp);
        e[v] = std::exp(xt - m), rel[v] = 4e-7 * (std::fabs(xt) + std::fabs(m) + 2) + 2e-6;
        am[v] = std::fabs(e[v] - mp) <= 2 * rel[v] * mp;
        if (e[v] >= mp) kept += e[v];
        if (am[v]) amb += e[v];
      }
      for (LL v = 0; v < V; ++v) {
        const LL i = b * V + v;
        const double p = e[v] / kept;
        if (am[v]) want[i] = p / 2, tol[i] = p / 2 + (rel[v] + amb / kept) * p;  // 0 or p
        else if (e[v] >= mp) want[i] = p, tol[i] = (rel[v] + 2e-6 + amb / kept) * p;
        else want[i] = 0, tol[i] = 0;
      }
    }
    check_vec(r, kn + ".probs", pd.download(), want, tol);
  }
  end_case(r, kn + " " + dims({B, V}) + " min_p " + std::to_string(mp), before);
}

// inverse_cdf_sample_wide: the fp32 running sum of V positive probabilities summing to 1 is within V 2^-24 of
// float64's (any order of adds), so any count between #{P_v < u - e} and #{P_v < u + e} (capped at V - 1) is
// accepted, e = (V + 64) 6e-8.
void inv_cdf(const Run& r, LL B, LL V, unsigned seed) {
  const std::string kn = "inverse_cdf_sample_wide";
  auto p = rnd<float>(B * V, seed, 0.f, 1.f);
  for (LL b = 0; b < B; ++b) {
    double s = 0;
    for (LL v = 0; v < V; ++v) s += p[b * V + v];
    for (LL v = 0; v < V; ++v) p[b * V + v] = float(p[b * V + v] / s);
  }
  const auto u = rnd<float>(B, seed + 1, 0.f, 1.f);
  DevLocal<float> pd({B, V}, p), ud({B, 1}, u);
  DevLocal<int> tok({B, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, pd.view(), ud.view(), tok.view())) {
    const double e = (V + 64) * 6e-8;
    std::vector<double> lo(B, 0.0), hi(B, 0.0);
    for (LL b = 0; b < B; ++b) {
      double P = 0;
      for (LL v = 0; v < V; ++v) {
        P += p[b * V + v];
        lo[b] += P < u[b] - e, hi[b] += P < u[b] + e;
      }
      lo[b] = std::min<double>(lo[b], V - 1), hi[b] = std::min<double>(hi[b], V - 1);
    }
    check(r, kn + ".tok", tok.download(), [&](LL b) { return (lo[b] + hi[b]) / 2; }, [&](LL b) { return (hi[b] - lo[b]) / 2; });
  }
  end_case(r, kn + " " + dims({B, V}), before);
}

// beam_search_topk_two_phase: candidates float(logp + bscore) (the device's one fp32 add, so exact), the 8 largest
// per batch, ties to the lower flat index; values and flat indices exact.
void beam(const Run& r, LL B, LL V, unsigned seed) {
  const std::string kn = "beam_search_topk_two_phase";
  const auto lp = rnd<float>(4 * B * V, seed, -12.f, 0.f), bsc = rnd<float>(4 * B, seed + 1, -5.f, 0.f);
  const LL NC = (V + 2047) / 2048;
  DevLocal<float> ld({4 * B, V}, lp), bd({4 * B, 1}, bsc), pv({4 * B, NC * 8}, {}), ts({B, 8}, {});
  DevLocal<int> pi({4 * B, NC * 8}, {}), ti({B, 8}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), bd.view(), pv.view(), pi.view(), ts.view(), ti.view())) {
    std::vector<double> ws(B * 8), wi(B * 8);
    for (LL b = 0; b < B; ++b) {
      std::vector<std::pair<float, LL>> c;
      for (LL j = 0; j < 4; ++j)
        for (LL v = 0; v < V; ++v) c.push_back({lp[(4 * b + j) * V + v] + bsc[4 * b + j], j * V + v});
      std::partial_sort(c.begin(), c.begin() + 8, c.end(), [](const auto& a, const auto& d) {
        return a.first > d.first || (a.first == d.first && a.second < d.second);
      });
      for (LL q = 0; q < 8; ++q) ws[b * 8 + q] = c[q].first, wi[b * 8 + q] = double(c[q].second);
    }
    check(r, kn + ".top_s", ts.download(), [&](LL i) { return ws[i]; }, exact());
    check(r, kn + ".top_id", ti.download(), [&](LL i) { return wi[i]; }, exact());
  }
  end_case(r, kn + " " + dims({B, V}), before);
}

// ================================================================ state-space and recurrent models ==

// causal_conv1d_silu: zeros before each sequence's start; kBf + 2e-6 of the terms (5 fp32 terms, silu 2 ulp and
// its slope below 1.1).
void conv1d(const Run& r, LL B, LL T, LL C, unsigned seed) {
  const std::string kn = "causal_conv1d_silu";
  const auto x = rnd<bf16>(B * T * C, seed, -2.f, 2.f);
  const auto w = rnd<float>(4 * C, seed + 1), bias = rnd<float>(C, seed + 2);
  DevLocal<bf16> xd({B, T, C}, x), y({B, T, C}, {});
  DevLocal<float> wd({4, C}, w), bd({C}, bias);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), bd.view(), y.view())) {
    std::vector<double> want(B * T * C), tol(B * T * C);
    for (LL b = 0; b < B; ++b)
      for (LL t = 0; t < T; ++t)
        for (LL c = 0; c < C; ++c) {
          double a = bias[c], m = std::fabs(bias[c]);
          for (LL k = 0; k < 4; ++k)
            if (t - 3 + k >= 0) {
              const double v = w[k * C + c] * val(x[(b * T + t - 3 + k) * C + c]);
              a += v, m += std::fabs(v);
            }
          const LL i = (b * T + t) * C + c;
          want[i] = silu(a), tol[i] = kBf * std::fabs(want[i]) + 2e-6 * m;
        }
    check_vec(r, kn + ".y", y.download(), want, tol);
  }
  end_case(r, kn + " " + dims({B, T, C}), before);
}

// causal_conv1d_update_inplace: y f32 (1e-6 of the terms and of |y|), the state shifted exactly.
void conv_update(const Run& r, LL B, LL C, unsigned seed) {
  const std::string kn = "causal_conv1d_update_inplace";
  const auto st = rnd<float>(B * 3 * C, seed), x = rnd<float>(B * C, seed + 1), w = rnd<float>(4 * C, seed + 2),
             bias = rnd<float>(C, seed + 3);
  DevLocal<float> sd({B, 3, C}, st), xd({B, C}, x), wd({4, C}, w), bd({C}, bias), y({B, C}, {});
  const int before = begin_case(r);
  if (run(r, kn, 1, sd.view(), xd.view(), wd.view(), bd.view(), y.view())) {
    std::vector<double> want(B * C), tol(B * C), ns(B * 3 * C);
    for (LL b = 0; b < B; ++b)
      for (LL c = 0; c < C; ++c) {
        const double in[4] = {st[(b * 3) * C + c], st[(b * 3 + 1) * C + c], st[(b * 3 + 2) * C + c], x[b * C + c]};
        double a = bias[c], m = std::fabs(bias[c]);
        for (int k = 0; k < 4; ++k) a += w[k * C + c] * in[k], m += std::fabs(w[k * C + c] * in[k]);
        want[b * C + c] = silu(a), tol[b * C + c] = 1e-6 * (m + std::fabs(silu(a)));
        for (int k = 0; k < 3; ++k) ns[(b * 3 + k) * C + c] = in[k + 1];
      }
    check_vec(r, kn + ".y", y.download(), want, tol);
    check(r, kn + ".state", sd.download(), [&](LL i) { return ns[i]; }, exact());
  }
  end_case(r, kn + " " + dims({B, C}), before);
}

// mamba1_selective_scan: the recurrence in float64, with the state's magnitude hm (the same recurrence on absolute
// values). Per step delta (softplus: ex2.approx, logf, two adds) is within 1e-6 relative, which moves
// exp(delta A) by |delta A| 1e-6 <= 2e-6 (|delta A| <= 1.7 here) and the input term by 1e-6; with the step's
// roundings each step adds at most 4e-6 hm and carried errors shrink by dA < 1: 4e-6 (t + 2) hm. y adds kBf.
void mamba1(const Run& r, LL B, LL T, LL Dm, unsigned seed) {
  const std::string kn = "mamba1_selective_scan";
  const auto u = rnd<bf16>(B * T * Dm, seed, -2.f, 2.f), dt = rnd<bf16>(B * T * Dm, seed + 1), z = rnd<bf16>(B * T * Dm, seed + 2, -3.f, 3.f);
  const auto A = rnd<float>(Dm * 16, seed + 3, -1.f, -0.1f), Bm = rnd<float>(B * T * 16, seed + 4), Cm = rnd<float>(B * T * 16, seed + 5);
  const auto Dv = rnd<float>(Dm, seed + 6), dtb = rnd<float>(Dm, seed + 7, -1.f, 0.5f), h0 = rnd<float>(B * Dm * 16, seed + 8);
  DevLocal<bf16> ud({B, T, Dm}, u), dtd({B, T, Dm}, dt), zd({B, T, Dm}, z), y({B, T, Dm}, {});
  DevLocal<float> Ad({Dm, 16}, A), Bd({B, T, 16}, Bm), Cd({B, T, 16}, Cm), Dd({Dm}, Dv), bd({Dm}, dtb), hd({B, Dm, 16}, h0),
      hT({B, Dm, 16}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ud.view(), dtd.view(), zd.view(), Ad.view(), Bd.view(), Cd.view(), Dd.view(), bd.view(), hd.view(),
          y.view(), hT.view())) {
    std::vector<double> wy(B * T * Dm), ty(B * T * Dm), wh(B * Dm * 16), th(B * Dm * 16);
    for (LL b = 0; b < B; ++b)
      for (LL d = 0; d < Dm; ++d) {
        double h[16], hm[16];
        for (int n = 0; n < 16; ++n) h[n] = h0[(b * Dm + d) * 16 + n], hm[n] = std::fabs(h[n]);
        for (LL t = 0; t < T; ++t) {
          const LL i = (b * T + t) * Dm + d;
          const double ut = val(u[i]), delta = softplus(double(float(val(dt[i]) + dtb[d])));
          double yt = Dv[d] * ut, ym = std::fabs(Dv[d] * ut);
          for (int n = 0; n < 16; ++n) {
            const double dA = std::exp(delta * A[d * 16 + n]), in = delta * Bm[(b * T + t) * 16 + n] * ut;
            h[n] = dA * h[n] + in, hm[n] = dA * hm[n] + std::fabs(in);
            yt += Cm[(b * T + t) * 16 + n] * h[n], ym += std::fabs(Cm[(b * T + t) * 16 + n]) * hm[n];
          }
          const double g = silu(val(z[i]));
          wy[i] = yt * g, ty[i] = kBf * std::fabs(yt * g) + 4e-6 * (t + 2) * ym * std::fabs(g) + 1e-7;
        }
        for (int n = 0; n < 16; ++n) wh[(b * Dm + d) * 16 + n] = h[n], th[(b * Dm + d) * 16 + n] = 4e-6 * (T + 2) * hm[n];
      }
    check_vec(r, kn + ".y", y.download(), wy, ty);
    check_vec(r, kn + ".hT", hT.download(), wh, th);
  }
  end_case(r, kn + " " + dims({B, T, Dm}), before);
}

// mamba2_ssd_decode_step: delta (softplus of the fp32 sum, within 1e-6 relative), dA = exp(delta A) within
// |delta A| 1e-6 + 2 ulp <= 4e-6 (|delta A| <= 3 here): the state within 4e-6 of its terms; y kBf + 1e-5 of its
// terms' magnitudes (a 128-term fp32 sum of those states).
void mamba2(const Run& r, LL B, LL H, unsigned seed) {
  const std::string kn = "mamba2_ssd_decode_step";
  const auto st = rnd<float>(B * H * 64 * 128, seed);
  const auto x = rnd<bf16>(B * H * 64, seed + 1, -2.f, 2.f), z = rnd<bf16>(B * H * 64, seed + 2, -3.f, 3.f);
  const auto dt = rnd<float>(B * H, seed + 3, -2.f, 2.f), dtb = rnd<float>(H, seed + 4), A = rnd<float>(H, seed + 5, -1.f, -0.1f),
             D = rnd<float>(H, seed + 6), Bm = rnd<float>(B * 128, seed + 7), Cm = rnd<float>(B * 128, seed + 8);
  DevLocal<float> sd({B, H, 64, 128}, st), dtd({B, H}, dt), bd({H}, dtb), Ad({H}, A), Dd({H}, D), Bd({B, 128}, Bm),
      Cd({B, 128}, Cm);
  DevLocal<bf16> xd({B, H, 64}, x), zd({B, H, 64}, z), y({B, H, 64}, {});
  const int before = begin_case(r);
  if (run(r, kn, 1, sd.view(), xd.view(), zd.view(), dtd.view(), bd.view(), Ad.view(), Dd.view(), Bd.view(), Cd.view(),
          y.view())) {
    std::vector<double> ws(B * H * 64 * 128), ts(B * H * 64 * 128), wy(B * H * 64), ty(B * H * 64);
    for (LL b = 0; b < B; ++b)
      for (LL h = 0; h < H; ++h) {
        const double delta = softplus(double(float(dt[b * H + h] + dtb[h]))), dA = std::exp(delta * A[h]);
        for (LL p = 0; p < 64; ++p) {
          const LL xi = (b * H + h) * 64 + p;
          const double xv = val(x[xi]);
          double yt = D[h] * xv, ym = std::fabs(D[h] * xv);
          for (LL n = 0; n < 128; ++n) {
            const LL si = xi * 128 + n;
            const double a = dA * st[si], in = delta * xv * Bm[b * 128 + n];
            ws[si] = a + in, ts[si] = 4e-6 * (std::fabs(a) + std::fabs(in));
            yt += ws[si] * Cm[b * 128 + n], ym += (std::fabs(a) + std::fabs(in)) * std::fabs(Cm[b * 128 + n]);
          }
          const double g = silu(val(z[xi]));
          wy[xi] = yt * g, ty[xi] = kBf * std::fabs(yt * g) + 1e-5 * ym * std::fabs(g);
        }
      }
    check_vec(r, kn + ".state", sd.download(), ws, ts);
    check_vec(r, kn + ".y", y.download(), wy, ty);
  }
  end_case(r, kn + " " + dims({B, H}), before);
}

// mamba2_gated_rmsnorm_grouped: kBf + 1e-5 of the value (silu 2 ulp, the group's fp32 sum of squares, rsqrt).
void gated_rmsnorm(const Run& r, LL T, LL Dm, unsigned seed) {
  const std::string kn = "mamba2_gated_rmsnorm_grouped";
  const float eps = 1e-5f;
  const auto x = rnd<bf16>(T * Dm, seed, -2.f, 2.f), z = rnd<bf16>(T * Dm, seed + 1, -3.f, 3.f);
  const auto w = rnd<float>(Dm, seed + 2, 0.5f, 1.5f);
  DevLocal<bf16> xd({T, Dm}, x), zd({T, Dm}, z), y({T, Dm}, {});
  DevLocal<float> wd({Dm}, w);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), zd.view(), wd.view(), y.view(), eps)) {
    std::vector<double> want(T * Dm);
    for (LL t = 0; t < T; ++t)
      for (LL k = 0; k < Dm / 256; ++k) {
        double ss = 0;
        std::vector<double> g(256);
        for (LL j = 0; j < 256; ++j) {
          const LL i = t * Dm + k * 256 + j;
          g[j] = val(x[i]) * silu(val(z[i])), ss += g[j] * g[j];
        }
        const double inv = 1 / std::sqrt(ss / 256 + eps);
        for (LL j = 0; j < 256; ++j) want[t * Dm + k * 256 + j] = g[j] * inv * w[k * 256 + j];
      }
    check(r, kn + ".y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return (kBf + 1e-5) * std::fabs(want[i]) + 1e-9; });
  }
  end_case(r, kn + " " + dims({T, Dm}), before);
}

// retnet_recurrent_decode: gamma_h = 1 - 2^(-5 - h) is exact in fp32 for h <= 18; S within 3e-7 of its two
// terms; o kBf + 1e-5 of scale sum |q S| (a 64-term fp32 sum).
void retnet_rec(const Run& r, LL H, float scale, unsigned seed) {
  const std::string kn = "retnet_recurrent_decode";
  const auto S = rnd<float>(H * 64 * 64, seed);
  const auto q = rnd<bf16>(H * 64, seed + 1), k = rnd<bf16>(H * 64, seed + 2), v = rnd<bf16>(H * 64, seed + 3);
  DevLocal<float> sd({H, 64, 64}, S);
  DevLocal<bf16> qd({H, 64}, q), kd({H, 64}, k), vd({H, 64}, v), o({H, 64}, {});
  const int before = begin_case(r);
  if (run(r, kn, 1, sd.view(), qd.view(), kd.view(), vd.view(), o.view(), scale)) {
    std::vector<double> ws(H * 4096), ts(H * 4096), wo(H * 64, 0.0), to(H * 64, 0.0);
    for (LL h = 0; h < H; ++h) {
      const double gamma = 1 - std::pow(2.0, -5.0 - double(h));
      for (LL i = 0; i < 64; ++i)
        for (LL j = 0; j < 64; ++j) {
          const LL si = (h * 64 + i) * 64 + j;
          const double a = gamma * S[si], b = val(k[h * 64 + i]) * val(v[h * 64 + j]);
          ws[si] = a + b, ts[si] = 3e-7 * (std::fabs(a) + std::fabs(b));
          wo[h * 64 + j] += scale * val(q[h * 64 + i]) * ws[si];
          to[h * 64 + j] += 1e-5 * scale * std::fabs(val(q[h * 64 + i])) * (std::fabs(a) + std::fabs(b));
        }
      for (LL j = 0; j < 64; ++j) to[h * 64 + j] += kBf * std::fabs(wo[h * 64 + j]);
    }
    check_vec(r, kn + ".S", sd.download(), ws, ts);
    check_vec(r, kn + ".o", o.download(), wo, to);
  }
  end_case(r, kn + " " + dims({H}), before);
}

// rwkv4_wkv_forward: the stable recurrence in float64. y_t is a ratio of two positive weighted sums (aa, bb with
// the current token's term), each weight a product of exps of O(1) fp32 arguments (pp stays within the keys'
// range): each step adds about 1e-6 relative to both sums and the ratio's error is at most twice that, so y_t is
// within 3e-6 (t + 2) of the largest |v| so far.
void rwkv4(const Run& r, LL B, LL T, LL C, unsigned seed) {
  const std::string kn = "rwkv4_wkv_forward";
  const auto k = rnd<float>(B * T * C, seed), v = rnd<float>(B * T * C, seed + 1), u = rnd<float>(C, seed + 2);
  auto w = rnd<float>(C, seed + 3);
  for (auto& x : w) x = -std::exp(x);
  DevLocal<float> kd({B, T, C}, k), vd({B, T, C}, v), wd({C}, w), ud({C}, u), y({B, T, C}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, kd.view(), vd.view(), wd.view(), ud.view(), y.view())) {
    std::vector<double> want(B * T * C), tol(B * T * C);
    for (LL b = 0; b < B; ++b)
      for (LL c = 0; c < C; ++c) {
        double aa = 0, bb = 0, pp = -1e38, vmax = 0;
        for (LL t = 0; t < T; ++t) {
          const LL i = (b * T + t) * C + c;
          const double kt = k[i], vt = v[i];
          vmax = std::max(vmax, std::fabs(vt));
          double ww = u[c] + kt, p = std::max(pp, ww), e1 = std::exp(pp - p), e2 = std::exp(ww - p);
          want[i] = (e1 * aa + e2 * vt) / (e1 * bb + e2), tol[i] = 3e-6 * (t + 2) * vmax;
          ww = w[c] + pp, p = std::max(ww, kt), e1 = std::exp(ww - p), e2 = std::exp(kt - p);
          aa = e1 * aa + e2 * vt, bb = e1 * bb + e2, pp = p;
        }
      }
    check_vec(r, kn + ".y", y.download(), want, tol);
  }
  end_case(r, kn + " " + dims({B, T, C}), before);
}

// rwkv_token_shift_mix: kBf + 3e-7 of the two products (1 - mu, two products, a sum); last = x[b, T - 1] exactly.
void token_shift(const Run& r, LL B, LL T, LL C, unsigned seed) {
  const std::string kn = "rwkv_token_shift_mix";
  const auto x = rnd<bf16>(B * T * C, seed, -2.f, 2.f), last = rnd<bf16>(B * C, seed + 1, -2.f, 2.f);
  const auto mk = rnd<float>(C, seed + 2, 0.f, 1.f), mv = rnd<float>(C, seed + 3, 0.f, 1.f), mr = rnd<float>(C, seed + 4, 0.f, 1.f);
  DevLocal<bf16> xd({B, T, C}, x), ld({B, C}, last), xk({B, T, C}, {}), xv({B, T, C}, {}), xr({B, T, C}, {});
  DevLocal<float> mkd({C}, mk), mvd({C}, mv), mrd({C}, mr);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), ld.view(), mkd.view(), mvd.view(), mrd.view(), xk.view(), xv.view(), xr.view())) {
    auto xp = [&](LL i) {
      const LL c = i % C, t = i / C % T, b = i / (C * T);
      return t == 0 ? val(last[b * C + c]) : val(x[i - C]);
    };
    const std::vector<float>* mus[3] = {&mk, &mv, &mr};
    const DevLocal<bf16>* outs[3] = {&xk, &xv, &xr};
    const char* nm[3] = {".xk", ".xv", ".xr"};
    for (int q = 0; q < 3; ++q) {
      const auto& mu = *mus[q];
      auto want = [&](LL i) { return val(x[i]) * mu[i % C] + xp(i) * (1 - mu[i % C]); };
      check(r, kn + nm[q], outs[q]->download(), want, [&](LL i) {
        return kBf * std::fabs(want(i)) + 3e-7 * (std::fabs(val(x[i]) * mu[i % C]) + std::fabs(xp(i) * (1 - mu[i % C])));
      });
    }
    check(r, kn + ".last", ld.download(), [&](LL i) { return val(x[(i / C * T + T - 1) * C + i % C]); }, exact());
  }
  end_case(r, kn + " " + dims({B, T, C}), before);
}

// ================================================================ LoRA and quantised linear layers ==
// f32 accumulation over K: 1e-5 of the products' magnitude; a bf16 output adds kBf.

// lora_linear_fused / lora_linear_delta_epilogue: u against bf16(x la^T); y (and d) against the device's u (its
// rounding is the kernel's, not counted twice).
void lora(const Run& r, const std::string& kn, LL T, LL N, LL Kd, unsigned seed) {
  const bool delta = kn == "lora_linear_delta_epilogue";
  const auto x = rnd<bf16>(T * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1), la = rnd<bf16>(16 * Kd, seed + 2),
             lb = rnd<bf16>(N * 16, seed + 3, -0.5f, 0.5f);
  DevLocal<bf16> xd({T, Kd}, x), wd({N, Kd}, w), lad({16, Kd}, la), u({T, 16}, {}), lbd({N, 16}, lb), y({T, N}, {});
  DevLocal<float> d({T, N}, {});
  const int before = begin_case(r);
  const bool ok = delta ? run(r, kn, 2, xd.view(), wd.view(), lad.view(), u.view(), lbd.view(), d.view(), y.view())
                        : run(r, kn, 2, xd.view(), wd.view(), lad.view(), u.view(), lbd.view(), y.view());
  if (ok) {
    const auto gu = gemm(T, 16, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(la[n * Kd + q]); });
    const auto ud = u.download();
    check(r, kn + ".u", ud, [&](LL i) { return gu.c[i]; }, [&](LL i) { return kBf * std::fabs(gu.c[i]) + 1e-5 * gu.mag[i]; });
    const auto base = gemm(T, N, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(w[n * Kd + q]); });
    const auto low = gemm(T, N, 16, [&](LL m, LL q) { return val(ud[m * 16 + q]); }, [&](LL q, LL n) { return val(lb[n * 16 + q]); });
    if (delta)
      check(r, kn + ".d", d.download(), [&](LL i) { return low.c[i]; }, [&](LL i) { return 1e-5 * low.mag[i]; });
    check(r, kn + ".y", y.download(), [&](LL i) { return base.c[i] + low.c[i]; },
          [&](LL i) { return kBf * std::fabs(base.c[i] + low.c[i]) + 1e-5 * (base.mag[i] + low.mag[i]); });
  }
  end_case(r, kn + " " + dims({T, N, Kd}) + (N % 8 || Kd % 8 ? " (general twin)" : ""), before);
}

// multi_lora_bgmv: idx in -1 .. NA - 1 (-1 adds 0); u f32 (1e-5 of the products); y += scale u Bt against the
// device's u (17 fp32 terms: 2e-6 of their magnitudes). One launch (y in place).
void bgmv(const Run& r, LL T, LL H, LL N, LL NA, float scale, unsigned seed) {
  const std::string kn = "multi_lora_bgmv";
  const auto x = rnd<bf16>(T * H, seed), A = rnd<bf16>(NA * 16 * H, seed + 1), Bt = rnd<bf16>(NA * 16 * N, seed + 2);
  const auto idx = ints<int>(T, -1, NA - 1, seed + 3);
  const auto y0 = rnd<float>(T * N, seed + 4);
  DevLocal<bf16> xd({T, H}, x), Ad({NA * 16, H}, A), Bd({NA * 16, N}, Bt);
  DevLocal<int> id({T}, idx);
  DevLocal<float> u({T, 16}, {}), y({T, N}, y0);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), id.view(), Ad.view(), Bd.view(), u.view(), y.view(), scale)) {
    std::vector<double> wu(T * 16, 0.0), mu(T * 16, 0.0);
    for (LL t = 0; t < T; ++t)
      if (idx[t] >= 0)
        for (LL j = 0; j < 16; ++j)
          for (LL h = 0; h < H; ++h) {
            const double p = val(x[t * H + h]) * val(A[(idx[t] * 16 + j) * H + h]);
            wu[t * 16 + j] += p, mu[t * 16 + j] += std::fabs(p);
          }
    const auto ud = u.download();
    check(r, kn + ".u", ud, [&](LL i) { return wu[i]; }, [&](LL i) { return 1e-5 * mu[i]; });
    std::vector<double> wy(T * N), ty(T * N);
    for (LL t = 0; t < T; ++t)
      for (LL n = 0; n < N; ++n) {
        double s = y0[t * N + n], m = std::fabs(s);
        if (idx[t] >= 0)
          for (LL j = 0; j < 16; ++j) {
            const double p = double(scale) * ud[t * 16 + j] * val(Bt[(idx[t] * 16 + j) * N + n]);
            s += p, m += std::fabs(p);
          }
        wy[t * N + n] = s, ty[t * N + n] = 2e-6 * m;
      }
    check_vec(r, kn + ".y", y.download(), wy, ty);
  }
  end_case(r, kn + " " + dims({T, H, N, NA}), before);
}

// smoothquant_per_token_int8: the device's r = xs / s is within 1e-6 |r| (reciprocal products, 2 ulp each, and
// s's roundings) of float64's; a value within that of a .5 boundary may round either way (the findings note it),
// every other q exact; scale within 1e-6 relative.
void smoothquant(const Run& r, LL T, LL H, unsigned seed) {
  const std::string kn = "smoothquant_per_token_int8";
  const auto x = rnd<bf16>(T * H, seed, -3.f, 3.f);
  const auto sm = rnd<float>(H, seed + 1, 0.5f, 2.f);
  DevLocal<bf16> xd({T, H}, x);
  DevLocal<float> sd({H}, sm), sc({T, 1}, {});
  DevLocal<int> q({T, H}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), sd.view(), q.view(), sc.view())) {
    std::vector<double> s(T), wq(T * H), tq(T * H, 0.0);
    for (LL t = 0; t < T; ++t) {
      double mx = 0;
      for (LL j = 0; j < H; ++j) mx = std::max(mx, std::fabs(val(x[t * H + j]) / sm[j]));
      s[t] = std::max(mx, 1e-8) / 127;
      for (LL j = 0; j < H; ++j) {
        const double rr = val(x[t * H + j]) / sm[j] / s[t], a = std::fabs(rr), fl = std::floor(a);
        const double sg = rr < 0 ? -1.0 : 1.0;
        if (std::fabs(a - fl - 0.5) <= 1e-6 * a + 1e-7) wq[t * H + j] = sg * (fl + 0.5), tq[t * H + j] = 0.5;
        else wq[t * H + j] = std::min(127.0, std::max(-127.0, std::round(rr)));
      }
    }
    check_vec(r, kn + ".q", q.download(), wq, tq);
    check(r, kn + ".scale", sc.download(), [&](LL t) { return s[t]; }, [&](LL t) { return 1e-6 * s[t]; });
  }
  end_case(r, kn + " " + dims({T, H}), before);
}

// fp8_w8a8_rowcol_scale_bias: e4m3 products are exact in fp32, but Hopper's fp8 wgmma accumulates with fewer bits
// than fp32 (the template's run here missed 1e-5 of the magnitude by up to 6x; sets 11, 14 and 22 measured and
// bound it the same way): kBf + 2.5e-4 sx sw of the magnitude + 1e-6 |bias|.
void fp8_gemm(const Run& r, LL T, LL N, LL Kd, unsigned seed) {
  const std::string kn = "fp8_w8a8_rowcol_scale_bias";
  const auto xq = rnd<f8e4m3>(T * Kd, seed, -4.f, 4.f), wq = rnd<f8e4m3>(N * Kd, seed + 1, -4.f, 4.f);
  const auto sx = rnd<float>(T, seed + 2, 0.5f, 2.f), sw = rnd<float>(N, seed + 3, 0.01f, 0.1f);
  const auto bias = rnd<bf16>(N, seed + 4);
  DevLocal<f8e4m3> xd({T, Kd}, xq), wd({N, Kd}, wq);
  DevLocal<float> sxd({T}, sx), swd({N}, sw);
  DevLocal<bf16> bd({N}, bias), y({T, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), sxd.view(), swd.view(), bd.view(), y.view())) {
    const auto g = gemm(T, N, Kd, [&](LL m, LL q) { return val(xq[m * Kd + q]); }, [&](LL q, LL n) { return val(wq[n * Kd + q]); });
    auto want = [&](LL i) { return sx[i / N] * double(sw[i % N]) * g.c[i] + val(bias[i % N]); };
    check(r, kn + ".y", y.download(), want, [&](LL i) {
      return kBf * std::fabs(want(i)) + 2.5e-4 * sx[i / N] * double(sw[i % N]) * g.mag[i] + 1e-6 * std::fabs(val(bias[i % N]));
    });
  }
  end_case(r, kn + " " + dims({T, N, Kd}) + (N % 8 ? " (general twin)" : ""), before);
}

// w8a16_groupwise_gemm: each weight dequantised as the device does (fp32 product, then bf16: replicated bit for
// bit), then kBf + 1e-5 of the magnitude.
void w8a16(const Run& r, LL T, LL N, LL Kd, unsigned seed) {
  const std::string kn = "w8a16_groupwise_gemm";
  const auto x = rnd<bf16>(T * Kd, seed);
  const auto wq = ints<int>(N * Kd, -127, 127, seed + 1);
  const auto ws = rnd<float>(N * (Kd / 128), seed + 2, 0.001f, 0.02f);
  DevLocal<bf16> xd({T, Kd}, x), y({T, N}, {});
  DevLocal<int> wd({N, Kd}, wq);
  DevLocal<float> sd({N, Kd / 128}, ws);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), sd.view(), y.view())) {
    const auto g = gemm(T, N, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); },
                        [&](LL q, LL n) { return bf16r(float(wq[n * Kd + q]) * ws[n * (Kd / 128) + q / 128]); });
    check(r, kn + ".y", y.download(), [&](LL i) { return g.c[i]; }, [&](LL i) { return kBf * std::fabs(g.c[i]) + 1e-5 * g.mag[i]; });
  }
  end_case(r, kn + " " + dims({T, N, Kd}), before);
}

// decode_add_layernorm: res = bf16(x + res) exactly (the fp32 sum of two bf16 values is exact here, then one
// rounding, replicated); y from the rounded residual: kBf + 1e-5 (|r - mu| + mean |r|) rstd |gamma| (the mean's
// and the variance's fp32 sums) + 1e-6 |beta|. One launch (res in place).
void add_ln(const Run& r, LL B, LL H, unsigned seed) {
  const std::string kn = "decode_add_layernorm";
  const float eps = 1e-5f;
  const auto x = rnd<bf16>(B * H, seed, -2.f, 2.f), res = rnd<bf16>(B * H, seed + 1, -2.f, 2.f);
  const auto gm = rnd<float>(H, seed + 2, 0.5f, 1.5f), bt = rnd<float>(H, seed + 3);
  DevLocal<bf16> xd({B, H}, x), rd({B, H}, res), y({B, H}, {});
  DevLocal<float> gd({H}, gm), bd({H}, bt);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), rd.view(), gd.view(), bd.view(), y.view(), eps)) {
    std::vector<double> rn(B * H), wy(B * H), ty(B * H);
    for (LL b = 0; b < B; ++b) {
      double mu = 0, am = 0, var = 0;
      for (LL j = 0; j < H; ++j) rn[b * H + j] = bf16r(float(val(x[b * H + j])) + float(val(res[b * H + j])));
      for (LL j = 0; j < H; ++j) mu += rn[b * H + j], am += std::fabs(rn[b * H + j]);
      mu /= H, am /= H;
      for (LL j = 0; j < H; ++j) var += (rn[b * H + j] - mu) * (rn[b * H + j] - mu);
      const double rsd = 1 / std::sqrt(var / H + eps);
      for (LL j = 0; j < H; ++j) {
        const LL i = b * H + j;
        wy[i] = (rn[i] - mu) * rsd * gm[j] + bt[j];
        ty[i] = kBf * std::fabs(wy[i]) + 1e-5 * (std::fabs(rn[i] - mu) + am) * rsd * gm[j] + 1e-6 * std::fabs(bt[j]);
      }
    }
    check(r, kn + ".res", rd.download(), [&](LL i) { return rn[i]; }, exact());
    check_vec(r, kn + ".y", y.download(), wy, ty);
  }
  end_case(r, kn + " " + dims({B, H}), before);
}

// ================================================================ tensor-parallel decode (multi-rank) ==

// Every rank's bf16 operand of n elements (a fresh seed per rank).
std::vector<std::vector<bf16>> per_rank(int W, LL n, unsigned seed) {
  std::vector<std::vector<bf16>> v(W);
  for (int p = 0; p < W; ++p) v[p] = rnd<bf16>(n, rs(seed, p));
  return v;
}

// tp_decode_rowparallel_ar_add_rmsnorm: part = the sum over ranks of h_p wo_p^T (fp32 GEMMs and an fp32
// all-reduce: 1e-5 of the magnitude); res = bf16(res + part) (kBf + 1e-5 magnitude); y from the device's res
// (kBf + 1e-5 of the value: the fp32 sum of squares and rsqrt). The residual is the same on every rank (a
// replicated stream), each rank's h and wo its own.
void tp_row(const Run& r, LL B, LL Fl, LL H, unsigned seed) {
  const std::string kn = "tp_decode_rowparallel_ar_add_rmsnorm";
  const int W = r.W, me = r.me;
  const float eps = 1e-6f;
  const auto h = per_rank(W, B * Fl, seed), wo = per_rank(W, H * Fl, seed + 1);
  const auto res = rnd<bf16>(B * H, seed + 2, -2.f, 2.f);
  const auto g = rnd<float>(H, seed + 3, 0.5f, 1.5f);
  DevLocal<bf16> hd({B, Fl}, h[me]), wd({H, Fl}, wo[me]), rd({B, H}, res), y({B, H}, {});
  DevLocal<float> gd({H}, g);
  SymArg<float> part(r.ctx, {B, H}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 1, hd.view(), wd.view(), part.view, rd.view(), gd.view(), y.view(), eps)) {
    std::vector<double> s(B * H, 0.0), mag(B * H, 0.0);
    for (int p = 0; p < W; ++p) {
      const auto gp = gemm(B, H, Fl, [&](LL m, LL q) { return val(h[p][m * Fl + q]); }, [&](LL q, LL n) { return val(wo[p][n * Fl + q]); });
      for (LL i = 0; i < B * H; ++i) s[i] += gp.c[i], mag[i] += gp.mag[i];
    }
    check(r, kn + ".part", part.download(), [&](LL i) { return s[i]; }, [&](LL i) { return 1e-5 * mag[i]; });
    const auto rn = rd.download();
    check(r, kn + ".res", rn, [&](LL i) { return val(res[i]) + s[i]; },
          [&](LL i) { return kBf * std::fabs(val(res[i]) + s[i]) + 1e-5 * mag[i]; });
    std::vector<double> wy(B * H);
    for (LL b = 0; b < B; ++b) {
      double ss = 0;
      for (LL j = 0; j < H; ++j) ss += val(rn[b * H + j]) * val(rn[b * H + j]);
      const double inv = 1 / std::sqrt(ss / H + eps);
      for (LL j = 0; j < H; ++j) wy[b * H + j] = val(rn[b * H + j]) * inv * g[j];
    }
    check(r, kn + ".y", y.download(), [&](LL i) { return wy[i]; }, [&](LL i) { return (kBf + 1e-5) * std::fabs(wy[i]); });
  }
  end_case(r, kn + " " + dims({B, Fl, H}) + (Fl % 8 ? " (general twin)" : ""), before);
}

// tp_decode_colparallel_qkv_allgather: x the same on every rank, w and bias each rank's; part (this rank's) and
// full (every rank's block) against bf16(x w_p^T + bias_p): kBf + 1e-5 of the magnitude.
void tp_col(const Run& r, LL B, LL Kd, LL Nl, unsigned seed) {
  const std::string kn = "tp_decode_colparallel_qkv_allgather";
  const int W = r.W, me = r.me;
  const auto x = rnd<bf16>(B * Kd, seed);
  const auto w = per_rank(W, Nl * Kd, seed + 1);
  std::vector<std::vector<float>> bias(W);
  for (int p = 0; p < W; ++p) bias[p] = rnd<float>(Nl, rs(seed + 2, p));
  DevLocal<bf16> xd({B, Kd}, x), wd({Nl, Kd}, w[me]), full({B, W * Nl}, {});
  DevLocal<float> bd({Nl}, bias[me]);
  SymArg<bf16> part(r.ctx, {B, Nl}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), bd.view(), part.view, full.view())) {
    std::vector<double> want(B * W * Nl), tol(B * W * Nl);
    for (int p = 0; p < W; ++p) {
      const auto gp = gemm(B, Nl, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(w[p][n * Kd + q]); });
      for (LL b = 0; b < B; ++b)
        for (LL j = 0; j < Nl; ++j) {
          const LL i = b * W * Nl + p * Nl + j;
          want[i] = gp.c[b * Nl + j] + bias[p][j];
          tol[i] = kBf * std::fabs(want[i]) + 1e-5 * (gp.mag[b * Nl + j] + std::fabs(bias[p][j]));
        }
    }
    check_vec(r, kn + ".full", full.download(), want, tol);
    check(r, kn + ".part", part.download(), [&](LL i) { return want[i / Nl * W * Nl + me * Nl + i % Nl]; },
          [&](LL i) { return tol[i / Nl * W * Nl + me * Nl + i % Nl]; });
  }
  end_case(r, kn + " " + dims({B, Kd, Nl}) + (Nl % 8 ? " (general twin)" : ""), before);
}

// An argmax answer `got` (a global column) for one row: valid when inside [lo, hi) and its float64 value is within
// 2 tol of the row's largest there (the device's values are within tol of float64's, so only such near-ties may
// flip); returns a description of the failure, or "".
std::string argmax_ok(LL got, LL lo, LL hi, const std::function<double(LL)>& value, double tol) {
  double best = -1e300;
  for (LL c = lo; c < hi; ++c) best = std::max(best, value(c));
  if (got < lo || got >= hi) return "column " + std::to_string(got) + " outside [" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
  if (!(value(got) >= best - 2 * tol))
    return "column " + std::to_string(got) + " value " + std::to_string(value(got)) + ", max " + std::to_string(best);
  return "";
}
void expect_argmax(const Run& r, const std::string& what, LL got, LL lo, LL hi, const std::function<double(LL)>& value,
                   double tol) {
  const std::string e = argmax_ok(got, lo, hi, value, tol);
  if (!e.empty()) pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + ": " + e);
}

// vp_lm_head_greedy: logits (this rank's) within 1e-5 of the magnitude; best_i, all_i and tok argmaxes within
// that bound of the maxima of their ranges (rank me's columns, rank p's, all); all_v within the bound of rank p's
// maximum.
void lm_head(const Run& r, LL B, LL Kd, LL Vl, unsigned seed) {
  const std::string kn = "vp_lm_head_greedy";
  const int W = r.W, me = r.me;
  const auto x = rnd<bf16>(B * Kd, seed);
  const auto w = per_rank(W, Vl * Kd, seed + 1);
  DevLocal<bf16> xd({B, Kd}, x), wd({Vl, Kd}, w[me]);
  DevLocal<float> lg({B, Vl}, {});
  DevLocal<int> tok({B}, {});
  SymArg<float> bv(r.ctx, {B, 1}, nullptr), av(r.ctx, {B, W}, nullptr);
  SymArg<int> bi(r.ctx, {B, 1}, nullptr), ai(r.ctx, {B, W}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), lg.view(), bv.view, bi.view, av.view, ai.view, tok.view())) {
    std::vector<Gemm> P;
    double tol = 0;
    for (int p = 0; p < W; ++p) {
      P.push_back(gemm(B, Vl, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(w[p][n * Kd + q]); }));
      for (double m : P.back().mag) tol = std::max(tol, 1e-5 * m);
    }
    check(r, kn + ".logits", lg.download(), [&](LL i) { return P[me].c[i]; }, [&](LL i) { return 1e-5 * P[me].mag[i]; });
    const auto gbi = bi.download(), gai = ai.download(), gtok = tok.download();
    const auto gav = av.download();
    for (LL b = 0; b < B; ++b) {
      auto value = [&](LL c) { return P[c / Vl].c[b * Vl + c % Vl]; };
      const std::string row = " row " + std::to_string(b);
      expect_argmax(r, kn + ".best_i" + row, gbi[b], me * Vl, (me + 1) * Vl, value, tol);
      expect_argmax(r, kn + ".tok" + row, gtok[b], 0, W * Vl, value, tol);
      for (int p = 0; p < W; ++p) {
        expect_argmax(r, kn + ".all_i" + row + " rank " + std::to_string(p), gai[b * W + p], p * Vl, (p + 1) * Vl, value, tol);
        double mx = -1e300;
        for (LL c = p * Vl; c < (p + 1) * Vl; ++c) mx = std::max(mx, value(c));
        if (!(std::fabs(gav[b * W + p] - mx) <= tol))
          pkt::fail(kn + ".all_v" + row + " W=" + std::to_string(W) + ": got " + std::to_string(gav[b * W + p]) + ", want " +
                    std::to_string(mx));
      }
    }
  }
  end_case(r, kn + " " + dims({B, Kd, Vl}) + (Kd % 8 ? " (general twin)" : ""), before);
}

// vp_topk8_allgather: distinct values (a shuffled grid of multiples of 2^-10, exact in f32), so every top 8 is
// unique: cv / ci, gv / gi and the global top_v / top_i exact on every rank.
void topk8(const Run& r, LL B, LL Vl, unsigned seed) {
  const std::string kn = "vp_topk8_allgather";
  const int W = r.W, me = r.me;
  const LL V = W * Vl;
  const auto perm = shuffled(B * V, seed);
  auto value = [&](LL b, LL c) { return float(double(perm[b * V + c]) - double(B * V) / 2) / 1024.0f; };
  std::vector<float> mine(B * Vl);
  for (LL b = 0; b < B; ++b)
    for (LL v = 0; v < Vl; ++v) mine[b * Vl + v] = value(b, me * Vl + v);
  DevLocal<float> ld({B, Vl}, mine), tv({B, 8}, {});
  DevLocal<int> ti({B, 8}, {});
  SymArg<float> cv(r.ctx, {B, 8}, nullptr), gv(r.ctx, {B, 8 * W}, nullptr);
  SymArg<int> ci(r.ctx, {B, 8}, nullptr), gi(r.ctx, {B, 8 * W}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), cv.view, ci.view, gv.view, gi.view, tv.view(), ti.view())) {
    // Each rank's top 8 (largest first) and the global one.
    auto top = [&](LL b, LL lo, LL hi) {
      std::vector<LL> c;
      for (LL x = lo; x < hi; ++x) c.push_back(x);
      std::partial_sort(c.begin(), c.begin() + 8, c.end(), [&](LL a, LL d) { return value(b, a) > value(b, d); });
      c.resize(8);
      return c;
    };
    std::vector<double> wgv(B * 8 * W), wgi(B * 8 * W), wtv(B * 8), wti(B * 8);
    for (LL b = 0; b < B; ++b) {
      for (int p = 0; p < W; ++p) {
        const auto t = top(b, p * Vl, (p + 1) * Vl);
        for (int k = 0; k < 8; ++k) wgv[b * 8 * W + p * 8 + k] = value(b, t[k]), wgi[b * 8 * W + p * 8 + k] = double(t[k]);
      }
      const auto t = top(b, 0, V);
      for (int k = 0; k < 8; ++k) wtv[b * 8 + k] = value(b, t[k]), wti[b * 8 + k] = double(t[k]);
    }
    auto own = [&](const std::vector<double>& g) {
      return [&g, W, me](LL i) { return g[i / 8 * 8 * W + me * 8 + i % 8]; };
    };
    check(r, kn + ".cv", cv.download(), own(wgv), exact());
    check(r, kn + ".ci", ci.download(), own(wgi), exact());
    check(r, kn + ".gv", gv.download(), [&](LL i) { return wgv[i]; }, exact());
    check(r, kn + ".gi", gi.download(), [&](LL i) { return wgi[i]; }, exact());
    check(r, kn + ".top_v", tv.download(), [&](LL i) { return wtv[i]; }, exact());
    check(r, kn + ".top_i", ti.download(), [&](LL i) { return wti[i]; }, exact());
  }
  end_case(r, kn + " " + dims({B, Vl}), before);
}

// vp_gumbel_max_sample: one global [B, Vg] logits table split into W column blocks (Vg divisible by 1..4), the
// noise g = -log(-log(u)) with u replicated bit for bit (uniform_at(seed, {b, global column})), y = x / temp + g in
// float64. The device's y is within 4e-6 (|x / temp| + |g| + 1) of it (x * (1 / temp): 2 roundings; two logf of
// 1-2 ulp, the inner one's relative error becoming an absolute one of g; the add), so tok (the same for every W),
// cand_i and all_i are argmaxes within twice the row's largest such bound.
void gumbel(const Run& r, LL B, LL Vg, LL seed, float temp, unsigned s) {
  const std::string kn = "vp_gumbel_max_sample";
  const int W = r.W, me = r.me;
  const LL Vl = Vg / W;
  const auto x = rnd<float>(B * Vg, s, -3.f, 3.f);
  std::vector<float> mine(B * Vl);
  for (LL b = 0; b < B; ++b)
    for (LL v = 0; v < Vl; ++v) mine[b * Vl + v] = x[b * Vg + me * Vl + v];
  DevLocal<float> ld({B, Vl}, mine);
  DevLocal<long long> tok({B}, {});
  SymArg<float> cv(r.ctx, {B, 1}, nullptr), av(r.ctx, {B, W}, nullptr);
  SymArg<int> ci(r.ctx, {B, 1}, nullptr), ai(r.ctx, {B, W}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), cv.view, ci.view, av.view, ai.view, tok.view(), seed, temp)) {
    const auto gci = ci.download(), gai = ai.download();
    const auto gtok = tok.download();
    for (LL b = 0; b < B; ++b) {
      std::vector<double> y(Vg);
      double tol = 0;
      for (LL c = 0; c < Vg; ++c) {
        const double u = uniform_at(seed, {b, c});
        const double g = u > 0 ? -std::log(-std::log(u)) : -1e300;
        const double xt = x[b * Vg + c] / double(temp);
        y[c] = xt + g;
        if (u > 0) tol = std::max(tol, 4e-6 * (std::fabs(xt) + std::fabs(g) + 1));
      }
      auto value = [&](LL c) { return y[c]; };
      const std::string row = " row " + std::to_string(b);
      expect_argmax(r, kn + ".cand_i" + row, gci[b], me * Vl, (me + 1) * Vl, value, tol);
      expect_argmax(r, kn + ".tok" + row, gtok[b], 0, Vg, value, tol);
      for (int p = 0; p < W; ++p)
        expect_argmax(r, kn + ".all_i" + row + " rank " + std::to_string(p), gai[b * W + p], p * Vl, (p + 1) * Vl, value, tol);
    }
  }
  end_case(r, kn + " " + dims({B, Vg}) + " seed " + std::to_string(seed), before);
}

// ================================================================ the cases ==

void single_gpu_cases(const Run& r) {
  unsigned s = 100;
  // KV cache writes.
  mla_write(r, 37, 50, 64, s += 100);
  mla_write(r, 1, 3, 4, s += 100);
  swa_append(r, 37, 200, 3, 16, s += 100);
  swa_append(r, 1, 64, 1, 4, s += 100);
  static_cache(r, 3, 5, 7, 100, s += 100);
  static_cache(r, 2, 3, 4, 128, s += 100);
  kv_copy(r, 10, 20, 300, 3, s += 100);
  kv_copy(r, 4, 5, 64, 2, s += 100);
  // Rotary.
  rope_gptj(r, 37, 3, 50, s += 100);
  rope_gptj(r, 1, 1, 1, s += 100);
  rope_llama(r, 37, 3, 1, 500000.f, 500, s += 100);
  rope_llama(r, 5, 2, 2, 10000.f, 8000, s += 100);
  rope_partial(r, 37, 3, 50, s += 100);
  rope_partial(r, 1, 1, 2, s += 100);
  mrope(r, 37, 2, 300, s += 100);
  mrope(r, 1, 1, 5, s += 100);
  // Sampling helpers.
  softcap(r, 5, 3000, 30.f, 0.7f, s += 100);
  softcap(r, 1, 100, 50.f, 1.f, s += 100);
  rep_penalty(r, 3, 1000, 100, 1.3f, s += 100);
  rep_penalty(r, 1, 50, 7, 2.f, s += 100);
  presence(r, 3, 1500, 300, 0.5f, 0.3f, s += 100);
  presence(r, 1, 41, 5, 1.f, 1.f, s += 100);
  min_p(r, 5, 3000, 0.8f, 0.05f, s += 100);
  min_p(r, 1, 100, 1.5f, 0.2f, s += 100);
  inv_cdf(r, 5, 3000, s += 100);
  inv_cdf(r, 1, 100, s += 100);
  beam(r, 3, 3000, s += 100);
  beam(r, 5, 100, s += 100);
  // State-space and recurrent models.
  conv1d(r, 2, 37, 300, s += 100);
  conv1d(r, 1, 2, 128, s += 100);
  conv_update(r, 3, 300, s += 100);
  conv_update(r, 1, 256, s += 100);
  mamba1(r, 2, 37, 100, s += 100);
  mamba1(r, 1, 1, 64, s += 100);
  mamba2(r, 2, 3, s += 100);
  gated_rmsnorm(r, 37, 512, s += 100);
  gated_rmsnorm(r, 1, 256, s += 100);
  retnet_rec(r, 12, 0.125f, s += 100);
  rwkv4(r, 2, 37, 300, s += 100);
  rwkv4(r, 1, 1, 256, s += 100);
  token_shift(r, 2, 37, 300, s += 100);
  token_shift(r, 1, 1, 256, s += 100);
  // LoRA and quantised linear layers: template sizes (K, N multiples of 8) and twins.
  lora(r, "lora_linear_fused", 200, 264, 200, s += 100);
  lora(r, "lora_linear_fused", 37, 100, 100, s += 100);
  lora(r, "lora_linear_fused", 300, 520, 1000, s += 100);  // the trailing product as further K steps of the template
  lora(r, "lora_linear_delta_epilogue", 200, 264, 200, s += 100);
  lora(r, "lora_linear_delta_epilogue", 37, 100, 100, s += 100);
  bgmv(r, 37, 1000, 300, 3, 0.5f, s += 100);
  bgmv(r, 1, 512, 256, 1, 2.f, s += 100);
  smoothquant(r, 37, 3000, s += 100);
  smoothquant(r, 1, 4096, s += 100);
  fp8_gemm(r, 200, 264, 272, s += 100);
  fp8_gemm(r, 37, 100, 64, s += 100);
  w8a16(r, 37, 100, 384, s += 100);
  w8a16(r, 130, 64, 128, s += 100);
  add_ln(r, 5, 3000, s += 100);
  add_ln(r, 64, 100, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  tp_row(r, 5, 264, 1000, s += 100);
  tp_row(r, 64, 100, 300, s += 100);
  tp_col(r, 5, 264, 136, s += 100);
  tp_col(r, 37, 100, 100, s += 100);
  lm_head(r, 5, 264, 3000, s += 100);
  lm_head(r, 37, 100, 500, s += 100);
  topk8(r, 37, 1000, s += 100);
  topk8(r, 1, 8, s += 100);
  gumbel(r, 37, 2040, 12345, 0.8f, s += 100);
  gumbel(r, 3, 1200, (LL(1) << 35) + 11, 1.f, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs24_jit_test");
  // The multi-rank kernels at W = 1, 2, 3 and 4 (run_worlds stops at 3 unless a list is given; one given
  // in the environment wins).
  setenv("PK_TEST_WORLDS", "2 3 4", 0);
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs24_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

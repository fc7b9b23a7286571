// The twenty-eighth user-written spec set (test/specs/user_specs28.pk.cpp: GEMM epilogues of every shape on every
// GEMM route: plain A * B^T and A * B in bf16 / f16 with f32, bf16 or f16 outputs, A read transposed, batched GEMMs,
// LoRA's trailing product, weight-only fp8 / i8 weights, and the GEMMs beside an all-reduce, an all-gather or a
// reduce-scatter) through the JIT, each kernel against a float64 host reference written from its comment, on
// fresh random non-zero inputs, with every output poisoned first (NaN bytes: an element left unwritten fails).
//
// Every GEMM kernel runs three ways: on its template at sizes with tails in every dimension (M = 200, N = 264,
// K = 136 against 128 x 256 x 64 tiles; K = 144 for the weight-only ones, whose template needs K % 16 == 0), at a
// K that forces the general-path twin (K = 76, not a multiple of 8; 72 for the weight-only ones; M = 196 for the
// A-transposed one, whose twin is forced by M % 8), and compiled with templates off ("name/general", the reference
// route). The single-GPU kernels run at W = 1; the four that feed a collective at W = 1, 2 and 3 (ranks sharing
// one GPU; PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs. Every kernel
// launches twice (a relaunch must give the same result).
//
// Not tested: the probes (user_specs28_probes.pk.cpp) and the bad specs: they reproduce findings and refusals.
//
// Bounds: the fp32 sum over K is within e = 1e-5 of the sum of its terms' magnitudes (mag); each reference f(acc)
// is taken within max |f(acc +- e) - f(acc)| of f at the float64 sum (the epilogue's own slope), plus the
// output's rounding (two units in the last place of bf16 / f16, kBf / kHf, relative), plus 1e-5 absolute for the
// epilogue's fp32 steps, plus what an approximate function adds: tanh.approx (|tanh| 2^-10 relative, times its
// factor: 0.5 |x| for GELU's tanh form, cap for the soft-cap), __fdividef / exp_ftz in SiLU and sigmoid (1e-5
// relative). Sums over ranks add every rank's bound and the bf16 rounding of the sum's terms (kBf times the sum of
// their magnitudes), never one rank's value alone. Masks and integer maps follow row and column exactly.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
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
using i8 = signed char;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"e28_rowscale_bias_resid", true},   {"e28_outer_scales_1d", true},      {"e28_causal_bias", true},
    {"e28_hash_dropout", true},          {"e28_transposed_vectors", true},   {"e28_scalars_at", true},
    {"e28_int_maps", true},              {"e28_gelu_tanh_bias", true},       {"e28_gelu_tanh_f32", true},
    {"e28_gelu_erf_silu_gate", true},    {"e28_f16_softcap_rows", true},     {"e28_i8_masks", true},
    {"e28_i32_mask_clamp", true},        {"e28_lengths_mask", true},         {"e28_segment_ids", true},
    {"e28_transposed_residual", true},   {"e28_host_rows", true},            {"e28_plane_at_arg", true},
    {"e28_row_col_chains", true},        {"e28_outer_to_int", true},         {"e28_ab_f16_colscale_rows", true},
    {"e28_ab_rank1_f32", true},          {"e28_ab_parity_silu", true},       {"e28_at_b_epilogue", true},
    {"e28_bmm_batch_vectors", true},     {"e28_bmm_kn_batch_index", true},   {"e28_bmm_shared_outer", true},
    {"e28_bmm_resid_gelu_erf", true},    {"e28_lora_causal_rowscale", true}, {"e28_lora_kn_outer_tanh", true},
    {"e28_wo_fp8_outer_gelu", true},     {"e28_wo_i8_hash_mask", true},      {"e28_gemm_ar_epilogue", true},
    {"e28_ag_gemm_causal", true},        {"e28_gemm_rs_silu", true},         {"e28_gemm_rs_owner_rows", false},
};
// Every kernel that takes a template, also with templates off (the general path: the reference route).
const std::vector<const char*> kGeneralToo = {
    "e28_rowscale_bias_resid", "e28_outer_scales_1d",      "e28_causal_bias",          "e28_hash_dropout",
    "e28_transposed_vectors",  "e28_scalars_at",           "e28_int_maps",             "e28_gelu_tanh_bias",
    "e28_gelu_tanh_f32",       "e28_gelu_erf_silu_gate",   "e28_f16_softcap_rows",     "e28_i8_masks",
    "e28_i32_mask_clamp",      "e28_lengths_mask",         "e28_segment_ids",          "e28_transposed_residual",
    "e28_host_rows",           "e28_plane_at_arg",         "e28_row_col_chains",       "e28_outer_to_int",
    "e28_ab_f16_colscale_rows", "e28_ab_rank1_f32",        "e28_ab_parity_silu",       "e28_at_b_epilogue",
    "e28_bmm_batch_vectors",   "e28_bmm_kn_batch_index",   "e28_bmm_shared_outer",     "e28_bmm_resid_gelu_erf",
    "e28_lora_causal_rowscale", "e28_lora_kn_outer_tanh",  "e28_wo_fp8_outer_gelu",    "e28_wo_i8_hash_mask",
    "e28_gemm_ar_epilogue",    "e28_ag_gemm_causal",       "e28_gemm_rs_silu",
};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs28", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}

// ---- inputs and bounds ----
const double kTanhApprox = 1.0 / 1024;  // twice tanh.approx.f32's relative error 2^-11
const double kFast = 1e-5;              // __fdividef and exp_ftz (SiLU, sigmoid, exp), relative
double gelu_t(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
double sigm(double x) { return 1 / (1 + std::exp(-x)); }
int32_t wrap32(long long v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<unsigned long long>(v))); }

// The reference of one output element: f(acc, i) (i the flat output index), its bound from the sum's, the
// output's relative rounding `rel`, and extra(acc, i) for approximate functions.
using Epi = std::function<double(double, LL)>;
double bound(const Epi& f, double c, double mag, LL i, double rel, const Epi& extra) {
  const double e = 1e-5 * mag + 1e-30, y = f(c, i);
  const double d = std::max(std::fabs(f(c + e, i) - y), std::fabs(f(c - e, i) - y));
  return d + rel * std::fabs(y) + 1e-5 + extra(c, i);
}
const Epi kNone = [](double, LL) { return 0.0; };
template <class T>
void check_epi(const Run& r, const std::string& what, const std::vector<T>& got, const Gemm& g, const Epi& f, double rel,
               const Epi& extra = kNone) {
  check(r, what, got, [&](LL i) { return f(g.c[i], i); }, [&](LL i) { return bound(f, g.c[i], g.mag[i], i, rel, extra); });
}
// Batched: Z products stacked by rows (the output [Z, M, N] flat).
Gemm stack(const std::vector<Gemm>& gs) {
  Gemm s;
  for (const Gemm& g : gs) s.c.insert(s.c.end(), g.c.begin(), g.c.end()), s.mag.insert(s.mag.end(), g.mag.begin(), g.mag.end());
  return s;
}
template <class T>
std::vector<T> slice(const std::vector<T>& v, LL at, LL n) {
  return std::vector<T>(v.begin() + at, v.begin() + at + n);
}
std::string tag(const std::string& kn, const std::string& how, std::initializer_list<LL> d) {
  return kn + " " + dims(d) + (how.empty() ? "" : " (" + how + ")");
}

// ---- plain A * B^T, bf16 ----
void rowscale_bias_resid(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1), bias = nz<bf16>(N, s + 3), res = nz<bf16>(M * N, s + 4);
  const auto rs = nz<float>(M, s + 2, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), biasd({1, N}, bias), resd({M, N}, res), y({M, N}, {});
  DevLocal<float> rsd({M, 1}, rs);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rsd.view(), biasd.view(), resd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b),
              [&](double c, LL i) { return c * rs[i / N] + val(bias[i % N]) + val(res[i]); }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void outer_scales_1d(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto rs = nz<float>(M, s + 2, -2.f, 2.f), cs = nz<float>(N, s + 3, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b);
  DevLocal<float> rsd({M}, rs), csd({N}, cs), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rsd.view(), csd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b),
              [&](double c, LL i) {
                const float p = rs[i / N] * cs[i % N];  // the product in fp32
                return c * p + rs[i / N];
              }, 1e-6);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void causal_bias(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1), bias = nz<bf16>(N, s + 2, -3.f, 3.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), biasd({N}, bias), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), biasd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b),
              [&](double c, LL i) { return i % N <= i / N ? c + val(bias[i % N]) : -1e4; }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void hash_dropout(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const LL seed = 0x123456789LL + s;
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), y.view(), seed))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) {
      const LL m = i / N, n = i % N;
      const int32_t h = wrap32(wrap32(m * N) + n);
      const bool keep = uniform_at(seed, {m, n}) >= 0.1f && h % 7 != 3;
      return keep ? c * 1.25 : 0.0;
    }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void transposed_vectors(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto rv = nz<float>(M, s + 2, -2.f, 2.f), cv = nz<float>(N, s + 3, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<float> rvd({1, M}, rv), cvd({N, 1}, cv);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rvd.view(), cvd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) { return c * rv[i / N] + cv[i % N]; }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void scalars_at(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto sv = nz<float>(4, s + 2, 0.5f, 2.f), t = nz<float>(12, s + 3, -2.f, 2.f);
  const float alpha = 0.75f, beta = -0.3125f;
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<float> sd({4}, sv), td({3, 4}, t);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), sd.view(), td.view(), y.view(), alpha, beta))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b),
              [&](double c, LL) { return c * alpha + (double(sv[0]) * t[6] - beta); }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void int_maps(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b);
  DevLocal<float> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) {
      const LL m = i / N, n = i % N;
      return c + double((m % 7) * 3 - n / 5 + std::min(m, n));
    }, 1e-6);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void gelu_tanh_bias(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto bias = nz<float>(N, s + 2, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<float> biasd({N}, bias);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), biasd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) { return gelu_t(c + bias[i % N]); }, kBf,
              [&](double c, LL i) { return 0.5 * std::fabs(c + bias[i % N]) * kTanhApprox; });
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void gelu_tanh_f32(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto rs = nz<float>(M, s + 2, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b);
  DevLocal<float> rsd({M, 1}, rs), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rsd.view(), y.view()))  // tanhf: within a few fp32 units
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) { return gelu_t(c * rs[i / N]); }, 1e-6,
              [&](double c, LL i) { return 1e-6 * std::fabs(c * rs[i / N]); });
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void gelu_erf_silu_gate(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto g = nz<float>(N, s + 2, -3.f, 3.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<float> gd({1, N}, g);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), gd.view(), y.view())) {
    auto f = [&](double c, LL i) { return gelu_erf(c) * (silu(g[i % N]) * 2); };
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), f, kBf, [&](double c, LL i) { return kFast * std::fabs(f(c, i)); });
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void f16_softcap_rows(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<f16>(M * K, s), b = nz<f16>(N * K, s + 1);
  const float cap = 3.f;
  const LL kept = M - 37;
  DevLocal<f16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), y.view(), cap, kept))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b),
              [&](double c, LL i) { return i / N < kept ? cap * std::tanh(c / cap) : 0.0; }, kHf,
              [&](double c, LL) { return cap * std::fabs(std::tanh(c / cap)) * kTanhApprox; });
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void i8_masks(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto mt = ints<i8>(M * N, -2, 2, s + 2), mr = ints<i8>(M, -3, 3, s + 3), mc = ints<i8>(N, 0, 5, s + 4);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<i8> mtd({M, N}, mt), mrd({M, 1}, mr), mcd({N}, mc);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), mtd.view(), mrd.view(), mcd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) {
      return mt[i] != 0 && mr[i / N] > 0 && mc[i % N] != 3 ? c : -1.0;
    }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void i32_mask_clamp(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto k32 = ints<int>(M * N, -5, 5, s + 2);
  const auto lo = nz<float>(M, s + 3, -4.f, -0.5f), hi = nz<float>(N, s + 4, 0.5f, 4.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<int> kd({M, N}, k32);
  DevLocal<float> lod({M, 1}, lo), hid({1, N}, hi);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), kd.view(), lod.view(), hid.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) {
      return std::min(std::max(k32[i] > 0 ? c : 0.0, double(lo[i / N])), double(hi[i % N]));
    }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void lengths_mask(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto lens = ints<int>(M, 1, int(N), s + 2);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<int> ld({M, 1}, lens);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), ld.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) { return i % N < lens[i / N] ? c : 0.0; }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void segment_ids(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto seg = ints<int>(N, 1, 3, s + 2);  // every row m < M <= N has its id
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b);
  DevLocal<int> sd({N}, seg);
  DevLocal<float> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), sd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) { return seg[i / N] == seg[i % N] ? c : 0.0; },
              1e-6);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void transposed_residual(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1), rt = nz<bf16>(N * M, s + 2, -3.f, 3.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), rtd({N, M}, rt), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rtd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) { return c + val(rt[(i % N) * M + i / N]); }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void host_rows(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto tbl = nz<float>(3 * N, s + 2, -2.f, 2.f), v = nz<float>(4 * M, s + 3, -2.f, 2.f);
  const LL sel = 2, sel2 = 1;
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<float> td({3, N}, tbl), vd({4, M}, v);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), td.view(), vd.view(), y.view(), sel, sel2))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b),
              [&](double c, LL i) { return c * tbl[sel * N + i % N] + v[sel2 * M + i / N]; }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void plane_at_arg(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1), r3 = nz<bf16>(3 * M * N, s + 2, -3.f, 3.f);
  const LL p = 1;
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), r3d({3, M, N}, r3), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), r3d.view(), y.view(), p))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), [&](double c, LL i) { return c + val(r3[p * M * N + i]); }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void row_col_chains(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto lse = nz<float>(M, s + 2, -1.f, 2.f), gate = nz<float>(N, s + 3, -3.f, 3.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<float> ld({M, 1}, lse), gd({1, N}, gate);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), ld.view(), gd.view(), y.view())) {
    auto f = [&](double c, LL i) { return c * std::exp(-double(lse[i / N])) * (sigm(gate[i % N]) * 2 + 0.5); };
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b), f, kBf, [&](double c, LL i) { return 2 * kFast * std::fabs(f(c, i)); });
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void outer_to_int(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(N * K, s + 1);
  const auto rq = nz<float>(M, s + 2, -6.f, 6.f), cq = nz<float>(N, s + 3, -6.f, 6.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), y({M, N}, {});
  DevLocal<float> rqd({M, 1}, rq), cqd({1, N}, cq);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rqd.view(), cqd.view(), y.view()))  // the product in fp32, truncated
    check_epi(r, kn, y.download(), gemm_t(M, N, K, a, b),
              [&](double c, LL i) { return c + std::trunc(double(rq[i / N] * cq[i % N])); }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

// ---- A * B (B [K, N]) and A read transposed ----
void ab_f16_colscale_rows(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<f16>(M * K, s), b = nz<f16>(K * N, s + 1);
  const auto cs = nz<float>(N, s + 2, -2.f, 2.f);
  const LL valid = M - 50;
  DevLocal<f16> ad({M, K}, a), bd({K, N}, b), y({M, N}, {});
  DevLocal<float> csd({N}, cs);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), csd.view(), y.view(), valid))
    check_epi(r, kn, y.download(), gemm_n(M, N, K, a, b), [&](double c, LL i) { return i / N < valid ? c * cs[i % N] : 0.0; },
              kHf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void ab_rank1_f32(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(M * K, s), b = nz<bf16>(K * N, s + 1);
  const auto rs = nz<float>(M, s + 2, -6.f, 6.f), cs = nz<float>(N, s + 3, -6.f, 6.f);
  DevLocal<bf16> ad({M, K}, a), bd({K, N}, b);
  DevLocal<float> rsd({M, 1}, rs), csd({N}, cs), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rsd.view(), csd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_n(M, N, K, a, b),
              [&](double c, LL i) { return std::min(c + double(rs[i / N]) * cs[i % N], 30.0); }, 1e-6);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void ab_parity_silu(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<f16>(M * K, s), b = nz<f16>(K * N, s + 1), res = nz<f16>(M * N, s + 2, -3.f, 3.f);
  DevLocal<f16> ad({M, K}, a), bd({K, N}, b), resd({M, N}, res);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), resd.view(), y.view())) {
    auto f = [&](double c, LL i) { return i % N % 2 == 0 ? silu(c) : c + val(res[i]); };
    check_epi(r, kn, y.download(), gemm_n(M, N, K, a, b), f, kBf, [&](double c, LL i) { return kFast * std::fabs(f(c, i)); });
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void at_b_epilogue(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(K * M, s), b = nz<bf16>(K * N, s + 1), bias = nz<bf16>(N, s + 3);
  const auto rs = nz<float>(M, s + 2, -2.f, 2.f);
  DevLocal<bf16> ad({K, M}, a), bd({K, N}, b), biasd({1, N}, bias), y({M, N}, {});
  DevLocal<float> rsd({M}, rs);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rsd.view(), biasd.view(), y.view())) {
    const Gemm g = gemm(M, N, K, [&](LL m, LL k) { return val(a[k * M + m]); }, [&](LL k, LL n) { return val(b[k * N + n]); });
    check_epi(r, kn, y.download(), g, [&](double c, LL i) { return c * rs[i / N] + val(bias[i % N]); }, kBf);
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}

// ---- batched ----
void bmm_batch_vectors(const Run& r, const std::string& kn, LL Z, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(Z * M * K, s), b = nz<bf16>(Z * N * K, s + 1);
  const auto ps = nz<float>(Z * M, s + 2, -2.f, 2.f), pb = nz<float>(Z * N, s + 3, -2.f, 2.f), sv = nz<float>(Z, s + 4, 0.5f, 2.f);
  DevLocal<bf16> ad({Z, M, K}, a), bd({Z, N, K}, b), y({Z, M, N}, {});
  DevLocal<float> psd({Z, M, 1}, ps), pbd({Z, 1, N}, pb), sd({Z}, sv);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), psd.view(), pbd.view(), sd.view(), y.view())) {
    std::vector<Gemm> gs;
    for (LL z = 0; z < Z; ++z) gs.push_back(gemm_t(M, N, K, slice(a, z * M * K, M * K), slice(b, z * N * K, N * K)));
    check_epi(r, kn, y.download(), stack(gs), [&](double c, LL i) {
      const LL z = i / (M * N), m = i / N % M, n = i % N;
      return (c * ps[z * M + m] + pb[z * N + n]) * sv[z];
    }, kBf);
  }
  end_case(r, tag(kn, how, {Z, M, N, K}), before);
}

void bmm_kn_batch_index(const Run& r, const std::string& kn, LL Z, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<f16>(Z * M * K, s), b = nz<f16>(Z * K * N, s + 1);
  DevLocal<f16> ad({Z, M, K}, a), bd({Z, K, N}, b);
  DevLocal<float> y({Z, M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), y.view())) {
    std::vector<Gemm> gs;
    for (LL z = 0; z < Z; ++z) gs.push_back(gemm_n(M, N, K, slice(a, z * M * K, M * K), slice(b, z * K * N, K * N)));
    check_epi(r, kn, y.download(), stack(gs), [&](double c, LL i) {
      const LL z = i / (M * N), m = i / N % M, n = i % N;
      return (n <= m ? c : 0.0) * 0.5 + double(m % 5 + 7 * z);
    }, 1e-6);
  }
  end_case(r, tag(kn, how, {Z, M, N, K}), before);
}

void bmm_shared_outer(const Run& r, const std::string& kn, LL Z, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(Z * M * K, s), w = nz<bf16>(N * K, s + 1);
  const auto rs = nz<float>(Z * M, s + 2, -2.f, 2.f), cs = nz<float>(N, s + 3, -2.f, 2.f);
  DevLocal<bf16> ad({Z, M, K}, a), wd({N, K}, w), y({Z, M, N}, {});
  DevLocal<float> rsd({Z, M, 1}, rs), csd({N, 1}, cs);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), wd.view(), rsd.view(), csd.view(), y.view())) {
    std::vector<Gemm> gs;
    for (LL z = 0; z < Z; ++z) gs.push_back(gemm_t(M, N, K, slice(a, z * M * K, M * K), w));
    check_epi(r, kn, y.download(), stack(gs), [&](double c, LL i) {
      const LL z = i / (M * N), m = i / N % M, n = i % N;
      const float p = rs[z * M + m] * cs[n];  // the product in fp32
      return c * p;
    }, kBf);
  }
  end_case(r, tag(kn, how, {Z, M, N, K}), before);
}

void bmm_resid_gelu_erf(const Run& r, const std::string& kn, LL Z, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto a = nz<bf16>(Z * M * K, s), b = nz<bf16>(Z * N * K, s + 1), res = nz<bf16>(Z * M * N, s + 2, -2.f, 2.f);
  const auto bias = nz<float>(N, s + 3, -1.f, 1.f);
  DevLocal<bf16> ad({Z, M, K}, a), bd({Z, N, K}, b), rd({Z, M, N}, res);
  DevLocal<float> biasd({N}, bias);
  DevLocal<f16> y({Z, M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rd.view(), biasd.view(), y.view())) {
    std::vector<Gemm> gs;
    for (LL z = 0; z < Z; ++z) gs.push_back(gemm_t(M, N, K, slice(a, z * M * K, M * K), slice(b, z * N * K, N * K)));
    check_epi(r, kn, y.download(), stack(gs), [&](double c, LL i) { return gelu_erf(c + val(res[i])) + bias[i % N]; }, kHf);
  }
  end_case(r, tag(kn, how, {Z, M, N, K}), before);
}

// ---- LoRA ----
void lora_causal_rowscale(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const LL R = 32;
  const auto x = nz<bf16>(M * K, s), w = nz<bf16>(N * K, s + 1), u = nz<bf16>(M * R, s + 2), lb = nz<bf16>(N * R, s + 3);
  const auto rs = nz<float>(M, s + 4, -2.f, 2.f), bias = nz<float>(N, s + 5, -2.f, 2.f);
  DevLocal<bf16> xd({M, K}, x), wd({N, K}, w), ud({M, R}, u), lbd({N, R}, lb), y({M, N}, {});
  DevLocal<float> rsd({M, 1}, rs), biasd({N}, bias);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), ud.view(), lbd.view(), rsd.view(), biasd.view(), y.view())) {
    Gemm g = gemm_t(M, N, K, x, w);
    const Gemm t = gemm_t(M, N, R, u, lb);
    for (LL i = 0; i < M * N; ++i) g.c[i] += t.c[i], g.mag[i] += t.mag[i];
    check_epi(r, kn, y.download(), g, [&](double c, LL i) { return i % N <= i / N ? c * rs[i / N] + bias[i % N] : 0.0; }, kBf);
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void lora_kn_outer_tanh(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const LL R = 64;
  const auto x = nz<f16>(M * K, s), w = nz<f16>(K * N, s + 1), u = nz<f16>(M * R, s + 2), lb = nz<f16>(R * N, s + 3);
  const auto res = nz<f16>(M * N, s + 4, -2.f, 2.f);
  const auto rs = nz<float>(M, s + 5, -1.f, 1.f), cs = nz<float>(N, s + 6, -1.f, 1.f);
  DevLocal<f16> xd({M, K}, x), wd({K, N}, w), ud({M, R}, u), lbd({R, N}, lb), resd({M, N}, res), y({M, N}, {});
  DevLocal<float> rsd({M}, rs), csd({1, N}, cs);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), ud.view(), lbd.view(), rsd.view(), csd.view(), resd.view(), y.view())) {
    Gemm g = gemm_n(M, N, K, x, w);
    const Gemm t = gemm_n(M, N, R, u, lb);
    for (LL i = 0; i < M * N; ++i) g.c[i] += t.c[i], g.mag[i] += t.mag[i];
    check_epi(r, kn, y.download(), g, [&](double c, LL i) { return std::tanh(c * rs[i / N] * cs[i % N]) + val(res[i]); }, kHf,
              [&](double c, LL i) { return std::fabs(std::tanh(c * rs[i / N] * cs[i % N])) * kTanhApprox; });
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}

// ---- weight-only ----
void wo_fp8_outer_gelu(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto x = nz<bf16>(M * K, s), bias = nz<bf16>(N, s + 4);
  const auto w = nz<f8e4m3>(N * K, s + 1, -2.f, 2.f);
  const auto ws = nz<float>(N, s + 2, 0.05f, 0.5f), xs = nz<float>(M, s + 3, -2.f, 2.f);
  DevLocal<bf16> xd({M, K}, x), biasd({1, N}, bias), y({M, N}, {});
  DevLocal<f8e4m3> wd({N, K}, w);
  DevLocal<float> wsd({N, 1}, ws), xsd({M, 1}, xs);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), wsd.view(), xsd.view(), biasd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, x, w),
              [&](double c, LL i) { return gelu_erf(c * ws[i % N] * xs[i / N]) + val(bias[i % N]); }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void wo_i8_hash_mask(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto x = nz<bf16>(M * K, s);
  auto w = ints<i8>(N * K, -128, 127, s + 1);
  for (auto& q : w) q = q == 0 ? i8(1) : q;
  const auto ws = nz<float>(N, s + 2, 0.001f, 0.02f);
  DevLocal<bf16> xd({M, K}, x), y({M, N}, {});
  DevLocal<i8> wd({N, K}, w);
  DevLocal<float> wsd({N}, ws);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), wsd.view(), y.view()))
    check_epi(r, kn, y.download(), gemm_t(M, N, K, x, w),
              [&](double c, LL i) { return (i / N * N + i % N) % 3 != 0 ? c * ws[i % N] : 0.0; }, kBf);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

// ---- GEMMs beside collectives ----
template <class T>
std::vector<std::vector<T>> per_rank(int W, LL n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::vector<std::vector<T>> v;
  for (int p = 0; p < W; ++p) v.push_back(nz<T>(n, seed + 7919u * unsigned(p + 1), lo, hi));
  return v;
}

// c = the sum over ranks of p_r = bf16(f_r(acc_r)): want and tol per element of the [M, N] sum (every rank's
// bound, and the bf16 rounding of p_r and of the sum's additions, kBf times the terms' magnitudes).
void rank_sum(int W, LL M, LL N, const std::vector<Gemm>& g, const std::function<double(int, double, LL)>& f,
              std::vector<double>& want, std::vector<double>& tol) {
  want.assign(M * N, 0.0), tol.assign(M * N, 0.0);
  for (int p = 0; p < W; ++p)
    for (LL i = 0; i < M * N; ++i) {
      const Epi fp = [&](double c, LL j) { return f(p, c, j); };
      const double y = fp(g[p].c[i], i);
      want[i] += y;
      tol[i] += bound(fp, g[p].c[i], g[p].mag[i], i, kBf, kNone) + kBf * std::fabs(y);
    }
}

void gemm_ar_epilogue(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const int W = r.W, me = r.me;
  const auto a = per_rank<bf16>(W, M * K, s), b = per_rank<bf16>(W, N * K, s + 1);
  const auto rs = per_rank<float>(W, M, s + 2, -2.f, 2.f), cs = per_rank<float>(W, N, s + 3, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a[me]), bd({N, K}, b[me]);
  DevLocal<float> rsd({M, 1}, rs[me]), csd({N}, cs[me]);
  SymArg<bf16> p(r.ctx, {M, N}, nullptr), c(r.ctx, {M, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rsd.view(), csd.view(), p.view, c.view)) {
    std::vector<Gemm> g;
    for (int q = 0; q < W; ++q) g.push_back(gemm_t(M, N, K, a[q], b[q]));
    std::vector<double> want, tol;
    rank_sum(W, M, N, g, [&](int q, double v, LL i) { return v * rs[q][i / N] + cs[q][i % N]; }, want, tol);
    check_vec(r, kn + ".c", c.download(), want, tol);
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void ag_gemm_causal(const Run& r, const std::string& kn, LL R, LL N, LL K, const std::string& how, unsigned s) {
  const int W = r.W, me = r.me;
  const LL M = W * R;
  const auto a = per_rank<bf16>(W, R * K, s);
  const auto b = nz<bf16>(N * K, s + 1);
  const auto rs = nz<float>(M, s + 2, -2.f, 2.f), cs = nz<float>(N, s + 3, -2.f, 2.f);
  SymArg<bf16> ad(r.ctx, {R, K}, &a[me]), full(r.ctx, {M, K}, nullptr);
  DevLocal<bf16> bd({N, K}, b), c({M, N}, {});
  DevLocal<float> rsd({M, 1}, rs), csd({N}, cs);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view, full.view, bd.view(), rsd.view(), csd.view(), c.view())) {
    std::vector<bf16> af;
    for (int q = 0; q < W; ++q) af.insert(af.end(), a[q].begin(), a[q].end());
    check_epi(r, kn + ".c", c.download(), gemm_t(M, N, K, af, b),
              [&](double v, LL i) { return i % N <= i / N ? v * rs[i / N] + cs[i % N] : 0.0; }, kBf);
  }
  end_case(r, tag(kn, how, {R, N, K}), before);
}

void gemm_rs_silu(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const int W = r.W, me = r.me;
  const LL rows = M / W;
  const auto a = per_rank<bf16>(W, M * K, s), b = per_rank<bf16>(W, K * N, s + 1);
  const auto cs = per_rank<float>(W, N, s + 2, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a[me]), bd({K, N}, b[me]);
  DevLocal<float> csd({1, N}, cs[me]);
  SymArg<bf16> p(r.ctx, {M, N}, nullptr), c(r.ctx, {rows, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), csd.view(), p.view, c.view)) {
    std::vector<Gemm> g;
    for (int q = 0; q < W; ++q) g.push_back(gemm_n(M, N, K, a[q], b[q]));
    std::vector<double> want, tol;
    rank_sum(W, M, N, g, [&](int q, double v, LL i) { return silu(v) * cs[q][i % N]; }, want, tol);
    for (int q = 0; q < W; ++q)
      for (LL i = 0; i < M * N; ++i) tol[i] += kFast * std::fabs(silu(g[q].c[i]) * cs[q][i % N]);
    check_vec(r, kn + ".c", c.download(), slice(want, me * rows * N, rows * N), slice(tol, me * rows * N, rows * N));
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void gemm_rs_owner_rows(const Run& r, const std::string& kn, LL R, LL N, LL K, unsigned s) {
  const int W = r.W, me = r.me;
  const LL M = W * R;
  const auto a = per_rank<bf16>(W, M * K, s), b = per_rank<bf16>(W, N * K, s + 1);
  const auto rs = per_rank<float>(W, R, s + 2, -2.f, 2.f), bias = per_rank<float>(W, N, s + 3, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a[me]), bd({N, K}, b[me]);
  DevLocal<float> rsd({R, 1}, rs[me]), biasd({N}, bias[me]);
  SymArg<bf16> c(r.ctx, {R, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rsd.view(), biasd.view(), c.view)) {
    std::vector<Gemm> g;  // rank q's product of A's rows me * R .. (this rank's owner block)
    for (int q = 0; q < W; ++q) g.push_back(gemm_t(R, N, K, slice(a[q], me * R * K, R * K), b[q]));
    std::vector<double> want, tol;
    rank_sum(W, R, N, g, [&](int q, double v, LL i) { return v * rs[q][i / N] + bias[q][i % N]; }, want, tol);
    for (LL i = 0; i < R * N; ++i) tol[i] *= 2;  // each add into the bf16 owner rounds once more
    check_vec(r, kn + ".c", c.download(), want, tol);
  }
  end_case(r, tag(kn, "", {R, N, K}), before);
}

// ---- cases ----
using Plain = void (*)(const Run&, const std::string&, LL, LL, LL, const std::string&, unsigned);
using Batched = void (*)(const Run&, const std::string&, LL, LL, LL, LL, const std::string&, unsigned);
// The template (tails in M, N and K), the twin (K not a multiple of 8) and templates off.
void three_ways(const Run& r, Plain f, const char* kn, unsigned seed, LL K = 136, LL Ktwin = 76, LL M = 200, LL Mtwin = 200) {
  f(r, kn, M, 264, K, "", seed);
  f(r, kn, Mtwin, 264, Ktwin, "general twin", seed + 100);
  f(r, std::string(kn) + "/general", M, 264, K, "templates off", seed + 200);
}
void three_ways(const Run& r, Batched f, const char* kn, unsigned seed) {
  f(r, kn, 3, 200, 264, 136, "", seed);
  f(r, kn, 3, 200, 264, 76, "general twin", seed + 100);
  f(r, std::string(kn) + "/general", 3, 200, 264, 136, "templates off", seed + 200);
}

void cases(const Run& r) {
  if (r.W == 1) {
    three_ways(r, rowscale_bias_resid, "e28_rowscale_bias_resid", 11);
    three_ways(r, outer_scales_1d, "e28_outer_scales_1d", 13);
    three_ways(r, causal_bias, "e28_causal_bias", 17);
    three_ways(r, hash_dropout, "e28_hash_dropout", 19);
    three_ways(r, transposed_vectors, "e28_transposed_vectors", 23);
    three_ways(r, scalars_at, "e28_scalars_at", 29);
    three_ways(r, int_maps, "e28_int_maps", 31);
    three_ways(r, gelu_tanh_bias, "e28_gelu_tanh_bias", 37);
    three_ways(r, gelu_tanh_f32, "e28_gelu_tanh_f32", 41);
    three_ways(r, gelu_erf_silu_gate, "e28_gelu_erf_silu_gate", 43);
    three_ways(r, f16_softcap_rows, "e28_f16_softcap_rows", 47);
    three_ways(r, i8_masks, "e28_i8_masks", 53);
    three_ways(r, i32_mask_clamp, "e28_i32_mask_clamp", 59);
    three_ways(r, lengths_mask, "e28_lengths_mask", 61);
    three_ways(r, segment_ids, "e28_segment_ids", 67);
    three_ways(r, transposed_residual, "e28_transposed_residual", 71);
    three_ways(r, host_rows, "e28_host_rows", 73);
    three_ways(r, plane_at_arg, "e28_plane_at_arg", 79);
    three_ways(r, row_col_chains, "e28_row_col_chains", 83);
    three_ways(r, outer_to_int, "e28_outer_to_int", 89);
    three_ways(r, ab_f16_colscale_rows, "e28_ab_f16_colscale_rows", 97);
    three_ways(r, ab_rank1_f32, "e28_ab_rank1_f32", 101);
    three_ways(r, ab_parity_silu, "e28_ab_parity_silu", 103);
    three_ways(r, at_b_epilogue, "e28_at_b_epilogue", 107, 136, 136, 200, 196);  // the twin by M % 8
    three_ways(r, bmm_batch_vectors, "e28_bmm_batch_vectors", 109);
    three_ways(r, bmm_kn_batch_index, "e28_bmm_kn_batch_index", 113);
    three_ways(r, bmm_shared_outer, "e28_bmm_shared_outer", 127);
    three_ways(r, bmm_resid_gelu_erf, "e28_bmm_resid_gelu_erf", 131);
    three_ways(r, lora_causal_rowscale, "e28_lora_causal_rowscale", 137);
    three_ways(r, lora_kn_outer_tanh, "e28_lora_kn_outer_tanh", 139);
    three_ways(r, wo_fp8_outer_gelu, "e28_wo_fp8_outer_gelu", 149, 144, 72);  // the template needs K % 16 == 0
    three_ways(r, wo_i8_hash_mask, "e28_wo_i8_hash_mask", 151, 144, 72);
  }
  for (const char* how : {"", "general twin", "templates off"}) {
    const std::string h = how, sfx = h == "templates off" ? "/general" : "";
    const LL K = h == "general twin" ? 76 : 136;
    gemm_ar_epilogue(r, "e28_gemm_ar_epilogue" + sfx, 200, 264, K, h, 157);
    ag_gemm_causal(r, "e28_ag_gemm_causal" + sfx, 72, 264, K, h, 163);
    gemm_rs_silu(r, "e28_gemm_rs_silu" + sfx, 192, 264, K, h, 167);
  }
  gemm_rs_owner_rows(r, "e28_gemm_rs_owner_rows", 72, 264, 136, 173);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_USER_SPECS28_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return pkt::finish("user_specs28_jit_test");
  return run_worlds("user_specs28_jit_test", g_kernels, cases);
}

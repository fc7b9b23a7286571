// The thirty-sixth user-written spec set (test/specs/user_specs36.pk.cpp: GEMM and attention spellings that fell off
// the Hopper templates in set 36 and now take them, plus three that took them before) through the JIT, each kernel
// against a float64 host reference written from its comment, on fresh random non-zero inputs, with every output
// poisoned first (0xff: NaN), so an element left unwritten fails. A template that computes the wrong thing would be
// a silent wrong answer: these cases are what shows it does not. Sizes are never multiples of the tiles (M = 200,
// N = 264, K = 136 against 128 x 256 x 64 tiles; sequence lengths 50 / 77 / 150 / 170 / 190 / 333 against 64-row
// spec tiles and 128- / 192-row template blocks; the causal ones with as many keys as queries).
//
// Covered: all 16 kernels of the set, at W = 1 (every kernel is single-GPU).
//  * The GEMMs run on the template (K = 136), on the template with K split at launch (K = 1032: few output tiles,
//    so the launch splits K and the epilogue, the accumulator's start included, must apply once), on the
//    general-path twin (K = 76, not a multiple of 8) and compiled with templates off ("name/general").
//    s36_gemm_over_c also runs with c shorter and longer than a, s36_bmm_over_c with c of fewer batches than a
//    (the twin: C must have A's rows / batches): the spec's loop covers c, and c's rows past a's end are 0.
//  * The attention kernels run on the template and with templates off. Every kernel launches twice (none updates
//    a tensor in place; the second launch checks the causal template's tile counter is reset).
//
// Bounds: an fp32 sum over K is within 1e-5 of the sum of its terms' magnitudes (mag); an epilogue f(acc) is taken
// within max |f(acc +- e) - f(acc)| of f at the float64 sum (its own slope), plus two units in the last place of
// the bf16 output (kBf), plus 1e-5 absolute for its fp32 steps; gelu adds 2^-11 of its input (tanh.approx).
// Attention: o within kBf of its value plus 2e-2 (p is rounded to bf16 before p v, as the attention tests allow),
// lse within 1e-3 relative plus 1e-3.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pkt::DevLocal;
using namespace pkt::cases;

// Every kernel takes a template, and every one is also compiled with templates off.
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"s36_gemm_bias_gelu", true},        {"s36_gemm_over_c", true},          {"s36_gemm_nm_loop", true},
    {"s36_gemm_acc_from_c0", true},      {"s36_gemm_acc_bias_start", true},  {"s36_gemm_mma_transpose_b", true},
    {"s36_gemm_acc_plus_mma", true},     {"s36_bmm_scale", true},            {"s36_bmm_over_c", true},
    {"s36_attn_causal_lse_d128", true},  {"s36_attn_causal_min_bound", true}, {"s36_attn_flash_update", true},
    {"s36_attn_causal_i32_heads", true},  {"s36_attn_rsqrt_scale_d64", true}, {"s36_attn_temp_causal_d64", true},
    {"s36_attn_mask_then_scale", true},  {"s36_attn_kv_cache_causal_d64", true},
};
const std::vector<const char*> kGeneralToo = {
    "s36_gemm_bias_gelu",        "s36_gemm_over_c",          "s36_gemm_nm_loop",          "s36_gemm_acc_from_c0",
    "s36_gemm_acc_bias_start",   "s36_gemm_mma_transpose_b", "s36_gemm_acc_plus_mma",     "s36_bmm_scale",
    "s36_bmm_over_c",            "s36_attn_causal_lse_d128", "s36_attn_causal_min_bound", "s36_attn_flash_update",
    "s36_attn_causal_i32_heads", "s36_attn_rsqrt_scale_d64",  "s36_attn_temp_causal_d64",
    "s36_attn_mask_then_scale",  "s36_attn_kv_cache_causal_d64",
};

KernelSet g_kernels;
const char* kSet = "user_specs36";
const double kTanh = 1.0 / 2048;  // tanh.approx, relative
const double kAttnAbs = 2e-2;     // p rounded to bf16 before p v, o to bf16

template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}
void done(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, kSet, what, before); }
std::string tag(const std::string& kn, const std::string& how, std::initializer_list<LL> d) {
  return kn + " " + dims(d) + (how.empty() ? "" : " (" + how + ")");
}


// ---- GEMM bounds ----
using Epi = std::function<double(double, LL)>;
const Epi kNone = [](double, LL) { return 0.0; };
double bound(const Epi& f, double c, double mag, LL i, double rel, const Epi& extra) {
  const double e = 1e-5 * mag + 1e-30, y = f(c, i);
  const double d = std::max(std::fabs(f(c + e, i) - y), std::fabs(f(c - e, i) - y));
  return d + rel * std::fabs(y) + 1e-5 + extra(c, i);
}
template <class T>
void check_epi(const Run& r, const std::string& what, const std::vector<T>& got, const Gemm& g, const Epi& f, double rel,
               const Epi& extra = kNone) {
  check(r, what, got, [&](LL i) { return f(g.c[i], i); }, [&](LL i) { return bound(f, g.c[i], g.mag[i], i, rel, extra); });
}
const Epi kSame = [](double v, LL) { return v; };
// Z products a[z] b[z]^T (a [Z, M, K], b [Z, N, K]) one after another.
Gemm bmm_t(LL Z, LL M, LL N, LL K, const std::vector<bf16>& a, const std::vector<bf16>& b) {
  Gemm g;
  for (LL z = 0; z < Z; ++z) {
    const Gemm gz = gemm(M, N, K, [&](LL m, LL k) { return val(a[(z * M + m) * K + k]); },
                         [&](LL k, LL n) { return val(b[(z * N + n) * K + k]); });
    g.c.insert(g.c.end(), gz.c.begin(), gz.c.end()), g.mag.insert(g.mag.end(), gz.mag.begin(), gz.mag.end());
  }
  return g;
}

// =============================================================================== GEMMs ==

void bias_gelu(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto a = nz<bf16>(M * K, 100), b = nz<bf16>(N * K, 101), bias = nz<bf16>(N, 102, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), biasd({1, N}, bias), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), biasd.view(), c.view()))
    check_epi(r, kn, c.download(), gemm_t(M, N, K, a, b), [&](double v, LL i) { return pkt::gelu_tanh(v + val(bias[i % N])); },
              kBf, [&](double v, LL i) { return kTanh * std::fabs(v + val(bias[i % N])); });
  done(r, tag(kn, how, {M, N, K}), before);
}

// c = bf16(a b^T) for the kernels that spell the plain product differently (over c's extents, the (n, m) loop,
// mma of a transposed B, acc + mma_t); Mc: c's rows (a's rows past Mc unread, c's rows past M are 0).
void plain(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, LL Mc = -1) {
  if (Mc < 0) Mc = M;
  const auto a = nz<bf16>(M * K, 110), b = nz<bf16>(N * K, 111);
  const Gemm g = gemm(Mc, N, K, [&](LL m, LL k) { return m < M ? val(a[m * K + k]) : 0.0; },
                      [&](LL k, LL n) { return val(b[n * K + k]); });
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), c({Mc, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), c.view())) check_epi(r, kn, c.download(), g, kSame, kBf);
  done(r, tag(kn, how, {Mc, N, K}) + (Mc == M ? "" : " a rows " + std::to_string(M)), before);
}

void acc_from_c0(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto a = nz<bf16>(M * K, 120), b = nz<bf16>(N * K, 121), c0 = nz<bf16>(M * N, 122, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), c0d({M, N}, c0), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), c0d.view(), c.view()))
    check_epi(r, kn, c.download(), gemm_t(M, N, K, a, b), [&](double v, LL i) { return v + val(c0[i]); }, kBf);
  done(r, tag(kn, how, {M, N, K}), before);
}

void acc_bias_start(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto a = nz<bf16>(M * K, 130), b = nz<bf16>(N * K, 131);
  const auto bias = nz<float>(N, 132, -2.f, 2.f);
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), c({M, N}, {});
  DevLocal<float> biasd({1, N}, bias);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), biasd.view(), c.view()))
    check_epi(r, kn, c.download(), gemm_t(M, N, K, a, b), [&](double v, LL i) { return v + bias[i % N]; }, kBf);
  done(r, tag(kn, how, {M, N, K}), before);
}

void bmm_scale(const Run& r, const std::string& kn, LL Z, LL M, LL N, LL K, const std::string& how) {
  const auto a = nz<bf16>(Z * M * K, 140), b = nz<bf16>(Z * N * K, 141);
  const auto s = nz<float>(Z, 142, 0.5f, 2.f);
  DevLocal<bf16> ad({Z, M, K}, a), bd({Z, N, K}, b), c({Z, M, N}, {});
  DevLocal<float> sd({Z}, s);
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), sd.view(), c.view()))
    check_epi(r, kn, c.download(), bmm_t(Z, M, N, K, a, b), [&](double v, LL i) { return v * s[i / (M * N)]; }, kBf);
  done(r, tag(kn, how, {Z, M, N, K}), before);
}

// Zc: c's batches (at most Z; a's and b's batches past Zc unread).
void bmm_over_c(const Run& r, const std::string& kn, LL Z, LL M, LL N, LL K, const std::string& how, LL Zc = -1) {
  if (Zc < 0) Zc = Z;
  const auto a = nz<bf16>(Z * M * K, 150), b = nz<bf16>(Z * N * K, 151);
  DevLocal<bf16> ad({Z, M, K}, a), bd({Z, N, K}, b), c({Zc, M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), c.view())) check_epi(r, kn, c.download(), bmm_t(Zc, M, N, K, a, b), kSame, kBf);
  done(r, tag(kn, how, {Zc, M, N, K}) + (Zc == Z ? "" : " a batches " + std::to_string(Z)), before);
}

// =============================================================================== attention ==

// o [H, Sq, D] and lse [H, Sq] of softmax_j(scale q_i . k_j) v per head, over j <= i when causal.
void attn_ref(LL H, LL Sq, LL Sk, LL D, const std::vector<bf16>& q, const std::vector<bf16>& k, const std::vector<bf16>& v,
              float scale, bool causal, std::vector<double>& o, std::vector<double>& lse) {
  o.assign(H * Sq * D, 0.0), lse.assign(H * Sq, 0.0);
  for (LL h = 0; h < H; ++h)
    attend(Sq, Sk, D, [&](LL i, LL j) { return double(scale) * dot(q, (h * Sq + i) * D, k, (h * Sk + j) * D, D); },
           [&](LL i, LL j) { return !causal || j <= i; }, [&](LL j, LL d) { return val(v[(h * Sk + j) * D + d]); },
           o.data() + h * Sq * D, lse.data() + h * Sq);
}
void check_o(const Run& r, const std::string& what, const std::vector<bf16>& got, const std::vector<double>& o) {
  check(r, what, got, [&](LL i) { return o[i]; }, [&](LL i) { return kBf * std::fabs(o[i]) + kAttnAbs; });
}

void attn_causal_lse_d128(const Run& r, bool general) {
  const std::string kn = std::string("s36_attn_causal_lse_d128") + (general ? "/general" : "");
  const LL S = 170, D = 128;
  const float scale = 0.25f;
  const auto q = nz<bf16>(S * D, 200), k = nz<bf16>(S * D, 201), v = nz<bf16>(S * D, 202);
  std::vector<double> o, lse;
  attn_ref(1, S, S, D, q, k, v, scale, true, o, lse);
  DevLocal<bf16> qd({S, D}, q), kd({S, D}, k), vd({S, D}, v), od({S, D}, {});
  DevLocal<float> ld({S, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view(), vd.view(), od.view(), ld.view(), scale)) {
    check_o(r, kn + ".o", od.download(), o);
    check(r, kn + ".lse", ld.download(), [&](LL i) { return lse[i]; }, [&](LL i) { return 1e-3 * std::fabs(lse[i]) + 1e-3; });
  }
  done(r, tag(kn, general ? "templates off" : "", {S, D}), before);
}

void attn_causal_min_bound(const Run& r, bool general, LL S) {
  const std::string kn = std::string("s36_attn_causal_min_bound") + (general ? "/general" : "");
  const LL D = 64;
  const float scale = 0.5f;
  const auto q = nz<bf16>(S * D, 210 + unsigned(S)), k = nz<bf16>(S * D, 211 + unsigned(S)), v = nz<bf16>(S * D, 212 + unsigned(S));
  std::vector<double> o, lse;
  attn_ref(1, S, S, D, q, k, v, scale, true, o, lse);
  DevLocal<bf16> qd({S, D}, q), kd({S, D}, k), vd({S, D}, v), od({S, D}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view(), vd.view(), od.view(), scale)) check_o(r, kn, od.download(), o);
  done(r, tag(kn, general ? "templates off" : "", {S, D}), before);
}

void attn_flash_update(const Run& r, bool general, LL Sq, LL Sk) {
  const std::string kn = std::string("s36_attn_flash_update") + (general ? "/general" : "");
  const LL D = 64;
  const float scale = 0.5f;
  const auto q = nz<bf16>(Sq * D, 220 + unsigned(Sq)), k = nz<bf16>(Sk * D, 221 + unsigned(Sk)),
             v = nz<bf16>(Sk * D, 222 + unsigned(Sk));
  std::vector<double> o, lse;
  attn_ref(1, Sq, Sk, D, q, k, v, scale, false, o, lse);
  DevLocal<bf16> qd({Sq, D}, q), kd({Sk, D}, k), vd({Sk, D}, v), od({Sq, D}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view(), vd.view(), od.view(), scale)) check_o(r, kn, od.download(), o);
  done(r, tag(kn, general ? "templates off" : "", {Sq, Sk, D}), before);
}

void attn_causal_i32_heads(const Run& r, bool general) {
  const std::string kn = std::string("s36_attn_causal_i32_heads") + (general ? "/general" : "");
  const LL H = 3, S = 190, D = 64;
  const float scale = 0.5f;
  const auto q = nz<bf16>(H * S * D, 230), k = nz<bf16>(H * S * D, 231), v = nz<bf16>(H * S * D, 232);
  std::vector<double> o, lse;
  attn_ref(H, S, S, D, q, k, v, scale, true, o, lse);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, k), vd({H, S, D}, v), od({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view(), vd.view(), od.view(), scale)) check_o(r, kn, od.download(), o);
  done(r, tag(kn, general ? "templates off" : "", {H, S, D}), before);
}

// Non-causal attention at head dim 64 whose spec reaches the scale 0.125 another way: computed from the head dim
// (the template takes it once per launch), or a constant after the mask (pk-fold-products scales the fill once).
void attn_scale_0125_d64(const Run& r, const char* name, bool general, LL Sq, LL Sk, unsigned seed) {
  const std::string kn = std::string(name) + (general ? "/general" : "");
  const LL D = 64;
  const auto q = nz<bf16>(Sq * D, seed + unsigned(Sq)), k = nz<bf16>(Sk * D, seed + 1 + unsigned(Sk)),
             v = nz<bf16>(Sk * D, seed + 2 + unsigned(Sk));
  std::vector<double> o, lse;
  attn_ref(1, Sq, Sk, D, q, k, v, 0.125f, false, o, lse);
  DevLocal<bf16> qd({Sq, D}, q), kd({Sk, D}, k), vd({Sk, D}, v), od({Sq, D}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view(), vd.view(), od.view())) check_o(r, kn, od.download(), o);
  done(r, tag(kn, general ? "templates off" : "", {Sq, Sk, D}), before);
}
// A temperature: the scale 0.125 / temp, computed from a float argument once per launch.
void attn_temp_causal_d64(const Run& r, bool general, LL S, float temp) {
  const std::string kn = std::string("s36_attn_temp_causal_d64") + (general ? "/general" : "");
  const LL D = 64;
  const auto q = nz<bf16>(S * D, 250 + unsigned(S)), k = nz<bf16>(S * D, 251 + unsigned(S)), v = nz<bf16>(S * D, 252 + unsigned(S));
  std::vector<double> o, lse;
  attn_ref(1, S, S, D, q, k, v, 0.125f / temp, true, o, lse);
  DevLocal<bf16> qd({S, D}, q), kd({S, D}, k), vd({S, D}, v), od({S, D}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view(), vd.view(), od.view(), temp)) check_o(r, kn, od.download(), o);
  done(r, tag(kn, general ? "templates off" : "", {S, D}) + " temp " + std::to_string(temp), before);
}
// Causal against Sk - Sq past keys (a KV cache): query i sees keys j <= i + Sk - Sq. Sk < Sq leaves the first rows
// no key: the spec averages v over every key there (each score -1e30), as the reference does (equal scores).
void attn_kv_cache_causal(const Run& r, bool general, LL Sq, LL Sk) {
  const std::string kn = std::string("s36_attn_kv_cache_causal_d64") + (general ? "/general" : "");
  const LL D = 64, past = Sk - Sq;
  const float scale = 0.5f;
  const auto q = nz<bf16>(Sq * D, 270 + unsigned(Sq)), k = nz<bf16>(Sk * D, 271 + unsigned(Sk)),
             v = nz<bf16>(Sk * D, 272 + unsigned(Sk));
  auto blind = [&](LL i) { return i + past < 0; };
  std::vector<double> o, lse;
  attend(Sq, Sk, D, [&](LL i, LL j) { return blind(i) ? 0.0 : double(scale) * dot(q, i * D, k, j * D, D); },
         [&](LL i, LL j) { return blind(i) || j <= i + past; }, [&](LL j, LL d) { return val(v[j * D + d]); }, o, lse);
  DevLocal<bf16> qd({Sq, D}, q), kd({Sk, D}, k), vd({Sk, D}, v), od({Sq, D}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view(), vd.view(), od.view(), scale)) check_o(r, kn, od.download(), o);
  done(r, tag(kn, general ? "templates off" : "", {Sq, Sk, D}), before);
}

// =============================================================================== cases ==

void cases(const Run& r) {
  // The GEMMs: on the template (tails in M, N and K), with K split at launch, on the twin (K not a multiple of 8),
  // and compiled with templates off.
  const LL M = 200, N = 264;
  for (int how = 0; how < 4; ++how) {
    const std::string s = how == 3 ? "/general" : "";
    const std::string h = how == 0 ? "" : how == 1 ? "split K" : how == 2 ? "general twin" : "templates off";
    const LL K = how == 1 ? 1032 : how == 2 ? 76 : 136;
    bias_gelu(r, "s36_gemm_bias_gelu" + s, M, N, K, h);
    plain(r, "s36_gemm_over_c" + s, M, N, K, h);
    plain(r, "s36_gemm_nm_loop" + s, M, N, K, h);
    acc_from_c0(r, "s36_gemm_acc_from_c0" + s, M, N, K, h);
    acc_bias_start(r, "s36_gemm_acc_bias_start" + s, M, N, K, h);
    plain(r, "s36_gemm_mma_transpose_b" + s, M, N, K, h);
    plain(r, "s36_gemm_acc_plus_mma" + s, M, N, K, h);
    bmm_scale(r, "s36_bmm_scale" + s, 3, M, N, K, h);
    bmm_over_c(r, "s36_bmm_over_c" + s, 3, M, N, K, h);
  }
  // c's rows (batches) differ from a's: the twin runs (C must have A's rows, A's batches) and covers c.
  plain(r, "s36_gemm_over_c", M, N, 136, "c shorter than a: twin", 150);
  plain(r, "s36_gemm_over_c", M, N, 136, "c longer than a: twin", 230);
  bmm_over_c(r, "s36_bmm_over_c", 3, M, N, 136, "c fewer batches than a: twin", 2);
  // Attention on the template and with templates off.
  for (bool g : {false, true}) {
    attn_causal_lse_d128(r, g);
    attn_causal_min_bound(r, g, 50);
    attn_causal_min_bound(r, g, 333);
    attn_flash_update(r, g, 150, 333);
    attn_flash_update(r, g, 333, 77);
    attn_causal_i32_heads(r, g);
    attn_scale_0125_d64(r, "s36_attn_rsqrt_scale_d64", g, 250, 333, 240);
    attn_scale_0125_d64(r, "s36_attn_rsqrt_scale_d64", g, 77, 190, 240);
    attn_temp_causal_d64(r, g, 333, 0.25f);
    attn_scale_0125_d64(r, "s36_attn_mask_then_scale", g, 150, 333, 260);
    attn_kv_cache_causal(r, g, 77, 333);   // 256 past keys: blocks skip the steps past their reach
    attn_kv_cache_causal(r, g, 200, 200);  // none: the plain causal mask
    // A negative shift: 172 rows see no key. Whole key tiles (128): a row masked whole averages the keys its loop
    // visits, and padding keys past the end would count on the general path (64-key tiles) but not on the template.
    attn_kv_cache_causal(r, g, 300, 128);
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_USER_SPECS36_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return pkt::finish("user_specs36_jit_test");
  // Every kernel is single-GPU: the cases run at W = 1 only.
  return run_worlds("user_specs36_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) cases(r);
  });
}

// The thirty-first user-written spec set (test/specs/user_specs31.pk.cpp: attention variants, rotary on [S, H, D],
// RMSNorm + fp8, routing with integer tiles, embeddings, multi-phase and in-place kernels, GEMMs with unusual shapes
// and epilogues, ring shifts and adds into peers) through the JIT, each kernel against a float64 host reference
// written from its comment, on fresh random inputs, with every output poisoned first (0xff: NaN for floats, -1 for
// integers). Every kernel launches twice (in-place kernels once, their second launch would apply the update again).
// Sizes are never multiples of the tiles (query and key lengths 200 / 333, K = 200, E = 60 experts, V = 3000).
// Template kernels run also with templates off ("name/general").
//
// Not run here (no references written in this session, see specs31_findings.md): b31_token_int8,
// b31_topk_filter, b31_vocab_parallel_embed, b31_vocab_parallel_xent, b31_ring_named, b31_top_p, b31_argmax_3d,
// b31_mixed_mask, b31_moe_combine_peers, b31_bmm_scale_residual, b31_dw_f32, b31_decode_gemm_rownorm,
// b31_gemm_f32_rowscale, b31_lm_head_vocab_mask, b31_expert_counts_offsets, b31_embed_backward.
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
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"b31_swa_nested_d64", true},     {"b31_cross_d128", true},          {"b31_kvcache_causal_d64", true},
    {"b31_gqa_softcap_d128", true},   {"b31_alibi_abs_d64", true},       {"b31_bias_keymask_d64", true},
    {"b31_gqa_d96_general", false},   {"b31_swa_skip_d128", false},      {"b31_short_keys_onepass", false},
    {"b31_mask_after_exp_d64", false}, {"b31_rope_shd_inplace", false},  {"b31_rope_interleaved_4d", false},
    {"b31_rope_packed_gather", false}, {"b31_rmsnorm_fp8_rows", false},  {"b31_add_rmsnorm_inplace", false},
    {"b31_router_top2", false},       {"b31_argmax_chunked", false},     {"b31_embed_pos", false},
    {"b31_col_standardise", false},   {"b31_global_softmax", false},     {"b31_inplace_silu_gate", false},
    {"b31_global_max_in_place", false},
    {"b31_ema_inplace_3d", false},    {"b31_gemm_ab_residual", true},    {"b31_gemm_accumulate_inplace", true},
    {"b31_gemm_k48_relu_f32", true},  {"b31_rmsnorm_wide_inplace", false}, {"b31_rope_packed_inplace", false},
    {"b31_ring_shift", false},        {"b31_rs_by_adds", false},         {"b31_pull_prev_silu", false},
};
const std::vector<const char*> kGeneralToo = {
    "b31_swa_nested_d64",   "b31_cross_d128",      "b31_kvcache_causal_d64",      "b31_gqa_softcap_d128",
    "b31_alibi_abs_d64",    "b31_bias_keymask_d64", "b31_gemm_ab_residual",       "b31_gemm_accumulate_inplace",
    "b31_gemm_k48_relu_f32",
};

KernelSet g_kernels;
const char* kSet = "user_specs31";

template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}
template <class T>
void check_rel(const Run& r, const std::string& what, const std::vector<T>& got, const std::function<double(LL)>& want,
               double rel, double abs) {
  check(r, what, got, want, [&](LL i) { return rel * std::fabs(want(i)) + abs; });
}
std::string sfx(bool general) { return general ? "/general" : ""; }

// ---- attention: one helper for [H, S, D] (H = 1 for the 2-D kernels) ----
struct Heads {
  LL H, Hk, Sq, Sk, D;
  std::vector<bf16> q, k, v;
  Heads(LL h, LL hk, LL sq, LL sk, LL d, unsigned s)
      : H(h), Hk(hk), Sq(sq), Sk(sk), D(d), q(rnd<bf16>(h * sq * d, s)), k(rnd<bf16>(hk * sk * d, s + 1)),
        v(rnd<bf16>(hk * sk * d, s + 2)) {}
  double qk(LL h, LL i, LL j) const { return dot(q, (h * Sq + i) * D, k, ((h / (H / Hk)) * Sk + j) * D, D); }
  // o [H, Sq, D] and lse [H, Sq] of score(h, i, j, raw), masked by keep(h, i, j).
  void ref(const std::function<double(LL, LL, LL, double)>& score, const std::function<bool(LL, LL, LL)>& keep,
           std::vector<double>& o, std::vector<double>& lse) const {
    o.assign(H * Sq * D, 0), lse.assign(H * Sq, 0);
    for (LL h = 0; h < H; ++h) {
      const LL kh = h / (H / Hk);
      attend(Sq, Sk, D, [&](LL i, LL j) { return score(h, i, j, qk(h, i, j)); }, [&](LL i, LL j) { return keep(h, i, j); },
             [&](LL j, LL d) { return val(v[(kh * Sk + j) * D + d]); }, o.data() + h * Sq * D, lse.data() + h * Sq);
    }
  }
};
const double kAttnAbs = 2e-2;  // p rounded to bf16 before p v, o to bf16

void swa_nested(const Run& r, bool g) {
  const std::string kn = "b31_swa_nested_d64" + sfx(g);
  for (LL window : {1LL, 37LL, 200LL}) {
    Heads a(1, 1, 200, 200, 64, 100 + unsigned(window));
    const float scale = 0.125f;
    std::vector<double> o, lse;
    a.ref([&](LL, LL, LL, double x) { return x * scale; }, [&](LL, LL i, LL j) { return j <= i && i - j < window; }, o, lse);
    DevLocal<bf16> q({200, 64}, a.q), k({200, 64}, a.k), v({200, 64}, a.v), od({200, 64}, {});
    DevLocal<float> ld({200, 1}, {});
    const int before = begin_case(r);
    if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), ld.view(), window, scale)) {
      check_rel(r, kn + ".o", od.download(), [&](LL i) { return o[i]; }, kBf, kAttnAbs);
      check_rel(r, kn + ".lse", ld.download(), [&](LL i) { return lse[i]; }, 1e-3, 1e-3);
    }
    end_case(r, kSet, kn + " window " + std::to_string(window), before);
  }
}

void cross(const Run& r, bool g) {
  const std::string kn = "b31_cross_d128" + sfx(g);
  Heads a(1, 1, 77, 333, 128, 120);
  const float scale = 0.088f;
  std::vector<double> o, lse;
  a.ref([&](LL, LL, LL, double x) { return x * scale; }, [](LL, LL, LL) { return true; }, o, lse);
  DevLocal<bf16> q({77, 128}, a.q), k({333, 128}, a.k), v({333, 128}, a.v), od({77, 128}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), scale))
    check_rel(r, kn, od.download(), [&](LL i) { return o[i]; }, kBf, kAttnAbs);
  end_case(r, kSet, kn + " 77x333", before);
}

void kvcache(const Run& r, bool g) {
  const std::string kn = "b31_kvcache_causal_d64" + sfx(g);
  const LL H = 3, Sq = 70, Sk = 250;
  Heads a(H, H, Sq, Sk, 64, 130);
  const float scale = 0.125f;
  std::vector<double> o, lse;
  a.ref([&](LL, LL, LL, double x) { return x * scale; }, [&](LL, LL i, LL j) { return j <= i + (Sk - Sq); }, o, lse);
  DevLocal<bf16> q({H, Sq, 64}, a.q), k({H, Sk, 64}, a.k), v({H, Sk, 64}, a.v), od({H, Sq, 64}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), scale))
    check_rel(r, kn, od.download(), [&](LL i) { return o[i]; }, kBf, kAttnAbs);
  end_case(r, kSet, kn + " 3x70x250", before);
}

void gqa_softcap(const Run& r, bool g) {
  const std::string kn = "b31_gqa_softcap_d128" + sfx(g);
  const LL H = 6, Hk = 2, S = 150;
  Heads a(H, Hk, S, S, 128, 140);
  for (auto& x : a.q) x = pkt::from_host<bf16>(4 * val(x));  // scores past the cap
  const float scale = 0.088f, cap = 5.0f;
  std::vector<double> o, lse;
  a.ref([&](LL, LL, LL, double x) { return cap * std::tanh(x * scale / cap); }, [](LL, LL i, LL j) { return j <= i; }, o, lse);
  DevLocal<bf16> q({H, S, 128}, a.q), k({Hk, S, 128}, a.k), v({Hk, S, 128}, a.v), od({H, S, 128}, {});
  DevLocal<float> ld({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), ld.view(), LL(H / Hk), scale, cap)) {
    check_rel(r, kn + ".o", od.download(), [&](LL i) { return o[i]; }, kBf, kAttnAbs);
    check_rel(r, kn + ".lse", ld.download(), [&](LL i) { return lse[i]; }, 1e-3, 1e-2);  // tanh.approx
  }
  end_case(r, kSet, kn + " 6/2x150", before);
}

void alibi_abs(const Run& r, bool g) {
  const std::string kn = "b31_alibi_abs_d64" + sfx(g);
  const LL H = 4, S = 190;
  Heads a(H, H, S, S, 64, 150);
  const std::vector<float> slopes = {0.5f, 0.25f, 0.125f, 0.0625f};
  const float scale = 0.125f;
  std::vector<double> o, lse;
  a.ref([&](LL h, LL i, LL j, double x) { return x * scale - std::fabs(double(i - j)) * slopes[h]; },
        [](LL, LL, LL) { return true; }, o, lse);
  DevLocal<bf16> q({H, S, 64}, a.q), k({H, S, 64}, a.k), v({H, S, 64}, a.v), od({H, S, 64}, {});
  DevLocal<float> sl({H}, slopes);
  const int before = begin_case(r);
  if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), sl.view(), scale))
    check_rel(r, kn, od.download(), [&](LL i) { return o[i]; }, kBf, kAttnAbs);
  end_case(r, kSet, kn + " 4x190", before);
}

void bias_keymask(const Run& r, bool g) {
  const std::string kn = "b31_bias_keymask_d64" + sfx(g);
  const LL H = 2, Sq = 100, Sk = 180;
  Heads a(H, H, Sq, Sk, 64, 160);
  const auto bias = rnd<float>(Sq * Sk, 161, -2.f, 2.f);
  auto valid = ints<int>(Sk, 0, 1, 162);
  valid[0] = 1;  // every row keeps a key
  const float scale = 0.125f;
  std::vector<double> o, lse;
  a.ref([&](LL, LL i, LL j, double x) { return x * scale + bias[i * Sk + j]; }, [&](LL, LL, LL j) { return valid[j] != 0; },
        o, lse);
  DevLocal<bf16> q({H, Sq, 64}, a.q), k({H, Sk, 64}, a.k), v({H, Sk, 64}, a.v), od({H, Sq, 64}, {});
  DevLocal<float> bd({Sq, Sk}, bias);
  DevLocal<int> vd({Sk}, valid);
  const int before = begin_case(r);
  if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), bd.view(), vd.view(), scale))
    check_rel(r, kn, od.download(), [&](LL i) { return o[i]; }, kBf, kAttnAbs);
  end_case(r, kSet, kn + " 2x100x180", before);
}

void gqa_d96(const Run& r) {
  const std::string kn = "b31_gqa_d96_general";
  const LL H = 4, Hk = 2, S = 75;
  Heads a(H, Hk, S, S, 96, 170);
  const float scale = 0.1f;
  std::vector<double> o, lse;
  a.ref([&](LL, LL, LL, double x) { return x * scale; }, [](LL, LL i, LL j) { return j <= i; }, o, lse);
  DevLocal<bf16> q({H, S, 96}, a.q), k({Hk, S, 96}, a.k), v({Hk, S, 96}, a.v), od({H, S, 96}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), scale))
    check_rel(r, kn, od.download(), [&](LL i) { return o[i]; }, kBf, kAttnAbs);
  end_case(r, kSet, kn + " 4/2x75", before);
}

void swa_skip(const Run& r) {
  const std::string kn = "b31_swa_skip_d128";
  for (LL window : {1LL, 65LL, 300LL}) {
    Heads a(1, 1, 230, 230, 128, 180 + unsigned(window));
    const float scale = 0.088f;
    std::vector<double> o, lse;
    a.ref([&](LL, LL, LL, double x) { return x * scale; }, [&](LL, LL i, LL j) { return j <= i && j > i - window; }, o, lse);
    DevLocal<bf16> q({230, 128}, a.q), k({230, 128}, a.k), v({230, 128}, a.v), od({230, 128}, {});
    const int before = begin_case(r);
    if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), window, scale))
      check_rel(r, kn, od.download(), [&](LL i) { return o[i]; }, kBf, kAttnAbs);
    end_case(r, kSet, kn + " window " + std::to_string(window), before);
  }
}

void short_keys(const Run& r) {
  const std::string kn = "b31_short_keys_onepass";
  Heads a(1, 1, 50, 200, 64, 190);
  const float scale = 0.125f;
  std::vector<double> o, lse;
  a.ref([&](LL, LL, LL, double x) { return x * scale; }, [](LL, LL, LL) { return true; }, o, lse);
  DevLocal<bf16> q({50, 64}, a.q), k({200, 64}, a.k), v({200, 64}, a.v);
  DevLocal<float> od({50, 64}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), scale))
    check_rel(r, kn, od.download(), [&](LL i) { return o[i]; }, kBf, 1e-2);
  end_case(r, kSet, kn + " 50x200", before);
}

void mask_after_exp(const Run& r) {
  const std::string kn = "b31_mask_after_exp_d64";
  Heads a(1, 1, 170, 170, 64, 200);
  const float scale = 0.125f;
  std::vector<double> o, lse;
  a.ref([&](LL, LL, LL, double x) { return x * scale; }, [](LL, LL i, LL j) { return j <= i; }, o, lse);
  DevLocal<bf16> q({170, 64}, a.q), k({170, 64}, a.k), v({170, 64}, a.v), od({170, 64}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, q.view(), k.view(), v.view(), od.view(), scale))
    check_rel(r, kn, od.download(), [&](LL i) { return o[i]; }, kBf, kAttnAbs);
  end_case(r, kSet, kn + " 170", before);
}

// ---- rotary ----
void rope_shd(const Run& r) {
  const std::string kn = "b31_rope_shd_inplace";
  const LL S = 37, H = 3;
  const auto x = rnd<bf16>(S * H * 128, 210);
  const auto c = rnd<float>(S * 64, 211), sn = rnd<float>(S * 64, 212);
  DevLocal<bf16> xd({S, H, 128}, x);
  DevLocal<float> cd({S, 64}, c), sd({S, 64}, sn);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), cd.view(), sd.view()))
    check_rel(r, kn, xd.download(), [&](LL i) {
      const LL s = i / (H * 128), j = i % 128, base = i - j;
      const LL jj = j % 64;
      const double x1 = val(x[base + jj]), x2 = val(x[base + 64 + jj]), cc = c[s * 64 + jj], ss = sn[s * 64 + jj];
      return j < 64 ? x1 * cc - x2 * ss : x2 * cc + x1 * ss;
    }, kBf, 1e-6);
  end_case(r, kSet, kn + " 37x3x128", before);
}

void rope_interleaved(const Run& r) {
  const std::string kn = "b31_rope_interleaved_4d";
  const LL S = 21, H = 5, P = 40;  // D = 80
  const auto x = rnd<bf16>(S * H * P * 2, 220);
  std::vector<float> f(P);
  for (LL j = 0; j < P; ++j) f[j] = float(std::pow(10000.0, -2.0 * double(j) / double(2 * P)));
  DevLocal<bf16> xd({S, H, P, 2}, x), y({S, H, P, 2}, {});
  DevLocal<float> fd({P}, f);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), fd.view(), y.view()))
    check_rel(r, kn, y.download(), [&](LL i) {
      const LL s = i / (H * P * 2), j = (i / 2) % P, base = i - i % 2;
      const double th = double(float(double(s) * f[j]));
      const double ev = val(x[base]), od = val(x[base + 1]);
      return i % 2 == 0 ? ev * std::cos(th) - od * std::sin(th) : od * std::cos(th) + ev * std::sin(th);
    }, kBf, 1e-5);
  end_case(r, kSet, kn + " 21x5x40x2", before);
}

void rope_packed(const Run& r, bool inplace) {
  const std::string kn = inplace ? "b31_rope_packed_inplace" : "b31_rope_packed_gather";
  const LL T = 45, H = 3, N = H * 128, P = 64;
  const auto x = rnd<bf16>(T * N, 230);
  auto pos = ints<int>(T, 0, P - 1, 231);
  std::vector<float> f(64), c(P * 64), sn(P * 64);
  for (LL j = 0; j < 64; ++j) f[j] = float(std::pow(10000.0, -double(j) / 64.0));
  for (LL p = 0; p < P; ++p)
    for (LL j = 0; j < 64; ++j) c[p * 64 + j] = float(std::cos(double(p) * f[j])), sn[p * 64 + j] = float(std::sin(double(p) * f[j]));
  auto want = [&](LL i) {
    const LL t = i / N, j = i % 128, base = i - j, jj = j % 64;
    const double cc = inplace ? std::cos(double(float(float(pos[t]) * f[jj]))) : c[pos[t] * 64 + jj];
    const double ss = inplace ? std::sin(double(float(float(pos[t]) * f[jj]))) : sn[pos[t] * 64 + jj];
    const double x1 = val(x[base + jj]), x2 = val(x[base + 64 + jj]);
    return j < 64 ? x1 * cc - x2 * ss : x2 * cc + x1 * ss;
  };
  DevLocal<bf16> xd({T, N}, x), y({T, N}, {});
  DevLocal<int> pd({T, 1}, pos);
  DevLocal<float> fd({64}, f), cd({P, 64}, c), sd({P, 64}, sn);
  const int before = begin_case(r);
  if (inplace) {
    if (run(r, kn, 1, xd.view(), pd.view(), fd.view())) check_rel(r, kn, xd.download(), want, kBf, 1e-5);
  } else if (run(r, kn, 2, xd.view(), pd.view(), cd.view(), sd.view(), y.view())) {
    check_rel(r, kn, y.download(), want, kBf, 1e-6);
  }
  end_case(r, kSet, kn + " 45x384", before);
}

// ---- norms ----
void rmsnorm_fp8(const Run& r) {
  const std::string kn = "b31_rmsnorm_fp8_rows";
  const LL M = 11, N = 1300;
  const float eps = 1e-5f;
  const auto x = rnd<bf16>(M * N, 240, -3.f, 3.f), w = rnd<bf16>(N, 241, 0.5f, 1.5f);
  const auto y = rmsnorm_rows(M, N, eps, [&](LL i) { return val(x[i]); }, [&](LL j) { return val(w[j]); });
  std::vector<double> amax(M, 1e-12);
  for (LL i = 0; i < M * N; ++i) amax[i / N] = std::max(amax[i / N], std::fabs(y[i]));
  DevLocal<bf16> xd({M, N}, x), wd({1, N}, w);
  DevLocal<pk::f8e4m3> q({M, N}, {});
  DevLocal<float> sc({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), q.view(), sc.view(), eps)) {
    const auto s = sc.download();
    check_rel(r, kn + ".scale", s, [&](LL m) { return amax[m] / 448; }, 1e-4, 0);
    // Dequantised, within e4m3's half unit (2^-4 relative) of the row's amax-scaled value.
    const auto qv = q.download();
    std::vector<double> deq(M * N);
    for (LL i = 0; i < M * N; ++i) deq[i] = val(qv[i]) * (amax[i / N] / 448);
    check(r, kn + ".q", deq, [&](LL i) { return y[i]; }, [&](LL i) { return std::fabs(y[i]) / 16 + amax[i / N] * 1e-3; });
  }
  end_case(r, kSet, kn + " 11x1300", before);
}

void add_rmsnorm(const Run& r) {
  const std::string kn = "b31_add_rmsnorm_inplace";
  const LL M = 13, N = 1000;
  const float eps = 1e-6f;
  const auto x = rnd<bf16>(M * N, 250), res = rnd<bf16>(M * N, 251), w = rnd<bf16>(N, 252);
  std::vector<double> h(M * N);
  for (LL i = 0; i < M * N; ++i) h[i] = bf16r(val(x[i]) + val(res[i]));
  const auto y = rmsnorm_rows(M, N, eps, [&](LL i) { return h[i]; }, [&](LL j) { return val(w[j]); });
  DevLocal<bf16> xd({M, N}, x), rd({M, N}, res), wd({N}, w), yd({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), rd.view(), wd.view(), yd.view(), eps)) {
    check_rel(r, kn + ".x", xd.download(), [&](LL i) { return h[i]; }, 0, 0);
    check_rel(r, kn + ".y", yd.download(), [&](LL i) { return y[i]; }, kBf, 1e-5);
  }
  end_case(r, kSet, kn + " 13x1000", before);
}

void rmsnorm_wide(const Run& r) {
  const std::string kn = "b31_rmsnorm_wide_inplace";
  const LL M = 19, N = 700;
  const float eps = 1e-5f;
  const auto x = rnd<float>(M * N, 260), w = rnd<float>(N, 261);
  const auto y = rmsnorm_rows(M, N, eps, [&](LL i) { return double(x[i]); }, [&](LL j) { return double(w[j]); });
  DevLocal<float> xd({M, N}, x), wd({1, N}, w);
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), wd.view(), eps)) check_rel(r, kn, xd.download(), [&](LL i) { return y[i]; }, 1e-5, 1e-6);
  end_case(r, kSet, kn + " 19x700", before);
}

// ---- routing ----
void router(const Run& r) {
  const std::string kn = "b31_router_top2";
  const LL T = 70, E = 60;
  const auto lg = rnd<float>(T * E, 270, -4.f, -1.f);  // all negative: a padding zero would win
  DevLocal<float> ld({T, E}, lg), w({T, 2}, {});
  DevLocal<int> ids({T, 2}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), ids.view(), w.view())) {
    std::vector<LL> i1(T), i2(T);
    for (LL t = 0; t < T; ++t) {
      LL a = 0;
      for (LL e = 1; e < E; ++e) if (lg[t * E + e] > lg[t * E + a]) a = e;
      LL b = a == 0 ? 1 : 0;
      for (LL e = 0; e < E; ++e) if (e != a && lg[t * E + e] > lg[t * E + b]) b = e;
      i1[t] = a, i2[t] = b;
    }
    check(r, kn + ".ids", ids.download(), [&](LL i) { return double(i % 2 ? i2[i / 2] : i1[i / 2]); }, exact());
    check_rel(r, kn + ".w", w.download(), [&](LL i) {
      const double a = lg[i / 2 * E + i1[i / 2]], b = lg[i / 2 * E + i2[i / 2]];
      const double ea = 1, eb = std::exp(b - a);
      return (i % 2 ? eb : ea) / (ea + eb);
    }, 1e-5, 1e-6);
  }
  end_case(r, kSet, kn + " 70x60", before);
}

void argmax(const Run& r) {
  const std::string kn = "b31_argmax_chunked";
  const LL T = 13, V = 3000;
  auto lg = rnd<float>(T * V, 280, -9.f, -1.f);
  lg[3 * V + 2999] = 5, lg[4 * V + 1024] = 5, lg[4 * V + 2047] = 5;  // the last column; a tie across chunks
  DevLocal<float> ld({T, V}, lg);
  DevLocal<int> best({T, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), best.view()))
    check(r, kn, best.download(), [&](LL t) {
      LL a = 0;
      for (LL v = 1; v < V; ++v) if (lg[t * V + v] > lg[t * V + a]) a = v;
      return double(a);
    }, exact());
  end_case(r, kSet, kn + " 13x3000", before);
}

// ---- embeddings ----
void embed_pos(const Run& r) {
  const std::string kn = "b31_embed_pos";
  const LL V = 50, D = 300, T = 40, P = 7;
  const auto table = rnd<bf16>(V * D, 290), pos = rnd<bf16>(P * D, 291);
  auto ids = ints<int>(T, -3, V + 3, 292);
  DevLocal<bf16> td({V, D}, table), pd({P, D}, pos), y({T, D}, {});
  DevLocal<int> id({T, 1}, ids);
  const int before = begin_case(r);
  if (run(r, kn, 2, td.view(), id.view(), pd.view(), y.view()))
    check_rel(r, kn, y.download(), [&](LL i) {
      const LL t = i / D, n = i % D;
      const double e = ids[t] >= 0 && ids[t] < V ? val(table[ids[t] * D + n]) : 0.0;
      return e * double(float(std::sqrt(float(D)))) + val(pos[(t % P) * D + n]);
    }, kBf, 1e-5);
  end_case(r, kSet, kn + " 40x300", before);
}

// ---- multi-phase and in place ----
void col_standardise(const Run& r) {
  const std::string kn = "b31_col_standardise";
  const LL M = 77, N = 300;
  const float eps = 1e-5f;
  const auto x = rnd<float>(M * N, 300, -2.f, 3.f);
  std::vector<double> mean(N, 0), var(N, 0);
  for (LL i = 0; i < M * N; ++i) mean[i % N] += x[i] / double(M);
  for (LL i = 0; i < M * N; ++i) var[i % N] += (x[i] - mean[i % N]) * (x[i] - mean[i % N]) / double(M);
  DevLocal<float> xd({M, N}, x), st({2, N}, {}), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), st.view(), y.view(), eps))
    check_rel(r, kn, y.download(), [&](LL i) { return (x[i] - mean[i % N]) / std::sqrt(var[i % N] + eps); }, 1e-4, 1e-4);
  end_case(r, kSet, kn + " 77x300", before);
}

void global_softmax(const Run& r) {
  const std::string kn = "b31_global_softmax";
  for (LL N : {1000LL, 5000LL}) {
    const auto x = rnd<float>(N, 310 + unsigned(N), -20.f, -5.f);  // all negative: padding must not count
    double mx = -1e300, s = 0;
    for (float v : x) mx = std::max(mx, double(v));
    for (float v : x) s += std::exp(v - mx);
    DevLocal<float> xd({N}, x), part({(N + 1023) / 1024}, {}), gm({1}, {}), tot({1, 1}, {}), y({N}, {});
    const int before = begin_case(r);
    if (run(r, kn, 2, xd.view(), part.view(), gm.view(), tot.view(), y.view()))
      check_rel(r, kn, y.download(), [&](LL i) { return std::exp(x[i] - mx) / s; }, 1e-5, 1e-9);
    end_case(r, kSet, kn + " " + std::to_string(N), before);
  }
}

// The one-tile loop's read of part and write of part[0] (a block barrier between): part[0] = max(x).
void global_max_in_place(const Run& r) {
  const std::string kn = "b31_global_max_in_place";
  for (LL N : {1000LL, 70000LL}) {
    const auto x = rnd<float>(N, 320 + unsigned(N), -20.f, -5.f);  // all negative: padding must not count
    double mx = -1e300;
    for (float v : x) mx = std::max(mx, double(v));
    DevLocal<float> xd({N}, x), part({(N + 1023) / 1024}, {});
    const int before = begin_case(r);
    if (run(r, kn, 2, xd.view(), part.view()))
      check_rel(r, kn, std::vector<float>{part.download()[0]}, [&](LL) { return mx; }, 0, 0);
    end_case(r, kSet, kn + " " + std::to_string(N), before);
  }
}

void silu_gate(const Run& r) {
  const std::string kn = "b31_inplace_silu_gate";
  const LL M = 33, N = 128;
  const auto x = rnd<float>(M * N, 320), g = rnd<float>(N, 321);
  std::vector<double> y(M * N), rs(M, 0);
  for (LL i = 0; i < M * N; ++i) y[i] = x[i] + silu(x[i]) * g[i % N], rs[i / N] += y[i];
  DevLocal<float> xd({M, N}, x), gd({N}, g), rsd({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), gd.view(), rsd.view())) {
    check_rel(r, kn + ".x", xd.download(), [&](LL i) { return y[i]; }, 1e-5, 1e-6);
    check_rel(r, kn + ".rs", rsd.download(), [&](LL i) { return rs[i]; }, 1e-5, 1e-4);
  }
  end_case(r, kSet, kn + " 33x128", before);
}

void ema(const Run& r) {
  const std::string kn = "b31_ema_inplace_3d";
  const LL A = 3, B = 13, C = 100;
  const auto p = rnd<float>(A * B * C, 330), q = rnd<float>(A * B * C, 331);
  const float d = 0.9f;
  DevLocal<float> pd({A, B, C}, p), qd({A, B, C}, q);
  const int before = begin_case(r);
  if (run(r, kn, 1, pd.view(), qd.view(), d))
    check_rel(r, kn, pd.download(), [&](LL i) { return p[i] * d + q[i] * double(1.0f - d); }, 1e-6, 1e-7);
  end_case(r, kSet, kn + " 3x13x100", before);
}

// ---- GEMMs ----
void gemm_ab_residual(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto a = rnd<bf16>(M * K, 340), b = rnd<bf16>(K * N, 341), res = rnd<bf16>(M * N, 342);
  const Gemm g = gemm(M, N, K, [&](LL m, LL q) { return val(a[m * K + q]); }, [&](LL q, LL n) { return val(b[q * N + n]); });
  DevLocal<bf16> ad({M, K}, a), bd({K, N}, b), rd({M, N}, res), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), rd.view(), c.view()))
    check(r, kn, c.download(), [&](LL i) { return g.c[i] + val(res[i]); },
          [&](LL i) { return kBf * std::fabs(g.c[i] + val(res[i])) + 1e-5 * g.mag[i] + 1e-6; });
  end_case(r, kSet, kn + " " + dims({M, N, K}) + " " + how, before);
}

void gemm_accumulate(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto a = rnd<bf16>(M * K, 350), b = rnd<bf16>(N * K, 351), c0 = rnd<bf16>(M * N, 352);
  const Gemm g = gemm(M, N, K, [&](LL m, LL q) { return val(a[m * K + q]); }, [&](LL q, LL n) { return val(b[n * K + q]); });
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), c({M, N}, c0);
  const int before = begin_case(r);
  if (run(r, kn, 1, ad.view(), bd.view(), c.view()))
    check(r, kn, c.download(), [&](LL i) { return g.c[i] + val(c0[i]); },
          [&](LL i) { return kBf * std::fabs(g.c[i] + val(c0[i])) + 1e-5 * g.mag[i] + 1e-6; });
  end_case(r, kSet, kn + " " + dims({M, N, K}) + " " + how, before);
}

void gemm_k48(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto a = rnd<bf16>(M * K, 360), b = rnd<bf16>(K * N, 361);
  const float alpha = 0.75f;
  const Gemm g = gemm(M, N, K, [&](LL m, LL q) { return val(a[m * K + q]); }, [&](LL q, LL n) { return val(b[q * N + n]); });
  DevLocal<bf16> ad({M, K}, a), bd({K, N}, b);
  DevLocal<float> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), c.view(), alpha))
    check(r, kn, c.download(), [&](LL i) { return std::max(g.c[i], 0.0) * alpha; }, [&](LL i) { return 1e-5 * g.mag[i] + 1e-6; });
  end_case(r, kSet, kn + " " + dims({M, N, K}) + " " + how, before);
}

// ---- peers ----
void peers(const Run& r) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const LL M = 70, N = 200;
  std::vector<std::vector<float>> xs;
  std::vector<std::vector<bf16>> bs;
  for (int q = 0; q < W; ++q) xs.push_back(rnd<float>(W * M * N, 400 + 7u * unsigned(q))), bs.push_back(rnd<bf16>(M * N, 500 + 7u * unsigned(q)));
  {
    SymArg<float> x(r.ctx, {M, N}, &xs[me]), y(r.ctx, {M, N}, nullptr);
    // xs[q] holds W M N values; the first M N are rank q's x here.
    const int before = begin_case(r);
    if (run(r, "b31_ring_shift", 2, x.view, y.view))
      check_rel(r, "b31_ring_shift", y.download(), [&](LL i) { return 2.0 * xs[prev][i] + prev; }, 1e-6, 1e-6);
    end_case(r, kSet, "b31_ring_shift 70x200", before);
  }
  {
    SymArg<float> x(r.ctx, {W * M, N}, &xs[me]), y(r.ctx, {M, N}, nullptr);
    const int before = begin_case(r);
    if (run(r, "b31_rs_by_adds", 2, x.view, y.view))
      check_rel(r, "b31_rs_by_adds", y.download(), [&](LL i) {
        double s = 0;
        for (int q = 0; q < W; ++q) s += xs[q][me * M * N + i];
        return s;
      }, 1e-5, 1e-5);
    end_case(r, kSet, "b31_rs_by_adds 70x200", before);
  }
  {
    SymArg<bf16> x(r.ctx, {M, N}, &bs[me]);
    DevLocal<bf16> y({M, N}, {});
    const int before = begin_case(r);
    if (run(r, "b31_pull_prev_silu", 2, x.view, y.view()))
      check_rel(r, "b31_pull_prev_silu", y.download(), [&](LL i) { return silu(val(bs[prev][i]) + val(bs[me][i])); }, kBf, 1e-5);
    end_case(r, kSet, "b31_pull_prev_silu 70x200", before);
  }
}

void cases(const Run& r) {
  if (r.W == 1) {
    for (bool g : {false, true}) {
      swa_nested(r, g), cross(r, g), kvcache(r, g), gqa_softcap(r, g), alibi_abs(r, g), bias_keymask(r, g);
      const std::string s = sfx(g), how = g ? "templates off" : "";
      gemm_ab_residual(r, "b31_gemm_ab_residual" + s, 200, 264, 200, how);
      gemm_accumulate(r, "b31_gemm_accumulate_inplace" + s, 200, 264, 200, how);
      gemm_k48(r, "b31_gemm_k48_relu_f32" + s, 200, 264, 200, how);
    }
    // K = 100 (not a multiple of 8): the general-path twins.
    gemm_ab_residual(r, "b31_gemm_ab_residual", 70, 136, 100, "general twin");
    gemm_accumulate(r, "b31_gemm_accumulate_inplace", 70, 136, 100, "general twin");
    gemm_k48(r, "b31_gemm_k48_relu_f32", 70, 136, 100, "general twin");
    gqa_d96(r), swa_skip(r), short_keys(r), mask_after_exp(r);
    rope_shd(r), rope_interleaved(r), rope_packed(r, false), rope_packed(r, true);
    rmsnorm_fp8(r), add_rmsnorm(r), rmsnorm_wide(r);
    router(r), argmax(r), embed_pos(r);
    col_standardise(r), global_softmax(r), global_max_in_place(r), silu_gate(r), ema(r);
  }
  peers(r);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_USER_SPECS31_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return pkt::finish("user_specs31_jit_test");
  return run_worlds("user_specs31_jit_test", g_kernels, cases);
}

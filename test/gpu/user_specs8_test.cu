// The eighth user-written spec set (test/specs/user_specs8.pk.cpp): the general-path kernels,
// single-GPU ones at world size 1 by PKT_LAUNCH and multi-rank ones at W = 1 and at 2, 3 and 4
// ranks sharing one GPU (or 2 GPUs). The kernels that take a Hopper template (GEMMs, multi-query
// attention, the split launches) run in user_specs8_jit_test. Every tiled dimension has a tail;
// inputs are random and never all zero; outputs are poisoned first (or random where adds
// accumulate); every element is checked against a float64 reference of what the spec says.
// Each check prints one PASS or FAIL line with its max error.
#include PK_USER_SPECS8_CU
#include "fp8_model.h"
#include "sym_test_util.h"
#include "attention_reference.h"
#include "spec_check.h"
#include "tile_test_util.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <numeric>
#include <random>

namespace {

using pk::bf16;
using pk::f16;
using pkt::Dev;
using pkt::DevLocal;
using pkt::DevTensor;
using pkt::poisoned;
using pkt::SymArg;
using LL = long long;

constexpr int kGrid = 132;
constexpr double kBf16 = 1.0 / 128, kF16 = 1.0 / 1024;  // one ulp, relative
// P is rounded to bf16 before P V in every online-softmax loop (as FlashAttention does): the
// tolerance attention_reference.h uses for the same loops.
constexpr double kAttn = 2e-2;

void sync() { PKT_CUDA(cudaDeviceSynchronize()); }

using pkt::hv;
using pkt::widen;
double bf16r(double x) { return pkt::bf16_round(float(x)); }

// Random values of magnitude [0.25, 2) * scale with random signs (or positive), as T.
template <class T>
std::vector<T> rnd(LL n, unsigned seed, float scale = 1.f, bool positive = false) {
  return pkt::spec_random<T>(n, seed, 5u, scale, positive);
}

// One PASS or FAIL line per output (spec_check.h).
template <class T>
void check(const char* name, int W, int rank, const std::vector<T>& got, const std::function<double(LL)>& want,
           double atol, double rtol, const std::function<double(LL)>& loose = nullptr) {
  pkt::spec_check("user_specs8", name, W, rank, got, want, atol, rtol, loose);
}
template <class T>
void check(const char* name, const DevTensor<T>& out, const std::function<double(LL)>& want, double atol, double rtol) {
  check(name, 1, 0, out.download(), want, atol, rtol);
}

// An fp8 code against the value it encodes: within half a step of the format (2^-(man+1)
// relative, or half the subnormal step) plus a part in 10^5 for the kernel's reciprocal of the
// scale (within 2 ulp of fp32 division). A wrong scale or a lost element is far outside.
double fp8_tol(double want, pkt::Fp8Format f) {
  const double sub = std::ldexp(1.0, 1 - f.bias - f.man);
  return std::max(std::fabs(want) * std::ldexp(1.0, -(f.man + 1)), sub / 2) * 1.0001 + 1e-5 * std::fabs(want);
}

// ================================================================ attention (general path) ==

// The float64 reference of the attention kernels (attention_reference.h).
const auto attn_ref = pkt::reference_head_mapped;

void attention() {
  {  // 1: window 37 over S = 150 (the window crosses 64-key tiles; the first rows see fewer keys)
    const LL H = 3, S = 150, D = 64, window = 37;
    const float scale = 0.125f;
    DevTensor<bf16> q({H, S, D}, 1), k({H, S, D}, 2), v({H, S, D}, 3), o({H, S, D}, 0, true);
    PKT_LAUNCH(sliding_window_attention_d64, kGrid)(pk::LaunchContext{}, q.view(), k.view(), v.view(), o.view(), window,
                                                    scale);
    sync();
    auto qd = widen(q.host), kd = widen(k.host), vd = widen(v.host);
    std::vector<double> want(H * S * D);
    for (LL h = 0; h < H; ++h)
      attn_ref(&qd[h * S * D], &kd[h * S * D], &vd[h * S * D], S, S, D, [&](LL, LL, double x) { return x * scale; },
               [&](LL i, LL j) { return j <= i && j > i - window; }, &want[h * S * D], nullptr);
    check("sliding_window_attention_d64", o, [&](LL i) { return want[i]; }, kAttn, kAttn);
  }
  {  // 2: ALiBi slopes 2^(-8 (h + 1) / H), causal, with the log-sum-exp
    const LL H = 4, S = 130, D = 128;
    const float scale = float(1 / std::sqrt(128.0));
    DevTensor<bf16> q({H, S, D}, 4), k({H, S, D}, 5), v({H, S, D}, 6), o({H, S, D}, 0, true);
    DevTensor<float> lse({H, S, 1}, 0, true);
    PKT_LAUNCH(alibi_causal_attention_d128, kGrid)(pk::LaunchContext{}, q.view(), k.view(), v.view(), o.view(),
                                                   lse.view(), scale);
    sync();
    auto qd = widen(q.host), kd = widen(k.host), vd = widen(v.host);
    std::vector<double> want(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h) {
      const double slope = std::pow(2.0, -8.0 * double(h + 1) / double(H));
      attn_ref(&qd[h * S * D], &kd[h * S * D], &vd[h * S * D], S, S, D,
               [&](LL i, LL j, double x) { return x * scale - slope * double(i - j); }, [](LL i, LL j) { return j <= i; },
               &want[h * S * D], &wl[h * S]);
    }
    check("alibi_causal_attention_d128.o", o, [&](LL i) { return want[i]; }, kAttn, kAttn);
    // The log-sum-exp takes no bf16 rounding: fp32 sums and ex2.approx (about 2^-22 relative).
    check("alibi_causal_attention_d128.lse", lse, [&](LL i) { return wl[i]; }, 1e-3, 1e-4);
  }
  {  // 4: soft-capped causal scores, the cap small enough to bend them (scores reach about 4)
    const LL S = 100, D = 64;
    const float scale = 0.4f, cap = 3.0f;
    DevTensor<bf16> q({S, D}, 7), k({S, D}, 8), v({S, D}, 9), o({S, D}, 0, true);
    PKT_LAUNCH(softcap_causal_attention_d64, kGrid)(pk::LaunchContext{}, q.view(), k.view(), v.view(), o.view(), scale,
                                                    cap);
    sync();
    auto qd = widen(q.host), kd = widen(k.host), vd = widen(v.host);
    std::vector<double> want(S * D);
    attn_ref(qd.data(), kd.data(), vd.data(), S, S, D, [&](LL, LL, double x) { return cap * std::tanh(x * scale / cap); },
             [](LL i, LL j) { return j <= i; }, want.data(), nullptr);
    check("softcap_causal_attention_d64", o, [&](LL i) { return want[i]; }, kAttn, kAttn);
  }
  {  // 5: one query row per head over the first `len` of L cached rows (len not a multiple of 64)
    const LL H = 5, L = 300, D = 128, len = 257;
    const float scale = float(1 / std::sqrt(128.0));
    DevTensor<bf16> q({H, D}, 10), kc({H, L, D}, 11), vc({H, L, D}, 12);
    DevTensor<float> o({H, D}, 0, true);
    PKT_LAUNCH(decode_attention_1row, kGrid)(pk::LaunchContext{}, q.view(), kc.view(), vc.view(), o.view(), len, scale);
    sync();
    auto qd = widen(q.host), kd = widen(kc.host), vd = widen(vc.host);
    std::vector<double> want(H * D);
    for (LL h = 0; h < H; ++h)
      attn_ref(&qd[h * D], &kd[h * L * D], &vd[h * L * D], 1, L, D, [&](LL, LL, double x) { return x * scale; },
               [&](LL, LL j) { return j < len; }, &want[h * D], nullptr);
    check("decode_attention_1row", o, [&](LL i) { return want[i]; }, kAttn, kAttn);
  }
}

// ================================================================ norms, fp8, rows ==

// Mean and rstd of each row of a [M, N] host matrix.
void row_stats(const std::vector<double>& x, LL M, LL N, std::vector<float>& mean, std::vector<float>& rstd) {
  mean.assign(M, 0), rstd.assign(M, 0);
  for (LL m = 0; m < M; ++m) {
    double mu = 0, var = 0;
    for (LL n = 0; n < N; ++n) mu += x[m * N + n] / N;
    for (LL n = 0; n < N; ++n) var += (x[m * N + n] - mu) * (x[m * N + n] - mu) / N;
    mean[m] = float(mu), rstd[m] = float(1 / std::sqrt(var + 1e-5));
  }
}

void norms_and_fp8() {
  {  // 10
    const LL M = 21, N = 1000;
    DevTensor<bf16> x({M, N}, 20), dy({M, N}, 21), dx({M, N}, 0, true);
    DevTensor<float> gamma({N}, 22);
    std::vector<float> mu, rs;
    auto xd = widen(x.host);
    row_stats(xd, M, N, mu, rs);
    Dev<float> mean(mu, {M, 1}), rstd(rs, {M, 1});
    PKT_LAUNCH(layer_norm_bwd_dx, kGrid)(pk::LaunchContext{}, x.view(), dy.view(), gamma.view(), mean.view(), rstd.view(),
                                         dx.view());
    sync();
    std::vector<double> want(M * N);
    for (LL m = 0; m < M; ++m) {
      double c1 = 0, c2 = 0;
      for (LL n = 0; n < N; ++n) {
        const double xh = (xd[m * N + n] - mu[m]) * rs[m], g = dy.at(m * N + n) * gamma.at(n);
        c1 += g / N, c2 += g * xh / N;
      }
      for (LL n = 0; n < N; ++n) {
        const double xh = (xd[m * N + n] - mu[m]) * rs[m], g = dy.at(m * N + n) * gamma.at(n);
        want[m * N + n] = (g - c1 - xh * c2) * rs[m];
      }
    }
    // fp32 inside, one bf16 rounding at the end; rstd is about 1.7, so 1e-3 covers the fp32 sums.
    check("layer_norm_bwd_dx", dx, [&](LL i) { return want[i]; }, 1e-3, kBf16);
  }
  {  // 11: 37 rows in 16-row steps, 100 columns in 64-column strips
    const LL M = 37, N = 100;
    DevTensor<bf16> x({M, N}, 23), dy({M, N}, 24);
    DevTensor<float> dg({N, 1}, 0, true), db({N, 1}, 0, true);
    std::vector<float> mu, rs;
    auto xd = widen(x.host);
    row_stats(xd, M, N, mu, rs);
    Dev<float> mean(mu, {M, 1}), rstd(rs, {M, 1});
    PKT_LAUNCH(layer_norm_bwd_dgamma_dbeta, kGrid)(pk::LaunchContext{}, x.view(), dy.view(), mean.view(), rstd.view(),
                                                   dg.view(), db.view());
    sync();
    check("layer_norm_bwd_dgamma_dbeta.dgamma", dg, [&](LL n) {
      double s = 0;
      for (LL m = 0; m < M; ++m) s += dy.at(m * N + n) * (xd[m * N + n] - mu[m]) * rs[m];
      return s;
    }, 1e-4, 1e-5);
    check("layer_norm_bwd_dgamma_dbeta.dbeta", db, [&](LL n) {
      double s = 0;
      for (LL m = 0; m < M; ++m) s += dy.at(m * N + n);
      return s;
    }, 1e-4, 1e-5);
  }
  {  // 12: 200 x 300: 2 x 3 blocks, the last ones partial
    const LL M = 200, N = 300, BM = 2, BN = 3;
    DevTensor<bf16> w({M, N}, 25);
    Dev<pk::f8e4m3> q({M, N}, poisoned);
    DevTensor<float> sc({BM, BN}, 0, true);
    PKT_LAUNCH(fp8_quant_block128, kGrid)(pk::LaunchContext{}, w.view(), q.view(), sc.view());
    sync();
    std::vector<float> amax(BM * BN, 0.f);
    for (LL i = 0; i < M * N; ++i) {
      float& a = amax[(i / N / 128) * BN + (i % N) / 128];
      a = std::max(a, std::fabs(float(w.at(i))));
    }
    check("fp8_quant_block128.scale", sc, [&](LL b) { return double(amax[b]) / 448.0; }, 0, 1e-6);
    auto v = [&](LL i) { return w.at(i) * 448.0 / amax[(i / N / 128) * BN + (i % N) / 128]; };
    check("fp8_quant_block128.q", 1, 0, q.download(), v, 0, 0, [&](LL i) { return fp8_tol(v(i), pkt::kE4M3); });
  }
  {  // 13: q [37, 100] e5m2 with a per-row scale, transposed into [100, 37]
    const LL M = 37, N = 100;
    Dev<pk::f8e5m2> q(rnd<pk::f8e5m2>(M * N, 26, 4.f), {M, N});
    DevTensor<float> s({M, 1}, 27);
    DevTensor<bf16> yb({N, M}, 0, true);
    PKT_LAUNCH(fp8_dequant_transpose, kGrid)(pk::LaunchContext{}, q.view(), s.view(), yb.view());
    sync();
    // One product of an e5m2 value and an fp32 scale, rounded to fp32 then to bf16 (1 ulp).
    check("fp8_dequant_transpose", yb, [&](LL i) { return hv(q.host[(i % M) * N + i / M]) * s.at(i % M); }, 0, kBf16);
  }
}

void routing_and_rows() {
  {  // 14: top-3 of 40 experts for 37 tokens
    const LL T = 37, E = 40, K = 3;
    DevTensor<float> lg({T, E}, 30), wts({T, K}, 0, true);
    Dev<int> ids({T, K}, poisoned);
    PKT_LAUNCH(topk_softmax_routing, kGrid)(pk::LaunchContext{}, lg.view(), ids.view(), wts.view(), K);
    sync();
    std::vector<double> p(T * E);
    std::vector<LL> want(T * K);
    std::vector<bool> tie(T, false);
    for (LL t = 0; t < T; ++t) {
      double mx = -1e300, s = 0;
      for (LL e = 0; e < E; ++e) mx = std::max(mx, lg.at(t * E + e));
      for (LL e = 0; e < E; ++e) s += std::exp(lg.at(t * E + e) - mx);
      std::vector<std::pair<double, LL>> o(E);
      for (LL e = 0; e < E; ++e) p[t * E + e] = std::exp(lg.at(t * E + e) - mx) / s, o[e] = {-p[t * E + e], e};
      std::sort(o.begin(), o.end());
      for (LL j = 0; j < K; ++j) want[t * K + j] = o[j].second;
      // The kernel's probabilities are fp32 with ex2.approx: a gap below 1e-6 may order either way.
      for (LL j = 0; j < K; ++j) tie[t] = tie[t] || o[j + 1].first - o[j].first < 1e-6;
    }
    auto got = ids.download();
    check("topk_softmax_routing.ids", 1, 0, got, [&](LL i) { return tie[i / K] ? double(got[i]) : double(want[i]); }, 0, 0);
    // The weight stored beside each id is that expert's probability (fp32 softmax: 1e-6).
    check("topk_softmax_routing.wts", wts, [&](LL i) {
      const LL e = got[i];
      return e >= 0 && e < E ? p[(i / K) * E + e] : -1.0;
    }, 1e-6, 1e-5);
  }
  {  // 15: 2 choices per token, slots with drops (-1) and rows past the buffer (read as zeros)
    const LL T = 37, D = 300, NE = 80, K = 2;
    DevTensor<bf16> eo({NE, D}, 31), y({T, D}, 0, true);
    auto sl = pkt::random_ints<int>(T * K, -1, NE + 3, 32);
    sl[0] = -1, sl[3] = int(NE), sl[5] = int(NE - 1);
    Dev<int> slot(sl, {T, K});
    DevTensor<float> w({T, K}, 33);
    PKT_LAUNCH(moe_unpermute_weighted, kGrid)(pk::LaunchContext{}, eo.view(), slot.view(), w.view(), y.view(), K);
    sync();
    check("moe_unpermute_weighted", y, [&](LL i) {
      const LL t = i / D, n = i % D;
      double s = 0;
      for (LL j = 0; j < K; ++j) {
        const LL r = sl[t * K + j];
        if (r >= 0 && r < NE) s += w.at(t * K + j) * eo.at(r * D + n);
      }
      return s;
    }, 1e-5, kBf16);
  }
  {  // 16: 37 tokens into 20 rows, duplicates and ids outside the table
    const LL T = 37, D = 100, V = 20;
    auto idv = pkt::random_ints<int>(T, -1, V, 34);
    idv[1] = idv[2] = idv[3] = 7, idv[4] = -1, idv[5] = int(V);
    Dev<int> ids(idv, {T});
    DevTensor<float> dy({T, D}, 35), dt({V, D}, 36);  // the table gradient starts random: adds accumulate
    const auto dt0 = dt.host;
    PKT_LAUNCH(embedding_bwd_scatter_add, kGrid)(pk::LaunchContext{}, ids.view(), dy.view(), dt.view());
    sync();
    check("embedding_bwd_scatter_add", dt, [&](LL i) {
      double s = dt0[i];
      for (LL t = 0; t < T; ++t)
        if (idv[t] == i / D) s += dy.at(t * D + i % D);
      return s;
    }, 1e-5, 1e-6);  // fp32 atomics in any order
  }
  {  // 17: [5, 37, 64]: 37 heads in 16-head tiles
    const LL T = 5, H = 37, pos0 = 3;
    const float base = 10000.f;
    DevTensor<bf16> x({T, H, 64}, 37), y({T, H, 64}, 0, true);
    PKT_LAUNCH(rope_neox_3d_computed, kGrid)(pk::LaunchContext{}, x.view(), y.view(), pos0, base);
    sync();
    check("rope_neox_3d_computed", y, [&](LL i) {
      const LL t = i / (H * 64), c = i % 64, j = c % 32, h = (i / 64) % H;
      const double ang = double(pos0 + t) * std::exp(-double(j) * std::log(double(base)) / 32.0);
      const double x1 = x.at((t * H + h) * 64 + j), x2 = x.at((t * H + h) * 64 + 32 + j);
      return c < 32 ? x1 * std::cos(ang) - x2 * std::sin(ang) : x2 * std::cos(ang) + x1 * std::sin(ang);
    }, 2e-3, kBf16);  // fp32 angles up to 7 rad (about 1e-6 absolute) and their sin / cos, then bf16
  }
  {  // 18: B = 3, D = 37 (16-channel tiles), N = 13 (under the 16 the tile holds)
    const LL B = 3, D = 37, N = 13;
    DevTensor<float> hs({B, D, N}, 40), y({B, D, 1}, 0, true);
    Dev<float> dt(rnd<float>(B * D, 41, 0.2f, true), {B, D, 1}), x(rnd<float>(B * D, 42), {B, D, 1}),
        a(rnd<float>(D * N, 43), {D, N}), bm(rnd<float>(B * N, 44), {B, 1, N}), cm(rnd<float>(B * N, 45), {B, 1, N}),
        dp(rnd<float>(D, 46), {D});
    for (auto& v : a.host) v = -std::fabs(v);
    PKT_CUDA(cudaMemcpy(a.dev, a.host.data(), a.host.size() * sizeof(float), cudaMemcpyHostToDevice));
    const auto h0 = hs.host;
    PKT_LAUNCH(mamba_ssm_decode_step, kGrid)(pk::LaunchContext{}, hs.view(), dt.view(), x.view(), a.view(), bm.view(),
                                             cm.view(), dp.view(), y.view());
    sync();
    auto hn = [&](LL b, LL d, LL n) {
      const double t = dt.host[b * D + d];
      return std::exp(t * a.host[d * N + n]) * h0[(b * D + d) * N + n] + t * bm.host[b * N + n] * x.host[b * D + d];
    };
    // fp32 with ex2.approx: a few parts in 10^6.
    check("mamba_ssm_decode_step.h", hs, [&](LL i) { return hn(i / (D * N), (i / N) % D, i % N); }, 1e-5, 1e-5);
    check("mamba_ssm_decode_step.y", y, [&](LL i) {
      const LL b = i / D, d = i % D;
      double s = dp.host[d] * x.host[b * D + d];
      for (LL n = 0; n < N; ++n) s += hn(b, d, n) * cm.host[b * N + n];
      return s;
    }, 1e-5, 1e-5);
  }
  {  // 19: 5 segments of 100 rows, one empty; 100 columns in 64-column tiles
    const LL T = 100, D = 100, B = 5;
    std::vector<int> off = {0, 13, 13, 50, 71, 100};
    DevTensor<bf16> x({T, D}, 47);
    Dev<int> o(off, {B + 1});
    DevTensor<float> y({B, D}, 0, true);
    PKT_LAUNCH(segment_mean_pool, kGrid)(pk::LaunchContext{}, x.view(), o.view(), y.view());
    sync();
    check("segment_mean_pool", y, [&](LL i) {
      const LL b = i / D, n = i % D;
      double s = 0;
      for (LL r = off[b]; r < off[b + 1]; ++r) s += x.at(r * D + n);
      return s / std::max(double(off[b + 1] - off[b]), 1.0);
    }, 1e-5, 1e-5);
  }
  {  // 20
    const LL M = 37, N = 300, shift = 2;
    const float p = 1.5f;
    DevTensor<f16> x({M, N}, 48), y({M, N}, 0, true), z({M, N}, 0, true);
    PKT_LAUNCH(mish_pow_f16, kGrid)(pk::LaunchContext{}, x.view(), y.view(), z.view(), shift, p);
    sync();
    // fp32 device exp / log / tanh / pow (a few ulp), then one f16 rounding.
    check("mish_pow_f16.y", y, [&](LL i) {
      const double t = x.at(i);
      return t * std::tanh(std::log1p(std::exp(t))) + shift;
    }, 1e-4, 2 * kF16);
    check("mish_pow_f16.z", z, [&](LL i) { return std::pow(std::fabs(x.at(i)), p) / (1.0 + 2 * shift); }, 1e-4, 2 * kF16);
  }
  {  // 21: a 1 x 5000 row (3 chunks, the last partial) and a 2500 x 1 column
    const LL N = 5000, M = 2500;
    DevTensor<float> r({1, N}, 49), pr({1, N}, 0, true), c({M, 1}, 50), pc({M, 1}, 0, true);
    PKT_LAUNCH(one_row_softmax_one_col_norm, kGrid)(pk::LaunchContext{}, r.view(), pr.view(), c.view(), pc.view());
    sync();
    double mx = -1e300, s = 0, amax = 0;
    for (LL i = 0; i < N; ++i) mx = std::max(mx, r.at(i));
    for (LL i = 0; i < N; ++i) s += std::exp(r.at(i) - mx);
    for (LL i = 0; i < M; ++i) amax = std::max(amax, std::fabs(c.at(i)));
    check("one_row_softmax_one_col_norm.row", pr, [&](LL i) { return std::exp(r.at(i) - mx) / s; }, 1e-9, 1e-5);
    check("one_row_softmax_one_col_norm.col", pc, [&](LL i) { return c.at(i) / amax; }, 0, 1e-6);
  }
}

// ================================================================ multi-rank ==

using pkt::done;
using pkt::launch;
using pkt::next;
using pkt::ready;
using pkt::step;

#define LAUNCH(k, ...) launch(ctx, #k, k, pk_##k::kBlocks, pk_##k::kThreads, __VA_ARGS__)

double dot_t(const std::vector<bf16>& a, const std::vector<bf16>& b, LL r, LL c, LL K) {
  double s = 0;
  for (LL k = 0; k < K; ++k) s += hv(a[r * K + k]) * hv(b[c * K + k]);
  return s;
}

void gemm_rs_rows_any_split_test(pk::Context& ctx) {
  step(ctx, "gemm_rs_rows_any_split");
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 37, K = 72, N = 100;  // 37-row owner blocks: 32-row tiles straddle two owners
  std::vector<std::vector<bf16>> as(W), bs(W);
  for (int q = 0; q < W; ++q) as[q] = rnd<bf16>(W * R * K, 100 + q), bs[q] = rnd<bf16>(N * K, 110 + q);
  DevLocal<bf16> a({W * R, K}, as[me]), b({N, K}, bs[me]);
  SymArg<float> y(ctx, {R, N}, nullptr);
  ready(ctx);
  for (int l = 0; l < 2; ++l) LAUNCH(gemm_rs_rows_any_split, a.view(), b.view(), y.view);  // the fill resets y
  done(ctx);
  PKT_OK(ctx.exchange().barrier());  // every rank's adds have landed
  check("gemm_rs_rows_any_split.y", W, me, y.download(), [&](LL i) {
    double s = 0;
    for (int q = 0; q < W; ++q) s += dot_t(as[q], bs[q], me * R + i / N, i % N, K);
    return s;
  }, 1e-4 * W, 1e-5);  // fp32 sums and atomics in any order
  next(ctx);
}

void cp_zigzag_allgather_rows_test(pk::Context& ctx) {
  step(ctx, "cp_zigzag_allgather_rows");
  const int W = ctx.world(), me = ctx.rank();
  const LL C = 21, D = 100;
  std::vector<std::vector<bf16>> xs(W);
  for (int q = 0; q < W; ++q) xs[q] = rnd<bf16>(2 * C * D, 120 + q);
  SymArg<bf16> x(ctx, {2 * C, D}, &xs[me]), y(ctx, {2 * W * C, D}, nullptr);
  ready(ctx);
  for (int l = 0; l < 2; ++l) LAUNCH(cp_zigzag_allgather_rows, x.view, y.view);
  done(ctx);
  PKT_OK(ctx.exchange().barrier());
  check("cp_zigzag_allgather_rows.y", W, me, y.download(), [&](LL i) {
    const LL g = i / D, chunk = g / C, r = g % C;
    const int q = chunk < W ? int(chunk) : int(2 * W - 1 - chunk);  // the rank holding the chunk
    const LL local = chunk < W ? r : C + r;
    return hv(xs[q][local * D + i % D]);
  }, 0, 0);
  next(ctx);
}

void sync_batch_norm_test(pk::Context& ctx) {
  step(ctx, "sync_batch_norm");
  const int W = ctx.world(), me = ctx.rank();
  const LL M = 37, C = 100;
  const float eps = 1e-5f;
  std::vector<std::vector<bf16>> xs(W);
  for (int q = 0; q < W; ++q) xs[q] = rnd<bf16>(M * C, 130 + q);
  auto gs = rnd<float>(C, 140), bb = rnd<float>(C, 141);
  DevLocal<bf16> x({M, C}, xs[me]), y({M, C}, {});
  DevLocal<float> g({C}, gs), b({C}, bb);
  SymArg<float> st(ctx, {2, C}, nullptr), gst(ctx, {2, C}, nullptr);
  ready(ctx);
  for (int l = 0; l < 2; ++l) LAUNCH(sync_batch_norm, x.view(), st.view, gst.view, g.view(), b.view(), y.view(), eps);
  done(ctx);
  std::vector<double> mu(C, 0), var(C, 0);
  for (int q = 0; q < W; ++q)
    for (LL i = 0; i < M * C; ++i) mu[i % C] += hv(xs[q][i]) / (M * W);
  for (int q = 0; q < W; ++q)
    for (LL i = 0; i < M * C; ++i) var[i % C] += (hv(xs[q][i]) - mu[i % C]) * (hv(xs[q][i]) - mu[i % C]) / (M * W);
  check("sync_batch_norm.gst", W, me, gst.download(), [&](LL i) {
    double s = 0;
    for (int q = 0; q < W; ++q)
      for (LL m = 0; m < M; ++m) s += i < C ? hv(xs[q][m * C + i]) : hv(xs[q][m * C + i - C]) * hv(xs[q][m * C + i - C]);
    return s;
  }, 1e-4 * W, 1e-5);
  // var from E[x^2] - mu^2 in fp32 (|mu| is small, the cancellation costs a few 1e-6), then bf16.
  check("sync_batch_norm.y", W, me, y.download(), [&](LL i) {
    const LL c = i % C;
    return (hv(xs[me][i]) - mu[c]) / std::sqrt(var[c] + eps) * gs[c] + bb[c];
  }, 2e-3, 2 * kBf16);
  next(ctx);
}

void tp_layer_norm_bwd_dx_test(pk::Context& ctx) {
  step(ctx, "tp_layer_norm_bwd_dx");
  const int W = ctx.world(), me = ctx.rank();
  const LL M = 21, N = 300;  // each rank's columns; the row is W x N wide
  std::vector<std::vector<float>> xs(W), ds(W), gs(W);
  for (int q = 0; q < W; ++q) xs[q] = rnd<float>(M * N, 150 + q), ds[q] = rnd<float>(M * N, 160 + q), gs[q] = rnd<float>(N, 170 + q);
  std::vector<double> full(M * N * W);  // [M, W N]: rank q's columns at q N
  for (int q = 0; q < W; ++q)
    for (LL i = 0; i < M * N; ++i) full[(i / N) * W * N + q * N + i % N] = xs[q][i];
  std::vector<float> mu, rs;
  row_stats(full, M, W * N, mu, rs);
  DevLocal<float> x({M, N}, xs[me]), dy({M, N}, ds[me]), gamma({N}, gs[me]), mean({M, 1}, mu), rstd({M, 1}, rs),
      dx({M, N}, {});
  SymArg<float> st(ctx, {M, 2}, nullptr);
  ready(ctx);
  for (int l = 0; l < 2; ++l)
    LAUNCH(tp_layer_norm_bwd_dx, x.view(), dy.view(), gamma.view(), mean.view(), rstd.view(), st.view, dx.view());
  done(ctx);
  std::vector<double> c1(M, 0), c2(M, 0);
  for (int q = 0; q < W; ++q)
    for (LL i = 0; i < M * N; ++i) {
      const LL m = i / N;
      const double xh = (xs[q][i] - mu[m]) * rs[m], g = double(ds[q][i]) * gs[q][i % N];
      c1[m] += g / (W * N), c2[m] += g * xh / (W * N);
    }
  check("tp_layer_norm_bwd_dx", W, me, dx.download(), [&](LL i) {
    const LL m = i / N;
    const double xh = (xs[me][i] - mu[m]) * rs[m], g = double(ds[me][i]) * gs[me][i % N];
    return (g - c1[m] - xh * c2[m]) * rs[m];
  }, 1e-4, 1e-5);
  next(ctx);
}

void switch_aux_loss_test(pk::Context& ctx) {
  step(ctx, "switch_aux_loss");
  const int W = ctx.world(), me = ctx.rank();
  const LL T = 1000, E = 40;
  std::vector<std::vector<int>> ids(W);
  std::vector<std::vector<float>> ps(W);
  for (int q = 0; q < W; ++q) ids[q] = pkt::random_ints<int>(T, 0, E - 1, 180 + q), ps[q] = rnd<float>(T * E, 190 + q, 0.1f, true);
  DevLocal<int> top1({T}, ids[me]);
  DevLocal<float> probs({T, E}, ps[me]), loss({1}, {});
  SymArg<int> cnt(ctx, {E}, nullptr);
  SymArg<float> psum(ctx, {1, E}, nullptr);
  ready(ctx);
  for (int l = 0; l < 2; ++l) LAUNCH(switch_aux_loss, top1.view(), probs.view(), cnt.view, psum.view, loss.view());
  done(ctx);
  std::vector<LL> c(E, 0);
  std::vector<double> s(E, 0);
  for (int q = 0; q < W; ++q)
    for (LL t = 0; t < T; ++t) {
      c[ids[q][t]] += 1;
      for (LL e = 0; e < E; ++e) s[e] += ps[q][t * E + e];
    }
  check("switch_aux_loss.cnt", W, me, cnt.download(), [&](LL e) { return double(c[e]); }, 0, 0);
  check("switch_aux_loss.psum", W, me, psum.download(), [&](LL e) { return s[e]; }, 1e-4, 1e-5);
  check("switch_aux_loss.loss", W, me, loss.download(), [&](LL) {
    double l = 0;
    for (LL e = 0; e < E; ++e) l += double(c[e]) / (T * W) * s[e] / (T * W);
    return l * E;
  }, 1e-6, 1e-5);
  next(ctx);
}

void fp8_global_amax_quant_test(pk::Context& ctx) {
  step(ctx, "fp8_global_amax_quant");
  const int W = ctx.world(), me = ctx.rank();
  const LL M = 37, N = 300;
  std::vector<std::vector<bf16>> xs(W);
  for (int q = 0; q < W; ++q) xs[q] = rnd<bf16>(M * N, 200 + q, 1.f + q);  // a different amax per rank
  DevLocal<bf16> x({M, N}, xs[me]);
  DevLocal<pk::f8e4m3> q({M, N}, {});
  DevLocal<float> inv({1, 1}, {});
  SymArg<float> am(ctx, {1, 1}, nullptr), gam(ctx, {1, 1}, nullptr);
  ready(ctx);
  for (int l = 0; l < 2; ++l) LAUNCH(fp8_global_amax_quant, x.view(), am.view, gam.view, q.view(), inv.view());
  done(ctx);
  double g = 0;
  for (int r = 0; r < W; ++r)
    for (auto v : xs[r]) g = std::max(g, std::fabs(hv(v)));
  check("fp8_global_amax_quant.amax", W, me, gam.download(), [&](LL) { return g; }, 0, 0);
  check("fp8_global_amax_quant.inv_scale", W, me, inv.download(), [&](LL) { return g / 448.0; }, 0, 1e-6);
  auto v = [&](LL i) { return hv(xs[me][i]) * 448.0 / g; };
  check("fp8_global_amax_quant.q", W, me, q.download(), v, 0, 0, [&](LL i) { return fp8_tol(v(i), pkt::kE4M3); });
  next(ctx);
}

void dp_grad_avg_3d_test(pk::Context& ctx) {
  step(ctx, "dp_grad_avg_3d");
  const int W = ctx.world(), me = ctx.rank();
  const LL L = 3, R = 13, C = 100;
  std::vector<std::vector<float>> gs(W);
  for (int q = 0; q < W; ++q) gs[q] = rnd<float>(L * R * C, 210 + q);
  SymArg<float> g(ctx, {L, R, C}, &gs[me]);
  DevLocal<bf16> gb({L, R, C}, {});
  ready(ctx);
  // Twice: the second launch averages W equal copies, which must leave them unchanged.
  for (int l = 0; l < 2; ++l) LAUNCH(dp_grad_avg_3d, g.view, gb.view());
  done(ctx);
  auto mean = [&](LL i) {
    double s = 0;
    for (int q = 0; q < W; ++q) s += gs[q][i];
    return s / W;
  };
  check("dp_grad_avg_3d.g", W, me, g.download(), mean, 1e-6, 1e-6);
  check("dp_grad_avg_3d.gb", W, me, gb.download(), mean, 1e-6, kBf16);
  next(ctx);
}

void sp_mqa_decode_merge_test(pk::Context& ctx) {
  step(ctx, "sp_mqa_decode_merge");
  const int W = ctx.world(), me = ctx.rank();
  const LL H = 21, D = 64, L = 150, len = 130;  // each rank's KV slice holds len valid rows of L
  const float scale = 0.125f;
  auto qs = rnd<bf16>(H * D, 220);
  std::vector<std::vector<bf16>> ks(W), vs(W);
  for (int q = 0; q < W; ++q) ks[q] = rnd<bf16>(L * D, 230 + q), vs[q] = rnd<bf16>(L * D, 240 + q);
  DevLocal<bf16> q({H, D}, qs), k({L, D}, ks[me]), v({L, D}, vs[me]), o({H, D}, {});
  SymArg<float> po(ctx, {H, D}, nullptr), plse(ctx, {H, 1}, nullptr);
  ready(ctx);
  for (int l = 0; l < 2; ++l) LAUNCH(sp_mqa_decode_merge, q.view(), k.view(), v.view(), po.view, plse.view, o.view(), len, scale);
  done(ctx);
  // The whole cache: every rank's valid rows, in rank order.
  std::vector<double> kd, vd;
  for (int r = 0; r < W; ++r)
    for (LL i = 0; i < len * D; ++i) kd.push_back(hv(ks[r][i])), vd.push_back(hv(vs[r][i]));
  auto qd = widen(qs);
  std::vector<double> want(H * D);
  attn_ref(qd.data(), kd.data(), vd.data(), H, W * len, D, [&](LL, LL, double x) { return x * scale; },
           [](LL, LL) { return true; }, want.data(), nullptr);
  check("sp_mqa_decode_merge.o", W, me, o.download(), [&](LL i) { return want[i]; }, kAttn, kAttn);
  next(ctx);
}

void pp_send_next_3d_test(pk::Context& ctx) {
  step(ctx, "pp_send_next_3d");
  const int W = ctx.world(), me = ctx.rank();
  const LL B = 2, S = 5, H = 300;
  std::vector<std::vector<float>> as(W);
  for (int q = 0; q < W; ++q) as[q] = rnd<float>(B * S * H, 250 + q);
  DevLocal<float> act({B, S, H}, as[me]);
  SymArg<bf16> recv(ctx, {B, S, H}, nullptr);
  ready(ctx);
  for (int l = 0; l < 2; ++l) LAUNCH(pp_send_next_3d, act.view(), recv.view);
  done(ctx);
  const int prev = (me + W - 1) % W;
  // bf16 of the sender's value, divided by W in fp32 and rounded again (W = 3 is inexact).
  check("pp_send_next_3d.recv", W, me, recv.download(), [&](LL i) { return bf16r(bf16r(as[prev][i]) / W); }, 0, kBf16);
  next(ctx);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  attention();
  norms_and_fp8();
  routing_and_rows();
  if (cudaGetLastError() != cudaSuccess) pkt::fail("a launch failed");
  std::printf("user_specs8_test: single-GPU kernels done (%d failures so far)\n", pkt::failure_count());
  return pkt::run_worlds("user_specs8_test", [](pk::Context& ctx) {
    gemm_rs_rows_any_split_test(ctx);
    cp_zigzag_allgather_rows_test(ctx);
    sync_batch_norm_test(ctx);
    tp_layer_norm_bwd_dx_test(ctx);
    switch_aux_loss_test(ctx);
    fp8_global_amax_quant_test(ctx);
    dp_grad_avg_3d_test(ctx);
    sp_mqa_decode_merge_test(ctx);
    pp_send_next_3d_test(ctx);
  }, gemm_rs_rows_any_split, cp_zigzag_allgather_rows, sync_batch_norm, tp_layer_norm_bwd_dx, switch_aux_loss,
     fp8_global_amax_quant, dp_grad_avg_3d, sp_mqa_decode_merge, pp_send_next_3d);
}

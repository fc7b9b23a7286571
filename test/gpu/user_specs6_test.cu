// The sixth user-written spec set (test/specs/user_specs6.pk.cpp): the single-launch single-GPU
// kernels at world size 1; the multi-rank kernels, and the single-GPU kernels whose phases meet at
// grid-wide barriers (or run as host loops of launches), at W = 1 and at 2, 3 and 4 ranks sharing
// one GPU (or 2 GPUs). Sizes have tails in every tiled dimension; inputs are random and never all
// zero; outputs are poisoned first (or, where a kernel must leave elements alone or accumulates,
// filled with random values that are checked); every element is checked against a float64
// reference of what the spec says (elements outside a tensor load as zero, stores clip at the
// destination, and where the spec rounds to bf16 / f16 / fp8 the reference rounds too). The
// three template GEMMs are launched from their `// pk-param` description; the two host loops
// of launches (`// pk-sequence ... loop=0:1:0;arg(N);1`) are driven here, one launch per trip
// with the trip's index as the trailing argument, as the sequence line says.
#include PK_USER_SPECS6_CU
#include "gemm_test_util.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>

namespace {

using pk::bf16;
using pk::f16;
using pkt::bf16_round;
using pkt::Dev;
using pkt::DevTensor;
using pkt::f16_round;
using pkt::poisoned;
using pkt::random_ints;
using LL = long long;

constexpr int kGrid = 132;
constexpr double kBf16 = 1.0 / 128, kF16 = 1.0 / 1024;  // one ulp, relative

void sync() { PKT_CUDA(cudaDeviceSynchronize()); }

template <class TA, class TB>
double dot(const DevTensor<TA>& a, const DevTensor<TB>& b, LL r, LL col, LL N, LL K, bool b_kn) {
  double s = 0;
  for (LL k = 0; k < K; ++k) s += a.at(r * K + k) * (b_kn ? b.at(k * N + col) : b.at(col * K + k));
  return s;
}

double fp8_round(double v, pkt::Fp8Format f) { return pkt::fp8_decode(pkt::fp8_encode(v, f), f); }
double f16r(double x) { return f16_round(float(x)); }
double bf16r(double x) { return bf16_round(float(x)); }

// ---------------------------------------------------------------- backward passes, norms --

void backward_norms() {
  {
    const LL M = 37, N = 300;
    const float eps = 1e-5f;
    DevTensor<float> x({M, N}, 1), w({1, N}, 2), dy({M, N}, 3), dx({M, N}, 0, true);
    PKT_LAUNCH(rms_norm_bwd_dx, kGrid)(pk::LaunchContext{}, x.view(), w.view(), dy.view(), dx.view(), eps);
    sync();
    std::vector<double> r(M), c(M);
    for (LL m = 0; m < M; ++m) {
      double s = 0, gx = 0;
      for (LL n = 0; n < N; ++n) s += x.at(m * N + n) * x.at(m * N + n), gx += dy.at(m * N + n) * w.at(n) * x.at(m * N + n);
      r[m] = 1 / std::sqrt(s / N + eps), c[m] = gx / N;
    }
    pkt::expect("rms_norm_bwd_dx", dx, [&](LL i) {
      const LL m = i / N;
      return r[m] * dy.at(i) * w.at(i % N) - x.at(i) * r[m] * r[m] * r[m] * c[m];
    }, 1e-4, 1e-4);
  }
  {
    const LL M = 77, N = 150;
    DevTensor<bf16> x({M, N}, 4), dy({M, N}, 5);
    DevTensor<float> rstd({M, 1}, 6), dw({N, 1}, 0, true);
    PKT_LAUNCH(rms_norm_bwd_dw, kGrid)(pk::LaunchContext{}, x.view(), dy.view(), rstd.view(), dw.view());
    sync();
    pkt::expect("rms_norm_bwd_dw", dw, [&](LL n) {
      double s = 0;
      for (LL m = 0; m < M; ++m) s += dy.at(m * N + n) * x.at(m * N + n) * rstd.at(m);
      return s;
    }, 1e-4, 1e-5);
  }
  {
    const LL M = 37, N = 200;
    DevTensor<bf16> y({M, N}, 7), dy({M, N}, 8), dx({M, N}, 0, true);
    PKT_LAUNCH(softmax_bwd, kGrid)(pk::LaunchContext{}, y.view(), dy.view(), dx.view());
    sync();
    std::vector<double> s(M, 0);
    for (LL i = 0; i < M * N; ++i) s[i / N] += y.at(i) * dy.at(i);
    pkt::expect("softmax_bwd", dx, [&](LL i) { return y.at(i) * (dy.at(i) - s[i / N]); }, 1e-3, 2 * kBf16);
  }
  {
    const LL M = 21, V = 1100;  // two whole 512-column chunks and a partial one
    const float g = 1.0f / M;
    DevTensor<float> x({M, V}, 9), dx({M, V}, 0, true);
    for (auto& v : x.host) v *= 3;
    x.upload();
    std::vector<LL> lv = random_ints<LL>(M, 0, V - 1, 10);
    lv[4] = -100, lv[11] = -100;  // ignored rows
    lv[0] = V - 1;                // the last column, in the partial chunk
    Dev<LL> lab(lv, {M, 1});
    PKT_LAUNCH(cross_entropy_bwd, kGrid)(pk::LaunchContext{}, x.view(), lab.view(), dx.view(), g);
    sync();
    std::vector<double> mx(M, -1e300), se(M, 0);
    for (LL i = 0; i < M * V; ++i) mx[i / V] = std::max(mx[i / V], x.at(i));
    for (LL i = 0; i < M * V; ++i) se[i / V] += std::exp(x.at(i) - mx[i / V]);
    pkt::expect("cross_entropy_bwd", dx, [&](LL i) {
      const LL m = i / V, v = i % V;
      if (lv[m] < 0) return 0.0;
      return (std::exp(x.at(i) - mx[m]) / se[m] - (v == lv[m] ? 1.0 : 0.0)) * g;
    }, 1e-7, 1e-4);
  }
  {
    const LL M = 13, N = 1000;
    const float eps = 1e-5f;
    DevTensor<f16> x({M, N}, 11), w({1, N}, 12), b({1, N}, 13), y({M, N}, 0, true);
    PKT_LAUNCH(layer_norm_f16, kGrid)(pk::LaunchContext{}, x.view(), w.view(), b.view(), y.view(), eps);
    sync();
    std::vector<double> mu(M, 0), rs(M, 0);
    for (LL i = 0; i < M * N; ++i) mu[i / N] += x.at(i) / N;
    for (LL i = 0; i < M * N; ++i) rs[i / N] += (x.at(i) - mu[i / N]) * (x.at(i) - mu[i / N]) / N;
    for (auto& v : rs) v = 1 / std::sqrt(v + eps);
    pkt::expect("layer_norm_f16", y, [&](LL i) {
      return (x.at(i) - mu[i / N]) * rs[i / N] * w.at(i % N) + b.at(i % N);
    }, 2e-3, 2 * kF16);
  }
}

// ---------------------------------------------------------------- attention --

void attention() {
  {
    const LL S = 77, T = 150, D = 96;
    const float scale = 1.0f / std::sqrt(96.0f);
    DevTensor<bf16> q({S, D}, 20), k({T, D}, 21), v({T, D}, 22);
    DevTensor<float> o({S, D}, 0, true);
    PKT_LAUNCH(attention_d96_f32out, kGrid)(pk::LaunchContext{}, q.view(), k.view(), v.view(), o.view(), scale);
    sync();
    std::vector<double> want(S * D, 0);
    for (LL s = 0; s < S; ++s) {
      std::vector<double> sc(T);
      double mx = -1e300, l = 0;
      for (LL t = 0; t < T; ++t) mx = std::max(mx, sc[t] = dot(q, k, s, t, T, D, false) * scale);
      for (LL t = 0; t < T; ++t) l += (sc[t] = std::exp(sc[t] - mx));
      for (LL t = 0; t < T; ++t)
        for (LL d = 0; d < D; ++d) want[s * D + d] += sc[t] / l * v.at(t * D + d);
    }
    // p is rounded to bf16 before P V (half an ulp, 2^-9, of each weight; |v| < 2).
    pkt::expect("attention_d96_f32out", o, [&](LL i) { return want[i]; }, 5e-3, 0);
  }
  {
    const LL H = 3, S = 70, D = 32;
    const float scale = 1.0f / std::sqrt(32.0f);
    DevTensor<bf16> q({H, S, D}, 23), k({H, S, D}, 24), v({H, S, D}, 25), o({H, S, D}, 0, true);
    DevTensor<float> lse({H, S, 1}, 0, true);
    PKT_LAUNCH(attention_heads_causal_d32, kGrid)(pk::LaunchContext{}, q.view(), k.view(), v.view(), o.view(),
                                                  lse.view(), scale);
    sync();
    std::vector<double> want(H * S * D, 0), wl(H * S);
    for (LL h = 0; h < H; ++h)
      for (LL s = 0; s < S; ++s) {
        std::vector<double> sc(s + 1);
        double mx = -1e300, l = 0;
        for (LL t = 0; t <= s; ++t) {
          double a = 0;
          for (LL d = 0; d < D; ++d) a += q.at((h * S + s) * D + d) * k.at((h * S + t) * D + d);
          mx = std::max(mx, sc[t] = a * scale);
        }
        for (LL t = 0; t <= s; ++t) l += (sc[t] = std::exp(sc[t] - mx));
        for (LL t = 0; t <= s; ++t)
          for (LL d = 0; d < D; ++d) want[(h * S + s) * D + d] += sc[t] / l * v.at((h * S + t) * D + d);
        wl[h * S + s] = mx + std::log(l);
      }
    pkt::expect("attention_heads_causal_d32.o", o, [&](LL i) { return want[i]; }, 5e-3, kBf16);
    pkt::expect("attention_heads_causal_d32.lse", lse, [&](LL i) { return wl[i]; }, 1e-4, 1e-5);
  }
}

// ---------------------------------------------------------------- GEMMs --

void gemms() {
  {
    const LL M = 200, N = 136, K = 200;  // template: tails past 128 rows, 256 columns and 64 of K
    const float alpha = 0.5f;
    DevTensor<f16> a({M, K}, 30), b({K, N}, 31), c({M, N}, 0, true);
    pk_gemm_f16_64x64_f16out::Job::Params p{};
    pkt::fill_gemm_params<pk_gemm_f16_64x64_f16out::Job>(p, a.dev, b.dev, c.dev, M, N, K, true);
    p.epi.s3 = alpha;
    pkt::launch_gemm(gemm_f16_64x64_f16out, p, p.order.count(), kGrid);
    sync();
    pkt::expect("gemm_f16_64x64_f16out", c, [&](LL i) { return alpha * dot(a, b, i / N, i % N, N, K, true); }, 2e-3,
                2 * kF16);
  }
  {
    const LL M = 200, N = 264, K = 72;
    const float scale = 0.75f;
    DevTensor<bf16> a({M, K}, 32), b({N, K}, 33), r({M, N}, 34), c({M, N}, 0, true);
    pk_gemm_t_128x128_res_relu::Job::Params p{};
    pkt::fill_gemm_params<pk_gemm_t_128x128_res_relu::Job>(p, a.dev, b.dev, c.dev, M, N, K, false);
    p.epi.t2 = r.dev, p.epi.t2_rows = int(M), p.epi.t2_cols = int(N), p.epi.s4 = scale;
    pkt::launch_gemm(gemm_t_128x128_res_relu, p, p.order.count(), kGrid);
    sync();
    pkt::expect("gemm_t_128x128_res_relu", c, [&](LL i) {
      return std::max(dot(a, b, i / N, i % N, N, K, false) * scale + r.at(i), 0.0);
    }, 2e-3, 2 * kBf16);
  }
  {
    const LL M = 150, N = 280, K = 40;
    DevTensor<f16> a({M, K}, 35), b({K, N}, 36), bias({1, N}, 37), c({M, N}, 0, true);
    DevTensor<float> rs({M, 1}, 38);
    pk_gemm_f16_64x256_rowscale_silu::Job::Params p{};
    pkt::fill_gemm_params<pk_gemm_f16_64x256_rowscale_silu::Job>(p, a.dev, b.dev, c.dev, M, N, K, true);
    p.epi.t2 = rs.dev, p.epi.t3 = bias.dev;
    p.epi.t2_rows = int(M), p.epi.t2_cols = 1, p.epi.t3_rows = 1, p.epi.t3_cols = int(N);
    pkt::launch_gemm(gemm_f16_64x256_rowscale_silu, p, p.order.count(), kGrid);
    sync();
    pkt::expect("gemm_f16_64x256_rowscale_silu", c, [&](LL i) {
      return pkt::silu(dot(a, b, i / N, i % N, N, K, true) * rs.at(i / N)) + bias.at(i % N);
    }, 2e-3, 2 * kF16);
  }
  {
    const LL M = 45, N = 50, K = 37;  // tails in every dimension; K not a multiple of 8
    const float beta = 0.5f;
    DevTensor<bf16> a({M, K}, 39), b({N, K}, 40);
    DevTensor<float> cin({M, N}, 41), c({M, N}, 0, true);
    // gemm_t_tails_f32 takes the Hopper template; these sizes break its 16-byte TMA rows, so a
    // launch runs its general-path twin, launched here directly.
    PKT_LAUNCH(gemm_t_tails_f32__general, kGrid)(pk::LaunchContext{}, a.view(), b.view(), cin.view(), c.view(), beta);
    sync();
    pkt::expect("gemm_t_tails_f32", c, [&](LL i) { return dot(a, b, i / N, i % N, N, K, false) + beta * cin.at(i); },
                1e-4, 1e-5);
  }
  {
    const LL M = 45, N = 200, K = 70;
    const float eps = 1e-5f;
    DevTensor<bf16> a({M, K}, 42), b({N, K}, 43), r({M, N}, 44), w({1, N}, 45), h({M, N}, 0, true), y({M, N}, 0, true);
    PKT_LAUNCH(gemm_res_rms_chain, kGrid)(pk::LaunchContext{}, a.view(), b.view(), r.view(), w.view(), h.view(),
                                          y.view(), eps);
    sync();
    // h as the kernel rounded it (checked within an ulp of the float64 value); y from that h.
    auto hg = h.download();
    std::vector<double> rs(M, 0);
    for (LL i = 0; i < M * N; ++i) rs[i / N] += double(pkt::to_host(hg[i])) * pkt::to_host(hg[i]);
    for (auto& v : rs) v = 1 / std::sqrt(v / N + eps);
    pkt::expect("gemm_res_rms_chain.h", h, [&](LL i) { return dot(a, b, i / N, i % N, N, K, false) + r.at(i); }, 1e-3,
                kBf16);
    pkt::expect("gemm_res_rms_chain.y", y, [&](LL i) { return pkt::to_host(hg[i]) * rs[i / N] * w.at(i % N); }, 1e-4,
                2 * kBf16);
  }
}

// ---------------------------------------------------------------- masks, integers, math --

void masks_integers_math() {
  {
    const LL M = 37, N = 100;
    DevTensor<float> s({M, N}, 50), p({M, N}, 0, true);
    Dev<int> arg({M, 1}, poisoned);
    PKT_LAUNCH(top2_softmax_argmax, kGrid)(pk::LaunchContext{}, s.view(), p.view(), arg.view());
    sync();
    std::vector<double> m1(M, -1e300), m2(M, -1e300);
    std::vector<LL> am(M, -1);
    for (LL m = 0; m < M; ++m)
      for (LL n = 0; n < N; ++n) {
        const double v = s.at(m * N + n);
        if (v > m1[m]) m2[m] = m1[m], m1[m] = v, am[m] = n;
        else if (v > m2[m]) m2[m] = v;
      }
    pkt::expect("top2_softmax_argmax.p", p, [&](LL i) {
      const LL m = i / N;
      const double v = s.at(i), z = 1 + std::exp(m2[m] - m1[m]);
      return v >= m2[m] ? std::exp(v - m1[m]) / z : 0.0;
    }, 1e-6, 1e-5);
    pkt::expect_int<int>("top2_softmax_argmax.arg", arg, [&](LL m) { return am[m]; });
  }
  {
    const LL M = 13, N = 90;
    const LL buckets = 9973, salt = -12345;
    std::vector<LL> iv = random_ints<LL>(M * N, -(LL(1) << 50), LL(1) << 50, 51);  // products wrap past 2^63
    Dev<LL> ids(iv, {M, N}), h({M, N}, poisoned);
    Dev<int> bk({M, N}, poisoned);
    PKT_LAUNCH(i64_hash_bucket, kGrid)(pk::LaunchContext{}, ids.view(), h.view(), bk.view(), buckets, salt);
    sync();
    auto hv = [&](LL i) {
      const LL y = static_cast<LL>(static_cast<std::uint64_t>(iv[i]) * 1000003ull + static_cast<std::uint64_t>(salt));
      return y % buckets;
    };
    pkt::expect_int<LL>("i64_hash_bucket.h", h, hv);
    pkt::expect_int<int>("i64_hash_bucket.bk", bk, [&](LL i) {
      const LL y = hv(i);
      return (y < 0 ? y + buckets : y) / 2 - (iv[i] % 1000) / 7;
    });
  }
  {
    const LL M = 13, N = 100;
    DevTensor<float> x({M, N}, 52), z({M, N}, 53), o({16, M, N}, 0, true);
    for (auto& v : z.host) v = (v < 0 ? -0.25f : 0.25f) + v;  // |z| >= 0.25: a tame divisor
    z.upload();
    PKT_LAUNCH(tile_math_all, kGrid)(pk::LaunchContext{}, x.view(), z.view(), o.view());
    sync();
    auto want = [&](LL i) -> double {
      const LL f = i / (M * N), e = i % (M * N);
      const double t = x.at(e), u = z.at(e);
      switch (f) {
        case 0: return std::exp(t);
        case 1: return std::sqrt(std::fabs(t));
        case 2: return 1 / std::sqrt(std::fabs(t) + 0.5);
        case 3: return std::log(std::fabs(t) + 1);
        case 4: return std::tanh(t);
        case 5: return pkt::sigmoid(t);
        case 6: return pkt::silu(t);
        case 7: return pkt::gelu_tanh(t);
        case 8: return pkt::gelu_erf(t);
        case 9: return std::sin(t);
        case 10: return std::cos(t);
        case 11: return std::fabs(t);
        case 12: return std::pow(std::fabs(t) + 0.25, 1.5);
        case 13: return std::fabs(t - u);
        case 14: return -t / u;
        default: return std::max(std::min(t, 0.5), -0.5);
      }
    };
    pkt::expect("tile_math_all", o, want, 2e-6, 2e-5);
  }
  {
    const float a = 0.7f, b = 2.5f;
    DevTensor<float> y({1, 16}, 0, true);
    PKT_LAUNCH(scalar_math_all, kGrid)(pk::LaunchContext{}, y.view(), a, b);
    sync();
    const double A = a, B = b;
    const double want[16] = {std::exp(A), std::sqrt(B), 1 / std::sqrt(B), std::log(B), std::tanh(A), pkt::sigmoid(A),
                             pkt::silu(A), pkt::gelu_tanh(A), pkt::gelu_erf(A), std::sin(A), std::cos(A), A,
                             std::pow(B, A), B - A, -A / B + 16, 3.5};
    pkt::expect("scalar_math_all", y, [&](LL i) { return want[i]; }, 1e-6, 1e-5);
  }
  {
    const LL M = 21, N = 50;
    DevTensor<float> x({M, N}, 54);
    x.host[0] = 2.5e6f, x.host[1] = -2.5e6f;  // f16 inf, e4m3 448 (saturated), i32 saturated
    x.host[2] = 300.0f, x.host[3] = -1e-3f, x.host[N + 5] = 0.0004f;
    x.upload();
    DevTensor<bf16> ob({M, N}, 0, true), olb({M, N}, 0, true);
    DevTensor<f16> oh({M, N}, 0, true);
    DevTensor<pk::f8e4m3> o8({M, N}, 0, true);
    DevTensor<pk::f8e5m2> o5({M, N}, 0, true);
    Dev<int> oi({M, N}, poisoned), oq({M, N}, poisoned);
    Dev<LL> ol({M, N}, poisoned);
    DevTensor<float> of({M, N}, 0, true);
    PKT_LAUNCH(casts_all, kGrid)(pk::LaunchContext{}, x.view(), ob.view(), oh.view(), o8.view(), o5.view(), oi.view(),
                                 ol.view(), of.view(), oq.view(), olb.view());
    sync();
    auto bv = [&](LL i) { return bf16r(x.host[i]); };
    auto hv = [&](LL i) { return f16r(bv(i)); };  // inf past 65504
    auto qv = [&](LL i) { return fp8_round(hv(i), pkt::kE4M3); };
    auto iv = [&](LL i) -> LL {
      const float t = x.host[i] * 1000.0f;
      if (t >= 2147483648.0f) return 2147483647;
      if (t <= -2147483648.0f) return -2147483647 - 1;
      return static_cast<LL>(t);
    };
    pkt::expect("casts_all.bf16", ob, bv, 0, 0);
    {
      auto got = oh.download();
      long long bad = 0;
      for (LL i = 0; i < M * N; ++i)
        if (!(pkt::to_host(got[i]) == hv(i))) ++bad;
      PKT_CHECK(bad == 0, "casts_all.f16: " + std::to_string(bad) + " wrong");
    }
    pkt::expect("casts_all.e4m3", o8, qv, 0, 0);
    pkt::expect("casts_all.e5m2", o5, [&](LL i) { return fp8_round(qv(i), pkt::kE5M2); }, 0, 0);
    pkt::expect_int<int>("casts_all.i32", oi, iv);
    pkt::expect_int<LL>("casts_all.i64", ol, [&](LL i) { return 3 * iv(i); });
    pkt::expect("casts_all.f32", of, [&](LL i) { return double(float(3 * iv(i))) + qv(i); }, 0, 1e-7);
    pkt::expect_int<int>("casts_all.e4m3_to_i32", oq, [&](LL i) { return static_cast<LL>(qv(i)); });
    pkt::expect("casts_all.i64_to_bf16", olb, [&](LL i) { return bf16r(double(3 * iv(i))); }, 0, 0);
  }
}

// ---------------------------------------------------------------- odd tiles, 3-D / 4-D --

void odd_tiles() {
  {
    const LL n = 1000;  // three tiles of 333 and one element
    const float a = 1.5f;
    DevTensor<f16> x({n}, 60), y({n}, 61);
    const std::vector<f16> y0 = y.host;
    PKT_LAUNCH(axpy_f16_odd_tiles, kGrid)(pk::LaunchContext{}, x.view(), y.view(), a);
    sync();
    pkt::expect("axpy_f16_odd_tiles", y, [&](LL i) { return a * x.at(i) + pkt::to_host(y0[i]); }, 1e-3, kF16);
  }
  {
    const LL B = 3, S = 37, D = 100;
    DevTensor<bf16> x({B, S, D}, 62), y({B, S, D}, 0, true);
    DevTensor<float> bias({1, 1, D}, 63), sc({B, 1, 1}, 64);
    PKT_LAUNCH(bias_scale_3d, kGrid)(pk::LaunchContext{}, x.view(), bias.view(), sc.view(), y.view());
    sync();
    pkt::expect("bias_scale_3d", y, [&](LL i) {
      const LL bb = i / (S * D), d = i % D;
      return x.at(i) * sc.at(bb) + bias.at(d) * sc.at(bb);
    }, 1e-5, 2 * kBf16);
  }
  {
    const LL B = 2, H = 3, S = 20, D = 50;
    DevTensor<float> x({B, H, S, D}, 65), g({1, H, 1, 1}, 66), y({B, H, S, D}, 0, true);
    PKT_LAUNCH(head_gain_4d, kGrid)(pk::LaunchContext{}, x.view(), g.view(), y.view());
    sync();
    pkt::expect("head_gain_4d", y, [&](LL i) { return x.at(i) * g.at((i / (S * D)) % H); }, 0, 1e-7);
  }
  {
    const LL M = 50, N = 70;
    DevTensor<f16> x({M, N}, 67), y({N, M}, 0, true);
    PKT_LAUNCH(transpose_odd_f16, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    pkt::expect("transpose_odd_f16", y, [&](LL i) { return x.at((i % M) * N + i / M) + 1.0; }, 0, kF16);
  }
}

// ================================================================ multi-rank (and phased) ==

using pkt::DevLocal;
using pkt::expect_i;
using pkt::inputs;
using pkt::launch;
using pkt::SymArg;

double f(bf16 x) { return pkt::to_f(x); }

using pkt::abs_tol;
using pkt::done;
using pkt::next;
using pkt::ready;
using pkt::step;

template <class T>
std::vector<std::vector<T>> int_inputs(int world, LL n, LL lo, LL hi, unsigned seed) {
  std::vector<std::vector<T>> all;
  for (int r = 0; r < world; ++r) all.push_back(random_ints<T>(n, lo, hi, seed * 1009u + r));
  return all;
}

#define LAUNCH(k, ...) launch(ctx, #k, k, pk_##k::kBlocks, pk_##k::kThreads, __VA_ARGS__)

// --- single-GPU kernels with grid-wide barriers between their phases (each rank alone) --

void group_norm_test(pk::Context& ctx) {
  step(ctx, "group_norm");
  const int me = ctx.rank();
  const LL N = 3, G = 4, R = N * G, Cg = 10, HW = 300;
  const float eps = 1e-5f;
  auto xs = inputs<float>(me + 1, R * Cg * HW, 600)[me];
  for (LL i = 0; i < R * Cg * HW; ++i) xs[i] += float(i % 7) * 0.25f;  // groups with different means
  auto ws = pkt::random_data<float>(G * Cg, 601), bs = pkt::random_data<float>(G * Cg, 602);
  DevLocal<float> x({R, Cg, HW}, xs), w({G, Cg, 1}, ws), b({G, Cg, 1}, bs), st({R, 1, 2}, {}), y({R, Cg, HW}, {});
  ready(ctx);
  for (int l = 0; l < 3; ++l) LAUNCH(group_norm, x.view(), w.view(), b.view(), st.view(), y.view(), G, eps);
  done(ctx);
  std::vector<double> mu(R, 0), rs(R, 0);
  const double n = double(Cg * HW);
  for (LL i = 0; i < R * Cg * HW; ++i) mu[i / (Cg * HW)] += xs[i] / n;
  for (LL i = 0; i < R * Cg * HW; ++i) rs[i / (Cg * HW)] += double(xs[i]) * xs[i] / n;
  for (LL r = 0; r < R; ++r) rs[r] = 1 / std::sqrt(rs[r] - mu[r] * mu[r] + eps);
  pkt::expect(ctx, "group_norm st", st.download(), [&](LL i) { return i % 2 ? rs[i / 2] : mu[i / 2]; },
              [&](LL i) { return 1e-5 * (1 + std::fabs(i % 2 ? rs[i / 2] : mu[i / 2])); });
  pkt::expect(ctx, "group_norm y", y.download(), [&](LL i) {
    const LL r = i / (Cg * HW), c = (i / HW) % Cg, g = r % G;
    return (xs[i] - mu[r]) * rs[r] * ws[g * Cg + c] + bs[g * Cg + c];
  }, abs_tol(1e-4));
  next(ctx);
}

void cumsum_across_tiles_test(pk::Context& ctx) {
  step(ctx, "cumsum_across_tiles");
  const int me = ctx.rank();
  const LL L = 1100;  // four tiles of 250 and one of 100
  std::vector<float> xs(L);
  auto iv = random_ints<int>(L, -5, 5, 610 + me);
  for (LL i = 0; i < L; ++i) xs[i] = float(iv[i] == 0 ? 3 : iv[i]);  // integers: every sum exact
  DevLocal<float> x({L}, xs), part({L}, {}), y({L}, {});
  ready(ctx);
  for (int l = 0; l < 3; ++l) LAUNCH(cumsum_across_tiles, x.view(), part.view(), y.view());
  done(ctx);
  std::vector<double> inc(L), loc(L);
  for (LL i = 0; i < L; ++i) inc[i] = xs[i] + (i ? inc[i - 1] : 0), loc[i] = xs[i] + (i % 250 ? loc[i - 1] : 0);
  pkt::expect(ctx, "cumsum_across_tiles part", part.download(), [&](LL i) { return loc[i]; }, abs_tol(0));
  pkt::expect(ctx, "cumsum_across_tiles y", y.download(), [&](LL i) { return inc[i]; }, abs_tol(0));
  next(ctx);
}

void histogram_across_tiles_test(pk::Context& ctx) {
  step(ctx, "histogram_across_tiles");
  const int me = ctx.rank();
  const LL n = 3500, T = 4, E = 37;  // three tiles of 1000 and one of 500
  auto vs = random_ints<int>(n, -3, 40, 620 + me);
  DevLocal<int> v({n}, vs), part({T, E}, {}), counts({E}, {});
  ready(ctx);
  for (int l = 0; l < 3; ++l) LAUNCH(histogram_across_tiles, v.view(), part.view(), counts.view());
  done(ctx);
  std::vector<LL> h(T * E, 0);
  for (LL i = 0; i < n; ++i)
    if (vs[i] >= 0 && vs[i] < E) ++h[(i / 1000) * E + vs[i]];
  expect_i(ctx, "histogram_across_tiles part", part.download(), [&](LL i) { return h[i]; });
  expect_i(ctx, "histogram_across_tiles counts", counts.download(), [&](LL e) {
    LL s = 0;
    for (LL t = 0; t < T; ++t) s += h[t * E + e];
    return s;
  });
  next(ctx);
}

void jacobi_steps_test(pk::Context& ctx) {
  step(ctx, "jacobi_steps");
  const int me = ctx.rank();
  const LL M = 37, N = 100, steps = 3;
  auto xs = inputs<float>(me + 1, M * N, 630)[me];
  DevLocal<float> x({M, N}, xs), y({M, N}, {});
  ready(ctx);
  for (LL s = 0; s < steps; ++s) LAUNCH(jacobi_steps_launch0, x.view(), y.view(), steps, s);
  done(ctx);
  std::vector<double> cur(xs.begin(), xs.end()), nxt(M * N);
  auto at = [&](LL m, LL n) { return m < 0 || m >= M || n < 0 || n >= N ? 0.0 : cur[m * N + n]; };
  for (LL s = 0; s < steps; ++s) {
    for (LL m = 0; m < M; ++m)
      for (LL n = 0; n < N; ++n) nxt[m * N + n] = (at(m, n - 1) + at(m, n + 1) + at(m - 1, n) + at(m + 1, n)) * 0.25;
    cur = nxt;
  }
  pkt::expect(ctx, "jacobi_steps x", x.download(), [&](LL i) { return cur[i]; }, abs_tol(1e-5));
  pkt::expect(ctx, "jacobi_steps y", y.download(), [&](LL i) { return cur[i]; }, abs_tol(1e-5));
  next(ctx);
}

// --- multi-rank --

void gather_rows_from_peers_test(pk::Context& ctx) {
  step(ctx, "gather_rows_from_peers");
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 17, D = 100, T = 45;
  std::vector<LL> ids = random_ints<LL>(T, -2, W * R + 1, 640);  // the same on every rank
  ids[3] = -1, ids[4] = W * R, ids[5] = W * R - 1, ids[6] = 0;
  auto tables = inputs<bf16>(W, R * D, 641);
  SymArg<bf16> table(ctx, {R, D}, &tables[me]);
  DevLocal<LL> id({T}, ids);
  DevLocal<bf16> y({T, D}, {});
  ready(ctx);
  for (int l = 0; l < 5; ++l) LAUNCH(gather_rows_from_peers, id.view(), table.view, y.view());
  done(ctx);
  pkt::expect(ctx, "gather_rows_from_peers y", y.download(), [&](LL i) {
    const LL g = ids[i / D];
    return g >= 0 && g < W * R ? f(tables[g / R][(g % R) * D + i % D]) : 0.0;
  }, abs_tol(0));
  next(ctx);
}

void scatter_rows_to_peers_test(pk::Context& ctx) {
  step(ctx, "scatter_rows_to_peers");
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 40, T = 13, D = 70;
  std::vector<int> perm(W * R);
  for (LL i = 0; i < W * R; ++i) perm[i] = int(i);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(650 + W));
  std::vector<std::vector<int>> dst(W);
  for (int r = 0; r < W; ++r) {
    dst[r].assign(perm.begin() + r * T, perm.begin() + (r + 1) * T);
    dst[r][5] = -1, dst[r][7] = int(W * R + 3);  // dropped
  }
  auto xs = inputs<float>(W, T * D, 651), y0 = inputs<float>(W, R * D, 652);
  DevLocal<float> x({T, D}, xs[me]);
  DevLocal<int> d({T}, dst[me]);
  SymArg<float> y(ctx, {R, D}, &y0[me]);
  ready(ctx);
  for (int l = 0; l < 5; ++l) LAUNCH(scatter_rows_to_peers, x.view(), d.view(), y.view);
  done(ctx);
  PKT_OK(ctx.exchange().barrier());  // every rank's rows have landed
  std::vector<std::pair<int, LL>> from(R, {-1, -1});
  for (int r = 0; r < W; ++r)
    for (LL t = 0; t < T; ++t)
      if (dst[r][t] >= me * R && dst[r][t] < (me + 1) * R) from[dst[r][t] - me * R] = {r, t};
  pkt::expect(ctx, "scatter_rows_to_peers y", y.download(), [&](LL i) {
    const auto [r, t] = from[i / D];
    return r < 0 ? double(y0[me][i]) : 2.0 * xs[r][t * D + i % D];
  }, abs_tol(0));
  next(ctx);
}

void combine_add_rows_to_peers_test(pk::Context& ctx) {
  step(ctx, "combine_add_rows_to_peers");
  const int W = ctx.world(), me = ctx.rank();
  const LL N = 50, D = 100, T = 20, L = 3;
  auto xs = inputs<bf16>(W, N * D, 660);
  auto wts = inputs<float>(W, N, 661), y0 = inputs<float>(W, T * D, 662);
  auto toks = int_inputs<int>(W, N, -1, W * T, 663);  // -1 and W T: dropped; duplicates add
  DevLocal<bf16> x({N, D}, xs[me]);
  DevLocal<float> wt({N, 1}, wts[me]);
  DevLocal<int> tok({N}, toks[me]);
  SymArg<float> y(ctx, {T, D}, &y0[me]);
  ready(ctx);
  for (LL l = 0; l < L; ++l) LAUNCH(combine_add_rows_to_peers, x.view(), wt.view(), tok.view(), y.view);
  done(ctx);
  PKT_OK(ctx.exchange().barrier());
  pkt::expect(ctx, "combine_add_rows_to_peers y", y.download(), [&](LL i) {
    const LL j = me * T + i / D, c = i % D;
    double s = 0;
    for (int r = 0; r < W; ++r)
      for (LL n = 0; n < N; ++n)
        if (toks[r][n] == j) s += double(float(f(xs[r][n * D + c]) * wts[r][n]));
    return y0[me][i] + L * s;
  }, abs_tol(1e-4 * L * W));
  next(ctx);
}

void a2a_cols_to_rows_test(pk::Context& ctx) {
  step(ctx, "a2a_cols_to_rows");
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 21, Cb = 30;
  auto xs = inputs<float>(W, R * W * Cb, 670);
  SymArg<float> x(ctx, {R, W * Cb}, &xs[me]), y(ctx, {W * R, Cb}, nullptr);
  DevLocal<float> z({W * R, Cb}, {});
  ready(ctx);
  for (int l = 0; l < 5; ++l) LAUNCH(a2a_cols_to_rows, x.view, y.view, z.view());
  done(ctx);
  auto yv = [&](LL i) { const LL row = i / Cb, c = i % Cb, q = row / R, r = row % R; return double(xs[q][r * W * Cb + me * Cb + c]); };
  pkt::expect(ctx, "a2a_cols_to_rows y", y.download(), yv, abs_tol(0));
  pkt::expect(ctx, "a2a_cols_to_rows z", z.download(), [&](LL i) { return 2 * yv(i) + me; }, abs_tol(1e-5));
  next(ctx);
}

void zero_sgd_step_test(pk::Context& ctx) {
  step(ctx, "zero_sgd_step");
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 19, C = 100;
  const float lr = 0.1f, wd = 0.01f;
  auto gs = inputs<float>(W, W * R * C, 680);
  auto w0 = pkt::random_data<float>(W * R * C, 681);  // the same master weights on every rank
  SymArg<float> g(ctx, {W * R, C}, &gs[me]), gsh(ctx, {R, C}, nullptr), ws(ctx, {R, C}, nullptr),
      wf(ctx, {W * R, C}, nullptr);
  DevLocal<float> w({W * R, C}, w0);
  ready(ctx);
  for (int l = 0; l < 5; ++l) LAUNCH(zero_sgd_step, g.view, gsh.view, w.view(), ws.view, wf.view, lr, wd);
  done(ctx);
  auto upd = [&](LL j) {
    double s = 0;
    for (int q = 0; q < W; ++q) s += gs[q][j];
    return w0[j] - double(lr) * (s / W + double(wd) * w0[j]);
  };
  pkt::expect(ctx, "zero_sgd_step ws", ws.download(), [&](LL i) { return upd(me * R * C + i); }, abs_tol(1e-5));
  pkt::expect(ctx, "zero_sgd_step wf", wf.download(), upd, abs_tol(1e-5));
  next(ctx);
}

void rs_relu_ag_in_place_test(pk::Context& ctx) {
  step(ctx, "rs_relu_ag_in_place");
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 7, C = 100;  // odd rows per rank, columns past a 64-column tile
  auto xs = inputs<float>(W, W * R * C, 690);
  SymArg<float> x(ctx, {W * R, C}, &xs[me]);
  ready(ctx);
  LAUNCH(rs_relu_ag_in_place, x.view);
  done(ctx);
  PKT_OK(ctx.exchange().barrier());
  pkt::expect(ctx, "rs_relu_ag_in_place x", x.download(), [&](LL i) {
    double s = 0;
    for (int q = 0; q < W; ++q) s += xs[q][i];
    return std::max(s, 0.0);
  }, abs_tol(1e-5 * W));
  next(ctx);
}

void iterated_all_reduce_test(pk::Context& ctx) {
  step(ctx, "iterated_all_reduce");
  const int W = ctx.world(), me = ctx.rank();
  const LL n = 1000, steps = 3;
  const float decay = 1.0f / float(W);
  auto vs = inputs<float>(W, n, 700), as = inputs<float>(W, n, 701);
  SymArg<float> v(ctx, {n}, &vs[me]), s(ctx, {n}, nullptr);
  DevLocal<float> a({n}, as[me]);
  ready(ctx);
  for (LL t = 0; t < steps; ++t) LAUNCH(iterated_all_reduce_launch0, v.view, s.view, a.view(), steps, decay, t);
  done(ctx);
  std::vector<std::vector<double>> cur(W, std::vector<double>(n)), sum(1, std::vector<double>(n));
  for (int r = 0; r < W; ++r)
    for (LL i = 0; i < n; ++i) cur[r][i] = vs[r][i];
  for (LL t = 0; t < steps; ++t)
    for (LL i = 0; i < n; ++i) {
      double tot = 0;
      for (int r = 0; r < W; ++r) tot += cur[r][i];
      sum[0][i] = tot;
      for (int r = 0; r < W; ++r) cur[r][i] = tot * as[r][i] * double(decay) + 0.001 * double(t);
    }
  pkt::expect(ctx, "iterated_all_reduce v", v.download(), [&](LL i) { return cur[me][i]; },
              [&](LL i) { return 1e-5 * (1 + std::fabs(cur[me][i])); });
  pkt::expect(ctx, "iterated_all_reduce s", s.download(), [&](LL i) { return sum[0][i]; },
              [&](LL i) { return 1e-5 * (1 + std::fabs(sum[0][i])); });
  next(ctx);
}

void int_collectives_mix_test(pk::Context& ctx) {
  step(ctx, "int_collectives_mix");
  const int W = ctx.world(), me = ctx.rank();
  const LL n = 300, R = 13, C = 7;
  const LL root = W - 1;
  auto as = int_inputs<LL>(W, n, -(LL(1) << 40), LL(1) << 40, 710);
  auto bs = int_inputs<int>(W, R * C, -1000000, 1000000, 711);
  SymArg<LL> a(ctx, {n}, &as[me]), amax(ctx, {n}, nullptr);
  SymArg<int> b(ctx, {R, C}, &bs[me]);
  DevLocal<int> bmin({R, C}, {});
  DevLocal<LL> c({n}, {});
  ready(ctx);
  for (int l = 0; l < 5; ++l) LAUNCH(int_collectives_mix, a.view, amax.view, b.view, bmin.view(), c.view(), root);
  done(ctx);
  auto mx = [&](LL i) { LL m = as[0][i]; for (int q = 1; q < W; ++q) m = std::max(m, as[q][i]); return m; };
  expect_i(ctx, "int_collectives_mix amax", amax.download(), mx);
  expect_i(ctx, "int_collectives_mix c", c.download(), [&](LL i) { return (mx(i) - me) * 2; });
  if (me == root)
    expect_i(ctx, "int_collectives_mix bmin", bmin.download(), [&](LL i) {
      LL m = bs[0][i];
      for (int q = 1; q < W; ++q) m = std::min<LL>(m, bs[q][i]);
      return m;
    });
  next(ctx);
}

void gather_double_scatter_test(pk::Context& ctx) {
  step(ctx, "gather_double_scatter");
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 5, C = 7;
  const LL root = W > 1 ? 1 : 0;
  auto xs = inputs<float>(W, R * C, 720);
  SymArg<float> x(ctx, {R, C}, &xs[me]), g(ctx, {W * R, C}, nullptr), g2(ctx, {W * R, C}, nullptr);
  DevLocal<float> z({R, C}, {});
  ready(ctx);
  for (int l = 0; l < 5; ++l) LAUNCH(gather_double_scatter, x.view, g.view, g2.view, z.view(), root);
  done(ctx);
  pkt::expect(ctx, "gather_double_scatter z", z.download(), [&](LL i) { return 2.0 * xs[me][i]; }, abs_tol(0));
  if (me == root)
    pkt::expect(ctx, "gather_double_scatter g", g.download(), [&](LL i) { return double(xs[i / (R * C)][i % (R * C)]); },
                abs_tol(0));
  next(ctx);
}

void pull_all_reduce_relu_test(pk::Context& ctx) {
  step(ctx, "pull_all_reduce_relu");
  const int W = ctx.world(), me = ctx.rank();
  const LL R = 50, C = 70;
  auto xs = inputs<float>(W, R * C, 730);
  SymArg<float> x(ctx, {R, C}, &xs[me]);
  DevLocal<float> y({R, C}, {});
  ready(ctx);
  for (int l = 0; l < 5; ++l) LAUNCH(pull_all_reduce_relu, x.view, y.view());
  done(ctx);
  pkt::expect(ctx, "pull_all_reduce_relu y", y.download(), [&](LL i) {
    double s = 0;
    for (int q = 0; q < W; ++q) s += xs[q][i];
    return std::max(s, 0.0);
  }, abs_tol(1e-5 * W));
  next(ctx);
}

void scan_across_ranks_test(pk::Context& ctx) {
  step(ctx, "scan_across_ranks");
  const int W = ctx.world(), me = ctx.rank();
  const LL L = 1500;
  auto ivs = int_inputs<int>(W, L, 1, 9, 740);
  std::vector<float> xs(L);
  for (LL i = 0; i < L; ++i) xs[i] = float(ivs[me][i]);
  DevLocal<float> x({L}, xs), c({L}, {}), all({W}, {}), y({L}, {});
  SymArg<float> tot(ctx, {1}, nullptr);
  ready(ctx);
  for (int l = 0; l < 5; ++l) LAUNCH(scan_across_ranks, x.view(), c.view(), tot.view, all.view(), y.view());
  done(ctx);
  std::vector<double> total(W, 0), inc(L);
  for (int q = 0; q < W; ++q)
    for (LL i = 0; i < L; ++i) total[q] += ivs[q][i];
  double before = 0;
  for (int q = 0; q < me; ++q) before += total[q];
  for (LL i = 0; i < L; ++i) inc[i] = xs[i] + (i ? inc[i - 1] : 0);
  pkt::expect(ctx, "scan_across_ranks c", c.download(), [&](LL i) { return inc[i]; }, abs_tol(0));
  pkt::expect(ctx, "scan_across_ranks all", all.download(), [&](LL q) { return total[q]; }, abs_tol(0));
  pkt::expect(ctx, "scan_across_ranks y", y.download(), [&](LL i) { return inc[i] + before; }, abs_tol(0));
  next(ctx);
}

void rs_max_dim2_ag_dim1_test(pk::Context& ctx) {
  step(ctx, "rs_max_dim2_ag_dim1");
  const int W = ctx.world(), me = ctx.rank();
  const LL A = 3, B = 5, Cb = 6;
  auto xs = inputs<float>(W, A * B * W * Cb, 750);
  SymArg<float> x(ctx, {A, B, W * Cb}, &xs[me]), r(ctx, {A, B, Cb}, nullptr), g(ctx, {A, W * B, Cb}, nullptr);
  DevLocal<float> y({A, W * B, Cb}, {});
  ready(ctx);
  for (int l = 0; l < 5; ++l) LAUNCH(rs_max_dim2_ag_dim1, x.view, r.view, g.view, y.view());
  done(ctx);
  auto rv = [&](int owner, LL a, LL b, LL c) {
    double m = -1e300;
    for (int q = 0; q < W; ++q) m = std::max(m, double(xs[q][(a * B + b) * W * Cb + owner * Cb + c]));
    return m;
  };
  pkt::expect(ctx, "rs_max_dim2_ag_dim1 r", r.download(), [&](LL i) { return rv(me, i / (B * Cb), (i / Cb) % B, i % Cb); },
              abs_tol(0));
  auto gv = [&](LL i) {
    const LL a = i / (W * B * Cb), row = (i / Cb) % (W * B), c = i % Cb;
    return rv(int(row / B), a, row % B, c);
  };
  pkt::expect(ctx, "rs_max_dim2_ag_dim1 g", g.download(), gv, abs_tol(0));
  pkt::expect(ctx, "rs_max_dim2_ag_dim1 y", y.download(), [&](LL i) { return gv(i) - 1; }, abs_tol(1e-6));
  next(ctx);
}

void vocab_ce_bwd_test(pk::Context& ctx) {
  step(ctx, "vocab_ce_bwd");
  const int W = ctx.world(), me = ctx.rank();
  const LL T = 21, V = 300;
  const float g = 1.0f / T;
  auto xs = inputs<float>(W, T * V, 760);
  for (auto& v : xs)
    for (auto& e : v) e *= 3;
  std::vector<int> labels = random_ints<int>(T, 0, W * V - 1, 761);  // the same on every rank
  SymArg<float> lmax(ctx, {T, 1}, nullptr), gmax(ctx, {T, 1}, nullptr), lsum(ctx, {T, 1}, nullptr),
      gsum(ctx, {T, 1}, nullptr);
  DevLocal<float> x({T, V}, xs[me]), dx({T, V}, {});
  DevLocal<int> lab({T, 1}, labels);
  ready(ctx);
  for (int l = 0; l < 5; ++l)
    LAUNCH(vocab_ce_bwd, x.view(), lab.view(), lmax.view, gmax.view, lsum.view, gsum.view, dx.view(), g);
  done(ctx);
  std::vector<double> mx(T, -1e300), se(T, 0);
  for (int p = 0; p < W; ++p)
    for (LL i = 0; i < T * V; ++i) mx[i / V] = std::max(mx[i / V], double(xs[p][i]));
  for (int p = 0; p < W; ++p)
    for (LL i = 0; i < T * V; ++i) se[i / V] += std::exp(xs[p][i] - mx[i / V]);
  pkt::expect(ctx, "vocab_ce_bwd dx", dx.download(), [&](LL i) {
    const LL t = i / V, v = i % V;
    return (std::exp(xs[me][i] - mx[t]) / se[t] - (labels[t] == me * V + v ? 1.0 : 0.0)) * g;
  }, [&](LL) { return 1e-6; });
  next(ctx);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  backward_norms();
  attention();
  gemms();
  masks_integers_math();
  odd_tiles();
  if (cudaGetLastError() != cudaSuccess) pkt::fail("a launch failed");
  std::printf("user_specs6_test: single-GPU kernels done (%d failures so far)\n", pkt::failure_count());
  return pkt::run_worlds("user_specs6_test", [](pk::Context& ctx) {
    group_norm_test(ctx);
    cumsum_across_tiles_test(ctx);
    histogram_across_tiles_test(ctx);
    jacobi_steps_test(ctx);
    gather_rows_from_peers_test(ctx);
    scatter_rows_to_peers_test(ctx);
    combine_add_rows_to_peers_test(ctx);
    a2a_cols_to_rows_test(ctx);
    zero_sgd_step_test(ctx);
    rs_relu_ag_in_place_test(ctx);
    iterated_all_reduce_test(ctx);
    int_collectives_mix_test(ctx);
    gather_double_scatter_test(ctx);
    pull_all_reduce_relu_test(ctx);
    scan_across_ranks_test(ctx);
    rs_max_dim2_ag_dim1_test(ctx);
    vocab_ce_bwd_test(ctx);
  }, group_norm, cumsum_across_tiles, histogram_across_tiles, jacobi_steps_launch0, gather_rows_from_peers,
     scatter_rows_to_peers, combine_add_rows_to_peers, a2a_cols_to_rows, zero_sgd_step, rs_relu_ag_in_place,
     iterated_all_reduce_launch0, int_collectives_mix, gather_double_scatter, pull_all_reduce_relu, scan_across_ranks,
     rs_max_dim2_ag_dim1, vocab_ce_bwd);
}

// The fourth user-written spec set (test/specs/user_specs4.pk.cpp) on one GPU: every kernel, on
// sizes with tails in every dimension, against a float64 reference of what the spec says (tile
// semantics: elements outside the tensor load as zero and go through the tile's arithmetic;
// stores are clipped at the destination's edges; where the spec rounds to bf16 / f16 the
// reference rounds too). Outputs are poisoned first (or, where a kernel must leave some elements
// alone or accumulates, filled with random values that are checked to survive); inputs are
// random and never all zero. The three GEMM loops the Hopper template takes are launched with a
// parameter block built from the kernel's `// pk-param` description.
#include PK_USER_SPECS4_CU
#include "gemm_test_util.h"
#include "tile_test_util.h"

#include <pk/runtime/template_launch.h>

#include <climits>
#include <cstdint>

namespace {

using pk::bf16;
using pk::f16;
using pkt::Dev;
using pkt::DevTensor;
using pkt::expect;
using pkt::gelu_tanh;
using pkt::gelu_erf;
using pkt::sigmoid;
using pkt::silu;
using pkt::bf16_round;
using pkt::f16_round;
using pkt::fill_gemm_params;
using pkt::launch_gemm;
using pkt::expect_int;
using pkt::poisoned;
using pkt::random_ints;

constexpr int kGrid = 132;
constexpr double kBf16 = 1.0 / 128, kF16 = 1.0 / 1024;  // one ulp, relative

void sync() { PKT_CUDA(cudaDeviceSynchronize()); }

// ---- template GEMMs ----


// Row r, column col of A * B (b_kn: B stored [K, N]) or A * B^T (B stored [N, K]), in float64.
template <class TA, class TB>
double dot(const DevTensor<TA>& a, const DevTensor<TB>& b, long long r, long long col, long long N, long long K,
           bool b_kn) {
  double s = 0;
  for (long long k = 0; k < K; ++k) s += a.at(r * K + k) * (b_kn ? b.at(k * N + col) : b.at(col * K + k));
  return s;
}

void template_gemms() {
  const long long M = 200, N = 264, K = 72;  // tails past 128 rows and 256 columns, K past 64
  {
    DevTensor<f16> a({M, K}, 1), b({K, N}, 2), bias({1, N}, 3), r({M, N}, 4), c({M, N}, 0, true);
    pk_gemm_f16_kn_gelu_res::Job::Params p{};
    fill_gemm_params<pk_gemm_f16_kn_gelu_res::Job>(p, a.dev, b.dev, c.dev, M, N, K, true);
    p.epi.t2 = bias.dev, p.epi.t3 = r.dev;
    p.epi.t2_rows = 1, p.epi.t2_cols = static_cast<int>(N);
    p.epi.t3_rows = static_cast<int>(M), p.epi.t3_cols = static_cast<int>(N);
    launch_gemm(gemm_f16_kn_gelu_res, p, p.order.count(), kGrid);
    sync();
    expect("gemm_f16_kn_gelu_res", c, [&](long long i) {
      return gelu_tanh(dot(a, b, i / N, i % N, N, K, true) + bias.at(i % N)) + r.at(i);
    }, 1e-3 * std::sqrt(double(K)), 2 * kF16);
  }
  {
    const float alpha = 0.25f;
    DevTensor<f16> a({M, K}, 5), b({N, K}, 6);
    DevTensor<bf16> c({M, N}, 0, true);
    pk_gemm_t_f16_silu_bf16out::Job::Params p{};
    fill_gemm_params<pk_gemm_t_f16_silu_bf16out::Job>(p, a.dev, b.dev, c.dev, M, N, K, false);
    p.epi.s3 = alpha;
    launch_gemm(gemm_t_f16_silu_bf16out, p, p.order.count(), kGrid);
    sync();
    expect("gemm_t_f16_silu_bf16out", c, [&](long long i) {
      return silu(alpha * dot(a, b, i / N, i % N, N, K, false));
    }, 1e-3 * std::sqrt(double(K)), 2 * kBf16);
  }
  {
    DevTensor<bf16> a({M, K}, 7), b({N, K}, 8);
    DevTensor<float> s({M, 1}, 9), bias({1, N}, 10);
    DevTensor<f16> c({M, N}, 0, true);
    pk_gemm_t_64x256_rowscale_bias::Job::Params p{};
    fill_gemm_params<pk_gemm_t_64x256_rowscale_bias::Job>(p, a.dev, b.dev, c.dev, M, N, K, false);
    p.epi.t2 = s.dev, p.epi.t3 = bias.dev;
    p.epi.t2_rows = static_cast<int>(M), p.epi.t2_cols = 1;
    p.epi.t3_rows = 1, p.epi.t3_cols = static_cast<int>(N);
    launch_gemm(gemm_t_64x256_rowscale_bias, p, p.order.count(), kGrid);
    sync();
    expect("gemm_t_64x256_rowscale_bias", c, [&](long long i) {
      return dot(a, b, i / N, i % N, N, K, false) * s.at(i / N) + bias.at(i % N);
    }, 1e-3 * std::sqrt(double(K)), 2 * kF16);
  }
}

// ---- general-path GEMMs ----

void general_gemms() {
  {
    const long long M = 37, K = 45, N = 29;
    DevTensor<f16> a({M, K}, 11), b({K, N}, 12);
    DevTensor<float> r({M, N}, 13), c({M, N}, 0, true);
    // The kernel takes the Hopper template; K = 45 and N = 29 break its 16-byte rows, so a
    // launch runs its general-path twin, launched here directly.
    PKT_LAUNCH(gemm_f16_16x16_f32__general, kGrid)(pk::LaunchContext{}, a.view(), b.view(), r.view(), c.view());
    sync();
    expect("gemm_f16_16x16_f32", c, [&](long long i) { return dot(a, b, i / N, i % N, N, K, true) - r.at(i); },
           1e-4, 1e-5);
  }
  {
    const long long M = 70, K = 50, N = 100;  // N < 128: one masked column tile
    DevTensor<bf16> a({M, K}, 14), b({K, N}, 15);
    DevTensor<float> p({M, N}, 0, true);
    PKT_LAUNCH(gemm_row_softmax, kGrid)(pk::LaunchContext{}, a.view(), b.view(), p.view());
    sync();
    std::vector<double> want(M * N);
    for (long long r = 0; r < M; ++r) {
      double mx = -INFINITY, s = 0;
      for (long long j = 0; j < N; ++j) mx = std::max(mx, want[r * N + j] = dot(a, b, r, j, N, K, true));
      for (long long j = 0; j < N; ++j) s += want[r * N + j] = std::exp(want[r * N + j] - mx);
      for (long long j = 0; j < N; ++j) want[r * N + j] /= s;
    }
    expect("gemm_row_softmax", p, [&](long long i) { return want[i]; }, 1e-6, 1e-4);
  }
  {
    const long long M = 70, K = 40, N = 150, TN = 64, NT = 3;
    DevTensor<bf16> a({M, K}, 16), b({K, N}, 17), r({M, N}, 18), h({M, N}, 0, true);
    DevTensor<float> ss({M, NT}, 0, true);
    PKT_LAUNCH(gemm_res_sumsq, kGrid)(pk::LaunchContext{}, a.view(), b.view(), r.view(), h.view(), ss.view());
    sync();
    expect("gemm_res_sumsq.h", h, [&](long long i) { return dot(a, b, i / N, i % N, N, K, true) + r.at(i); }, 1e-3,
           kBf16);
    auto hv = h.download();  // the sums of squares are of the rounded h (checked above)
    expect("gemm_res_sumsq.ss", ss, [&](long long i) {
      const long long row = i / NT, c0 = i % NT * TN;
      double s = 0;
      for (long long j = c0; j < std::min(c0 + TN, N); ++j) s += double(pkt::to_host(hv[row * N + j])) * pkt::to_host(hv[row * N + j]);
      return s;
    }, 1e-4, 1e-5);
  }
  {
    const long long M = 50, K = 70, N = 40;
    DevTensor<bf16> a({M, K}, 19), wg({K, N}, 20), wu({K, N}, 21), y({M, N}, 0, true);
    PKT_LAUNCH(gated_mlp_two_acc, kGrid)(pk::LaunchContext{}, a.view(), wg.view(), wu.view(), y.view());
    sync();
    expect("gated_mlp_two_acc", y, [&](long long i) {
      return silu(dot(a, wg, i / N, i % N, N, K, true)) * dot(a, wu, i / N, i % N, N, K, true);
    }, 1e-2, 2 * kBf16);
  }
  {
    const long long S = 50, D = 64;
    const float scale = 0.125f, slope = 0.3f;
    DevTensor<bf16> q({S, D}, 22), k({S, D}, 23);
    DevTensor<float> p({S, S}, 0, true);
    PKT_LAUNCH(alibi_scores_softmax, kGrid)(pk::LaunchContext{}, q.view(), k.view(), p.view(), scale, slope);
    sync();
    expect("alibi_scores_softmax", p, [&](long long i) {
      const long long r = i / S, c = i % S;
      if (c > r) return 0.0;
      std::vector<double> s(r + 1);
      double mx = -INFINITY, sum = 0;
      for (long long j = 0; j <= r; ++j) mx = std::max(mx, s[j] = scale * dot(q, k, r, j, S, D, false) - slope * (r - j));
      for (long long j = 0; j <= r; ++j) sum += std::exp(s[j] - mx);
      return std::exp(s[c] - mx) / sum;
    }, 1e-6, 1e-4);
  }
  {
    const long long M = 50, K = 64, H = 64, N = 32;
    DevTensor<bf16> x({M, K}, 24), w1({K, H}, 25), w2({H, N}, 26);
    DevTensor<float> y({M, N}, 0, true);
    PKT_LAUNCH(mlp_two_layer_tile, kGrid)(pk::LaunchContext{}, x.view(), w1.view(), w2.view(), y.view());
    sync();
    std::vector<double> hb(M * H);  // silu(x W1) rounded to bf16, as the spec casts it
    for (long long r = 0; r < M; ++r)
      for (long long j = 0; j < H; ++j) hb[r * H + j] = bf16_round(static_cast<float>(silu(dot(x, w1, r, j, H, K, true))));
    expect("mlp_two_layer_tile", y, [&](long long i) {
      double s = 0;
      for (long long j = 0; j < H; ++j) s += hb[i / N * H + j] * w2.at(j * N + i % N);
      return s;
    }, 0.25, 2e-3);  // a rare 1-ulp difference in a rounded hidden value moves y by <= 2 ulp * |w2|
  }
  {
    const long long M = 40, K = 70, N = 45;
    const float b_scale = 0.25f;
    DevTensor<pk::f8e4m3> a({M, K}, 27), b({N, K}, 28);
    DevTensor<float> a_scale({1}, 29), c({M, N}, 0, true);
    // The loop takes the fp8 GEMM template (a_scale.at(0) is read once per tile); K = 70 is no
    // whole 16-byte row, so this size runs its general-path twin, as the launchers would pick.
    PKT_LAUNCH(fp8_gemm_t_scaled__general, kGrid)(pk::LaunchContext{}, a.view(), b.view(), a_scale.view(), c.view(), b_scale);
    sync();
    expect("fp8_gemm_t_scaled", c, [&](long long i) {
      return dot(a, b, i / N, i % N, N, K, false) * a_scale.at(0) * b_scale;
    }, 1e-4, 1e-5);
  }
  {
    const long long M = 100, K = 40, N = 70;
    const float alpha = 0.5f;
    DevTensor<f16> a({M, K}, 30), b({N, K}, 31);
    DevTensor<float> c({M, N}, 0, true);
    // The template twin, as above: an f32 row of N = 70 is not a whole 16-byte pitch.
    PKT_LAUNCH(gemm_t_smem_48__general, kGrid)(pk::LaunchContext{}, a.view(), b.view(), c.view(), alpha);
    sync();
    expect("gemm_t_smem_48", c, [&](long long i) { return alpha * dot(a, b, i / N, i % N, N, K, false); }, 1e-4, 1e-5);
  }
}

// ---- projections, rotary, caches, reshapes ----

void projections() {
  {
    const long long M = 50, D = 64;
    const float scale = 0.3f;
    DevTensor<bf16> x({M, 3 * D}, 32), q({M, D}, 0, true), k({M, D}, 0, true), v({M, D}, 0, true);
    PKT_LAUNCH(qkv_split, kGrid)(pk::LaunchContext{}, x.view(), q.view(), k.view(), v.view(), scale);
    sync();
    auto xs = [&](long long i, long long part) { return x.at(i / D * 3 * D + part * D + i % D); };
    expect("qkv_split.q", q, [&](long long i) { return bf16_round(static_cast<float>(xs(i, 0)) * scale); }, 0, 0);
    expect("qkv_split.k", k, [&](long long i) { return xs(i, 1); }, 0, 0);
    expect("qkv_split.v", v, [&](long long i) { return xs(i, 2); }, 0, 0);
  }
  {
    const long long S = 37, H = 3, W = H * 64, P = 60, pos0 = 5;
    DevTensor<f16> x({S, W}, 33), y({S, W}, 0, true);
    DevTensor<float> cs({P, 32}, 34), sn({P, 32}, 35);
    PKT_LAUNCH(rotary_tables_offset, kGrid)(pk::LaunchContext{}, x.view(), cs.view(), sn.view(), y.view(), H, pos0);
    sync();
    expect("rotary_tables_offset", y, [&](long long i) {
      const long long r = i / W, col = i % W, h0 = col / 64 * 64, j = col % 32;
      const double x1 = x.at(r * W + h0 + j), x2 = x.at(r * W + h0 + 32 + j);
      const double c = cs.at((pos0 + r) * 32 + j), s = sn.at((pos0 + r) * 32 + j);
      return col % 64 < 32 ? x1 * c - x2 * s : x2 * c + x1 * s;
    }, 2e-3, 2 * kF16);
  }
  {
    const long long B = 2, T = 13, D = 64, Smax = 40, pos = 20, T8 = 16;  // the 8-row tiles reach row 16
    DevTensor<bf16> knew({B, T, D}, 36), cache({B, Smax, D}, 37);  // rows outside [pos, pos + 16) survive
    PKT_LAUNCH(kv_cache_append, kGrid)(pk::LaunchContext{}, knew.view(), cache.view(), pos);
    sync();
    expect("kv_cache_append", cache, [&](long long i) {
      const long long b = i / (Smax * D), s = i / D % Smax, d = i % D;
      if (s >= pos && s < pos + T) return knew.at((b * T + s - pos) * D + d);
      if (s >= pos + T && s < pos + T8) return 0.0;  // the partial tile's zero rows (documented)
      return cache.at(i);
    }, 0, 0);
  }
  {
    const long long B = 3, S = 21, D = 40;
    DevTensor<float> x({B, S, D}, 38), y({B * S, D}, 0, true);
    PKT_LAUNCH(reshape_3d_to_2d, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("reshape_3d_to_2d", y, [&](long long i) { return 2 * x.at(i); }, 0, 0);
  }
  {
    const long long B = 3, S = 21, D = 40;
    DevTensor<float> x({B * S, D}, 39), y({B, S, D}, 0, true);
    PKT_LAUNCH(reshape_2d_to_3d, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("reshape_2d_to_3d", y, [&](long long i) { return double(static_cast<float>(x.at(i)) + 1.0f); }, 0, 0);
  }
}

// ---- norms ----

void norms() {
  {
    const long long M = 19, N = 300;  // 128-column blocks: the third holds 44 columns
    const float eps = 1e-5f;
    DevTensor<float> x({M, N}, 40), w({1, N}, 41), b({1, N}, 42), y({M, N}, 0, true);
    PKT_LAUNCH(layer_norm_two_pass, kGrid)(pk::LaunchContext{}, x.view(), w.view(), b.view(), y.view(), eps);
    sync();
    expect("layer_norm_two_pass", y, [&](long long i) {
      const long long r = i / N;
      double s = 0, v = 0;
      for (long long j = 0; j < N; ++j) s += x.at(r * N + j);
      const double mu = s / N;
      for (long long j = 0; j < N; ++j) v += (x.at(r * N + j) - mu) * (x.at(r * N + j) - mu);
      return (x.at(i) - mu) / std::sqrt(v / N + eps) * w.at(i % N) + b.at(i % N);
    }, 1e-4, 1e-4);
  }
  {
    const long long M = 40, N = 300;  // one 384-column tile, 84 columns of padding
    const float eps = 1e-6f;
    DevTensor<bf16> x({M, N}, 43), w({1, N}, 44), y({M, N}, 0, true);
    PKT_LAUNCH(rms_norm_bf16_hf, kGrid)(pk::LaunchContext{}, x.view(), w.view(), y.view(), eps);
    sync();
    expect("rms_norm_bf16_hf", y, [&](long long i) {
      const long long r = i / N;
      double ss = 0;
      for (long long j = 0; j < N; ++j) ss += x.at(r * N + j) * x.at(r * N + j);
      const float n = bf16_round(static_cast<float>(x.at(i) / std::sqrt(ss / N + eps)));
      return double(n) * w.at(i % N);
    }, 1e-2, 2 * kBf16);  // n may sit one bf16 ulp apart where fp32 and float64 straddle a tie
  }
  {
    const long long B = 2, S = 13, D = 100;
    const float eps = 1e-5f;
    DevTensor<f16> x({B, S, D}, 45), w({1, 1, D}, 46), b({1, 1, D}, 47), y({B, S, D}, 0, true);
    PKT_LAUNCH(layer_norm_3d_f16, kGrid)(pk::LaunchContext{}, x.view(), w.view(), b.view(), y.view(), eps);
    sync();
    expect("layer_norm_3d_f16", y, [&](long long i) {
      const long long r = i / D;
      double s = 0, v = 0;
      for (long long j = 0; j < D; ++j) s += x.at(r * D + j);
      const double mu = s / D;
      for (long long j = 0; j < D; ++j) v += (x.at(r * D + j) - mu) * (x.at(r * D + j) - mu);
      return (x.at(i) - mu) / std::sqrt(v / D + eps) * w.at(i % D) + b.at(i % D);
    }, 4e-3, 2 * kF16);
  }
}

// ---- softmax family, losses, argmax ----

// Row r's log-sum-exp over N columns of x.
template <class T>
double lse_row(const DevTensor<T>& x, long long r, long long N) {
  double mx = -INFINITY, s = 0;
  for (long long j = 0; j < N; ++j) mx = std::max(mx, x.at(r * N + j));
  for (long long j = 0; j < N; ++j) s += std::exp(x.at(r * N + j) - mx);
  return mx + std::log(s);
}

void softmaxes() {
  {
    const long long M = 10, N = 250;  // 96-column blocks: the third holds 58
    DevTensor<f16> x({M, N}, 48);
    DevTensor<float> y({M, N}, 0, true);
    PKT_LAUNCH(log_softmax_online_f16, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("log_softmax_online_f16", y, [&](long long i) { return x.at(i) - lse_row(x, i / N, N); }, 1e-4, 1e-5);
  }
  {
    const long long M = 37, V = 300;
    DevTensor<float> x({M, V}, 49), loss({M, 1}, 0, true);
    std::vector<int> lv = random_ints<int>(M, 0, V - 1, 50);
    Dev<int> labels(lv, {M, 1});
    PKT_LAUNCH(cross_entropy_rows, kGrid)(pk::LaunchContext{}, x.view(), labels.view(), loss.view());
    sync();
    expect("cross_entropy_rows", loss, [&](long long r) { return lse_row(x, r, V) - x.at(r * V + lv[r]); }, 1e-4, 1e-5);
  }
  {
    const long long M = 37, N = 150;  // 64-column blocks: the third holds 22
    DevTensor<float> x({M, N}, 51), best({M, 1}, 0, true);
    Dev<int> idx({M, 1}, poisoned);
    PKT_LAUNCH(argmax_rows, kGrid)(pk::LaunchContext{}, x.view(), best.view(), idx.view());
    sync();
    auto arg = [&](long long r) {
      long long a = 0;
      for (long long j = 1; j < N; ++j)
        if (x.at(r * N + j) > x.at(r * N + a)) a = j;
      return a;
    };
    expect("argmax_rows.best", best, [&](long long r) { return x.at(r * N + arg(r)); }, 0, 0);
    expect_int("argmax_rows.idx", idx, [&](long long r) { return arg(r); });
  }
  {
    const long long T = 50, E = 8;
    DevTensor<bf16> logits({T, E}, 52);
    DevTensor<float> probs({T, E}, 0, true), top_p({T, 1}, 0, true);
    Dev<int> top_e({T, 1}, poisoned);
    PKT_LAUNCH(router_top1, kGrid)(pk::LaunchContext{}, logits.view(), probs.view(), top_p.view(), top_e.view());
    sync();
    auto arg = [&](long long r) {  // the first of equal maxima (equal bf16 logits give equal probabilities)
      long long a = 0;
      for (long long j = 1; j < E; ++j)
        if (logits.at(r * E + j) > logits.at(r * E + a)) a = j;
      return a;
    };
    auto prob = [&](long long r, long long j) { return std::exp(logits.at(r * E + j) - lse_row(logits, r, E)); };
    expect("router_top1.probs", probs, [&](long long i) { return prob(i / E, i % E); }, 1e-6, 1e-5);
    expect("router_top1.top_p", top_p, [&](long long r) { return prob(r, arg(r)); }, 1e-6, 1e-5);
    expect_int("router_top1.top_e", top_e, [&](long long r) { return arg(r); });
  }
  {
    const long long S = 50;
    const long long w = 7;
    DevTensor<bf16> s({S, S}, 53), p({S, S}, 0, true);
    PKT_LAUNCH(sliding_window_softmax, kGrid)(pk::LaunchContext{}, s.view(), p.view(), w);
    sync();
    expect("sliding_window_softmax", p, [&](long long i) {
      const long long r = i / S, c = i % S, lo = std::max(0LL, r - w + 1);
      if (c > r || c < lo) return 0.0;
      double mx = -INFINITY, sum = 0;
      for (long long j = lo; j <= r; ++j) mx = std::max(mx, s.at(r * S + j));
      for (long long j = lo; j <= r; ++j) sum += std::exp(s.at(r * S + j) - mx);
      return std::exp(s.at(i) - mx) / sum;
    }, 1e-6, 2 * kBf16);
  }
  {
    const long long M = 70, N = 200;
    const float cap = 5.0f;
    DevTensor<f16> x({M, N}, 54), y({M, N}, 0, true);
    PKT_LAUNCH(softcap_f16, kGrid)(pk::LaunchContext{}, x.view(), y.view(), cap);
    sync();
    expect("softcap_f16", y, [&](long long i) { return cap * std::tanh(x.at(i) / cap); }, 1e-3, 2 * kF16);
  }
  {
    const long long M = 37, V = 100, D = 64;
    DevTensor<float> logits({M, V}, 55);
    DevTensor<bf16> emb({V, D}, 56), out({M, D}, 0, true);
    PKT_LAUNCH(greedy_next_embed, kGrid)(pk::LaunchContext{}, logits.view(), emb.view(), out.view());
    sync();
    expect("greedy_next_embed", out, [&](long long i) {
      const long long r = i / D;
      long long a = 0;
      for (long long j = 1; j < V; ++j)
        if (logits.at(r * V + j) > logits.at(r * V + a)) a = j;
      return emb.at(a * D + i % D);
    }, 0, 0);
  }
}

// ---- quantisation ----

void quantisation() {
  {
    const long long M = 40, N = 100;
    const float scale = 0.01f;  // x / scale in [-200, 200]: both clamps are hit
    DevTensor<float> x({M, N}, 57);
    Dev<int> q({M, N}, poisoned);
    DevTensor<bf16> dq({M, N}, 0, true);
    PKT_LAUNCH(quant_int8_clamp, kGrid)(pk::LaunchContext{}, x.view(), q.view(), dq.view(), scale);
    sync();
    // fp32 division may land one ulp either side of an integer: a truncation one apart is allowed
    expect_int("quant_int8_clamp.q", q, [&](long long i) {
      return static_cast<long long>(std::trunc(std::min(std::max(x.at(i) / scale, -127.0), 127.0)));
    }, 1);
    auto qv = q.download();
    expect("quant_int8_clamp.dq", dq, [&](long long i) { return bf16_round(static_cast<float>(qv[i]) * scale); }, 0, 0);
  }
  {
    const long long N = 40, K = 100, G = 4;  // 32-column groups: the fourth holds 4 columns
    std::vector<int> qv = random_ints<int>(N * K, -8, 7, 58);
    Dev<int> q(qv, {N, K});
    DevTensor<float> scales({N, G}, 59);
    DevTensor<bf16> w({N, K}, 0, true);
    PKT_LAUNCH(dequant_groupwise, kGrid)(pk::LaunchContext{}, q.view(), scales.view(), w.view());
    sync();
    expect("dequant_groupwise", w, [&](long long i) {
      return bf16_round(static_cast<float>(qv[i]) * static_cast<float>(scales.at(i / K * G + i % K / 32)));
    }, 0, 0);
  }
}

// ---- integers, masks ----

void integers() {
  {
    const long long n = 1500, T = 1024;  // the second tile holds 476 tokens
    std::vector<int> mv = random_ints<int>(n, 0, 1, 60);
    Dev<int> mask(mv, {n}), pos({n}, poisoned);
    PKT_LAUNCH(position_ids, kGrid)(pk::LaunchContext{}, mask.view(), pos.view());
    sync();
    expect_int("position_ids", pos, [&](long long i) {
      if (mv[i] != 1) return 0LL;
      long long c = 0;
      for (long long j = i / T * T; j <= i; ++j) c += mv[j];
      return c - 1;
    });
  }
  {
    const long long Q = 37, K = 50;
    Dev<int> out({Q, K}, poisoned);
    PKT_LAUNCH(relative_buckets, kGrid)(pk::LaunchContext{}, out.view());
    sync();
    expect_int("relative_buckets", out, [&](long long i) {
      const long long rel = i % K - i / K, a = rel < 0 ? -rel : rel;
      const long long b = a < 8 ? a : 8 + std::min(a / 4, 7LL);
      return b + (rel > 0 ? 16 : 0);
    });
  }
  {
    const long long M = 40, N = 100, seed = 12345, p_drop = 30;
    const float inv_keep = 1.0f / 0.7f;
    DevTensor<bf16> x({M, N}, 61), y({M, N}, 0, true);
    PKT_LAUNCH(hash_dropout, kGrid)(pk::LaunchContext{}, x.view(), y.view(), seed, p_drop, inv_keep);
    sync();
    long long kept = 0;
    auto keep = [&](long long i) {
      const uint32_t h = static_cast<uint32_t>(i / N) * 1103515245u + static_cast<uint32_t>(i % N) * 12345u +
                         static_cast<uint32_t>(seed);  // i32 wrapping arithmetic
      const int32_t r = static_cast<int32_t>(h) % 100;
      return (r < 0 ? -r : r) >= p_drop;
    };
    for (long long i = 0; i < M * N; ++i) kept += keep(i);
    PKT_CHECK(kept > M * N / 2 && kept < M * N, "hash_dropout keeps some but not all elements");
    expect("hash_dropout", y, [&](long long i) {
      return keep(i) ? bf16_round(static_cast<float>(x.at(i)) * inv_keep) : 0.0;
    }, 0, 0);
  }
}

// ---- element-wise, math, loops ----

void elementwise() {
  {
    const long long M = 37, N = 100, P = 11;
    DevTensor<float> x({M, N}, 62), y({P, M, N}, 0, true);
    PKT_LAUNCH(math_planes, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("math_planes", y, [&](long long i) {
      const double t = x.at(i % (M * N)), p = std::fabs(t) + 0.25;
      switch (i / (M * N)) {
        case 0: return std::sqrt(p);
        case 1: return 1 / std::sqrt(p);
        case 2: return std::exp(t);
        case 3: return std::log(p);
        case 4: return std::tanh(t);
        case 5: return sigmoid(t);
        case 6: return silu(t);
        case 7: return gelu_tanh(t);
        case 8: return gelu_erf(t);
        case 9: return std::sin(t) + std::cos(t);
        default: return std::pow(p, 1.5);
      }
    }, 1e-5, 1e-5);
  }
  {
    const long long n = 777;
    const double a = 1.3, b = -0.7;
    DevTensor<float> x({n}, 63), y({n}, 0, true);
    PKT_LAUNCH(scalar_math_all, kGrid)(pk::LaunchContext{}, x.view(), y.view(), float(a), float(b));
    sync();
    const double s = std::sqrt(a) + 1 / std::sqrt(a) + std::exp(-a) + std::log(a) + std::tanh(b) + sigmoid(b) + silu(b) +
                     gelu_tanh(b) + gelu_erf(b);
    const double t = std::sin(b) * std::cos(a) + std::fabs(b) + std::pow(a, 3.0) + std::max(a, b) - std::min(a, b);
    expect("scalar_math_all", y, [&](long long i) { return x.at(i) * (s + t / n); }, 1e-5, 1e-5);
  }
  {
    const long long n = 777;
    DevTensor<f16> x({n}, 64), w({100}, 65), y({n}, 0, true);
    PKT_LAUNCH(tile_1d_f16_table, kGrid)(pk::LaunchContext{}, x.view(), w.view(), y.view());
    sync();
    // an f16 product is exact in fp32: one rounding to f16
    expect("tile_1d_f16_table", y, [&](long long i) {
      return f16_round(static_cast<float>(x.at(i)) * static_cast<float>(w.at(i % 100)));
    }, 0, 0);
  }
  {
    const long long M = 70, N = 45;
    DevTensor<f16> x({M, N}, 66);
    DevTensor<float> bias({N, 1}, 67), y({N, M}, 0, true);
    PKT_LAUNCH(transpose_f16_bias, kGrid)(pk::LaunchContext{}, x.view(), bias.view(), y.view());
    sync();
    expect("transpose_f16_bias", y, [&](long long i) {
      const long long j = i / M, r = i % M;
      return double(static_cast<float>(x.at(r * N + j)) + static_cast<float>(bias.at(j)));
    }, 0, 0);
  }
  {
    const long long M = 20, N = 100, T = 32;  // the fourth block holds 4 columns
    const float beta = 0.8f;
    DevTensor<float> x({M, N}, 68), y({M, N}, 0, true);
    PKT_LAUNCH(ema_blocks, kGrid)(pk::LaunchContext{}, x.view(), y.view(), beta);
    sync();
    expect("ema_blocks", y, [&](long long i) {
      const long long r = i / N, c = i % N;
      double e = 0;
      for (long long k = c % T; k <= c; k += T) e = beta * e + (1 - double(beta)) * x.at(r * N + k);
      return e;
    }, 1e-5, 1e-5);
  }
  {
    const long long M = 20, N = 170, W = 32, start = 10, step = 48;  // k = 10, 58, 106, 154 (clipped at 170)
    DevTensor<float> x({M, N}, 69), y({M, W}, 0, true);
    PKT_LAUNCH(range_runtime_start, kGrid)(pk::LaunchContext{}, x.view(), y.view(), start, step);
    sync();
    expect("range_runtime_start", y, [&](long long i) {
      const long long r = i / W, c = i % W;
      double s = 0;
      for (long long k = start; k < N; k += step)
        if (k + c < N) s += x.at(r * N + k + c);
      return s;
    }, 1e-5, 1e-5);
  }
  {
    const long long M = 200, N = 300;
    DevTensor<bf16> x({M, N}, 70), g({1, N}, 71), h({M, N}, 0, true);
    DevTensor<float> hf({M, N}, 0, true);
    PKT_LAUNCH(gated_residual, kGrid)(pk::LaunchContext{}, x.view(), g.view(), h.view(), hf.view());
    sync();
    expect("gated_residual.h", h, [&](long long i) { return x.at(i) + g.at(i % N) * gelu_erf(x.at(i)); }, 1e-2,
           2 * kBf16);
    auto hv = h.download();
    expect("gated_residual.hf", hf, [&](long long i) { return pkt::to_host(hv[i]); }, 0, 0);
  }
  {
    const long long M = 37, N = 23;
    DevTensor<float> x({M, N}, 72), y({M, N}, 0, true);
    PKT_LAUNCH(odd_tiles_3x5, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("odd_tiles_3x5", y, [&](long long i) { return x.at(i) * 3 - i % N; }, 1e-6, 1e-6);
  }
  {
    const long long M = 5, N = 5000;
    DevTensor<float> x({M, N}, 73), y({M, N}, 0, true);
    PKT_LAUNCH(long_row_l2norm, kGrid)(pk::LaunchContext{}, x.view(), y.view());
    sync();
    expect("long_row_l2norm", y, [&](long long i) {
      double s = 0;
      for (long long j = i / N * N; j < i / N * N + N; ++j) s += x.at(j) * x.at(j);
      return x.at(i) / std::sqrt(s);
    }, 1e-7, 1e-5);
  }
  {
    // bf16 values within a few ulp of a float scalar that bf16 cannot hold: the documented fp32
    // subtraction keeps the fraction (1000 - 1000.4 = -0.4); rounding c to bf16 first gives 0.
    const long long M = 20, N = 70;
    const float c = 1000.4f;
    DevTensor<bf16> x({M, N}, 80), y({M, N}, 0, true);
    for (auto& v : x.host) v = pkt::from_host<bf16>(1000.0f + 4.0f * std::round(pkt::to_host(v)));  // 992 .. 1008
    x.upload();
    PKT_LAUNCH(bf16_minus_scalar, kGrid)(pk::LaunchContext{}, x.view(), y.view(), c);
    sync();
    expect("bf16_minus_scalar", y, [&](long long i) { return bf16_round(static_cast<float>(x.at(i)) - c); }, 0, 0);
  }
  {
    const long long M = 37, N = 100;
    DevTensor<float> x({M, N}, 81), y({M, N}, 0, true);
    std::vector<int> av = random_ints<int>(M * N, -5, 6, 82);
    Dev<int> a(av, {M, N}), b({M, N}, pkt::poisoned);
    PKT_LAUNCH(where_scalars, kGrid)(pk::LaunchContext{}, x.view(), y.view(), a.view(), b.view());
    sync();
    expect("where_scalars.y", y, [&](long long i) { return x.at(i) > 0 ? 1.0 : -1.0; }, 0, 0);
    auto bv = b.download();
    long long bad = 0;
    for (long long i = 0; i < M * N; ++i) bad += bv[i] != (av[i] > 0 ? 16 : 0);
    if (bad) pkt::fail("where_scalars.b: " + std::to_string(bad) + " elements wrong");
  }
  {
    // 64-column tiles over 100 columns: row_max is per tile, as the kernel takes it.
    const long long M = 37, N = 100;
    DevTensor<float> x({M, N}, 83), y({M, N}, 0, true);
    DevTensor<bf16> u({M, N}, 84), w({N}, 85), v({M, N}, 0, true);
    PKT_LAUNCH(where_broadcast, kGrid)(pk::LaunchContext{}, x.view(), y.view(), u.view(), w.view(), v.view());
    sync();
    expect("where_broadcast.y", y, [&](long long i) {
      const long long r = i / N, c0 = (i % N) / 64 * 64;
      double mx = -1e300;
      for (long long c = c0; c < std::min(N, c0 + 64); ++c) mx = std::max(mx, double(x.at(r * N + c)));
      return x.at(i) > 0 ? double(x.at(i)) : mx;
    }, 0, 0);
    expect("where_broadcast.v", v, [&](long long i) {
      const long long r = i / N, c = i % N;
      return static_cast<float>(u.at(r * N)) > 0 ? double(static_cast<float>(u.at(i))) : double(static_cast<float>(w.at(c)));
    }, 0, 0);
  }
}

// ---- rows moved by index, count-bounded loops ----

void rows() {
  {
    const long long T = 50, D = 64, R = 20;
    std::vector<int> iv = random_ints<int>(T, -2, R + 1, 74);  // some outside y: dropped; duplicates add
    Dev<int> ids(iv, {T});
    DevTensor<float> x({T, D}, 75), g({T, 1}, 76), y({R, D}, 77);  // y accumulates onto its random values
    PKT_LAUNCH(moe_combine_add, kGrid)(pk::LaunchContext{}, x.view(), g.view(), ids.view(), y.view());
    sync();
    expect("moe_combine_add", y, [&](long long i) {
      const long long r = i / D, d = i % D;
      double s = y.at(i);
      for (long long t = 0; t < T; ++t)
        if (iv[t] == r) s += x.at(t * D + d) * g.at(t);
      return s;
    }, 1e-5, 1e-5);
  }
  {
    const long long M = 60, N = 100, count = 37, reach = 48;  // whole 16-row tiles up to the count
    std::vector<int> cv = {static_cast<int>(count)};
    Dev<int> counts(cv, {1});
    DevTensor<float> x({M, N}, 78), y({M, N}, 79);  // rows from `reach` on keep their values
    PKT_LAUNCH(count_bounded_rows, kGrid)(pk::LaunchContext{}, counts.view(), x.view(), y.view());
    sync();
    expect("count_bounded_rows", y, [&](long long i) {
      return i / N < reach ? double(static_cast<float>(x.at(i)) + 1.0f) : y.at(i);
    }, 0, 0);
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  template_gemms();
  general_gemms();
  projections();
  norms();
  softmaxes();
  quantisation();
  integers();
  elementwise();
  rows();
  if (cudaGetLastError() != cudaSuccess) pkt::fail("a launch failed");
  return pkt::finish("user_specs4_test");
}

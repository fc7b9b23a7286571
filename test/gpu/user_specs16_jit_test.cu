// The sixteenth user-written spec set (test/specs/user_specs16.pk.cpp) through the JIT, each kernel
// against a float64 host reference on fresh random inputs, with every output poisoned (NaN, or
// all-ones integers) first. The single-GPU kernels run at W = 1 (the GEMM and attention kernels on
// the Hopper templates also with templates = false, "name/general"); the kernels that use rank(),
// peers or collectives at W = 1, 2 and 3 (ranks sharing one GPU; PK_TEST_WORLDS or
// PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs. Shapes leave partial tiles
// in every tiled dimension (37- and 70-row blocks, 100-, 300- and 1000-column rows, K = 50 for the
// GEMMs' general-path twins, sequence lengths that are not multiples of 64 or 128, odd head and
// batch counts). Inputs a kernel also writes (the in-place tensors, store_add / store_rows targets)
// start from random data and are checked as outputs. One PASS or FAIL line per case.
//
// Covered: all 51 kernels, and (with -DPK_SPECS16_INPLACE, once they move into the set) the three
// in-place kernels of specs16 finding 1 (f1_rope_inplace_halves, f1c_rmsnorm_inplace_chunks,
// f1d_fused_add_rmsnorm_chunks). Shapes the specs fix: rope_neox_out (and f1) rotate 128-column
// heads, rope_from_positions 64-column rows, rope_gptj_4d [H, S, 32, 2], fused_add_rmsnorm_inplace
// rows of at most 1024, softmax_keypad_4d and router_argmax_onehot at most 64 keys / experts,
// topk_threshold_softmax at most 512, tp_layernorm_sharded at most 128 columns a rank,
// fp8_rowscale_all_gather at most 256, kv_fp8_quant_4d and a2a_4d_then_scale at most 64, and
// moe_counts_offsets at most 64 experts: tails are taken below those bounds. rmsnorm_3d_batch
// divides by 256 whatever D is: it runs at D = 256 and at D = 200 against that literal definition.
// reduce_min_capacity is checked on the root (rank 0) only: the reduce leaves mincap unspecified
// elsewhere, and the kernel computes admit from it on every rank.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
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
using pk::f8e4m3;
using pk::f8e5m2;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Kernels, and whether one of their launches takes a template (true) or none does.
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"cp_linear_gather_cols", true},
    {"rp_linear_rs_cols", true},
    {"rp_linear_bias_rs_rows", true},
    {"sp_ag_then_gemm_relu2", true},
    {"bmm_f16_scale_residual", true},
    {"lm_head_softcap_odd", true},
    {"fp8_gemm_rowcol_scales", true},
    {"rmsnorm_f16_chunks", false},
    {"layernorm_wb_stats", false},
    {"fused_add_rmsnorm_inplace", false},
    {"tp_layernorm_sharded", false},
    {"rmsnorm_3d_batch", false},
    {"scaled_causal_softmax_f16", false},
    {"softmax_keypad_4d", false},
    {"router_argmax_onehot", false},
    {"topk_threshold_softmax", false},
    {"rope_neox_out", false},
    {"rope_gptj_4d", false},
    {"rope_from_positions", false},
    {"swiglu_fused_halves", false},
    {"geglu_clamped_f16", false},
    {"quant_int8_per_row", false},
    {"dequant_int8_rowcol", false},
    {"fp8_quant_1x128", false},
    {"fp8_dequant_128x128", false},
    {"fp8_rowscale_all_gather", false},
    {"vocab_embed_i64", false},
    {"vocab_ce_label_smoothing", false},
    {"moe_counts_offsets", false},
    {"moe_claim_capacity", false},
    {"moe_permute_gather", false},
    {"moe_unpermute_scatter_add", false},
    {"token_shift_i64", false},
    {"ring_shift_kv_3d", false},
    {"halo_add_prev", false},
    {"rs_cols_by_adds_i32", false},
    {"allreduce_sgd_momentum", false},
    {"bcast_scale_then_gather", false},
    {"seq_len_mask_i64", false},
    {"a2a_4d_then_scale", false},
    {"reduce_min_capacity", false},
    {"attn_causal_f16_d64", true},
    {"attn_gqa_d128_nolse", true},
    {"decode_attn_lens", false},
    {"bias_gelu_residual_3d", false},
    {"transpose_odd_f16", false},
    {"masked_mean_pool", false},
    {"kv_cache_append", false},
    {"expert_owner_local", false},
    {"adam_inplace", false},
    {"kv_fp8_quant_4d", false},
    {"colsum_store_add", false},
    {"cumsum_reshape_row_col", false},
    {"row_cumsum_f32", false},
    {"tile_row_cumsum_i64", false},
    {"gelu_erf_bwd_by_erf", false},
#ifdef PK_SPECS16_INPLACE
    {"f1_rope_inplace_halves", false},
    {"f1c_rmsnorm_inplace_chunks", false},
    {"f1d_fused_add_rmsnorm_chunks", false},
#endif
};
// The template kernels also run with templates = false ("name/general").
const std::vector<const char*> kGeneralToo = {
    "cp_linear_gather_cols",  "rp_linear_rs_cols",   "rp_linear_bias_rs_rows", "sp_ag_then_gemm_relu2",
    "bmm_f16_scale_residual", "lm_head_softcap_odd", "fp8_gemm_rowcol_scales", "attn_causal_f16_d64",
    "attn_gqa_d128_nolse"};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS16_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs16", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host references ----

// A bf16 / f16 GEMM result: two units in the last place of the result, the fp32 sum's order, a floor.
auto bf_gemm_tol(const std::vector<double>& w, const std::vector<double>& mag) {
  return [&w, &mag](LL i) { return kBf * std::fabs(w[i]) + 1e-5 * mag[i] + 1e-4; };
}
auto hf_gemm_tol(const std::vector<double>& w, const std::vector<double>& mag) {
  return [&w, &mag](LL i) { return kHf * std::fabs(w[i]) + 1e-5 * mag[i] + 1e-4; };
}
// How far an e4m3 rounding of v can move when v moves by a few fp32 units (a reciprocal taken
// approximately on the device, a product rounded differently): 0 away from the rounding points.
double e4m3_step(double v) { return std::fabs(e4m3(v * (1 + 1e-6)) - e4m3(v * (1 - 1e-6))); }

// The attention outputs' bounds: bf16 (p and o rounded to bf16) and f16.
auto bf_o_tol(const std::vector<double>& w) { return [&w](LL i) { return 2 * kBf * std::fabs(w[i]) + 4e-3; }; }
auto hf_o_tol(const std::vector<double>& w) { return [&w](LL i) { return 4 * kHf * std::fabs(w[i]) + 2e-3; }; }
auto lse_tol(const std::vector<double>& w) { return [&w](LL i) { return 1e-3 * std::fabs(w[i]) + 2e-3; }; }

// ================================================================ tensor-parallel GEMMs ==

// cp_linear_gather_cols (multi-rank): part = bf16(x w^T) [M, Nl] per rank; y [M, W Nl] its column
// all-gather (rank p's part at columns [p Nl, (p + 1) Nl)).
void cp_linear_gather_cols(const Run& r, const std::string& k, LL M, LL Kd, LL Nl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL N = W * Nl;
  std::vector<std::vector<bf16>> x(W), w(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<bf16>(M * Kd, seed + p), w[p] = rnd<bf16>(Nl * Kd, seed + 10 + p);
  DevLocal<bf16> xd({M, Kd}, x[me]), wd({Nl, Kd}, w[me]), y({M, N}, {});
  SymArg<bf16> part(r.ctx, {M, Nl}, nullptr);
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), wd.view(), part.view, y.view())) {
    std::vector<double> want(M * N), mag(M * N), pw, pm;
    for (int p = 0; p < W; ++p) {
      matmul(M, Nl, Kd, [&](LL m, LL q) { return val(x[p][m * Kd + q]); }, [&](LL q, LL n) { return val(w[p][n * Kd + q]); },
             pw, pm);
      for (LL i = 0; i < M * Nl; ++i) want[(i / Nl) * N + p * Nl + i % Nl] = pw[i], mag[(i / Nl) * N + p * Nl + i % Nl] = pm[i];
    }
    check(r, k + ".y", y.download(), [&](LL i) { return want[i]; }, bf_gemm_tol(want, mag));
    check(r, k + ".part", part.download(), [&](LL i) { return want[(i / Nl) * N + me * Nl + i % Nl]; },
          [&](LL i) { const LL j = (i / Nl) * N + me * Nl + i % Nl; return kBf * std::fabs(want[j]) + 1e-5 * mag[j] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, Nl}), before);
}

// rp_linear_rs_cols (multi-rank): partial = x w (f16, w [K, N], f32 out) per rank; y [M, N / W] =
// column block `rank` of the sum over ranks.
void rp_linear_rs_cols(const Run& r, const std::string& k, LL M, LL Kd, LL Nl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL N = W * Nl;
  std::vector<std::vector<double>> P(W), G(W);
  std::vector<f16> xm, wm;
  for (int p = 0; p < W; ++p) {
    const auto x = rnd<f16>(M * Kd, seed + p), w = rnd<f16>(Kd * N, seed + 10 + p);
    matmul(M, N, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(w[q * N + n]); }, P[p], G[p]);
    if (p == me) xm = x, wm = w;
  }
  DevLocal<f16> xd({M, Kd}, xm), wd({Kd, N}, wm);
  SymArg<float> partial(r.ctx, {M, N}, nullptr);
  DevLocal<float> y({M, Nl}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), wd.view(), partial.view, y.view())) {
    check(r, k + ".partial", partial.download(), [&](LL i) { return P[me][i]; }, [&](LL i) { return 1e-5 * G[me][i] + 1e-6; });
    auto at = [&](LL i) { return (i / Nl) * N + me * Nl + i % Nl; };
    check(r, k + ".y", y.download(), [&](LL i) { double s = 0; for (int p = 0; p < W; ++p) s += P[p][at(i)]; return s; },
          [&](LL i) { double g = 0; for (int p = 0; p < W; ++p) g += G[p][at(i)]; return 1e-5 * g + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, Nl}), before);
}

// rp_linear_bias_rs_rows (multi-rank): partial = x w^T (+ bias on rank 0 only), f32 [W R, N];
// y [R, N] = row block `rank` of the sum over ranks.
void rp_linear_bias_rs_rows(const Run& r, const std::string& k, LL R, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL M = W * R;
  std::vector<std::vector<double>> P(W), G(W);
  std::vector<bf16> xm, wm;
  std::vector<float> bm, b0;
  for (int p = 0; p < W; ++p) {
    const auto x = rnd<bf16>(M * Kd, seed + p), w = rnd<bf16>(N * Kd, seed + 10 + p);
    const auto b = rnd<float>(N, seed + 20 + p);
    matmul(M, N, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(w[n * Kd + q]); }, P[p], G[p]);
    if (p == me) xm = x, wm = w, bm = b;
    if (p == 0) b0 = b;
  }
  DevLocal<bf16> xd({M, Kd}, xm), wd({N, Kd}, wm);
  DevLocal<float> bd({N}, bm), y({R, N}, {});
  SymArg<float> partial(r.ctx, {M, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), wd.view(), bd.view(), partial.view, y.view())) {
    check(r, k + ".partial", partial.download(), [&](LL i) { return P[me][i] + (me == 0 ? bm[i % N] : 0.0); },
          [&](LL i) { return 1e-5 * G[me][i] + 1e-6; });
    check(r, k + ".y", y.download(), [&](LL i) {
      double s = b0[i % N];
      for (int p = 0; p < W; ++p) s += P[p][me * R * N + i];
      return s;
    }, [&](LL i) { double g = 1; for (int p = 0; p < W; ++p) g += G[p][me * R * N + i]; return 1e-5 * g + 1e-6; });
  }
  end_case(r, k + " " + dims({R, Kd, N}), before);
}

// sp_ag_then_gemm_relu2 (multi-rank): xg [W R, K] = row all-gather of xs; y = bf16(relu(xg w)^2),
// w [K, N] (each rank its own).
void sp_ag_then_gemm_relu2(const Run& r, const std::string& k, LL R, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL M = W * R;
  std::vector<std::vector<bf16>> xs(W);
  for (int p = 0; p < W; ++p) xs[p] = rnd<bf16>(R * Kd, seed + p);
  const auto w = rnd<bf16>(Kd * N, seed + 10 + me);
  SymArg<bf16> xsd(r.ctx, {R, Kd}, &xs[me]), xg(r.ctx, {M, Kd}, nullptr);
  DevLocal<bf16> wd({Kd, N}, w), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, xsd.view, xg.view, wd.view(), y.view())) {
    auto xv = [&](LL m, LL q) { return val(xs[m / R][(m % R) * Kd + q]); };
    check(r, k + ".xg", xg.download(), [&](LL i) { return xv(i / Kd, i % Kd); }, exact());
    std::vector<double> a, mag;
    matmul(M, N, Kd, xv, [&](LL q, LL n) { return val(w[q * N + n]); }, a, mag);
    auto want = [&](LL i) { const double t = std::max(a[i], 0.0); return t * t; };
    check(r, k + ".y", y.download(), want,
          [&](LL i) { return kBf * want(i) + 2 * std::max(a[i], 0.0) * (1e-5 * mag[i]) + 1e-4; });
  }
  end_case(r, k + " " + dims({R, Kd, N}), before);
}

// bmm_f16_scale_residual: c[z] = f16(a[z] b[z] s[z] + r[z]), b [B, K, N].
void bmm_f16_scale_residual(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f16>(B * M * Kd, seed), b = rnd<f16>(B * Kd * N, seed + 1), res = rnd<f16>(B * M * N, seed + 2);
  const auto s = rnd<float>(B, seed + 3, 0.5f, 1.5f);
  DevLocal<f16> ad({B, M, Kd}, a), bd({B, Kd, N}, b), rd({B, M, N}, res), c({B, M, N}, {});
  DevLocal<float> sd({B}, s);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), sd.view(), rd.view(), c.view())) {
    std::vector<double> want(B * M * N), mag(B * M * N), wz, mz;
    for (LL z = 0; z < B; ++z) {
      matmul(M, N, Kd, [&](LL m, LL q) { return val(a[(z * M + m) * Kd + q]); },
             [&](LL q, LL n) { return val(b[(z * Kd + q) * N + n]); }, wz, mz);
      for (LL i = 0; i < M * N; ++i)
        want[z * M * N + i] = wz[i] * s[z] + val(res[z * M * N + i]), mag[z * M * N + i] = mz[i] * s[z];
    }
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; }, hf_gemm_tol(want, mag));
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// lm_head_softcap_odd: logits = tanh(h emb^T / cap) cap where the column < vocab, else -1e30 (the
// template's tanh is tanh.approx: a relative bound of 2^-10.9 of the soft cap).
void lm_head_softcap_odd(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const LL vocab = N - 37;
  const float cap = 3.f;
  const auto h = rnd<bf16>(M * Kd, seed), e = rnd<bf16>(N * Kd, seed + 1);
  DevLocal<bf16> hd({M, Kd}, h), ed({N, Kd}, e);
  DevLocal<float> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, hd.view(), ed.view(), y.view(), vocab, cap)) {
    std::vector<double> a, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(h[m * Kd + q]); }, [&](LL q, LL n) { return val(e[n * Kd + q]); }, a, mag);
    check(r, k + ".logits", y.download(), [&](LL i) { return i % N < vocab ? std::tanh(a[i] / cap) * cap : double(-1e30f); },
          [&](LL i) { return i % N < vocab ? 1e-3 * cap + 1e-5 * mag[i] : 0.0; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// fp8_gemm_rowcol_scales: c = bf16(a b^T sa[m] sb[n]), a e4m3 [M, K], b e5m2 [N, K].
void fp8_gemm_rowcol_scales(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f8e4m3>(M * Kd, seed, -2.f, 2.f);
  const auto b = rnd<f8e5m2>(N * Kd, seed + 1, -2.f, 2.f);
  const auto sa = rnd<float>(M, seed + 2, 0.5f, 1.5f), sb = rnd<float>(N, seed + 3, 0.5f, 1.5f);
  DevLocal<f8e4m3> ad({M, Kd}, a);
  DevLocal<f8e5m2> bd({N, Kd}, b);
  DevLocal<float> sad({M}, sa), sbd({N}, sb);
  DevLocal<bf16> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), sad.view(), sbd.view(), c.view())) {
    std::vector<double> want, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(b[n * Kd + q]); }, want, mag);
    for (LL i = 0; i < M * N; ++i) {
      const double sc = double(sa[i / N]) * sb[i % N];
      want[i] *= sc, mag[i] *= sc;
    }
    // Hopper's fp8 wgmma accumulates with fewer bits than fp32 (user_specs11_jit_test measured
    // errors of about 1.2e-5 of the products' magnitude; here 16 of 52800 elements missed the
    // bf16 GEMM bound on the template), so the bound follows the magnitude as there.
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 2.5e-4 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// ================================================================ norms ==

// rmsnorm_f16_chunks: y = f16(x rsqrt(mean(x^2) + eps) w), 512-column chunks.
void rmsnorm_f16_chunks(const Run& r, LL M, LL N, unsigned seed) {
  const float eps = 1e-5f;
  const auto x = rnd<f16>(M * N, seed, -2.f, 2.f), w = rnd<f16>(N, seed + 1, 0.5f, 1.5f);
  DevLocal<f16> xd({M, N}, x), wd({N}, w), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "rmsnorm_f16_chunks", 2, xd.view(), wd.view(), y.view(), eps)) {
    const std::vector<double> want =
        rmsnorm_rows(M, N, eps, [&](LL i) { return val(x[i]); }, [&](LL j) { return val(w[j]); });
    check(r, "rmsnorm_f16_chunks.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kHf * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "rmsnorm_f16_chunks " + dims({M, N}), before);
}

// layernorm_wb_stats: y = bf16((x - mu) rstd w + b), mean and rstd saved per row.
void layernorm_wb_stats(const Run& r, LL M, LL N, unsigned seed) {
  const float eps = 1e-5f;
  const auto x = rnd<bf16>(M * N, seed, -2.f, 3.f), w = rnd<bf16>(N, seed + 1, 0.5f, 1.5f), b = rnd<bf16>(N, seed + 2);
  DevLocal<bf16> xd({M, N}, x), wd({N}, w), bd({N}, b), y({M, N}, {});
  DevLocal<float> mean({M}, {}), rstd({M}, {});
  const int before = begin_case(r);
  if (run(r, "layernorm_wb_stats", 2, xd.view(), wd.view(), bd.view(), y.view(), mean.view(), rstd.view(), eps)) {
    std::vector<double> mu(M, 0.0), rs(M), want(M * N);
    for (LL m = 0; m < M; ++m) {
      double var = 0;
      for (LL j = 0; j < N; ++j) mu[m] += val(x[m * N + j]);
      mu[m] /= N;
      for (LL j = 0; j < N; ++j) var += (val(x[m * N + j]) - mu[m]) * (val(x[m * N + j]) - mu[m]);
      rs[m] = 1 / std::sqrt(var / N + eps);
      for (LL j = 0; j < N; ++j) want[m * N + j] = (val(x[m * N + j]) - mu[m]) * rs[m] * val(w[j]) + val(b[j]);
    }
    check(r, "layernorm_wb_stats.mean", mean.download(), [&](LL i) { return mu[i]; }, abs_tol(1e-5));
    check(r, "layernorm_wb_stats.rstd", rstd.download(), [&](LL i) { return rs[i]; }, [&](LL i) { return 1e-5 * rs[i]; });
    check(r, "layernorm_wb_stats.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "layernorm_wb_stats " + dims({M, N}), before);
}

// fused_add_rmsnorm_inplace: h = bf16(h + x) in place; y = bf16(h rsqrt(mean(h^2) + eps) w), rows of
// at most 1024.
void fused_add_rmsnorm_inplace(const Run& r, LL M, LL N, unsigned seed) {
  const float eps = 1e-5f;
  const auto h = rnd<bf16>(M * N, seed, -2.f, 2.f), x = rnd<bf16>(M * N, seed + 1), w = rnd<bf16>(N, seed + 2, 0.5f, 1.5f);
  DevLocal<bf16> hd({M, N}, h), xd({M, N}, x), wd({N}, w), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "fused_add_rmsnorm_inplace", 1, hd.view(), xd.view(), wd.view(), y.view(), eps)) {
    std::vector<double> hn(M * N);
    for (LL i = 0; i < M * N; ++i) hn[i] = bf16r(float(val(h[i])) + float(val(x[i])));
    const std::vector<double> want = rmsnorm_rows(M, N, eps, [&](LL i) { return hn[i]; }, [&](LL j) { return val(w[j]); });
    check(r, "fused_add_rmsnorm_inplace.h", hd.download(), [&](LL i) { return hn[i]; }, exact());
    check(r, "fused_add_rmsnorm_inplace.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "fused_add_rmsnorm_inplace " + dims({M, N}), before);
}

// tp_layernorm_sharded (multi-rank): x [M, Nl] per rank, the hidden dimension W Nl sharded; part =
// [row sum, row sum of squares], tot their all-reduce; y = (x - mu) rsqrt(var + eps) w + b.
void tp_layernorm_sharded(const Run& r, LL M, LL Nl, unsigned seed) {
  const int W = r.W, me = r.me;
  const float eps = 1e-5f;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(M * Nl, seed + p, -2.f, 3.f);
  const auto w = rnd<float>(Nl, seed + 10 + me, 0.5f, 1.5f), b = rnd<float>(Nl, seed + 20 + me);
  DevLocal<float> xd({M, Nl}, x[me]), wd({Nl}, w), bd({Nl}, b), y({M, Nl}, {});
  SymArg<float> part(r.ctx, {M, 2}, nullptr), tot(r.ctx, {M, 2}, nullptr);
  const int before = begin_case(r);
  if (run(r, "tp_layernorm_sharded", 2, xd.view(), wd.view(), bd.view(), part.view, tot.view, y.view(), eps)) {
    std::vector<double> own(M * 2, 0.0), all(M * 2, 0.0), mag(M, 0.0), want(M * Nl);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < M * Nl; ++i) {
        const double v = x[p][i];
        all[(i / Nl) * 2] += v, all[(i / Nl) * 2 + 1] += v * v, mag[i / Nl] += std::fabs(v) + v * v;
        if (p == me) own[(i / Nl) * 2] += v, own[(i / Nl) * 2 + 1] += v * v;
      }
    for (LL i = 0; i < M * Nl; ++i) {
      const LL m = i / Nl;
      const double n = double(Nl) * W, mu = all[2 * m] / n, var = all[2 * m + 1] / n - mu * mu;
      want[i] = (x[me][i] - mu) / std::sqrt(var + eps) * w[i % Nl] + b[i % Nl];
    }
    check(r, "tp_layernorm_sharded.part", part.download(), [&](LL i) { return own[i]; }, [&](LL i) { return 1e-6 * mag[i / 2] + 1e-6; });
    check(r, "tp_layernorm_sharded.tot", tot.download(), [&](LL i) { return all[i]; }, [&](LL i) { return 1e-6 * mag[i / 2] + 1e-6; });
    check(r, "tp_layernorm_sharded.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 2e-5 * (1 + std::fabs(want[i])); });
  }
  end_case(r, "tp_layernorm_sharded " + dims({M, Nl}), before);
}

// rmsnorm_3d_batch: y = bf16(x rsqrt(sum(x^2) / 256 + eps) w) over [B, S, D] (the spec divides by 256,
// whatever D is).
void rmsnorm_3d_batch(const Run& r, LL B, LL S, LL D, unsigned seed) {
  const float eps = 1e-5f;
  const auto x = rnd<bf16>(B * S * D, seed, -2.f, 2.f);
  const auto w = rnd<float>(D, seed + 1, 0.5f, 1.5f);
  DevLocal<bf16> xd({B, S, D}, x), y({B, S, D}, {});
  DevLocal<float> wd({D}, w);
  const int before = begin_case(r);
  if (run(r, "rmsnorm_3d_batch", 2, xd.view(), wd.view(), y.view(), eps)) {
    std::vector<double> want(B * S * D);
    for (LL row = 0; row < B * S; ++row) {
      double ss = 0;
      for (LL j = 0; j < D; ++j) ss += val(x[row * D + j]) * val(x[row * D + j]);
      const double inv = 1 / std::sqrt(ss / 256 + eps);
      for (LL j = 0; j < D; ++j) want[row * D + j] = val(x[row * D + j]) * inv * w[j];
    }
    check(r, "rmsnorm_3d_batch.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "rmsnorm_3d_batch " + dims({B, S, D}), before);
}

// ================================================================ softmax and masks ==

// scaled_causal_softmax_f16: p[z, i, j] = softmax over j <= i of s[z, i, j] scale, 0 past i.
void scaled_causal_softmax_f16(const Run& r, LL Z, LL S, unsigned seed) {
  const float scale = 0.5f;
  const auto s = rnd<f16>(Z * S * S, seed, -4.f, 4.f);
  DevLocal<f16> sd({Z, S, S}, s), p({Z, S, S}, {});
  const int before = begin_case(r);
  if (run(r, "scaled_causal_softmax_f16", 2, sd.view(), p.view(), scale)) {
    std::vector<double> want(Z * S * S, 0.0);
    for (LL row = 0; row < Z * S; ++row) {
      const LL i = row % S;
      double m = -1e300, t = 0;
      for (LL j = 0; j <= i; ++j) m = std::max(m, val(s[row * S + j]) * scale);
      for (LL j = 0; j <= i; ++j) t += std::exp(val(s[row * S + j]) * scale - m);
      for (LL j = 0; j <= i; ++j) want[row * S + j] = std::exp(val(s[row * S + j]) * scale - m) / t;
    }
    check(r, "scaled_causal_softmax_f16.p", p.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kHf * want[i] + 1e-6; });
  }
  end_case(r, "scaled_causal_softmax_f16 " + dims({Z, S}), before);
}

// softmax_keypad_4d: p = softmax over the keys of s scale + kmask[b] (kmask 0 or -1e4, key 0 kept).
void softmax_keypad_4d(const Run& r, LL B, LL H, LL S, LL Sk, unsigned seed) {
  const float scale = 0.3f;
  const auto s = rnd<float>(B * H * S * Sk, seed, -4.f, 4.f);
  auto km = ints<int>(B * Sk, 0, 2, seed + 1);
  std::vector<float> kmask(B * Sk);
  for (LL i = 0; i < B * Sk; ++i) kmask[i] = i % Sk != 0 && km[i] == 0 ? -1e4f : 0.f;
  DevLocal<float> sd({B, H, S, Sk}, s), kd({B, Sk}, kmask), p({B, H, S, Sk}, {});
  const int before = begin_case(r);
  if (run(r, "softmax_keypad_4d", 2, sd.view(), kd.view(), p.view(), scale)) {
    std::vector<double> want(B * H * S * Sk);
    for (LL row = 0; row < B * H * S; ++row) {
      const LL b = row / (H * S);
      double m = -1e300, t = 0;
      for (LL j = 0; j < Sk; ++j) want[row * Sk + j] = double(s[row * Sk + j] * scale) + kmask[b * Sk + j], m = std::max(m, want[row * Sk + j]);
      for (LL j = 0; j < Sk; ++j) want[row * Sk + j] = std::exp(want[row * Sk + j] - m), t += want[row * Sk + j];
      for (LL j = 0; j < Sk; ++j) want[row * Sk + j] /= t;
    }
    check(r, "softmax_keypad_4d.p", p.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-5 * want[i] + 1e-7; });
  }
  end_case(r, "softmax_keypad_4d " + dims({B, H, S, Sk}), before);
}

// router_argmax_onehot: top[m] = the first column holding row m's max (logits with many ties),
// onehot its one-hot row.
void router_argmax_onehot(const Run& r, LL M, LL E, unsigned seed) {
  const auto li = ints<int>(M * E, -4, 5, seed);
  std::vector<float> logits(M * E);
  for (LL i = 0; i < M * E; ++i) logits[i] = 0.5f * float(li[i]);
  DevLocal<float> ld({M, E}, logits), onehot({M, E}, {});
  DevLocal<int> top({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "router_argmax_onehot", 2, ld.view(), top.view(), onehot.view())) {
    std::vector<LL> first(M, 0);
    for (LL m = 0; m < M; ++m)
      for (LL j = 1; j < E; ++j)
        if (logits[m * E + j] > logits[m * E + first[m]]) first[m] = j;
    check(r, "router_argmax_onehot.top", top.download(), [&](LL i) { return double(first[i]); }, exact());
    check(r, "router_argmax_onehot.onehot", onehot.download(), [&](LL i) { return i % E == first[i / E] ? 1.0 : 0.0; }, exact());
  }
  end_case(r, "router_argmax_onehot " + dims({M, E}), before);
}

// topk_threshold_softmax: probs = softmax of x inv_temp over the columns with x >= thresh[m] (the
// row's kk-th largest value), 0 elsewhere.
void topk_threshold_softmax(const Run& r, LL M, LL V, LL kk, unsigned seed) {
  const float inv_temp = 1.25f;
  const auto x = rnd<bf16>(M * V, seed, -3.f, 3.f);
  std::vector<float> th(M);
  for (LL m = 0; m < M; ++m) {
    std::vector<float> row(V);
    for (LL j = 0; j < V; ++j) row[j] = float(val(x[m * V + j]));
    std::nth_element(row.begin(), row.begin() + (kk - 1), row.end(), std::greater<float>());
    th[m] = row[kk - 1];
  }
  DevLocal<bf16> xd({M, V}, x);
  DevLocal<float> td({M, 1}, th), p({M, V}, {});
  const int before = begin_case(r);
  if (run(r, "topk_threshold_softmax", 2, xd.view(), td.view(), p.view(), inv_temp)) {
    std::vector<double> want(M * V, 0.0);
    for (LL m = 0; m < M; ++m) {
      double mx = -1e300, t = 0;
      for (LL j = 0; j < V; ++j)
        if (val(x[m * V + j]) >= th[m]) mx = std::max(mx, val(x[m * V + j]) * inv_temp);
      for (LL j = 0; j < V; ++j)
        if (val(x[m * V + j]) >= th[m]) want[m * V + j] = std::exp(val(x[m * V + j]) * inv_temp - mx), t += want[m * V + j];
      for (LL j = 0; j < V; ++j) want[m * V + j] /= t;
    }
    check(r, "topk_threshold_softmax.probs", p.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-5 * want[i] + 1e-7; });
  }
  end_case(r, "topk_threshold_softmax " + dims({M, V, kk}), before);
}

// ================================================================ rotary, gated MLPs ==

// Random angles' cos / sin tables [S, C] (f32).
void angle_tables(LL S, LL C, unsigned seed, std::vector<float>& c, std::vector<float>& s) {
  const auto a = rnd<float>(S * C, seed, -3.2f, 3.2f);
  c.resize(S * C), s.resize(S * C);
  for (LL i = 0; i < S * C; ++i) c[i] = std::cos(a[i]), s[i] = std::sin(a[i]);
}

// NeoX rotation of q [H, S, 128] (halves of 64) by cos / sin [S, 64], in float64.
double neox(const std::vector<bf16>& q, const std::vector<float>& c, const std::vector<float>& s, LL S, LL i) {
  const LL row = i / 128, col = i % 128, j = col % 64, pos = row % S;
  const double x1 = val(q[row * 128 + j]), x2 = val(q[row * 128 + 64 + j]), cs = c[pos * 64 + j], sn = s[pos * 64 + j];
  return col < 64 ? x1 * cs - x2 * sn : x2 * cs + x1 * sn;
}

// rope_neox_out: qr = NeoX rotation of q [H, S, 128].
void rope_neox_out(const Run& r, LL H, LL S, unsigned seed) {
  const auto q = rnd<bf16>(H * S * 128, seed, -2.f, 2.f);
  std::vector<float> c, s;
  angle_tables(S, 64, seed + 1, c, s);
  DevLocal<bf16> qd({H, S, 128}, q), qr({H, S, 128}, {});
  DevLocal<float> cd({S, 64}, c), sd({S, 64}, s);
  const int before = begin_case(r);
  if (run(r, "rope_neox_out", 2, qd.view(), cd.view(), sd.view(), qr.view())) {
    auto want = [&](LL i) { return neox(q, c, s, S, i); };
    check(r, "rope_neox_out.qr", qr.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5; });
  }
  end_case(r, "rope_neox_out " + dims({H, S}), before);
}

// rope_gptj_4d: pairs (x[.., j, 0], x[.., j, 1]) of x [H, S, 32, 2] rotated by cos / sin [S, 32].
void rope_gptj_4d(const Run& r, LL H, LL S, unsigned seed) {
  const auto x = rnd<f16>(H * S * 64, seed, -2.f, 2.f);
  std::vector<float> c, s;
  angle_tables(S, 32, seed + 1, c, s);
  DevLocal<f16> xd({H, S, 32, 2}, x), y({H, S, 32, 2}, {});
  DevLocal<float> cd({S, 32}, c), sd({S, 32}, s);
  const int before = begin_case(r);
  if (run(r, "rope_gptj_4d", 2, xd.view(), cd.view(), sd.view(), y.view())) {
    auto want = [&](LL i) {
      const LL pair = i / 2, j = pair % 32, pos = (pair / 32) % S;
      const double ev = val(x[2 * pair]), od = val(x[2 * pair + 1]), cs = c[pos * 32 + j], sn = s[pos * 32 + j];
      return i % 2 == 0 ? ev * cs - od * sn : od * cs + ev * sn;
    };
    check(r, "rope_gptj_4d.y", y.download(), want, [&](LL i) { return kHf * std::fabs(want(i)) + 1e-5; });
  }
  end_case(r, "rope_gptj_4d " + dims({H, S}), before);
}

// rope_from_positions: angles f32(pos[m]) inv_freq[j] (an f32 product, as the kernel); halves of 32
// of x [M, 64] rotated.
void rope_from_positions(const Run& r, LL M, unsigned seed) {
  const auto x = rnd<bf16>(M * 64, seed, -2.f, 2.f);
  const auto pos = ints<long long>(M, 0, 4000, seed + 1);
  std::vector<float> inv(32);
  for (int j = 0; j < 32; ++j) inv[j] = float(std::pow(10000.0, -double(j) / 32));
  DevLocal<bf16> xd({M, 64}, x), y({M, 64}, {});
  DevLocal<long long> pd({M}, pos);
  DevLocal<float> id({32}, inv);
  const int before = begin_case(r);
  if (run(r, "rope_from_positions", 2, xd.view(), pd.view(), id.view(), y.view())) {
    auto want = [&](LL i) {
      const LL m = i / 64, c = i % 64, j = c % 32;
      const double ang = double(float(pos[m]) * inv[j]), cs = std::cos(ang), sn = std::sin(ang);
      const double a = val(x[m * 64 + j]), b = val(x[m * 64 + 32 + j]);
      return c < 32 ? a * cs - b * sn : b * cs + a * sn;
    };
    check(r, "rope_from_positions.y", y.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 2e-5; });
  }
  end_case(r, "rope_from_positions M=" + std::to_string(M), before);
}

// swiglu_fused_halves: out = bf16(silu(gu[:, :F]) gu[:, F:]).
void swiglu_fused_halves(const Run& r, LL M, LL F, unsigned seed) {
  const auto gu = rnd<bf16>(M * 2 * F, seed, -3.f, 3.f);
  DevLocal<bf16> gd({M, 2 * F}, gu), out({M, F}, {});
  const int before = begin_case(r);
  if (run(r, "swiglu_fused_halves", 2, gd.view(), out.view())) {
    auto want = [&](LL i) { const LL m = i / F, n = i % F; return silu(val(gu[m * 2 * F + n])) * val(gu[m * 2 * F + F + n]); };
    check(r, "swiglu_fused_halves.out", out.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5; });
  }
  end_case(r, "swiglu_fused_halves " + dims({M, F}), before);
}

// geglu_clamped_f16: out = f16(gelu_erf(g) clamp(u, -limit, limit)).
void geglu_clamped_f16(const Run& r, LL M, LL N, unsigned seed) {
  const float limit = 0.75f;
  const auto g = rnd<f16>(M * N, seed, -2.f, 2.f), u = rnd<f16>(M * N, seed + 1);
  DevLocal<f16> gd({M, N}, g), ud({M, N}, u), out({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "geglu_clamped_f16", 2, gd.view(), ud.view(), out.view(), limit)) {
    auto want = [&](LL i) { return gelu_erf(val(g[i])) * std::min(std::max(val(u[i]), -double(limit)), double(limit)); };
    check(r, "geglu_clamped_f16.out", out.download(), want, [&](LL i) { return kHf * std::fabs(want(i)) + 1e-5; });
  }
  end_case(r, "geglu_clamped_f16 " + dims({M, N}), before);
}

// ================================================================ quantisation ==

// quant_int8_per_row: q = clamp(round-half-away(x 127 / amax), -127, 127), scale = amax / 127. The
// host repeats the f32 steps; a value within a few fp32 units of a .5 point may round either way.
void quant_int8_per_row(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<bf16>(M * N, seed, -2.f, 2.f);
  DevLocal<bf16> xd({M, N}, x);
  DevLocal<int> q({M, N}, {});
  DevLocal<float> sc({M}, {});
  const int before = begin_case(r);
  if (run(r, "quant_int8_per_row", 2, xd.view(), q.view(), sc.view())) {
    std::vector<float> amax(M, 0.f);
    std::vector<double> want(M * N), tol(M * N, 0.0);
    for (LL i = 0; i < M * N; ++i) amax[i / N] = std::max(amax[i / N], std::fabs(float(val(x[i]))));
    for (LL i = 0; i < M * N; ++i) {
      const float a = std::max(amax[i / N], 1e-8f), v = float(val(x[i])) * (127.0f / a);
      const double rv = std::trunc(double(v) + (v >= 0 ? 0.5 : -0.5));
      want[i] = std::min(std::max(rv, -127.0), 127.0);
      const double frac = std::fabs(double(v)) - std::floor(std::fabs(double(v)));
      if (std::fabs(frac - 0.5) < 1e-5 * (1 + std::fabs(double(v)))) tol[i] = 1;
    }
    check(r, "quant_int8_per_row.q", q.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
    check(r, "quant_int8_per_row.scale", sc.download(), [&](LL i) { return std::max(double(amax[i]), 1e-8) / 127; },
          [&](LL i) { return 1e-6 * std::max(double(amax[i]), 1e-8) / 127; });
  }
  end_case(r, "quant_int8_per_row " + dims({M, N}), before);
}

// dequant_int8_rowcol: y = bf16(q srow[m] scol[n]) (the f32 products in the kernel's order).
void dequant_int8_rowcol(const Run& r, LL M, LL N, unsigned seed) {
  const auto q = ints<int>(M * N, -127, 127, seed);
  const auto sr = rnd<float>(M, seed + 1, 0.001f, 0.02f), scol = rnd<float>(N, seed + 2, 0.5f, 2.f);
  DevLocal<int> qd({M, N}, q);
  DevLocal<float> srd({M}, sr), scd({N}, scol);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "dequant_int8_rowcol", 2, qd.view(), srd.view(), scd.view(), y.view()))
    check(r, "dequant_int8_rowcol.y", y.download(),
          [&](LL i) { return bf16r(float(float(q[i]) * sr[i / N]) * scol[i % N]); }, exact());
  end_case(r, "dequant_int8_rowcol " + dims({M, N}), before);
}

// fp8_quant_1x128: per row and 128-column block, amax; q = e4m3(x 448 / amax); s[m, block] = amax / 448.
void fp8_quant_1x128(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<bf16>(M * N, seed, -3.f, 3.f);
  const LL NB = (N + 127) / 128;
  DevLocal<bf16> xd({M, N}, x);
  DevLocal<f8e4m3> q({M, N}, {});
  DevLocal<float> sc({M, NB}, {});
  const int before = begin_case(r);
  if (run(r, "fp8_quant_1x128", 2, xd.view(), q.view(), sc.view())) {
    std::vector<double> amax(M * NB, 0.0);
    for (LL i = 0; i < M * N; ++i) {
      double& a = amax[(i / N) * NB + (i % N) / 128];
      a = std::max(a, std::fabs(val(x[i])));
    }
    auto v = [&](LL i) { return val(x[i]) * 448 / std::max(amax[(i / N) * NB + (i % N) / 128], 1e-12); };
    check(r, "fp8_quant_1x128.s", sc.download(), [&](LL i) { return std::max(amax[i], 1e-12) / 448; },
          [&](LL i) { return 1e-6 * amax[i] / 448 + 1e-15; });
    check(r, "fp8_quant_1x128.q", q.download(), [&](LL i) { return e4m3(v(i)); }, [&](LL i) { return e4m3_step(v(i)); });
  }
  end_case(r, "fp8_quant_1x128 " + dims({M, N}), before);
}

// fp8_dequant_128x128: y = bf16(w s[m / 128, n / 128]), w e5m2 [N, K].
void fp8_dequant_128x128(const Run& r, LL N, LL Kd, unsigned seed) {
  const LL NB = (N + 127) / 128, KB = (Kd + 127) / 128;
  const auto w = rnd<f8e5m2>(N * Kd, seed, -4.f, 4.f);
  const auto s = rnd<float>(NB * KB, seed + 1, 0.5f, 2.f);
  DevLocal<f8e5m2> wd({N, Kd}, w);
  DevLocal<float> sd({NB, KB}, s);
  DevLocal<bf16> y({N, Kd}, {});
  const int before = begin_case(r);
  if (run(r, "fp8_dequant_128x128", 2, wd.view(), sd.view(), y.view()))
    check(r, "fp8_dequant_128x128.y", y.download(), [&](LL i) {
      const LL m = i / Kd, n = i % Kd;
      return bf16r(float(val(w[i])) * s[(m / 128) * KB + n / 128]);
    }, exact());
  end_case(r, "fp8_dequant_128x128 " + dims({N, Kd}), before);
}

// fp8_rowscale_all_gather (multi-rank): each rank quantises its rows of x [R, C] (e4m3, one scale a
// row), the codes and scales are all-gathered; y [W R, C] = f16(code scale). The scratch tensors'
// contents are unspecified afterwards and not checked.
void fp8_rowscale_all_gather(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<f16>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<f16>(R * C, seed + p, -3.f, 3.f);
  DevLocal<f16> xd({R, C}, x[me]), y({W * R, C}, {});
  SymArg<f8e4m3> q(r.ctx, {R, C}, nullptr), gq(r.ctx, {W * R, C}, nullptr);
  SymArg<float> s(r.ctx, {R, 1}, nullptr), gs(r.ctx, {W * R, 1}, nullptr);
  const int before = begin_case(r);
  if (run(r, "fp8_rowscale_all_gather", 2, xd.view(), q.view, s.view, gq.view, gs.view, y.view())) {
    std::vector<double> amax(W * R, 0.0), want(W * R * C), tol(W * R * C);
    auto xv = [&](LL i) { return val(x[i / (R * C)][i % (R * C)]); };
    for (LL i = 0; i < W * R * C; ++i) amax[i / C] = std::max(amax[i / C], std::fabs(xv(i)));
    for (LL i = 0; i < W * R * C; ++i) {
      const double a = std::max(amax[i / C], 1e-20), v = xv(i) * 448 / a;
      want[i] = e4m3(v) * (a / 448);
      tol[i] = e4m3_step(v) * (a / 448) + kHf * std::fabs(want[i]) + 1e-6;
    }
    check(r, "fp8_rowscale_all_gather.y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
  }
  end_case(r, "fp8_rowscale_all_gather " + dims({R, C}), before);
}

// ================================================================ vocab-parallel embedding / CE ==

// vocab_embed_i64 (multi-rank): out[t] = row ids[t] of the whole table (rank p holds rows
// [p V, (p + 1) V)), zeros for id -1.
void vocab_embed_i64(const Run& r, LL T, LL V, LL D, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto ids = ints<long long>(T, -1, W * V - 1, seed);  // the same tokens on every rank
  std::vector<std::vector<bf16>> table(W);
  for (int p = 0; p < W; ++p) table[p] = rnd<bf16>(V * D, seed + 10 + p);
  DevLocal<long long> idd({T}, ids);
  DevLocal<bf16> td({V, D}, table[me]);
  SymArg<bf16> part(r.ctx, {T, D}, nullptr), out(r.ctx, {T, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "vocab_embed_i64", 2, idd.view(), td.view(), part.view, out.view)) {
    auto row = [&](LL t, LL d) { return ids[t] < 0 ? 0.0 : val(table[ids[t] / V][(ids[t] % V) * D + d]); };
    check(r, "vocab_embed_i64.out", out.download(), [&](LL i) { return row(i / D, i % D); }, exact());
    check(r, "vocab_embed_i64.part", part.download(),
          [&](LL i) { const LL t = i / D; return ids[t] >= 0 && ids[t] / V == me ? row(t, i % D) : 0.0; }, exact());
  }
  end_case(r, "vocab_embed_i64 " + dims({T, V, D}), before);
}

// vocab_ce_label_smoothing (multi-rank): logits [T, V] per rank (the vocabulary's rank-th slice);
// loss = lse - (1 - eps) logit[target] - eps mean(logits) over the whole W V vocabulary.
void vocab_ce_label_smoothing(const Run& r, LL T, LL V, unsigned seed) {
  const int W = r.W, me = r.me;
  const float eps = 0.1f;
  std::vector<std::vector<bf16>> lg(W);
  for (int p = 0; p < W; ++p) lg[p] = rnd<bf16>(T * V, seed + p, -4.f, 4.f);
  const auto target = ints<long long>(T, 0, W * V - 1, seed + 20);
  DevLocal<bf16> ld({T, V}, lg[me]);
  DevLocal<long long> tg({T}, target);
  DevLocal<float> loss({T}, {});
  SymArg<float> lmax(r.ctx, {T}, nullptr), gmax(r.ctx, {T}, nullptr), st(r.ctx, {T, 3}, nullptr), gst(r.ctx, {T, 3}, nullptr);
  const int before = begin_case(r);
  if (run(r, "vocab_ce_label_smoothing", 2, ld.view(), tg.view(), lmax.view, gmax.view, st.view, gst.view, loss.view(), eps)) {
    std::vector<double> own(T, -1e300), gm(T, -1e300), want(T);
    for (LL t = 0; t < T; ++t) {
      double se = 0, all = 0;
      for (int p = 0; p < W; ++p)
        for (LL j = 0; j < V; ++j) gm[t] = std::max(gm[t], val(lg[p][t * V + j]));
      for (LL j = 0; j < V; ++j) own[t] = std::max(own[t], val(lg[me][t * V + j]));
      for (int p = 0; p < W; ++p)
        for (LL j = 0; j < V; ++j) se += std::exp(val(lg[p][t * V + j]) - gm[t]), all += val(lg[p][t * V + j]);
      const double picked = val(lg[target[t] / V][t * V + target[t] % V]);
      want[t] = std::log(se) + gm[t] - (1 - eps) * picked - eps * all / double(W * V);
    }
    check(r, "vocab_ce_label_smoothing.lmax", lmax.download(), [&](LL i) { return own[i]; }, exact());
    check(r, "vocab_ce_label_smoothing.gmax", gmax.download(), [&](LL i) { return gm[i]; }, exact());
    check(r, "vocab_ce_label_smoothing.loss", loss.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 1e-4 + 1e-5 * std::fabs(want[i]); });
  }
  end_case(r, "vocab_ce_label_smoothing " + dims({T, V}), before);
}

// ================================================================ MoE routing pieces ==

// moe_counts_offsets (multi-rank): cnt = histogram of this rank's ids [T, K] (values in [0, E)),
// gcnt = the sum over ranks, offs = gcnt's exclusive running sum.
void moe_counts_offsets(const Run& r, LL T, LL Kc, LL E, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<int>> ids(W);
  for (int p = 0; p < W; ++p) ids[p] = ints<int>(T * Kc, 0, E - 1, seed + p);
  DevLocal<int> idd({T, Kc}, ids[me]), offs({E}, {});
  SymArg<int> cnt(r.ctx, {E}, nullptr), gcnt(r.ctx, {E}, nullptr);
  const int before = begin_case(r);
  if (run(r, "moe_counts_offsets", 2, idd.view(), cnt.view, gcnt.view, offs.view())) {
    std::vector<double> own(E, 0.0), all(E, 0.0), ex(E, 0.0);
    for (int p = 0; p < W; ++p)
      for (int e : ids[p]) all[e] += 1, own[e] += p == me;
    for (LL e = 1; e < E; ++e) ex[e] = ex[e - 1] + all[e - 1];
    check(r, "moe_counts_offsets.cnt", cnt.download(), [&](LL i) { return own[i]; }, exact());
    check(r, "moe_counts_offsets.gcnt", gcnt.download(), [&](LL i) { return all[i]; }, exact());
    check(r, "moe_counts_offsets.offs", offs.download(), [&](LL i) { return ex[i]; }, exact());
  }
  end_case(r, "moe_counts_offsets " + dims({T, Kc, E}), before);
}

// moe_claim_capacity: fill counts the choices of each expert; each expert's choices get the
// distinct slots 0 .. count - 1 in some order, those at or past the capacity (and ids outside the
// counter: id E here) marked -1.
void moe_claim_capacity(const Run& r, LL T, LL Kc, LL E, LL cap, unsigned seed) {
  const auto ids = ints<long long>(T * Kc, 0, E, seed);
  DevLocal<long long> idd({T, Kc}, ids);
  DevLocal<int> fill({E}, {}), pos({T, Kc}, {});
  const int before = begin_case(r);
  if (run(r, "moe_claim_capacity", 2, idd.view(), fill.view(), pos.view(), cap)) {
    std::vector<double> count(E, 0.0);
    for (LL id : ids)
      if (id < E) count[id] += 1;
    check(r, "moe_claim_capacity.fill", fill.download(), [&](LL i) { return count[i]; }, exact());
    const auto got = pos.download();
    std::vector<std::set<int>> seen(E);
    std::vector<LL> dropped(E, 0);
    LL bad = 0;
    for (LL i = 0; i < T * Kc; ++i) {
      const LL e = ids[i];
      if (e >= E) bad += got[i] != -1;
      else if (got[i] == -1) ++dropped[e];
      else bad += !(got[i] >= 0 && got[i] < std::min<double>(cap, count[e]) && seen[e].insert(got[i]).second);
    }
    for (LL e = 0; e < E; ++e) bad += dropped[e] != std::max<LL>(0, LL(count[e]) - cap);
    PKT_CHECK(bad == 0, "moe_claim_capacity.pos W=" + std::to_string(r.W) + ": " + std::to_string(bad) +
                            " slots out of range, repeated or wrongly dropped");
  }
  end_case(r, "moe_claim_capacity " + dims({T, Kc, E, cap}), before);
}

// moe_permute_gather: xp[r] = f16(x[src[r]] wgt[r]) (zeros for src -1 or past x's rows).
void moe_permute_gather(const Run& r, LL R, LL T, LL D, unsigned seed) {
  const auto x = rnd<f16>(T * D, seed, -2.f, 2.f);
  const auto src = ints<int>(R, -1, T, seed + 1);
  const auto wgt = rnd<float>(R, seed + 2, 0.1f, 1.f);
  DevLocal<f16> xd({T, D}, x), xp({R, D}, {});
  DevLocal<int> sd({R}, src);
  DevLocal<float> wd({R}, wgt);
  const int before = begin_case(r);
  if (run(r, "moe_permute_gather", 2, xd.view(), sd.view(), wd.view(), xp.view()))
    check(r, "moe_permute_gather.xp", xp.download(), [&](LL i) {
      const LL row = i / D, s = src[row];
      return s < 0 || s >= T ? 0.0 : f16r(float(val(x[s * D + i % D])) * wgt[row]);
    }, exact());
  end_case(r, "moe_permute_gather " + dims({R, T, D}), before);
}

// moe_unpermute_scatter_add: y[dst[r]] += yp[r] wgt[r] (duplicates add; dst -1 or past y dropped),
// y starting from random values.
void moe_unpermute_scatter_add(const Run& r, LL R, LL T, LL D, unsigned seed) {
  const auto yp = rnd<float>(R * D, seed), y0 = rnd<float>(T * D, seed + 1), wgt = rnd<float>(R, seed + 2, 0.1f, 1.f);
  const auto dst = ints<long long>(R, -1, T, seed + 3);
  DevLocal<float> ypd({R, D}, yp), wd({R}, wgt), y({T, D}, y0);
  DevLocal<long long> dd({R}, dst);
  const int before = begin_case(r);
  if (run(r, "moe_unpermute_scatter_add", 1, ypd.view(), dd.view(), wd.view(), y.view())) {
    std::vector<double> want(y0.begin(), y0.end()), mag(T * D);
    for (LL i = 0; i < T * D; ++i) mag[i] = std::fabs(y0[i]);
    for (LL row = 0; row < R; ++row)
      if (dst[row] >= 0 && dst[row] < T)
        for (LL d = 0; d < D; ++d) {
          const double v = double(yp[row * D + d] * wgt[row]);
          want[dst[row] * D + d] += v, mag[dst[row] * D + d] += std::fabs(v);
        }
    check(r, "moe_unpermute_scatter_add.y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "moe_unpermute_scatter_add " + dims({R, T, D}), before);
}

// token_shift_i64: y[i] = x[i - 1] (0 at i = 0); nz[i] = the count of non-zero x in [512 (i / 512), i].
void token_shift_i64(const Run& r, LL n, unsigned seed) {
  const auto x = ints<long long>(n, 0, 3, seed);
  DevLocal<long long> xd({n}, x), y({n}, {}), nz({n}, {});
  const int before = begin_case(r);
  if (run(r, "token_shift_i64", 2, xd.view(), y.view(), nz.view())) {
    std::vector<double> c(n);
    for (LL i = 0; i < n; ++i) c[i] = (i % 512 == 0 ? 0.0 : c[i - 1]) + (x[i] != 0);
    check(r, "token_shift_i64.y", y.download(), [&](LL i) { return i == 0 ? 0.0 : double(x[i - 1]); }, exact());
    check(r, "token_shift_i64.nz", nz.download(), [&](LL i) { return c[i]; }, exact());
  }
  end_case(r, "token_shift_i64 n=" + std::to_string(n), before);
}

// ================================================================ ring shifts, peer adds, phases ==

// ring_shift_kv_3d (multi-rank): recv of rank r = kv of rank r - 1.
void ring_shift_kv_3d(const Run& r, LL H, LL S, LL D, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  std::vector<std::vector<bf16>> kv(W);
  for (int p = 0; p < W; ++p) kv[p] = rnd<bf16>(H * S * D, seed + p);
  SymArg<bf16> kd(r.ctx, {H, S, D}, &kv[me]), recv(r.ctx, {H, S, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "ring_shift_kv_3d", 2, kd.view, recv.view))
    check(r, "ring_shift_kv_3d.recv", recv.download(), [&](LL i) { return val(kv[prev][i]); }, exact());
  end_case(r, "ring_shift_kv_3d " + dims({H, S, D}), before);
}

// halo_add_prev (multi-rank): halo of rank r = 0.5 x of rank r + 1 (zeroed, then added into).
void halo_add_prev(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me, next = (me + 1) % W;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(M * N, seed + p);
  DevLocal<float> xd({M, N}, x[me]);
  SymArg<float> halo(r.ctx, {M, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "halo_add_prev", 2, xd.view(), halo.view))
    check(r, "halo_add_prev.halo", halo.download(), [&](LL i) { return 0.5 * x[next][i]; }, exact());
  end_case(r, "halo_add_prev " + dims({M, N}), before);
}

// rs_cols_by_adds_i32 (multi-rank): out [M, C] of rank o = sum over ranks of part[:, o C .. o C + C).
void rs_cols_by_adds_i32(const Run& r, LL M, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<int>> part(W);
  for (int p = 0; p < W; ++p) part[p] = ints<int>(M * W * C, -1000, 1000, seed + p);
  DevLocal<int> pd({M, W * C}, part[me]);
  SymArg<int> out(r.ctx, {M, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "rs_cols_by_adds_i32", 2, pd.view(), out.view))
    check(r, "rs_cols_by_adds_i32.out", out.download(), [&](LL i) {
      double s = 0;
      for (int p = 0; p < W; ++p) s += part[p][(i / C) * W * C + me * C + i % C];
      return s;
    }, exact());
  end_case(r, "rs_cols_by_adds_i32 " + dims({M, C}), before);
}

// allreduce_sgd_momentum (multi-rank): gsum = sum of g; v = mom beta + gsum / W, mom = v and
// p -= lr v, both in place.
void allreduce_sgd_momentum(const Run& r, LL n, unsigned seed) {
  const int W = r.W, me = r.me;
  const float lr = 0.1f, beta = 0.9f;
  std::vector<std::vector<float>> g(W);
  for (int p = 0; p < W; ++p) g[p] = rnd<float>(n, seed + p);
  const auto p0 = rnd<float>(n, seed + 10 + me), m0 = rnd<float>(n, seed + 20 + me);
  SymArg<float> gd(r.ctx, {n}, &g[me]), gsum(r.ctx, {n}, nullptr);
  DevLocal<float> pd({n}, p0), md({n}, m0);
  const int before = begin_case(r);
  if (run(r, "allreduce_sgd_momentum", 1, gd.view, gsum.view, pd.view(), md.view(), lr, beta)) {
    std::vector<double> gs(n, 0.0), ga(n, 0.0), v(n);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < n; ++i) gs[i] += g[p][i], ga[i] += std::fabs(g[p][i]);
    for (LL i = 0; i < n; ++i) v[i] = m0[i] * double(beta) + gs[i] / W;
    check(r, "allreduce_sgd_momentum.gsum", gsum.download(), [&](LL i) { return gs[i]; }, [&](LL i) { return 1e-6 * ga[i] + 1e-7; });
    check(r, "allreduce_sgd_momentum.mom", md.download(), [&](LL i) { return v[i]; },
          [&](LL i) { return 1e-6 * (std::fabs(m0[i]) + ga[i]) + 1e-7; });
    check(r, "allreduce_sgd_momentum.p", pd.download(), [&](LL i) { return p0[i] - double(lr) * v[i]; },
          [&](LL i) { return 1e-6 * (std::fabs(p0[i]) + std::fabs(m0[i]) + ga[i]) + 1e-7; });
  }
  end_case(r, "allreduce_sgd_momentum n=" + std::to_string(n), before);
}

// bcast_scale_then_gather (multi-rank): scb = sc of rank `root`; xs = x scb; y [W R, C] = the row
// all-gather of xs.
void bcast_scale_then_gather(const Run& r, LL R, LL C, LL root, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W), sc(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(R * C, seed + p), sc[p] = rnd<float>(1, seed + 10 + p, 0.5f, 2.f);
  SymArg<float> scd(r.ctx, {1}, &sc[me]), scb(r.ctx, {1}, nullptr), xs(r.ctx, {R, C}, nullptr);
  DevLocal<float> xd({R, C}, x[me]), y({W * R, C}, {});
  const int before = begin_case(r);
  if (run(r, "bcast_scale_then_gather", 2, scd.view, scb.view, xd.view(), xs.view, y.view(), root)) {
    const float s = sc[root][0];
    check(r, "bcast_scale_then_gather.scb", scb.download(), [&](LL) { return double(s); }, exact());
    check(r, "bcast_scale_then_gather.xs", xs.download(), [&](LL i) { return double(x[me][i] * s); }, exact());
    check(r, "bcast_scale_then_gather.y", y.download(), [&](LL i) { return double(x[i / (R * C)][i % (R * C)] * s); }, exact());
  }
  end_case(r, "bcast_scale_then_gather " + dims({R, C}) + " root=" + std::to_string(root), before);
}

// seq_len_mask_i64 (multi-rank): glen = max over ranks of len; mask[b, s] = s < glen[b].
void seq_len_mask_i64(const Run& r, LL B, LL S, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<long long>> len(W);
  for (int p = 0; p < W; ++p) len[p] = ints<long long>(B, 0, S + 5, seed + p);
  SymArg<long long> ld(r.ctx, {B}, &len[me]), glen(r.ctx, {B}, nullptr);
  DevLocal<int> mask({B, S}, {});
  const int before = begin_case(r);
  if (run(r, "seq_len_mask_i64", 2, ld.view, glen.view, mask.view())) {
    std::vector<double> g(B, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL b = 0; b < B; ++b) g[b] = std::max(g[b], double(len[p][b]));
    check(r, "seq_len_mask_i64.glen", glen.download(), [&](LL i) { return g[i]; }, exact());
    check(r, "seq_len_mask_i64.mask", mask.download(), [&](LL i) { return double(i % S) < g[i / S] ? 1.0 : 0.0; }, exact());
  }
  end_case(r, "seq_len_mask_i64 " + dims({B, S}), before);
}

// a2a_4d_then_scale (multi-rank): x [B, W Hl, Sl, D] -> y [B, Hl, W Sl, D] (rank p's head block r
// lands on rank r as sequence block p); z = bf16(y hs[r Hl + h]).
void a2a_4d_then_scale(const Run& r, LL B, LL Hl, LL Sl, LL D, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL H = W * Hl, S = W * Sl;
  std::vector<std::vector<bf16>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<bf16>(B * H * Sl * D, seed + p);
  const auto hs = rnd<float>(H, seed + 20, 0.5f, 2.f);
  SymArg<bf16> xd(r.ctx, {B, H, Sl, D}, &x[me]), y(r.ctx, {B, Hl, S, D}, nullptr);
  DevLocal<float> hd({H}, hs);
  DevLocal<bf16> z({B, Hl, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "a2a_4d_then_scale", 2, xd.view, y.view, hd.view(), z.view())) {
    auto yw = [&](LL i) {
      const LL d = i % D, s = (i / D) % S, h = (i / (D * S)) % Hl, b = i / (D * S * Hl);
      return val(x[s / Sl][((b * H + me * Hl + h) * Sl + s % Sl) * D + d]);
    };
    check(r, "a2a_4d_then_scale.y", y.download(), yw, exact());
    check(r, "a2a_4d_then_scale.z", z.download(),
          [&](LL i) { return bf16r(float(yw(i)) * hs[me * Hl + (i / (D * S)) % Hl]); }, exact());
  }
  end_case(r, "a2a_4d_then_scale " + dims({B, Hl, Sl, D}), before);
}

// reduce_min_capacity (multi-rank): mincap on rank 0 = the minimum over ranks of freecap; admit =
// mincap >= need. Checked on the root only (mincap is unspecified elsewhere).
void reduce_min_capacity(const Run& r, LL E, LL need, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<int>> fc(W);
  for (int p = 0; p < W; ++p) fc[p] = ints<int>(E, 0, 12, seed + p);
  SymArg<int> fd(r.ctx, {E}, &fc[me]), mincap(r.ctx, {E}, nullptr);
  DevLocal<int> admit({E}, {});
  const int before = begin_case(r);
  if (run(r, "reduce_min_capacity", 2, fd.view, mincap.view, admit.view(), need) && me == 0) {
    std::vector<double> mn(E, 1e9);
    for (int p = 0; p < W; ++p)
      for (LL e = 0; e < E; ++e) mn[e] = std::min(mn[e], double(fc[p][e]));
    check(r, "reduce_min_capacity.mincap", mincap.download(), [&](LL i) { return mn[i]; }, exact());
    check(r, "reduce_min_capacity.admit", admit.download(), [&](LL i) { return mn[i] >= need ? 1.0 : 0.0; }, exact());
  }
  end_case(r, "reduce_min_capacity E=" + std::to_string(E), before);
}

// ================================================================ attention ==

// attn_causal_f16_d64: causal attention of q, k, v [H, S, 64] (f16); o and lse [H, S, 1].
void attn_causal_f16_d64(const Run& r, const std::string& k, LL H, LL S, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<f16>(H * S * D, seed), kk = rnd<f16>(H * S * D, seed + 1), v = rnd<f16>(H * S * D, seed + 2);
  DevLocal<f16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h)
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale; },
             [](LL i, LL j) { return j <= i; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); },
             wo.data() + h * S * D, wl.data() + h * S);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, hf_o_tol(wo));
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, k + " " + dims({H, S}), before);
}

// attn_gqa_d128_nolse: q [H, Sq, 128] against k, v [Hk, Sk, 128] at head h / (H / Hk) (bf16).
void attn_gqa_d128_nolse(const Run& r, const std::string& k, LL H, LL Hk, LL Sq, LL Sk, unsigned seed) {
  const LL D = 128, G = H / Hk;
  const float scale = 1.f / std::sqrt(128.f);
  const auto q = rnd<bf16>(H * Sq * D, seed), kk = rnd<bf16>(Hk * Sk * D, seed + 1), v = rnd<bf16>(Hk * Sk * D, seed + 2);
  DevLocal<bf16> qd({H, Sq, D}, q), kd({Hk, Sk, D}, kk), vd({Hk, Sk, D}, v), o({H, Sq, D}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), scale)) {
    std::vector<double> wo(H * Sq * D), wl(H * Sq);
    for (LL h = 0; h < H; ++h) {
      const LL kh = h / G;
      attend(Sq, Sk, D, [&](LL i, LL j) { return dot(q, (h * Sq + i) * D, kk, (kh * Sk + j) * D, D) * scale; },
             [](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[(kh * Sk + j) * D + d]); },
             wo.data() + h * Sq * D, wl.data() + h * Sq);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, Hk, Sq, Sk}), before);
}

// decode_attn_lens: one f32 query per head against the first lens[h] keys of its cache [H, S, 64].
void decode_attn_lens(const Run& r, LL H, LL S, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<float>(H * D, seed, -2.f, 2.f), kc = rnd<float>(H * S * D, seed + 1), vc = rnd<float>(H * S * D, seed + 2);
  auto lens = ints<int>(H, 1, int(S), seed + 3);
  lens[0] = 1, lens[1] = int(S);
  DevLocal<float> qd({H, D}, q), kd({H, S, D}, kc), vd({H, S, D}, vc), o({H, D}, {});
  DevLocal<int> ld({H}, lens);
  const int before = begin_case(r);
  if (run(r, "decode_attn_lens", 2, qd.view(), kd.view(), vd.view(), ld.view(), o.view(), scale)) {
    std::vector<double> wo(H * D), wl;
    for (LL h = 0; h < H; ++h) {
      std::vector<double> oh, lh;
      attend(1, S, D, [&](LL, LL j) { return dot(q, h * D, kc, (h * S + j) * D, D) * scale; },
             [&](LL, LL j) { return j < lens[h]; }, [&](LL j, LL d) { return double(vc[(h * S + j) * D + d]); }, oh, lh);
      std::copy(oh.begin(), oh.end(), wo.begin() + h * D);
    }
    check(r, "decode_attn_lens.o", o.download(), [&](LL i) { return wo[i]; }, abs_tol(2e-5));
  }
  end_case(r, "decode_attn_lens " + dims({H, S}), before);
}

// ================================================================ misc layers ==

// bias_gelu_residual_3d: y = bf16(gelu_tanh(x + b) + r) over [B, S, D].
void bias_gelu_residual_3d(const Run& r, LL B, LL S, LL D, unsigned seed) {
  const auto x = rnd<bf16>(B * S * D, seed, -3.f, 3.f), b = rnd<bf16>(D, seed + 1), res = rnd<bf16>(B * S * D, seed + 2);
  DevLocal<bf16> xd({B, S, D}, x), bd({D}, b), rd({B, S, D}, res), y({B, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "bias_gelu_residual_3d", 2, xd.view(), bd.view(), rd.view(), y.view())) {
    auto want = [&](LL i) { return pkt::gelu_tanh(double(float(val(x[i])) + float(val(b[i % D])))) + val(res[i]); };
    check(r, "bias_gelu_residual_3d.y", y.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5; });
  }
  end_case(r, "bias_gelu_residual_3d " + dims({B, S, D}), before);
}

// transpose_odd_f16: y [N, M] = x^T.
void transpose_odd_f16(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<f16>(M * N, seed);
  DevLocal<f16> xd({M, N}, x), y({N, M}, {});
  const int before = begin_case(r);
  if (run(r, "transpose_odd_f16", 2, xd.view(), y.view()))
    check(r, "transpose_odd_f16.y", y.download(), [&](LL i) { return val(x[(i % M) * N + i / M]); }, exact());
  end_case(r, "transpose_odd_f16 " + dims({M, N}), before);
}

// masked_mean_pool: y[b, d] = mean of x[b, s, d] over s < lens[b] (0 for length 0).
void masked_mean_pool(const Run& r, LL B, LL S, LL D, unsigned seed) {
  const auto x = rnd<float>(B * S * D, seed);
  auto lens = ints<int>(B, 1, int(S), seed + 1);
  lens[0] = 0, lens[1] = int(S);
  DevLocal<float> xd({B, S, D}, x), y({B, D}, {});
  DevLocal<int> ld({B}, lens);
  const int before = begin_case(r);
  if (run(r, "masked_mean_pool", 2, xd.view(), ld.view(), y.view())) {
    std::vector<double> want(B * D, 0.0), mag(B * D, 0.0);
    for (LL b = 0; b < B; ++b)
      for (LL d = 0; d < D; ++d) {
        for (LL s = 0; s < lens[b]; ++s) want[b * D + d] += x[(b * S + s) * D + d], mag[b * D + d] += std::fabs(x[(b * S + s) * D + d]);
        want[b * D + d] /= std::max(lens[b], 1), mag[b * D + d] /= std::max(lens[b], 1);
      }
    check(r, "masked_mean_pool.y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "masked_mean_pool " + dims({B, S, D}), before);
}

// kv_cache_append: cache[slot[t]] = knew[t] (distinct slots; one -1 and one past the cache, both
// dropped); the other rows keep their values.
void kv_cache_append(const Run& r, LL T, LL P, LL D, unsigned seed) {
  const auto kn = rnd<bf16>(T * D, seed), c0 = rnd<bf16>(P * D, seed + 1);
  std::vector<long long> slot(P);
  std::iota(slot.begin(), slot.end(), 0LL);
  std::shuffle(slot.begin(), slot.end(), std::mt19937(seed + 2));
  slot.resize(T);
  slot[1] = -1, slot[T - 2] = P;
  DevLocal<bf16> kd({T, D}, kn), cache({P, D}, c0);
  DevLocal<long long> sd({T}, slot);
  const int before = begin_case(r);
  if (run(r, "kv_cache_append", 2, kd.view(), sd.view(), cache.view())) {
    std::vector<double> want(P * D);
    for (LL i = 0; i < P * D; ++i) want[i] = val(c0[i]);
    for (LL t = 0; t < T; ++t)
      if (slot[t] >= 0 && slot[t] < P)
        for (LL d = 0; d < D; ++d) want[slot[t] * D + d] = val(kn[t * D + d]);
    check(r, "kv_cache_append.cache", cache.download(), [&](LL i) { return want[i]; }, exact());
  }
  end_case(r, "kv_cache_append " + dims({T, P, D}), before);
}

// expert_owner_local: owner = e / per_rank, local = e % per_rank (C++'s truncation; 0 for a zero
// divisor), ids including negatives.
void expert_owner_local(const Run& r, LL T, LL Kc, LL per_rank, unsigned seed) {
  const auto ids = ints<int>(T * Kc, -9, 63, seed);
  DevLocal<int> idd({T, Kc}, ids), owner({T, Kc}, {}), local({T, Kc}, {});
  const int before = begin_case(r);
  if (run(r, "expert_owner_local", 2, idd.view(), owner.view(), local.view(), per_rank)) {
    check(r, "expert_owner_local.owner", owner.download(), [&](LL i) { return per_rank ? double(ids[i] / per_rank) : 0.0; }, exact());
    check(r, "expert_owner_local.local", local.download(), [&](LL i) { return per_rank ? double(ids[i] % per_rank) : 0.0; }, exact());
  }
  end_case(r, "expert_owner_local " + dims({T, Kc}) + " per_rank=" + std::to_string(per_rank), before);
}

// adam_inplace: m1, m2 and p updated in place (bias corrections from `step`).
void adam_inplace(const Run& r, LL n, unsigned seed) {
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, step = 3.f;
  const auto p = rnd<float>(n, seed), g = rnd<float>(n, seed + 1), m1 = rnd<float>(n, seed + 2, -0.1f, 0.1f),
             m2 = rnd<float>(n, seed + 3, 0.f, 0.1f);
  DevLocal<float> pd({n}, p), gd({n}, g), m1d({n}, m1), m2d({n}, m2);
  const int before = begin_case(r);
  if (run(r, "adam_inplace", 1, pd.view(), gd.view(), m1d.view(), m2d.view(), lr, b1, b2, eps, step)) {
    const double c1 = 1 / (1 - std::pow(double(b1), double(step))), c2 = 1 / (1 - std::pow(double(b2), double(step)));
    std::vector<double> a(n), b(n), upd(n);
    for (LL i = 0; i < n; ++i) {
      a[i] = m1[i] * double(b1) + g[i] * (1 - double(b1));
      b[i] = m2[i] * double(b2) + double(g[i]) * g[i] * (1 - double(b2));
      upd[i] = double(lr) * (a[i] * c1) / (std::sqrt(b[i] * c2) + eps);
    }
    check(r, "adam_inplace.m1", m1d.download(), [&](LL i) { return a[i]; }, [&](LL i) { return 1e-6 * (std::fabs(m1[i]) + std::fabs(g[i])); });
    check(r, "adam_inplace.m2", m2d.download(), [&](LL i) { return b[i]; }, [&](LL i) { return 1e-6 * (m2[i] + g[i] * g[i]) + 1e-12; });
    check(r, "adam_inplace.p", pd.download(), [&](LL i) { return p[i] - upd[i]; },
          [&](LL i) { return 1e-6 * std::fabs(p[i]) + 1e-5 * std::fabs(upd[i]) + 1e-9; });
  }
  end_case(r, "adam_inplace n=" + std::to_string(n), before);
}

// kv_fp8_quant_4d: per (b, h, s) row of kv [B, H, S, D], amax; q = e4m3(x 448 / amax); s = amax / 448.
void kv_fp8_quant_4d(const Run& r, LL B, LL H, LL S, LL D, unsigned seed) {
  const auto kv = rnd<bf16>(B * H * S * D, seed, -3.f, 3.f);
  DevLocal<bf16> kd({B, H, S, D}, kv);
  DevLocal<f8e4m3> q({B, H, S, D}, {});
  DevLocal<float> s({B, H, S}, {});
  const int before = begin_case(r);
  if (run(r, "kv_fp8_quant_4d", 2, kd.view(), q.view(), s.view())) {
    std::vector<double> amax(B * H * S, 0.0);
    for (LL i = 0; i < B * H * S * D; ++i) amax[i / D] = std::max(amax[i / D], std::fabs(val(kv[i])));
    auto v = [&](LL i) { return val(kv[i]) * 448 / std::max(amax[i / D], 1e-12); };
    check(r, "kv_fp8_quant_4d.s", s.download(), [&](LL i) { return std::max(amax[i], 1e-12) / 448; },
          [&](LL i) { return 1e-6 * amax[i] / 448 + 1e-15; });
    check(r, "kv_fp8_quant_4d.q", q.download(), [&](LL i) { return e4m3(v(i)); }, [&](LL i) { return e4m3_step(v(i)); });
  }
  end_case(r, "kv_fp8_quant_4d " + dims({B, H, S, D}), before);
}

#ifdef PK_SPECS16_INPLACE
// ================================================================ in place (specs16 finding 1) ==

// f1_rope_inplace_halves: q [H, S, 128] rotated in place.
void f1_rope_inplace_halves(const Run& r, LL H, LL S, unsigned seed) {
  const auto q = rnd<bf16>(H * S * 128, seed, -2.f, 2.f);
  std::vector<float> c, s;
  angle_tables(S, 64, seed + 1, c, s);
  DevLocal<bf16> qd({H, S, 128}, q);
  DevLocal<float> cd({S, 64}, c), sd({S, 64}, s);
  const int before = begin_case(r);
  if (run(r, "f1_rope_inplace_halves", 1, qd.view(), cd.view(), sd.view())) {
    auto want = [&](LL i) { return neox(q, c, s, S, i); };
    check(r, "f1_rope_inplace_halves.q", qd.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5; });
  }
  end_case(r, "f1_rope_inplace_halves " + dims({H, S}), before);
}

// f1c_rmsnorm_inplace_chunks: x = bf16(x rsqrt(mean(x^2) + eps) w) in place, 1024-column chunks.
void f1c_rmsnorm_inplace_chunks(const Run& r, LL M, LL N, unsigned seed) {
  const float eps = 1e-5f;
  const auto x = rnd<bf16>(M * N, seed, -2.f, 2.f), w = rnd<bf16>(N, seed + 1, 0.5f, 1.5f);
  DevLocal<bf16> xd({M, N}, x), wd({N}, w);
  const int before = begin_case(r);
  if (run(r, "f1c_rmsnorm_inplace_chunks", 1, xd.view(), wd.view(), eps)) {
    const std::vector<double> want =
        rmsnorm_rows(M, N, eps, [&](LL i) { return val(x[i]); }, [&](LL j) { return val(w[j]); });
    check(r, "f1c_rmsnorm_inplace_chunks.x", xd.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "f1c_rmsnorm_inplace_chunks " + dims({M, N}), before);
}

// f1d_fused_add_rmsnorm_chunks: res = bf16(x + res), x = bf16(res rsqrt(mean(res^2) + eps) w), both
// in place, 1024-column chunks.
void f1d_fused_add_rmsnorm_chunks(const Run& r, LL M, LL N, unsigned seed) {
  const float eps = 1e-5f;
  const auto x = rnd<bf16>(M * N, seed), res = rnd<bf16>(M * N, seed + 1, -2.f, 2.f), w = rnd<bf16>(N, seed + 2, 0.5f, 1.5f);
  DevLocal<bf16> xd({M, N}, x), rd({M, N}, res), wd({N}, w);
  const int before = begin_case(r);
  if (run(r, "f1d_fused_add_rmsnorm_chunks", 1, xd.view(), rd.view(), wd.view(), eps)) {
    std::vector<double> rn(M * N);
    for (LL i = 0; i < M * N; ++i) rn[i] = bf16r(float(val(x[i])) + float(val(res[i])));
    const std::vector<double> want = rmsnorm_rows(M, N, eps, [&](LL i) { return rn[i]; }, [&](LL j) { return val(w[j]); });
    check(r, "f1d_fused_add_rmsnorm_chunks.res", rd.download(), [&](LL i) { return rn[i]; }, exact());
    check(r, "f1d_fused_add_rmsnorm_chunks.x", xd.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "f1d_fused_add_rmsnorm_chunks " + dims({M, N}), before);
}
#endif

// colsum_store_add: db += column sums of dy, dw += column sums of dy * x (both [1, N], starting
// from random values: the kernel adds, it does not overwrite).
void colsum_store_add(const Run& r, LL M, LL N, unsigned seed) {
  const auto dy = rnd<float>(M * N, seed), db0 = rnd<float>(N, seed + 2), dw0 = rnd<float>(N, seed + 3);
  const auto x = rnd<bf16>(M * N, seed + 1, -2.f, 2.f);
  DevLocal<float> dyd({M, N}, dy), dbd({1, N}, db0), dwd({1, N}, dw0);
  DevLocal<bf16> xd({M, N}, x);
  const int before = begin_case(r);
  if (run(r, "colsum_store_add", 1, dyd.view(), xd.view(), dbd.view(), dwd.view())) {
    std::vector<double> db(N), dw(N), mag(N);
    for (LL n = 0; n < N; ++n) {
      db[n] = db0[n], dw[n] = dw0[n], mag[n] = 1;
      for (LL m = 0; m < M; ++m) {
        const double g = dy[m * N + n], p = g * val(x[m * N + n]);
        db[n] += g, dw[n] += p, mag[n] += std::fabs(g) + std::fabs(p);
      }
    }
    // f32 partial sums added in no set order: a few f32 units of the terms' magnitude.
    auto tol = [&](LL n) { return 1e-5 * mag[n]; };
    check(r, "colsum_store_add.db", dbd.download(), [&](LL n) { return db[n]; }, tol);
    check(r, "colsum_store_add.dw", dwd.download(), [&](LL n) { return dw[n]; }, tol);
  }
  end_case(r, "colsum_store_add " + dims({M, N}), before);
}

// cumsum_reshape_row_col: y[r, c] = x[r, c] - s[c % 64] + s[r % 64], s the running sums of lens[0..63].
void cumsum_reshape_row_col(const Run& r, LL M, LL N, unsigned seed) {
  const auto lens = ints<int>(64, 0, 20, seed);
  const auto x = rnd<float>(M * N, seed + 1);
  DevLocal<int> ld({64}, lens);
  DevLocal<float> xd({M, N}, x), yd({M, N}, std::vector<float>(M * N, NAN));
  const int before = begin_case(r);
  if (run(r, "cumsum_reshape_row_col", 1, ld.view(), xd.view(), yd.view())) {
    std::vector<double> sum(64);
    for (LL i = 0; i < 64; ++i) sum[i] = (i ? sum[i - 1] : 0) + lens[i];
    auto want = [&](LL i) { return double(x[i]) - sum[(i % N) % 64] + sum[(i / N) % 64]; };
    // Two f32 additions of running sums up to 1280: a few f32 units of the terms' magnitude.
    auto tol = [&](LL i) { return 4e-7 * (std::fabs(x[i]) + sum[(i % N) % 64] + sum[(i / N) % 64]) + 1e-6; };
    check(r, "cumsum_reshape_row_col.y", yd.download(), want, tol);
  }
  end_case(r, "cumsum_reshape_row_col " + dims({M, N}), before);
}

// row_cumsum_f32: c[r, j] = sum of p[r, 0..j] (rows of up to 512 columns, one tile each).
void row_cumsum_f32(const Run& r, LL M, LL N, unsigned seed) {
  const auto p = rnd<float>(M * N, seed, 0.f, 1.f);
  DevLocal<float> pd({M, N}, p), cd({M, N}, std::vector<float>(M * N, NAN));
  const int before = begin_case(r);
  if (run(r, "row_cumsum_f32", 1, pd.view(), cd.view())) {
    std::vector<double> want(M * N);
    for (LL i = 0; i < M * N; ++i) want[i] = (i % N ? want[i - 1] : 0) + p[i];
    check(r, "row_cumsum_f32.c", cd.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 1e-6 * (1 + want[i]); });
  }
  end_case(r, "row_cumsum_f32 " + dims({M, N}), before);
}

// tile_row_cumsum_i64: c[r, n + j] = sum of p[r, n..n + j] within each 64-column tile, exactly.
void tile_row_cumsum_i64(const Run& r, LL M, LL N, unsigned seed) {
  const auto p = ints<long long>(M * N, -(1LL << 40), 1LL << 40, seed);
  DevLocal<long long> pd({M, N}, p), cd({M, N}, std::vector<long long>(M * N, -7));
  const int before = begin_case(r);
  if (run(r, "tile_row_cumsum_i64", 1, pd.view(), cd.view())) {
    std::vector<long long> want(M * N);
    for (LL i = 0; i < M * N; ++i) want[i] = (i % N % 64 ? want[i - 1] : 0) + p[i];
    check(r, "tile_row_cumsum_i64.c", cd.download(), [&](LL i) { return double(want[i]); }, exact());
  }
  end_case(r, "tile_row_cumsum_i64 " + dims({M, N}), before);
}

// gelu_erf_bwd_by_erf: dx = bf16(dy (Phi(x) + x phi(x))), the standard normal's CDF through erf.
void gelu_erf_bwd_by_erf(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<bf16>(M * N, seed, -4.f, 4.f), dy = rnd<bf16>(M * N, seed + 1);
  DevLocal<bf16> xd({M, N}, x), dyd({M, N}, dy), dxd({M, N}, std::vector<bf16>(M * N, pkt::from_host<bf16>(NAN)));
  const int before = begin_case(r);
  if (run(r, "gelu_erf_bwd_by_erf", 1, xd.view(), dyd.view(), dxd.view())) {
    auto want = [&](LL i) {
      const double v = val(x[i]);
      const double cdf = 0.5 * (1 + std::erf(v / std::sqrt(2.0))), pdf = std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
      return val(dy[i]) * (cdf + v * pdf);
    };
    check(r, "gelu_erf_bwd_by_erf.dx", dxd.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5; });
  }
  end_case(r, "gelu_erf_bwd_by_erf " + dims({M, N}), before);
}

// ================================================================ the cases ==

void single_gpu_cases(const Run& r) {
  unsigned s = 5000;
  colsum_store_add(r, 77, 300, s += 100);
  colsum_store_add(r, 1000, 129, s += 100);
  cumsum_reshape_row_col(r, 130, 70, s += 100);
  row_cumsum_f32(r, 37, 300, s += 100);
  row_cumsum_f32(r, 20, 512, s += 100);
  tile_row_cumsum_i64(r, 45, 150, s += 100);
  gelu_erf_bwd_by_erf(r, 37, 300, s += 100);
  // GEMMs: the template at K, N % 8 == 0 (fp8: K % 16 == 0), its twin at K = 50; both paths at each.
  for (const char* k : {"bmm_f16_scale_residual", "bmm_f16_scale_residual/general"}) {
    bmm_f16_scale_residual(r, k, 3, 200, 136, 264, s += 100);
    bmm_f16_scale_residual(r, k, 3, 70, 50, 100, s += 100);
  }
  for (const char* k : {"lm_head_softcap_odd", "lm_head_softcap_odd/general"}) {
    lm_head_softcap_odd(r, k, 200, 136, 264, s += 100);
    lm_head_softcap_odd(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"fp8_gemm_rowcol_scales", "fp8_gemm_rowcol_scales/general"}) {
    fp8_gemm_rowcol_scales(r, k, 200, 144, 264, s += 100);
    fp8_gemm_rowcol_scales(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"attn_causal_f16_d64", "attn_causal_f16_d64/general"}) {
    attn_causal_f16_d64(r, k, 3, 150, s += 100);
    attn_causal_f16_d64(r, k, 2, 77, s += 100);
  }
  for (const char* k : {"attn_gqa_d128_nolse", "attn_gqa_d128_nolse/general"}) {
    attn_gqa_d128_nolse(r, k, 4, 2, 100, 150, s += 100);
    attn_gqa_d128_nolse(r, k, 3, 1, 70, 200, s += 100);
  }
  rmsnorm_f16_chunks(r, 37, 1000, s += 100);
  layernorm_wb_stats(r, 37, 300, s += 100);
  fused_add_rmsnorm_inplace(r, 37, 1000, s += 100);
  rmsnorm_3d_batch(r, 3, 37, 256, s += 100);
  rmsnorm_3d_batch(r, 2, 37, 200, s += 100);
  scaled_causal_softmax_f16(r, 3, 150, s += 100);
  softmax_keypad_4d(r, 2, 3, 37, 50, s += 100);
  router_argmax_onehot(r, 37, 50, s += 100);
  topk_threshold_softmax(r, 37, 300, 5, s += 100);
  rope_neox_out(r, 3, 37, s += 100);
  rope_gptj_4d(r, 3, 37, s += 100);
  rope_from_positions(r, 37, s += 100);
  swiglu_fused_halves(r, 37, 300, s += 100);
  geglu_clamped_f16(r, 37, 300, s += 100);
  quant_int8_per_row(r, 37, 1500, s += 100);
  dequant_int8_rowcol(r, 70, 100, s += 100);
  fp8_quant_1x128(r, 70, 300, s += 100);
  fp8_dequant_128x128(r, 300, 200, s += 100);
  moe_claim_capacity(r, 300, 3, 20, 30, s += 100);
  moe_permute_gather(r, 70, 50, 300, s += 100);
  moe_unpermute_scatter_add(r, 70, 20, 300, s += 100);
  token_shift_i64(r, 1300, s += 100);
  decode_attn_lens(r, 5, 150, s += 100);
  bias_gelu_residual_3d(r, 5, 50, 100, s += 100);
  transpose_odd_f16(r, 100, 50, s += 100);
  masked_mean_pool(r, 4, 70, 100, s += 100);
  kv_cache_append(r, 37, 100, 300, s += 100);
  expert_owner_local(r, 300, 6, 7, s += 100);
  expert_owner_local(r, 300, 6, 0, s += 100);
  adam_inplace(r, 5000, s += 100);
  kv_fp8_quant_4d(r, 2, 3, 37, 50, s += 100);
#ifdef PK_SPECS16_INPLACE
  f1_rope_inplace_halves(r, 3, 37, s += 100);
  f1c_rmsnorm_inplace_chunks(r, 37, 2500, s += 100);
  f1d_fused_add_rmsnorm_chunks(r, 37, 2500, s += 100);
#endif
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  // The GEMM + collective kernels: the template at K, N % 8 == 0, the twin at K = 50; both paths.
  for (const char* k : {"cp_linear_gather_cols", "cp_linear_gather_cols/general"}) {
    cp_linear_gather_cols(r, k, 200, 136, 136, s += 100);
    cp_linear_gather_cols(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"rp_linear_rs_cols", "rp_linear_rs_cols/general"}) {
    rp_linear_rs_cols(r, k, 200, 136, 136, s += 100);
    rp_linear_rs_cols(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"rp_linear_bias_rs_rows", "rp_linear_bias_rs_rows/general"}) {
    rp_linear_bias_rs_rows(r, k, 70, 136, 264, s += 100);
    rp_linear_bias_rs_rows(r, k, 37, 50, 100, s += 100);
  }
  for (const char* k : {"sp_ag_then_gemm_relu2", "sp_ag_then_gemm_relu2/general"}) {
    sp_ag_then_gemm_relu2(r, k, 70, 136, 264, s += 100);
    sp_ag_then_gemm_relu2(r, k, 37, 50, 100, s += 100);
  }
  tp_layernorm_sharded(r, 37, 100, s += 100);
  fp8_rowscale_all_gather(r, 37, 200, s += 100);
  vocab_embed_i64(r, 37, 50, 300, s += 100);
  vocab_ce_label_smoothing(r, 37, 300, s += 100);
  moe_counts_offsets(r, 300, 6, 50, s += 100);
  ring_shift_kv_3d(r, 3, 37, 100, s += 100);
  halo_add_prev(r, 37, 100, s += 100);
  rs_cols_by_adds_i32(r, 37, 50, s += 100);
  allreduce_sgd_momentum(r, 3000, s += 100);
  bcast_scale_then_gather(r, 37, 300, r.W - 1, s += 100);
  bcast_scale_then_gather(r, 37, 300, 0, s += 100);
  seq_len_mask_i64(r, 7, 300, s += 100);
  a2a_4d_then_scale(r, 2, 2, 37, 50, s += 100);
  reduce_min_capacity(r, 300, 5, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs16_jit_test");
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs16_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

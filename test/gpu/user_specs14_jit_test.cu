// The fourteenth user-written spec set (test/specs/user_specs14.pk.cpp) through the JIT, each kernel
// against a float64 host reference on fresh random inputs, with every output poisoned (NaN, or
// all-ones integers) first. The single-GPU kernels run at W = 1 (the template kernels also with
// templates = false, "name/general"); the multi-rank kernels at W = 1, 2 and 3 (ranks sharing one
// GPU; PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others). Shapes leave partial tiles everywhere
// (37-row blocks, 300- and 1000-column rows, K % 8 != 0 for the GEMM twins, odd sequence lengths).
// One PASS or FAIL line per case.
//
// Covered (44 of 73): GEMM template g_ab_f16_tails, g_abt_f32_bias, g_abt_row_col_scale,
// g_f16_in_bf16_out_silu, g_residual_alpha, g_bias_layer_gelu_erf, g_vocab_mask_f32, g_col2_scale;
// batched bg_abt_f32_bias_rows, bg_ab_f16_residual_silu, bg_causal_scores, bg_shared_residual,
// bg_bias_per_batch; fp8 i_fp8_gemm_scaled, i_fp8_gemm_rowcol; attention a_bf16_d128_causal_lse1d,
// a_f16_d64_heads_lse, a_mqa_bf16_d64_causal, a_bias2d_bf16_d128, a_softcap_causal_bf16_d64,
// a_segments_bf16_d128; multi-rank f_gemm_ar_64, f_gemm_rs_over_rows, f_ag_gemm_bias (templates),
// a_ring_pull_causal, m_ar_inplace_rmsnorm, m_rs_scale_ag_inplace, m_tp_layernorm, i_xent_vp_bf16,
// x_shift_by_two, x_store_rows_allgather, x_prim_ring_block, x_prim_two_shot; general path
// m_two_loops_rowsum, r_online_softmax_long, r_rotary_half, r_swiglu_fused, r_dequant_128x128,
// r_band_softmax, r_xent_smooth, r_leaky_clamp, i_gather_i64, i_segment_sum, i_hist_then_offsets,
// i_keep_mask.
//
// Not covered here (time, not doubt about their meaning, unless said): f_gemm_rs_128x128,
// f_gemm_rs_ab_f32, f_ag_gemm_f16_ab, f_gemm_ar_then_bias, a_ulysses_f16_d64, m_ar_gelu_ag_cols,
// m_grid_barriers_transpose, m_bcast_inplace_cast, m_amax_ar_quant, m_host_loop_average,
// m_a2a_cols_inplace_bias, r_add_rmsnorm, r_rotary_heads_computed, r_quant_e5m2_blocks_t,
// r_range_newton_rsqrt, i_scatter_perm, i_lengths_to_offsets, i_embed_vp_f16, i_moe_combine_f32,
// i_moe_dispatch_cap (its slots depend on the order claims are served, so a reference must accept
// any order: left out), i_a2av_f32, x_ring_shift_heads, x_add_to_owner, x_halo_exchange,
// x_pull_prev_add, x_prim_ag_planes_sum, x_prim_per_tile_flags, x_prim_double_buffer.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <set>

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

// Kernels, and whether one of their launches takes a template (true) or none does.
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"g_ab_f16_tails", true},           {"g_abt_f32_bias", true},
    {"g_abt_row_col_scale", true},      {"g_f16_in_bf16_out_silu", true},
    {"g_residual_alpha", true},         {"g_bias_layer_gelu_erf", true},
    {"g_vocab_mask_f32", true},         {"g_col2_scale", true},
    {"bg_abt_f32_bias_rows", true},     {"bg_ab_f16_residual_silu", true},
    {"bg_causal_scores", true},         {"bg_shared_residual", true},
    {"bg_bias_per_batch", true},        {"i_fp8_gemm_scaled", true},
    {"i_fp8_gemm_rowcol", true},        {"a_bf16_d128_causal_lse1d", true},
    {"a_f16_d64_heads_lse", true},      {"a_mqa_bf16_d64_causal", true},
    {"a_bias2d_bf16_d128", true},       {"a_softcap_causal_bf16_d64", true},
    {"a_segments_bf16_d128", true},     {"f_gemm_ar_64", true},
    {"f_gemm_rs_over_rows", true},      {"f_ag_gemm_bias", true},
    {"a_ring_pull_causal", false},      {"m_ar_inplace_rmsnorm", false},
    {"m_rs_scale_ag_inplace", false},   {"m_tp_layernorm", false},
    {"i_xent_vp_bf16", false},          {"x_shift_by_two", false},
    {"x_store_rows_allgather", false},  {"x_prim_ring_block", false},
    {"x_prim_two_shot", false},         {"m_two_loops_rowsum", false},
    {"r_online_softmax_long", false},   {"r_rotary_half", false},
    {"r_swiglu_fused", false},          {"r_dequant_128x128", false},
    {"r_band_softmax", false},          {"r_xent_smooth", false},
    {"r_leaky_clamp", false},           {"i_gather_i64", false},
    {"i_segment_sum", false},           {"i_hist_then_offsets", false},
    {"i_keep_mask", false},
};
// The template kernels also run with templates = false ("name/general").
const std::vector<const char*> kGeneralToo = {
    "g_ab_f16_tails",       "g_abt_f32_bias",         "g_abt_row_col_scale",      "g_f16_in_bf16_out_silu",
    "g_residual_alpha",     "g_bias_layer_gelu_erf",  "g_vocab_mask_f32",         "g_col2_scale",
    "bg_abt_f32_bias_rows", "bg_ab_f16_residual_silu", "bg_causal_scores",        "bg_shared_residual",
    "bg_bias_per_batch",    "i_fp8_gemm_scaled",      "i_fp8_gemm_rowcol",        "a_bf16_d128_causal_lse1d",
    "a_f16_d64_heads_lse",  "a_mqa_bf16_d64_causal",  "a_bias2d_bf16_d128",       "a_softcap_causal_bf16_d64",
    "a_segments_bf16_d128", "f_gemm_ar_64",           "f_gemm_rs_over_rows",      "f_ag_gemm_bias"};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS14_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs14", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host data ----

inline double silu(double x) { return x / (1 + std::exp(-x)); }
inline double gelu_erf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

constexpr double kBf = 2.0 / 256, kHf = 2.0 / 2048;
std::string dims(std::initializer_list<LL> d) {
  std::string s;
  for (LL x : d) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

// s[m, n] = sum_q A(m, q) B(n, q) in float64, and mag[m, n] = sum_q |A(m, q) B(n, q)|.
template <class FA, class FB>
void host_gemm(LL M, LL N, LL Kd, const FA& A, const FB& B, std::vector<double>& s, std::vector<double>& mag) {
  s.assign(M * N, 0.0), mag.assign(M * N, 0.0);
  std::vector<double> arow(Kd);
  for (LL m = 0; m < M; ++m) {
    for (LL q = 0; q < Kd; ++q) arow[q] = A(m, q);
    for (LL n = 0; n < N; ++n) {
      double t = 0, g = 0;
      for (LL q = 0; q < Kd; ++q) {
        const double p = arow[q] * B(n, q);
        t += p, g += std::fabs(p);
      }
      s[m * N + n] = t, mag[m * N + n] = g;
    }
  }
}

// ================================================================ GEMMs on the template ==

// c = f16(a b), B [K, N].
void g_ab_f16_tails(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f16>(M * Kd, seed), b = rnd<f16>(Kd * N, seed + 1);
  DevLocal<f16> ad({M, Kd}, a), bd({Kd, N}, b), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), c.view())) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[q * N + n]); }, s, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return s[i]; },
          [&](LL i) { return kHf * std::fabs(s[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// c = a b^T + bias[n], f32.
void g_abt_f32_bias(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  const auto bias = rnd<float>(N, seed + 2);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> biasd({N}, bias), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), biasd.view(), c.view())) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, s, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return s[i] + bias[i % N]; }, [&](LL i) { return 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// c = bf16(a b^T row_s[m] col_s[n]).
void g_abt_row_col_scale(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  const auto rs = rnd<float>(M, seed + 2, 0.5f, 2.f), cs = rnd<float>(N, seed + 3, 0.5f, 2.f);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), c({M, N}, {});
  DevLocal<float> rsd({M}, rs), csd({N}, cs);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), rsd.view(), csd.view(), c.view())) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, s, mag);
    auto want = [&](LL i) { return s[i] * rs[i / N] * cs[i % N]; };
    check(r, k + ".c", c.download(), want,
          [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] * rs[i / N] * cs[i % N] + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// c = bf16(silu(a b^T + bias[0, n])), f16 operands, bias bf16 [1, N].
void g_f16_in_bf16_out_silu(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f16>(M * Kd, seed), b = rnd<f16>(N * Kd, seed + 1);
  const auto bias = rnd<bf16>(N, seed + 2);
  DevLocal<f16> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<bf16> biasd({1, N}, bias), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), biasd.view(), c.view())) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, s, mag);
    auto want = [&](LL i) { return silu(s[i] + val(bias[i % N])); };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// c = f16(a b alpha + r), B [K, N], f16.
void g_residual_alpha(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const float alpha = 0.75f;
  const auto a = rnd<f16>(M * Kd, seed), b = rnd<f16>(Kd * N, seed + 1), res = rnd<f16>(M * N, seed + 2);
  DevLocal<f16> ad({M, Kd}, a), bd({Kd, N}, b), rd({M, N}, res), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), rd.view(), c.view(), alpha)) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[q * N + n]); }, s, mag);
    auto want = [&](LL i) { return s[i] * alpha + val(res[i]); };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kHf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// c = bf16(gelu_erf(a b^T + biases[layer, n])).
void g_bias_layer_gelu_erf(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const LL L = 4, layer = 2;
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1), biases = rnd<bf16>(L * N, seed + 2);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), bsd({L, N}, biases), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), bsd.view(), c.view(), layer)) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, s, mag);
    auto want = [&](LL i) { return gelu_erf(s[i] + val(biases[layer * N + i % N])); };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-5; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// c = col < vocab ? a b^T : -1e4, f32.
void g_vocab_mask_f32(const Run& r, const std::string& k, LL M, LL Kd, LL N, LL vocab, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), c.view(), vocab)) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, s, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return i % N < vocab ? s[i] : -1e4; },
          [&](LL i) { return 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N, vocab}), before);
}

// c = bf16(a b stats[m, 2]), B [K, N], stats [M, 4].
void g_col2_scale(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(Kd * N, seed + 1);
  const auto st = rnd<float>(M * 4, seed + 2, 0.5f, 2.f);
  DevLocal<bf16> ad({M, Kd}, a), bd({Kd, N}, b), c({M, N}, {});
  DevLocal<float> sd({M, 4}, st);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), sd.view(), c.view())) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[q * N + n]); }, s, mag);
    auto want = [&](LL i) { return s[i] * st[(i / N) * 4 + 2]; };
    check(r, k + ".c", c.download(), want,
          [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] * st[(i / N) * 4 + 2] + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// ================================================================ batched GEMMs ==

// Batch z's product (a [B, M, K]; b [B, N, K], or [B, K, N] when kn).
template <class TA>
void batch_gemm(const std::vector<TA>& a, const std::vector<TA>& b, bool kn, LL z, LL M, LL Kd, LL N,
                std::vector<double>& s, std::vector<double>& mag) {
  host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[(z * M + m) * Kd + q]); },
            [&](LL n, LL q) { return kn ? val(b[(z * Kd + q) * N + n]) : val(b[(z * N + n) * Kd + q]); }, s, mag);
}

// c[z] = (a[z] b[z]^T + bias[n]) rs[m], f32.
void bg_abt_f32_bias_rows(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(B * M * Kd, seed), b = rnd<bf16>(B * N * Kd, seed + 1);
  const auto bias = rnd<float>(N, seed + 2), rs = rnd<float>(M, seed + 3, 0.5f, 2.f);
  DevLocal<bf16> ad({B, M, Kd}, a), bd({B, N, Kd}, b);
  DevLocal<float> biasd({N}, bias), rsd({M}, rs), c({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), biasd.view(), rsd.view(), c.view())) {
    const auto got = c.download();
    std::vector<double> s, mag;
    for (LL z = 0; z < B; ++z) {
      batch_gemm(a, b, false, z, M, Kd, N, s, mag);
      const std::vector<float> part(got.begin() + z * M * N, got.begin() + (z + 1) * M * N);
      check(r, k + ".c[" + std::to_string(z) + "]", part, [&](LL i) { return (s[i] + bias[i % N]) * rs[i / N]; },
            [&](LL i) { return 1e-5 * (mag[i] + std::fabs(bias[i % N])) * rs[i / N] + 1e-6; });
    }
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// c[z] = f16(silu(a[z] b[z]) + r[z]), B [Bt, K, N].
void bg_ab_f16_residual_silu(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f16>(B * M * Kd, seed), b = rnd<f16>(B * Kd * N, seed + 1), res = rnd<f16>(B * M * N, seed + 2);
  DevLocal<f16> ad({B, M, Kd}, a), bd({B, Kd, N}, b), rd({B, M, N}, res), c({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), rd.view(), c.view())) {
    const auto got = c.download();
    std::vector<double> s, mag;
    for (LL z = 0; z < B; ++z) {
      batch_gemm(a, b, true, z, M, Kd, N, s, mag);
      const std::vector<f16> part(got.begin() + z * M * N, got.begin() + (z + 1) * M * N);
      auto want = [&](LL i) { return silu(s[i]) + val(res[z * M * N + i]); };
      check(r, k + ".c[" + std::to_string(z) + "]", part, want,
            [&](LL i) { return kHf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-4; });
    }
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// c[z] = bf16(col <= row ? a[z] b[z]^T scale : -1e4) (row and column inside the batch).
void bg_causal_scores(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const float scale = 0.3f;
  const auto a = rnd<bf16>(B * M * Kd, seed), b = rnd<bf16>(B * N * Kd, seed + 1);
  DevLocal<bf16> ad({B, M, Kd}, a), bd({B, N, Kd}, b), c({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), c.view(), scale)) {
    const auto got = c.download();
    std::vector<double> s, mag;
    for (LL z = 0; z < B; ++z) {
      batch_gemm(a, b, false, z, M, Kd, N, s, mag);
      const std::vector<bf16> part(got.begin() + z * M * N, got.begin() + (z + 1) * M * N);
      auto want = [&](LL i) { return i % N <= i / N ? s[i] * scale : bf16r(-1e4); };
      check(r, k + ".c[" + std::to_string(z) + "]", part, want,
            [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-6; });
    }
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// c[z] = bf16(a[z] b[z]^T + r[m, n]), one residual [M, N] for every batch.
void bg_shared_residual(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(B * M * Kd, seed), b = rnd<bf16>(B * N * Kd, seed + 1), res = rnd<bf16>(M * N, seed + 2);
  DevLocal<bf16> ad({B, M, Kd}, a), bd({B, N, Kd}, b), rd({M, N}, res), c({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), rd.view(), c.view())) {
    const auto got = c.download();
    std::vector<double> s, mag;
    for (LL z = 0; z < B; ++z) {
      batch_gemm(a, b, false, z, M, Kd, N, s, mag);
      const std::vector<bf16> part(got.begin() + z * M * N, got.begin() + (z + 1) * M * N);
      auto want = [&](LL i) { return s[i] + val(res[i]); };
      check(r, k + ".c[" + std::to_string(z) + "]", part, want,
            [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-6; });
    }
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// c[z] = bf16(a[z] b[z]^T + bias[z, n]).
void bg_bias_per_batch(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(B * M * Kd, seed), b = rnd<bf16>(B * N * Kd, seed + 1);
  const auto bias = rnd<float>(B * N, seed + 2, -2.f, 2.f);
  DevLocal<bf16> ad({B, M, Kd}, a), bd({B, N, Kd}, b), c({B, M, N}, {});
  DevLocal<float> biasd({B, N}, bias);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), biasd.view(), c.view())) {
    const auto got = c.download();
    std::vector<double> s, mag;
    for (LL z = 0; z < B; ++z) {
      batch_gemm(a, b, false, z, M, Kd, N, s, mag);
      const std::vector<bf16> part(got.begin() + z * M * N, got.begin() + (z + 1) * M * N);
      auto want = [&](LL i) { return s[i] + bias[z * N + i % N]; };
      check(r, k + ".c[" + std::to_string(z) + "]", part, want,
            [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-6; });
    }
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// ================================================================ fp8 GEMMs ==

// c = bf16(a b^T sa[0] sb[0]), e4m3 operands. Hopper's fp8 wgmma accumulates with fewer bits than
// fp32 (user_specs11 measured about 1.2e-5 of the products' magnitude), so the bound follows it.
void i_fp8_gemm_scaled(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f8e4m3>(M * Kd, seed, -2.f, 2.f), b = rnd<f8e4m3>(N * Kd, seed + 1, -2.f, 2.f);
  const std::vector<float> sa = {0.05f}, sb = {0.3f};
  DevLocal<f8e4m3> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> sad({1}, sa), sbd({1}, sb);
  DevLocal<bf16> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), sad.view(), sbd.view(), c.view())) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, s, mag);
    const double sc = double(sa[0] * sb[0]);
    check(r, k + ".c", c.download(), [&](LL i) { return s[i] * sc; },
          [&](LL i) { return kBf * std::fabs(s[i] * sc) + 2.5e-4 * mag[i] * sc + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// c = a b^T sa[m] sb[n], f32.
void i_fp8_gemm_rowcol(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f8e4m3>(M * Kd, seed, -2.f, 2.f), b = rnd<f8e4m3>(N * Kd, seed + 1, -2.f, 2.f);
  const auto sa = rnd<float>(M, seed + 2, 0.01f, 0.1f), sb = rnd<float>(N, seed + 3, 0.01f, 0.1f);
  DevLocal<f8e4m3> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> sad({M}, sa), sbd({N}, sb), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), sad.view(), sbd.view(), c.view())) {
    std::vector<double> s, mag;
    host_gemm(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, s, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return s[i] * sa[i / N] * sb[i % N]; },
          [&](LL i) { return 2.5e-4 * mag[i] * sa[i / N] * sb[i % N] + 1e-7; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// ================================================================ attention ==

// Softmax attention of one head in float64: o [Sq, D] and lse [Sq] for scores s(i, j) with
// keys masked where keep(i, j) is false (every row keeps at least one key).
template <class F, class Keep>
void attend(LL Sq, LL Sk, LL D, const F& score, const Keep& keep, const std::function<double(LL, LL)>& vv,
            std::vector<double>& o, std::vector<double>& lse) {
  o.assign(Sq * D, 0.0), lse.assign(Sq, 0.0);
  std::vector<double> p(Sk);
  for (LL i = 0; i < Sq; ++i) {
    double m = -1e300, s = 0;
    for (LL j = 0; j < Sk; ++j)
      if (keep(i, j)) p[j] = score(i, j), m = std::max(m, p[j]);
    for (LL j = 0; j < Sk; ++j) p[j] = keep(i, j) ? std::exp(p[j] - m) : 0.0, s += p[j];
    for (LL j = 0; j < Sk; ++j)
      if (p[j] != 0)
        for (LL d = 0; d < D; ++d) o[i * D + d] += p[j] / s * vv(j, d);
    lse[i] = m + std::log(s);
  }
}
template <class T>
double dot(const std::vector<T>& x, LL xo, const std::vector<T>& y, LL yo, LL D) {
  double s = 0;
  for (LL d = 0; d < D; ++d) s += val(x[xo + d]) * val(y[yo + d]);
  return s;
}

// Causal, [S, 128] bf16, scale 1/sqrt(128) computed in the kernel, lse [S].
void a_bf16_d128_causal_lse1d(const Run& r, const std::string& k, LL S, unsigned seed) {
  const LL D = 128;
  const double scale = 1 / std::sqrt(128.0);
  const auto q = rnd<bf16>(S * D, seed), kk = rnd<bf16>(S * D, seed + 1), v = rnd<bf16>(S * D, seed + 2);
  DevLocal<bf16> qd({S, D}, q), kd({S, D}, kk), vd({S, D}, v), o({S, D}, {});
  DevLocal<float> lse({S}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view())) {
    std::vector<double> wo, wl;
    attend(S, S, D, [&](LL i, LL j) { return dot(q, i * D, kk, j * D, D) * scale; }, [&](LL i, LL j) { return j <= i; },
           [&](LL j, LL d) { return val(v[j * D + d]); }, wo, wl);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, [&](LL i) { return 2 * kBf * std::fabs(wo[i]) + 4e-3; });
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, [&](LL i) { return 1e-3 * std::fabs(wl[i]) + 2e-3; });
  }
  end_case(r, k + " S=" + std::to_string(S), before);
}

// Non-causal [H, S, 64] f16 with lse [H, S, 1].
void a_f16_d64_heads_lse(const Run& r, const std::string& k, LL H, LL S, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<f16>(H * S * D, seed), kk = rnd<f16>(H * S * D, seed + 1), v = rnd<f16>(H * S * D, seed + 2);
  DevLocal<f16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale)) {
    std::vector<double> wo(H * S * D), wl(H * S), oh, lh;
    for (LL h = 0; h < H; ++h) {
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale; },
             [&](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); }, oh, lh);
      std::copy(oh.begin(), oh.end(), wo.begin() + h * S * D), std::copy(lh.begin(), lh.end(), wl.begin() + h * S);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, [&](LL i) { return 4 * kHf * std::fabs(wo[i]) + 2e-3; });
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, [&](LL i) { return 1e-3 * std::fabs(wl[i]) + 2e-3; });
  }
  end_case(r, k + " " + dims({H, S}), before);
}

// Causal grouped-query (MQA when Hkv = 1) bf16 d64: head h reads K/V head h / (H / Hkv).
void a_mqa_bf16_d64_causal(const Run& r, const std::string& k, LL H, LL Hkv, LL S, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * S * D, seed), kk = rnd<bf16>(Hkv * S * D, seed + 1), v = rnd<bf16>(Hkv * S * D, seed + 2);
  DevLocal<bf16> qd({H, S, D}, q), kd({Hkv, S, D}, kk), vd({Hkv, S, D}, v), o({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), scale)) {
    std::vector<double> wo(H * S * D), oh, lh;
    for (LL h = 0; h < H; ++h) {
      const LL g = h / (H / Hkv);
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (g * S + j) * D, D) * scale; },
             [&](LL i, LL j) { return j <= i; }, [&](LL j, LL d) { return val(v[(g * S + j) * D + d]); }, oh, lh);
      std::copy(oh.begin(), oh.end(), wo.begin() + h * S * D);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, [&](LL i) { return 2 * kBf * std::fabs(wo[i]) + 4e-3; });
  }
  end_case(r, k + " " + dims({H, Hkv, S}), before);
}

// Non-causal bf16 d128 with an f32 [Sq, Sk] bias added to the scaled scores.
void a_bias2d_bf16_d128(const Run& r, const std::string& k, LL Sq, LL Sk, unsigned seed) {
  const LL D = 128;
  const float scale = 1.f / std::sqrt(128.f);
  const auto q = rnd<bf16>(Sq * D, seed), kk = rnd<bf16>(Sk * D, seed + 1), v = rnd<bf16>(Sk * D, seed + 2);
  const auto bias = rnd<float>(Sq * Sk, seed + 3, -2.f, 2.f);
  DevLocal<bf16> qd({Sq, D}, q), kd({Sk, D}, kk), vd({Sk, D}, v), o({Sq, D}, {});
  DevLocal<float> bd({Sq, Sk}, bias);
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), bd.view(), scale)) {
    std::vector<double> wo, wl;
    attend(Sq, Sk, D, [&](LL i, LL j) { return dot(q, i * D, kk, j * D, D) * scale + bias[i * Sk + j]; },
           [&](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[j * D + d]); }, wo, wl);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, [&](LL i) { return 2 * kBf * std::fabs(wo[i]) + 4e-3; });
  }
  end_case(r, k + " " + dims({Sq, Sk}), before);
}

// Causal soft-capped bf16 d64 with lse: s = tanh(q k scale / cap) cap.
void a_softcap_causal_bf16_d64(const Run& r, const std::string& k, LL H, LL S, unsigned seed) {
  const LL D = 64;
  const float scale = 0.5f, cap = 5.f;  // scores up to about 10 before the cap: the cap matters
  const auto q = rnd<bf16>(H * S * D, seed), kk = rnd<bf16>(H * S * D, seed + 1), v = rnd<bf16>(H * S * D, seed + 2);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale, cap)) {
    std::vector<double> wo(H * S * D), wl(H * S), oh, lh;
    for (LL h = 0; h < H; ++h) {
      attend(S, S, D,
             [&](LL i, LL j) { return std::tanh(dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * (scale / cap)) * cap; },
             [&](LL i, LL j) { return j <= i; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); }, oh, lh);
      std::copy(oh.begin(), oh.end(), wo.begin() + h * S * D), std::copy(lh.begin(), lh.end(), wl.begin() + h * S);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, [&](LL i) { return 2 * kBf * std::fabs(wo[i]) + 4e-3; });
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, [&](LL i) { return 1e-3 * std::fabs(wl[i]) + 2e-3; });
  }
  end_case(r, k + " " + dims({H, S}), before);
}

// Packed segments, bf16 d128: query i attends to keys j with seg[i] == seg[j] (non-causal).
void a_segments_bf16_d128(const Run& r, const std::string& k, LL S, unsigned seed) {
  const LL D = 128;
  const float scale = 1.f / std::sqrt(128.f);
  const auto q = rnd<bf16>(S * D, seed), kk = rnd<bf16>(S * D, seed + 1), v = rnd<bf16>(S * D, seed + 2);
  const auto br = ints<int>(S, 0, 40, seed + 3);  // a new segment at about one position in 41
  std::vector<int> seg(S, 0);
  for (LL i = 1; i < S; ++i) seg[i] = seg[i - 1] + (br[i] == 0 || i == 64 || i == 100);  // one at a tile edge
  DevLocal<bf16> qd({S, D}, q), kd({S, D}, kk), vd({S, D}, v), o({S, D}, {});
  DevLocal<int> sd({S}, seg);
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), sd.view(), scale)) {
    std::vector<double> wo, wl;
    attend(S, S, D, [&](LL i, LL j) { return dot(q, i * D, kk, j * D, D) * scale; },
           [&](LL i, LL j) { return seg[i] == seg[j]; }, [&](LL j, LL d) { return val(v[j * D + d]); }, wo, wl);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, [&](LL i) { return 2 * kBf * std::fabs(wo[i]) + 4e-3; });
  }
  end_case(r, k + " S=" + std::to_string(S) + " segments=" + std::to_string(seg[S - 1] + 1), before);
}

// ================================================================ general path: rows, norms, softmax ==

// sums[m] = row sum of x; y = x / sums[m].
void m_two_loops_rowsum(const Run& r, LL T, LL V, unsigned seed) {
  const auto x = rnd<float>(T * V, seed, 0.5f, 1.5f);
  DevLocal<float> xd({T, V}, x), sums({T, 1}, {}), y({T, V}, {});
  const int before = begin_case(r);
  if (run(r, "m_two_loops_rowsum", 2, xd.view(), sums.view(), y.view())) {
    std::vector<double> s(T, 0.0);
    for (LL i = 0; i < T * V; ++i) s[i / V] += x[i];
    // f32 sums of V positive terms: about log2(V) roundings of 2^-24 each, at most 2e-6 relative.
    check(r, "m_two_loops_rowsum.sums", sums.download(), [&](LL i) { return s[i]; }, [&](LL i) { return 2e-6 * s[i]; });
    check(r, "m_two_loops_rowsum.y", y.download(), [&](LL i) { return x[i] / s[i / V]; },
          [&](LL i) { return 4e-6 * x[i] / s[i / V]; });
  }
  end_case(r, "m_two_loops_rowsum " + dims({T, V}), before);
}

// Online softmax statistics in 1024-column steps, then y = exp(x - max) / sum.
void r_online_softmax_long(const Run& r, LL T, LL V, unsigned seed) {
  const auto x = rnd<float>(T * V, seed, -6.f, 6.f);
  DevLocal<float> xd({T, V}, x), y({T, V}, {});
  const int before = begin_case(r);
  if (run(r, "r_online_softmax_long", 2, xd.view(), y.view())) {
    std::vector<double> want(T * V);
    for (LL t = 0; t < T; ++t) {
      double m = -1e300, s = 0;
      for (LL v = 0; v < V; ++v) m = std::max(m, double(x[t * V + v]));
      for (LL v = 0; v < V; ++v) s += std::exp(x[t * V + v] - m);
      for (LL v = 0; v < V; ++v) want[t * V + v] = std::exp(x[t * V + v] - m) / s;
    }
    check(r, "r_online_softmax_long.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 1e-4 * want[i] + 1e-9; });
  }
  end_case(r, "r_online_softmax_long " + dims({T, V}), before);
}

// Half-split rotary on [S, 128] bf16 with cos / sin [S, 64].
void r_rotary_half(const Run& r, LL S, unsigned seed) {
  const auto x = rnd<bf16>(S * 128, seed, -2.f, 2.f);
  const auto cs = rnd<float>(S * 64, seed + 1), sn = rnd<float>(S * 64, seed + 2);
  DevLocal<bf16> xd({S, 128}, x), y({S, 128}, {});
  DevLocal<float> cd({S, 64}, cs), sd({S, 64}, sn);
  const int before = begin_case(r);
  if (run(r, "r_rotary_half", 2, xd.view(), cd.view(), sd.view(), y.view())) {
    auto want = [&](LL i) {
      const LL s = i / 128, d = i % 128, j = d % 64;
      const double x1 = val(x[s * 128 + j]), x2 = val(x[s * 128 + 64 + j]), c = cs[s * 64 + j], n = sn[s * 64 + j];
      return d < 64 ? x1 * c - x2 * n : x2 * c + x1 * n;
    };
    check(r, "r_rotary_half.y", y.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-6; });
  }
  end_case(r, "r_rotary_half S=" + std::to_string(S), before);
}

// y = bf16(silu(gu[:, n]) gu[:, F + n]).
void r_swiglu_fused(const Run& r, LL T, LL F, unsigned seed) {
  const auto gu = rnd<bf16>(T * 2 * F, seed, -3.f, 3.f);
  DevLocal<bf16> gd({T, 2 * F}, gu), y({T, F}, {});
  const int before = begin_case(r);
  if (run(r, "r_swiglu_fused", 2, gd.view(), y.view())) {
    auto want = [&](LL i) { const LL t = i / F, n = i % F; return silu(val(gu[t * 2 * F + n])) * val(gu[t * 2 * F + F + n]); };
    check(r, "r_swiglu_fused.y", y.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-6; });
  }
  end_case(r, "r_swiglu_fused " + dims({T, F}), before);
}

// y = bf16(q s[m / 128, n / 128]), e4m3 q.
void r_dequant_128x128(const Run& r, LL M, LL N, unsigned seed) {
  const LL BM = (M + 127) / 128, BN = (N + 127) / 128;
  const auto q = rnd<f8e4m3>(M * N, seed, -400.f, 400.f);
  const auto s = rnd<float>(BM * BN, seed + 1, 0.001f, 0.01f);
  DevLocal<f8e4m3> qd({M, N}, q);
  DevLocal<float> sd({BM, BN}, s);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "r_dequant_128x128", 2, qd.view(), sd.view(), y.view())) {
    auto want = [&](LL i) { return val(q[i]) * s[(i / N / 128) * BN + (i % N) / 128]; };
    check(r, "r_dequant_128x128.y", y.download(), want, [&](LL i) { return kBf / 2 * std::fabs(want(i)) + 1e-9; });
  }
  end_case(r, "r_dequant_128x128 " + dims({M, N}), before);
}

// Softmax of each row over the columns with |row - col| <= band (and col < cols).
void r_band_softmax(const Run& r, LL T, LL C, unsigned seed) {
  const float band = 20.f;
  const auto s = rnd<float>(T * C, seed, -3.f, 3.f);
  DevLocal<float> sd({T, C}, s), p({T, C}, {});
  const int before = begin_case(r);
  if (run(r, "r_band_softmax", 2, sd.view(), p.view(), band)) {
    std::vector<double> want(T * C, 0.0);
    for (LL t = 0; t < T; ++t) {
      double m = -1e300, z = 0;
      for (LL c = 0; c < C; ++c)
        if (std::llabs(t - c) <= band) m = std::max(m, double(s[t * C + c]));
      for (LL c = 0; c < C; ++c)
        if (std::llabs(t - c) <= band) z += std::exp(s[t * C + c] - m);
      for (LL c = 0; c < C; ++c)
        if (std::llabs(t - c) <= band) want[t * C + c] = std::exp(s[t * C + c] - m) / z;
    }
    check(r, "r_band_softmax.p", p.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-4 * want[i] + 1e-9; });
  }
  end_case(r, "r_band_softmax " + dims({T, C}), before);
}

// Label-smoothed cross-entropy: (lse - x[target]) (1 - eps) + (lse - mean x) eps.
void r_xent_smooth(const Run& r, LL T, LL V, unsigned seed) {
  const float eps = 0.1f;
  const auto lg = rnd<float>(T * V, seed, -4.f, 4.f);
  const auto tg = ints<int>(T, 0, V - 1, seed + 1);
  DevLocal<float> ld({T, V}, lg), loss({T, 1}, {});
  DevLocal<int> td({T, 1}, tg);
  const int before = begin_case(r);
  if (run(r, "r_xent_smooth", 2, ld.view(), td.view(), loss.view(), eps)) {
    std::vector<double> want(T);
    for (LL t = 0; t < T; ++t) {
      double m = -1e300, se = 0, sx = 0;
      for (LL v = 0; v < V; ++v) m = std::max(m, double(lg[t * V + v])), sx += lg[t * V + v];
      for (LL v = 0; v < V; ++v) se += std::exp(lg[t * V + v] - m);
      const double lse = m + std::log(se);
      want[t] = (lse - lg[t * V + tg[t]]) * (1 - eps) + (lse - sx / V) * eps;
    }
    check(r, "r_xent_smooth.loss", loss.download(), [&](LL i) { return want[i]; }, abs_tol(1e-4));
  }
  end_case(r, "r_xent_smooth " + dims({T, V}), before);
}

// y = f16(clamp(x > 0 ? x : x slope, -lim, lim)).
void r_leaky_clamp(const Run& r, LL n, unsigned seed) {
  const float slope = 0.1f, lim = 1.5f;
  const auto x = rnd<f16>(n, seed, -20.f, 3.f);
  DevLocal<f16> xd({n}, x), y({n}, {});
  const int before = begin_case(r);
  if (run(r, "r_leaky_clamp", 2, xd.view(), y.view(), slope, lim)) {
    auto want = [&](LL i) {
      const float t = float(val(x[i]));
      return f16r(std::min(std::max(t > 0 ? t : t * slope, -lim), lim));
    };
    check(r, "r_leaky_clamp.y", y.download(), want, [&](LL i) { return kHf / 2 * std::fabs(want(i)); });
  }
  end_case(r, "r_leaky_clamp n=" + std::to_string(n), before);
}

// ================================================================ integer and indexed tensors ==

// out[t] = table[ids[t]] (i64 ids).
void i_gather_i64(const Run& r, LL T, LL V, LL D, unsigned seed) {
  const auto ids = ints<long long>(T, 0, V - 1, seed);
  const auto table = rnd<bf16>(V * D, seed + 1);
  DevLocal<bf16> td({V, D}, table), out({T, D}, {});
  DevLocal<long long> idd({T}, ids);
  const int before = begin_case(r);
  if (run(r, "i_gather_i64", 2, td.view(), idd.view(), out.view())) {
    check(r, "i_gather_i64.out", out.download(), [&](LL i) { return val(table[ids[i / D] * D + i % D]); }, exact());
  }
  end_case(r, "i_gather_i64 " + dims({T, V, D}), before);
}

// out[seg[t]] += x[t] (out starts from random values, so the adds onto them are checked).
void i_segment_sum(const Run& r, LL T, LL S, LL C, unsigned seed) {
  const auto x = rnd<float>(T * C, seed);
  const auto seg = ints<int>(T, 0, S - 1, seed + 1);
  const auto init = rnd<float>(S * C, seed + 2);
  DevLocal<float> xd({T, C}, x), out({S, C}, init);
  DevLocal<int> sd({T, 1}, seg);
  const int before = begin_case(r);
  if (run(r, "i_segment_sum", 1, xd.view(), sd.view(), out.view())) {
    std::vector<double> want(init.begin(), init.end()), mag(S * C);
    for (LL i = 0; i < S * C; ++i) mag[i] = std::fabs(init[i]);
    for (LL t = 0; t < T; ++t)
      for (LL c = 0; c < C; ++c) want[seg[t] * C + c] += x[t * C + c], mag[seg[t] * C + c] += std::fabs(x[t * C + c]);
    check(r, "i_segment_sum.out", out.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "i_segment_sum " + dims({T, S, C}), before);
}

// counts[b] = histogram of rows [256 b, 256 b + 256) of ids [T, 8] (64 experts), offs = exclusive sums.
void i_hist_then_offsets(const Run& r, LL T, unsigned seed) {
  const LL NB = (T + 255) / 256;
  const auto ids = ints<int>(T * 8, 0, 63, seed);
  DevLocal<int> idd({T, 8}, ids), counts({NB, 64}, {}), offs({NB, 64}, {});
  const int before = begin_case(r);
  if (run(r, "i_hist_then_offsets", 2, idd.view(), counts.view(), offs.view())) {
    std::vector<double> c(NB * 64, 0.0), o(NB * 64, 0.0);
    for (LL i = 0; i < T * 8; ++i) c[(i / 8 / 256) * 64 + ids[i]] += 1;
    for (LL b = 0; b < NB; ++b)
      for (LL e = 1; e < 64; ++e) o[b * 64 + e] = o[b * 64 + e - 1] + c[b * 64 + e - 1];
    check(r, "i_hist_then_offsets.counts", counts.download(), [&](LL i) { return c[i]; }, exact());
    check(r, "i_hist_then_offsets.offs", offs.download(), [&](LL i) { return o[i]; }, exact());
  }
  end_case(r, "i_hist_then_offsets T=" + std::to_string(T), before);
}

// keep = slot >= 0 as f32.
void i_keep_mask(const Run& r, LL T, LL Kk, unsigned seed) {
  const auto slot = ints<int>(T * Kk, -3, 5, seed);
  DevLocal<int> sd({T, Kk}, slot);
  DevLocal<float> keep({T, Kk}, {});
  const int before = begin_case(r);
  if (run(r, "i_keep_mask", 2, sd.view(), keep.view()))
    check(r, "i_keep_mask.keep", keep.download(), [&](LL i) { return slot[i] >= 0 ? 1.0 : 0.0; }, exact());
  end_case(r, "i_keep_mask " + dims({T, Kk}), before);
}

// ================================================================ multi-rank ==

// GEMM + all-reduce: c = sum over ranks of bf16(a_q b_q^T), 64 x 256 tiles.
void f_gemm_ar_64(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> a(W), b(W);
  for (int q = 0; q < W; ++q) a[q] = rnd<bf16>(M * Kd, seed + q, -0.5f, 0.5f), b[q] = rnd<bf16>(N * Kd, seed + 20 + q, -0.5f, 0.5f);
  DevLocal<bf16> ad({M, Kd}, a[me]), bd({N, Kd}, b[me]);
  SymArg<bf16> p(r.ctx, {M, N}, nullptr), c(r.ctx, {M, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), p.view, c.view)) {
    std::vector<double> want(M * N, 0.0), mag(M * N, 0.0), s, g;
    for (int q = 0; q < W; ++q) {
      host_gemm(M, N, Kd, [&](LL m, LL j) { return val(a[q][m * Kd + j]); }, [&](LL n, LL j) { return val(b[q][n * Kd + j]); }, s, g);
      for (LL i = 0; i < M * N; ++i) want[i] += s[i], mag[i] += std::fabs(s[i]);
    }
    // Each rank's tile rounds to bf16 and the sum is added (or rounded) in bf16.
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-3 + (W + 2.0) / 256 * mag[i]; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// GEMM + reduce-scatter over A's rows: rank o's c [rows, N] = sum over ranks q of
// bf16(a_q[o rows + m] b_q^T), added in bf16 into a zeroed c.
void f_gemm_rs_over_rows(const Run& r, const std::string& k, LL rows, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL M = W * rows;
  std::vector<std::vector<bf16>> a(W), b(W);
  for (int q = 0; q < W; ++q) a[q] = rnd<bf16>(M * Kd, seed + q, -0.5f, 0.5f), b[q] = rnd<bf16>(N * Kd, seed + 20 + q, -0.5f, 0.5f);
  DevLocal<bf16> ad({M, Kd}, a[me]), bd({N, Kd}, b[me]);
  SymArg<bf16> c(r.ctx, {rows, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, k, 1, ad.view(), bd.view(), c.view)) {
    std::vector<double> want(rows * N, 0.0), mag(rows * N, 0.0), s, g;
    for (int q = 0; q < W; ++q) {
      host_gemm(rows, N, Kd, [&](LL m, LL j) { return val(a[q][(me * rows + m) * Kd + j]); },
                [&](LL n, LL j) { return val(b[q][n * Kd + j]); }, s, g);
      for (LL i = 0; i < rows * N; ++i) want[i] += s[i], mag[i] += std::fabs(s[i]);
    }
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-3 + (W + 2.0) / 256 * mag[i]; });
  }
  end_case(r, k + " " + dims({rows, Kd, N}), before);
}

// All-gather of A's row shards [R, K], then c = bf16(a_full b^T + bias[n]).
void f_ag_gemm_bias(const Run& r, const std::string& k, LL R, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> a(W);
  for (int q = 0; q < W; ++q) a[q] = rnd<bf16>(R * Kd, seed + q, -0.5f, 0.5f);
  const auto b = rnd<bf16>(N * Kd, seed + 40 + me, -0.5f, 0.5f), bias = rnd<bf16>(N, seed + 50 + me);
  SymArg<bf16> ad(r.ctx, {R, Kd}, &a[me]), af(r.ctx, {W * R, Kd}, nullptr);
  DevLocal<bf16> bd({N, Kd}, b), biasd({N}, bias), c({W * R, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view, af.view, bd.view(), biasd.view(), c.view())) {
    std::vector<double> s, mag;
    host_gemm(W * R, N, Kd, [&](LL m, LL j) { return val(a[m / R][(m % R) * Kd + j]); },
              [&](LL n, LL j) { return val(b[n * Kd + j]); }, s, mag);
    auto want = [&](LL i) { return s[i] + val(bias[i % N]); };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({R, Kd, N}), before);
}

// Ring attention by pulls: rank me's queries [Sl, 64] against every rank's keys, causal by global
// position (key p Sl + j kept for query me Sl + i when p Sl + j <= me Sl + i).
void a_ring_pull_causal(const Run& r, LL Sl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL D = 64, S = W * Sl;
  const float scale = 0.125f;
  std::vector<std::vector<bf16>> kk(W), vv(W);
  for (int p = 0; p < W; ++p) kk[p] = rnd<bf16>(Sl * D, seed + p), vv[p] = rnd<bf16>(Sl * D, seed + 20 + p);
  const auto q = rnd<bf16>(Sl * D, seed + 40 + me);
  SymArg<bf16> kd(r.ctx, {Sl, D}, &kk[me]), vd(r.ctx, {Sl, D}, &vv[me]);
  DevLocal<bf16> qd({Sl, D}, q), o({Sl, D}, {});
  const int before = begin_case(r);
  if (run(r, "a_ring_pull_causal", 2, qd.view(), kd.view, vd.view, o.view(), scale)) {
    std::vector<double> wo, wl;
    attend(Sl, S, D, [&](LL i, LL j) { return dot(q, i * D, kk[j / Sl], (j % Sl) * D, D) * scale; },
           [&](LL i, LL j) { return j <= me * Sl + i; }, [&](LL j, LL d) { return val(vv[j / Sl][(j % Sl) * D + d]); }, wo, wl);
    check(r, "a_ring_pull_causal.o", o.download(), [&](LL i) { return wo[i]; },
          [&](LL i) { return 2 * kBf * std::fabs(wo[i]) + 4e-3; });
  }
  end_case(r, "a_ring_pull_causal Sl=" + std::to_string(Sl), before);
}

// In-place all-reduce of x [T, 1024] bf16, then y = bf16(x rsqrt(mean x^2 + eps) w). One launch.
void m_ar_inplace_rmsnorm(const Run& r, LL T, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL H = 1024;
  const float eps = 1e-5f;
  std::vector<std::vector<bf16>> p(W);
  for (int q = 0; q < W; ++q) p[q] = rnd<bf16>(T * H, seed + q, -2.f, 2.f);
  const auto w = rnd<bf16>(H, seed + 30, 0.5f, 1.5f);
  SymArg<bf16> xd(r.ctx, {T, H}, &p[me]);
  DevLocal<bf16> wd({H}, w), y({T, H}, {});
  const int before = begin_case(r);
  if (run(r, "m_ar_inplace_rmsnorm", 1, xd.view, wd.view(), y.view(), eps)) {
    std::vector<double> sum(T * H, 0.0), mag(T * H, 0.0), want(T * H);
    for (int q = 0; q < W; ++q)
      for (LL i = 0; i < T * H; ++i) sum[i] += val(p[q][i]), mag[i] += std::fabs(val(p[q][i]));
    const auto xs = xd.download();
    check(r, "m_ar_inplace_rmsnorm.x", xs, [&](LL i) { return sum[i]; }, [&](LL i) { return kBf * mag[i] + 1e-6; });
    // y from the bf16 sum the kernel read back.
    for (LL t = 0; t < T; ++t) {
      double ss = 0;
      for (LL j = 0; j < H; ++j) ss += val(xs[t * H + j]) * val(xs[t * H + j]);
      const double rs = 1 / std::sqrt(ss / H + eps);
      for (LL j = 0; j < H; ++j) want[t * H + j] = val(xs[t * H + j]) * rs * val(w[j]);
    }
    check(r, "m_ar_inplace_rmsnorm.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "m_ar_inplace_rmsnorm T=" + std::to_string(T), before);
}

// In-place reduce-scatter, scale by lr, in-place all-gather: every rank ends with lr * sum. One launch.
void m_rs_scale_ag_inplace(const Run& r, LL Rl, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL R = W * Rl;
  const float lr = 0.37f;
  std::vector<std::vector<float>> p(W);
  for (int q = 0; q < W; ++q) p[q] = rnd<float>(R * C, seed + q);
  SymArg<float> xd(r.ctx, {R, C}, &p[me]);
  const int before = begin_case(r);
  if (run(r, "m_rs_scale_ag_inplace", 1, xd.view, lr)) {
    std::vector<double> want(R * C, 0.0), mag(R * C, 0.0);
    for (int q = 0; q < W; ++q)
      for (LL i = 0; i < R * C; ++i) want[i] += p[q][i] * double(lr), mag[i] += std::fabs(p[q][i]) * lr;
    check(r, "m_rs_scale_ag_inplace.x", xd.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "m_rs_scale_ag_inplace " + dims({Rl, C}), before);
}

// Tensor-parallel LayerNorm over W column shards of 512: partial sums, one all-reduce, normalise.
void m_tp_layernorm(const Run& r, LL T, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL H = 512;
  const float eps = 1e-5f, inv_n = 1.f / float(W * H);
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(T * H, seed + q, -1.f, 2.f);
  const auto w = rnd<float>(H, seed + 30 + me, 0.5f, 1.5f), b = rnd<float>(H, seed + 40 + me);
  DevLocal<float> xd({T, H}, x[me]), wd({H}, w), bd({H}, b), y({T, H}, {});
  SymArg<float> part(r.ctx, {T, 2}, nullptr), tot(r.ctx, {T, 2}, nullptr);
  const int before = begin_case(r);
  if (run(r, "m_tp_layernorm", 2, xd.view(), wd.view(), bd.view(), part.view, tot.view, y.view(), inv_n, eps)) {
    std::vector<double> want(T * H);
    for (LL t = 0; t < T; ++t) {
      double mu = 0, var = 0;
      for (int q = 0; q < W; ++q)
        for (LL j = 0; j < H; ++j) mu += x[q][t * H + j];
      mu /= W * H;
      for (int q = 0; q < W; ++q)
        for (LL j = 0; j < H; ++j) var += (x[q][t * H + j] - mu) * (x[q][t * H + j] - mu);
      const double rs = 1 / std::sqrt(var / (W * H) + eps);
      for (LL j = 0; j < H; ++j) want[t * H + j] = (x[me][t * H + j] - mu) * rs * w[j] + b[j];
    }
    // E[x^2] - mean^2 in f32 loses about 1e-6 of E[x^2] (about 1.3 here) to cancellation.
    check(r, "m_tp_layernorm.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 1e-4 * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "m_tp_layernorm T=" + std::to_string(T), before);
}

// Vocabulary-parallel cross-entropy: rank q holds columns [q Vl, q Vl + Vl) of the logits.
void i_xent_vp_bf16(const Run& r, LL T, LL Vl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL V = W * Vl;
  std::vector<std::vector<bf16>> lg(W);
  for (int q = 0; q < W; ++q) lg[q] = rnd<bf16>(T * Vl, seed + q, -4.f, 4.f);
  const auto tg = ints<long long>(T, 0, V - 1, seed + 30);
  DevLocal<bf16> ld({T, Vl}, lg[me]);
  DevLocal<long long> td({T}, tg);
  DevLocal<float> loss({T}, {});
  SymArg<float> lmax(r.ctx, {T, 1}, nullptr), gmax(r.ctx, {T, 1}, nullptr), lst(r.ctx, {T, 2}, nullptr),
      gst(r.ctx, {T, 2}, nullptr);
  const int before = begin_case(r);
  if (run(r, "i_xent_vp_bf16", 2, ld.view(), td.view(), lmax.view, gmax.view, lst.view, gst.view, loss.view())) {
    auto x = [&](LL t, LL v) { return val(lg[v / Vl][t * Vl + v % Vl]); };
    std::vector<double> want(T);
    for (LL t = 0; t < T; ++t) {
      double m = -1e300, s = 0;
      for (LL v = 0; v < V; ++v) m = std::max(m, x(t, v));
      for (LL v = 0; v < V; ++v) s += std::exp(x(t, v) - m);
      want[t] = m + std::log(s) - x(t, tg[t]);
    }
    check(r, "i_xent_vp_bf16.loss", loss.download(), [&](LL i) { return want[i]; }, abs_tol(1e-4));
  }
  end_case(r, "i_xent_vp_bf16 " + dims({T, Vl}), before);
}

// y on rank (me + 2) % W gets 0.5 x_me: rank me holds 0.5 x of rank (me - 2) mod W.
void x_shift_by_two(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me, from = ((me - 2) % W + W) % W;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(M * N, seed + q);
  DevLocal<float> xd({M, N}, x[me]);
  SymArg<float> y(r.ctx, {M, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "x_shift_by_two", 2, xd.view(), y.view))
    check(r, "x_shift_by_two.y", y.download(), [&](LL i) { return 0.5 * x[from][i]; }, exact());
  end_case(r, "x_shift_by_two " + dims({M, N}), before);
}

// Rows of x [R, C] at rank() R + r of every rank's y [W R, C].
void x_store_rows_allgather(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<bf16>(R * C, seed + q);
  DevLocal<bf16> xd({R, C}, x[me]);
  SymArg<bf16> y(r.ctx, {W * R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "x_store_rows_allgather", 2, xd.view(), y.view))
    check(r, "x_store_rows_allgather.y", y.download(), [&](LL i) { return val(x[i / (R * C)][i % (R * C)]); }, exact());
  end_case(r, "x_store_rows_allgather " + dims({R, C}), before);
}

// Hand-written ring push: buf holds the previous rank's x, out = buf - x (f32).
void x_prim_ring_block(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(M * N, seed + q);
  SymArg<float> xd(r.ctx, {M, N}, &x[me]), buf(r.ctx, {M, N}, nullptr);
  DevLocal<float> out({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "x_prim_ring_block", 2, xd.view, buf.view, out.view())) {
    check(r, "x_prim_ring_block.buf", buf.download(), [&](LL i) { return x[prev][i]; }, exact());
    check(r, "x_prim_ring_block.out", out.download(), [&](LL i) { return double(x[prev][i] - x[me][i]); }, exact());
  }
  end_case(r, "x_prim_ring_block " + dims({M, N}), before);
}

// Hand-written two-shot all-reduce: y = sum over ranks of x on every rank.
void x_prim_two_shot(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(R * C, seed + q);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]), y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "x_prim_two_shot", 2, xd.view, y.view)) {
    std::vector<double> want(R * C, 0.0), mag(R * C, 0.0);
    for (int q = 0; q < W; ++q)
      for (LL i = 0; i < R * C; ++i) want[i] += x[q][i], mag[i] += std::fabs(x[q][i]);
    check(r, "x_prim_two_shot.y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "x_prim_two_shot " + dims({R, C}), before);
}

void single_gpu_cases(const Run& r) {
  unsigned s = 14000;
  // Each template GEMM at a shape its rules take (K, N multiples of 8) and at a twin shape (K % 8 != 0).
  for (const char* k : {"g_ab_f16_tails", "g_ab_f16_tails/general"}) {
    g_ab_f16_tails(r, k, 200, 72, 136, s += 100);
    g_ab_f16_tails(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"g_abt_f32_bias", "g_abt_f32_bias/general"}) {
    g_abt_f32_bias(r, k, 200, 72, 264, s += 100);
    g_abt_f32_bias(r, k, 37, 50, 100, s += 100);
  }
  for (const char* k : {"g_abt_row_col_scale", "g_abt_row_col_scale/general"}) {
    g_abt_row_col_scale(r, k, 200, 136, 264, s += 100);
    g_abt_row_col_scale(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"g_f16_in_bf16_out_silu", "g_f16_in_bf16_out_silu/general"}) {
    g_f16_in_bf16_out_silu(r, k, 150, 72, 136, s += 100);
    g_f16_in_bf16_out_silu(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"g_residual_alpha", "g_residual_alpha/general"}) {
    g_residual_alpha(r, k, 200, 72, 136, s += 100);
    g_residual_alpha(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"g_bias_layer_gelu_erf", "g_bias_layer_gelu_erf/general"}) {
    g_bias_layer_gelu_erf(r, k, 150, 72, 264, s += 100);
    g_bias_layer_gelu_erf(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"g_vocab_mask_f32", "g_vocab_mask_f32/general"}) {
    g_vocab_mask_f32(r, k, 150, 72, 264, 250, s += 100);
    g_vocab_mask_f32(r, k, 70, 50, 100, 77, s += 100);
  }
  for (const char* k : {"g_col2_scale", "g_col2_scale/general"}) {
    g_col2_scale(r, k, 200, 72, 264, s += 100);
    g_col2_scale(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"bg_abt_f32_bias_rows", "bg_abt_f32_bias_rows/general"}) {
    bg_abt_f32_bias_rows(r, k, 3, 200, 72, 136, s += 100);
    bg_abt_f32_bias_rows(r, k, 3, 70, 40, 50, s += 100);
  }
  for (const char* k : {"bg_ab_f16_residual_silu", "bg_ab_f16_residual_silu/general"}) {
    bg_ab_f16_residual_silu(r, k, 3, 150, 72, 264, s += 100);
    bg_ab_f16_residual_silu(r, k, 2, 70, 50, 100, s += 100);
  }
  for (const char* k : {"bg_causal_scores", "bg_causal_scores/general"}) {
    bg_causal_scores(r, k, 3, 200, 72, 264, s += 100);
    bg_causal_scores(r, k, 2, 70, 50, 100, s += 100);
  }
  for (const char* k : {"bg_shared_residual", "bg_shared_residual/general"}) {
    bg_shared_residual(r, k, 3, 150, 72, 264, s += 100);
    bg_shared_residual(r, k, 2, 70, 50, 100, s += 100);
  }
  for (const char* k : {"bg_bias_per_batch", "bg_bias_per_batch/general"}) {
    bg_bias_per_batch(r, k, 3, 150, 136, 264, s += 100);
    bg_bias_per_batch(r, k, 2, 70, 50, 100, s += 100);
  }
  // fp8: the template's rule is K % 16 == 0 (16-byte rows); K = 40 takes the twin.
  for (const char* k : {"i_fp8_gemm_scaled", "i_fp8_gemm_scaled/general"}) {
    i_fp8_gemm_scaled(r, k, 200, 128, 264, s += 100);
    i_fp8_gemm_scaled(r, k, 70, 40, 100, s += 100);
  }
  for (const char* k : {"i_fp8_gemm_rowcol", "i_fp8_gemm_rowcol/general"}) {
    i_fp8_gemm_rowcol(r, k, 200, 160, 136, s += 100);
    i_fp8_gemm_rowcol(r, k, 70, 40, 100, s += 100);
  }
  for (const char* k : {"a_bf16_d128_causal_lse1d", "a_bf16_d128_causal_lse1d/general"})
    a_bf16_d128_causal_lse1d(r, k, 201, s += 100);
  for (const char* k : {"a_f16_d64_heads_lse", "a_f16_d64_heads_lse/general"}) a_f16_d64_heads_lse(r, k, 3, 150, s += 100);
  for (const char* k : {"a_mqa_bf16_d64_causal", "a_mqa_bf16_d64_causal/general"}) {
    a_mqa_bf16_d64_causal(r, k, 3, 1, 150, s += 100);  // MQA
    a_mqa_bf16_d64_causal(r, k, 4, 2, 77, s += 100);   // groups of two
  }
  for (const char* k : {"a_bias2d_bf16_d128", "a_bias2d_bf16_d128/general"}) a_bias2d_bf16_d128(r, k, 201, 201, s += 100);
  for (const char* k : {"a_softcap_causal_bf16_d64", "a_softcap_causal_bf16_d64/general"})
    a_softcap_causal_bf16_d64(r, k, 3, 150, s += 100);
  for (const char* k : {"a_segments_bf16_d128", "a_segments_bf16_d128/general"}) a_segments_bf16_d128(r, k, 201, s += 100);
  m_two_loops_rowsum(r, 37, 1000, s += 100);
  r_online_softmax_long(r, 13, 3000, s += 100);
  r_rotary_half(r, 37, s += 100);
  r_swiglu_fused(r, 37, 300, s += 100);
  r_dequant_128x128(r, 300, 200, s += 100);
  r_band_softmax(r, 37, 1000, s += 100);
  r_xent_smooth(r, 37, 1000, s += 100);
  r_leaky_clamp(r, 5000, s += 100);
  i_gather_i64(r, 37, 50, 300, s += 100);
  i_segment_sum(r, 77, 13, 300, s += 100);
  i_hist_then_offsets(r, 600, s += 100);
  i_keep_mask(r, 300, 6, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 19000;
  for (const char* k : {"f_gemm_ar_64", "f_gemm_ar_64/general"}) {
    f_gemm_ar_64(r, k, 100, 72, 264, s += 100);
    f_gemm_ar_64(r, k, 70, 50, 100, s += 100);  // K = 50: the twin
  }
  // 128 rows an owner: each 128-row tile inside one owner (the template's rule); K = 50 the twin.
  for (const char* k : {"f_gemm_rs_over_rows", "f_gemm_rs_over_rows/general"}) {
    f_gemm_rs_over_rows(r, k, 128, 72, 264, s += 100);
    f_gemm_rs_over_rows(r, k, 128, 50, 100, s += 100);
  }
  for (const char* k : {"f_ag_gemm_bias", "f_ag_gemm_bias/general"}) {
    f_ag_gemm_bias(r, k, 50, 72, 136, s += 100);
    f_ag_gemm_bias(r, k, 37, 50, 100, s += 100);
  }
  a_ring_pull_causal(r, 77, s += 100);
  m_ar_inplace_rmsnorm(r, 13, s += 100);
  m_rs_scale_ag_inplace(r, 37, 300, s += 100);
  m_tp_layernorm(r, 37, s += 100);
  i_xent_vp_bf16(r, 37, 300, s += 100);
  x_shift_by_two(r, 37, 300, s += 100);
  x_store_rows_allgather(r, 37, 300, s += 100);
  x_prim_ring_block(r, 37, 300, s += 100);
  x_prim_two_shot(r, 37, 300, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs14_jit_test");
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs14_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

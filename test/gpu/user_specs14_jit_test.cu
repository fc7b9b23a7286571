// The fourteenth user-written spec set (test/specs/user_specs14.pk.cpp) through the JIT, each kernel
// against a float64 host reference on fresh random inputs, with every output poisoned (NaN, or
// all-ones integers) first. The single-GPU kernels run at W = 1 (the template kernels also with
// templates = false, "name/general"); the multi-rank kernels at W = 1, 2 and 3 (ranks sharing one
// GPU; PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others). Shapes leave partial tiles everywhere
// (37-row blocks, 300- and 1000-column rows, K % 8 != 0 for the GEMM twins, odd sequence lengths).
// One PASS or FAIL line per case.
//
// Covered: all 73 kernels. 27 take a template (GEMM, batched GEMM, fp8 GEMM, attention, the fused
// GEMM + collective forms and Ulysses) and also run as "name/general"; 34 communicate (rank(), .on(p),
// collectives, prim:: protocols, Sym tensors) and run at W = 1, 2, 3; the other 39 at W = 1.
//
// Assumptions a reader should know (each would be a finding if the GPU disagrees):
// - store_rows drops the padding rows of a partial tile (rows past the loop's extent), whose index
//   would otherwise be the padding value 0: i_scatter_perm, x_store_rows_allgather and
//   i_moe_dispatch_cap at 37 rows rely on it (the author calls x_store_rows_allgather "exact at any
//   R"). Likewise claim() claims nothing for padding elements (i_moe_dispatch_cap).
// - m_rs_scale_ag_inplace at 37 rows a rank (not a multiple of 16 W): the findings say the partial
//   tile's spill into the next chunk is overwritten by the in-place all-gather.
// - i_moe_dispatch_cap hands out places in no fixed order: its check accepts any order.
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
    {"i_keep_mask", false},             {"r_add_rmsnorm", false},
    {"r_rotary_heads_computed", false}, {"r_quant_e5m2_blocks_t", false},
    {"r_range_newton_rsqrt", false},    {"i_scatter_perm", false},
    {"i_lengths_to_offsets", false},    {"f_gemm_rs_128x128", true},  // retiled fused template (set 36)
    {"f_gemm_rs_ab_f32", false},        {"f_ag_gemm_f16_ab", true},
    {"f_gemm_ar_then_bias", true},      {"a_ulysses_f16_d64", true},
    {"m_ar_gelu_ag_cols", false},       {"m_grid_barriers_transpose", false},
    {"m_bcast_inplace_cast", false},    {"m_amax_ar_quant", false},
    {"m_host_loop_average", false},     {"m_a2a_cols_inplace_bias", false},
    {"i_embed_vp_f16", false},          {"i_moe_combine_f32", false},
    {"i_a2av_f32", false},              {"x_ring_shift_heads", false},
    {"x_add_to_owner", false},          {"x_halo_exchange", false},
    {"x_pull_prev_add", false},         {"x_prim_ag_planes_sum", false},
    {"x_prim_per_tile_flags", false},   {"x_prim_double_buffer", false},
    {"i_moe_dispatch_cap", false},
};
// The template kernels also run with templates = false ("name/general").
const std::vector<const char*> kGeneralToo = {
    "g_ab_f16_tails",       "g_abt_f32_bias",         "g_abt_row_col_scale",      "g_f16_in_bf16_out_silu",
    "g_residual_alpha",     "g_bias_layer_gelu_erf",  "g_vocab_mask_f32",         "g_col2_scale",
    "bg_abt_f32_bias_rows", "bg_ab_f16_residual_silu", "bg_causal_scores",        "bg_shared_residual",
    "bg_bias_per_batch",    "i_fp8_gemm_scaled",      "i_fp8_gemm_rowcol",        "a_bf16_d128_causal_lse1d",
    "a_f16_d64_heads_lse",  "a_mqa_bf16_d64_causal",  "a_bias2d_bf16_d128",       "a_softcap_causal_bf16_d64",
    "a_segments_bf16_d128", "f_gemm_ar_64",           "f_gemm_rs_over_rows",      "f_ag_gemm_bias",
    "f_ag_gemm_f16_ab",     "f_gemm_ar_then_bias",    "a_ulysses_f16_d64"};

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

// ================================================================ more general-path kernels ==

// Fused add + RMSNorm over 4096 columns: r = bf16(x + r), y = bf16(t rsqrt(mean t^2 + eps) w) with t
// the f32 sum (not the rounded r). One launch (r is updated).
void r_add_rmsnorm(const Run& r, LL T, unsigned seed) {
  const LL H = 4096;
  const float eps = 1e-5f;
  const auto x = rnd<bf16>(T * H, seed, -2.f, 2.f), res = rnd<bf16>(T * H, seed + 1, -2.f, 2.f),
             w = rnd<bf16>(H, seed + 2, 0.5f, 1.5f);
  DevLocal<bf16> xd({T, H}, x), rd({T, H}, res), wd({H}, w), y({T, H}, {});
  const int before = begin_case(r);
  if (run(r, "r_add_rmsnorm", 1, xd.view(), rd.view(), wd.view(), y.view(), eps)) {
    std::vector<double> t(T * H), want(T * H);
    for (LL m = 0; m < T; ++m) {
      double ss = 0;
      for (LL j = 0; j < H; ++j) t[m * H + j] = val(x[m * H + j]) + val(res[m * H + j]), ss += t[m * H + j] * t[m * H + j];
      const double rs = 1 / std::sqrt(ss / H + eps);
      for (LL j = 0; j < H; ++j) want[m * H + j] = t[m * H + j] * rs * val(w[j]);
    }
    check(r, "r_add_rmsnorm.r", rd.download(), [&](LL i) { return t[i]; }, [&](LL i) { return kBf / 2 * std::fabs(t[i]); });
    check(r, "r_add_rmsnorm.y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return kBf * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "r_add_rmsnorm T=" + std::to_string(T), before);
}

// Rotary on [H, S, 64] f16 with angles (s + pos0) inv_freq[j] computed in the kernel (f32).
void r_rotary_heads_computed(const Run& r, LL H, LL S, LL pos0, unsigned seed) {
  const auto x = rnd<f16>(H * S * 64, seed, -2.f, 2.f);
  std::vector<float> inv(32);
  for (LL j = 0; j < 32; ++j) inv[j] = float(std::pow(10000.0, -double(j) / 32));
  DevLocal<f16> xd({H, S, 64}, x), y({H, S, 64}, {});
  DevLocal<float> id({32}, inv);
  const int before = begin_case(r);
  if (run(r, "r_rotary_heads_computed", 2, xd.view(), id.view(), y.view(), pos0)) {
    auto want = [&](LL i) {
      const LL d = i % 64, s = (i / 64) % S, b = i - d, j = d % 32;
      const double ang = double(float(s + pos0) * inv[j]);  // the f32 angle the kernel forms
      const double c = std::cos(ang), n = std::sin(ang), x1 = val(x[b + j]), x2 = val(x[b + 32 + j]);
      return d < 32 ? x1 * c - x2 * n : x2 * c + x1 * n;
    };
    // Angles up to about S + pos0 radians: the device's sin / cos may lose about 1e-6 of that.
    check(r, "r_rotary_heads_computed.y", y.download(), want,
          [&](LL i) { return kHf * std::fabs(want(i)) + 1e-4 * (1 + double(S + pos0) / 100); });
  }
  end_case(r, "r_rotary_heads_computed " + dims({H, S, pos0}), before);
}

// Per (row, 128-column block) e5m2 with the amax scale, scales stored transposed [C/128, T].
void r_quant_e5m2_blocks_t(const Run& r, LL T, LL C, unsigned seed) {
  const LL NB = (C + 127) / 128;
  const auto x = rnd<bf16>(T * C, seed, -3.f, 3.f);
  DevLocal<bf16> xd({T, C}, x);
  DevLocal<pk::f8e5m2> q({T, C}, {});
  DevLocal<float> st({NB, T}, {});
  const int before = begin_case(r);
  if (run(r, "r_quant_e5m2_blocks_t", 2, xd.view(), q.view(), st.view())) {
    std::vector<double> amax(T * NB, 0.0);
    for (LL i = 0; i < T * C; ++i) {
      double& a = amax[(i / C) * NB + (i % C) / 128];
      a = std::max(a, std::fabs(val(x[i])));
    }
    for (auto& a : amax) a = std::max(a, 1e-20);
    check(r, "r_quant_e5m2_blocks_t.st", st.download(), [&](LL i) { return amax[(i % T) * NB + i / T] / 57344; },
          [&](LL i) { return 1e-6 * amax[(i % T) * NB + i / T] / 57344; });
    // Against the unrounded value: e5m2 rounds within half a step, 1/8 of the value (2^-17 below
    // the normal range).
    auto v = [&](LL i) { return val(x[i]) * 57344 / amax[(i / C) * NB + (i % C) / 128]; };
    check(r, "r_quant_e5m2_blocks_t.q", q.download(), v, [&](LL i) { return 0.126 * std::fabs(v(i)) + 1e-5; });
  }
  end_case(r, "r_quant_e5m2_blocks_t " + dims({T, C}), before);
}

// Newton iterations for rsqrt(a) from x0 = 1 / (1 + a), a run-time trip count.
void r_range_newton_rsqrt(const Run& r, LL M, LL N, LL iters, unsigned seed) {
  const auto a = rnd<float>(M * N, seed, 0.25f, 3.f);
  DevLocal<float> ad({M, N}, a), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "r_range_newton_rsqrt", 2, ad.view(), y.view(), iters)) {
    auto want = [&](LL i) {
      const double t = a[i];
      double x = 1 / (t + 1);
      for (LL it = 0; it < iters; ++it) x = x * (1.5 - 0.5 * t * x * x);
      return x;
    };
    check(r, "r_range_newton_rsqrt.y", y.download(), want, [&](LL i) { return 1e-5 * std::fabs(want(i)); });
  }
  end_case(r, "r_range_newton_rsqrt " + dims({M, N, iters}), before);
}

// out[perm[t]] = x[t] (perm a permutation of the rows).
void i_scatter_perm(const Run& r, LL T, LL C, unsigned seed) {
  const auto x = rnd<float>(T * C, seed);
  std::vector<int> perm(T);
  for (LL t = 0; t < T; ++t) perm[t] = int(t);
  std::mt19937 g(seed + 1);
  std::shuffle(perm.begin(), perm.end(), g);
  std::vector<LL> inv(T);
  for (LL t = 0; t < T; ++t) inv[perm[t]] = t;
  DevLocal<float> xd({T, C}, x), out({T, C}, {});
  DevLocal<int> pd({T}, perm);
  const int before = begin_case(r);
  if (run(r, "i_scatter_perm", 2, xd.view(), pd.view(), out.view()))
    check(r, "i_scatter_perm.out", out.download(), [&](LL i) { return double(x[inv[i / C] * C + i % C]); }, exact());
  end_case(r, "i_scatter_perm " + dims({T, C}), before);
}

// offs[0] = 0, offs[1 + i] = len[0] + ... + len[i] (i64).
void i_lengths_to_offsets(const Run& r, LL n, unsigned seed) {
  const auto len = ints<long long>(n, 0, 3000000000LL, seed);  // sums past 2^32: i64 all the way
  DevLocal<long long> ld({n}, len), offs({n + 1}, {});
  const int before = begin_case(r);
  if (run(r, "i_lengths_to_offsets", 2, ld.view(), offs.view())) {
    const auto got = offs.download();
    LL s = 0, bad = 0;
    for (LL i = 0; i <= n; ++i) {
      if (got[i] != s && bad++ < 3)
        pkt::fail("i_lengths_to_offsets.offs element " + std::to_string(i) + ": got " + std::to_string(got[i]) +
                  ", want " + std::to_string(s));
      if (i < n) s += len[i];
    }
  }
  end_case(r, "i_lengths_to_offsets n=" + std::to_string(n), before);
}

// ================================================================ more multi-rank kernels ==

// GEMM + reduce-scatter, 128 x 128 tiles (general path): rank o's c [rows, N] = sum over ranks q of
// bf16(a_q[o rows + m] b_q^T) (b [N, K]), or with B [K, N] and f32 adds (f_gemm_rs_ab_f32).
template <class TC>
void f_gemm_rs_general(const Run& r, const char* k, bool kn, LL rows, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL M = W * rows;
  std::vector<std::vector<bf16>> a(W), b(W);
  for (int q = 0; q < W; ++q) a[q] = rnd<bf16>(M * Kd, seed + q, -0.5f, 0.5f), b[q] = rnd<bf16>(N * Kd, seed + 20 + q, -0.5f, 0.5f);
  DevLocal<bf16> ad({M, Kd}, a[me]), bd(kn ? std::vector<LL>{Kd, N} : std::vector<LL>{N, Kd}, b[me]);
  SymArg<TC> c(r.ctx, {rows, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, k, 1, ad.view(), bd.view(), c.view)) {
    std::vector<double> want(rows * N, 0.0), mag(rows * N, 0.0), s, g;
    for (int q = 0; q < W; ++q) {
      host_gemm(rows, N, Kd, [&](LL m, LL j) { return val(a[q][(me * rows + m) * Kd + j]); },
                [&](LL n, LL j) { return kn ? val(b[q][j * N + n]) : val(b[q][n * Kd + j]); }, s, g);
      for (LL i = 0; i < rows * N; ++i) want[i] += s[i], mag[i] += kn ? g[i] : std::fabs(s[i]);
    }
    if (kn)  // f32 partial sums added in f32
      check(r, std::string(k) + ".c", c.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-5 * mag[i] + 1e-6; });
    else  // bf16 tiles added in bf16
      check(r, std::string(k) + ".c", c.download(), [&](LL i) { return want[i]; },
            [&](LL i) { return 1e-3 + (W + 2.0) / 256 * mag[i]; });
  }
  end_case(r, std::string(k) + " " + dims({rows, Kd, N}), before);
}

// All-gather of f16 row shards, then c = f16(a_full b), B [K, N].
void f_ag_gemm_f16_ab(const Run& r, const std::string& k, LL R, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<f16>> a(W);
  for (int q = 0; q < W; ++q) a[q] = rnd<f16>(R * Kd, seed + q, -0.5f, 0.5f);
  const auto b = rnd<f16>(Kd * N, seed + 40 + me, -0.5f, 0.5f);
  SymArg<f16> ad(r.ctx, {R, Kd}, &a[me]), af(r.ctx, {W * R, Kd}, nullptr);
  DevLocal<f16> bd({Kd, N}, b), c({W * R, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view, af.view, bd.view(), c.view())) {
    std::vector<double> s, mag;
    host_gemm(W * R, N, Kd, [&](LL m, LL j) { return val(a[m / R][(m % R) * Kd + j]); },
              [&](LL n, LL j) { return val(b[j * N + n]); }, s, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return s[i]; }, [&](LL i) { return kHf * std::fabs(s[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({R, Kd, N}), before);
}

// GEMM + all-reduce, then the bias once: c = bf16(sum over ranks of bf16(a_q b_q^T) + bias[n]).
void f_gemm_ar_then_bias(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> a(W), b(W);
  for (int q = 0; q < W; ++q) a[q] = rnd<bf16>(M * Kd, seed + q, -0.5f, 0.5f), b[q] = rnd<bf16>(N * Kd, seed + 20 + q, -0.5f, 0.5f);
  const auto bias = rnd<bf16>(N, seed + 40, -2.f, 2.f);  // one bias on every rank
  DevLocal<bf16> ad({M, Kd}, a[me]), bd({N, Kd}, b[me]), biasd({N}, bias);
  SymArg<bf16> p(r.ctx, {M, N}, nullptr), c(r.ctx, {M, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, k, 1, ad.view(), bd.view(), biasd.view(), p.view, c.view)) {
    std::vector<double> want(M * N, 0.0), mag(M * N, 0.0), s, g;
    for (int q = 0; q < W; ++q) {
      host_gemm(M, N, Kd, [&](LL m, LL j) { return val(a[q][m * Kd + j]); }, [&](LL n, LL j) { return val(b[q][n * Kd + j]); }, s, g);
      for (LL i = 0; i < M * N; ++i) want[i] += s[i], mag[i] += std::fabs(s[i]);
    }
    for (LL i = 0; i < M * N; ++i) want[i] += val(bias[i % N]), mag[i] += std::fabs(val(bias[i % N]));
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-3 + (W + 3.0) / 256 * mag[i]; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// Ulysses: q, k, v, o [H, Sl, 64] f16 sequence shards; rank me's o holds, for every head, the
// non-causal attention of its own queries over all W Sl keys.
void a_ulysses_f16_d64(const Run& r, const std::string& kname, LL H, LL Sl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL D = 64, S = W * Sl, Hl = H / W;
  const float scale = 0.125f;
  std::vector<std::vector<f16>> q(W), k(W), v(W);
  for (int p = 0; p < W; ++p)
    q[p] = rnd<f16>(H * Sl * D, seed + p), k[p] = rnd<f16>(H * Sl * D, seed + 10 + p), v[p] = rnd<f16>(H * Sl * D, seed + 20 + p);
  SymArg<f16> qd(r.ctx, {H, Sl, D}, &q[me]), kd(r.ctx, {H, Sl, D}, &k[me]), vd(r.ctx, {H, Sl, D}, &v[me]),
      od(r.ctx, {H, Sl, D}, nullptr), qh(r.ctx, {Hl, S, D}, nullptr), kh(r.ctx, {Hl, S, D}, nullptr),
      vh(r.ctx, {Hl, S, D}, nullptr), oh(r.ctx, {Hl, S, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, kname, 2, qd.view, kd.view, vd.view, od.view, qh.view, kh.view, vh.view, oh.view, scale)) {
    std::vector<double> wo(H * Sl * D), o1, l1;
    for (LL h = 0; h < H; ++h) {
      attend(Sl, S, D,
             [&](LL i, LL j) { return dot(q[me], (h * Sl + i) * D, k[j / Sl], (h * Sl + j % Sl) * D, D) * scale; },
             [&](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[j / Sl][(h * Sl + j % Sl) * D + d]); }, o1, l1);
      std::copy(o1.begin(), o1.end(), wo.begin() + h * Sl * D);
    }
    check(r, kname + ".o", od.download(), [&](LL i) { return wo[i]; }, [&](LL i) { return 4 * kHf * std::fabs(wo[i]) + 2e-3; });
  }
  end_case(r, kname + " " + dims({H, Sl}), before);
}

// s = sum x (f32 [T, W Cl]), g = gelu(s) on this rank's column block, y = the all-gathered columns.
inline double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
void m_ar_gelu_ag_cols(const Run& r, LL T, LL Cl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL C = W * Cl;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(T * C, seed + q, -1.5f, 1.5f);
  SymArg<float> xd(r.ctx, {T, C}, &x[me]), s(r.ctx, {T, C}, nullptr), g(r.ctx, {T, Cl}, nullptr);
  DevLocal<float> y({T, C}, {});
  const int before = begin_case(r);
  if (run(r, "m_ar_gelu_ag_cols", 2, xd.view, s.view, g.view, y.view())) {
    std::vector<double> sum(T * C, 0.0), mag(T * C, 0.0);
    for (int q = 0; q < W; ++q)
      for (LL i = 0; i < T * C; ++i) sum[i] += x[q][i], mag[i] += std::fabs(x[q][i]);
    check(r, "m_ar_gelu_ag_cols.s", s.download(), [&](LL i) { return sum[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
    check(r, "m_ar_gelu_ag_cols.y", y.download(), [&](LL i) { return gelu_tanh(sum[i]); },
          [&](LL i) { return 1e-5 * std::fabs(gelu_tanh(sum[i])) + 2e-6 * mag[i] + 1e-6; });
  }
  end_case(r, "m_ar_gelu_ag_cols " + dims({T, Cl}), before);
}

// t = x^T (Sym, this rank's), y = 2 t, with grid barriers between the loops.
void m_grid_barriers_transpose(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed + r.me);
  DevLocal<float> xd({M, N}, x), y({N, M}, {});
  SymArg<float> t(r.ctx, {N, M}, nullptr);
  const int before = begin_case(r);
  if (run(r, "m_grid_barriers_transpose", 2, xd.view(), t.view, y.view())) {
    check(r, "m_grid_barriers_transpose.t", t.download(), [&](LL i) { return double(x[(i % M) * N + i / M]); }, exact());
    check(r, "m_grid_barriers_transpose.y", y.download(), [&](LL i) { return 2.0 * x[(i % M) * N + i / M]; }, exact());
  }
  end_case(r, "m_grid_barriers_transpose " + dims({M, N}), before);
}

// p = root's p (in place), q = bf16(p).
void m_bcast_inplace_cast(const Run& r, LL n, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL root = W - 1;
  std::vector<std::vector<float>> p(W);
  for (int q = 0; q < W; ++q) p[q] = rnd<float>(n, seed + q, -3.f, 3.f);
  SymArg<float> pd(r.ctx, {n}, &p[me]);
  DevLocal<bf16> qd({n}, {});
  const int before = begin_case(r);
  if (run(r, "m_bcast_inplace_cast", 1, pd.view, qd.view(), root)) {
    check(r, "m_bcast_inplace_cast.p", pd.download(), [&](LL i) { return double(p[root][i]); }, exact());
    check(r, "m_bcast_inplace_cast.q", qd.download(), [&](LL i) { return bf16r(p[root][i]); }, exact());
  }
  end_case(r, "m_bcast_inplace_cast n=" + std::to_string(n), before);
}

// Row amax, max all-reduce, e4m3 of x 448 / gmax and the scale gmax / 448.
void m_amax_ar_quant(const Run& r, LL T, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<bf16>(T * C, seed + q, -1.f - q, 1.f + q);  // the ranks' maxima differ
  DevLocal<bf16> xd({T, C}, x[me]);
  SymArg<float> amax(r.ctx, {T, 1}, nullptr), gmax(r.ctx, {T, 1}, nullptr);
  DevLocal<f8e4m3> qd({T, C}, {});
  DevLocal<float> sd({T, 1}, {});
  const int before = begin_case(r);
  if (run(r, "m_amax_ar_quant", 2, xd.view(), amax.view, gmax.view, qd.view(), sd.view())) {
    std::vector<double> g(T, 0.0);
    for (int q = 0; q < W; ++q)
      for (LL i = 0; i < T * C; ++i) g[i / C] = std::max(g[i / C], std::fabs(val(x[q][i])));
    check(r, "m_amax_ar_quant.s", sd.download(), [&](LL i) { return std::max(g[i], 1e-12) / 448; },
          [&](LL i) { return 1e-6 * g[i] / 448; });
    // Against the unrounded value: e4m3 rounds within half a step, 1/16 of the value (2^-10 below
    // the normal range).
    auto v = [&](LL i) { return val(x[me][i]) * 448 / std::max(g[i / C], 1e-12); };
    check(r, "m_amax_ar_quant.q", qd.download(), v, [&](LL i) { return 0.07 * std::fabs(v(i)) + 1e-3; });
  }
  end_case(r, "m_amax_ar_quant " + dims({T, C}), before);
}

// `steps` rounds of x = 0.5 (x + mean over ranks of x). One launch.
void m_host_loop_average(const Run& r, LL n, LL steps, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(n, seed + q, -2.f, 2.f);
  SymArg<float> xd(r.ctx, {n}, &x[me]), s(r.ctx, {n}, nullptr);
  const int before = begin_case(r);
  if (run(r, "m_host_loop_average", 1, xd.view, s.view, steps)) {
    auto want = [&](LL i) {
      std::vector<double> v(W);
      for (int q = 0; q < W; ++q) v[q] = x[q][i];
      for (LL it = 0; it < steps; ++it) {
        double mean = 0;
        for (int q = 0; q < W; ++q) mean += v[q] / W;
        for (int q = 0; q < W; ++q) v[q] = 0.5 * (v[q] + mean);
      }
      return v[me];
    };
    check(r, "m_host_loop_average.x", xd.download(), want, abs_tol(1e-5));
  }
  end_case(r, "m_host_loop_average " + dims({n, steps}), before);
}

// In-place all-to-all of column blocks (block p of rank q lands on rank p as block q), plus a bias row.
void m_a2a_cols_inplace_bias(const Run& r, LL R, LL Cb, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL C = W * Cb;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(R * C, seed + q);
  const auto bias = rnd<float>(C, seed + 30 + me);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]);
  DevLocal<float> bd({C}, bias), y({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "m_a2a_cols_inplace_bias", 1, xd.view, bd.view(), y.view())) {
    auto moved = [&](LL i) { const LL m = i / C, c = i % C, q = c / Cb; return double(x[q][m * C + me * Cb + c % Cb]); };
    check(r, "m_a2a_cols_inplace_bias.x", xd.download(), moved, exact());
    check(r, "m_a2a_cols_inplace_bias.y", y.download(), [&](LL i) { return double(float(moved(i)) + bias[i % C]); }, exact());
  }
  end_case(r, "m_a2a_cols_inplace_bias " + dims({R, Cb}), before);
}

// Vocabulary-parallel embedding: rank q holds rows [q Vl, q Vl + Vl) of the f16 table; out = the row.
void i_embed_vp_f16(const Run& r, LL T, LL Vl, LL D, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<f16>> tb(W);
  for (int q = 0; q < W; ++q) tb[q] = rnd<f16>(Vl * D, seed + q);
  const auto ids = ints<long long>(T, 0, W * Vl - 1, seed + 30);
  DevLocal<long long> idd({T}, ids);
  DevLocal<f16> td({Vl, D}, tb[me]);
  SymArg<f16> part(r.ctx, {T, D}, nullptr), out(r.ctx, {T, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "i_embed_vp_f16", 2, idd.view(), td.view(), part.view, out.view))
    check(r, "i_embed_vp_f16.out", out.download(),
          [&](LL i) { const LL id = ids[i / D]; return val(tb[id / Vl][(id % Vl) * D + i % D]); }, exact());
  end_case(r, "i_embed_vp_f16 " + dims({T, Vl, D}), before);
}

// MoE combine: out[t] = sum over k of w[t, k] y_{ids[t, k] / experts}[slot[t, k]] (slot -1: nothing).
void i_moe_combine_f32(const Run& r, LL T, LL Kk, LL Ry, LL C, LL experts, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> y(W);
  for (int q = 0; q < W; ++q) y[q] = rnd<bf16>(Ry * C, seed + q);
  const auto ids = ints<int>(T * Kk, 0, W * experts - 1, seed + 30 + me);
  const auto slot = ints<int>(T * Kk, -1, Ry - 1, seed + 40 + me);
  const auto w = rnd<bf16>(T * Kk, seed + 50 + me, 0.f, 1.f);
  SymArg<bf16> yd(r.ctx, {Ry, C}, &y[me]);
  DevLocal<int> idd({T, Kk}, ids), sd({T, Kk}, slot);
  DevLocal<bf16> wd({T, Kk}, w);
  DevLocal<float> out({T, C}, {});
  const int before = begin_case(r);
  if (run(r, "i_moe_combine_f32", 2, yd.view, idd.view(), wd.view(), sd.view(), out.view(), experts)) {
    std::vector<double> want(T * C, 0.0), mag(T * C, 0.0);
    for (LL t = 0; t < T; ++t)
      for (LL j = 0; j < Kk; ++j) {
        const LL e = t * Kk + j;
        if (slot[e] < 0) continue;
        for (LL c = 0; c < C; ++c) {
          const double p = val(y[ids[e] / experts][slot[e] * C + c]) * val(w[e]);
          want[t * C + c] += p, mag[t * C + c] += std::fabs(p);
        }
      }
    check(r, "i_moe_combine_f32.out", out.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "i_moe_combine_f32 " + dims({T, Kk, Ry, C, experts}), before);
}

// all_to_all_v: rank q sends rows [off_q(p), off_q(p) + send_q[p]) of x_q to rank p, placed after the
// rows of lower ranks; recv_p[q] = send_q[p]. Rows of y past the received ones stay poisoned.
void i_a2av_f32(const Run& r, LL T, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W);
  std::vector<std::vector<int>> send(W);
  for (int q = 0; q < W; ++q) {
    x[q] = rnd<float>(T * C, seed + q);
    auto cut = ints<int>(W - 1, 0, T, seed + 20 + q);
    std::sort(cut.begin(), cut.end());
    cut.insert(cut.begin(), 0), cut.push_back(int(T));
    for (int p = 0; p < W; ++p) send[q].push_back(cut[p + 1] - cut[p]);  // sums to T
  }
  const LL Ry = W * T;
  DevLocal<float> xd({T, C}, x[me]);
  DevLocal<int> sd({W}, send[me]);
  SymArg<float> y(r.ctx, {Ry, C}, nullptr);
  SymArg<int> recv(r.ctx, {W}, nullptr);
  const int before = begin_case(r);
  if (run(r, "i_a2av_f32", 2, xd.view(), sd.view(), y.view, recv.view)) {
    check(r, "i_a2av_f32.recv", recv.download(), [&](LL q) { return double(send[q][me]); }, exact());
    std::vector<double> want(Ry * C, std::nan(""));
    LL row = 0;
    for (int q = 0; q < W; ++q) {
      LL off = 0;
      for (int p = 0; p < me; ++p) off += send[q][p];
      for (LL i = 0; i < send[q][me]; ++i, ++row)
        for (LL c = 0; c < C; ++c) want[row * C + c] = x[q][(off + i) * C + c];
    }
    const auto got = y.download();
    LL bad = 0;
    for (LL i = 0; i < Ry * C; ++i) {
      const bool ok = std::isnan(want[i]) ? std::isnan(got[i]) : double(got[i]) == want[i];
      if (!ok && bad++ < 3)
        pkt::fail("i_a2av_f32.y W=" + std::to_string(W) + " rank " + std::to_string(me) + " element " + std::to_string(i) +
                  ": got " + std::to_string(got[i]) + ", want " + std::to_string(want[i]));
    }
  }
  end_case(r, "i_a2av_f32 " + dims({T, C}), before);
}

// y on the next rank = x: rank me's y = x of the previous rank ([H, S, 128] bf16).
void x_ring_shift_heads(const Run& r, LL H, LL S, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  std::vector<std::vector<bf16>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<bf16>(H * S * 128, seed + q);
  DevLocal<bf16> xd({H, S, 128}, x[me]);
  SymArg<bf16> y(r.ctx, {H, S, 128}, nullptr);
  const int before = begin_case(r);
  if (run(r, "x_ring_shift_heads", 2, xd.view(), y.view))
    check(r, "x_ring_shift_heads.y", y.download(), [&](LL i) { return val(x[prev][i]); }, exact());
  end_case(r, "x_ring_shift_heads " + dims({H, S}), before);
}

// acc on rank o = sum over ranks q of g_q[o rows + m] (f32 adds into a zeroed acc).
void x_add_to_owner(const Run& r, LL rows, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> g(W);
  for (int q = 0; q < W; ++q) g[q] = rnd<float>(W * rows * C, seed + q);
  DevLocal<float> gd({W * rows, C}, g[me]);
  SymArg<float> acc(r.ctx, {rows, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "x_add_to_owner", 2, gd.view(), acc.view)) {
    std::vector<double> want(rows * C, 0.0), mag(rows * C, 0.0);
    for (int q = 0; q < W; ++q)
      for (LL i = 0; i < rows * C; ++i) want[i] += g[q][me * rows * C + i], mag[i] += std::fabs(g[q][me * rows * C + i]);
    check(r, "x_add_to_owner.acc", acc.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "x_add_to_owner " + dims({rows, C}), before);
}

// halo[0] = the previous rank's last 4 rows, halo[1] = the next rank's first 4 rows.
void x_halo_exchange(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W, next = (me + 1) % W;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(R * C, seed + q);
  DevLocal<float> xd({R, C}, x[me]);
  SymArg<float> halo(r.ctx, {2, 4, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "x_halo_exchange", 2, xd.view(), halo.view))
    check(r, "x_halo_exchange.halo", halo.download(), [&](LL i) {
      const LL plane = i / (4 * C), j = (i / C) % 4, c = i % C;
      return double(plane == 0 ? x[prev][(R - 4 + j) * C + c] : x[next][j * C + c]);
    }, exact());
  end_case(r, "x_halo_exchange " + dims({R, C}), before);
}

// y = x + the previous rank's x (f32).
void x_pull_prev_add(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(M * N, seed + q);
  SymArg<float> xd(r.ctx, {M, N}, &x[me]);
  DevLocal<float> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "x_pull_prev_add", 2, xd.view, y.view()))
    check(r, "x_pull_prev_add.y", y.download(), [&](LL i) { return double(x[me][i] + x[prev][i]); }, exact());
  end_case(r, "x_pull_prev_add " + dims({M, N}), before);
}

// planes[q] = x_q on every rank, out = the sum of the planes.
void x_prim_ag_planes_sum(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(M * N, seed + q);
  SymArg<float> xd(r.ctx, {M, N}, &x[me]), planes(r.ctx, {W, M, N}, nullptr);
  DevLocal<float> out({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "x_prim_ag_planes_sum", 2, xd.view, planes.view, out.view())) {
    check(r, "x_prim_ag_planes_sum.planes", planes.download(), [&](LL i) { return double(x[i / (M * N)][i % (M * N)]); }, exact());
    check(r, "x_prim_ag_planes_sum.out", out.download(), [&](LL i) {
      double s = 0;
      for (int q = 0; q < W; ++q) s += x[q][i];
      return s;
    }, [&](LL i) {
      double g = 0;
      for (int q = 0; q < W; ++q) g += std::fabs(x[q][i]);
      return 1e-6 * g + 1e-7;
    });
  }
  end_case(r, "x_prim_ag_planes_sum " + dims({M, N}), before);
}

// Per-tile flags: y on the next rank = 2 x, out = y: rank me's out = 2 x of the previous rank.
void x_prim_per_tile_flags(const Run& r, LL n, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(n, seed + q);
  SymArg<float> xd(r.ctx, {n}, &x[me]), y(r.ctx, {n}, nullptr);
  DevLocal<float> out({n}, {});
  const int before = begin_case(r);
  if (run(r, "x_prim_per_tile_flags", 2, xd.view, y.view, out.view())) {
    check(r, "x_prim_per_tile_flags.y", y.download(), [&](LL i) { return 2.0 * x[prev][i]; }, exact());
    check(r, "x_prim_per_tile_flags.out", out.download(), [&](LL i) { return 2.0 * x[prev][i]; }, exact());
  }
  end_case(r, "x_prim_per_tile_flags n=" + std::to_string(n), before);
}

// Double buffer over 4 steps: out += (s + 1) x_prev for s = 0..3, from a given out. One launch.
void x_prim_double_buffer(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  std::vector<std::vector<float>> x(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<float>(M * N, seed + q);
  const auto init = rnd<float>(M * N, seed + 30 + me);
  SymArg<float> xd(r.ctx, {M, N}, &x[me]), buf(r.ctx, {2, M, N}, nullptr);
  DevLocal<float> out({M, N}, init);
  const int before = begin_case(r);
  if (run(r, "x_prim_double_buffer", 1, xd.view, buf.view, out.view())) {
    check(r, "x_prim_double_buffer.out", out.download(), [&](LL i) { return init[i] + 10.0 * x[prev][i]; },
          [&](LL i) { return 1e-6 * (std::fabs(init[i]) + 10 * std::fabs(x[prev][i])) + 1e-7; });
  }
  end_case(r, "x_prim_double_buffer " + dims({M, N}), before);
}

// MoE dispatch with a capacity: claims hand out places in no fixed order, so the check is order-free.
// slot[t, k] is (e W + me) cap + place for the first min(count_e, cap) claims of expert e (places
// 0 .. min - 1, each once) and -1 for the rest; rank p's recv block (e - p experts, q) holds, at its
// first min(count, cap) rows, rows of x_q of distinct entries (t, k) of rank q with ids e (all of
// them when count <= cap), and the rows after it stay poisoned.
void i_moe_dispatch_cap(const Run& r, LL T, LL Kk, LL C, LL cap, LL experts, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL E = W * experts, RR = experts * W * cap;
  std::vector<std::vector<bf16>> x(W);
  std::vector<std::vector<int>> ids(W);
  for (int q = 0; q < W; ++q) x[q] = rnd<bf16>(T * C, seed + q), ids[q] = ints<int>(T * Kk, 0, E - 1, seed + 20 + q);
  DevLocal<bf16> xd({T, C}, x[me]);
  DevLocal<int> idd({T, Kk}, ids[me]), slot({T, Kk}, {});
  SymArg<int> fill(r.ctx, {E}, nullptr);
  SymArg<bf16> recv(r.ctx, {RR, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "i_moe_dispatch_cap", 1, xd.view(), idd.view(), fill.view, slot.view(), recv.view, cap, experts)) {
    const auto sl = slot.download();
    std::vector<LL> cnt(E, 0), dropped(E, 0);
    std::vector<std::set<LL>> places(E);
    LL bad = 0;
    for (LL i = 0; i < T * Kk; ++i) {
      const LL e = ids[me][i];
      ++cnt[e];
      if (sl[i] == -1) { ++dropped[e]; continue; }
      if (sl[i] / cap != e * W + me || !places[e].insert(sl[i] % cap).second) ++bad;
    }
    for (LL e = 0; e < E; ++e) {
      const LL kept = std::min(cnt[e], cap);
      if (LL(places[e].size()) != kept || dropped[e] != cnt[e] - kept || (kept && *places[e].rbegin() != kept - 1)) ++bad;
    }
    PKT_CHECK(bad == 0, "i_moe_dispatch_cap.slot W=" + std::to_string(W) + " rank " + std::to_string(me) + ": " +
                            std::to_string(bad) + " experts or entries wrong");
    const auto got = recv.download();
    LL rbad = 0;
    for (LL el = 0; el < experts; ++el)
      for (int q = 0; q < W; ++q) {
        const LL e = me * experts + el;
        std::vector<LL> cand;  // tokens of rank q that chose e, once per choice
        for (LL i = 0; i < T * Kk; ++i)
          if (ids[q][i] == e) cand.push_back(i / Kk);
        const LL kept = std::min(LL(cand.size()), cap);
        std::vector<bool> used(cand.size(), false);
        for (LL pl = 0; pl < cap; ++pl) {
          const LL row = (el * W + q) * cap + pl;
          if (pl >= kept) {
            for (LL c = 0; c < C; ++c) rbad += !std::isnan(val(got[row * C + c]));
            continue;
          }
          bool found = false;
          for (size_t j = 0; j < cand.size() && !found; ++j) {
            if (used[j]) continue;
            bool same = true;
            for (LL c = 0; c < C && same; ++c) same = val(got[row * C + c]) == val(x[q][cand[j] * C + c]);
            if (same) used[j] = found = true;
          }
          rbad += !found;
        }
      }
    PKT_CHECK(rbad == 0, "i_moe_dispatch_cap.recv W=" + std::to_string(W) + " rank " + std::to_string(me) + ": " +
                             std::to_string(rbad) + " rows or elements wrong");
  }
  end_case(r, "i_moe_dispatch_cap " + dims({T, Kk, C, cap, experts}), before);
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
  r_add_rmsnorm(r, 13, s += 100);
  r_rotary_heads_computed(r, 3, 37, 5, s += 100);
  r_quant_e5m2_blocks_t(r, 37, 300, s += 100);
  r_range_newton_rsqrt(r, 37, 300, 5, s += 100);
  i_scatter_perm(r, 37, 600, s += 100);
  i_lengths_to_offsets(r, 1000, s += 100);
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
  f_gemm_rs_general<bf16>(r, "f_gemm_rs_128x128", false, 70, 72, 300, s += 100);
  f_gemm_rs_general<float>(r, "f_gemm_rs_ab_f32", true, 70, 72, 300, s += 100);
  for (const char* k : {"f_ag_gemm_f16_ab", "f_ag_gemm_f16_ab/general"}) {
    f_ag_gemm_f16_ab(r, k, 50, 72, 264, s += 100);
    f_ag_gemm_f16_ab(r, k, 37, 50, 100, s += 100);
  }
  for (const char* k : {"f_gemm_ar_then_bias", "f_gemm_ar_then_bias/general"}) {
    f_gemm_ar_then_bias(r, k, 100, 72, 264, s += 100);
    f_gemm_ar_then_bias(r, k, 70, 50, 100, s += 100);
  }
  // 12 heads (divisible by W = 1, 2, 3, 4 and 6); 50 or 77 positions a rank.
  for (const char* k : {"a_ulysses_f16_d64", "a_ulysses_f16_d64/general"}) {
    a_ulysses_f16_d64(r, k, 12, 50, s += 100);
    a_ulysses_f16_d64(r, k, 12, 77, s += 100);
  }
  m_ar_gelu_ag_cols(r, 37, 200, s += 100);
  m_grid_barriers_transpose(r, 70, 100, s += 100);
  m_bcast_inplace_cast(r, 5000, s += 100);
  m_amax_ar_quant(r, 37, 1000, s += 100);
  m_host_loop_average(r, 3000, 3, s += 100);
  m_a2a_cols_inplace_bias(r, 37, 100, s += 100);
  i_embed_vp_f16(r, 37, 50, 300, s += 100);
  i_moe_combine_f32(r, 37, 4, 40, 300, 2, s += 100);
  i_a2av_f32(r, 37, 300, s += 100);
  x_ring_shift_heads(r, 3, 37, s += 100);
  x_add_to_owner(r, 37, 300, s += 100);
  x_halo_exchange(r, 37, 300, s += 100);
  x_pull_prev_add(r, 37, 300, s += 100);
  x_prim_ag_planes_sum(r, 37, 300, s += 100);
  x_prim_per_tile_flags(r, 5000, s += 100);
  x_prim_double_buffer(r, 37, 300, s += 100);
  i_moe_dispatch_cap(r, 37, 2, 300, 74, 2, s += 100);  // room for every choice
  i_moe_dispatch_cap(r, 37, 2, 300, 8, 2, s += 100);   // most experts over capacity
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

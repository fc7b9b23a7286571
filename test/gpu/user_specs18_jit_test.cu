// The eighteenth user-written spec set (test/specs/user_specs18.pk.cpp) through the JIT, each kernel
// against a float64 host reference on fresh random inputs, with every output poisoned (NaN, or
// all-ones integers) first. The single-GPU kernels run at W = 1 (the GEMM and attention kernels on
// the Hopper templates also with templates = false, "name/general"); the kernels that use rank(),
// peers or collectives at W = 1, 2 and 3 (ranks sharing one GPU; PK_TEST_WORLDS or
// PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs. Every GEMM kernel the
// template takes runs at sizes the template takes (K and N multiples of 8) and at sizes that send it
// to its general-path twin (K = 50, N = 100), each through both compiles. Shapes leave partial tiles
// in every tiled dimension (37-, 50-, 70-, 100- and 200-row blocks, 100-, 300- and 1000-column rows,
// sequence lengths of 33, 77, 100 and 150, odd head, batch, expert and vocabulary counts).
// In-place tensors (the accumulated f32 output, the LoRA-merged weight, the residual streams, the
// rotated q, the top-p probabilities, the KV cache) start from random data, run one launch, and are
// checked as outputs. One PASS or FAIL line per case.
//
// Covered: all 48 kernels; with -DPK_SPECS18_W1 (and PK_USER_SPECS18_BAD_SPEC) also finding 1's
// reproducer from user_specs18_bad.pk.cpp (its store_add form failed before the fix). Shapes the specs fix:
// linear_l2norm_rows rows of at most 256 outputs, qkv_proj_split_planes Hd a multiple of 64,
// attn_probs_4d_causal and attention_4d_causal_d64 head dims of at most 64,
// causal_attention_d96_general 96, the attention templates' 64 / 128 exactly, rope_neox_inplace_pos_i64
// 128-column heads, tp_gather_hidden_layernorm rows of at most 2048, sp_rs_cols_residual_inplace_f16
// shards of at most 512, linear_log_softmax_odd at most 200 classes, compact_kept_rows at most 1024
// tiles of 256 tokens, kv_cache_append_4d 64-column heads, moe_expert_counts_store_add 64 experts and
// at most 8 choices a token, tp_vocab_argmax W <= 16,
// rmsnorm_then_linear and linear_residual_then_layernorm rows of at most 1024. Semantics taken as the
// specs write them (see each case): the template's tanh is tanh.approx (2^-10.9 relative) in the
// soft-capped and tanh epilogues, so those bounds carry 1e-3 of the cap; top_p_mask_sorted_inplace
// accepts either answer for a probability whose preceding mass is within 1e-4 of top_p;
// smoothquant_int8_per_token accepts one unit either way where x / scale lies within 1e-4 of a
// rounding point (the spec divides by a column through its reciprocal, within 2 ulp).
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
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
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Kernels, and whether one of their launches takes a template (true) or none does.
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"linear_ab_f16_bias_gelu_erf", true},
    {"w8a8_dequant_rowcol_clamp", true},
    {"linear_t_alpha_beta_f32", true},
    {"gemm_t_accumulate_inplace_f32", true},
    {"lora_merge_inplace", true},
    {"gemm_ab_relu2_odd_f16", true},
    {"gemm_t_colscale_tanh_f16out", true},
    {"bmm_t_causal_batch_scale_f16", true},
    {"bmm_kn_residual_bias_bf16", true},
    {"bmm_shared_w_gelu_erf_f32", true},
    {"linear_dgrad_ab", true},
    {"linear_wgrad_transposed_a", true},
    {"splitk_gemm_t_store_add", false},
    {"linear_l2norm_rows", false},
    {"qkv_proj_split_planes", false},
    {"attn_probs_4d_causal", false},
    {"gqa_softcap_alibi_causal_d128", true},
    {"prefix_lm_attention_d64", true},
    {"sliding_window_gqa_f16_d64", true},
    {"causal_attention_d96_general", false},
    {"attention_4d_causal_d64", false},
    {"cross_attention_klen_d128", true},
    {"chunked_prefill_softcap_d128", true},
    {"tp_gather_k_then_gemm", true},
    {"tp_row_linear_rs_cols_bias_gelu", true},
    {"tp_lm_head_softcap_gather_vocab", true},
    {"tp_gather_hidden_layernorm", false},
    {"sp_rs_cols_residual_inplace_f16", false},
    {"tp_vocab_argmax", false},
    {"ring_shift_kv_3d_4d", false},
    {"ring_add_next_then_bias", false},
    {"fused_add_rmsnorm_inplace_3d", false},
    {"rope_neox_inplace_pos_i64", false},
    {"adafactor_factored_update", false},
    {"bias_ln_grad_3d_store_add", false},
    {"top_p_mask_sorted_inplace", false},
    {"position_ids_from_mask_i64", false},
    {"pad_from_packed_i64", false},
    {"compact_kept_rows", false},
    {"smoothquant_int8_per_token", false},
    {"kv_cache_append_4d", false},
    {"softmax_temp_3d_odd_chunks", false},
    {"cumsum_down_columns", false},
    {"linear_log_softmax_odd", false},
    {"moe_expert_swiglu_batched", false},
    {"rmsnorm_then_linear", true},
    {"linear_residual_then_layernorm", true},
    {"moe_expert_counts_store_add", false},
};
// The template kernels also run with templates = false ("name/general").
const std::vector<const char*> kGeneralToo = {
    "linear_ab_f16_bias_gelu_erf",     "w8a8_dequant_rowcol_clamp",       "linear_t_alpha_beta_f32",
    "gemm_t_accumulate_inplace_f32",   "lora_merge_inplace",              "gemm_ab_relu2_odd_f16",
    "gemm_t_colscale_tanh_f16out",     "bmm_t_causal_batch_scale_f16",    "bmm_kn_residual_bias_bf16",
    "bmm_shared_w_gelu_erf_f32",       "linear_dgrad_ab",                 "gqa_softcap_alibi_causal_d128",
    "prefix_lm_attention_d64",         "sliding_window_gqa_f16_d64",      "cross_attention_klen_d128",
    "chunked_prefill_softcap_d128",    "tp_gather_k_then_gemm",           "tp_row_linear_rs_cols_bias_gelu",
    "tp_lm_head_softcap_gather_vocab", "rmsnorm_then_linear",             "linear_residual_then_layernorm",
    "linear_wgrad_transposed_a"};

KernelSet g_kernels;

#ifdef PK_SPECS18_W1
// Finding 1's reproducer (test/specs/user_specs18_bad.pk.cpp): the same conv1d backward sum added into
// a local tensor with store_add and with a plain store of dx + sum. Needs PK_USER_SPECS18_BAD_SPEC.
const std::vector<std::pair<const char*, bool>> kW1Kernels = {{"w1_conv1d_bwd_store_add", false},
                                                              {"w1_conv1d_bwd_store", false}};
#endif

bool compile_all() {
  if (!compile_set(PK_USER_SPECS18_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return false;
#ifdef PK_SPECS18_W1
  if (!compile_set(PK_USER_SPECS18_BAD_SPEC, kW1Kernels, {}, PK_PKC, g_kernels)) return false;
#endif
  return true;
}

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs18", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host references and bounds ----

// A bf16 / f16 result of a GEMM and an epilogue whose slope is at most `slope`: two units in the last
// place of the result, the fp32 sum's order scaled by the slope, a floor.
auto bf_tol(const std::vector<double>& w, const std::vector<double>& mag, double slope = 1.0) {
  return [&w, &mag, slope](LL i) { return kBf * std::fabs(w[i]) + slope * 1e-5 * mag[i] + 1e-4; };
}
auto hf_tol(const std::vector<double>& w, const std::vector<double>& mag, double slope = 1.0) {
  return [&w, &mag, slope](LL i) { return kHf * std::fabs(w[i]) + slope * 1e-5 * mag[i] + 1e-4; };
}
// An f32 result: the fp32 sum's order (scaled) and a floor.
auto f32_tol(const std::vector<double>& mag, double slope = 1.0) {
  return [&mag, slope](LL i) { return slope * 1e-5 * mag[i] + 1e-6; };
}
// The attention outputs' bounds: bf16 (p and o rounded to bf16) and f16, and the log-sum-exp.
auto bf_o_tol(const std::vector<double>& w, double extra = 0.0) {
  return [&w, extra](LL i) { return 2 * kBf * std::fabs(w[i]) + 4e-3 + extra; };
}
auto hf_o_tol(const std::vector<double>& w) { return [&w](LL i) { return 4 * kHf * std::fabs(w[i]) + 2e-3; }; }
auto lse_tol(const std::vector<double>& w, double extra = 0.0) {
  return [&w, extra](LL i) { return 1e-3 * std::fabs(w[i]) + 2e-3 + extra; };
}
double gelu_erf_slope() { return 1.13; }  // max |d/dx x Phi(x)|
// A random order of 0 .. n - 1.
std::vector<int> permutation(int n, unsigned seed) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return v;
}

// ================================================================ GEMM epilogues (template and twin) ==

// linear_ab_f16_bias_gelu_erf: c = f16(gelu_erf(a b + bias)), a [M, K], b [K, N] f16, bias f32 [N].
void linear_ab_f16_bias_gelu_erf(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f16>(M * Kd, seed), b = rnd<f16>(Kd * N, seed + 1);
  const auto bias = rnd<float>(N, seed + 2);
  DevLocal<f16> ad({M, Kd}, a), bd({Kd, N}, b), c({M, N}, {});
  DevLocal<float> biasd({N}, bias);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), biasd.view(), c.view())) {
    std::vector<double> acc, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(b[q * N + n]); }, acc, mag);
    std::vector<double> want(M * N);
    for (LL i = 0; i < M * N; ++i) want[i] = gelu_erf(acc[i] + bias[i % N]);
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; }, hf_tol(want, mag, gelu_erf_slope()));
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// w8a8_dequant_rowcol_clamp: c = bf16(clamp(a bᵀ srow[m] scol[n] + bias[n], -clip, clip)).
void w8a8_dequant_rowcol_clamp(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const float clip = 3.0f;
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1), bias = rnd<bf16>(N, seed + 2);
  const auto srow = rnd<float>(M, seed + 3, 0.05f, 0.5f), scol = rnd<float>(N, seed + 4, 0.5f, 1.5f);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), biasd({N}, bias), c({M, N}, {});
  DevLocal<float> sr({M}, srow), sc({1, N}, scol);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), sr.view(), sc.view(), biasd.view(), c.view(), clip)) {
    std::vector<double> acc, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(b[n * Kd + q]); }, acc, mag);
    std::vector<double> want(M * N);
    for (LL i = 0; i < M * N; ++i) {
      const double s = double(srow[i / N]) * scol[i % N];
      want[i] = std::min(std::max(acc[i] * s + val(bias[i % N]), -double(clip)), double(clip));
      mag[i] *= s;
    }
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; }, bf_tol(want, mag));
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// linear_t_alpha_beta_f32: c = alpha a bᵀ + beta r (f32).
void linear_t_alpha_beta_f32(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const float alpha = 0.75f, beta = -1.25f;
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  const auto res = rnd<float>(M * N, seed + 2);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> rd({M, N}, res), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), rd.view(), c.view(), alpha, beta)) {
    std::vector<double> acc, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(b[n * Kd + q]); }, acc, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return double(alpha) * acc[i] + double(beta) * res[i]; },
          [&](LL i) { return 1e-5 * (std::fabs(alpha) * mag[i] + std::fabs(beta * res[i])) + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// gemm_t_accumulate_inplace_f32: c += a bᵀ in place (one launch; c starts random).
void gemm_t_accumulate_inplace_f32(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  const auto c0 = rnd<float>(M * N, seed + 2, -4.f, 4.f);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> c({M, N}, c0);
  const int before = begin_case(r);
  if (run(r, k, 1, ad.view(), bd.view(), c.view())) {
    std::vector<double> acc, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(b[n * Kd + q]); }, acc, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return c0[i] + acc[i]; },
          [&](LL i) { return 1e-5 * mag[i] + 1e-6 * std::fabs(c0[i]) + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// lora_merge_inplace: w [N, K] = bf16(w + scale lb la), lb [N, R], la [R, K] (one launch).
void lora_merge_inplace(const Run& r, const std::string& k, LL N, LL R, LL Kd, unsigned seed) {
  const float scale = 0.5f;
  const auto w0 = rnd<bf16>(N * Kd, seed, -2.f, 2.f), lb = rnd<bf16>(N * R, seed + 1), la = rnd<bf16>(R * Kd, seed + 2);
  DevLocal<bf16> wd({N, Kd}, w0), lbd({N, R}, lb), lad({R, Kd}, la);
  const int before = begin_case(r);
  if (run(r, k, 1, wd.view(), lbd.view(), lad.view(), scale)) {
    std::vector<double> acc, mag;
    matmul(N, Kd, R, [&](LL m, LL q) { return val(lb[m * R + q]); }, [&](LL q, LL n) { return val(la[q * Kd + n]); }, acc, mag);
    std::vector<double> want(N * Kd);
    for (LL i = 0; i < N * Kd; ++i) want[i] = val(w0[i]) + scale * acc[i], mag[i] *= scale;
    check(r, k + ".w", wd.download(), [&](LL i) { return want[i]; }, bf_tol(want, mag));
  }
  end_case(r, k + " " + dims({N, R, Kd}), before);
}

// gemm_ab_relu2_odd_f16: c = f16(relu(a b)^2), f16 operands, b [K, N].
void gemm_ab_relu2_odd_f16(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f16>(M * Kd, seed), b = rnd<f16>(Kd * N, seed + 1);
  DevLocal<f16> ad({M, Kd}, a), bd({Kd, N}, b), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), c.view())) {
    std::vector<double> acc, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(b[q * N + n]); }, acc, mag);
    auto want = [&](LL i) { const double t = std::max(acc[i], 0.0); return t * t; };
    check(r, k + ".c", c.download(), want,
          [&](LL i) { return kHf * want(i) + 2 * std::max(acc[i], 0.0) * 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// gemm_t_colscale_tanh_f16out: c = f16(tanh(a bᵀ cs[n])), bf16 operands (tanh.approx on the template).
void gemm_t_colscale_tanh_f16out(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  const auto cs = rnd<float>(N, seed + 2, 0.02f, 0.3f);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> csd({N}, cs);
  DevLocal<f16> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), csd.view(), c.view())) {
    std::vector<double> acc, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(b[n * Kd + q]); }, acc, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return std::tanh(acc[i] * cs[i % N]); },
          [&](LL i) { return (kHf + 1e-3) * std::fabs(std::tanh(acc[i] * cs[i % N])) + 1e-5 * mag[i] * cs[i % N] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// bmm_t_causal_batch_scale_f16: c[z] = f16(a[z] b[z]ᵀ s[z]) on and below the diagonal, 0 above it.
void bmm_t_causal_batch_scale_f16(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f16>(B * M * Kd, seed), b = rnd<f16>(B * N * Kd, seed + 1);
  const auto s = rnd<float>(B, seed + 2, 0.5f, 1.5f);
  DevLocal<f16> ad({B, M, Kd}, a), bd({B, N, Kd}, b), c({B, M, N}, {});
  DevLocal<float> sd({B}, s);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), sd.view(), c.view())) {
    std::vector<double> want(B * M * N), mag(B * M * N), wz, mz;
    for (LL z = 0; z < B; ++z) {
      matmul(M, N, Kd, [&](LL m, LL q) { return val(a[(z * M + m) * Kd + q]); },
             [&](LL q, LL n) { return val(b[(z * N + n) * Kd + q]); }, wz, mz);
      for (LL i = 0; i < M * N; ++i) {
        const bool keep = i % N <= i / N;
        want[z * M * N + i] = keep ? wz[i] * s[z] : 0.0, mag[z * M * N + i] = keep ? mz[i] * s[z] : 0.0;
      }
    }
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; }, hf_tol(want, mag));
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// bmm_kn_residual_bias_bf16: c[z] = bf16(a[z] b[z] + bias + r[z]), b [B, K, N].
void bmm_kn_residual_bias_bf16(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(B * M * Kd, seed), b = rnd<bf16>(B * Kd * N, seed + 1), res = rnd<bf16>(B * M * N, seed + 2);
  const auto bias = rnd<float>(N, seed + 3);
  DevLocal<bf16> ad({B, M, Kd}, a), bd({B, Kd, N}, b), rd({B, M, N}, res), c({B, M, N}, {});
  DevLocal<float> biasd({N}, bias);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), rd.view(), biasd.view(), c.view())) {
    std::vector<double> want(B * M * N), mag(B * M * N), wz, mz;
    for (LL z = 0; z < B; ++z) {
      matmul(M, N, Kd, [&](LL m, LL q) { return val(a[(z * M + m) * Kd + q]); },
             [&](LL q, LL n) { return val(b[(z * Kd + q) * N + n]); }, wz, mz);
      for (LL i = 0; i < M * N; ++i)
        want[z * M * N + i] = wz[i] + bias[i % N] + val(res[z * M * N + i]), mag[z * M * N + i] = mz[i];
    }
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; }, bf_tol(want, mag));
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// bmm_shared_w_gelu_erf_f32: y[z] = gelu_erf(x[z] wᵀ + bias), one w [N, K] for every batch, f32 out.
void bmm_shared_w_gelu_erf_f32(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto x = rnd<bf16>(B * M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1), bias = rnd<bf16>(N, seed + 2);
  DevLocal<bf16> xd({B, M, Kd}, x), wd({N, Kd}, w), biasd({1, N}, bias);
  DevLocal<float> y({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), wd.view(), biasd.view(), y.view())) {
    std::vector<double> want(B * M * N), mag(B * M * N), wz, mz;
    for (LL z = 0; z < B; ++z) {
      matmul(M, N, Kd, [&](LL m, LL q) { return val(x[(z * M + m) * Kd + q]); }, [&](LL q, LL n) { return val(w[n * Kd + q]); },
             wz, mz);
      for (LL i = 0; i < M * N; ++i) want[z * M * N + i] = gelu_erf(wz[i] + val(bias[i % N])), mag[z * M * N + i] = mz[i];
    }
    check(r, k + ".y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return gelu_erf_slope() * 1e-5 * mag[i] + 1e-6 * (1 + std::fabs(want[i])); });
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// linear_dgrad_ab: dx [M, K] = bf16(dy [M, N] w [N, K]).
void linear_dgrad_ab(const Run& r, const std::string& k, LL M, LL N, LL Kd, unsigned seed) {
  const auto dy = rnd<bf16>(M * N, seed), w = rnd<bf16>(N * Kd, seed + 1);
  DevLocal<bf16> dyd({M, N}, dy), wd({N, Kd}, w), dx({M, Kd}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, dyd.view(), wd.view(), dx.view())) {
    std::vector<double> want, mag;
    matmul(M, Kd, N, [&](LL m, LL q) { return val(dy[m * N + q]); }, [&](LL q, LL n) { return val(w[q * Kd + n]); }, want, mag);
    check(r, k + ".dx", dx.download(), [&](LL i) { return want[i]; }, bf_tol(want, mag));
  }
  end_case(r, k + " " + dims({M, N, Kd}), before);
}

// ================================================================ GEMMs on the general path ==

// linear_wgrad_transposed_a: dw [N, K] = dyᵀ x (f32), dy [M, N], x [M, K] bf16: the GEMM template with
// an M-major A (dy read transposed) where N and K are multiples of 8, its twin otherwise.
void linear_wgrad_transposed_a(const Run& r, const std::string& kernel, LL M, LL N, LL Kd, unsigned seed) {
  const auto dy = rnd<bf16>(M * N, seed), x = rnd<bf16>(M * Kd, seed + 1);
  DevLocal<bf16> dyd({M, N}, dy), xd({M, Kd}, x);
  DevLocal<float> dw({N, Kd}, {});
  const int before = begin_case(r);
  if (run(r, kernel, 2, dyd.view(), xd.view(), dw.view())) {
    std::vector<double> want, mag;
    matmul(N, Kd, M, [&](LL n, LL m) { return val(dy[m * N + n]); }, [&](LL m, LL q) { return val(x[m * Kd + q]); }, want, mag);
    check(r, "linear_wgrad_transposed_a.dw", dw.download(), [&](LL i) { return want[i]; }, f32_tol(mag));
  }
  end_case(r, kernel + " " + dims({M, N, Kd}), before);
}

// splitk_gemm_t_store_add: c = a bᵀ (f32), zeroed by the kernel (poisoned here; two launches, so the
// second zeroes the first's sums), the K chunks of 256 added.
void splitk_gemm_t_store_add(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "splitk_gemm_t_store_add", 2, ad.view(), bd.view(), c.view())) {
    std::vector<double> want, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(b[n * Kd + q]); }, want, mag);
    check(r, "splitk_gemm_t_store_add.c", c.download(), [&](LL i) { return want[i]; }, f32_tol(mag));
  }
  end_case(r, "splitk_gemm_t_store_add " + dims({M, N, Kd}), before);
}

// linear_l2norm_rows: y = bf16(acc rsqrt(sum_n acc^2 + eps)), acc = x wᵀ, N <= 256.
void linear_l2norm_rows(const Run& r, LL M, LL Kd, LL N, unsigned seed) {
  const float eps = 1e-6f;
  const auto x = rnd<bf16>(M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1);
  DevLocal<bf16> xd({M, Kd}, x), wd({N, Kd}, w), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "linear_l2norm_rows", 2, xd.view(), wd.view(), y.view(), eps)) {
    std::vector<double> acc, mag, want(M * N), tol(M * N);
    matmul(M, N, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(w[n * Kd + q]); }, acc, mag);
    for (LL m = 0; m < M; ++m) {
      double ss = 0, sm = 0;
      for (LL n = 0; n < N; ++n) ss += acc[m * N + n] * acc[m * N + n], sm += mag[m * N + n];
      const double inv = 1 / std::sqrt(ss + eps);
      for (LL n = 0; n < N; ++n) {
        want[m * N + n] = acc[m * N + n] * inv;
        tol[m * N + n] = kBf * std::fabs(want[m * N + n]) + 2e-5 * (mag[m * N + n] + sm / N) * inv + 1e-5;
      }
    }
    check(r, "linear_l2norm_rows.y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
  }
  end_case(r, "linear_l2norm_rows " + dims({M, Kd, N}), before);
}

// qkv_proj_split_planes: qkv [3, S, Hd], plane p column c = bf16((x wᵀ)[s, p Hd + c] + bias[p Hd + c]).
void qkv_proj_split_planes(const Run& r, LL S, LL Hd, unsigned seed) {
  const LL N = 3 * Hd;
  const auto x = rnd<bf16>(S * Hd, seed), w = rnd<bf16>(N * Hd, seed + 1);
  const auto bias = rnd<float>(N, seed + 2);
  DevLocal<bf16> xd({S, Hd}, x), wd({N, Hd}, w), qkv({3, S, Hd}, {});
  DevLocal<float> biasd({N}, bias);
  const int before = begin_case(r);
  if (run(r, "qkv_proj_split_planes", 2, xd.view(), wd.view(), biasd.view(), qkv.view())) {
    std::vector<double> acc, mag;
    matmul(S, N, Hd, [&](LL m, LL q) { return val(x[m * Hd + q]); }, [&](LL q, LL n) { return val(w[n * Hd + q]); }, acc, mag);
    std::vector<double> want(3 * S * Hd), wm(3 * S * Hd);
    for (LL s = 0; s < S; ++s)
      for (LL n = 0; n < N; ++n) {
        const LL o = ((n / Hd) * S + s) * Hd + n % Hd;
        want[o] = acc[s * N + n] + bias[n], wm[o] = mag[s * N + n];
      }
    check(r, "qkv_proj_split_planes.qkv", qkv.download(), [&](LL i) { return want[i]; }, bf_tol(want, wm));
  }
  end_case(r, "qkv_proj_split_planes " + dims({S, Hd}), before);
}

// attn_probs_4d_causal: p[b, h, i, j] = softmax_j(q kᵀ scale) over j <= i, 0 for j > i; [B, H, S, D].
void attn_probs_4d_causal(const Run& r, LL B, LL H, LL S, LL D, unsigned seed) {
  const float scale = 0.125f;
  const LL n = B * H * S * D;
  const auto q = rnd<bf16>(n, seed), kk = rnd<bf16>(n, seed + 1);
  DevLocal<bf16> qd({B, H, S, D}, q), kd({B, H, S, D}, kk);
  DevLocal<float> p({B, H, S, S}, {});
  const int before = begin_case(r);
  if (run(r, "attn_probs_4d_causal", 2, qd.view(), kd.view(), p.view(), scale)) {
    std::vector<double> want(B * H * S * S, 0.0), tol(B * H * S * S, 1e-6), s(S);
    for (LL bh = 0; bh < B * H; ++bh)
      for (LL i = 0; i < S; ++i) {
        double mx = -1e300, sum = 0, mg = 0;
        for (LL j = 0; j <= i; ++j) {
          s[j] = dot(q, (bh * S + i) * D, kk, (bh * S + j) * D, D) * scale, mx = std::max(mx, s[j]);
          double g = 0;
          for (LL d = 0; d < D; ++d) g += std::fabs(val(q[(bh * S + i) * D + d]) * val(kk[(bh * S + j) * D + d]));
          mg = std::max(mg, g * scale);
        }
        for (LL j = 0; j <= i; ++j) sum += std::exp(s[j] - mx);
        for (LL j = 0; j <= i; ++j) {
          const LL o = (bh * S + i) * S + j;
          want[o] = std::exp(s[j] - mx) / sum;
          tol[o] += want[o] * (4e-5 * (1 + mg));
        }
      }
    check(r, "attn_probs_4d_causal.p", p.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
  }
  end_case(r, "attn_probs_4d_causal " + dims({B, H, S, D}), before);
}

// moe_expert_swiglu_batched: h[e] = bf16(silu(x[e] wg[e]ᵀ) (x[e] wu[e]ᵀ)), [E, C, K] x [E, F, K].
void moe_expert_swiglu_batched(const Run& r, LL E, LL C, LL Kd, LL F, unsigned seed) {
  const auto x = rnd<bf16>(E * C * Kd, seed), wg = rnd<bf16>(E * F * Kd, seed + 1), wu = rnd<bf16>(E * F * Kd, seed + 2);
  DevLocal<bf16> xd({E, C, Kd}, x), wgd({E, F, Kd}, wg), wud({E, F, Kd}, wu), h({E, C, F}, {});
  const int before = begin_case(r);
  if (run(r, "moe_expert_swiglu_batched", 2, xd.view(), wgd.view(), wud.view(), h.view())) {
    std::vector<double> want(E * C * F), tol(E * C * F), g, mg, u, mu;
    for (LL e = 0; e < E; ++e) {
      auto xv = [&](LL m, LL q) { return val(x[(e * C + m) * Kd + q]); };
      matmul(C, F, Kd, xv, [&](LL q, LL n) { return val(wg[(e * F + n) * Kd + q]); }, g, mg);
      matmul(C, F, Kd, xv, [&](LL q, LL n) { return val(wu[(e * F + n) * Kd + q]); }, u, mu);
      for (LL i = 0; i < C * F; ++i) {
        const LL o = e * C * F + i;
        want[o] = silu(g[i]) * u[i];
        tol[o] = kBf * std::fabs(want[o]) + 1e-5 * (1.1 * mg[i] * std::fabs(u[i]) + (std::fabs(g[i]) + 1) * mu[i]) + 1e-4;
      }
    }
    check(r, "moe_expert_swiglu_batched.h", h.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
  }
  end_case(r, "moe_expert_swiglu_batched " + dims({E, C, Kd, F}), before);
}

// linear_log_softmax_odd: logp = a - logsumexp_n(a), a = h wᵀ (f32), N <= 200 classes.
void linear_log_softmax_odd(const Run& r, LL M, LL Kd, LL N, unsigned seed) {
  const auto h = rnd<bf16>(M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1);
  DevLocal<bf16> hd({M, Kd}, h), wd({N, Kd}, w);
  DevLocal<float> lp({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "linear_log_softmax_odd", 2, hd.view(), wd.view(), lp.view())) {
    std::vector<double> a, mag, want(M * N), tol(M * N);
    matmul(M, N, Kd, [&](LL m, LL q) { return val(h[m * Kd + q]); }, [&](LL q, LL n) { return val(w[n * Kd + q]); }, a, mag);
    for (LL m = 0; m < M; ++m) {
      double mx = -1e300, s = 0, mm = 0;
      for (LL n = 0; n < N; ++n) mx = std::max(mx, a[m * N + n]), mm = std::max(mm, mag[m * N + n]);
      for (LL n = 0; n < N; ++n) s += std::exp(a[m * N + n] - mx);
      const double lse = mx + std::log(s);
      for (LL n = 0; n < N; ++n)
        want[m * N + n] = a[m * N + n] - lse, tol[m * N + n] = 1e-5 * (mag[m * N + n] + mm) + 2e-6 * (1 + std::fabs(lse));
    }
    check(r, "linear_log_softmax_odd.logp", lp.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
  }
  end_case(r, "linear_log_softmax_odd " + dims({M, Kd, N}), before);
}

// rmsnorm_then_linear: xn = bf16(x rsqrt(mean(x^2) + eps) g) (rows <= 1024); y = bf16(xn wᵀ), checked
// against the product of the xn the kernel wrote (so the two roundings do not compound).
void rmsnorm_then_linear(const Run& r, const std::string& k, LL M, LL H, LL N, unsigned seed) {
  const float eps = 1e-5f;
  const auto x = rnd<bf16>(M * H, seed, -2.f, 2.f), g = rnd<bf16>(H, seed + 1, 0.5f, 1.5f), w = rnd<bf16>(N * H, seed + 2);
  DevLocal<bf16> xd({M, H}, x), gd({H}, g), xn({M, H}, {}), wd({N, H}, w), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), gd.view(), xn.view(), wd.view(), y.view(), eps)) {
    const auto wn = rmsnorm_rows(M, H, eps, [&](LL i) { return val(x[i]); }, [&](LL j) { return val(g[j]); });
    const auto got = xn.download();
    check(r, k + ".xn", got, [&](LL i) { return wn[i]; }, [&](LL i) { return kBf * std::fabs(wn[i]) + 1e-5 * std::fabs(wn[i]) + 1e-6; });
    std::vector<double> want, mag;
    matmul(M, N, H, [&](LL m, LL q) { return val(got[m * H + q]); }, [&](LL q, LL n) { return val(w[n * H + q]); }, want, mag);
    check(r, k + ".y", y.download(), [&](LL i) { return want[i]; }, bf_tol(want, mag));
  }
  end_case(r, k + " " + dims({M, H, N}), before);
}

// linear_residual_then_layernorm: hbuf = a wᵀ + bias + res (f32); y = bf16(LayerNorm(hbuf) g + b), the
// LayerNorm checked from the hbuf the kernel wrote.
void linear_residual_then_layernorm(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const float eps = 1e-5f;
  const auto a = rnd<bf16>(M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1);
  const auto bias = rnd<float>(N, seed + 2), res = rnd<float>(M * N, seed + 3), g = rnd<float>(N, seed + 4, 0.5f, 1.5f),
             b = rnd<float>(N, seed + 5);
  DevLocal<bf16> ad({M, Kd}, a), wd({N, Kd}, w), y({M, N}, {});
  DevLocal<float> biasd({N}, bias), rd({M, N}, res), hb({M, N}, {}), gd({N}, g), bd({N}, b);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), wd.view(), biasd.view(), rd.view(), hb.view(), gd.view(), bd.view(), y.view(), eps)) {
    std::vector<double> acc, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(w[n * Kd + q]); }, acc, mag);
    const auto h = hb.download();
    check(r, k + ".hbuf", h, [&](LL i) { return acc[i] + bias[i % N] + res[i]; },
          [&](LL i) { return 1e-5 * mag[i] + 1e-6 * (1 + std::fabs(res[i]) + std::fabs(bias[i % N])); });
    std::vector<double> want(M * N), tol(M * N);
    for (LL m = 0; m < M; ++m) {
      double mu = 0, var = 0;
      for (LL n = 0; n < N; ++n) mu += h[m * N + n];
      mu /= N;
      for (LL n = 0; n < N; ++n) var += (h[m * N + n] - mu) * (h[m * N + n] - mu);
      const double rs = 1 / std::sqrt(var / N + eps);
      for (LL n = 0; n < N; ++n) {
        const double t = (h[m * N + n] - mu) * rs * g[n];
        want[m * N + n] = t + b[n], tol[m * N + n] = kBf * std::fabs(want[m * N + n]) + 1e-5 * (std::fabs(t) + 1) + 1e-6;
      }
    }
    check(r, k + ".y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// ================================================================ attention ==

// gqa_softcap_alibi_causal_d128: s = cap tanh(q kᵀ scale / cap) - slope[h] (i - j), j <= i, K/V head
// h / (H / Hk); lse [H, S, 1]. The template's tanh is tanh.approx (up to 2^-10.9 of the cap on a score).
void gqa_softcap_alibi_causal_d128(const Run& r, const std::string& k, LL H, LL Hk, LL S, unsigned seed) {
  const LL D = 128, G = H / Hk;
  const float scale = 1.f / std::sqrt(128.f), cap = 5.f;
  const auto q = rnd<bf16>(H * S * D, seed, -2.f, 2.f), kk = rnd<bf16>(Hk * S * D, seed + 1, -2.f, 2.f),
             v = rnd<bf16>(Hk * S * D, seed + 2);
  std::vector<float> slopes(H);
  for (LL h = 0; h < H; ++h) slopes[h] = std::pow(2.f, -8.f * float(h + 1) / float(H));
  DevLocal<bf16> qd({H, S, D}, q), kd({Hk, S, D}, kk), vd({Hk, S, D}, v), o({H, S, D}, {});
  DevLocal<float> sd({H}, slopes), lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), sd.view(), lse.view(), scale, cap)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h) {
      const LL kh = h / G;
      attend(S, S, D,
             [&](LL i, LL j) {
               return cap * std::tanh(dot(q, (h * S + i) * D, kk, (kh * S + j) * D, D) * scale / cap) - slopes[h] * double(i - j);
             },
             [](LL i, LL j) { return j <= i; }, [&](LL j, LL d) { return val(v[(kh * S + j) * D + d]); }, wo.data() + h * S * D,
             wl.data() + h * S);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo, 4e-3));
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl, 2e-3 * cap));
  }
  end_case(r, k + " " + dims({H, Hk, S}), before);
}

// prefix_lm_attention_d64: query i sees keys j <= i and every j < prefix.
void prefix_lm_attention_d64(const Run& r, const std::string& k, LL H, LL S, LL prefix, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * S * D, seed), kk = rnd<bf16>(H * S * D, seed + 1), v = rnd<bf16>(H * S * D, seed + 2);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), prefix, scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h)
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale; },
             [&](LL i, LL j) { return j <= i || j < prefix; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); },
             wo.data() + h * S * D, wl.data() + h * S);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, S, prefix}), before);
}

// sliding_window_gqa_f16_d64: f16, i - window < j <= i, K/V head h / group, lse [H, S, 1]. window = 1:
// every row sees its own key only (o = v).
void sliding_window_gqa_f16_d64(const Run& r, const std::string& k, LL H, LL Hk, LL S, LL window, unsigned seed) {
  const LL D = 64, G = H / Hk;
  const float scale = 0.125f;
  const auto q = rnd<f16>(H * S * D, seed), kk = rnd<f16>(Hk * S * D, seed + 1), v = rnd<f16>(Hk * S * D, seed + 2);
  DevLocal<f16> qd({H, S, D}, q), kd({Hk, S, D}, kk), vd({Hk, S, D}, v), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), G, window, scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h) {
      const LL kh = h / G;
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (kh * S + j) * D, D) * scale; },
             [&](LL i, LL j) { return j <= i && j > i - window; }, [&](LL j, LL d) { return val(v[(kh * S + j) * D + d]); },
             wo.data() + h * S * D, wl.data() + h * S);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, hf_o_tol(wo));
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, k + " " + dims({H, Hk, S, window}), before);
}

// causal_attention_d96_general: head dim 96, causal, lse into [H, S].
void causal_attention_d96_general(const Run& r, LL H, LL S, unsigned seed) {
  const LL D = 96;
  const float scale = float(1 / std::sqrt(96.0));
  const auto q = rnd<bf16>(H * S * D, seed), kk = rnd<bf16>(H * S * D, seed + 1), v = rnd<bf16>(H * S * D, seed + 2);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  DevLocal<float> lse({H, S}, {});
  const int before = begin_case(r);
  if (run(r, "causal_attention_d96_general", 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h)
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale; },
             [](LL i, LL j) { return j <= i; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); }, wo.data() + h * S * D,
             wl.data() + h * S);
    check(r, "causal_attention_d96_general.o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
    check(r, "causal_attention_d96_general.lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, "causal_attention_d96_general " + dims({H, S}), before);
}

// attention_4d_causal_d64: [B, H, S, 64], causal.
void attention_4d_causal_d64(const Run& r, LL B, LL H, LL S, unsigned seed) {
  const LL D = 64, BH = B * H;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(BH * S * D, seed), kk = rnd<bf16>(BH * S * D, seed + 1), v = rnd<bf16>(BH * S * D, seed + 2);
  DevLocal<bf16> qd({B, H, S, D}, q), kd({B, H, S, D}, kk), vd({B, H, S, D}, v), o({B, H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "attention_4d_causal_d64", 2, qd.view(), kd.view(), vd.view(), o.view(), scale)) {
    std::vector<double> wo(BH * S * D), wl(BH * S);
    for (LL h = 0; h < BH; ++h)
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale; },
             [](LL i, LL j) { return j <= i; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); }, wo.data() + h * S * D,
             wl.data() + h * S);
    check(r, "attention_4d_causal_d64.o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, "attention_4d_causal_d64 " + dims({B, H, S}), before);
}

// cross_attention_klen_d128: head h sees keys j < min(klen[h], Sk) (klen 1, Sk, past Sk and between).
void cross_attention_klen_d128(const Run& r, const std::string& k, LL H, LL Sq, LL Sk, unsigned seed) {
  const LL D = 128;
  const float scale = 1.f / std::sqrt(128.f);
  auto klen = ints<int>(H, 1, int(Sk), seed + 3);
  klen[0] = 1, klen[1] = int(Sk), klen[2 % H] = int(Sk + 50);
  const auto q = rnd<bf16>(H * Sq * D, seed), kk = rnd<bf16>(H * Sk * D, seed + 1), v = rnd<bf16>(H * Sk * D, seed + 2);
  DevLocal<bf16> qd({H, Sq, D}, q), kd({H, Sk, D}, kk), vd({H, Sk, D}, v), o({H, Sq, D}, {});
  DevLocal<int> kl({H}, klen);
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), kl.view(), scale)) {
    std::vector<double> wo(H * Sq * D), wl(H * Sq);
    for (LL h = 0; h < H; ++h)
      attend(Sq, Sk, D, [&](LL i, LL j) { return dot(q, (h * Sq + i) * D, kk, (h * Sk + j) * D, D) * scale; },
             [&](LL, LL j) { return j < klen[h]; }, [&](LL j, LL d) { return val(v[(h * Sk + j) * D + d]); },
             wo.data() + h * Sq * D, wl.data() + h * Sq);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, Sq, Sk}), before);
}

// chunked_prefill_softcap_d128: query i sees keys j <= i + (Sk - Sq); scores cap tanh(q kᵀ scale / cap);
// lse [Sq].
void chunked_prefill_softcap_d128(const Run& r, const std::string& k, LL Sq, LL Sk, unsigned seed) {
  const LL D = 128, past = Sk - Sq;
  const float scale = 1.f / std::sqrt(128.f), cap = 5.f;
  const auto q = rnd<bf16>(Sq * D, seed, -2.f, 2.f), kk = rnd<bf16>(Sk * D, seed + 1, -2.f, 2.f), v = rnd<bf16>(Sk * D, seed + 2);
  DevLocal<bf16> qd({Sq, D}, q), kd({Sk, D}, kk), vd({Sk, D}, v), o({Sq, D}, {});
  DevLocal<float> lse({Sq}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale, cap)) {
    std::vector<double> wo, wl;
    attend(Sq, Sk, D, [&](LL i, LL j) { return cap * std::tanh(dot(q, i * D, kk, j * D, D) * scale / cap); },
           [&](LL i, LL j) { return j <= i + past; }, [&](LL j, LL d) { return val(v[j * D + d]); }, wo, wl);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo, 4e-3));
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl, 2e-3 * cap));
  }
  end_case(r, k + " " + dims({Sq, Sk}), before);
}

// ================================================================ norms, in-place updates ==

// fused_add_rmsnorm_inplace_3d: res = bf16(x + res); x = bf16(res rsqrt(mean(res^2) + eps) w), in place
// (one launch), [B, S, H].
void fused_add_rmsnorm_inplace_3d(const Run& r, LL B, LL S, LL H, unsigned seed) {
  const float eps = 1e-5f;
  const LL M = B * S;
  const auto x0 = rnd<bf16>(M * H, seed, -2.f, 2.f), r0 = rnd<bf16>(M * H, seed + 1, -2.f, 2.f), w = rnd<bf16>(H, seed + 2, 0.5f, 1.5f);
  DevLocal<bf16> xd({B, S, H}, x0), rd({B, S, H}, r0), wd({H}, w);
  const int before = begin_case(r);
  if (run(r, "fused_add_rmsnorm_inplace_3d", 1, xd.view(), rd.view(), wd.view(), eps)) {
    std::vector<double> h(M * H);
    for (LL i = 0; i < M * H; ++i) h[i] = bf16r(float(val(x0[i])) + float(val(r0[i])));
    check(r, "fused_add_rmsnorm_inplace_3d.res", rd.download(), [&](LL i) { return h[i]; }, exact());
    const auto want = rmsnorm_rows(M, H, eps, [&](LL i) { return h[i]; }, [&](LL j) { return val(w[j]); });
    check(r, "fused_add_rmsnorm_inplace_3d.x", xd.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-5 * std::fabs(want[i]) + 1e-6; });
  }
  end_case(r, "fused_add_rmsnorm_inplace_3d " + dims({B, S, H}), before);
}

// rope_neox_inplace_pos_i64: q [S, H, 128] rotated in place by angle = f32(pos[s]) * inv_freq[j] (the
// product in f32, as the kernel forms it), halves of 64; positions up to 4096, 0 among them.
void rope_neox_inplace_pos_i64(const Run& r, LL S, LL H, unsigned seed) {
  const LL D = 128;
  const auto q0 = rnd<bf16>(S * H * D, seed, -2.f, 2.f);
  auto pos = ints<long long>(S, 0, 4096, seed + 1);
  pos[0] = 0, pos[S - 1] = 4096;
  std::vector<float> inv(64);
  for (int j = 0; j < 64; ++j) inv[j] = float(std::pow(10000.0, -2.0 * j / 128.0));
  DevLocal<bf16> qd({S, H, D}, q0);
  DevLocal<long long> pd({S}, pos);
  DevLocal<float> id({64}, inv);
  const int before = begin_case(r);
  if (run(r, "rope_neox_inplace_pos_i64", 1, qd.view(), pd.view(), id.view())) {
    auto want = [&](LL i) {
      const LL s = i / (H * D), row = i / D, c = i % D, j = c % 64;
      const double ang = double(float(pos[s]) * inv[j]);
      const double x1 = val(q0[row * D + j]), x2 = val(q0[row * D + 64 + j]);
      return c < 64 ? x1 * std::cos(ang) - x2 * std::sin(ang) : x2 * std::cos(ang) + x1 * std::sin(ang);
    };
    check(r, "rope_neox_inplace_pos_i64.q", qd.download(), want, [&](LL i) {
      const LL row = i / D, j = i % 64;
      return kBf * std::fabs(want(i)) + 2e-6 * (std::fabs(val(q0[row * D + j])) + std::fabs(val(q0[row * D + 64 + j])));
    });
  }
  end_case(r, "rope_neox_inplace_pos_i64 " + dims({S, H}), before);
}

// adafactor_factored_update: r[m] = mean_n g^2 + eps, c[n] = mean_m g^2 (adds into a zeroed [1, N]),
// rsum = sum_m r[m] (adds into a zeroed [1, 1]), u = g rsqrt(r[m] (c[n] + eps) / rsum). Two launches.
void adafactor_factored_update(const Run& r, LL M, LL N, unsigned seed) {
  const float eps = 1e-3f;
  const auto g = rnd<float>(M * N, seed);
  DevLocal<float> gd({M, N}, g), rr({M}, {}), c({1, N}, {}), rs({1, 1}, {}), u({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "adafactor_factored_update", 2, gd.view(), rr.view(), c.view(), rs.view(), u.view(), eps)) {
    std::vector<double> wr(M, 0.0), wc(N, 0.0);
    for (LL i = 0; i < M * N; ++i) wr[i / N] += double(g[i]) * g[i], wc[i % N] += double(g[i]) * g[i];
    double R = 0;
    for (LL m = 0; m < M; ++m) wr[m] = wr[m] / N + eps, R += wr[m];
    for (LL n = 0; n < N; ++n) wc[n] /= M;
    check(r, "adafactor_factored_update.r", rr.download(), [&](LL m) { return wr[m]; }, [&](LL m) { return 1e-5 * wr[m]; });
    check(r, "adafactor_factored_update.c", c.download(), [&](LL n) { return wc[n]; }, [&](LL n) { return 1e-5 * wc[n] + 1e-9; });
    check(r, "adafactor_factored_update.rsum", rs.download(), [&](LL) { return R; }, [&](LL) { return 1e-5 * R; });
    check(r, "adafactor_factored_update.u", u.download(),
          [&](LL i) { return g[i] / std::sqrt(wr[i / N] * (wc[i % N] + eps) / R); },
          [&](LL i) { return 3e-5 * std::fabs(g[i] / std::sqrt(wr[i / N] * (wc[i % N] + eps) / R)) + 1e-7; });
  }
  end_case(r, "adafactor_factored_update " + dims({M, N}), before);
}

// bias_ln_grad_3d_store_add: db[h] = sum over (b, s) of dy, dg[h] = sum of dy xhat ([1, H] f32, zeroed
// by the kernel; two launches).
void bias_ln_grad_3d_store_add(const Run& r, LL B, LL S, LL H, unsigned seed) {
  const auto dy = rnd<bf16>(B * S * H, seed), xh = rnd<bf16>(B * S * H, seed + 1, -3.f, 3.f);
  DevLocal<bf16> dyd({B, S, H}, dy), xd({B, S, H}, xh);
  DevLocal<float> db({1, H}, {}), dg({1, H}, {});
  const int before = begin_case(r);
  if (run(r, "bias_ln_grad_3d_store_add", 2, dyd.view(), xd.view(), db.view(), dg.view())) {
    std::vector<double> wb(H, 0.0), mb(H, 0.0), wg(H, 0.0), mg(H, 0.0);
    for (LL i = 0; i < B * S * H; ++i) {
      const double d = val(dy[i]), t = d * val(xh[i]);
      wb[i % H] += d, mb[i % H] += std::fabs(d), wg[i % H] += t, mg[i % H] += std::fabs(t);
    }
    check(r, "bias_ln_grad_3d_store_add.db", db.download(), [&](LL i) { return wb[i]; }, [&](LL i) { return 1e-5 * mb[i] + 1e-7; });
    check(r, "bias_ln_grad_3d_store_add.dg", dg.download(), [&](LL i) { return wg[i]; }, [&](LL i) { return 1e-5 * mg[i] + 1e-7; });
  }
  end_case(r, "bias_ln_grad_3d_store_add " + dims({B, S, H}), before);
}

// ================================================================ scans, index math ==

// top_p_mask_sorted_inplace: rows of descending probabilities; p[j] kept where sum_{k < j} p[k] < top_p,
// else 0 (in place, one launch). A mass within 1e-4 of top_p (the fp32 running sum's error) accepts
// either answer.
void top_p_mask_sorted_inplace(const Run& r, LL M, LL N, float top_p, unsigned seed) {
  auto p = rnd<float>(M * N, seed, 0.f, 1.f);
  for (LL m = 0; m < M; ++m) {
    std::sort(p.begin() + m * N, p.begin() + (m + 1) * N, std::greater<float>());
    double s = 0;
    for (LL j = 0; j < N; ++j) s += p[m * N + j];
    for (LL j = 0; j < N; ++j) p[m * N + j] = float(p[m * N + j] / s);
  }
  DevLocal<float> pd({M, N}, p);
  const int before = begin_case(r);
  if (run(r, "top_p_mask_sorted_inplace", 1, pd.view(), top_p)) {
    std::vector<double> before_mass(M * N);
    for (LL m = 0; m < M; ++m) {
      double s = 0;
      for (LL j = 0; j < N; ++j) before_mass[m * N + j] = s, s += p[m * N + j];
    }
    const auto got = pd.download();
    LL bad = 0;
    for (LL i = 0; i < M * N; ++i) {
      const double b = before_mass[i], keep = p[i], g = got[i];
      const bool either = std::fabs(b - top_p) < 1e-4;
      const bool ok = either ? (g == keep || g == 0.0) : g == (b < top_p ? keep : 0.0);
      if (!ok && bad++ < 3)
        pkt::fail("top_p_mask_sorted_inplace.probs element " + std::to_string(i) + ": got " + std::to_string(g) +
                  ", want " + std::to_string(b < top_p ? keep : 0.0));
    }
  }
  end_case(r, "top_p_mask_sorted_inplace " + dims({M, N}) + " top_p=" + std::to_string(top_p), before);
}

// position_ids_from_mask_i64: pos = (running count of ones in the row) - 1 where mask = 1, 1 where 0.
// Rows: left padding, right padding, all zeros, all ones, random.
void position_ids_from_mask_i64(const Run& r, LL B, LL L, unsigned seed) {
  auto mask = ints<long long>(B * L, 0, 1, seed);
  for (LL j = 0; j < L; ++j) mask[j] = j >= L / 3, mask[L + j] = j < L - 50, mask[2 * L + j] = 0, mask[3 * L + j] = 1;
  DevLocal<long long> md({B, L}, mask), pos({B, L}, {});
  const int before = begin_case(r);
  if (run(r, "position_ids_from_mask_i64", 2, md.view(), pos.view())) {
    std::vector<double> want(B * L);
    for (LL b = 0; b < B; ++b) {
      LL c = 0;
      for (LL j = 0; j < L; ++j) c += mask[b * L + j], want[b * L + j] = mask[b * L + j] ? double(c - 1) : 1.0;
    }
    check(r, "position_ids_from_mask_i64.pos", pos.download(), [&](LL i) { return want[i]; }, exact());
  }
  end_case(r, "position_ids_from_mask_i64 " + dims({B, L}), before);
}

// pad_from_packed_i64: out[b, s] = packed[cu[b] + s] for s < cu[b + 1] - cu[b], else 0 (lengths 0 and S
// among them).
void pad_from_packed_i64(const Run& r, LL B, LL S, LL H, unsigned seed) {
  auto lens = ints<long long>(B, 0, S, seed);
  lens[0] = 0, lens[1] = S, lens[B - 1] = 1;
  std::vector<long long> cu(B + 1, 0);
  for (LL b = 0; b < B; ++b) cu[b + 1] = cu[b] + lens[b];
  const LL T = std::max<LL>(cu[B], 1);
  const auto packed = rnd<bf16>(T * H, seed + 1);
  DevLocal<bf16> pk_({T, H}, packed), out({B, S, H}, {});
  DevLocal<long long> cud({B + 1}, cu);
  const int before = begin_case(r);
  if (run(r, "pad_from_packed_i64", 2, pk_.view(), cud.view(), out.view()))
    check(r, "pad_from_packed_i64.out", out.download(), [&](LL i) {
      const LL b = i / (S * H), s = (i / H) % S, h = i % H;
      return s < lens[b] ? val(packed[(cu[b] + s) * H + h]) : 0.0;
    }, exact());
  end_case(r, "pad_from_packed_i64 " + dims({B, S, H}), before);
}

// compact_kept_rows: tile_cnt [T / 256] the kept rows of each 256-token tile, tile_off their exclusive
// sums, y's first (kept count) rows the kept rows of x in order; y's other rows untouched (poison).
void compact_kept_rows(const Run& r, LL T, LL H, unsigned seed) {
  const LL NT = (T + 255) / 256;
  auto keep = ints<int>(T, 0, 1, seed);
  for (LL t = 256; t < std::min<LL>(512, T); ++t) keep[t] = 0;  // a tile that keeps nothing
  keep[0] = 1, keep[T - 1] = 1;
  const auto x = rnd<bf16>(T * H, seed + 1);
  DevLocal<int> kd({T}, keep), cnt({NT}, {}), off({NT}, {});
  DevLocal<bf16> xd({T, H}, x), y({T, H}, {});
  const int before = begin_case(r);
  if (run(r, "compact_kept_rows", 2, kd.view(), xd.view(), cnt.view(), off.view(), y.view())) {
    std::vector<double> wc(NT, 0.0), wo(NT, 0.0);
    std::vector<LL> src;
    for (LL t = 0; t < T; ++t)
      if (keep[t]) wc[t / 256] += 1, src.push_back(t);
    for (LL j = 1; j < NT; ++j) wo[j] = wo[j - 1] + wc[j - 1];
    const LL kept = LL(src.size());
    check(r, "compact_kept_rows.tile_cnt", cnt.download(), [&](LL j) { return wc[j]; }, exact());
    check(r, "compact_kept_rows.tile_off", off.download(), [&](LL j) { return wo[j]; }, exact());
    const auto got = y.download();
    std::vector<bf16> head(got.begin(), got.begin() + kept * H);
    check(r, "compact_kept_rows.y", head, [&](LL i) { return val(x[src[i / H] * H + i % H]); }, exact());
    check_untouched(r, "compact_kept_rows.y (rows past the kept count)", got, [&](LL i) { return i >= kept * H; });
  }
  end_case(r, "compact_kept_rows " + dims({T, H}), before);
}

// smoothquant_int8_per_token: s[m] = max_n |x smooth| / 127 (1 for a zero row), q = clamp(round half
// away from zero(x smooth / s), -127, 127) (i32). Within 1e-4 of a rounding point one unit either way.
void smoothquant_int8_per_token(const Run& r, LL M, LL N, unsigned seed) {
  auto x = rnd<bf16>(M * N, seed, -3.f, 3.f);
  for (LL j = 0; j < N; ++j) x[2 * N + j] = pkt::from_host<bf16>(0.f);  // a zero row
  const auto sm = rnd<float>(N, seed + 1, 0.5f, 2.f);
  DevLocal<bf16> xd({M, N}, x);
  DevLocal<float> smd({N}, sm), sc({M}, {});
  DevLocal<int> q({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "smoothquant_int8_per_token", 2, xd.view(), smd.view(), q.view(), sc.view())) {
    std::vector<double> s(M);
    for (LL m = 0; m < M; ++m) {
      float amax = 0;
      for (LL j = 0; j < N; ++j) amax = std::max(amax, std::fabs(float(val(x[m * N + j])) * sm[j]));
      s[m] = amax > 0 ? double(amax * (1.0f / 127.0f)) : 1.0;
    }
    check(r, "smoothquant_int8_per_token.scale", sc.download(), [&](LL m) { return s[m]; }, [&](LL m) { return 1e-6 * s[m]; });
    const auto got = q.download();
    LL bad = 0;
    for (LL i = 0; i < M * N; ++i) {
      const double v = double(float(val(x[i])) * sm[i % N]) / s[i / N];
      const double rv = v + (v >= 0 ? 0.5 : -0.5);
      const double want = std::min(std::max(std::trunc(rv), -127.0), 127.0);
      const double frac = std::fabs(rv - std::round(rv));  // distance of rv from an integer
      const double tol = frac < 1e-4 ? 1.0 : 0.0;
      if (!(std::fabs(got[i] - want) <= tol) && bad++ < 3)
        pkt::fail("smoothquant_int8_per_token.q element " + std::to_string(i) + ": got " + std::to_string(got[i]) +
                  ", want " + std::to_string(want));
    }
  }
  end_case(r, "smoothquant_int8_per_token " + dims({M, N}), before);
}

// kv_cache_append_4d: cache[b, h, pos[b], :] = knew[b, h, :] (positions 0, L - 1, L (dropped) and -1
// (dropped) among them); every other element keeps its value.
void kv_cache_append_4d(const Run& r, LL B, LL H, LL L, unsigned seed) {
  const LL D = 64;
  auto pos = ints<int>(B, 0, int(L - 1), seed);
  pos[0] = 0, pos[1] = int(L - 1), pos[2] = int(L), pos[3] = -1;
  const auto kn = rnd<f16>(B * H * D, seed + 1), c0 = rnd<f16>(B * H * L * D, seed + 2);
  DevLocal<f16> kd({B, H, D}, kn), cache({B, H, L, D}, c0);
  DevLocal<int> pd({B}, pos);
  const int before = begin_case(r);
  if (run(r, "kv_cache_append_4d", 1, kd.view(), pd.view(), cache.view())) {
    std::vector<double> want(B * H * L * D);
    for (LL i = 0; i < B * H * L * D; ++i) want[i] = val(c0[i]);
    for (LL b = 0; b < B; ++b)
      if (pos[b] >= 0 && pos[b] < L)
        for (LL h = 0; h < H; ++h)
          for (LL d = 0; d < D; ++d) want[((b * H + h) * L + pos[b]) * D + d] = val(kn[(b * H + h) * D + d]);
    check(r, "kv_cache_append_4d.cache", cache.download(), [&](LL i) { return want[i]; }, exact());
  }
  end_case(r, "kv_cache_append_4d " + dims({B, H, L}), before);
}

// softmax_temp_3d_odd_chunks: p = f16(softmax over the last dimension of x inv_temp), [B, S, V].
void softmax_temp_3d_odd_chunks(const Run& r, LL B, LL S, LL V, unsigned seed) {
  const float inv_temp = 1.0f / 0.7f;
  const auto x = rnd<float>(B * S * V, seed, -6.f, 6.f);
  DevLocal<float> xd({B, S, V}, x);
  DevLocal<f16> p({B, S, V}, {});
  const int before = begin_case(r);
  if (run(r, "softmax_temp_3d_odd_chunks", 2, xd.view(), p.view(), inv_temp)) {
    std::vector<double> want(B * S * V);
    for (LL row = 0; row < B * S; ++row) {
      double mx = -1e300, s = 0;
      for (LL j = 0; j < V; ++j) mx = std::max(mx, double(x[row * V + j]) * inv_temp);
      for (LL j = 0; j < V; ++j) s += std::exp(double(x[row * V + j]) * inv_temp - mx);
      for (LL j = 0; j < V; ++j) want[row * V + j] = std::exp(double(x[row * V + j]) * inv_temp - mx) / s;
    }
    check(r, "softmax_temp_3d_odd_chunks.p", p.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 2 * kHf * std::fabs(want[i]) + 1e-7; });
  }
  end_case(r, "softmax_temp_3d_odd_chunks " + dims({B, S, V}), before);
}

// cumsum_down_columns: y[t, d] = sum_{u <= t} x[u, d] (f32).
void cumsum_down_columns(const Run& r, LL T, LL D, unsigned seed) {
  const auto x = rnd<float>(T * D, seed);
  DevLocal<float> xd({T, D}, x), y({T, D}, {});
  const int before = begin_case(r);
  if (run(r, "cumsum_down_columns", 2, xd.view(), y.view())) {
    std::vector<double> want(T * D), mag(T * D);
    for (LL t = 0; t < T; ++t)
      for (LL d = 0; d < D; ++d) {
        const LL i = t * D + d;
        want[i] = (t ? want[i - D] : 0.0) + x[i], mag[i] = (t ? mag[i - D] : 0.0) + std::fabs(x[i]);
      }
    check(r, "cumsum_down_columns.y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "cumsum_down_columns " + dims({T, D}), before);
}

// moe_expert_counts_store_add: counts [1, 64] of the ids 0 .. 63 in [T, Kc] (-1 and 64 not counted),
// offsets their exclusive sums; counts zeroed by the kernel (two launches).
void moe_expert_counts_store_add(const Run& r, LL T, LL Kc, unsigned seed) {
  auto ids = ints<int>(T * Kc, -1, 64, seed);
  ids[0] = 0, ids[1] = 63, ids[2] = -1, ids[T * Kc - 1] = 64;
  DevLocal<int> idd({T, Kc}, ids), cnt({1, 64}, {}), off({1, 64}, {});
  const int before = begin_case(r);
  if (run(r, "moe_expert_counts_store_add", 2, idd.view(), cnt.view(), off.view())) {
    std::vector<double> wc(64, 0.0), wo(64, 0.0);
    for (int e : ids)
      if (e >= 0 && e < 64) wc[e] += 1;
    for (int e = 1; e < 64; ++e) wo[e] = wo[e - 1] + wc[e - 1];
    check(r, "moe_expert_counts_store_add.counts", cnt.download(), [&](LL e) { return wc[e]; }, exact());
    check(r, "moe_expert_counts_store_add.offsets", off.download(), [&](LL e) { return wo[e]; }, exact());
  }
  end_case(r, "moe_expert_counts_store_add " + dims({T, Kc}), before);
}

// ================================================================ tensor-parallel layers (multi-rank) ==

// tp_gather_k_then_gemm: xf [M, W Kl] = the column all-gather of every rank's xs [M, Kl]; y = bf16(xf wᵀ),
// w [N, W Kl] this rank's.
void tp_gather_k_then_gemm(const Run& r, const std::string& k, LL M, LL Kl, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL Kd = W * Kl;
  std::vector<std::vector<bf16>> xs(W);
  for (int p = 0; p < W; ++p) xs[p] = rnd<bf16>(M * Kl, seed + p);
  const auto w = rnd<bf16>(N * Kd, seed + 10 + me);
  SymArg<bf16> xsd(r.ctx, {M, Kl}, &xs[me]), xf(r.ctx, {M, Kd}, nullptr);
  DevLocal<bf16> wd({N, Kd}, w), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, xsd.view, xf.view, wd.view(), y.view())) {
    auto xv = [&](LL m, LL q) { return val(xs[q / Kl][m * Kl + q % Kl]); };
    check(r, k + ".xf", xf.download(), [&](LL i) { return xv(i / Kd, i % Kd); }, exact());
    std::vector<double> want, mag;
    matmul(M, N, Kd, xv, [&](LL q, LL n) { return val(w[n * Kd + q]); }, want, mag);
    check(r, k + ".y", y.download(), [&](LL i) { return want[i]; }, bf_tol(want, mag));
  }
  end_case(r, k + " " + dims({M, Kl, N}), before);
}

// tp_row_linear_rs_cols_bias_gelu: part = x wᵀ (f32 [M, W Nl]) per rank; shard [M, Nl] = column block
// `rank` of the sum over ranks; y = bf16(gelu_erf(shard + bias[rank Nl + j])), bias [W Nl] the same on
// every rank.
void tp_row_linear_rs_cols_bias_gelu(const Run& r, const std::string& k, LL M, LL Kd, LL Nl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL N = W * Nl;
  std::vector<std::vector<double>> P(W), G(W);
  std::vector<bf16> xm, wm;
  for (int p = 0; p < W; ++p) {
    const auto x = rnd<bf16>(M * Kd, seed + p), w = rnd<bf16>(N * Kd, seed + 10 + p);
    matmul(M, N, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(w[n * Kd + q]); }, P[p], G[p]);
    if (p == me) xm = x, wm = w;
  }
  const auto bias = rnd<float>(N, seed + 20);
  DevLocal<bf16> xd({M, Kd}, xm), wd({N, Kd}, wm), y({M, Nl}, {});
  DevLocal<float> biasd({N}, bias);
  SymArg<float> part(r.ctx, {M, N}, nullptr), shard(r.ctx, {M, Nl}, nullptr);
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), wd.view(), part.view, shard.view, biasd.view(), y.view())) {
    check(r, k + ".part", part.download(), [&](LL i) { return P[me][i]; }, f32_tol(G[me]));
    std::vector<double> s(M * Nl, 0.0), g(M * Nl, 0.0), want(M * Nl);
    for (LL i = 0; i < M * Nl; ++i) {
      const LL j = (i / Nl) * N + me * Nl + i % Nl;
      for (int p = 0; p < W; ++p) s[i] += P[p][j], g[i] += G[p][j];
      want[i] = gelu_erf(s[i] + bias[me * Nl + i % Nl]);
    }
    check(r, k + ".shard", shard.download(), [&](LL i) { return s[i]; }, f32_tol(g));
    check(r, k + ".y", y.download(), [&](LL i) { return want[i]; }, bf_tol(want, g, gelu_erf_slope()));
  }
  end_case(r, k + " " + dims({M, Kd, Nl}), before);
}

// tp_lm_head_softcap_gather_vocab: part [M, Vl] = cap tanh(h embᵀ / cap) where the global column
// rank Vl + j < vocab, else -1e4; logits [M, W Vl] the column all-gather (vocab = W Vl - 37: the last
// rank's last 37 rows are padding). The template's tanh is tanh.approx: 1e-3 of the cap.
void tp_lm_head_softcap_gather_vocab(const Run& r, const std::string& k, LL M, LL Kd, LL Vl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL V = W * Vl, vocab = V - 37;
  const float cap = 30.f;
  const auto h = rnd<bf16>(M * Kd, seed, -2.f, 2.f);
  std::vector<std::vector<bf16>> emb(W);
  for (int p = 0; p < W; ++p) emb[p] = rnd<bf16>(Vl * Kd, seed + 10 + p, -2.f, 2.f);
  DevLocal<bf16> hd({M, Kd}, h), ed({Vl, Kd}, emb[me]);
  SymArg<float> part(r.ctx, {M, Vl}, nullptr);
  DevLocal<float> logits({M, V}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, hd.view(), ed.view(), part.view, logits.view(), vocab, cap)) {
    std::vector<double> want(M * V), tol(M * V), a, mag;
    for (int p = 0; p < W; ++p) {
      matmul(M, Vl, Kd, [&](LL m, LL q) { return val(h[m * Kd + q]); }, [&](LL q, LL n) { return val(emb[p][n * Kd + q]); },
             a, mag);
      for (LL i = 0; i < M * Vl; ++i) {
        const LL col = p * Vl + i % Vl, o = (i / Vl) * V + col;
        const bool live = col < vocab;
        want[o] = live ? cap * std::tanh(a[i] / cap) : -1e4;
        tol[o] = live ? 1e-3 * cap * std::fabs(std::tanh(a[i] / cap)) + 1e-5 * mag[i] + 1e-6 : 0.0;
      }
    }
    check(r, k + ".part", part.download(), [&](LL i) { return want[(i / Vl) * V + me * Vl + i % Vl]; },
          [&](LL i) { return tol[(i / Vl) * V + me * Vl + i % Vl]; });
    check(r, k + ".logits", logits.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
  }
  end_case(r, k + " " + dims({M, Kd, Vl}), before);
}

// tp_gather_hidden_layernorm: xf [M, W Hl] the column all-gather of every rank's xs [M, Hl] (f32);
// y = bf16(LayerNorm(xf) g + b) over whole rows (g, b [W Hl]).
void tp_gather_hidden_layernorm(const Run& r, LL M, LL Hl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL H = W * Hl;
  const float eps = 1e-5f;
  std::vector<std::vector<float>> xs(W);
  for (int p = 0; p < W; ++p) xs[p] = rnd<float>(M * Hl, seed + p, -2.f, 3.f);
  const auto g = rnd<float>(H, seed + 10, 0.5f, 1.5f), b = rnd<float>(H, seed + 11);
  SymArg<float> xsd(r.ctx, {M, Hl}, &xs[me]), xf(r.ctx, {M, H}, nullptr);
  DevLocal<float> gd({H}, g), bd({H}, b);
  DevLocal<bf16> y({M, H}, {});
  const int before = begin_case(r);
  if (run(r, "tp_gather_hidden_layernorm", 2, xsd.view, xf.view, gd.view(), bd.view(), y.view(), eps)) {
    auto xv = [&](LL m, LL c) { return double(xs[c / Hl][m * Hl + c % Hl]); };
    check(r, "tp_gather_hidden_layernorm.xf", xf.download(), [&](LL i) { return xv(i / H, i % H); }, exact());
    std::vector<double> want(M * H), tol(M * H);
    for (LL m = 0; m < M; ++m) {
      double mu = 0, var = 0;
      for (LL c = 0; c < H; ++c) mu += xv(m, c);
      mu /= H;
      for (LL c = 0; c < H; ++c) var += (xv(m, c) - mu) * (xv(m, c) - mu);
      const double rs = 1 / std::sqrt(var / H + eps);
      for (LL c = 0; c < H; ++c) {
        const double t = (xv(m, c) - mu) * rs * g[c];
        want[m * H + c] = t + b[c], tol[m * H + c] = kBf * std::fabs(want[m * H + c]) + 1e-5 * (std::fabs(t) + 1) + 1e-6;
      }
    }
    check(r, "tp_gather_hidden_layernorm.y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
  }
  end_case(r, "tp_gather_hidden_layernorm " + dims({M, Hl}), before);
}

// sp_rs_cols_residual_inplace_f16: shard [M, Hl] = f16 of column block `rank` of the sum over ranks of
// part [M, W Hl]; res = f16(res + shard) in place (checked exactly from the shard the kernel wrote);
// y = f16(res rsqrt(mean(res^2) + eps) w) (from the res it wrote). One launch.
void sp_rs_cols_residual_inplace_f16(const Run& r, LL M, LL Hl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL N = W * Hl;
  const float eps = 1e-5f;
  std::vector<std::vector<f16>> part(W);
  for (int p = 0; p < W; ++p) part[p] = rnd<f16>(M * N, seed + p);
  const auto res0 = rnd<f16>(M * Hl, seed + 10 + me, -2.f, 2.f), w = rnd<f16>(Hl, seed + 20, 0.5f, 1.5f);
  SymArg<f16> pd(r.ctx, {M, N}, &part[me]), shard(r.ctx, {M, Hl}, nullptr);
  DevLocal<f16> rd({M, Hl}, res0), wd({Hl}, w), y({M, Hl}, {});
  const int before = begin_case(r);
  if (run(r, "sp_rs_cols_residual_inplace_f16", 1, pd.view, shard.view, rd.view(), wd.view(), y.view(), eps)) {
    std::vector<double> s(M * Hl, 0.0), g(M * Hl, 0.0);
    for (LL i = 0; i < M * Hl; ++i)
      for (int p = 0; p < W; ++p) {
        const double v = val(part[p][(i / Hl) * N + me * Hl + i % Hl]);
        s[i] += v, g[i] += std::fabs(v);
      }
    const auto sh = shard.download();
    check(r, "sp_rs_cols_residual_inplace_f16.shard", sh, [&](LL i) { return s[i]; },
          [&](LL i) { return kHf * std::fabs(s[i]) + 1e-6 * g[i] + 1e-7; });
    const auto rs = rd.download();
    check(r, "sp_rs_cols_residual_inplace_f16.res", rs,
          [&](LL i) { return f16r(float(val(res0[i])) + float(val(sh[i]))); }, exact());
    const auto want = rmsnorm_rows(M, Hl, eps, [&](LL i) { return val(rs[i]); }, [&](LL j) { return val(w[j]); });
    check(r, "sp_rs_cols_residual_inplace_f16.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kHf * std::fabs(want[i]) + 1e-5 * std::fabs(want[i]) + 1e-6; });
  }
  end_case(r, "sp_rs_cols_residual_inplace_f16 " + dims({M, Hl}), before);
}

// tp_vocab_argmax: best [M, 2] = (this rank's row maximum, the global column of its first occurrence);
// all_best [M, 2 W] the column all-gather; token = the lowest global column holding the global maximum.
// Row 0 all equal on every rank (token 0), row 1's maximum at the last rank's last column only, row 2
// tied between rank 0 column 5 and the last rank column 3.
void tp_vocab_argmax(const Run& r, LL M, LL Vl, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> lg(W);
  for (int p = 0; p < W; ++p) {
    const auto li = ints<int>(M * Vl, -8, 8, seed + p);
    lg[p].resize(M * Vl);
    for (LL i = 0; i < M * Vl; ++i) lg[p][i] = 0.5f * float(li[i]);
    for (LL j = 0; j < Vl; ++j) lg[p][j] = 1.f;
  }
  lg[W - 1][Vl + Vl - 1] = 100.f;
  lg[0][2 * Vl + 5] = 50.f, lg[W - 1][2 * Vl + 3] = 50.f;
  DevLocal<float> ld({M, Vl}, lg[me]);
  SymArg<float> best(r.ctx, {M, 2}, nullptr), all(r.ctx, {M, 2 * W}, nullptr);
  DevLocal<long long> tok({M}, {});
  const int before = begin_case(r);
  if (run(r, "tp_vocab_argmax", 2, ld.view(), best.view, all.view, tok.view())) {
    std::vector<double> bv(W * M), bi(W * M);
    for (int p = 0; p < W; ++p)
      for (LL m = 0; m < M; ++m) {
        LL j0 = 0;
        for (LL j = 1; j < Vl; ++j)
          if (lg[p][m * Vl + j] > lg[p][m * Vl + j0]) j0 = j;
        bv[p * M + m] = lg[p][m * Vl + j0], bi[p * M + m] = double(p * Vl + j0);
      }
    check(r, "tp_vocab_argmax.best", best.download(), [&](LL i) { return i % 2 ? bi[me * M + i / 2] : bv[me * M + i / 2]; }, exact());
    check(r, "tp_vocab_argmax.all_best", all.download(), [&](LL i) {
      const LL m = i / (2 * W), p = (i % (2 * W)) / 2;
      return i % 2 ? bi[p * M + m] : bv[p * M + m];
    }, exact());
    check(r, "tp_vocab_argmax.token", tok.download(), [&](LL m) {
      int bp = 0;
      for (int p = 1; p < W; ++p)
        if (bv[p * M + m] > bv[bp * M + m]) bp = p;
      return bi[bp * M + m];
    }, exact());
  }
  end_case(r, "tp_vocab_argmax " + dims({M, Vl}), before);
}

// ================================================================ ring shifts and peers (multi-rank) ==

// ring_shift_kv_3d_4d: kr on rank r = k of rank r - 1 (3-D), vr on rank r = v of rank r + 1 (4-D).
void ring_shift_kv_3d_4d(const Run& r, LL H, LL S, LL D, LL B, LL Hv, LL Sv, LL Dv, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> kk(W);
  std::vector<std::vector<f16>> vv(W);
  for (int p = 0; p < W; ++p) kk[p] = rnd<bf16>(H * S * D, seed + p), vv[p] = rnd<f16>(B * Hv * Sv * Dv, seed + 10 + p);
  DevLocal<bf16> kd({H, S, D}, kk[me]);
  DevLocal<f16> vd({B, Hv, Sv, Dv}, vv[me]);
  SymArg<bf16> kr(r.ctx, {H, S, D}, nullptr);
  SymArg<f16> vr(r.ctx, {B, Hv, Sv, Dv}, nullptr);
  const int before = begin_case(r);
  if (run(r, "ring_shift_kv_3d_4d", 2, kd.view(), vd.view(), kr.view, vr.view)) {
    const int prev = (me + W - 1) % W, next = (me + 1) % W;
    check(r, "ring_shift_kv_3d_4d.kr", kr.download(), [&](LL i) { return val(kk[prev][i]); }, exact());
    check(r, "ring_shift_kv_3d_4d.vr", vr.download(), [&](LL i) { return val(vv[next][i]); }, exact());
  }
  end_case(r, "ring_shift_kv_3d_4d " + dims({H, S, D, B, Hv, Sv, Dv}), before);
}

// ring_add_next_then_bias: acc on rank r = alpha x of rank r - 1 (zeroed by the kernel, two launches);
// y = bf16(acc + bias) with this rank's bias.
void ring_add_next_then_bias(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const float alpha = 0.5f;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(M * N, seed + p);
  const auto bias = rnd<float>(N, seed + 10 + me);
  DevLocal<float> xd({M, N}, x[me]), bd({N}, bias);
  SymArg<float> acc(r.ctx, {M, N}, nullptr);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "ring_add_next_then_bias", 2, xd.view(), acc.view, bd.view(), y.view(), alpha)) {
    const int prev = (me + W - 1) % W;
    check(r, "ring_add_next_then_bias.acc", acc.download(), [&](LL i) { return double(alpha) * x[prev][i]; }, exact());
    check(r, "ring_add_next_then_bias.y", y.download(), [&](LL i) { return double(alpha) * x[prev][i] + bias[i % N]; },
          [&](LL i) { return kBf * std::fabs(double(alpha) * x[prev][i] + bias[i % N]) + 1e-7; });
  }
  end_case(r, "ring_add_next_then_bias " + dims({M, N}), before);
}

#ifdef PK_SPECS18_W1
// w1_conv1d_bwd_store_add / w1_conv1d_bwd_store: dx = dx0 + w[0] dy[t] + w[1] dy[t + 1] (dy[T] = 0), one
// launch on a random dx0. Before the fix the store_add form left dx[39] at dx0 (T = 40) and all of
// row 32 (T = 33) (finding 1); both forms must pass.
void w1_conv1d_bwd(const Run& r, const std::string& k, LL T, LL C, unsigned seed) {
  const auto dy = rnd<float>(T * C, seed), w = rnd<float>(2 * C, seed + 1), dx0 = rnd<float>(T * C, seed + 2);
  DevLocal<float> dyd({T, C}, dy), wd({2, C}, w), dx({T, C}, dx0);
  const int before = begin_case(r);
  if (run(r, k, 1, dyd.view(), wd.view(), dx.view())) {
    auto want = [&](LL i) {
      const LL t = i / C, c = i % C;
      return double(dx0[i]) + double(w[c]) * dy[i] + (t + 1 < T ? double(w[C + c]) * dy[i + C] : 0.0);
    };
    check(r, k + ".dx", dx.download(), want, [&](LL i) { return 1e-6 * (std::fabs(dx0[i]) + 2) + 1e-7; });
  }
  end_case(r, k + " " + dims({T, C}), before);
}
#endif

// ================================================================ the cases ==

void single_gpu_cases(const Run& r) {
  unsigned s = 5000;
  // GEMMs: the template at K, N % 8 == 0 (M and N not multiples of the tiles), its twin at K = 50 and
  // N = 100; both compiles at each.
  for (const std::string path : {"", "/general"}) {
    linear_ab_f16_bias_gelu_erf(r, "linear_ab_f16_bias_gelu_erf" + path, 200, 136, 264, s += 100);
    linear_ab_f16_bias_gelu_erf(r, "linear_ab_f16_bias_gelu_erf" + path, 70, 50, 100, s += 100);
    w8a8_dequant_rowcol_clamp(r, "w8a8_dequant_rowcol_clamp" + path, 200, 136, 264, s += 100);
    w8a8_dequant_rowcol_clamp(r, "w8a8_dequant_rowcol_clamp" + path, 70, 50, 100, s += 100);
    linear_t_alpha_beta_f32(r, "linear_t_alpha_beta_f32" + path, 200, 136, 264, s += 100);
    linear_t_alpha_beta_f32(r, "linear_t_alpha_beta_f32" + path, 70, 50, 100, s += 100);
    gemm_t_accumulate_inplace_f32(r, "gemm_t_accumulate_inplace_f32" + path, 200, 136, 264, s += 100);
    gemm_t_accumulate_inplace_f32(r, "gemm_t_accumulate_inplace_f32" + path, 70, 50, 100, s += 100);
    lora_merge_inplace(r, "lora_merge_inplace" + path, 200, 16, 264, s += 100);
    lora_merge_inplace(r, "lora_merge_inplace" + path, 70, 12, 100, s += 100);
    gemm_ab_relu2_odd_f16(r, "gemm_ab_relu2_odd_f16" + path, 200, 136, 264, s += 100);
    gemm_ab_relu2_odd_f16(r, "gemm_ab_relu2_odd_f16" + path, 70, 50, 100, s += 100);
    gemm_t_colscale_tanh_f16out(r, "gemm_t_colscale_tanh_f16out" + path, 200, 136, 264, s += 100);
    gemm_t_colscale_tanh_f16out(r, "gemm_t_colscale_tanh_f16out" + path, 70, 50, 100, s += 100);
    bmm_t_causal_batch_scale_f16(r, "bmm_t_causal_batch_scale_f16" + path, 3, 200, 136, 264, s += 100);
    bmm_t_causal_batch_scale_f16(r, "bmm_t_causal_batch_scale_f16" + path, 3, 70, 50, 100, s += 100);
    bmm_kn_residual_bias_bf16(r, "bmm_kn_residual_bias_bf16" + path, 3, 200, 136, 264, s += 100);
    bmm_kn_residual_bias_bf16(r, "bmm_kn_residual_bias_bf16" + path, 3, 70, 50, 100, s += 100);
    bmm_shared_w_gelu_erf_f32(r, "bmm_shared_w_gelu_erf_f32" + path, 3, 200, 136, 264, s += 100);
    bmm_shared_w_gelu_erf_f32(r, "bmm_shared_w_gelu_erf_f32" + path, 3, 70, 50, 100, s += 100);
    linear_dgrad_ab(r, "linear_dgrad_ab" + path, 200, 136, 264, s += 100);
    linear_dgrad_ab(r, "linear_dgrad_ab" + path, 70, 50, 100, s += 100);
    rmsnorm_then_linear(r, "rmsnorm_then_linear" + path, 70, 256, 264, s += 100);
    rmsnorm_then_linear(r, "rmsnorm_then_linear" + path, 37, 100, 100, s += 100);
    linear_residual_then_layernorm(r, "linear_residual_then_layernorm" + path, 70, 136, 264, s += 100);
    linear_residual_then_layernorm(r, "linear_residual_then_layernorm" + path, 37, 50, 1000, s += 100);
    // The weight gradient on the template's M-major A (dy's columns a multiple of 8) and on its twin.
    linear_wgrad_transposed_a(r, "linear_wgrad_transposed_a" + path, 200, 264, 136, s += 100);
    linear_wgrad_transposed_a(r, "linear_wgrad_transposed_a" + path, 150, 100, 70, s += 100);
    // Attention on the template (and with templates off): sequence lengths that are not multiples of
    // 64 or 128.
    gqa_softcap_alibi_causal_d128(r, "gqa_softcap_alibi_causal_d128" + path, 4, 2, 150, s += 100);
    gqa_softcap_alibi_causal_d128(r, "gqa_softcap_alibi_causal_d128" + path, 3, 1, 77, s += 100);
    prefix_lm_attention_d64(r, "prefix_lm_attention_d64" + path, 3, 150, 70, s += 100);
    prefix_lm_attention_d64(r, "prefix_lm_attention_d64" + path, 2, 77, 100, s += 100);
    sliding_window_gqa_f16_d64(r, "sliding_window_gqa_f16_d64" + path, 4, 2, 150, 50, s += 100);
    sliding_window_gqa_f16_d64(r, "sliding_window_gqa_f16_d64" + path, 3, 1, 77, 1, s += 100);
    cross_attention_klen_d128(r, "cross_attention_klen_d128" + path, 4, 100, 150, s += 100);
    cross_attention_klen_d128(r, "cross_attention_klen_d128" + path, 3, 33, 77, s += 100);
    chunked_prefill_softcap_d128(r, "chunked_prefill_softcap_d128" + path, 70, 150, s += 100);
    chunked_prefill_softcap_d128(r, "chunked_prefill_softcap_d128" + path, 100, 100, s += 100);
  }
  splitk_gemm_t_store_add(r, 100, 70, 600, s += 100);
  splitk_gemm_t_store_add(r, 37, 130, 200, s += 100);
  linear_l2norm_rows(r, 70, 100, 200, s += 100);
  linear_l2norm_rows(r, 37, 64, 256, s += 100);
  qkv_proj_split_planes(r, 70, 128, s += 100);
  qkv_proj_split_planes(r, 37, 64, s += 100);
  attn_probs_4d_causal(r, 2, 3, 100, 64, s += 100);
  attn_probs_4d_causal(r, 1, 2, 77, 40, s += 100);
  causal_attention_d96_general(r, 3, 100, s += 100);
  causal_attention_d96_general(r, 2, 33, s += 100);
  attention_4d_causal_d64(r, 2, 3, 100, s += 100);
  moe_expert_swiglu_batched(r, 3, 50, 70, 100, s += 100);
  linear_log_softmax_odd(r, 50, 100, 150, s += 100);
  linear_log_softmax_odd(r, 24, 48, 200, s += 100);
  fused_add_rmsnorm_inplace_3d(r, 2, 37, 1000, s += 100);
  rope_neox_inplace_pos_i64(r, 37, 5, s += 100);
  adafactor_factored_update(r, 100, 300, s += 100);
  bias_ln_grad_3d_store_add(r, 3, 37, 300, s += 100);
  top_p_mask_sorted_inplace(r, 37, 600, 0.9f, s += 100);
  top_p_mask_sorted_inplace(r, 37, 600, 0.3f, s += 100);
  position_ids_from_mask_i64(r, 37, 300, s += 100);
  pad_from_packed_i64(r, 5, 70, 300, s += 100);
  compact_kept_rows(r, 1000, 100, s += 100);
  compact_kept_rows(r, 300, 64, s += 100);
  smoothquant_int8_per_token(r, 37, 1000, s += 100);
  kv_cache_append_4d(r, 6, 6, 20, s += 100);
  softmax_temp_3d_odd_chunks(r, 2, 37, 300, s += 100);
  cumsum_down_columns(r, 100, 100, s += 100);
  moe_expert_counts_store_add(r, 300, 3, s += 100);
  moe_expert_counts_store_add(r, 130, 8, s += 100);
#ifdef PK_SPECS18_W1
  for (const char* k : {"w1_conv1d_bwd_store", "w1_conv1d_bwd_store_add"}) {
    w1_conv1d_bwd(r, k, 40, 300, s += 100);
    w1_conv1d_bwd(r, k, 33, 300, s += 100);
  }
#endif
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  // The GEMM kernels beside collectives: the template at K, N % 8 == 0, the twin at odd K; both compiles.
  for (const std::string path : {"", "/general"}) {
    tp_gather_k_then_gemm(r, "tp_gather_k_then_gemm" + path, 200, 64, 264, s += 100);
    tp_gather_k_then_gemm(r, "tp_gather_k_then_gemm" + path, 70, 25, 100, s += 100);
    tp_row_linear_rs_cols_bias_gelu(r, "tp_row_linear_rs_cols_bias_gelu" + path, 200, 136, 136, s += 100);
    tp_row_linear_rs_cols_bias_gelu(r, "tp_row_linear_rs_cols_bias_gelu" + path, 70, 50, 100, s += 100);
    tp_lm_head_softcap_gather_vocab(r, "tp_lm_head_softcap_gather_vocab" + path, 200, 136, 136, s += 100);
    tp_lm_head_softcap_gather_vocab(r, "tp_lm_head_softcap_gather_vocab" + path, 70, 50, 100, s += 100);
  }
  tp_gather_hidden_layernorm(r, 37, 300, s += 100);
  sp_rs_cols_residual_inplace_f16(r, 37, 300, s += 100);
  tp_vocab_argmax(r, 37, 700, s += 100);
  ring_shift_kv_3d_4d(r, 3, 70, 100, 2, 3, 37, 100, s += 100);
  ring_add_next_then_bias(r, 37, 300, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs18_jit_test");
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs18_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

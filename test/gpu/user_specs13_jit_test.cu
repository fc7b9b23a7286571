// The thirteenth user-written spec set (test/specs/user_specs13.pk.cpp) through the JIT, each kernel
// against a float64 host reference on fresh random inputs, with every output poisoned (NaN, or
// all-ones integers) first. All 57 kernels of the set are covered:
// - the twelve f16 attention kernels on the Hopper attention template (also with templates =
//   false, "name/general") and the three mixed-type attention kernels on the general path;
// - the nine GEMMs on the Hopper GEMM template (also "name/general"), each at a size the template
//   takes and at one that sends it to its general-path twin (K or N not whole 16-byte rows), and
//   the three GEMMs on the general path;
// - three norms / softmax;
// - the 27 multi-rank kernels (explicit primitives with tiles of the trailing dimensions,
//   hand-written protocols, collectives along dimensions 1 and 2), at W = 1, 2 and 3 (ranks
//   sharing one GPU; PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others).
// The single-GPU kernels run at W = 1 only. Shapes leave partial tiles (37-row blocks, 300- and
// 1000-column rows, odd sequence lengths). Inputs that a kernel also writes (g4's c, c5's out,
// p3's buf) start from random data instead of the poison. Skipped: nothing. Not checked: row 0 of
// v_strict_causal (no key is visible to it: undefined, as the spec says), and c10's batches that
// another rank owns (never written there); the planes of p1 / p2's out and the columns of g11's c
// that the kernels must not write are checked to still hold the poison. One PASS or FAIL line per
// case.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>

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
    // f16 attention on the template, then the mixed types on the general path
    {"a_f16_d64", true}, {"gqa_f16_causal_d128", true}, {"alibi_f16_d64", true}, {"softcap_f16_d128", true},
    {"window_f16_d64", true}, {"causal_f16_d128_bm128", true}, {"bias3d_f16_d64", true}, {"keymask_f16_d64", true},
    {"w_k128", true}, {"w_k32", true}, {"v_bottom_right", true}, {"v_strict_causal", true},
    {"a_mix_o_bf16", false}, {"a_mix_v_bf16", false}, {"a_f16_o_f32", false},
    // primitives with tiles of the trailing dimensions
    {"p1_store4d", false}, {"p2_store1d_in3d", false}, {"p3_row_into_1d", false}, {"p4_reduce4d", false},
    {"p5_reduce_row1d", false}, {"p8_row_from2d", false}, {"p10_col_into_1d", false},
    {"b9_mma_trailing_peer", false}, {"b10_reduce_4d_1d_tile", false}, {"b5_reduce_i32_max_3d", false},
    // hand-written protocols
    {"c1_ring_heads", false}, {"c2_ag_planes", false}, {"c3_adds_4d", false}, {"c4_reduce_heads_block", false},
    {"c5_double_buffer_planes", false}, {"c6_ring_ag_forward", false}, {"c7_mirror_exchange_heads", false},
    {"c8_two_shot_heads", false}, {"c9_per_tile_flags_heads", false}, {"c10_rows_to_owner", false},
    {"c11_halo_heads", false},
    // GEMM epilogues
    {"g1_f16_bias_res_relu", true}, {"g2_bf16_rowscale_silu_f32", true}, {"g3_f16_in_bf16_out", true},
    {"g4_accumulate_into_c", true}, {"g5_row_col_bias", true}, {"g6_k_from_64", false},
    {"g7_k_bound_bcols", true}, {"g8_bounds_args", false}, {"g9_vocab_mask_f32", true},
    {"g10_scalar_at_arg", true}, {"g11_out_col_offset", false}, {"g12_rowparity_i32", true},
    // norms, softmax, collectives along other dimensions
    {"m1_layernorm_f16", false}, {"m2_softmax_bf16", false}, {"m3_rmsnorm_3d", false},
    {"m4_ag_dim1", false}, {"m5_rs_dim1_bias", false}, {"m6_ag_dim2", false}, {"m7_rs_dim1_3d_max", false},
    {"m8_ag_dim1_inplace", false}, {"m9_ar_then_colnorm", false},
};
// The template kernels also run with templates = false ("name/general").
const std::vector<const char*> kGeneralToo = {
    "a_f16_d64", "gqa_f16_causal_d128", "alibi_f16_d64", "softcap_f16_d128", "window_f16_d64",
    "causal_f16_d128_bm128", "bias3d_f16_d64", "keymask_f16_d64", "w_k128", "w_k32", "v_bottom_right",
    "v_strict_causal", "g1_f16_bias_res_relu", "g2_bf16_rowscale_silu_f32", "g3_f16_in_bf16_out",
    "g4_accumulate_into_c", "g5_row_col_bias", "g7_k_bound_bcols", "g9_vocab_mask_f32", "g10_scalar_at_arg",
    "g12_rowparity_i32"};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS13_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs13", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host data ----



// The elements of `v` whose flat index passes `keep`, in order.
template <class T>
std::vector<T> pick(const std::vector<T>& v, const std::function<bool(LL)>& keep) {
  std::vector<T> o;
  for (LL i = 0; i < LL(v.size()); ++i)
    if (keep(i)) o.push_back(v[i]);
  return o;
}
std::vector<LL> pick_index(LL n, const std::function<bool(LL)>& keep) {
  std::vector<LL> o;
  for (LL i = 0; i < n; ++i)
    if (keep(i)) o.push_back(i);
  return o;
}

// ================================================================ attention ==

// Softmax attention in float64 of every head: q [H, Sq, D] (or [Sq, D]), k and v [Hkv, Sk, D] (head
// h reads kv head h / (H / Hkv)), scores score(h, i, j, q_i . k_j) with keys where keep(h, i, j) is
// false masked; o, and lse where lse_shape is not empty. Rows that defined(i) rejects are not
// checked. `launch` runs the kernel on (q, k, v, o, lse).
template <class TV, class TO>
void attn_case(const Run& r, const std::string& k, const std::string& tag, LL H, LL Hkv, LL Sq, LL Sk, LL D,
               bool heads, std::vector<LL> lse_shape, unsigned seed,
               const std::function<double(LL, LL, LL, double)>& score, const std::function<bool(LL, LL, LL)>& keep,
               const std::function<bool(LL)>& defined, double orel,
               const std::function<bool(const pk::Tensor<f16>&, const pk::Tensor<f16>&, const pk::Tensor<TV>&,
                                        const pk::Tensor<TO>&, const pk::Tensor<float>&)>& launch) {
  const auto q = rnd<f16>(H * Sq * D, seed), kk = rnd<f16>(Hkv * Sk * D, seed + 1);
  const auto v = rnd<TV>(Hkv * Sk * D, seed + 2);
  std::vector<LL> qs = heads ? std::vector<LL>{H, Sq, D} : std::vector<LL>{Sq, D};
  std::vector<LL> ks = heads ? std::vector<LL>{Hkv, Sk, D} : std::vector<LL>{Sk, D};
  const bool has_lse = !lse_shape.empty();
  DevLocal<f16> qd(qs, q), kd(ks, kk);
  DevLocal<TV> vd(ks, v);
  DevLocal<TO> o(qs, {});
  DevLocal<float> lse(has_lse ? lse_shape : std::vector<LL>{1}, {});
  const int before = begin_case(r);
  if (launch(qd.view(), kd.view(), vd.view(), o.view(), lse.view())) {
    std::vector<double> wo(H * Sq * D, 0.0), wl(H * Sq, 0.0), p(Sk);
    for (LL h = 0; h < H; ++h) {
      const LL g = h / (H / Hkv);
      for (LL i = 0; i < Sq; ++i) {
        if (!defined(i)) continue;
        double m = -1e300, s = 0;
        for (LL j = 0; j < Sk; ++j) {
          if (!keep(h, i, j)) continue;
          double d = 0;
          for (LL c = 0; c < D; ++c) d += val(q[(h * Sq + i) * D + c]) * val(kk[(g * Sk + j) * D + c]);
          p[j] = score(h, i, j, d), m = std::max(m, p[j]);
        }
        for (LL j = 0; j < Sk; ++j) p[j] = keep(h, i, j) ? std::exp(p[j] - m) : 0.0, s += p[j];
        for (LL j = 0; j < Sk; ++j)
          if (p[j] != 0)
            for (LL c = 0; c < D; ++c) wo[(h * Sq + i) * D + c] += p[j] / s * val(v[(g * Sk + j) * D + c]);
        wl[h * Sq + i] = m + std::log(s);
      }
    }
    auto rows = [&](LL i) { return defined((i / D) % Sq); };
    const auto oi = pick_index(H * Sq * D, rows);
    check(r, k + ".o", pick<TO>(o.download(), rows), [&](LL i) { return wo[oi[i]]; },
          [&](LL i) { return orel * std::fabs(wo[oi[i]]) + 2e-3; });
    if (has_lse) {
      auto lrows = [&](LL i) { return defined(i % Sq); };
      const auto li = pick_index(H * Sq, lrows);
      check(r, k + ".lse", pick<float>(lse.download(), lrows), [&](LL i) { return wl[li[i]]; },
            [&](LL i) { return 1e-3 * std::fabs(wl[li[i]]) + 2e-3; });
    }
  }
  end_case(r, k + " " + tag, before);
}

using T16 = pk::Tensor<f16>;
using TBF = pk::Tensor<bf16>;
using TF = pk::Tensor<float>;
const auto kAll = [](LL) { return true; };
const auto kNoMask = [](LL, LL, LL) { return true; };
const auto kCausal = [](LL, LL i, LL j) { return j <= i; };
constexpr double kAttF16 = 4 * kHf;  // o's bound: f16 p and o

void attention_cases(const Run& r, unsigned& s) {
  const float sc64 = 0.125f, sc128 = float(1 / std::sqrt(128.0));
  auto plain = [](float sc) { return [sc](LL, LL, LL, double d) { return d * sc; }; };
  for (std::string k : {"a_f16_d64", "a_f16_d64/general"})
    attn_case<f16, f16>(r, k, dims({150, 230}), 1, 1, 150, 230, 64, false, {}, s += 100, plain(sc64), kNoMask, kAll,
                        kAttF16, [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF&) {
                          return run(r, k, 2, q, kk, v, o, sc64);
                        });
  for (std::string k : {"gqa_f16_causal_d128", "gqa_f16_causal_d128/general"}) {
    const LL H = 4, Hkv = 2, S = 201;
    attn_case<f16, f16>(r, k, dims({H, Hkv, S}), H, Hkv, S, S, 128, true, {H, S, 1}, s += 100, plain(sc128), kCausal,
                        kAll, kAttF16, [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF& l) {
                          return run(r, k, 2, q, kk, v, o, l, H / Hkv, sc128);
                        });
  }
  for (std::string k : {"alibi_f16_d64", "alibi_f16_d64/general"}) {
    const LL H = 3, S = 201;
    auto score = [=](LL h, LL i, LL j, double d) {
      const double slope = std::pow(2.0, -8.0 * double(h + 1) / double(H));
      return d * sc64 - double(i - j) * slope;
    };
    attn_case<f16, f16>(r, k, dims({H, S}), H, H, S, S, 64, true, {}, s += 100, score, kCausal, kAll, kAttF16,
                        [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF&) {
                          return run(r, k, 2, q, kk, v, o, sc64);
                        });
  }
  for (std::string k : {"softcap_f16_d128", "softcap_f16_d128/general"}) {
    const float cap = 0.5f;
    auto score = [=](LL, LL, LL, double d) { return std::tanh(d * (double(sc128) / cap)) * cap; };
    attn_case<f16, f16>(r, k, dims({150, 230}), 1, 1, 150, 230, 128, false, {150}, s += 100, score, kNoMask, kAll,
                        kAttF16, [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF& l) {
                          return run(r, k, 2, q, kk, v, o, l, sc128, cap);
                        });
  }
  for (std::string k : {"window_f16_d64", "window_f16_d64/general"}) {
    const LL H = 2, S = 301, window = 100;
    auto keep = [=](LL, LL i, LL j) { return j <= i && j > i - window; };
    attn_case<f16, f16>(r, k, dims({H, S, window}), H, H, S, S, 64, true, {H, S, 1}, s += 100, plain(sc64), keep, kAll,
                        kAttF16, [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF& l) {
                          return run(r, k, 2, q, kk, v, o, l, window, sc64);
                        });
  }
  for (std::string k : {"causal_f16_d128_bm128", "causal_f16_d128_bm128/general"})
    attn_case<f16, f16>(r, k, dims({201}), 1, 1, 201, 201, 128, false, {}, s += 100, plain(sc128), kCausal, kAll,
                        kAttF16, [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF&) {
                          return run(r, k, 2, q, kk, v, o, sc128);
                        });
  for (std::string k : {"bias3d_f16_d64", "bias3d_f16_d64/general"}) {
    const LL H = 2, Sq = 150, Sk = 230;
    const auto bias = rnd<f16>(H * Sq * Sk, s + 50);
    DevLocal<f16> bd({H, Sq, Sk}, bias);
    auto score = [&](LL h, LL i, LL j, double d) { return d * sc64 + val(bias[(h * Sq + i) * Sk + j]); };
    attn_case<f16, f16>(r, k, dims({H, Sq, Sk}), H, H, Sq, Sk, 64, true, {}, s += 100, score, kNoMask, kAll, kAttF16,
                        [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF&) {
                          return run(r, k, 2, q, kk, v, o, bd.view(), sc64);
                        });
  }
  for (std::string k : {"keymask_f16_d64", "keymask_f16_d64/general"}) {
    const LL Sq = 150, Sk = 230;
    const auto bits = ints<int>(Sk, 0, 1, s + 50);
    std::vector<f16> keep(Sk);
    for (LL j = 0; j < Sk; ++j) keep[j] = pkt::from_host<f16>(j == 0 || bits[j] ? 1.f : 0.f);
    DevLocal<f16> kd({Sk}, keep);
    auto kp = [&](LL, LL, LL j) { return val(keep[j]) > 0.5; };
    attn_case<f16, f16>(r, k, dims({Sq, Sk}), 1, 1, Sq, Sk, 64, false, {}, s += 100, plain(sc64), kp, kAll, kAttF16,
                        [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF&) {
                          return run(r, k, 2, q, kk, v, o, kd.view(), sc64);
                        });
  }
  for (std::string k : {"w_k128", "w_k128/general", "w_k32", "w_k32/general"})
    attn_case<f16, f16>(r, k, dims({201}), 1, 1, 201, 201, 64, false, {}, s += 100, plain(sc64), kCausal, kAll,
                        kAttF16, [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF&) {
                          return run(r, k, 2, q, kk, v, o, sc64);
                        });
  for (std::string k : {"v_bottom_right", "v_bottom_right/general"})
    for (LL off : {LL(80), LL(3)}) {  // the bottom-right diagonal of 150 queries on 230 keys, and a small one
      const LL Sq = 150, Sk = 230;
      auto keep = [=](LL, LL i, LL j) { return j <= i + off; };
      attn_case<f16, f16>(r, k, dims({Sq, Sk, off}), 1, 1, Sq, Sk, 64, false, {Sq, 1}, s += 100, plain(sc64), keep,
                          kAll, kAttF16, [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF& l) {
                            return run(r, k, 2, q, kk, v, o, l, off, sc64);
                          });
    }
  for (std::string k : {"v_strict_causal", "v_strict_causal/general"}) {
    const LL S = 201;
    auto keep = [](LL, LL i, LL j) { return j < i; };
    attn_case<f16, f16>(r, k, dims({S}) + " (row 0 not checked)", 1, 1, S, S, 64, false, {S, 1}, s += 100,
                        plain(sc64), keep, [](LL i) { return i > 0; }, kAttF16,
                        [&](const T16& q, const T16& kk, const T16& v, const T16& o, const TF& l) {
                          return run(r, k, 2, q, kk, v, o, l, LL(0), sc64);
                        });
  }
  // Mixed types on the general path.
  attn_case<f16, bf16>(r, "a_mix_o_bf16", dims({150, 230}), 1, 1, 150, 230, 64, false, {}, s += 100, plain(sc64),
                       kNoMask, kAll, 2 * kBf, [&](const T16& q, const T16& kk, const T16& v, const TBF& o, const TF&) {
                         return run(r, "a_mix_o_bf16", 2, q, kk, v, o, sc64);
                       });
  attn_case<bf16, f16>(r, "a_mix_v_bf16", dims({150, 230}), 1, 1, 150, 230, 64, false, {}, s += 100, plain(sc64),
                       kNoMask, kAll, 2 * kBf, [&](const T16& q, const T16& kk, const TBF& v, const T16& o, const TF&) {
                         return run(r, "a_mix_v_bf16", 2, q, kk, v, o, sc64);
                       });
  attn_case<f16, float>(r, "a_f16_o_f32", dims({150, 230}), 1, 1, 150, 230, 128, false, {}, s += 100, plain(sc128),
                        kNoMask, kAll, kAttF16, [&](const T16& q, const T16& kk, const T16& v, const TF& o, const TF&) {
                          return run(r, "a_f16_o_f32", 2, q, kk, v, o, sc128);
                        });
}

// ================================================================ GEMMs ==

// P[m, n] = sum over q < Kd of A(m, q) B(n, q), and mag[m, n] the sum of |A(m, q) B(n, q)|.
void gemm_ref(LL M, LL N, LL Kd, const std::function<double(LL, LL)>& A, const std::function<double(LL, LL)>& B,
              std::vector<double>& P, std::vector<double>& mag, LL k0 = 0) {
  P.assign(M * N, 0.0), mag.assign(M * N, 0.0);
  std::vector<double> a(Kd), b(Kd);
  for (LL m = 0; m < M; ++m) {
    for (LL q = k0; q < Kd; ++q) a[q] = A(m, q);
    for (LL n = 0; n < N; ++n) {
      double s = 0, g = 0;
      for (LL q = k0; q < Kd; ++q) {
        const double t = a[q] * B(n, q);
        s += t, g += std::fabs(t);
      }
      P[m * N + n] = s, mag[m * N + n] = g;
    }
  }
}

// g1. c = f16(relu(a b^T + bias[n] + r)), f16 everywhere.
void g1_f16_bias_res_relu(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f16>(M * Kd, seed, -0.5f, 0.5f), b = rnd<f16>(N * Kd, seed + 1, -0.5f, 0.5f);
  const auto bias = rnd<f16>(N, seed + 2), res = rnd<f16>(M * N, seed + 3);
  DevLocal<f16> ad({M, Kd}, a), bd({N, Kd}, b), biasd({N}, bias), rd({M, N}, res), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), biasd.view(), rd.view(), c.view())) {
    std::vector<double> P, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); },
             P, mag);
    auto want = [&](LL i) { return std::max(P[i] + val(bias[i % N]) + val(res[i]), 0.0); };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kHf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// g2. c = silu((a b) * s[m]) in f32, B [K, N].
void g2_bf16_rowscale_silu_f32(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(Kd * N, seed + 1);
  const auto sc = rnd<float>(M, seed + 2, 0.5f, 1.5f);
  DevLocal<bf16> ad({M, Kd}, a), bd({Kd, N}, b);
  DevLocal<float> sd({M}, sc), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), sd.view(), c.view())) {
    std::vector<double> P, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[q * N + n]); },
             P, mag);
    auto want = [&](LL i) { return silu(P[i] * sc[i / N]); };
    check(r, k + ".c", c.download(), want,
          [&](LL i) { return 1e-5 * std::fabs(want(i)) + 1.2e-5 * mag[i] * sc[i / N] + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// g3. c = bf16(a b), f16 operands, B [K, N].
void g3_f16_in_bf16_out(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<f16>(M * Kd, seed), b = rnd<f16>(Kd * N, seed + 1);
  DevLocal<f16> ad({M, Kd}, a), bd({Kd, N}, b);
  DevLocal<bf16> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), c.view())) {
    std::vector<double> P, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[q * N + n]); },
             P, mag);
    check(r, k + ".c", c.download(), [&](LL i) { return P[i]; },
          [&](LL i) { return kBf * std::fabs(P[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// g4. c = bf16(a b^T + c): one launch (c is read and written).
void g4_accumulate_into_c(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1), c0 = rnd<bf16>(M * N, seed + 2, -4.f, 4.f);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), c({M, N}, c0);
  const int before = begin_case(r);
  if (run(r, k, 1, ad.view(), bd.view(), c.view())) {
    std::vector<double> P, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); },
             P, mag);
    auto want = [&](LL i) { return P[i] + val(c0[i]); };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// g5. c = bf16(gelu_erf(a b^T + rb[0, n] - cb[m, 0])).
void g5_row_col_bias(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1), rb = rnd<bf16>(N, seed + 2);
  const auto cb = rnd<float>(M, seed + 3);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), rbd({1, N}, rb), c({M, N}, {});
  DevLocal<float> cbd({M, 1}, cb);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), rbd.view(), cbd.view(), c.view())) {
    std::vector<double> P, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); },
             P, mag);
    auto want = [&](LL i) { return gelu_erf(P[i] + val(rb[i % N]) - cb[i / N]); };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 2e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// Plain bf16 c = bf16(a b^T) over q in [k0, kend) of the kernels g6, g7 and g8; a [M, Ka], b [N, Kb].
void plain_gemm_t(const Run& r, const std::string& k, LL M, LL Ka, LL Kb, LL N, LL k0, LL kend, bool klen_arg,
                  unsigned seed) {
  const auto a = rnd<bf16>(M * Ka, seed), b = rnd<bf16>(N * Kb, seed + 1);
  DevLocal<bf16> ad({M, Ka}, a), bd({N, Kb}, b), c({M, N}, {});
  const int before = begin_case(r);
  const bool ok = klen_arg ? run(r, k, 2, ad.view(), bd.view(), c.view(), kend)
                           : run(r, k, 2, ad.view(), bd.view(), c.view());
  if (ok) {
    std::vector<double> P, mag;
    gemm_ref(M, N, kend, [&](LL m, LL q) { return val(a[m * Ka + q]); }, [&](LL n, LL q) { return val(b[n * Kb + q]); },
             P, mag, k0);
    check(r, k + ".c", c.download(), [&](LL i) { return P[i]; },
          [&](LL i) { return kBf * std::fabs(P[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Ka, Kb, N, k0, kend}), before);
}

// g9. Logits into f32, columns at or past vocab -1e4.
void g9_vocab_mask_f32(const Run& r, const std::string& k, LL M, LL Kd, LL N, LL vocab, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), c.view(), vocab)) {
    std::vector<double> P, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); },
             P, mag);
    auto want = [&](LL i) { return i % N < vocab ? P[i] : -1e4; };
    check(r, k + ".c", c.download(), want, [&](LL i) { return 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({M, Kd, N, vocab}), before);
}

// g10. c = bf16(a b^T sc[layer] + bias2d[layer, n]).
void g10_scalar_at_arg(const Run& r, const std::string& k, LL M, LL Kd, LL N, LL L, LL layer, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1), bias = rnd<bf16>(L * N, seed + 2);
  const auto sc = rnd<float>(L, seed + 3, 0.5f, 2.f);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), biasd({L, N}, bias), c({M, N}, {});
  DevLocal<float> scd({L}, sc);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), scd.view(), biasd.view(), c.view(), layer)) {
    std::vector<double> P, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); },
             P, mag);
    auto want = [&](LL i) { return P[i] * sc[layer] + val(bias[layer * N + i % N]); };
    check(r, k + ".c", c.download(), want,
          [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] * sc[layer] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N, L, layer}), before);
}

// g11. a b^T stored at columns off.. of c [M, N + off] (the columns before off are not checked).
void g11_out_col_offset(const Run& r, LL M, LL Kd, LL N, LL off, unsigned seed) {
  const std::string k = "g11_out_col_offset";
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  const LL Nc = N + off;
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), c({M, Nc}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), c.view(), off)) {
    std::vector<double> P, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); },
             P, mag);
    auto cols = [&](LL i) { return i % Nc >= off; };
    const auto got = c.download();
    check(r, k + ".c", pick<bf16>(got, cols), [&](LL i) { return P[i]; },
          [&](LL i) { return kBf * std::fabs(P[i]) + 1e-5 * mag[i] + 1e-4; });
    check_untouched(r, k + ".c (columns before the offset)", got, [&](LL i) { return !cols(i); });
  }
  end_case(r, k + " " + dims({M, Kd, N, off}), before);
}

// g12. a b^T kept on even rows with keep[m] != 0, zero elsewhere.
void g12_rowparity_i32(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(N * Kd, seed + 1);
  const auto keep = ints<int>(M, -2, 2, seed + 2);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), c({M, N}, {});
  DevLocal<int> kd({M}, keep);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), kd.view(), c.view())) {
    std::vector<double> P, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); },
             P, mag);
    auto want = [&](LL i) { const LL m = i / N; return m % 2 == 0 && keep[m] != 0 ? P[i] : 0.0; };
    check(r, k + ".c", c.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

void gemm_cases(const Run& r, unsigned& s) {
  // Each template kernel at a size its template takes and at one that sends it to the twin.
  for (std::string k : {"g1_f16_bias_res_relu", "g1_f16_bias_res_relu/general"}) {
    g1_f16_bias_res_relu(r, k, 200, 72, 136, s += 100);
    g1_f16_bias_res_relu(r, k, 70, 50, 100, s += 100);  // K = 50: the twin
  }
  for (std::string k : {"g2_bf16_rowscale_silu_f32", "g2_bf16_rowscale_silu_f32/general"}) {
    g2_bf16_rowscale_silu_f32(r, k, 200, 72, 136, s += 100);
    g2_bf16_rowscale_silu_f32(r, k, 70, 48, 100, s += 100);  // N = 100 (B [K, N]): the twin
  }
  for (std::string k : {"g3_f16_in_bf16_out", "g3_f16_in_bf16_out/general"}) {
    g3_f16_in_bf16_out(r, k, 200, 72, 264, s += 100);
    g3_f16_in_bf16_out(r, k, 70, 50, 100, s += 100);
  }
  for (std::string k : {"g4_accumulate_into_c", "g4_accumulate_into_c/general"}) {
    g4_accumulate_into_c(r, k, 200, 72, 136, s += 100);
    g4_accumulate_into_c(r, k, 70, 50, 100, s += 100);
  }
  for (std::string k : {"g5_row_col_bias", "g5_row_col_bias/general"}) {
    g5_row_col_bias(r, k, 200, 72, 264, s += 100);
    g5_row_col_bias(r, k, 70, 50, 100, s += 100);
  }
  plain_gemm_t(r, "g6_k_from_64", 70, 150, 150, 100, 64, 150, false, s += 100);
  for (std::string k : {"g7_k_bound_bcols", "g7_k_bound_bcols/general"}) {
    plain_gemm_t(r, k, 200, 72, 72, 136, 0, 72, false, s += 100);
    plain_gemm_t(r, k, 70, 80, 50, 100, 0, 50, false, s += 100);  // B has fewer K columns than A: the twin
  }
  // K bounded by klen = 128 of 150 columns (a multiple of the step, so the bound is the sum's).
  plain_gemm_t(r, "g8_bounds_args", 70, 150, 150, 100, 0, 128, true, s += 100);
  for (std::string k : {"g9_vocab_mask_f32", "g9_vocab_mask_f32/general"}) {
    g9_vocab_mask_f32(r, k, 200, 72, 136, 100, s += 100);
    g9_vocab_mask_f32(r, k, 70, 50, 100, 77, s += 100);
  }
  for (std::string k : {"g10_scalar_at_arg", "g10_scalar_at_arg/general"}) {
    g10_scalar_at_arg(r, k, 200, 72, 136, 3, 1, s += 100);
    g10_scalar_at_arg(r, k, 70, 50, 100, 3, 2, s += 100);
  }
  g11_out_col_offset(r, 70, 72, 100, 37, s += 100);
  for (std::string k : {"g12_rowparity_i32", "g12_rowparity_i32/general"}) {
    g12_rowparity_i32(r, k, 200, 72, 136, s += 100);
    g12_rowparity_i32(r, k, 70, 50, 100, s += 100);
  }
}

// ================================================================ norms ==

// m1. LayerNorm of 1024 f16 columns, f32 weight and bias.
void m1_layernorm_f16(const Run& r, LL T, unsigned seed) {
  const LL H = 1024;
  const float eps = 1e-5f;
  const auto x = rnd<f16>(T * H, seed, -2.f, 3.f);
  const auto w = rnd<float>(H, seed + 1, 0.5f, 1.5f), b = rnd<float>(H, seed + 2);
  DevLocal<f16> xd({T, H}, x), y({T, H}, {});
  DevLocal<float> wd({H}, w), bd({H}, b);
  const int before = begin_case(r);
  if (run(r, "m1_layernorm_f16", 2, xd.view(), wd.view(), bd.view(), y.view(), eps)) {
    std::vector<double> want(T * H);
    for (LL t = 0; t < T; ++t) {
      double mu = 0, var = 0;
      for (LL j = 0; j < H; ++j) mu += val(x[t * H + j]);
      mu /= H;
      for (LL j = 0; j < H; ++j) var += (val(x[t * H + j]) - mu) * (val(x[t * H + j]) - mu);
      const double rs = 1 / std::sqrt(var / H + eps);
      for (LL j = 0; j < H; ++j) want[t * H + j] = (val(x[t * H + j]) - mu) * rs * w[j] + b[j];
    }
    check(r, "m1_layernorm_f16.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 2 * kHf * std::fabs(want[i]) + 1e-3; });
  }
  end_case(r, "m1_layernorm_f16 " + dims({T, H}), before);
}

// m2. Row softmax of 2048 bf16 columns.
void m2_softmax_bf16(const Run& r, LL T, unsigned seed) {
  const LL V = 2048;
  const auto x = rnd<bf16>(T * V, seed, -5.f, 5.f);
  DevLocal<bf16> xd({T, V}, x), y({T, V}, {});
  const int before = begin_case(r);
  if (run(r, "m2_softmax_bf16", 2, xd.view(), y.view())) {
    std::vector<double> want(T * V);
    for (LL t = 0; t < T; ++t) {
      double m = -1e300, s = 0;
      for (LL v = 0; v < V; ++v) m = std::max(m, val(x[t * V + v]));
      for (LL v = 0; v < V; ++v) s += std::exp(val(x[t * V + v]) - m);
      for (LL v = 0; v < V; ++v) want[t * V + v] = std::exp(val(x[t * V + v]) - m) / s;
    }
    check(r, "m2_softmax_bf16.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * want[i] + 1e-7; });
  }
  end_case(r, "m2_softmax_bf16 " + dims({T, V}), before);
}

// m3. RMSNorm of [B, S, 512] bf16.
void m3_rmsnorm_3d(const Run& r, LL B, LL S, unsigned seed) {
  const LL H = 512;
  const float eps = 1e-6f;
  const auto x = rnd<bf16>(B * S * H, seed, -2.f, 2.f), w = rnd<bf16>(H, seed + 1, 0.5f, 1.5f);
  DevLocal<bf16> xd({B, S, H}, x), wd({H}, w), y({B, S, H}, {});
  const int before = begin_case(r);
  if (run(r, "m3_rmsnorm_3d", 2, xd.view(), wd.view(), y.view(), eps)) {
    std::vector<double> want(B * S * H);
    for (LL t = 0; t < B * S; ++t) {
      double ss = 0;
      for (LL j = 0; j < H; ++j) ss += val(x[t * H + j]) * val(x[t * H + j]);
      const double rs = 1 / std::sqrt(ss / H + eps);
      for (LL j = 0; j < H; ++j) want[t * H + j] = val(x[t * H + j]) * rs * val(w[j]);
    }
    check(r, "m3_rmsnorm_3d.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-4; });
  }
  end_case(r, "m3_rmsnorm_3d " + dims({B, S, H}), before);
}

// ================================================================ multi-rank ==

// Every rank's data for a symmetric input: data[q] is rank q's, from seed + q.
template <class T>
std::vector<std::vector<T>> per_rank(int W, LL n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::vector<std::vector<T>> d(W);
  for (int q = 0; q < W; ++q) d[q] = rnd<T>(n, seed + q, lo, hi);
  return d;
}
int prev_of(const Run& r) { return (r.me + r.W - 1) % r.W; }
int next_of(const Run& r) { return (r.me + 1) % r.W; }

// p1. x pushed into plane [1, 2] of next's buf [2, 3, R, C]; out's plane [1, 2] = that plane.
void p1_store4d(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = per_rank<float>(r.W, R * C, seed);
  const int prev = prev_of(r);
  SymArg<float> xd(r.ctx, {R, C}, &x[r.me]), buf(r.ctx, {2, 3, R, C}, nullptr);
  DevLocal<float> out({2, 3, R, C}, {});
  const int before = begin_case(r);
  if (run(r, "p1_store4d", 2, xd.view, buf.view, out.view())) {
    const LL plane = (1 * 3 + 2) * R * C;
    auto in_plane = [&](LL i) { return i >= plane && i < plane + R * C; };
    check(r, "p1_store4d.buf", pick<float>(buf.download(), in_plane), [&](LL i) { return double(x[prev][i]); }, exact());
    const auto got = out.download();
    check(r, "p1_store4d.out", pick<float>(got, in_plane), [&](LL i) { return double(x[prev][i]); }, exact());
    check_untouched(r, "p1_store4d.out (other planes)", got, [&](LL i) { return !in_plane(i); });
  }
  end_case(r, "p1_store4d " + dims({R, C}), before);
}

// p2. 1-D x pushed into row [1, 2, :] of next's buf [2, 3, N]; out's row [1, 2, :] read back.
void p2_store1d_in3d(const Run& r, LL N, unsigned seed) {
  const auto x = per_rank<float>(r.W, N, seed);
  const int prev = prev_of(r);
  SymArg<float> xd(r.ctx, {N}, &x[r.me]), buf(r.ctx, {2, 3, N}, nullptr);
  DevLocal<float> out({2, 3, N}, {});
  const int before = begin_case(r);
  if (run(r, "p2_store1d_in3d", 2, xd.view, buf.view, out.view())) {
    const LL row = (1 * 3 + 2) * N;
    auto in_row = [&](LL i) { return i >= row && i < row + N; };
    check(r, "p2_store1d_in3d.buf", pick<float>(buf.download(), in_row), [&](LL i) { return double(x[prev][i]); }, exact());
    const auto got = out.download();
    check(r, "p2_store1d_in3d.out", pick<float>(got, in_row), [&](LL i) { return double(x[prev][i]); }, exact());
    check_untouched(r, "p2_store1d_in3d.out (other rows)", got, [&](LL i) { return !in_row(i); });
  }
  end_case(r, "p2_store1d_in3d N=" + std::to_string(N), before);
}

// p3. Row 0 of x added into next's 1-D buf (which starts at b0, random): two launches add it twice;
// out = prev's buf.
void p3_row_into_1d(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, prev = prev_of(r);
  const auto x = per_rank<float>(W, R * C, seed);
  const auto b0 = per_rank<float>(W, C, seed + 20);
  SymArg<float> xd(r.ctx, {R, C}, &x[r.me]), buf(r.ctx, {C}, &b0[r.me]);
  DevLocal<float> out({C}, {});
  const int before = begin_case(r);
  if (run(r, "p3_row_into_1d", 2, xd.view, buf.view, out.view())) {
    auto bw = [&](int q, LL n) { const int from = (q + W - 1) % W; return double(b0[q][n]) + 2.0 * x[from][n]; };
    check(r, "p3_row_into_1d.buf", buf.download(), [&](LL n) { return bw(r.me, n); }, abs_tol(1e-6));
    check(r, "p3_row_into_1d.out", out.download(), [&](LL n) { return bw(prev, n); }, abs_tol(1e-6));
  }
  end_case(r, "p3_row_into_1d " + dims({R, C}), before);
}

// p4. out = sum over ranks of plane [1, 1] of x [2, 2, R, C].
void p4_reduce4d(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = per_rank<float>(r.W, 4 * R * C, seed);
  SymArg<float> xd(r.ctx, {2, 2, R, C}, &x[r.me]);
  DevLocal<float> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "p4_reduce4d", 2, xd.view, out.view())) {
    const LL plane = 3 * R * C;
    auto want = [&](LL i) { double s = 0; for (int q = 0; q < r.W; ++q) s += x[q][plane + i]; return s; };
    check(r, "p4_reduce4d.out", out.download(), want, abs_tol(1e-6 * r.W));
  }
  end_case(r, "p4_reduce4d " + dims({R, C}), before);
}

// p5. Row 0 of out [1, N] = max over ranks of the 1-D x.
void p5_reduce_row1d(const Run& r, LL N, unsigned seed) {
  const auto x = per_rank<float>(r.W, N, seed);
  SymArg<float> xd(r.ctx, {N}, &x[r.me]);
  DevLocal<float> out({1, N}, {});
  const int before = begin_case(r);
  if (run(r, "p5_reduce_row1d", 2, xd.view, out.view())) {
    auto want = [&](LL i) { double m = -1e300; for (int q = 0; q < r.W; ++q) m = std::max(m, double(x[q][i])); return m; };
    check(r, "p5_reduce_row1d.out", out.download(), want, exact());
  }
  end_case(r, "p5_reduce_row1d N=" + std::to_string(N), before);
}

// p8. out = row `row` of prev's x (zeros for a row outside x).
void p8_row_from2d(const Run& r, LL R, LL C, LL row, unsigned seed) {
  const auto x = per_rank<float>(r.W, R * C, seed);
  const int prev = prev_of(r);
  SymArg<float> xd(r.ctx, {R, C}, &x[r.me]);
  DevLocal<float> out({C}, {});
  const int before = begin_case(r);
  if (run(r, "p8_row_from2d", 2, xd.view, out.view(), row)) {
    check(r, "p8_row_from2d.out", out.download(),
          [&](LL n) { return row >= 0 && row < R ? double(x[prev][row * C + n]) : 0.0; }, exact());
  }
  end_case(r, "p8_row_from2d " + dims({R, C}) + " row=" + std::to_string(row), before);
}

// p10. buf[m] on next = the sum of the first 128 columns of row m of x.
void p10_col_into_1d(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = per_rank<float>(r.W, R * C, seed);
  const int prev = prev_of(r);
  SymArg<float> xd(r.ctx, {R, C}, &x[r.me]), buf(r.ctx, {R}, nullptr);
  const int before = begin_case(r);
  if (run(r, "p10_col_into_1d", 2, xd.view, buf.view)) {
    auto want = [&](LL m) { double s = 0; for (LL c = 0; c < std::min<LL>(C, 128); ++c) s += x[prev][m * C + c]; return s; };
    check(r, "p10_col_into_1d.buf", buf.download(), want, abs_tol(2e-5));
  }
  end_case(r, "p10_col_into_1d " + dims({R, C}), before);
}

// b9. c[h] = prev's a[h] (pulled) times this rank's b [K, 64].
void b9_mma_trailing_peer(const Run& r, LL H, LL S, LL Kd, unsigned seed) {
  const auto a = per_rank<bf16>(r.W, H * S * Kd, seed);
  const auto b = rnd<bf16>(Kd * 64, seed + 40 + r.me);
  const int prev = prev_of(r);
  SymArg<bf16> ad(r.ctx, {H, S, Kd}, &a[r.me]);
  DevLocal<bf16> bd({Kd, 64}, b);
  DevLocal<float> c({H, S, 64}, {});
  const int before = begin_case(r);
  if (run(r, "b9_mma_trailing_peer", 2, ad.view, bd.view(), c.view())) {
    std::vector<double> want(H * S * 64), mag(H * S * 64);
    for (LL hm = 0; hm < H * S; ++hm)
      for (LL n = 0; n < 64; ++n) {
        double s = 0, g = 0;
        for (LL q = 0; q < Kd; ++q) {
          const double t = val(a[prev][hm * Kd + q]) * val(b[q * 64 + n]);
          s += t, g += std::fabs(t);
        }
        want[hm * 64 + n] = s, mag[hm * 64 + n] = g;
      }
    check(r, "b9_mma_trailing_peer.c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, "b9_mma_trailing_peer " + dims({H, S, Kd}), before);
}

// b10. out = min over ranks of x[1, 2, 3, :] of x [2, 3, 4, N].
void b10_reduce_4d_1d_tile(const Run& r, LL N, unsigned seed) {
  const auto x = per_rank<float>(r.W, 24 * N, seed);
  SymArg<float> xd(r.ctx, {2, 3, 4, N}, &x[r.me]);
  DevLocal<float> out({N}, {});
  const int before = begin_case(r);
  if (run(r, "b10_reduce_4d_1d_tile", 2, xd.view, out.view())) {
    const LL at = ((1 * 3 + 2) * 4 + 3) * N;
    auto want = [&](LL i) { double m = 1e300; for (int q = 0; q < r.W; ++q) m = std::min(m, double(x[q][at + i])); return m; };
    check(r, "b10_reduce_4d_1d_tile.out", out.download(), want, exact());
  }
  end_case(r, "b10_reduce_4d_1d_tile N=" + std::to_string(N), before);
}

// b5. out = max over ranks of plane 0 of the i32 x [2, R, C].
void b5_reduce_i32_max_3d(const Run& r, LL R, LL C, unsigned seed) {
  std::vector<std::vector<int>> x(r.W);
  for (int q = 0; q < r.W; ++q) x[q] = ints<int>(2 * R * C, -1000000, 1000000, seed + q);
  SymArg<int> xd(r.ctx, {2, R, C}, &x[r.me]);
  DevLocal<int> out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "b5_reduce_i32_max_3d", 2, xd.view, out.view())) {
    auto want = [&](LL i) { int m = x[0][i]; for (int q = 1; q < r.W; ++q) m = std::max(m, x[q][i]); return double(m); };
    check(r, "b5_reduce_i32_max_3d.out", out.download(), want, exact());
  }
  end_case(r, "b5_reduce_i32_max_3d " + dims({R, C}), before);
}

// c1. Heads pushed to next's y; out = y + x.
void c1_ring_heads(const Run& r, LL H, LL S, unsigned seed) {
  const LL D = 64;
  const auto x = per_rank<float>(r.W, H * S * D, seed);
  const int prev = prev_of(r);
  SymArg<float> xd(r.ctx, {H, S, D}, &x[r.me]), y(r.ctx, {H, S, D}, nullptr);
  DevLocal<float> out({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "c1_ring_heads", 2, xd.view, y.view, out.view())) {
    check(r, "c1_ring_heads.y", y.download(), [&](LL i) { return double(x[prev][i]); }, exact());
    check(r, "c1_ring_heads.out", out.download(), [&](LL i) { return double(x[prev][i]) + x[r.me][i]; }, abs_tol(1e-6));
  }
  end_case(r, "c1_ring_heads " + dims({H, S, D}), before);
}

// c2. All-gather into planes of y [W, R, C]; out = y / 2.
void c2_ag_planes(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W;
  const auto x = per_rank<float>(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[r.me]), y(r.ctx, {W, R, C}, nullptr);
  DevLocal<float> out({W, R, C}, {});
  const int before = begin_case(r);
  if (run(r, "c2_ag_planes", 2, xd.view, y.view, out.view())) {
    auto yw = [&](LL i) { return double(x[i / (R * C)][i % (R * C)]); };
    check(r, "c2_ag_planes.y", y.download(), yw, exact());
    check(r, "c2_ag_planes.out", out.download(), [&](LL i) { return 0.5 * yw(i); }, exact());
  }
  end_case(r, "c2_ag_planes " + dims({R, C}), before);
}

// c3. Every rank adds x into the owner's acc[0, 0] (zeroed first); out = this rank's acc[0, 0]: the
// sum on the owner, zeros elsewhere.
void c3_adds_4d(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W;
  const LL owner = W - 1;
  const auto x = per_rank<float>(W, R * C, seed);
  DevLocal<float> xd({R, C}, x[r.me]), out({R, C}, {});
  SymArg<float> acc(r.ctx, {1, 1, R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "c3_adds_4d", 2, xd.view(), acc.view, out.view(), owner)) {
    auto want = [&](LL i) {
      if (r.me != owner) return 0.0;
      double s = 0;
      for (int q = 0; q < W; ++q) s += x[q][i];
      return s;
    };
    check(r, "c3_adds_4d.out", out.download(), want, abs_tol(1e-6 * W));
  }
  end_case(r, "c3_adds_4d " + dims({R, C}) + " owner=" + std::to_string(owner), before);
}

// c4. x = exp(a) per rank; out = the sum over ranks of x.
void c4_reduce_heads_block(const Run& r, LL H, LL S, unsigned seed) {
  const LL D = 128;
  std::vector<std::vector<float>> a(r.W);
  for (int q = 0; q < r.W; ++q) a[q] = rnd<float>(H * S * D, seed + q, -2.f, 2.f);
  DevLocal<float> ad({H, S, D}, a[r.me]), out({H, S, D}, {});
  SymArg<float> x(r.ctx, {H, S, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "c4_reduce_heads_block", 2, ad.view(), x.view, out.view())) {
    check(r, "c4_reduce_heads_block.x", x.download(), [&](LL i) { return std::exp(double(a[r.me][i])); },
          [&](LL i) { return 1e-6 * std::exp(double(a[r.me][i])); });
    auto want = [&](LL i) { double s = 0; for (int q = 0; q < r.W; ++q) s += std::exp(double(a[q][i])); return s; };
    check(r, "c4_reduce_heads_block.out", out.download(), want, [&](LL i) { return 2e-6 * want(i); });
  }
  end_case(r, "c4_reduce_heads_block " + dims({H, S, D}), before);
}

// c5. Four ring steps: out (starting at out0) += (s + 1) * prev's x, so out0 + 10 x_prev a launch.
void c5_double_buffer_planes(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = per_rank<float>(r.W, R * C, seed);
  const auto out0 = rnd<float>(R * C, seed + 40 + r.me);
  const int prev = prev_of(r);
  SymArg<float> xd(r.ctx, {R, C}, &x[r.me]), buf(r.ctx, {2, R, C}, nullptr);
  DevLocal<float> out({R, C}, out0);
  const int before = begin_case(r);
  if (run(r, "c5_double_buffer_planes", 2, xd.view, buf.view, out.view())) {
    auto want = [&](LL i) { return double(out0[i]) + 20.0 * x[prev][i]; };
    check(r, "c5_double_buffer_planes.out", out.download(), want, abs_tol(2e-5));
  }
  end_case(r, "c5_double_buffer_planes " + dims({R, C}), before);
}

// c6. Ring all-gather by forwarding: y[p] = rank p's x on every rank.
void c6_ring_ag_forward(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W;
  const auto x = per_rank<float>(W, R * C, seed);
  SymArg<float> xd(r.ctx, {R, C}, &x[r.me]), y(r.ctx, {W, R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "c6_ring_ag_forward", 2, xd.view, y.view))
    check(r, "c6_ring_ag_forward.y", y.download(), [&](LL i) { return double(x[i / (R * C)][i % (R * C)]); }, exact());
  end_case(r, "c6_ring_ag_forward " + dims({R, C}), before);
}

// c7. y = the mirror rank's x; out = y - x.
void c7_mirror_exchange_heads(const Run& r, LL H, LL S, unsigned seed) {
  const LL D = 64;
  const auto x = per_rank<float>(r.W, H * S * D, seed);
  const int peer = r.W - 1 - r.me;
  SymArg<float> xd(r.ctx, {H, S, D}, &x[r.me]), y(r.ctx, {H, S, D}, nullptr);
  DevLocal<float> out({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "c7_mirror_exchange_heads", 2, xd.view, y.view, out.view())) {
    check(r, "c7_mirror_exchange_heads.y", y.download(), [&](LL i) { return double(x[peer][i]); }, exact());
    check(r, "c7_mirror_exchange_heads.out", out.download(), [&](LL i) { return double(x[peer][i]) - x[r.me][i]; },
          abs_tol(1e-6));
  }
  end_case(r, "c7_mirror_exchange_heads " + dims({H, S, D}), before);
}

// c8. Two-shot all-reduce of heads: y = the sum over ranks of x on every rank.
void c8_two_shot_heads(const Run& r, LL H, LL S, unsigned seed) {
  const LL D = 128;
  const auto x = per_rank<float>(r.W, H * S * D, seed);
  SymArg<float> xd(r.ctx, {H, S, D}, &x[r.me]), y(r.ctx, {H, S, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "c8_two_shot_heads", 2, xd.view, y.view)) {
    auto want = [&](LL i) { double s = 0; for (int q = 0; q < r.W; ++q) s += x[q][i]; return s; };
    check(r, "c8_two_shot_heads.y", y.download(), want, abs_tol(1e-6 * r.W));
  }
  end_case(r, "c8_two_shot_heads " + dims({H, S, D}), before);
}

// c9. Per-tile flags: y = prev's x; out = y * x.
void c9_per_tile_flags_heads(const Run& r, LL H, LL S, unsigned seed) {
  const LL D = 32;
  const auto x = per_rank<float>(r.W, H * S * D, seed);
  const int prev = prev_of(r);
  SymArg<float> xd(r.ctx, {H, S, D}, &x[r.me]), y(r.ctx, {H, S, D}, nullptr);
  DevLocal<float> out({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "c9_per_tile_flags_heads", 2, xd.view, y.view, out.view())) {
    check(r, "c9_per_tile_flags_heads.y", y.download(), [&](LL i) { return double(x[prev][i]); }, exact());
    check(r, "c9_per_tile_flags_heads.out", out.download(), [&](LL i) { return double(x[prev][i]) * x[r.me][i]; },
          [&](LL i) { return 1e-6 * std::fabs(double(x[prev][i]) * x[r.me][i]); });
  }
  end_case(r, "c9_per_tile_flags_heads " + dims({H, S, D}), before);
}

// c10. Rows of x [B, S, 64] pushed into owner b % W's y [B, S, 64 W] at column block rank(); out =
// y[:, :, 0:64]. Checked on the batches this rank owns (the others' y is never written).
void c10_rows_to_owner(const Run& r, LL B, LL S, unsigned seed) {
  const int W = r.W;
  const auto x = per_rank<float>(W, B * S * 64, seed);
  DevLocal<float> xd({B, S, 64}, x[r.me]), out({B, S, 64}, {});
  SymArg<float> y(r.ctx, {B, S, 64 * W}, nullptr);
  const int before = begin_case(r);
  if (run(r, "c10_rows_to_owner", 2, xd.view(), y.view, out.view())) {
    auto yown = [&](LL i) { return (i / (S * 64 * W)) % W == r.me; };
    const auto yi = pick_index(B * S * 64 * W, yown);
    check(r, "c10_rows_to_owner.y", pick<float>(y.download(), yown), [&](LL k) {
      const LL i = yi[k], bs = i / (64 * W), col = i % (64 * W);
      return double(x[col / 64][bs * 64 + col % 64]);
    }, exact());
    auto oown = [&](LL i) { return (i / (S * 64)) % W == r.me; };
    const auto oi = pick_index(B * S * 64, oown);
    check(r, "c10_rows_to_owner.out", pick<float>(out.download(), oown), [&](LL k) { return double(x[0][oi[k]]); },
          exact());
  }
  end_case(r, "c10_rows_to_owner " + dims({B, S}), before);
}

// c11. Halo rows exchanged per head; out = the 3-row stencil of x (zeros past either end).
void c11_halo_heads(const Run& r, LL H, LL S, unsigned seed) {
  const LL D = 128;
  const auto x = per_rank<float>(r.W, H * S * D, seed);
  const int prev = prev_of(r), next = next_of(r);
  SymArg<float> xd(r.ctx, {H, S, D}, &x[r.me]), halo(r.ctx, {H, 2, D}, nullptr);
  DevLocal<float> out({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, "c11_halo_heads", 2, xd.view, halo.view, out.view())) {
    check(r, "c11_halo_heads.halo", halo.download(), [&](LL i) {
      const LL h = i / (2 * D), side = (i / D) % 2, d = i % D;
      return side == 0 ? double(x[prev][(h * S + S - 1) * D + d]) : double(x[next][(h * S + 0) * D + d]);
    }, exact());
    const auto& xm = x[r.me];
    check(r, "c11_halo_heads.out", out.download(), [&](LL i) {
      const LL s = (i / D) % S;
      double v = xm[i];
      if (s > 0) v += xm[i - D];
      if (s + 1 < S) v += xm[i + D];
      return v;
    }, abs_tol(1e-6));
  }
  end_case(r, "c11_halo_heads " + dims({H, S, D}), before);
}

// m4. All-gather of [R, C] bf16 shards into [R, W C].
void m4_ag_dim1(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W;
  const auto x = per_rank<bf16>(W, R * C, seed);
  SymArg<bf16> xd(r.ctx, {R, C}, &x[r.me]), y(r.ctx, {R, W * C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "m4_ag_dim1", 2, xd.view, y.view))
    check(r, "m4_ag_dim1.y", y.download(), [&](LL i) {
      const LL m = i / (W * C), j = i % (W * C);
      return val(x[j / C][m * C + j % C]);
    }, exact());
  end_case(r, "m4_ag_dim1 " + dims({R, C}), before);
}

// m5. Reduce-scatter (Sum) along dimension 1 of [R, W C], then out = y + bias[n].
void m5_rs_dim1_bias(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W;
  const auto x = per_rank<float>(W, R * W * C, seed);
  const auto bias = rnd<float>(C, seed + 40);
  SymArg<float> xd(r.ctx, {R, W * C}, &x[r.me]), y(r.ctx, {R, C}, nullptr);
  DevLocal<float> bd({C}, bias), out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "m5_rs_dim1_bias", 2, xd.view, y.view, bd.view(), out.view())) {
    auto yw = [&](LL i) {
      const LL m = i / C, n = i % C;
      double s = 0;
      for (int q = 0; q < W; ++q) s += x[q][m * W * C + r.me * C + n];
      return s;
    };
    check(r, "m5_rs_dim1_bias.y", y.download(), yw, abs_tol(1e-6 * W));
    check(r, "m5_rs_dim1_bias.out", out.download(), [&](LL i) { return yw(i) + bias[i % C]; }, abs_tol(1e-6 * (W + 1)));
  }
  end_case(r, "m5_rs_dim1_bias " + dims({R, C}), before);
}

// m6. All-gather along dimension 2 of [H, S, D] f16 shards into [H, S, W D].
void m6_ag_dim2(const Run& r, LL H, LL S, LL D, unsigned seed) {
  const int W = r.W;
  const auto x = per_rank<f16>(W, H * S * D, seed);
  SymArg<f16> xd(r.ctx, {H, S, D}, &x[r.me]), y(r.ctx, {H, S, W * D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "m6_ag_dim2", 2, xd.view, y.view))
    check(r, "m6_ag_dim2.y", y.download(), [&](LL i) {
      const LL hs = i / (W * D), j = i % (W * D);
      return val(x[j / D][hs * D + j % D]);
    }, exact());
  end_case(r, "m6_ag_dim2 " + dims({H, S, D}), before);
}

// m7. Reduce-scatter (Max) along dimension 1 of [A, W B, C] into [A, B, C].
void m7_rs_dim1_3d_max(const Run& r, LL A, LL B, LL C, unsigned seed) {
  const int W = r.W;
  const auto x = per_rank<float>(W, A * W * B * C, seed);
  SymArg<float> xd(r.ctx, {A, W * B, C}, &x[r.me]), y(r.ctx, {A, B, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "m7_rs_dim1_3d_max", 2, xd.view, y.view))
    check(r, "m7_rs_dim1_3d_max.y", y.download(), [&](LL i) {
      const LL a = i / (B * C), b = (i / C) % B, c = i % C;
      double m = -1e300;
      for (int q = 0; q < W; ++q) m = std::max(m, double(x[q][(a * W * B + r.me * B + b) * C + c]));
      return m;
    }, exact());
  end_case(r, "m7_rs_dim1_3d_max " + dims({A, B, C}), before);
}

// m8. In-place all-gather along dimension 1 of [R, W C]: column block p from rank p.
void m8_ag_dim1_inplace(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W;
  const auto x = per_rank<float>(W, R * W * C, seed);
  SymArg<float> xd(r.ctx, {R, W * C}, &x[r.me]);
  const int before = begin_case(r);
  if (run(r, "m8_ag_dim1_inplace", 2, xd.view))
    check(r, "m8_ag_dim1_inplace.x", xd.download(), [&](LL i) { return double(x[(i % (W * C)) / C][i]); }, exact());
  end_case(r, "m8_ag_dim1_inplace " + dims({R, C}), before);
}

// m9. All-reduce, then out = y / s[m].
void m9_ar_then_colnorm(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W;
  const auto x = per_rank<float>(W, R * C, seed);
  const auto sc = rnd<float>(R, seed + 40, 0.5f, 2.f);
  SymArg<float> xd(r.ctx, {R, C}, &x[r.me]), y(r.ctx, {R, C}, nullptr);
  DevLocal<float> sd({R}, sc), out({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "m9_ar_then_colnorm", 2, xd.view, y.view, sd.view(), out.view())) {
    auto yw = [&](LL i) { double s = 0; for (int q = 0; q < W; ++q) s += x[q][i]; return s; };
    check(r, "m9_ar_then_colnorm.y", y.download(), yw, abs_tol(1e-6 * W));
    check(r, "m9_ar_then_colnorm.out", out.download(), [&](LL i) { return yw(i) / sc[i / C]; }, abs_tol(4e-6 * W));
  }
  end_case(r, "m9_ar_then_colnorm " + dims({R, C}), before);
}

void single_gpu_cases(const Run& r) {
  unsigned s = 5000;
  attention_cases(r, s);
  gemm_cases(r, s);
  m1_layernorm_f16(r, 37, s += 100);
  m2_softmax_bf16(r, 37, s += 100);
  m3_rmsnorm_3d(r, 3, 37, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  p1_store4d(r, 37, 300, s += 100);
  p2_store1d_in3d(r, 1000, s += 100);
  p3_row_into_1d(r, 5, 1000, s += 100);
  p4_reduce4d(r, 37, 300, s += 100);
  p5_reduce_row1d(r, 1000, s += 100);
  p8_row_from2d(r, 37, 300, 5, s += 100);
  p8_row_from2d(r, 37, 300, -1, s += 100);  // outside x: zeros
  p8_row_from2d(r, 37, 300, 37, s += 100);
  p10_col_into_1d(r, 150, 200, s += 100);
  b9_mma_trailing_peer(r, 3, 100, 80, s += 100);
  b10_reduce_4d_1d_tile(r, 1000, s += 100);
  b5_reduce_i32_max_3d(r, 37, 300, s += 100);
  c1_ring_heads(r, 3, 37, s += 100);
  c2_ag_planes(r, 37, 300, s += 100);
  c3_adds_4d(r, 37, 300, s += 100);
  c4_reduce_heads_block(r, 3, 37, s += 100);
  c5_double_buffer_planes(r, 37, 300, s += 100);
  c6_ring_ag_forward(r, 37, 300, s += 100);
  c7_mirror_exchange_heads(r, 3, 70, s += 100);
  c8_two_shot_heads(r, 5, 37, s += 100);
  c9_per_tile_flags_heads(r, 3, 150, s += 100);
  c10_rows_to_owner(r, 5, 7, s += 100);
  c11_halo_heads(r, 3, 37, s += 100);
  m4_ag_dim1(r, 37, 300, s += 100);
  m5_rs_dim1_bias(r, 37, 300, s += 100);
  m6_ag_dim2(r, 3, 37, 100, s += 100);
  m7_rs_dim1_3d_max(r, 3, 37, 100, s += 100);
  m8_ag_dim1_inplace(r, 37, 300, s += 100);
  m9_ar_then_colnorm(r, 37, 300, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs13_jit_test");
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs13_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

// The fifteenth user-written spec set (test/specs/user_specs15.pk.cpp) through the JIT, each kernel
// against a float64 host reference on fresh random inputs, with every output poisoned (NaN, or
// all-ones integers) first. The single-GPU kernels run at W = 1 (the template kernels also with
// templates = false, "name/general"); the kernels that use rank(), prev_rank(), peers or
// collectives at W = 1, 2 and 3 (ranks sharing one GPU; PK_TEST_WORLDS or PK_SHARED_GPU_RANKS
// choose others), each rank checking its own outputs. The four ring attentions are checked
// against the whole sequence's attention (every rank's K / V blocks; the causal contiguous one by
// global position). Shapes leave partial tiles everywhere (37- and 70-row blocks, 100- and
// 300-column rows, K % 8 != 0 for the GEMM twins, sequence lengths that are not multiples of 64,
// odd head counts). One PASS or FAIL line per case.
//
// Covered: all 49 kernels. o_ar_inplace_softmax_inplace runs only with 1024-column rows: its softmax
// has no column mask, so with fewer columns the 1024-wide tile's zero padding would enter row_max /
// row_sum (the spec means a softmax over whole 1024-column rows). o_keep_prefix_rowsum runs with
// keep a multiple of 64 or past the row (its 64-column trips then sum exactly the prefix).
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <type_traits>

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
    {"ra_f16_d64", true},
    {"ra_gqa_d128", true},
    {"ra_pull_d64", true},
    {"ra_contig_causal_d128", true},
    {"a_layer_kv_cache", true},
    {"a_gqa_kv_offset", true},
    {"a_prev_rank_kv", true},
    {"a_minmax_layer", true},
    {"a_f16_d64_kv_offset", true},
    {"a_kv_one_tensor", true},  // V at its own head offset (v_head0, thirty-fifth session)
    {"a_tp_alibi_rank", true},
    {"a_cp_causal_rank", true},
    {"a_segments_one_tensor_heads", true},
    {"bg_sw_kn_f32", true},
    {"bg_sw_rank_bias", true},
    {"bg_sw_vocab_rank_mask", true},
    {"bg_sw_scale_residual", true},
    {"bg_w_rows_by_batch", false},
    {"g_sym_scale", true},
    {"g_rows_valid_min", true},
    {"g_rank_scale_at", true},
    {"s_gate_up_interleave", false},
    {"s_rows_2m", false},
    {"s_nested_range_overlap_seq", false},
    {"s_1d_halves", false},
    {"s_3d_2b", false},
    {"s_4d_two_heads", false},
    {"s_peer_two_tensors", false},
    {"s_transpose_store", false},
    {"z_fill_32x512_gemm_rs", true},
    {"z_fill_rows_gap_gemm_rs", false},
    {"z_fill_cast_gemm_rs", false},
    {"s_store_2n", false},
    {"s_two_halves", false},
    {"s_diff_tensors", false},
    {"s_nested_range", false},
    {"s_1d_2i", false},
    {"o_layer_norm_f16", false},
    {"o_sp_causal_softmax", false},
    {"o_rotary_sp", false},
    {"o_ag_cols_gelu", false},
    {"o_rs_cols_rmsnorm", false},
    {"o_ar_inplace_softmax_inplace", false},
    {"o_moe_top1_gather", false},
    {"o_fp8_block_quant", false},
    {"o_keep_prefix_rowsum", false},
    {"o_host_loop_world", false},
    {"o_a2a_cols_inplace_bias", false},
    {"o_vocab_shard_clamp", false},
};
// The template kernels also run with templates = false ("name/general").
const std::vector<const char*> kGeneralToo = {
    "ra_f16_d64",         "ra_gqa_d128",       "ra_pull_d64",         "ra_contig_causal_d128",
    "a_layer_kv_cache",   "a_gqa_kv_offset",   "a_prev_rank_kv",      "a_minmax_layer",
    "a_f16_d64_kv_offset", "a_tp_alibi_rank",  "a_cp_causal_rank",    "a_segments_one_tensor_heads",
    "bg_sw_kn_f32",       "bg_sw_rank_bias",   "bg_sw_vocab_rank_mask", "bg_sw_scale_residual",
    "g_sym_scale",        "g_rows_valid_min",  "g_rank_scale_at",     "z_fill_32x512_gemm_rs"};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS15_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs15", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host data ----

inline double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608 * (x + 0.044715 * x * x * x))); }


// ================================================================ attention ==

// The attention outputs' bounds: bf16 (p and o rounded to bf16) and f16.
auto bf_o_tol(const std::vector<double>& w) { return [&w](LL i) { return 2 * kBf * std::fabs(w[i]) + 4e-3; }; }
auto hf_o_tol(const std::vector<double>& w) { return [&w](LL i) { return 4 * kHf * std::fabs(w[i]) + 2e-3; }; }
auto lse_tol(const std::vector<double>& w) { return [&w](LL i) { return 1e-3 * std::fabs(w[i]) + 2e-3; }; }

// Ring attention (ra_f16_d64, ra_gqa_d128, ra_pull_d64, ra_contig_causal_d128): q, o [H, S, D] per
// rank, kr, vr [2 Hkv, S, D] with this rank's K / V in slot 0 (slot 1 random: overwritten before it
// is read). The reference: this rank's queries against every rank's slot-0 block (q head h reads
// K / V head h / G); `causal`: rank r holds positions [r S, (r + 1) S), key p S + j visible to
// query r S + i when p S + j <= r S + i.
template <class T>
void ring_attention(const Run& r, const std::string& k, LL H, LL Hkv, LL S, LL D, bool causal, bool g_arg,
                    unsigned seed) {
  const int W = r.W, me = r.me;
  const LL G = H / Hkv;
  const float scale = 1.f / std::sqrt(float(D));
  std::vector<std::vector<T>> ks(W), vs(W);
  for (int p = 0; p < W; ++p) ks[p] = rnd<T>(2 * Hkv * S * D, seed + p), vs[p] = rnd<T>(2 * Hkv * S * D, seed + 10 + p);
  const auto q = rnd<T>(H * S * D, seed + 40 + me);
  SymArg<T> kr(r.ctx, {2 * Hkv, S, D}, &ks[me]), vr(r.ctx, {2 * Hkv, S, D}, &vs[me]);
  DevLocal<T> qd({H, S, D}, q), o({H, S, D}, {}), op({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {}), lp({H, S, 1}, {});
  const int before = begin_case(r);
  bool ok;
  if (g_arg)
    ok = run(r, k, 1, qd.view(), kr.view, vr.view, o.view(), lse.view(), op.view(), lp.view(), scale, G);
  else
    ok = run(r, k, 1, qd.view(), kr.view, vr.view, o.view(), lse.view(), op.view(), lp.view(), scale);
  if (ok) {
    const LL Sk = W * S;  // key g = p S + j: rank p's slot-0 row j
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h) {
      const LL kh = h / G;
      attend(S, Sk, D,
             [&](LL i, LL g) { return dot(q, (h * S + i) * D, ks[g / S], (kh * S + g % S) * D, D) * scale; },
             [&](LL i, LL g) { return !causal || g <= me * S + i; },
             [&](LL g, LL d) { return val(vs[g / S][(kh * S + g % S) * D + d]); }, wo.data() + h * S * D,
             wl.data() + h * S);
    }
    if (std::is_same<T, f16>::value)
      check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, hf_o_tol(wo));
    else
      check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, k + " " + dims({H, Hkv, S, D}), before);
}

// a_layer_kv_cache: k, v [L H, Sk, 64], this layer's heads at layer H + h; o and lse.
void a_layer_kv_cache(const Run& r, const std::string& k, LL H, LL L, LL layer, LL Sq, LL Sk, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * Sq * D, seed), kk = rnd<bf16>(L * H * Sk * D, seed + 1), v = rnd<bf16>(L * H * Sk * D, seed + 2);
  DevLocal<bf16> qd({H, Sq, D}, q), kd({L * H, Sk, D}, kk), vd({L * H, Sk, D}, v), o({H, Sq, D}, {});
  DevLocal<float> lse({H, Sq, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale, layer)) {
    std::vector<double> wo(H * Sq * D), wl(H * Sq);
    for (LL h = 0; h < H; ++h) {
      const LL kh = layer * H + h;
      attend(Sq, Sk, D, [&](LL i, LL j) { return dot(q, (h * Sq + i) * D, kk, (kh * Sk + j) * D, D) * scale; },
             [](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[(kh * Sk + j) * D + d]); },
             wo.data() + h * Sq * D, wl.data() + h * Sq);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, k + " " + dims({H, L, layer, Sq, Sk}), before);
}

// a_gqa_kv_offset: K / V head c + h / g of k, v [Hk, Sk, 64]; o only (lse is not written).
void a_gqa_kv_offset(const Run& r, const std::string& k, LL H, LL g, LL c, LL Hk, LL Sq, LL Sk, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * Sq * D, seed), kk = rnd<bf16>(Hk * Sk * D, seed + 1), v = rnd<bf16>(Hk * Sk * D, seed + 2);
  DevLocal<bf16> qd({H, Sq, D}, q), kd({Hk, Sk, D}, kk), vd({Hk, Sk, D}, v), o({H, Sq, D}, {});
  DevLocal<float> lse({H, Sq, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale, c, g)) {
    std::vector<double> wo(H * Sq * D), wl(H * Sq);
    for (LL h = 0; h < H; ++h) {
      const LL kh = c + h / g;
      attend(Sq, Sk, D, [&](LL i, LL j) { return dot(q, (h * Sq + i) * D, kk, (kh * Sk + j) * D, D) * scale; },
             [](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[(kh * Sk + j) * D + d]); },
             wo.data() + h * Sq * D, wl.data() + h * Sq);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, g, c, Hk, Sq, Sk}), before);
}

// a_minmax_layer: layer clamped into [0, L - 1] (L = k heads / q heads); o only.
void a_minmax_layer(const Run& r, const std::string& k, LL H, LL L, LL layer, LL S, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * S * D, seed), kk = rnd<bf16>(L * H * S * D, seed + 1), v = rnd<bf16>(L * H * S * D, seed + 2);
  DevLocal<bf16> qd({H, S, D}, q), kd({L * H, S, D}, kk), vd({L * H, S, D}, v), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale, layer)) {
    const LL cl = std::min(std::max(layer, 0LL), L - 1);
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h) {
      const LL kh = cl * H + h;
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (kh * S + j) * D, D) * scale; },
             [](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[(kh * S + j) * D + d]); },
             wo.data() + h * S * D, wl.data() + h * S);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, L, S}) + " layer=" + std::to_string(layer), before);
}

// a_f16_d64_kv_offset: f16, K / V head c + h; o only.
void a_f16_d64_kv_offset(const Run& r, const std::string& k, LL H, LL c, LL Hk, LL Sq, LL Sk, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<f16>(H * Sq * D, seed), kk = rnd<f16>(Hk * Sk * D, seed + 1), v = rnd<f16>(Hk * Sk * D, seed + 2);
  DevLocal<f16> qd({H, Sq, D}, q), kd({Hk, Sk, D}, kk), vd({Hk, Sk, D}, v), o({H, Sq, D}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), scale, c)) {
    std::vector<double> wo(H * Sq * D), wl(H * Sq);
    for (LL h = 0; h < H; ++h) {
      const LL kh = c + h;
      attend(Sq, Sk, D, [&](LL i, LL j) { return dot(q, (h * Sq + i) * D, kk, (kh * Sk + j) * D, D) * scale; },
             [](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[(kh * Sk + j) * D + d]); },
             wo.data() + h * Sq * D, wl.data() + h * Sq);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, hf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, c, Hk, Sq, Sk}), before);
}

// a_kv_one_tensor: kv [2H, Sk, 64], K at head h, V at head H + h; o only.
void a_kv_one_tensor(const Run& r, LL H, LL Sq, LL Sk, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * Sq * D, seed), kv = rnd<bf16>(2 * H * Sk * D, seed + 1);
  DevLocal<bf16> qd({H, Sq, D}, q), kvd({2 * H, Sk, D}, kv), o({H, Sq, D}, {});
  const int before = begin_case(r);
  if (run(r, "a_kv_one_tensor", 2, qd.view(), kvd.view(), o.view(), scale)) {
    std::vector<double> wo(H * Sq * D), wl(H * Sq);
    for (LL h = 0; h < H; ++h)
      attend(Sq, Sk, D, [&](LL i, LL j) { return dot(q, (h * Sq + i) * D, kv, (h * Sk + j) * D, D) * scale; },
             [](LL, LL) { return true; }, [&](LL j, LL d) { return val(kv[((H + h) * Sk + j) * D + d]); },
             wo.data() + h * Sq * D, wl.data() + h * Sq);
    check(r, "a_kv_one_tensor.o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, "a_kv_one_tensor " + dims({H, Sq, Sk}), before);
}

// a_segments_one_tensor_heads: key j visible to query i when seg[i] == seg[j]; o only.
void a_segments_one_tensor_heads(const Run& r, const std::string& k, LL H, LL S, unsigned seed) {
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * S * D, seed), kk = rnd<bf16>(H * S * D, seed + 1), v = rnd<bf16>(H * S * D, seed + 2);
  const auto seg = ints<int>(S, 1, 3, seed + 3);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  DevLocal<int> sd({S}, seg);
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), sd.view(), scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h)
      attend(S, S, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale; },
             [&](LL i, LL j) { return seg[i] == seg[j]; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); },
             wo.data() + h * S * D, wl.data() + h * S);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, S}), before);
}

// a_prev_rank_kv (multi-rank): k, v [W H, Sk, 64] (this rank's own copy); heads prev H + h; o only.
void a_prev_rank_kv(const Run& r, const std::string& k, LL H, LL Sq, LL Sk, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W;
  const LL D = 64;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * Sq * D, seed + me), kk = rnd<bf16>(W * H * Sk * D, seed + 10 + me),
             v = rnd<bf16>(W * H * Sk * D, seed + 20 + me);
  DevLocal<bf16> qd({H, Sq, D}, q), kd({W * H, Sk, D}, kk), vd({W * H, Sk, D}, v), o({H, Sq, D}, {});
  DevLocal<float> lse({H, Sq, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale)) {
    std::vector<double> wo(H * Sq * D), wl(H * Sq);
    for (LL h = 0; h < H; ++h) {
      const LL kh = prev * H + h;
      attend(Sq, Sk, D, [&](LL i, LL j) { return dot(q, (h * Sq + i) * D, kk, (kh * Sk + j) * D, D) * scale; },
             [](LL, LL) { return true; }, [&](LL j, LL d) { return val(v[(kh * Sk + j) * D + d]); },
             wo.data() + h * Sq * D, wl.data() + h * Sq);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, Sq, Sk}), before);
}

// a_tp_alibi_rank (multi-rank): causal, head dim 128, scores minus (i - j) slope with the slope of
// global head r H + h of W H; o only.
void a_tp_alibi_rank(const Run& r, const std::string& k, LL H, LL S, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL D = 128;
  const float scale = 1.f / std::sqrt(128.f);
  const auto q = rnd<bf16>(H * S * D, seed + me), kk = rnd<bf16>(H * S * D, seed + 10 + me), v = rnd<bf16>(H * S * D, seed + 20 + me);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, S, D}, kk), vd({H, S, D}, v), o({H, S, D}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h) {
      const double slope = std::pow(2.0, -8.0 * double(me * H + h + 1) / double(W * H));
      attend(S, S, D,
             [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * S + j) * D, D) * scale - double(i - j) * slope; },
             [](LL i, LL j) { return j <= i; }, [&](LL j, LL d) { return val(v[(h * S + j) * D + d]); },
             wo.data() + h * S * D, wl.data() + h * S);
    }
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
  }
  end_case(r, k + " " + dims({H, S}), before);
}

// a_cp_causal_rank (multi-rank): S queries at positions [r S, (r + 1) S) of the W S gathered keys.
void a_cp_causal_rank(const Run& r, const std::string& k, LL H, LL S, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL D = 64, Sk = W * S;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * S * D, seed + me), kk = rnd<bf16>(H * Sk * D, seed + 10 + me), v = rnd<bf16>(H * Sk * D, seed + 20 + me);
  DevLocal<bf16> qd({H, S, D}, q), kd({H, Sk, D}, kk), vd({H, Sk, D}, v), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, qd.view(), kd.view(), vd.view(), o.view(), lse.view(), scale)) {
    std::vector<double> wo(H * S * D), wl(H * S);
    for (LL h = 0; h < H; ++h)
      attend(S, Sk, D, [&](LL i, LL j) { return dot(q, (h * S + i) * D, kk, (h * Sk + j) * D, D) * scale; },
             [&](LL i, LL j) { return j <= me * S + i; }, [&](LL j, LL d) { return val(v[(h * Sk + j) * D + d]); },
             wo.data() + h * S * D, wl.data() + h * S);
    check(r, k + ".o", o.download(), [&](LL i) { return wo[i]; }, bf_o_tol(wo));
    check(r, k + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, k + " " + dims({H, S}), before);
}

// ================================================================ GEMMs ==

// want[m N + n] = sum_q A(m, q) B(n, q) and mag = sum_q |A(m, q)| (|B| <= 1 here).
template <class FA, class FB>
void gemm_ref(LL M, LL N, LL Kd, const FA& A, const FB& B, std::vector<double>& want, std::vector<double>& mag) {
  want.assign(M * N, 0.0), mag.assign(M * N, 0.0);
  std::vector<double> arow(Kd);
  for (LL m = 0; m < M; ++m) {
    double g = 0;
    for (LL q = 0; q < Kd; ++q) arow[q] = A(m, q), g += std::fabs(arow[q]);
    for (LL n = 0; n < N; ++n) {
      double s = 0;
      for (LL q = 0; q < Kd; ++q) s += arow[q] * B(n, q);
      want[m * N + n] = s, mag[m * N + n] = g;
    }
  }
}

// bg_sw_kn_f32: y[z] = x[z] w, w [K, N] shared, f32 out.
void bg_sw_kn_f32(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto x = rnd<f16>(B * M * Kd, seed), w = rnd<f16>(Kd * N, seed + 1);
  DevLocal<f16> xd({B, M, Kd}, x), wd({Kd, N}, w);
  DevLocal<float> y({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), wd.view(), y.view())) {
    std::vector<double> want(B * M * N), mag(B * M * N), wz, mz;
    for (LL z = 0; z < B; ++z) {
      gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(x[(z * M + m) * Kd + q]); }, [&](LL n, LL q) { return val(w[q * N + n]); }, wz, mz);
      std::copy(wz.begin(), wz.end(), want.begin() + z * M * N), std::copy(mz.begin(), mz.end(), mag.begin() + z * M * N);
    }
    check(r, k + ".y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// bg_sw_scale_residual: y[z] = bf16(x[z] w^T s[z] + r[z]).
void bg_sw_scale_residual(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto x = rnd<bf16>(B * M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1), res = rnd<bf16>(B * M * N, seed + 2);
  const auto s = rnd<float>(B, seed + 3, 0.5f, 1.5f);
  DevLocal<bf16> xd({B, M, Kd}, x), wd({N, Kd}, w), rd({B, M, N}, res), y({B, M, N}, {});
  DevLocal<float> sd({B}, s);
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), wd.view(), sd.view(), rd.view(), y.view())) {
    std::vector<double> want(B * M * N), mag(B * M * N), wz, mz;
    for (LL z = 0; z < B; ++z) {
      gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(x[(z * M + m) * Kd + q]); }, [&](LL n, LL q) { return val(w[n * Kd + q]); }, wz, mz);
      for (LL i = 0; i < M * N; ++i)
        want[z * M * N + i] = wz[i] * s[z] + val(res[z * M * N + i]), mag[z * M * N + i] = mz[i] * s[z];
    }
    check(r, k + ".y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// bg_w_rows_by_batch: c[z] = bf16(a[z] w[z N .. z N + N)^T).
void bg_w_rows_by_batch(const Run& r, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const auto a = rnd<bf16>(B * M * Kd, seed), w = rnd<bf16>(B * N * Kd, seed + 1);
  DevLocal<bf16> ad({B, M, Kd}, a), wd({B * N, Kd}, w), c({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, "bg_w_rows_by_batch", 2, ad.view(), wd.view(), c.view(), N)) {
    std::vector<double> want(B * M * N), mag(B * M * N), wz, mz;
    for (LL z = 0; z < B; ++z) {
      gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[(z * M + m) * Kd + q]); },
               [&](LL n, LL q) { return val(w[(z * N + n) * Kd + q]); }, wz, mz);
      std::copy(wz.begin(), wz.end(), want.begin() + z * M * N), std::copy(mz.begin(), mz.end(), mag.begin() + z * M * N);
    }
    check(r, "bg_w_rows_by_batch.c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, "bg_w_rows_by_batch " + dims({B, M, Kd, N}), before);
}

// g_sym_scale: c = bf16(a b^T * d[m] * d[n]) on a square [M, M] output.
void g_sym_scale(const Run& r, const std::string& k, LL M, LL Kd, unsigned seed) {
  const auto a = rnd<bf16>(M * Kd, seed), b = rnd<bf16>(M * Kd, seed + 1);
  const auto d = rnd<float>(M, seed + 2, 0.25f, 2.f);
  DevLocal<bf16> ad({M, Kd}, a), bd({M, Kd}, b), c({M, M}, {});
  DevLocal<float> dd({M}, d);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), dd.view(), c.view())) {
    std::vector<double> want, mag;
    gemm_ref(M, M, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, want, mag);
    for (LL i = 0; i < M * M; ++i) want[i] *= double(d[i / M]) * d[i % M], mag[i] *= double(d[i / M]) * d[i % M];
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd}), before);
}

// bg_sw_rank_bias (multi-rank): y[z] = bf16(x[z] w^T + bias[rank]).
void bg_sw_rank_bias(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto x = rnd<bf16>(B * M * Kd, seed + me), w = rnd<bf16>(N * Kd, seed + 10 + me);
  const auto bias = rnd<float>(W * N, seed + 20 + me);
  DevLocal<bf16> xd({B, M, Kd}, x), wd({N, Kd}, w), y({B, M, N}, {});
  DevLocal<float> bd({W, N}, bias);
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), wd.view(), bd.view(), y.view())) {
    std::vector<double> want(B * M * N), mag(B * M * N), wz, mz;
    for (LL z = 0; z < B; ++z) {
      gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(x[(z * M + m) * Kd + q]); }, [&](LL n, LL q) { return val(w[n * Kd + q]); }, wz, mz);
      for (LL i = 0; i < M * N; ++i) want[z * M * N + i] = wz[i] + bias[me * N + i % N], mag[z * M * N + i] = mz[i];
    }
    check(r, k + ".y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// bg_sw_vocab_rank_mask (multi-rank): logits[z] = x[z] w^T where n + rank N < vocab, else -1e4.
void bg_sw_vocab_rank_mask(const Run& r, const std::string& k, LL B, LL M, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL vocab = W * N - 37;
  const auto x = rnd<bf16>(B * M * Kd, seed + me), w = rnd<bf16>(N * Kd, seed + 10 + me);
  DevLocal<bf16> xd({B, M, Kd}, x), wd({N, Kd}, w);
  DevLocal<float> y({B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, xd.view(), wd.view(), y.view(), vocab)) {
    std::vector<double> want(B * M * N), mag(B * M * N), wz, mz;
    for (LL z = 0; z < B; ++z) {
      gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(x[(z * M + m) * Kd + q]); }, [&](LL n, LL q) { return val(w[n * Kd + q]); }, wz, mz);
      for (LL i = 0; i < M * N; ++i)
        want[z * M * N + i] = i % N + me * N < vocab ? wz[i] : -1e4, mag[z * M * N + i] = mz[i];
    }
    check(r, k + ".logits", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-5 * mag[i] + 1e-6; });
  }
  end_case(r, k + " " + dims({B, M, Kd, N}), before);
}

// g_rows_valid_min (multi-rank): rows at or past min(valid, M - rank) zero.
void g_rows_valid_min(const Run& r, const std::string& k, LL M, LL Kd, LL N, LL valid, unsigned seed) {
  const int me = r.me;
  const auto a = rnd<bf16>(M * Kd, seed + me), b = rnd<bf16>(N * Kd, seed + 10 + me);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), c.view(), valid)) {
    std::vector<double> want, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, want, mag);
    const LL lim = std::min(valid, M - me);
    for (LL i = 0; i < M * N; ++i)
      if (i / N >= lim) want[i] = 0;
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N, valid}), before);
}

// g_rank_scale_at (multi-rank): c = bf16(a b^T s[max(rank - 1, 0)]).
void g_rank_scale_at(const Run& r, const std::string& k, LL M, LL Kd, LL N, unsigned seed) {
  const int me = r.me;
  const auto a = rnd<bf16>(M * Kd, seed + me), b = rnd<bf16>(N * Kd, seed + 10 + me);
  const auto s = rnd<float>(4, seed + 20, 0.5f, 2.f);
  DevLocal<bf16> ad({M, Kd}, a), bd({N, Kd}, b), c({M, N}, {});
  DevLocal<float> sd({4}, s);
  const int before = begin_case(r);
  if (run(r, k, 2, ad.view(), bd.view(), sd.view(), c.view())) {
    std::vector<double> want, mag;
    gemm_ref(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL n, LL q) { return val(b[n * Kd + q]); }, want, mag);
    const double sc = s[std::max(me - 1, 0)];
    for (LL i = 0; i < M * N; ++i) want[i] *= sc, mag[i] *= sc;
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({M, Kd, N}), before);
}

// z_fill_32x512_gemm_rs / z_fill_rows_gap_gemm_rs (multi-rank): a [W rows, K], b [N, K] per rank;
// c [rows, N] zeroed (every row, or rows m % 64 < 32 only: the others keep c's values), then every
// rank p adds bf16(a_p[o rows + m] b_p^T) into rank o's c. bf16 additions: each partial rounded,
// each add rounded (W of each: at most 2 W 2^-9 of the magnitudes, within 2 kBf at W <= 3).
void z_fill_gemm_rs(const Run& r, const std::string& k, bool gap, LL rows, LL Kd, LL N, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> a(W), b(W);
  for (int p = 0; p < W; ++p) a[p] = rnd<bf16>(W * rows * Kd, seed + p), b[p] = rnd<bf16>(N * Kd, seed + 10 + p);
  const auto c0 = rnd<bf16>(rows * N, seed + 20 + me);
  DevLocal<bf16> ad({W * rows, Kd}, a[me]), bd({N, Kd}, b[me]);
  SymArg<bf16> c(r.ctx, {rows, N}, gap ? &c0 : nullptr);
  const int before = begin_case(r);
  if (run(r, k, 1, ad.view(), bd.view(), c.view)) {
    std::vector<double> want(rows * N, 0.0), mag(rows * N, 0.0), sabs(rows * N, 0.0), wz, mz;
    for (int p = 0; p < W; ++p) {
      gemm_ref(rows, N, Kd, [&](LL m, LL q) { return val(a[p][(me * rows + m) * Kd + q]); },
               [&](LL n, LL q) { return val(b[p][n * Kd + q]); }, wz, mz);
      for (LL i = 0; i < rows * N; ++i) want[i] += wz[i], mag[i] += mz[i], sabs[i] += std::fabs(wz[i]);
    }
    if (gap)
      for (LL i = 0; i < rows * N; ++i)
        if ((i / N) % 64 >= 32) want[i] += val(c0[i]), sabs[i] += std::fabs(val(c0[i]));
    check(r, k + ".c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 2 * kBf * sabs[i] + 1e-5 * mag[i] + 1e-4; });
  }
  end_case(r, k + " " + dims({rows, Kd, N}), before);
}

// ================================================================ stores ==

// s_gate_up_interleave: y [M, 2N]; 128-column block b holds g's columns [64 b, 64 b + 64) then u's
// (a partial tile's zero padding stored too, clipped at y's edge).
void s_gate_up_interleave(const Run& r, LL M, LL N, unsigned seed) {
  const auto g = rnd<float>(M * N, seed), u = rnd<float>(M * N, seed + 1);
  DevLocal<float> gd({M, N}, g), ud({M, N}, u), y({M, 2 * N}, {});
  const int before = begin_case(r);
  if (run(r, "s_gate_up_interleave", 2, gd.view(), ud.view(), y.view())) {
    auto want = [&](LL i) {
      const LL m = i / (2 * N), j = i % (2 * N), blk = j / 128, w = j % 128;
      const LL src = 64 * blk + w % 64;
      if (src >= N) return 0.0;
      return double(w < 64 ? g[m * N + src] : u[m * N + src]);
    };
    check(r, "s_gate_up_interleave.y", y.download(), want, exact());
  }
  end_case(r, "s_gate_up_interleave " + dims({M, N}), before);
}

// s_rows_2m: y [2M, N]; 32-row block b holds a's rows [16 b, 16 b + 16) then b's.
void s_rows_2m(const Run& r, LL M, LL N, unsigned seed) {
  const auto a = rnd<float>(M * N, seed), b = rnd<float>(M * N, seed + 1);
  DevLocal<float> ad({M, N}, a), bd({M, N}, b), y({2 * M, N}, {});
  const int before = begin_case(r);
  if (run(r, "s_rows_2m", 2, ad.view(), bd.view(), y.view())) {
    auto want = [&](LL i) {
      const LL row = i / N, n = i % N, blk = row / 32, w = row % 32, src = 16 * blk + w % 16;
      if (src >= M) return 0.0;
      return double(w < 16 ? a[src * N + n] : b[src * N + n]);
    };
    check(r, "s_rows_2m.y", y.download(), want, exact());
  }
  end_case(r, "s_rows_2m " + dims({M, N}), before);
}

// s_nested_range_overlap_seq: overlapping stores in program order inside a block: y = x.
void s_nested_range_overlap_seq(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed);
  DevLocal<float> xd({M, N}, x), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "s_nested_range_overlap_seq", 2, xd.view(), y.view()))
    check(r, "s_nested_range_overlap_seq.y", y.download(), [&](LL i) { return double(x[i]); }, exact());
  end_case(r, "s_nested_range_overlap_seq " + dims({M, N}), before);
}

// s_1d_halves: y[i] = x[i] in the first half of each 256-block, x[i] + 1 in the second.
void s_1d_halves(const Run& r, LL n, unsigned seed) {
  const auto x = rnd<float>(n, seed);
  DevLocal<float> xd({n}, x), y({n}, {});
  const int before = begin_case(r);
  if (run(r, "s_1d_halves", 2, xd.view(), y.view()))
    check(r, "s_1d_halves.y", y.download(), [&](LL i) { return i % 256 < 128 ? double(x[i]) : double(x[i] + 1.0f); }, exact());
  end_case(r, "s_1d_halves n=" + std::to_string(n), before);
}

// s_3d_2b: y [2B, M, N]: y[2 b] = x[b], y[2 b + 1] = -x[b].
void s_3d_2b(const Run& r, LL B, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(B * M * N, seed);
  DevLocal<float> xd({B, M, N}, x), y({2 * B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, "s_3d_2b", 2, xd.view(), y.view()))
    check(r, "s_3d_2b.y", y.download(), [&](LL i) {
      const LL z = i / (M * N), e = i % (M * N);
      return z % 2 == 0 ? double(x[(z / 2) * M * N + e]) : -double(x[(z / 2) * M * N + e]);
    }, exact());
  end_case(r, "s_3d_2b " + dims({B, M, N}), before);
}

// s_store_2n: y [M, 2N]; 128-column block b holds x's columns [64 b, 64 b + 64) in its first half
// (padding zeros past N stored too), its second half never written.
void s_store_2n(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed);
  DevLocal<float> xd({M, N}, x), y({M, 2 * N}, {});
  const int before = begin_case(r);
  if (run(r, "s_store_2n", 2, xd.view(), y.view())) {
    const auto got = y.download();
    auto gap = [&](LL i) { return (i % (2 * N)) % 128 >= 64; };
    std::vector<float> kept(got);
    for (LL i = 0; i < LL(got.size()); ++i)
      if (gap(i)) kept[i] = 0.0f;
    check(r, "s_store_2n.y", kept, [&](LL i) {
      const LL m = i / (2 * N), j = i % (2 * N), src = 64 * (j / 128) + j % 128;
      return gap(i) || src >= N ? 0.0 : double(x[m * N + src]);
    }, exact());
    check_untouched(r, "s_store_2n.y gaps", got, gap);
  }
  end_case(r, "s_store_2n " + dims({M, N}), before);
}

// s_two_halves: y = x in the first 64 columns of each 128, 2 x in the second 64.
void s_two_halves(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed);
  DevLocal<float> xd({M, N}, x), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "s_two_halves", 2, xd.view(), y.view()))
    check(r, "s_two_halves.y", y.download(), [&](LL i) { return (i % N) % 128 < 64 ? double(x[i]) : 2.0 * x[i]; }, exact());
  end_case(r, "s_two_halves " + dims({M, N}), before);
}

// s_diff_tensors: y = x; z [M, N] from column 64 on = 2 x shifted right by 64, columns [0, 64) never
// written.
void s_diff_tensors(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed);
  DevLocal<float> xd({M, N}, x), y({M, N}, {}), z({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "s_diff_tensors", 2, xd.view(), y.view(), z.view())) {
    check(r, "s_diff_tensors.y", y.download(), [&](LL i) { return double(x[i]); }, exact());
    const auto zg = z.download();
    std::vector<float> zk(zg);
    for (LL i = 0; i < LL(zg.size()); ++i)
      if (i % N < 64) zk[i] = 0.0f;
    check(r, "s_diff_tensors.z", zk, [&](LL i) { return i % N < 64 ? 0.0 : 2.0 * x[i - 64]; }, exact());
    check_untouched(r, "s_diff_tensors.z[:, :64]", zg, [&](LL i) { return i % N < 64; });
  }
  end_case(r, "s_diff_tensors " + dims({M, N}), before);
}

// s_nested_range: y = x (256-column trips inside 16-row tiles).
void s_nested_range(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed);
  DevLocal<float> xd({M, N}, x), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "s_nested_range", 2, xd.view(), y.view()))
    check(r, "s_nested_range.y", y.download(), [&](LL i) { return double(x[i]); }, exact());
  end_case(r, "s_nested_range " + dims({M, N}), before);
}

// s_1d_2i: y [2n]: 256-block 2 b holds 3 x[256 b ..] (padding zeros past n stored too), odd blocks
// never written.
void s_1d_2i(const Run& r, LL n, unsigned seed) {
  const auto x = rnd<float>(n, seed);
  DevLocal<float> xd({n}, x), y({2 * n}, {});
  const int before = begin_case(r);
  if (run(r, "s_1d_2i", 2, xd.view(), y.view())) {
    const auto got = y.download();
    auto gap = [&](LL i) { return (i / 256) % 2 == 1; };
    std::vector<float> kept(got);
    for (LL i = 0; i < LL(got.size()); ++i)
      if (gap(i)) kept[i] = 0.0f;
    check(r, "s_1d_2i.y", kept, [&](LL i) {
      const LL src = (i / 512) * 256 + i % 256;
      return gap(i) || src >= n ? 0.0 : double(x[src] * 3.0f);
    }, exact());
    check_untouched(r, "s_1d_2i.y odd blocks", got, gap);
  }
  end_case(r, "s_1d_2i n=" + std::to_string(n), before);
}

// s_4d_two_heads: y = x on [B, H, S, 64].
void s_4d_two_heads(const Run& r, LL B, LL H, LL S, unsigned seed) {
  const auto x = rnd<float>(B * H * S * 64, seed);
  DevLocal<float> xd({B, H, S, 64}, x), y({B, H, S, 64}, {});
  const int before = begin_case(r);
  if (run(r, "s_4d_two_heads", 2, xd.view(), y.view()))
    check(r, "s_4d_two_heads.y", y.download(), [&](LL i) { return double(x[i]); }, exact());
  end_case(r, "s_4d_two_heads " + dims({B, H, S}), before);
}

// s_transpose_store: y [N, M] = x^T.
void s_transpose_store(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<float>(M * N, seed);
  DevLocal<float> xd({M, N}, x), y({N, M}, {});
  const int before = begin_case(r);
  if (run(r, "s_transpose_store", 2, xd.view(), y.view()))
    check(r, "s_transpose_store.y", y.download(), [&](LL i) { return double(x[(i % M) * N + i / M]); }, exact());
  end_case(r, "s_transpose_store " + dims({M, N}), before);
}

// s_peer_two_tensors (multi-rank): y of rank r = x of rank r - 1; z [M, N + 64] of rank r: columns
// from 64 on = 2 x of rank r + 1, columns [0, 64) never written.
void s_peer_two_tensors(const Run& r, LL M, LL N, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W, next = (me + 1) % W;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(M * N, seed + p);
  DevLocal<float> xd({M, N}, x[me]);
  SymArg<float> y(r.ctx, {M, N}, nullptr), z(r.ctx, {M, N + 64}, nullptr);
  const int before = begin_case(r);
  if (run(r, "s_peer_two_tensors", 2, xd.view(), y.view, z.view)) {
    check(r, "s_peer_two_tensors.y", y.download(), [&](LL i) { return double(x[prev][i]); }, exact());
    const LL Z = N + 64;
    const auto zg = z.download();
    std::vector<float> zw(zg.size());
    for (LL i = 0; i < LL(zg.size()); ++i) zw[i] = i % Z >= 64 ? zg[i] : 0.0f;
    check(r, "s_peer_two_tensors.z", zw, [&](LL i) {
      const LL m = i / Z, j = i % Z;
      return j < 64 ? 0.0 : 2.0 * x[next][m * N + j - 64];
    }, exact());
    check_untouched(r, "s_peer_two_tensors.z[:, :64]", zg, [&](LL i) { return i % Z < 64; });
  }
  end_case(r, "s_peer_two_tensors " + dims({M, N}), before);
}

// ================================================================ layer kernels ==

// o_layer_norm_f16: LayerNorm over the real columns, f16 weight and bias.
void o_layer_norm_f16(const Run& r, LL M, LL N, unsigned seed) {
  const float eps = 1e-5f;
  const auto x = rnd<f16>(M * N, seed, -2.f, 3.f), w = rnd<f16>(N, seed + 1, 0.5f, 1.5f), b = rnd<f16>(N, seed + 2);
  DevLocal<f16> xd({M, N}, x), wd({N}, w), bd({N}, b), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "o_layer_norm_f16", 2, xd.view(), wd.view(), bd.view(), y.view(), eps)) {
    std::vector<double> want(M * N);
    for (LL m = 0; m < M; ++m) {
      double mu = 0, var = 0;
      for (LL j = 0; j < N; ++j) mu += val(x[m * N + j]);
      mu /= N;
      for (LL j = 0; j < N; ++j) var += (val(x[m * N + j]) - mu) * (val(x[m * N + j]) - mu);
      const double rs = 1 / std::sqrt(var / N + eps);
      for (LL j = 0; j < N; ++j) want[m * N + j] = (val(x[m * N + j]) - mu) * rs * val(w[j]) + val(b[j]);
    }
    check(r, "o_layer_norm_f16.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 2 * kHf * std::fabs(want[i]) + 1e-3; });
  }
  end_case(r, "o_layer_norm_f16 " + dims({M, N}), before);
}

// o_moe_top1_gather: y[m] = bf16(expert_out[slot[m]] * wt[m]) (the product in f32, as the kernel).
void o_moe_top1_gather(const Run& r, LL T, LL E, LL N, unsigned seed) {
  const auto eo = rnd<bf16>(E * N, seed);
  const auto slot = ints<int>(T, 0, E - 1, seed + 1);
  const auto wt = rnd<float>(T, seed + 2, 0.1f, 1.f);
  DevLocal<bf16> ed({E, N}, eo), y({T, N}, {});
  DevLocal<int> sd({T}, slot);
  DevLocal<float> wd({T}, wt);
  const int before = begin_case(r);
  if (run(r, "o_moe_top1_gather", 2, ed.view(), sd.view(), wd.view(), y.view()))
    check(r, "o_moe_top1_gather.y", y.download(), [&](LL i) {
      const LL t = i / N, n = i % N;
      return bf16r(float(float(val(eo[slot[t] * N + n])) * wt[t]));
    }, exact());
  end_case(r, "o_moe_top1_gather " + dims({T, E, N}), before);
}

// o_fp8_block_quant: per row and 128-column block, amax; q = e4m3(x 448 / amax), sc = amax / 448.
void o_fp8_block_quant(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<bf16>(M * N, seed, -3.f, 3.f);
  const LL NB = (N + 127) / 128;
  DevLocal<bf16> xd({M, N}, x);
  DevLocal<f8e4m3> q({M, N}, {});
  DevLocal<float> sc({M, NB}, {});
  const int before = begin_case(r);
  if (run(r, "o_fp8_block_quant", 2, xd.view(), q.view(), sc.view())) {
    std::vector<double> amax(M * NB, 0.0);
    for (LL i = 0; i < M * N; ++i) {
      double& a = amax[(i / N) * NB + (i % N) / 128];
      a = std::max(a, std::fabs(val(x[i])));
    }
    check(r, "o_fp8_block_quant.sc", sc.download(), [&](LL i) { return std::max(amax[i], 1e-12) / 448; },
          [&](LL i) { return 1e-6 * amax[i] / 448 + 1e-15; });
    auto qw = [&](LL i) { return e4m3(val(x[i]) * 448 / std::max(amax[(i / N) * NB + (i % N) / 128], 1e-12)); };
    check(r, "o_fp8_block_quant.q", q.download(), qw, [&](LL i) { return 0.07 * std::fabs(qw(i)) + 1e-3; });
  }
  end_case(r, "o_fp8_block_quant " + dims({M, N}), before);
}

// o_keep_prefix_rowsum: b[m] = sum of a[m, 0 .. min(N, keep)) (keep a multiple of 64 or >= N:
// the 64-column trips then cover exactly that prefix).
void o_keep_prefix_rowsum(const Run& r, LL M, LL N, LL keep, unsigned seed) {
  const auto a = rnd<float>(M * N, seed);
  DevLocal<float> ad({M, N}, a), b({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "o_keep_prefix_rowsum", 2, ad.view(), b.view(), keep)) {
    std::vector<double> want(M, 0.0), mag(M, 0.0);
    for (LL m = 0; m < M; ++m)
      for (LL j = 0; j < std::min(N, keep); ++j) want[m] += a[m * N + j], mag[m] += std::fabs(a[m * N + j]);
    check(r, "o_keep_prefix_rowsum.b", b.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-6; });
  }
  end_case(r, "o_keep_prefix_rowsum " + dims({M, N, keep}), before);
}

// o_sp_causal_softmax (multi-rank): s [R, W R]; row i of rank r sees columns <= r R + i.
void o_sp_causal_softmax(const Run& r, LL R, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL C = W * R;
  const auto s = rnd<float>(R * C, seed + me, -4.f, 4.f);
  DevLocal<float> sd({R, C}, s), p({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "o_sp_causal_softmax", 2, sd.view(), p.view())) {
    std::vector<double> want(R * C, 0.0);
    for (LL i = 0; i < R; ++i) {
      const LL last = std::min(C - 1, me * R + i);
      double m = -1e300, t = 0;
      for (LL j = 0; j <= last; ++j) m = std::max(m, double(s[i * C + j]));
      for (LL j = 0; j <= last; ++j) t += std::exp(s[i * C + j] - m);
      for (LL j = 0; j <= last; ++j) want[i * C + j] = std::exp(s[i * C + j] - m) / t;
    }
    check(r, "o_sp_causal_softmax.p", p.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-4 * want[i] + 1e-7; });
  }
  end_case(r, "o_sp_causal_softmax R=" + std::to_string(R), before);
}

// o_rotary_sp (multi-rank): half rotation of x [M, 128] at positions r M + row (the angle an f32
// product, as the kernel).
void o_rotary_sp(const Run& r, LL M, unsigned seed) {
  const int me = r.me;
  const auto x = rnd<bf16>(M * 128, seed + me);
  std::vector<float> inv(64);
  for (int j = 0; j < 64; ++j) inv[j] = float(std::pow(10000.0, -double(j) / 64));
  DevLocal<bf16> xd({M, 128}, x), y({M, 128}, {});
  DevLocal<float> id({64}, inv);
  const int before = begin_case(r);
  if (run(r, "o_rotary_sp", 2, xd.view(), id.view(), y.view())) {
    auto want = [&](LL i) {
      const LL m = i / 128, c = i % 128, j = c % 64;
      const double ang = double(float(me * M + m) * inv[j]), cs = std::cos(ang), sn = std::sin(ang);
      const double x1 = val(x[m * 128 + j]), x2 = val(x[m * 128 + 64 + j]);
      return c < 64 ? x1 * cs - x2 * sn : x2 * cs + x1 * sn;
    };
    check(r, "o_rotary_sp.y", y.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5; });
  }
  end_case(r, "o_rotary_sp M=" + std::to_string(M), before);
}

// o_ag_cols_gelu (multi-rank): g = column all-gather of x [M, Nl]; y = gelu (tanh form) of g.
void o_ag_cols_gelu(const Run& r, LL M, LL Nl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL N = W * Nl;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(M * Nl, seed + p, -3.f, 3.f);
  SymArg<float> xd(r.ctx, {M, Nl}, &x[me]), g(r.ctx, {M, N}, nullptr);
  DevLocal<float> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "o_ag_cols_gelu", 2, xd.view, g.view, y.view())) {
    auto gw = [&](LL i) { const LL m = i / N, c = i % N; return double(x[c / Nl][m * Nl + c % Nl]); };
    check(r, "o_ag_cols_gelu.g", g.download(), gw, exact());
    check(r, "o_ag_cols_gelu.y", y.download(), [&](LL i) { return gelu_tanh(gw(i)); },
          [&](LL i) { return 1e-5 * std::fabs(gelu_tanh(gw(i))) + 1e-6; });
  }
  end_case(r, "o_ag_cols_gelu " + dims({M, Nl}), before);
}

// o_rs_cols_rmsnorm (multi-rank): r = column reduce-scatter (sum) of x [M, W Nl]; y = RMSNorm of r.
void o_rs_cols_rmsnorm(const Run& r, LL M, LL Nl, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL N = W * Nl;
  const float eps = 1e-5f;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(M * N, seed + p, -2.f, 2.f);
  SymArg<float> xd(r.ctx, {M, N}, &x[me]), rs(r.ctx, {M, Nl}, nullptr);
  DevLocal<float> y({M, Nl}, {});
  const int before = begin_case(r);
  if (run(r, "o_rs_cols_rmsnorm", 2, xd.view, rs.view, y.view(), eps)) {
    std::vector<double> sum(M * Nl, 0.0), want(M * Nl);
    for (LL i = 0; i < M * Nl; ++i)
      for (int p = 0; p < W; ++p) sum[i] += x[p][(i / Nl) * N + me * Nl + i % Nl];
    for (LL m = 0; m < M; ++m) {
      double ss = 0;
      for (LL j = 0; j < Nl; ++j) ss += sum[m * Nl + j] * sum[m * Nl + j];
      const double rr = 1 / std::sqrt(ss / Nl + eps);
      for (LL j = 0; j < Nl; ++j) want[m * Nl + j] = sum[m * Nl + j] * rr;
    }
    check(r, "o_rs_cols_rmsnorm.r", rs.download(), [&](LL i) { return sum[i]; }, abs_tol(1e-5 * W));
    check(r, "o_rs_cols_rmsnorm.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 1e-5 * std::fabs(want[i]) + 1e-5; });
  }
  end_case(r, "o_rs_cols_rmsnorm " + dims({M, Nl}), before);
}

// o_ar_inplace_softmax_inplace (multi-rank): x = softmax of the all-reduced x, rows of 1024.
void o_ar_inplace_softmax_inplace(const Run& r, LL M, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL N = 1024;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(M * N, seed + p, -2.f, 2.f);
  SymArg<float> xd(r.ctx, {M, N}, &x[me]);
  const int before = begin_case(r);
  if (run(r, "o_ar_inplace_softmax_inplace", 1, xd.view)) {
    std::vector<double> want(M * N);
    for (LL m = 0; m < M; ++m) {
      double mx = -1e300, t = 0;
      for (LL j = 0; j < N; ++j) {
        double s = 0;
        for (int p = 0; p < W; ++p) s += x[p][m * N + j];
        want[m * N + j] = s, mx = std::max(mx, s);
      }
      for (LL j = 0; j < N; ++j) want[m * N + j] = std::exp(want[m * N + j] - mx), t += want[m * N + j];
      for (LL j = 0; j < N; ++j) want[m * N + j] /= t;
    }
    check(r, "o_ar_inplace_softmax_inplace.x", xd.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 1e-4 * want[i] + 1e-8; });
  }
  end_case(r, "o_ar_inplace_softmax_inplace M=" + std::to_string(M), before);
}

// o_host_loop_world (multi-rank): W - 1 steps of y = sum x, x = y (1 / W) (f32). At W = 1 no step:
// x unchanged, y never written.
void o_host_loop_world(const Run& r, LL n, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(n, seed + p);
  SymArg<float> xd(r.ctx, {n}, &x[me]), yd(r.ctx, {n}, nullptr);
  const int before = begin_case(r);
  if (run(r, "o_host_loop_world", 1, xd.view, yd.view)) {
    if (W == 1) {
      check(r, "o_host_loop_world.x", xd.download(), [&](LL i) { return double(x[0][i]); }, exact());
      check_untouched(r, "o_host_loop_world.y", yd.download(), [](LL) { return true; });
    } else {
      std::vector<double> xs(n), ys(n), mag(n, 0.0);
      for (LL i = 0; i < n; ++i) {
        double cur[8];
        for (int p = 0; p < W; ++p) cur[p] = x[p][i], mag[i] += std::fabs(x[p][i]);
        for (int s = 0; s < W - 1; ++s) {
          double t = 0;
          for (int p = 0; p < W; ++p) t += cur[p];
          ys[i] = t;
          for (int p = 0; p < W; ++p) cur[p] = t / W;
        }
        xs[i] = cur[me];
      }
      check(r, "o_host_loop_world.x", xd.download(), [&](LL i) { return xs[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
      check(r, "o_host_loop_world.y", yd.download(), [&](LL i) { return ys[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
    }
  }
  end_case(r, "o_host_loop_world n=" + std::to_string(n), before);
}

// o_a2a_cols_inplace_bias (multi-rank): x [M, W c] in place: column block p of rank r becomes
// column block r of rank p's input; y = bf16(x + bias).
void o_a2a_cols_inplace_bias(const Run& r, LL M, LL c, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL N = W * c;
  std::vector<std::vector<bf16>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<bf16>(M * N, seed + p);
  const auto bias = rnd<bf16>(N, seed + 20);
  SymArg<bf16> xd(r.ctx, {M, N}, &x[me]);
  DevLocal<bf16> bd({N}, bias), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "o_a2a_cols_inplace_bias", 1, xd.view, bd.view(), y.view())) {
    auto xw = [&](LL i) { const LL m = i / N, j = i % N, p = j / c; return val(x[p][m * N + me * c + j % c]); };
    check(r, "o_a2a_cols_inplace_bias.x", xd.download(), xw, exact());
    check(r, "o_a2a_cols_inplace_bias.y", y.download(), [&](LL i) { return bf16r(xw(i) + val(bias[i % N])); },
          [&](LL i) { return kBf * std::fabs(xw(i) + val(bias[i % N])) * 0.5 + 1e-7; });
  }
  end_case(r, "o_a2a_cols_inplace_bias " + dims({M, c}), before);
}

// o_vocab_shard_clamp (multi-rank): out[m] = table[id - r V] where that row is in this rank's
// shard, else zeros.
void o_vocab_shard_clamp(const Run& r, LL T, LL V, LL D, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto ids = ints<long long>(T, 0, W * V - 1, seed);
  const auto table = rnd<bf16>(V * D, seed + 10 + me);
  DevLocal<long long> idd({T}, ids);
  DevLocal<bf16> td({V, D}, table), out({T, D}, {});
  const int before = begin_case(r);
  if (run(r, "o_vocab_shard_clamp", 2, idd.view(), td.view(), out.view()))
    check(r, "o_vocab_shard_clamp.out", out.download(), [&](LL i) {
      const LL t = i / D, d = i % D, local = ids[t] - me * V;
      return local >= 0 && local < V ? val(table[local * D + d]) : 0.0;
    }, exact());
  end_case(r, "o_vocab_shard_clamp " + dims({T, V, D}), before);
}

// ================================================================ the cases ==

void single_gpu_cases(const Run& r) {
  unsigned s = 5000;
  for (const char* k : {"a_layer_kv_cache", "a_layer_kv_cache/general"}) a_layer_kv_cache(r, k, 3, 3, 2, 150, 201, s += 100);
  for (const char* k : {"a_gqa_kv_offset", "a_gqa_kv_offset/general"}) a_gqa_kv_offset(r, k, 4, 2, 3, 6, 100, 130, s += 100);
  for (const char* k : {"a_minmax_layer", "a_minmax_layer/general"}) {
    a_minmax_layer(r, k, 2, 3, 7, 120, s += 100);   // clamped to layer 2
    a_minmax_layer(r, k, 2, 3, -2, 120, s += 100);  // clamped to layer 0
    a_minmax_layer(r, k, 3, 3, 1, 77, s += 100);
  }
  for (const char* k : {"a_f16_d64_kv_offset", "a_f16_d64_kv_offset/general"}) a_f16_d64_kv_offset(r, k, 3, 2, 5, 90, 150, s += 100);
  a_kv_one_tensor(r, 3, 100, 150, s += 100);
  for (const char* k : {"a_segments_one_tensor_heads", "a_segments_one_tensor_heads/general"})
    a_segments_one_tensor_heads(r, k, 2, 150, s += 100);
  // GEMMs: the template at K, N % 8 == 0, its twin at K = 50; both paths at each.
  for (const char* k : {"bg_sw_kn_f32", "bg_sw_kn_f32/general"}) {
    bg_sw_kn_f32(r, k, 3, 200, 136, 264, s += 100);
    bg_sw_kn_f32(r, k, 3, 70, 50, 100, s += 100);
  }
  for (const char* k : {"bg_sw_scale_residual", "bg_sw_scale_residual/general"}) {
    bg_sw_scale_residual(r, k, 3, 200, 136, 264, s += 100);
    bg_sw_scale_residual(r, k, 3, 70, 50, 100, s += 100);
  }
  bg_w_rows_by_batch(r, 3, 70, 50, 100, s += 100);
  bg_w_rows_by_batch(r, 2, 130, 136, 264, s += 100);
  for (const char* k : {"g_sym_scale", "g_sym_scale/general"}) {
    g_sym_scale(r, k, 200, 136, s += 100);
    g_sym_scale(r, k, 100, 50, s += 100);
  }
  s_gate_up_interleave(r, 37, 100, s += 100);
  s_gate_up_interleave(r, 37, 256, s += 100);
  s_rows_2m(r, 37, 300, s += 100);
  s_nested_range_overlap_seq(r, 37, 300, s += 100);
  s_1d_halves(r, 1000, s += 100);
  s_3d_2b(r, 3, 37, 100, s += 100);
  s_4d_two_heads(r, 2, 3, 37, s += 100);
  s_transpose_store(r, 37, 300, s += 100);
  s_store_2n(r, 37, 100, s += 100);
  s_two_halves(r, 37, 300, s += 100);
  s_diff_tensors(r, 37, 300, s += 100);
  s_nested_range(r, 37, 300, s += 100);
  s_1d_2i(r, 1000, s += 100);
  o_layer_norm_f16(r, 37, 1000, s += 100);
  o_moe_top1_gather(r, 37, 9, 300, s += 100);
  o_fp8_block_quant(r, 70, 300, s += 100);
  o_keep_prefix_rowsum(r, 37, 300, 128, s += 100);
  o_keep_prefix_rowsum(r, 37, 300, 1000, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  // Ring attention, the whole sequence's attention as the reference.
  for (const char* k : {"ra_f16_d64", "ra_f16_d64/general"}) ring_attention<f16>(r, k, 2, 2, 100, 64, false, false, s += 100);
  for (const char* k : {"ra_gqa_d128", "ra_gqa_d128/general"}) ring_attention<bf16>(r, k, 4, 2, 77, 128, false, true, s += 100);
  for (const char* k : {"ra_pull_d64", "ra_pull_d64/general"}) ring_attention<bf16>(r, k, 3, 3, 70, 64, false, false, s += 100);
  for (const char* k : {"ra_contig_causal_d128", "ra_contig_causal_d128/general"})
    ring_attention<bf16>(r, k, 2, 2, 100, 128, true, false, s += 100);
  for (const char* k : {"a_prev_rank_kv", "a_prev_rank_kv/general"}) a_prev_rank_kv(r, k, 2, 80, 150, s += 100);
  for (const char* k : {"a_tp_alibi_rank", "a_tp_alibi_rank/general"}) a_tp_alibi_rank(r, k, 2, 130, s += 100);
  for (const char* k : {"a_cp_causal_rank", "a_cp_causal_rank/general"}) a_cp_causal_rank(r, k, 2, 70, s += 100);
  for (const char* k : {"bg_sw_rank_bias", "bg_sw_rank_bias/general"}) {
    bg_sw_rank_bias(r, k, 2, 130, 136, 264, s += 100);
    bg_sw_rank_bias(r, k, 2, 70, 50, 100, s += 100);
  }
  for (const char* k : {"bg_sw_vocab_rank_mask", "bg_sw_vocab_rank_mask/general"}) {
    bg_sw_vocab_rank_mask(r, k, 2, 130, 136, 264, s += 100);
    bg_sw_vocab_rank_mask(r, k, 2, 70, 50, 100, s += 100);
  }
  for (const char* k : {"g_rows_valid_min", "g_rows_valid_min/general"}) {
    g_rows_valid_min(r, k, 200, 136, 264, 199, s += 100);
    g_rows_valid_min(r, k, 70, 50, 100, 69, s += 100);
  }
  for (const char* k : {"g_rank_scale_at", "g_rank_scale_at/general"}) {
    g_rank_scale_at(r, k, 200, 136, 264, s += 100);
    g_rank_scale_at(r, k, 70, 50, 100, s += 100);
  }
  for (const char* k : {"z_fill_32x512_gemm_rs", "z_fill_32x512_gemm_rs/general"}) {
    z_fill_gemm_rs(r, k, false, 70, 136, 264, s += 100);
    z_fill_gemm_rs(r, k, false, 37, 50, 100, s += 100);
  }
  z_fill_gemm_rs(r, "z_fill_rows_gap_gemm_rs", true, 100, 136, 264, s += 100);
  z_fill_gemm_rs(r, "z_fill_rows_gap_gemm_rs", true, 37, 50, 100, s += 100);
  z_fill_gemm_rs(r, "z_fill_cast_gemm_rs", false, 70, 136, 264, s += 100);
  s_peer_two_tensors(r, 37, 300, s += 100);
  o_sp_causal_softmax(r, 37, s += 100);
  o_rotary_sp(r, 37, s += 100);
  o_ag_cols_gelu(r, 37, 300, s += 100);
  o_rs_cols_rmsnorm(r, 37, 300, s += 100);
  o_ar_inplace_softmax_inplace(r, 37, s += 100);
  o_host_loop_world(r, 1000, s += 100);
  o_a2a_cols_inplace_bias(r, 37, 100, s += 100);
  o_vocab_shard_clamp(r, 37, 50, 300, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs15_jit_test");
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs15_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

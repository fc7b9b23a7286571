// The twenty-second user-written spec set (test/specs/user_specs22.pk.cpp: routers, expert counts and
// permutations, capacity dispatch, grouped expert GEMMs, expert-parallel dispatch / combine, all-to-all-v
// with device splits, vocabulary-parallel embedding and loss, fp8 quantisation / GEMMs / communication,
// int8 in i32, sampling utilities, multi-phase kernels) through the JIT, each kernel against a host
// reference written from its comment (float64, or exact for integers, gathers, scatters and orders; fp8
// codes against fp8_model.h's model of the device's rounding) on fresh random inputs, with every output
// poisoned first (NaN, or all-ones integers = -1). The single-GPU kernels run at W = 1; the kernels that
// use rank(), peers or collectives at W = 1, 2, 3 and 4 (ranks sharing one GPU; PK_TEST_WORLDS or
// PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs. Shapes leave partial tiles in
// every tiled dimension; scatters check that every row they must not write still holds the poison.
//
// Covered: all 41 kernels (fp8_gemm_per_tensor and fp8_gemm_rowwise_bias on the Hopper template, also with
// templates = false as "name/general", and on their general-path twin where N % 8 != 0).
//
// Order-dependent outputs (claim order, atomic adds) are checked by order-independent properties:
// capacity_dispatch (per expert the kept slots are exactly the first min(n, capacity) places, distinct;
// buf holds each kept token at its slot; unclaimed rows untouched), ep_dispatch_expert_major and
// all_to_all_v_unsorted (each rank's slot / place is shared with the others through host memory, as the
// ranks are threads of this process, and the receiver checks every received row against the row its sender
// says it wrote), ep_combine_push / switch_aux_loss / expert histograms (sums: exact for integers, within
// the f32 rounding of any order for floats).
//
// Ambiguity the comments leave, taken into account: expert_counts_offsets' "values outside [0, E)" uses E =
// 128, the histogram's width (ids 128 .. 130 are fed and must not count); ep_bias_update's mean sums every
// column of `total` while its comment sums e < E: ids are drawn from [0, E) (plus -1 and 300, counted by
// neither), so both agree. A top-k choice is not checked on a row whose candidates differ by less than the
// device's rounding of the score (logits distinct by 1e-5 relative or tied exactly: exact ties go to the
// lower column, as docs/language.md says). fp8 codes may be the neighbouring code where x * scale lies within
// a few fp32 units of a rounding point (e4m3_step / e5m2_step, as set 20).
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <set>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f8e4m3;
using pk::f8e5m2;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Kernels, and whether one of their launches takes a template (the two fp8 GEMMs with scalar / row scales).
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"router_softmax_top2_renorm", false}, {"router_top8_then_softmax", false},   {"router_sigmoid_bias_top4", false},
    {"router_group_limited_top2", false},  {"expert_counts_offsets", false},      {"permute_tokens", false},
    {"unpermute_weighted_residual", false}, {"capacity_dispatch", false},         {"grouped_expert_gemm_silu", false},
    {"tokens_per_expert_frac", false},     {"ep_dispatch_expert_major", false},   {"ep_combine_push", false},
    {"all_to_all_v_unsorted", false},      {"vp_embedding_padding_idx", false},   {"vp_cross_entropy_smooth_ignore", false},
    {"vp_cross_entropy_smooth_ignore_bwd", false}, {"fp8_per_tensor_two_phase", false}, {"fp8_block128_weight_quant", false},
    {"fp8_block128_dequant", false},       {"fp8_e5m2_rowwise_grad", false},      {"fp8_act_quant_1x128_loop", false},
    {"fp8_gemm_per_tensor", true},         {"fp8_gemm_rowwise_bias", true},       {"fp8_gemm_block_scaled", false},
    {"w8a16_fp8_weight_gemm", true},       {"fp8_e5m2_allgather_cols", false},    {"moe_a2a_fp8_rowscale", false},
    {"int8_rowwise_quant_i32", false},     {"w8a16_int8_packed_gemm", false},     {"routing_map_transpose", false},
    {"argmax_wide_vocab", false},          {"top_p_sample_64", false},            {"min_p_filter", false},
    {"repetition_penalty", false},         {"position_ids_from_mask", false},     {"cu_seqlens_and_max", false},
    {"switch_aux_loss", false},            {"router_z_loss", false},              {"ep_bias_update", false},
    {"ep_counts_exchange_offsets", false}, {"moe_combine_renorm_residual", false},
};
// The template GEMMs also with templates = false ("name/general").
const std::vector<const char*> kGeneralToo = {"fp8_gemm_per_tensor", "fp8_gemm_rowwise_bias"};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS22_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs22", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host references and checks ----

const double kNaN = std::numeric_limits<double>::quiet_NaN();
template <class T>
double hv(const T& x) {
  return val(x);
}

// Values with ties (multiples of 1 / q in [-4, 4]) as T.
template <class T>
std::vector<T> tied(LL n, unsigned seed, int q = 8) {
  const auto k = ints<int>(n, -4 * q, 4 * q, seed);
  std::vector<T> v(n);
  for (LL i = 0; i < n; ++i) v[i] = pkt::from_host<T>(float(k[i]) / float(q));
  return v;
}
// A random permutation of 0 .. n - 1 (the same on every rank).
std::vector<int> permutation(LL n, unsigned seed) {
  std::vector<int> p(n);
  std::iota(p.begin(), p.end(), 0);
  std::mt19937 g(seed);
  std::shuffle(p.begin(), p.end(), g);
  return p;
}
// Columns 0 .. n - 1 of a row by score(j), largest first, ties to the lower column (row_topk's order).
// `ambiguous` (when given): whether two of the first k + 1 differ by less than gap (relative) without being
// equal, so that the device's rounding of the scores may order them either way.
template <class F>
std::vector<int> order_desc(LL n, const F& score, LL k = 0, double gap = 0, bool* ambiguous = nullptr) {
  std::vector<int> o(n);
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(), [&](int a, int b) { return score(a) > score(b); });
  if (ambiguous) {
    *ambiguous = false;
    for (LL j = 0; j + 1 < std::min<LL>(k + 1, n); ++j) {
      const double a = score(o[j]), b = score(o[j + 1]);
      if (a != b && a - b <= gap * std::max(std::fabs(a), 1.0)) *ambiguous = true;
    }
  }
  return o;
}
double e5m2(double x) { return pkt::fp8_decode(pkt::fp8_encode(x, pkt::kE5M2), pkt::kE5M2); }
// How far an fp8 rounding of v can move when v moves by a few fp32 units: 0 away from the rounding points.
double e4m3_step(double v) { return std::fabs(e4m3(v * (1 + 1e-6)) - e4m3(v * (1 - 1e-6))); }
double e5m2_step(double v) { return std::fabs(e5m2(v * (1 + 1e-6)) - e5m2(v * (1 - 1e-6))); }
// x quantised with a = the largest magnitude of its group (fp32, as the kernels compute: v = x * (max / a),
// code = fp8(v)) and dequantised with s = a / max into bf16: the value and its bound (the code's neighbour,
// one bf16 unit, at most 2^-7 of it).
struct Dq {
  double want, tol;
};
Dq fp8_dequant(double x, float a, bool e5) {
  const float mx = e5 ? 57344.0f : 448.0f, f = mx / a, v = float(x) * f, s = a / mx;
  const double code = e5 ? e5m2(v) : e4m3(v), step = e5 ? e5m2_step(v) : e4m3_step(v);
  const double want = bf16r(float(code) * s);
  return {want, step * s * 1.01 + kBf * std::fabs(want) + 1e-30};
}
// The largest magnitude of n values (fp32), at least lo.
template <class F>
float amax_of(LL n, const F& x, float lo) {
  float a = 0;
  for (LL i = 0; i < n; ++i) a = std::max(a, std::fabs(float(x(i))));
  return std::max(a, lo);
}

// Each rank's vector, read by every rank: the ranks are threads of this process (pkt::run_ranks), so host
// memory between two barriers carries what a receiver needs to check an order the device chose.
std::mutex g_board_mu;
std::vector<std::vector<long long>> g_board(PK_MAX_RANKS);
std::vector<std::vector<long long>> share(const Run& r, const std::vector<long long>& mine) {
  {
    std::lock_guard<std::mutex> l(g_board_mu);
    g_board[r.me] = mine;
  }
  if (!r.ctx.exchange().barrier().is_ok()) pkt::fail("barrier (share)");
  std::vector<std::vector<long long>> all;
  {
    std::lock_guard<std::mutex> l(g_board_mu);
    all.assign(g_board.begin(), g_board.begin() + r.W);
  }
  if (!r.ctx.exchange().barrier().is_ok()) pkt::fail("barrier (share)");
  return all;
}
template <class T>
std::vector<long long> as_ll(const std::vector<T>& v) {
  return std::vector<long long>(v.begin(), v.end());
}

// ================================================================ routers ==

// router_softmax_top2_renorm: p = softmax(logits[t, :E]); ids = its top-2 columns; wts = p[ids] / (p[ids0] +
// p[ids1]). The order is the logits' (softmax is monotone); rows with two of the top 3 within 1e-5 are left to
// the device's choice (the weights then follow its ids).
void router_softmax_top2(const Run& r, LL T, LL E, unsigned seed) {
  const std::string kn = "router_softmax_top2_renorm";
  const auto lg = rnd<float>(T * E, seed, -4.f, 4.f);
  DevLocal<float> ld({T, E}, lg), wts({T, 2}, {});
  DevLocal<int> ids({T, 2}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), ids.view(), wts.view())) {
    const auto gi = ids.download();
    std::vector<double> wi(T * 2), ww(T * 2);
    for (LL t = 0; t < T; ++t) {
      bool amb = false;
      const auto o = order_desc(E, [&](LL j) { return double(lg[t * E + j]); }, 2, 1e-5, &amb);
      int c[2] = {o[0], o[1]};
      if (amb && gi[t * 2] >= 0 && gi[t * 2] < E && gi[t * 2 + 1] >= 0 && gi[t * 2 + 1] < E)
        c[0] = gi[t * 2], c[1] = gi[t * 2 + 1];
      double m = -1e300, z = 0;
      for (LL j = 0; j < E; ++j) m = std::max(m, double(lg[t * E + j]));
      for (LL j = 0; j < E; ++j) z += std::exp(lg[t * E + j] - m);
      const double p0 = std::exp(lg[t * E + c[0]] - m) / z, p1 = std::exp(lg[t * E + c[1]] - m) / z;
      wi[t * 2] = c[0], wi[t * 2 + 1] = c[1], ww[t * 2] = p0 / (p0 + p1), ww[t * 2 + 1] = p1 / (p0 + p1);
    }
    check(r, kn + ".ids", gi, [&](LL i) { return wi[i]; }, exact());
    check(r, kn + ".wts", wts.download(), [&](LL i) { return ww[i]; }, abs_tol(2e-6));
  }
  end_case(r, kn + " " + dims({T, E}), before);
}

// router_top8_then_softmax: v = the 8 largest bf16 logits (ties to the lower column: logits are multiples of
// 1/8, so ties are many), ids their columns; wts = softmax(v). E < 128 leaves padding columns never chosen.
void router_top8(const Run& r, LL T, LL E, unsigned seed) {
  const std::string kn = "router_top8_then_softmax";
  const auto lg = tied<bf16>(T * E, seed);
  DevLocal<bf16> ld({T, E}, lg);
  DevLocal<int> ids({T, 8}, {});
  DevLocal<float> wts({T, 8}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), ids.view(), wts.view())) {
    std::vector<double> wi(T * 8), ww(T * 8);
    for (LL t = 0; t < T; ++t) {
      const auto o = order_desc(E, [&](LL j) { return val(lg[t * E + j]); });
      double z = 0;
      for (int j = 0; j < 8; ++j) z += std::exp(val(lg[t * E + o[j]]) - val(lg[t * E + o[0]]));
      for (int j = 0; j < 8; ++j)
        wi[t * 8 + j] = o[j], ww[t * 8 + j] = std::exp(val(lg[t * E + o[j]]) - val(lg[t * E + o[0]])) / z;
    }
    check(r, kn + ".ids", ids.download(), [&](LL i) { return wi[i]; }, exact());
    check(r, kn + ".wts", wts.download(), [&](LL i) { return ww[i]; }, [&](LL i) { return 5e-6 * ww[i] + 1e-7; });
  }
  end_case(r, kn + " " + dims({T, E}), before);
}

// router_sigmoid_bias_top4: s = sigmoid(logits) (sg), ids = top-4 of s + bias, wts = scale s[id] / sum s[ids].
void router_sigmoid_bias(const Run& r, LL T, float route_scale, unsigned seed) {
  const std::string kn = "router_sigmoid_bias_top4";
  const LL E = 64;
  const auto lg = rnd<float>(T * E, seed, -4.f, 4.f), bias = rnd<float>(E, seed + 1, -0.1f, 0.1f);
  DevLocal<float> ld({T, E}, lg), bd({1, E}, bias), sg({T, E}, {}), wts({T, 4}, {});
  DevLocal<int> ids({T, 4}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), bd.view(), ids.view(), sg.view(), wts.view(), route_scale)) {
    const auto gi = ids.download();
    auto s = [&](LL i) { return pkt::sigmoid(double(lg[i])); };
    std::vector<double> wi(T * 4), ww(T * 4);
    for (LL t = 0; t < T; ++t) {
      bool amb = false;
      const auto o = order_desc(E, [&](LL j) { return s(t * E + j) + bias[j]; }, 4, 1e-5, &amb);
      std::vector<int> c(o.begin(), o.begin() + 4);
      bool valid = true;
      for (int j = 0; j < 4; ++j) valid = valid && gi[t * 4 + j] >= 0 && gi[t * 4 + j] < E;
      if (amb && valid)
        for (int j = 0; j < 4; ++j) c[j] = gi[t * 4 + j];
      double z = 0;
      for (int j = 0; j < 4; ++j) z += s(t * E + c[j]);
      for (int j = 0; j < 4; ++j) wi[t * 4 + j] = c[j], ww[t * 4 + j] = route_scale * s(t * E + c[j]) / z;
    }
    check(r, kn + ".sg", sg.download(), [&](LL i) { return s(i); }, [&](LL i) { return 4e-6 * s(i) + 1e-7; });
    check(r, kn + ".ids", gi, [&](LL i) { return wi[i]; }, exact());
    check(r, kn + ".wts", wts.download(), [&](LL i) { return ww[i]; }, [&](LL i) { return 1e-5 * ww[i] + 1e-7; });
  }
  end_case(r, kn + " " + dims({T}) + " scale " + std::to_string(route_scale), before);
}

// router_group_limited_top2: gscore = each group's (8 experts) largest logit; the two best groups are kept;
// ids = top-2 of p among the kept experts (p's order is the logits').
void router_group_limited(const Run& r, LL T, unsigned seed) {
  const std::string kn = "router_group_limited_top2";
  const LL E = 64;
  const auto lg = rnd<float>(T * E, seed, -4.f, 4.f);
  DevLocal<float> ld({T, E}, lg), gs({T, 8}, {});
  DevLocal<int> ids({T, 2}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), gs.view(), ids.view())) {
    const auto gi = ids.download();
    std::vector<double> wg(T * 8, -1e300), wi(T * 2);
    for (LL t = 0; t < T; ++t) {
      for (LL e = 0; e < E; ++e) wg[t * 8 + e / 8] = std::max(wg[t * 8 + e / 8], double(lg[t * E + e]));
      const auto go = order_desc(8, [&](LL g) { return wg[t * 8 + g]; });
      const double thr = wg[t * 8 + go[1]];
      bool amb = false;
      const auto o = order_desc(E, [&](LL e) { return wg[t * 8 + e / 8] >= thr ? double(lg[t * E + e]) : -1e9; }, 2, 1e-5, &amb);
      wi[t * 2] = amb ? gi[t * 2] : o[0], wi[t * 2 + 1] = amb ? gi[t * 2 + 1] : o[1];
    }
    check(r, kn + ".gscore", gs.download(), [&](LL i) { return wg[i]; }, exact());
    check(r, kn + ".ids", gi, [&](LL i) { return wi[i]; }, exact());
  }
  end_case(r, kn + " " + dims({T}), before);
}

// ================================================================ counts, permutation, capacity ==

// expert_counts_offsets: counts[0, e] = #ids == e over 128 bins (ids -3 .. 130: the ones outside [0, 128)
// not counted), offsets the exclusive scan and offsets[0, 128] the total. Two launches: phase 1 re-zeroes.
void expert_counts_offsets(const Run& r, LL N, unsigned seed) {
  const std::string kn = "expert_counts_offsets";
  auto ids = ints<int>(N, -3, 130, seed);
  for (LL i = 0; i < N; i += 7) ids[i] = 17;  // a heavy expert
  DevLocal<int> idd({N}, ids), counts({1, 128}, {}), offsets({1, 129}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, idd.view(), counts.view(), offsets.view())) {
    std::vector<double> c(128, 0.0), o(129, 0.0);
    for (int v : ids)
      if (v >= 0 && v < 128) c[v] += 1;
    for (int e = 0; e < 128; ++e) o[e + 1] = o[e] + c[e];
    check(r, kn + ".counts", counts.download(), [&](LL i) { return c[i]; }, exact());
    check(r, kn + ".offsets", offsets.download(), [&](LL i) { return o[i]; }, exact());
  }
  end_case(r, kn + " " + dims({N}), before);
}

// tokens_per_expert_frac: tpe[0, e] = #(t, k) with ids == e (96 bins; ids -2 .. 97), frac = tpe / (T K).
void tokens_per_expert(const Run& r, LL T, LL Kc, unsigned seed) {
  const std::string kn = "tokens_per_expert_frac";
  const auto ids = ints<int>(T * Kc, -2, 97, seed);
  DevLocal<int> idd({T, Kc}, ids), tpe({1, 96}, {});
  DevLocal<float> frac({1, 96}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, idd.view(), tpe.view(), frac.view())) {
    std::vector<double> c(96, 0.0);
    for (int v : ids)
      if (v >= 0 && v < 96) c[v] += 1;
    check(r, kn + ".tokens_per_expert", tpe.download(), [&](LL i) { return c[i]; }, exact());
    check(r, kn + ".frac", frac.download(), [&](LL i) { return c[i] / double(T * Kc); },
          [&](LL i) { return 1e-6 * c[i] / double(T * Kc); });
  }
  end_case(r, kn + " " + dims({T, Kc}), before);
}

// permute_tokens: y[i] = x[src[i] / K] for i < N = T K (src a permutation of the choices). y's 5 rows past N
// lie in the last 64-row tile, whose rows past src's end are its padding: a store clips at y's end, not
// src's, so they are written as zeros (docs/language.md, partial tiles); rows past that tile stay untouched.
void permute_tokens(const Run& r, LL T, LL Kc, LL H, unsigned seed) {
  const std::string kn = "permute_tokens";
  const LL N = T * Kc;
  const auto x = rnd<bf16>(T * H, seed);
  const auto src = permutation(N, seed + 1);
  DevLocal<bf16> xd({T, H}, x), y({N + 5, H}, {});
  DevLocal<int> sd({N}, src);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), sd.view(), y.view(), LL(Kc))) {
    std::vector<double> want((N + 5) * H, kNaN);
    for (LL i = 0; i < N; ++i)
      for (LL h = 0; h < H; ++h) want[i * H + h] = val(x[(src[i] / Kc) * H + h]);
    for (LL i = N; i < std::min(N + 5, (N + 63) / 64 * 64); ++i)
      for (LL h = 0; h < H; ++h) want[i * H + h] = 0.0;
    check_or_poison(r, kn + ".y", y.download(), want, exact());
  }
  end_case(r, kn + " " + dims({T, Kc, H}), before);
}

// unpermute_weighted_residual: out[t] = bf16(sum_{dst >= 0} wts y[dst] + residual); about one choice in five
// dropped (-1).
void unpermute(const Run& r, LL T, LL Kc, LL H, LL Ny, unsigned seed) {
  const std::string kn = "unpermute_weighted_residual";
  const auto y = rnd<bf16>(Ny * H, seed), res = rnd<bf16>(T * H, seed + 1);
  const auto w = rnd<float>(T * Kc, seed + 2, 0.f, 1.f);
  auto dst = ints<int>(T * Kc, 0, Ny - 1, seed + 3);
  const auto kind = ints<int>(T * Kc, 0, 4, seed + 4);
  for (LL i = 0; i < T * Kc; ++i)
    if (kind[i] == 0) dst[i] = -1;
  DevLocal<bf16> yd({Ny, H}, y), rd({T, H}, res), out({T, H}, {});
  DevLocal<int> dd({T, Kc}, dst);
  DevLocal<float> wd({T, Kc}, w);
  const int before = begin_case(r);
  if (run(r, kn, 2, yd.view(), dd.view(), wd.view(), rd.view(), out.view())) {
    std::vector<double> want(T * H), mag(T * H);
    for (LL t = 0; t < T; ++t)
      for (LL h = 0; h < H; ++h) {
        double s = val(res[t * H + h]), g = std::fabs(s);
        for (LL k = 0; k < Kc; ++k)
          if (dst[t * Kc + k] >= 0) {
            const double c = double(w[t * Kc + k]) * val(y[dst[t * Kc + k] * H + h]);
            s += c, g += std::fabs(c);
          }
        want[t * H + h] = s, mag[t * H + h] = g;
      }
    check(r, kn + ".out", out.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-6 * mag[i]; });
  }
  end_case(r, kn + " " + dims({T, Kc, H, Ny}), before);
}

// capacity_dispatch (claim order unspecified): per expert e with n_e choices, fill[e] = n_e, count[e] =
// min(n_e, capacity), the kept slots are e capacity + {0 .. count - 1} each once and the rest -1 (ids -1 and
// E, outside the counter, give -1 too); buf[slot] = x[t] for each kept choice, every other row untouched.
// Expert E - 2 is never chosen.
void capacity_dispatch(const Run& r, LL T, LL Kc, LL H, LL E, LL cap, unsigned seed) {
  const std::string kn = "capacity_dispatch";
  const auto x = rnd<bf16>(T * H, seed);
  auto ids = ints<int>(T * Kc, -1, int(E), seed + 1);
  for (auto& v : ids)
    if (v == E - 2) v = 0;
  DevLocal<bf16> xd({T, H}, x), buf({E * cap, H}, {});
  DevLocal<int> idd({T, Kc}, ids), fill({E}, {}), slot({T, Kc}, {}), count({E}, {});
  const int before = begin_case(r);
  if (run(r, kn, 1, xd.view(), idd.view(), fill.view(), slot.view(), buf.view(), count.view(), LL(cap))) {
    std::vector<double> n(E, 0.0);
    for (int v : ids)
      if (v >= 0 && v < E) n[v] += 1;
    check(r, kn + ".fill", fill.download(), [&](LL e) { return n[e]; }, exact());
    check(r, kn + ".count", count.download(), [&](LL e) { return std::min(n[e], double(cap)); }, exact());
    const auto gs = slot.download();
    std::vector<double> want(E * cap * H, kNaN);
    std::vector<int> kept(E, 0);
    std::set<int> seen;
    LL bad = 0;
    for (LL i = 0; i < T * Kc; ++i) {
      const int e = ids[i], s = gs[i];
      const bool ok = s == -1 ? !(e >= 0 && e < E) || n[e] > cap
                              : e >= 0 && e < E && s >= e * cap && s < (e + 1) * cap && seen.insert(s).second;
      if (!ok) {
        if (bad++ < 3) pkt::fail(kn + ".slot element " + std::to_string(i) + ": " + std::to_string(s) + " for id " + std::to_string(e));
        continue;
      }
      if (s < 0) continue;
      ++kept[e];
      for (LL h = 0; h < H; ++h) want[s * H + h] = val(x[(i / Kc) * H + h]);
    }
    for (LL e = 0; e < E; ++e)
      if (kept[e] != std::min<LL>(LL(n[e]), cap)) pkt::fail(kn + ": expert " + std::to_string(e) + " keeps " + std::to_string(kept[e]));
    check_or_poison(r, kn + ".buf", buf.download(), want, exact());
  }
  end_case(r, kn + " " + dims({T, Kc, H, E, cap}), before);
}

// grouped_expert_gemm_silu: h[off[e] + i, j] = bf16(silu(xp[off[e] + i] . w[e, j])) for i < cnt[e]; the two rows
// between experts' ranges and the three after the last untouched.
void grouped_gemm(const Run& r, LL F, LL Kd, LL maxrows, const std::vector<int>& cnt, unsigned seed) {
  const std::string kn = "grouped_expert_gemm_silu";
  const LL E = LL(cnt.size());
  std::vector<int> off(E);
  LL N = 0;
  for (LL e = 0; e < E; ++e) off[e] = int(N), N += cnt[e] + 2;
  N += 1;
  const auto xp = rnd<bf16>(N * Kd, seed), w = rnd<bf16>(E * F * Kd, seed + 1);
  DevLocal<bf16> xd({N, Kd}, xp), wd({E, F, Kd}, w), h({N, F}, {});
  DevLocal<int> od({E}, off), cd({E}, cnt);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), od.view(), cd.view(), wd.view(), h.view(), maxrows)) {
    std::vector<double> want(N * F, kNaN), tol(N * F, 0.0);
    for (LL e = 0; e < E; ++e)
      for (LL i = off[e]; i < off[e] + cnt[e]; ++i)
        for (LL j = 0; j < F; ++j) {
          double s = 0, g = 0;
          for (LL k = 0; k < Kd; ++k) {
            const double p = val(xp[i * Kd + k]) * val(w[(e * F + j) * Kd + k]);
            s += p, g += std::fabs(p);
          }
          want[i * F + j] = silu(s), tol[i * F + j] = kBf * std::fabs(silu(s)) + 1.2e-5 * g;
        }
    check_or_poison(r, kn + ".h", h.download(), want, [&](LL i) { return tol[i]; });
  }
  std::string c;
  for (int v : cnt) c += " " + std::to_string(v);
  end_case(r, kn + " " + dims({F, Kd, maxrows}) + " cnt" + c, before);
}

// ================================================================ MoE across ranks ==

// Rank p's router choices: K distinct experts of E per token, none of them `dead`, about one in six -1.
std::vector<int> choices(LL T, LL Kc, LL E, int dead, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<int> ids(T * Kc);
  for (LL t = 0; t < T; ++t) {
    std::vector<int> pool;
    for (int e = 0; e < E; ++e)
      if (e != dead) pool.push_back(e);
    std::shuffle(pool.begin(), pool.end(), g);
    for (LL k = 0; k < Kc; ++k) ids[t * Kc + k] = g() % 6 == 0 ? -1 : pool[k];
  }
  return ids;
}

// ep_dispatch_expert_major: E = W El, expert 1 receives nothing. Rank me checks: its slots (block (e % El) W +
// me, places per expert distinct and below n), counts[l W + s] = n of rank s for expert me El + l, and every
// row each sender's slot names holds the sender's token (recv) and its global index (src); the rest untouched.
void ep_dispatch(const Run& r, LL T, LL Kc, LL H, LL El, unsigned seed) {
  const std::string kn = "ep_dispatch_expert_major";
  const int W = r.W, me = r.me;
  const LL E = W * El, R = El * W * T;
  std::vector<std::vector<bf16>> x(W);
  std::vector<std::vector<int>> ids(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<bf16>(T * H, seed + p), ids[p] = choices(T, Kc, E, 1, seed + 50 + p);
  // n[p][e]: rank p's choices of expert e.
  std::vector<std::vector<LL>> n(W, std::vector<LL>(E, 0));
  for (int p = 0; p < W; ++p)
    for (int v : ids[p])
      if (v >= 0) ++n[p][v];
  DevLocal<bf16> xd({T, H}, x[me]);
  DevLocal<int> idd({T, Kc}, ids[me]), slot({T, Kc}, {});
  SymArg<int> fill(r.ctx, {E}, nullptr), src(r.ctx, {R, 1}, nullptr), counts(r.ctx, {El * W}, nullptr);
  SymArg<bf16> recv(r.ctx, {R, H}, nullptr);
  const int before = begin_case(r);
  const bool ok = run(r, kn, 2, xd.view(), idd.view(), fill.view, slot.view(), recv.view, src.view, counts.view, LL(El));
  const auto gs = slot.download();
  const auto all = share(r, as_ll(gs));  // every rank, launched or not: share's barriers
  if (ok) {
    // Places are distinct per receiving rank: experts e and e + El share block (e % El) W + me, on
    // different ranks.
    std::set<std::pair<LL, LL>> seen;
    for (LL i = 0; i < T * Kc; ++i) {
      const int e = ids[me][i];
      const LL b = e < 0 ? 0 : (e % El) * W + me;
      const bool good = e < 0 ? gs[i] == -1
                              : gs[i] >= b * T && gs[i] < b * T + n[me][e] && seen.insert({e / El, gs[i]}).second;
      if (!good) pkt::fail(kn + ".slot W=" + std::to_string(W) + " rank " + std::to_string(me) + " element " + std::to_string(i) +
                         ": " + std::to_string(gs[i]));
    }
    check(r, kn + ".counts", counts.download(), [&](LL b) { return double(n[b % W][me * El + b / W]); }, exact());
    std::vector<double> wr(R * H, kNaN), ws(R, -1.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < T * Kc; ++i) {
        const int e = ids[p][i];
        const LL row = all[p][i];
        if (e < 0 || e / El != me || row < 0 || row >= R) continue;
        ws[row] = double(p * T + i / Kc);
        for (LL h = 0; h < H; ++h) wr[row * H + h] = val(x[p][(i / Kc) * H + h]);
      }
    check_or_poison(r, kn + ".recv", recv.download(), wr, exact());
    check(r, kn + ".src", src.download(), [&](LL i) { return ws[i]; }, exact());
  }
  end_case(r, kn + " " + dims({T, Kc, H, El}), before);
}

// ep_combine_push: out on rank s, row t = sum over every rank q's filled rows i (i - b T < counts_q[b]) with
// src_q[i] = s T + t of wrecv_q[i] y_q[i]. Stale rows past a block's count carry valid-looking sources (they
// must add nothing); block 0 is empty and block 1 full on every rank.
void ep_combine_push(const Run& r, LL T, LL H, LL El, unsigned seed) {
  const std::string kn = "ep_combine_push";
  const int W = r.W, me = r.me;
  const LL B = El * W, R = B * T;
  std::vector<std::vector<bf16>> y(W);
  std::vector<std::vector<int>> src(W), cnt(W);
  std::vector<std::vector<float>> w(W);
  for (int p = 0; p < W; ++p) {
    y[p] = rnd<bf16>(R * H, seed + p), w[p] = rnd<float>(R, seed + 10 + p, 0.1f, 1.f);
    src[p] = ints<int>(R, 0, W * T - 1, seed + 20 + p), cnt[p] = ints<int>(B, 0, int(T), seed + 30 + p);
    cnt[p][0] = 0, cnt[p][1] = int(T);
  }
  DevLocal<bf16> yd({R, H}, y[me]);
  DevLocal<int> sd({R, 1}, src[me]), cd({B, 1}, cnt[me]);
  DevLocal<float> wd({R, 1}, w[me]);
  SymArg<float> out(r.ctx, {T, H}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, yd.view(), sd.view(), wd.view(), cd.view(), out.view)) {
    std::vector<double> want(T * H, 0.0), mag(T * H, 0.0);
    for (int q = 0; q < W; ++q)
      for (LL i = 0; i < R; ++i) {
        if (i % T >= cnt[q][i / T] || src[q][i] / T != me) continue;
        const LL t = src[q][i] % T;
        for (LL h = 0; h < H; ++h) {
          const double c = double(w[q][i]) * val(y[q][i * H + h]);
          want[t * H + h] += c, mag[t * H + h] += std::fabs(c);
        }
      }
    check(r, kn + ".out", out.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i]; });
  }
  end_case(r, kn + " " + dims({T, H, El}), before);
}

// all_to_all_v_unsorted: dest in -1 .. W (-1 and W not sent; with `skip_last` at W >= 3 nobody sends to rank
// W - 1). Rank me checks its places (per destination distinct, below the count), recv[s] = rows s sends me,
// and y: sender s's row i at (sum_{s' < s} recv[s']) + place_s[i] when below M, every row past the total
// untouched.
void all_to_all_v(const Run& r, LL N, LL H, LL M, bool skip_last, unsigned seed) {
  const std::string kn = "all_to_all_v_unsorted";
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> x(W);
  std::vector<std::vector<int>> dest(W);
  std::vector<std::vector<LL>> n(W, std::vector<LL>(W, 0));  // n[s][p]
  for (int p = 0; p < W; ++p) {
    x[p] = rnd<bf16>(N * H, seed + p), dest[p] = ints<int>(N, -1, W, seed + 20 + p);
    if (skip_last && W >= 3)
      for (auto& d : dest[p])
        if (d == W - 1) d = 0;
    for (int d : dest[p])
      if (d >= 0 && d < W) ++n[p][d];
  }
  DevLocal<bf16> xd({N, H}, x[me]);
  DevLocal<int> dd({N, 1}, dest[me]), place({N, 1}, {});
  SymArg<int> fill(r.ctx, {W}, nullptr), recv(r.ctx, {W}, nullptr);
  SymArg<bf16> y(r.ctx, {M, H}, nullptr);
  const int before = begin_case(r);
  const bool ok = run(r, kn, 2, xd.view(), dd.view(), fill.view, place.view(), y.view, recv.view);
  const auto gp = place.download();
  const auto all = share(r, as_ll(gp));  // every rank, launched or not: share's barriers
  if (ok) {
    std::set<std::pair<int, int>> seen;
    for (LL i = 0; i < N; ++i) {
      const int d = dest[me][i];
      const bool good = d < 0 || d >= W ? gp[i] == -1 : gp[i] >= 0 && gp[i] < n[me][d] && seen.insert({d, gp[i]}).second;
      if (!good) pkt::fail(kn + ".place W=" + std::to_string(W) + " rank " + std::to_string(me) + " row " + std::to_string(i) +
                         ": " + std::to_string(gp[i]));
    }
    check(r, kn + ".recv", recv.download(), [&](LL s) { return double(n[s][me]); }, exact());
    std::vector<double> want(M * H, kNaN);
    LL base = 0;
    for (int s = 0; s < W; ++s) {
      for (LL i = 0; i < N; ++i) {
        const LL row = base + all[s][i];
        if (dest[s][i] != me || all[s][i] < 0 || row >= M) continue;
        for (LL h = 0; h < H; ++h) want[row * H + h] = val(x[s][i * H + h]);
      }
      base += n[s][me];
    }
    check_or_poison(r, kn + ".y", y.download(), want, exact());
  }
  end_case(r, kn + " " + dims({N, H, M}) + (skip_last ? " (rank W-1 receives nothing)" : ""), before);
}

// moe_combine_renorm_residual: out[t] = bf16(res[t] + sum_{slot >= 0} (wts / sum_k wts) y_{ids / El}[slot]);
// ids distinct per token in [0, W El), about one choice in six dropped (slot -1, its weight still in the sum).
void moe_combine_residual(const Run& r, LL T, LL Kc, LL H, LL El, LL Ny, unsigned seed) {
  const std::string kn = "moe_combine_renorm_residual";
  const int W = r.W, me = r.me;
  const LL E = W * El;
  std::vector<std::vector<bf16>> y(W);
  for (int p = 0; p < W; ++p) y[p] = rnd<bf16>(Ny * H, seed + p);
  auto ids = choices(T, Kc, E, -1, seed + 40 + me);
  auto slot = ints<int>(T * Kc, 0, Ny - 1, seed + 50 + me);
  for (LL i = 0; i < T * Kc; ++i)
    if (ids[i] < 0) ids[i] = int(i % E), slot[i] = -1;  // a dropped choice: its id valid, its slot -1
  const auto w = rnd<float>(T * Kc, seed + 60 + me, 0.05f, 1.f);
  const auto res = rnd<bf16>(T * H, seed + 70 + me);
  SymArg<bf16> yd(r.ctx, {Ny, H}, &y[me]);
  DevLocal<int> idd({T, Kc}, ids), sd({T, Kc}, slot);
  DevLocal<float> wd({T, Kc}, w);
  DevLocal<bf16> rd({T, H}, res), out({T, H}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, yd.view, idd.view(), wd.view(), sd.view(), rd.view(), out.view(), LL(El))) {
    std::vector<double> want(T * H), mag(T * H);
    for (LL t = 0; t < T; ++t) {
      double z = 0;
      for (LL k = 0; k < Kc; ++k) z += w[t * Kc + k];
      for (LL h = 0; h < H; ++h) {
        double s = val(res[t * H + h]), g = std::fabs(s);
        for (LL k = 0; k < Kc; ++k)
          if (slot[t * Kc + k] >= 0) {
            const double c = w[t * Kc + k] / z * val(y[ids[t * Kc + k] / El][slot[t * Kc + k] * H + h]);
            s += c, g += std::fabs(c);
          }
        want[t * H + h] = s, mag[t * H + h] = g;
      }
    }
    check(r, kn + ".out", out.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-6 * mag[i]; });
  }
  end_case(r, kn + " " + dims({T, Kc, H, El, Ny}), before);
}

// ep_counts_exchange_offsets: recv_counts[s El + l] = send_counts of rank s at me El + l; recv_off their
// exclusive scan; recv_total their sum. Counts 0 .. 50 (zeros among them).
void ep_counts_exchange(const Run& r, LL El, unsigned seed) {
  const std::string kn = "ep_counts_exchange_offsets";
  const int W = r.W, me = r.me;
  const LL n = W * El;
  std::vector<std::vector<int>> sc(W);
  for (int p = 0; p < W; ++p) sc[p] = ints<int>(n, -20, 50, seed + p);
  for (auto& v : sc)
    for (auto& c : v) c = std::max(c, 0);
  SymArg<int> sd(r.ctx, {n}, &sc[me]), rc(r.ctx, {n}, nullptr);
  DevLocal<int> off({n}, {}), total({1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, sd.view, rc.view, off.view(), total.view())) {
    std::vector<double> c(n), o(n + 1, 0.0);
    for (LL i = 0; i < n; ++i) c[i] = sc[i / El][me * El + i % El], o[i + 1] = o[i] + c[i];
    check(r, kn + ".recv_counts", rc.download(), [&](LL i) { return c[i]; }, exact());
    check(r, kn + ".recv_off", off.download(), [&](LL i) { return o[i]; }, exact());
    check(r, kn + ".recv_total", total.download(), [&](LL) { return o[n]; }, exact());
  }
  end_case(r, kn + " El " + std::to_string(El), before);
}

// ep_bias_update: local = this rank's histogram (ids in [0, E), plus -1 and 300 counted by neither reading),
// total = the sum over ranks, bias += rate sign(mean - total) in place (mean = sum of total / E, in f32 as
// the kernel). `balanced`: every rank's ids are i % E, so every count equals the mean and bias stays.
void ep_bias_update(const Run& r, LL N, LL E, bool balanced, unsigned seed) {
  const std::string kn = "ep_bias_update";
  const int W = r.W, me = r.me;
  const float rate = 0.01f;
  std::vector<std::vector<int>> ids(W);
  for (int p = 0; p < W; ++p) {
    ids[p] = ints<int>(N, 0, int(E) - 1, seed + p);
    for (LL i = 0; i < N; ++i) {
      if (balanced) ids[p][i] = int(i % E);
      else if (i % 97 == 5) ids[p][i] = i % 2 ? -1 : 300;
    }
  }
  const auto b0 = rnd<float>(E, seed + 40 + me);
  DevLocal<int> idd({N}, ids[me]);
  DevLocal<float> bias({1, E}, b0);
  SymArg<int> local(r.ctx, {1, 256}, nullptr), total(r.ctx, {1, 256}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 1, idd.view(), local.view, total.view, bias.view(), rate)) {
    std::vector<double> own(256, 0.0), tot(256, 0.0);
    for (int p = 0; p < W; ++p)
      for (int v : ids[p])
        if (v >= 0 && v < 256) tot[v] += 1, own[v] += p == me;
    float sum = 0;
    for (LL e = 0; e < E; ++e) sum += float(tot[e]);
    const float mean = sum / float(E);
    check(r, kn + ".local", local.download(), [&](LL i) { return own[i]; }, exact());
    check(r, kn + ".total", total.download(), [&](LL i) { return tot[i]; }, exact());
    check(r, kn + ".bias", bias.download(), [&](LL e) {
      const float c = float(tot[e]), d = c < mean ? 1.f : c > mean ? -1.f : 0.f;
      return double(b0[e] + d * rate);
    }, exact());
  }
  end_case(r, kn + " " + dims({N, E}) + (balanced ? " balanced" : ""), before);
}

// ================================================================ vocabulary parallel (multi-rank) ==

// vp_embedding_padding_idx: out[t] = bf16(f32(table_q[id - q V]) scale) for the shard q holding id, 0 for the
// padding id, ids outside [0, W V) (-1, W V) and 2^32 + 3 (which a 32-bit index would take for row 3).
void vp_embedding(const Run& r, LL T, LL V, LL H, LL pad, unsigned seed) {
  const std::string kn = "vp_embedding_padding_idx";
  const int W = r.W, me = r.me;
  const float scale = 2.5f;
  std::vector<std::vector<bf16>> table(W);
  for (int p = 0; p < W; ++p) table[p] = rnd<bf16>(V * H, seed + p);
  auto ids = ints<long long>(T, -1, W * V, seed + 20);
  for (LL t = 0; t < T; t += 5) ids[t] = pad;
  if (T > 3) ids[1] = (1LL << 32) + 3, ids[2] = W * V, ids[3] = -1;
  DevLocal<long long> idd({T, 1}, ids);
  DevLocal<bf16> td({V, H}, table[me]);
  SymArg<bf16> part(r.ctx, {T, H}, nullptr), out(r.ctx, {T, H}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, idd.view(), td.view(), part.view, out.view, pad, scale)) {
    auto want = [&](LL i) {
      const LL id = ids[i / H];
      if (id == pad || id < 0 || id >= W * V) return 0.0;
      return bf16r(float(val(table[id / V][(id % V) * H + i % H])) * scale);
    };
    check(r, kn + ".out", out.download(), want, exact());
  }
  end_case(r, kn + " " + dims({T, V, H}) + " pad " + std::to_string(pad), before);
}

// Rank p's logits shard [T, V] of [T, W V] (f32), targets (every fifth the ignore index -100, every fourth
// planted in the first columns of some shard), and the statistics over all W V columns.
struct Vocab {
  std::vector<std::vector<float>> lg;
  std::vector<int> target;
  std::vector<double> mx, s, xt, sx, sxa;  // max, sum exp(x - max), the target's logit, sum x, sum |x|
};
Vocab vocab(int W, LL T, LL V, unsigned seed) {
  Vocab v;
  for (int p = 0; p < W; ++p) v.lg.push_back(rnd<float>(T * V, seed + p, -4.f, 4.f));
  v.target = ints<int>(T, 0, int(W * V) - 1, seed + 20);
  for (LL t = 0; t < T; ++t) {
    if (t % 4 == 0) v.target[t] = int((t / 4 % W) * V + t % 3 % V);
    if (t % 5 == 1) v.target[t] = -100;
  }
  auto x = [&](LL t, LL c) { return double(v.lg[c / V][t * V + c % V]); };
  for (LL t = 0; t < T; ++t) {
    double m = -1e300, s = 0, sx = 0, sa = 0;
    for (LL c = 0; c < W * V; ++c) m = std::max(m, x(t, c)), sx += x(t, c), sa += std::fabs(x(t, c));
    for (LL c = 0; c < W * V; ++c) s += std::exp(x(t, c) - m);
    v.mx.push_back(m), v.s.push_back(s), v.sx.push_back(sx), v.sxa.push_back(sa);
    v.xt.push_back(v.target[t] < 0 ? 0.0 : x(t, v.target[t]));
  }
  return v;
}

// vp_cross_entropy_smooth_ignore: lmax (this shard's), gmax, gstats = (S, x_t, sum x), loss = (1 - eps)(lse -
// x_t) + eps (lse - mean), 0 for target -100.
void vp_ce(const Run& r, LL T, LL V, float eps, unsigned seed) {
  const std::string kn = "vp_cross_entropy_smooth_ignore";
  const int W = r.W, me = r.me;
  const auto v = vocab(W, T, V, seed);
  DevLocal<float> ld({T, V}, v.lg[me]), loss({T, 1}, {});
  DevLocal<int> td({T, 1}, v.target);
  SymArg<float> lmax(r.ctx, {T, 1}, nullptr), gmax(r.ctx, {T, 1}, nullptr), ls(r.ctx, {T, 3}, nullptr),
      gs(r.ctx, {T, 3}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), td.view(), lmax.view, gmax.view, ls.view, gs.view, loss.view(), eps, LL(-100))) {
    check(r, kn + ".lmax", lmax.download(), [&](LL t) {
      return double(*std::max_element(v.lg[me].begin() + t * V, v.lg[me].begin() + (t + 1) * V));
    }, exact());
    check(r, kn + ".gmax", gmax.download(), [&](LL t) { return v.mx[t]; }, exact());
    check(r, kn + ".gstats", gs.download(), [&](LL i) {
      const LL t = i / 3;
      return i % 3 == 0 ? v.s[t] : i % 3 == 1 ? v.xt[t] : v.sx[t];
    }, [&](LL i) { const LL t = i / 3; return i % 3 == 0 ? 1e-5 * v.s[t] : i % 3 == 1 ? 0.0 : 1e-6 * v.sxa[t]; });
    check(r, kn + ".loss", loss.download(), [&](LL t) {
      if (v.target[t] == -100) return 0.0;
      const double lse = std::log(v.s[t]) + v.mx[t], mean = v.sx[t] / double(W * V);
      return (1 - eps) * (lse - v.xt[t]) + eps * (lse - mean);
    }, [&](LL t) { return 1e-5 * (1 + std::fabs(v.mx[t]) + std::fabs(v.xt[t])) + 2e-6 * v.sxa[t] / double(W * V); });
  }
  end_case(r, kn + " " + dims({T, V}) + " eps " + std::to_string(eps), before);
}

// vp_cross_entropy_smooth_ignore_bwd: dlogits = bf16(g ((1 - eps)(p - [col == target]) + eps (p - 1 / (W V))))
// with p = exp(x - M) / S from the host's statistics, 0 on ignored rows.
void vp_ce_bwd(const Run& r, LL T, LL V, float eps, unsigned seed) {
  const std::string kn = "vp_cross_entropy_smooth_ignore_bwd";
  const int W = r.W, me = r.me;
  const auto v = vocab(W, T, V, seed);
  std::vector<float> gm(T), st(3 * T);
  for (LL t = 0; t < T; ++t) gm[t] = float(v.mx[t]), st[3 * t] = float(v.s[t]), st[3 * t + 1] = float(v.xt[t]), st[3 * t + 2] = float(v.sx[t]);
  const auto g = rnd<float>(T, seed + 30, 0.5f, 2.f);
  DevLocal<float> ld({T, V}, v.lg[me]), gmd({T, 1}, gm), sd({T, 3}, st), gd({T, 1}, g);
  DevLocal<int> td({T, 1}, v.target);
  DevLocal<bf16> dl({T, V}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), td.view(), gmd.view(), sd.view(), gd.view(), dl.view(), eps, LL(-100))) {
    auto want = [&](LL i) {
      const LL t = i / V, c = i % V + LL(me) * V;
      if (v.target[t] == -100) return 0.0;
      const double p = std::exp(double(v.lg[me][i]) - double(gm[t])) / double(st[3 * t]);
      return g[t] * ((1 - eps) * (p - (c == v.target[t] ? 1.0 : 0.0)) + eps * (p - 1.0 / double(W * V)));
    };
    check(r, kn + ".dlogits", dl.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-6 * g[i / V]; });
  }
  end_case(r, kn + " " + dims({T, V}) + " eps " + std::to_string(eps), before);
}

// ================================================================ fp8 quantisation ==

// fp8_per_tensor_two_phase: rmax[i] = max_j |x[i, j]|; amax = max(max rmax, 1e-12); q = e4m3(x (448 / amax));
// scale_inv = amax / 448. The largest magnitude (7.5) is planted at row `hot`: past row 1024 it tests the
// 1024-row chunks.
void fp8_per_tensor(const Run& r, LL R, LL C, LL hot, unsigned seed) {
  const std::string kn = "fp8_per_tensor_two_phase";
  auto x = rnd<bf16>(R * C, seed, -3.f, 3.f);
  x[hot * C + C / 2] = pkt::from_host<bf16>(-7.5f);
  DevLocal<bf16> xd({R, C}, x);
  DevLocal<float> rmax({R, 1}, {}), si({1, 1}, {});
  DevLocal<f8e4m3> q({R, C}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), rmax.view(), q.view(), si.view())) {
    std::vector<double> rm(R, 0.0);
    for (LL i = 0; i < R * C; ++i) rm[i / C] = std::max(rm[i / C], std::fabs(val(x[i])));
    const float a = std::max(float(*std::max_element(rm.begin(), rm.end())), 1e-12f), f = 448.0f / a;
    auto v = [&](LL i) { return double(float(val(x[i])) * f); };
    check(r, kn + ".rmax", rmax.download(), [&](LL i) { return rm[i]; }, exact());
    check(r, kn + ".q", q.download(), [&](LL i) { return e4m3(v(i)); }, [&](LL i) { return e4m3_step(v(i)); });
    check(r, kn + ".scale_inv", si.download(), [&](LL) { return double(a) / 448; }, [&](LL) { return 1e-6 * a / 448; });
  }
  end_case(r, kn + " " + dims({R, C}) + " hot row " + std::to_string(hot), before);
}

// fp8_block128_weight_quant: per 128 x 128 block (clipped), amax = max(max |w|, 1e-12); q = e4m3(w (448 /
// amax)); s[i, j] = amax / 448.
void fp8_block_weight_quant(const Run& r, LL N, LL Kd, unsigned seed) {
  const std::string kn = "fp8_block128_weight_quant";
  const LL NB = (N + 127) / 128, KB = (Kd + 127) / 128;
  const auto w = rnd<bf16>(N * Kd, seed, -3.f, 3.f);
  DevLocal<bf16> wd({N, Kd}, w);
  DevLocal<f8e4m3> q({N, Kd}, {});
  DevLocal<float> s({NB, KB}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, wd.view(), q.view(), s.view())) {
    std::vector<float> a(NB * KB, 1e-12f);
    for (LL i = 0; i < N * Kd; ++i) {
      float& m = a[(i / Kd / 128) * KB + (i % Kd) / 128];
      m = std::max(m, std::fabs(float(val(w[i]))));
    }
    auto blk = [&](LL i) { return a[(i / Kd / 128) * KB + (i % Kd) / 128]; };
    auto v = [&](LL i) { return double(float(val(w[i])) * (448.0f / blk(i))); };
    check(r, kn + ".q", q.download(), [&](LL i) { return e4m3(v(i)); }, [&](LL i) { return e4m3_step(v(i)); });
    check(r, kn + ".s", s.download(), [&](LL i) { return double(a[i]) / 448; }, [&](LL i) { return 1e-6 * a[i] / 448; });
  }
  end_case(r, kn + " " + dims({N, Kd}), before);
}

// fp8_block128_dequant: y = bf16(f32(q) s[r / 128, c / 128]), exact.
void fp8_block_dequant(const Run& r, LL R, LL C, unsigned seed) {
  const std::string kn = "fp8_block128_dequant";
  const LL RB = (R + 127) / 128, CB = (C + 127) / 128;
  const auto q = rnd<f8e4m3>(R * C, seed, -448.f, 448.f);
  const auto s = rnd<float>(RB * CB, seed + 1, 0.01f, 2.f);
  DevLocal<f8e4m3> qd({R, C}, q);
  DevLocal<float> sd({RB, CB}, s);
  DevLocal<bf16> y({R, C}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), sd.view(), y.view()))
    check(r, kn + ".y", y.download(), [&](LL i) { return bf16r(float(val(q[i])) * s[(i / C / 128) * CB + (i % C) / 128]); }, exact());
  end_case(r, kn + " " + dims({R, C}), before);
}

// fp8_e5m2_rowwise_grad: a = max_j |g[i, j]|; q = e5m2(g (57344 / max(a, 1e-12))); sinv = max(a, 1e-12) / 57344;
// amax = a. Row 2 is all zeros (a = 0, codes 0).
void fp8_e5m2_rowwise(const Run& r, LL R, LL C, unsigned seed) {
  const std::string kn = "fp8_e5m2_rowwise_grad";
  auto g = rnd<bf16>(R * C, seed, -3.f, 3.f);
  if (R > 2)
    for (LL j = 0; j < C; ++j) g[2 * C + j] = pkt::from_host<bf16>(0.f);
  DevLocal<bf16> gd({R, C}, g);
  DevLocal<f8e5m2> q({R, C}, {});
  DevLocal<float> sinv({R, 1}, {}), amax({R, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, gd.view(), q.view(), sinv.view(), amax.view())) {
    std::vector<float> a(R, 0.f);
    for (LL i = 0; i < R * C; ++i) a[i / C] = std::max(a[i / C], std::fabs(float(val(g[i]))));
    auto c = [&](LL m) { return std::max(a[m], 1e-12f); };
    auto v = [&](LL i) { return double(float(val(g[i])) * (57344.0f / c(i / C))); };
    check(r, kn + ".amax", amax.download(), [&](LL m) { return double(a[m]); }, exact());
    check(r, kn + ".sinv", sinv.download(), [&](LL m) { return double(c(m)) / 57344; }, [&](LL m) { return 1e-6 * c(m) / 57344; });
    check(r, kn + ".q", q.download(), [&](LL i) { return e5m2(v(i)); }, [&](LL i) { return e5m2_step(v(i)); });
  }
  end_case(r, kn + " " + dims({R, C}), before);
}

// fp8_act_quant_1x128_loop: per row and 128-column block (the last shorter), a = max(max |x|, 1e-12); q =
// e4m3(x 448 / a); s[i, j] = a / 448.
void fp8_act_quant(const Run& r, LL T, LL C, unsigned seed) {
  const std::string kn = "fp8_act_quant_1x128_loop";
  const LL NB = (C + 127) / 128;
  const auto x = rnd<bf16>(T * C, seed, -3.f, 3.f);
  DevLocal<bf16> xd({T, C}, x);
  DevLocal<f8e4m3> q({T, C}, {});
  DevLocal<float> s({T, NB}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), q.view(), s.view())) {
    std::vector<float> a(T * NB, 1e-12f);
    for (LL i = 0; i < T * C; ++i) {
      float& m = a[(i / C) * NB + (i % C) / 128];
      m = std::max(m, std::fabs(float(val(x[i]))));
    }
    auto v = [&](LL i) { return double(float(val(x[i])) * (448.0f / a[(i / C) * NB + (i % C) / 128])); };
    check(r, kn + ".q", q.download(), [&](LL i) { return e4m3(v(i)); }, [&](LL i) { return e4m3_step(v(i)); });
    check(r, kn + ".s", s.download(), [&](LL i) { return double(a[i]) / 448; }, [&](LL i) { return 1e-6 * a[i] / 448; });
  }
  end_case(r, kn + " " + dims({T, C}), before);
}

// ================================================================ fp8 GEMMs ==
// Hopper's fp8 wgmma accumulates with fewer bits than fp32 (user_specs11 / 14 measured about 1.2e-5 of the
// products' magnitude): the bound is 2.5e-4 of it, as set 14's.

// The float64 a b^T of e4m3 operands (a [M, K], b [N, K]) and its magnitude.
void fp8_ab(LL M, LL N, LL Kd, const std::vector<f8e4m3>& a, const std::vector<f8e4m3>& b, std::vector<double>& s,
            std::vector<double>& mag) {
  matmul(M, N, Kd, [&](LL m, LL q) { return val(a[m * Kd + q]); }, [&](LL q, LL n) { return val(b[n * Kd + q]); }, s, mag);
}

// fp8_gemm_per_tensor: c = bf16(a b^T sa[0] sb[0]).
void fp8_gemm_tensor(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed) {
  const auto a = rnd<f8e4m3>(M * Kd, seed, -2.f, 2.f), b = rnd<f8e4m3>(N * Kd, seed + 1, -2.f, 2.f);
  const std::vector<float> sa = rnd<float>(1, seed + 2, 0.02f, 0.1f), sb = rnd<float>(1, seed + 3, 0.1f, 0.5f);
  DevLocal<f8e4m3> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> sad({1}, sa), sbd({1}, sb);
  DevLocal<bf16> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), sad.view(), sbd.view(), c.view())) {
    std::vector<double> s, mag;
    fp8_ab(M, N, Kd, a, b, s, mag);
    const double sc = double(sa[0] * sb[0]);
    check(r, kn + ".c", c.download(), [&](LL i) { return s[i] * sc; },
          [&](LL i) { return kBf * std::fabs(s[i] * sc) + 2.5e-4 * mag[i] * sc + 1e-6; });
  }
  end_case(r, kn + " " + dims({M, N, Kd}) + (N % 8 ? " (general twin)" : ""), before);
}

// fp8_gemm_rowwise_bias: c = bf16(a b^T sa[i] sb[j] + bias[j]).
void fp8_gemm_rowwise(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed) {
  const auto a = rnd<f8e4m3>(M * Kd, seed, -2.f, 2.f), b = rnd<f8e4m3>(N * Kd, seed + 1, -2.f, 2.f);
  const auto sa = rnd<float>(M, seed + 2, 0.01f, 0.1f), sb = rnd<float>(N, seed + 3, 0.01f, 0.1f);
  const auto bias = rnd<bf16>(N, seed + 4);
  DevLocal<f8e4m3> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> sad({M, 1}, sa), sbd({1, N}, sb);
  DevLocal<bf16> bsd({1, N}, bias), c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), sad.view(), sbd.view(), bsd.view(), c.view())) {
    std::vector<double> s, mag;
    fp8_ab(M, N, Kd, a, b, s, mag);
    auto sc = [&](LL i) { return double(sa[i / N]) * sb[i % N]; };
    auto want = [&](LL i) { return s[i] * sc(i) + val(bias[i % N]); };
    check(r, kn + ".c", c.download(), want,
          [&](LL i) { return kBf * std::fabs(want(i)) + 2.5e-4 * mag[i] * sc(i) + 1e-6; });
  }
  end_case(r, kn + " " + dims({M, N, Kd}) + (N % 8 ? " (general twin)" : ""), before);
}

// fp8_gemm_block_scaled: c = bf16(sum over K blocks kb of (a b^T over kb) sa[i, kb] sb[j / 128, kb]).
void fp8_gemm_block(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "fp8_gemm_block_scaled";
  const LL KB = (Kd + 127) / 128, NB = (N + 127) / 128;
  const auto a = rnd<f8e4m3>(M * Kd, seed, -2.f, 2.f), b = rnd<f8e4m3>(N * Kd, seed + 1, -2.f, 2.f);
  const auto sa = rnd<float>(M * KB, seed + 2, 0.01f, 0.1f), sb = rnd<float>(NB * KB, seed + 3, 0.01f, 0.1f);
  DevLocal<f8e4m3> ad({M, Kd}, a), bd({N, Kd}, b);
  DevLocal<float> sad({M, KB}, sa), sbd({NB, KB}, sb);
  DevLocal<bf16> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), sad.view(), sbd.view(), c.view())) {
    std::vector<double> want(M * N, 0.0), mag(M * N, 0.0);
    for (LL m = 0; m < M; ++m)
      for (LL n = 0; n < N; ++n)
        for (LL k = 0; k < Kd; ++k) {
          const double p = val(a[m * Kd + k]) * val(b[n * Kd + k]) * sa[m * KB + k / 128] * sb[(n / 128) * KB + k / 128];
          want[m * N + n] += p, mag[m * N + n] += std::fabs(p);
        }
    check(r, kn + ".c", c.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 2.5e-4 * mag[i] + 1e-7; });
  }
  end_case(r, kn + " " + dims({M, N, Kd}), before);
}

// w8a16_fp8_weight_gemm: y = bf16(ws[j] x . bf16(w[j])) (every e4m3 value a bf16 value: exact widening).
void w8a16_fp8(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "w8a16_fp8_weight_gemm";
  const auto x = rnd<bf16>(M * Kd, seed);
  const auto w = rnd<f8e4m3>(N * Kd, seed + 1, -8.f, 8.f);
  const auto ws = rnd<float>(N, seed + 2, 0.01f, 0.1f);
  DevLocal<bf16> xd({M, Kd}, x), y({M, N}, {});
  DevLocal<f8e4m3> wd({N, Kd}, w);
  DevLocal<float> wsd({N, 1}, ws);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), wsd.view(), y.view())) {
    std::vector<double> s, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return val(w[n * Kd + q]); }, s, mag);
    check(r, kn + ".y", y.download(), [&](LL i) { return s[i] * ws[i % N]; },
          [&](LL i) { return kBf * std::fabs(s[i] * ws[i % N]) + 1e-5 * mag[i] * ws[i % N] + 1e-7; });
  }
  end_case(r, kn + " " + dims({M, N, Kd}), before);
}

// ================================================================ fp8 communication (multi-rank) ==

// fp8_e5m2_allgather_cols: rank p's x [R, C] (values in [-(1 + p), 1 + p)) quantised per row to e5m2; gs[i, p] =
// rank p's scale a / 57344, gq [R, W C] its codes at columns p C; y[i, p, j] = bf16(f32(code) gs[i, p]).
void fp8_allgather_cols(const Run& r, LL R, LL C, unsigned seed) {
  const std::string kn = "fp8_e5m2_allgather_cols";
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> x(W);
  std::vector<std::vector<float>> a(W, std::vector<float>(R));
  for (int p = 0; p < W; ++p) {
    x[p] = rnd<bf16>(R * C, seed + p, -1.f - p, 1.f + p);
    for (LL i = 0; i < R; ++i) a[p][i] = amax_of(C, [&](LL j) { return val(x[p][i * C + j]); }, 1e-12f);
  }
  DevLocal<bf16> xd({R, C}, x[me]), y({R, W, C}, {});
  SymArg<f8e5m2> q(r.ctx, {R, C}, nullptr), gq(r.ctx, {R, W * C}, nullptr);
  SymArg<float> s(r.ctx, {R, 1}, nullptr), gs(r.ctx, {R, W}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), q.view, s.view, gq.view, gs.view, y.view())) {
    // Element (i, p, j) of [R, W, C] (= [R, W C]).
    auto xv = [&](LL e) { return val(x[(e / C) % W][(e / (W * C)) * C + e % C]); };
    auto av = [&](LL e) { return a[(e / C) % W][e / (W * C)]; };
    auto v = [&](LL e) { return double(float(xv(e)) * (57344.0f / av(e))); };
    check(r, kn + ".gs", gs.download(), [&](LL i) { return double(a[i % W][i / W] / 57344.0f); },
          [&](LL i) { return 1e-6 * a[i % W][i / W] / 57344; });
    check(r, kn + ".gq", gq.download(), [&](LL e) { return e5m2(v(e)); }, [&](LL e) { return e5m2_step(v(e)); });
    check(r, kn + ".y", y.download(), [&](LL e) { return fp8_dequant(xv(e), av(e), true).want; },
          [&](LL e) { return fp8_dequant(xv(e), av(e), true).tol; });
  }
  end_case(r, kn + " " + dims({R, C}), before);
}

// moe_a2a_fp8_rowscale: rank s's send block p (rows p C ..) goes to rank p's block s, quantised per row to e4m3;
// recv = bf16(f32(gq) gs). Rank p's values lie in [-(1 + p), 1 + p).
void moe_a2a_fp8(const Run& r, LL C, LL H, unsigned seed) {
  const std::string kn = "moe_a2a_fp8_rowscale";
  const int W = r.W, me = r.me;
  const LL Rw = W * C;
  std::vector<std::vector<bf16>> x(W);
  std::vector<std::vector<float>> a(W, std::vector<float>(Rw));
  for (int p = 0; p < W; ++p) {
    x[p] = rnd<bf16>(Rw * H, seed + p, -1.f - p, 1.f + p);
    for (LL i = 0; i < Rw; ++i) a[p][i] = amax_of(H, [&](LL j) { return val(x[p][i * H + j]); }, 1e-12f);
  }
  DevLocal<bf16> xd({Rw, H}, x[me]), recv({Rw, H}, {});
  SymArg<f8e4m3> q(r.ctx, {Rw, H}, nullptr), gq(r.ctx, {Rw, H}, nullptr);
  SymArg<float> s(r.ctx, {Rw, 1}, nullptr), gs(r.ctx, {Rw, 1}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), q.view, s.view, gq.view, gs.view, recv.view())) {
    // Received row i came from rank i / C, its row me C + i % C.
    auto src = [&](LL i) { return me * C + i % C; };
    check(r, kn + ".gs", gs.download(), [&](LL i) { return double(a[i / C][src(i)] / 448.0f); },
          [&](LL i) { return 1e-6 * a[i / C][src(i)] / 448; });
    auto xv = [&](LL e) { return val(x[e / H / C][src(e / H) * H + e % H]); };
    auto av = [&](LL e) { return a[e / H / C][src(e / H)]; };
    check(r, kn + ".recv", recv.download(), [&](LL e) { return fp8_dequant(xv(e), av(e), false).want; },
          [&](LL e) { return fp8_dequant(xv(e), av(e), false).tol; });
  }
  end_case(r, kn + " " + dims({C, H}), before);
}

// ================================================================ integers ==

// int8_rowwise_quant_i32: a = max(max |x|, 1e-8); q = clamp(round_half_away(x (127 / a)), -127, 127); s = a / 127.
// Row 0 holds half-integers with 127 among them (127 / a = 1 exactly: every value a tie, rounded away from
// zero); elsewhere a value within 1e-5 of a tie may round either way.
void int8_quant(const Run& r, LL R, LL C, unsigned seed) {
  const std::string kn = "int8_rowwise_quant_i32";
  auto x = rnd<float>(R * C, seed, -3.f, 3.f);
  for (LL j = 0; j < C; ++j) x[j] = float(j % 254) - 126.5f;
  x[C / 2] = 127.f;
  DevLocal<float> xd({R, C}, x), s({R, 1}, {});
  DevLocal<int> q({R, C}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), q.view(), s.view())) {
    std::vector<float> a(R);
    for (LL m = 0; m < R; ++m) a[m] = amax_of(C, [&](LL j) { return x[m * C + j]; }, 1e-8f);
    auto v = [&](LL i) { return x[i] * (127.0f / a[i / C]); };
    check(r, kn + ".q", q.download(), [&](LL i) {
      const float t = v(i);
      return double(std::min(std::max(int(t >= 0 ? t + 0.5f : t - 0.5f), -127), 127));
    }, [&](LL i) {
      const double f = std::fabs(double(v(i)));
      return i >= C && std::fabs(f - std::floor(f) - 0.5) < 1e-5 ? 1.0 : 0.0;
    });
    check(r, kn + ".s", s.download(), [&](LL m) { return double(a[m]) / 127; }, [&](LL m) { return 1e-6 * a[m] / 127; });
  }
  end_case(r, kn + " " + dims({R, C}), before);
}

// w8a16_int8_packed_gemm: w[k, j] = byte k % 4 of wp[k / 4, j] (unsigned) - 128; y = bf16(ws[j] sum_k x[i, k]
// w[k, j]). Bytes uniform in 0 .. 255, so half the words have the sign bit set.
void w8a16_int8(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const std::string kn = "w8a16_int8_packed_gemm";
  const auto x = rnd<bf16>(M * Kd, seed);
  const auto bytes = ints<int>(Kd * N, 0, 255, seed + 1);
  const auto ws = rnd<float>(N, seed + 2, 0.01f, 0.05f);
  std::vector<int> wp((Kd / 4) * N);
  for (LL i = 0; i < Kd / 4; ++i)
    for (LL j = 0; j < N; ++j) {
      uint32_t u = 0;
      for (int b = 0; b < 4; ++b) u |= uint32_t(bytes[(4 * i + b) * N + j]) << (8 * b);
      wp[i * N + j] = int32_t(u);
    }
  DevLocal<bf16> xd({M, Kd}, x), y({M, N}, {});
  DevLocal<int> wpd({Kd / 4, N}, wp);
  DevLocal<float> wsd({1, N}, ws);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wpd.view(), wsd.view(), y.view())) {
    std::vector<double> s, mag;
    matmul(M, N, Kd, [&](LL m, LL q) { return val(x[m * Kd + q]); }, [&](LL q, LL n) { return double(bytes[q * N + n] - 128); }, s, mag);
    check(r, kn + ".y", y.download(), [&](LL i) { return s[i] * ws[i % N]; },
          [&](LL i) { return kBf * std::fabs(s[i] * ws[i % N]) + 1e-5 * mag[i] * ws[i % N] + 1e-7; });
  }
  end_case(r, kn + " " + dims({M, N, Kd}), before);
}

// routing_map_transpose: y[e, t] = x[t, e]; z[e, t] = i64(x[t, e]) 1000000007 (values up to 3e6: past 2^32).
void routing_map_transpose(const Run& r, LL T, LL E, unsigned seed) {
  const std::string kn = "routing_map_transpose";
  const auto x = ints<int>(T * E, -3000000, 3000000, seed);
  DevLocal<int> xd({T, E}, x), y({E, T}, {});
  DevLocal<long long> z({E, T}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), y.view(), z.view())) {
    const auto gz = z.download();
    check(r, kn + ".y", y.download(), [&](LL i) { return double(x[(i % T) * E + i / T]); }, exact());
    LL bad = 0;
    for (LL i = 0; i < E * T; ++i)
      if (gz[i] != (long long)x[(i % T) * E + i / T] * 1000000007LL && bad++ < 3)
        pkt::fail(kn + ".z element " + std::to_string(i) + ": got " + std::to_string(gz[i]));
  }
  end_case(r, kn + " " + dims({T, E}), before);
}

// ================================================================ argmax and sampling ==

// argmax_wide_vocab: ids = the first column of the row maximum (NaN never chosen), best = the maximum. bf16
// multiples of 1/8 in [-4, 4]: the maximum 4 recurs across chunks (the earlier chunk wins). Row 1 has NaN at
// column 0 and every 97th column from 1; row 2's unique maximum sits in the last column.
void argmax_wide(const Run& r, LL T, LL V, unsigned seed) {
  const std::string kn = "argmax_wide_vocab";
  auto lg = tied<bf16>(T * V, seed);
  const bf16 nan{0x7fc0};
  if (T > 2) {
    lg[V] = nan;
    for (LL j = 1; j < V; j += 97) lg[V + j] = nan;
    lg[2 * V + V - 1] = pkt::from_host<bf16>(9.f);
  }
  DevLocal<bf16> ld({T, V}, lg);
  DevLocal<long long> ids({T, 1}, {});
  DevLocal<float> best({T, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), ids.view(), best.view())) {
    std::vector<double> wi(T), wb(T);
    for (LL t = 0; t < T; ++t) {
      LL b = -1;
      for (LL j = 0; j < V; ++j) {
        const double x = val(lg[t * V + j]);
        if (!std::isnan(x) && (b < 0 || x > val(lg[t * V + b]))) b = j;
      }
      wi[t] = double(b), wb[t] = val(lg[t * V + b]);
    }
    check(r, kn + ".ids", ids.download(), [&](LL t) { return wi[t]; }, exact());
    check(r, kn + ".best", best.download(), [&](LL t) { return wb[t]; }, exact());
  }
  end_case(r, kn + " " + dims({T, V}), before);
}

// top_p_sample_64: v = the 64 largest logits / temp, c their columns, p = softmax(v), keep (cumsum p - p) <
// top_p, q = kept p renormalised, j* = min(#(cumsum q <= u), kept - 1), tok = c[j*], u = uniform(seed, t, 0).
// A row whose u or top_p lies within 1e-5 of a boundary is only checked to choose a kept candidate (few).
void top_p_sample(const Run& r, LL T, LL V, float temp, float top_p, LL seed, unsigned s) {
  const std::string kn = "top_p_sample_64";
  const auto lg = rnd<float>(T * V, s, -3.f, 3.f);
  DevLocal<float> ld({T, V}, lg);
  DevLocal<int> tok({T, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), tok.view(), temp, top_p, seed)) {
    const auto gt = tok.download();
    LL skipped = 0, bad = 0;
    std::set<int> chosen;
    for (LL t = 0; t < T; ++t) {
      const auto o = order_desc(V, [&](LL j) { return double(lg[t * V + j]); });
      std::vector<double> p(64);
      double z = 0;
      for (int j = 0; j < 64; ++j) z += (p[j] = std::exp(double(float(lg[t * V + o[j]] / temp)) - double(float(lg[t * V + o[0]] / temp))));
      double cs = 0, kz = 0;
      int kept = 0;
      bool near = false;
      for (int j = 0; j < 64; ++j) {
        p[j] /= z;
        near = near || std::fabs(cs - top_p) < 1e-5;
        if (cs < top_p) ++kept, kz += p[j];
        cs += p[j];
      }
      const double u = uniform_at(seed, {t, 0});
      double cq = 0;
      int cnt = 0;
      for (int j = 0; j < kept; ++j) {
        cq += p[j] / kz;
        near = near || std::fabs(cq - u) < 1e-5;
        cnt += cq <= u;
      }
      const int want = o[std::min(cnt, kept - 1)];
      bool ok = gt[t] == want;
      if (near) {
        ++skipped, ok = false;
        for (int j = 0; j < kept; ++j) ok = ok || gt[t] == o[j];
      }
      chosen.insert(gt[t]);
      if (!ok && bad++ < 3)
        pkt::fail(kn + " row " + std::to_string(t) + ": tok " + std::to_string(gt[t]) + ", want " + std::to_string(want));
    }
    if (skipped > T / 5 + 1) pkt::fail(kn + ": " + std::to_string(skipped) + " rows near a boundary");
    if (T > 8 && top_p > 0.5f && chosen.size() < 2) pkt::fail(kn + ": every row chose the same token");
  }
  end_case(r, kn + " " + dims({T, V}) + " temp " + std::to_string(temp) + " top_p " + std::to_string(top_p), before);
}

// min_p_filter: out = x where softmax(x)_j >= min_p max_j softmax(x), else -3e38 (x - max >= log(min_p)); an
// element within 1e-5 of the threshold may go either way.
void min_p(const Run& r, LL T, LL V, float mp, unsigned seed) {
  const std::string kn = "min_p_filter";
  const auto lg = rnd<float>(T * V, seed, -6.f, 6.f);
  DevLocal<float> ld({T, V}, lg), out({T, V}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), out.view(), mp)) {
    const auto go = out.download();
    LL bad = 0;
    for (LL t = 0; t < T; ++t) {
      const double m = *std::max_element(lg.begin() + t * V, lg.begin() + (t + 1) * V);
      for (LL j = 0; j < V; ++j) {
        const double d = double(lg[t * V + j]) - m - std::log(double(mp));
        const double g = go[t * V + j];
        const bool keep = g == double(lg[t * V + j]), drop = g == double(-3.0e38f);
        const bool ok = std::fabs(d) < 1e-5 ? keep || drop : d > 0 ? keep : drop;
        if (!ok && bad++ < 3)
          pkt::fail(kn + " element " + std::to_string(t * V + j) + ": got " + std::to_string(g) + " for " + std::to_string(lg[t * V + j]));
      }
    }
  }
  end_case(r, kn + " " + dims({T, V}) + " min_p " + std::to_string(mp), before);
}

// repetition_penalty: columns that appear in prev[t, :] (L entries, -1 none, duplicates, some past V) get x /
// penalty if x > 0 else x penalty; the rest x.
void repetition_penalty(const Run& r, LL T, LL V, LL L, float penalty, unsigned seed) {
  const std::string kn = "repetition_penalty";
  const auto lg = rnd<float>(T * V, seed, -4.f, 4.f);
  auto prev = ints<int>(T * L, -1, int(V) + 3, seed + 1);
  for (LL t = 0; t < T; ++t) prev[t * L + L - 1] = prev[t * L];  // a duplicate in every row
  DevLocal<float> ld({T, V}, lg), out({T, V}, {});
  DevLocal<int> pd({T, L}, prev);
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), pd.view(), out.view(), penalty)) {
    check(r, kn + ".out", out.download(), [&](LL i) {
      const LL t = i / V, j = i % V;
      const float x = lg[i];
      for (LL l = 0; l < L; ++l)
        if (prev[t * L + l] == j) return double(x > 0 ? x / penalty : x * penalty);
      return double(x);
    }, [&](LL i) { return 1e-6 * std::fabs(lg[i]) * 2; });
  }
  end_case(r, kn + " " + dims({T, V, L}), before);
}

// ================================================================ multi-phase and index utilities ==

// position_ids_from_mask: pos = cumsum(mask) - 1 where mask is 1, else 1. Row 0 left-padded, row 1 all ones,
// the rest random 0 / 1.
void position_ids(const Run& r, LL B, LL S, unsigned seed) {
  const std::string kn = "position_ids_from_mask";
  auto mask = ints<long long>(B * S, 0, 1, seed);
  for (LL s = 0; s < S; ++s) {
    mask[s] = s >= S / 3;
    if (B > 1) mask[S + s] = 1;
  }
  DevLocal<long long> md({B, S}, mask), pos({B, S}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, md.view(), pos.view())) {
    std::vector<double> want(B * S);
    for (LL b = 0; b < B; ++b) {
      long long c = 0;
      for (LL s = 0; s < S; ++s) c += mask[b * S + s], want[b * S + s] = mask[b * S + s] == 1 ? double(c - 1) : 1.0;
    }
    check(r, kn + ".pos", pos.download(), [&](LL i) { return want[i]; }, exact());
  }
  end_case(r, kn + " " + dims({B, S}), before);
}

// cu_seqlens_and_max: cu = (0, inclusive scan of lens), max_len = the largest length.
void cu_seqlens(const Run& r, LL B, unsigned seed) {
  const std::string kn = "cu_seqlens_and_max";
  const auto lens = ints<int>(B, 1, 4000, seed);
  DevLocal<int> ld({B}, lens), cu({B + 1}, {}), mx({1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), cu.view(), mx.view())) {
    std::vector<double> c(B + 1, 0.0);
    for (LL i = 0; i < B; ++i) c[i + 1] = c[i] + lens[i];
    check(r, kn + ".cu", cu.download(), [&](LL i) { return c[i]; }, exact());
    check(r, kn + ".max_len", mx.download(), [&](LL) { return double(*std::max_element(lens.begin(), lens.end())); }, exact());
  }
  end_case(r, kn + " " + dims({B}), before);
}

// switch_aux_loss: psum[e] = sum_t p[t, e], cnt[e] = #t whose top-1 is e, aux = 64 sum_e cnt[e] psum[e] / T^2.
// Logits are multiples of 1/16: the top-1 is exact (ties to the lower column, equal logits giving equal p).
void switch_aux(const Run& r, LL T, unsigned seed) {
  const std::string kn = "switch_aux_loss";
  const LL E = 64;
  const auto lg = tied<float>(T * E, seed, 16);
  DevLocal<float> ld({T, E}, lg), psum({1, E}, {}), aux({1, 1}, {});
  DevLocal<int> cnt({1, E}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), psum.view(), cnt.view(), aux.view())) {
    std::vector<double> ps(E, 0.0), c(E, 0.0);
    for (LL t = 0; t < T; ++t) {
      const auto o = order_desc(E, [&](LL e) { return double(lg[t * E + e]); });
      double z = 0;
      for (LL e = 0; e < E; ++e) z += std::exp(double(lg[t * E + e] - lg[t * E + o[0]]));
      for (LL e = 0; e < E; ++e) ps[e] += std::exp(double(lg[t * E + e] - lg[t * E + o[0]])) / z;
      c[o[0]] += 1;
    }
    double a = 0;
    for (LL e = 0; e < E; ++e) a += c[e] * ps[e];
    a *= 64.0 / double(T * T);
    check(r, kn + ".cnt", cnt.download(), [&](LL e) { return c[e]; }, exact());
    check(r, kn + ".psum", psum.download(), [&](LL e) { return ps[e]; }, [&](LL e) { return 1e-5 * ps[e] + 1e-7; });
    check(r, kn + ".aux", aux.download(), [&](LL) { return a; }, [&](LL) { return 1e-5 * a; });
  }
  end_case(r, kn + " " + dims({T}), before);
}

// router_z_loss: z[t] = logsumexp(logits[t, :]); zl = mean of z^2 (T past 1024: the chunked second phase).
void router_z_loss(const Run& r, LL T, LL E, unsigned seed) {
  const std::string kn = "router_z_loss";
  const auto lg = rnd<float>(T * E, seed, -4.f, 4.f);
  DevLocal<float> ld({T, E}, lg), z({T, 1}, {}), zl({1, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, ld.view(), z.view(), zl.view())) {
    std::vector<double> wz(T);
    double m2 = 0;
    for (LL t = 0; t < T; ++t) {
      const double m = *std::max_element(lg.begin() + t * E, lg.begin() + (t + 1) * E);
      double s = 0;
      for (LL e = 0; e < E; ++e) s += std::exp(double(lg[t * E + e]) - m);
      wz[t] = m + std::log(s), m2 += wz[t] * wz[t];
    }
    m2 /= double(T);
    check(r, kn + ".z", z.download(), [&](LL t) { return wz[t]; }, [&](LL t) { return 2e-6 * (1 + std::fabs(wz[t])); });
    check(r, kn + ".zl", zl.download(), [&](LL) { return m2; }, [&](LL) { return 2e-5 * m2; });
  }
  end_case(r, kn + " " + dims({T, E}), before);
}

// ================================================================ the cases ==

void single_gpu_cases(const Run& r) {
  unsigned s = 100;
  // Routers: T short of the 32 / 16-row tiles, E short of the 64 / 128 columns, one token.
  router_softmax_top2(r, 37, 64, s += 100);
  router_softmax_top2(r, 20, 50, s += 100);
  router_softmax_top2(r, 1, 2, s += 100);
  router_top8(r, 37, 128, s += 100);
  router_top8(r, 20, 50, s += 100);
  router_top8(r, 1, 8, s += 100);
  router_sigmoid_bias(r, 37, 2.5f, s += 100);
  router_sigmoid_bias(r, 1, 1.f, s += 100);
  router_group_limited(r, 37, s += 100);
  router_group_limited(r, 1, s += 100);
  // Counts, permutation, capacity, grouped GEMM.
  expert_counts_offsets(r, 5000, s += 100);
  expert_counts_offsets(r, 1, s += 100);
  tokens_per_expert(r, 100, 8, s += 100);
  tokens_per_expert(r, 37, 3, s += 100);
  permute_tokens(r, 37, 3, 300, s += 100);
  permute_tokens(r, 1, 1, 256, s += 100);
  unpermute(r, 37, 3, 300, 120, s += 100);
  unpermute(r, 1, 2, 100, 5, s += 100);
  capacity_dispatch(r, 37, 2, 300, 6, 8, s += 100);    // most experts overflow
  capacity_dispatch(r, 300, 3, 100, 10, 200, s += 100);  // none does (T past the 128-row claim tile)
  grouped_gemm(r, 100, 160, 70, {37, 0, 70, 5}, s += 100);
  grouped_gemm(r, 64, 64, 64, {1, 64}, s += 100);
  // fp8 quantisation.
  fp8_per_tensor(r, 37, 300, 20, s += 100);
  fp8_per_tensor(r, 1100, 64, 1050, s += 100);
  fp8_block_weight_quant(r, 300, 200, s += 100);
  fp8_block_weight_quant(r, 1, 130, s += 100);
  fp8_block_dequant(r, 300, 200, s += 100);
  fp8_block_dequant(r, 1, 130, s += 100);
  fp8_e5m2_rowwise(r, 37, 2000, s += 100);
  fp8_e5m2_rowwise(r, 1, 100, s += 100);
  fp8_act_quant(r, 37, 300, s += 100);
  fp8_act_quant(r, 1, 100, s += 100);
  // fp8 GEMMs: the template (N % 8 == 0, K % 16 == 0, tails in M, N and K), its general twin (N % 8 != 0),
  // and templates = false.
  for (const char* k : {"fp8_gemm_per_tensor", "fp8_gemm_per_tensor/general"}) {
    fp8_gemm_tensor(r, k, 200, 264, 160, s += 100);
    fp8_gemm_tensor(r, k, 70, 100, 48, s += 100);
  }
  for (const char* k : {"fp8_gemm_rowwise_bias", "fp8_gemm_rowwise_bias/general"}) {
    fp8_gemm_rowwise(r, k, 200, 136, 272, s += 100);
    fp8_gemm_rowwise(r, k, 37, 50, 32, s += 100);
  }
  fp8_gemm_block(r, 100, 200, 300, s += 100);
  fp8_gemm_block(r, 1, 130, 128, s += 100);
  w8a16_fp8(r, 100, 100, 200, s += 100);
  w8a16_fp8(r, 1, 64, 64, s += 100);
  w8a16_fp8(r, 300, 264, 208, s += 100);  // the template (fp8 B widened in its ring); the cases above: its twin
  // Integers.
  int8_quant(r, 37, 300, s += 100);
  int8_quant(r, 3, 4096, s += 100);
  w8a16_int8(r, 100, 100, 200, s += 100);
  w8a16_int8(r, 1, 64, 4, s += 100);
  routing_map_transpose(r, 100, 70, s += 100);
  routing_map_transpose(r, 1, 1, s += 100);
  // Argmax and sampling.
  argmax_wide(r, 13, 5000, s += 100);
  argmax_wide(r, 3, 37, s += 100);
  top_p_sample(r, 37, 1000, 0.8f, 0.9f, 12345, s += 100);
  top_p_sample(r, 20, 64, 1.5f, 0.3f, (LL(1) << 33) + 7, s += 100);
  top_p_sample(r, 1, 2048, 1.f, 1.f, -5, s += 100);
  min_p(r, 13, 1000, 0.05f, s += 100);
  min_p(r, 1, 1024, 0.5f, s += 100);
  repetition_penalty(r, 37, 300, 5, 1.3f, s += 100);
  repetition_penalty(r, 1, 100, 64, 2.f, s += 100);
  // Index utilities and losses.
  position_ids(r, 3, 1000, s += 100);
  position_ids(r, 1, 4096, s += 100);
  cu_seqlens(r, 100, s += 100);
  cu_seqlens(r, 4096, s += 100);
  cu_seqlens(r, 1, s += 100);
  switch_aux(r, 100, s += 100);
  switch_aux(r, 1, s += 100);
  router_z_loss(r, 2500, 200, s += 100);
  router_z_loss(r, 1, 256, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  const int W = r.W;
  // Expert parallelism at El = 3 and 5 experts per rank.
  ep_dispatch(r, 37, 2, 300, 3, s += 100);
  ep_dispatch(r, 300, 2, 64, 5, s += 100);
  ep_combine_push(r, 37, 300, 3, s += 100);
  ep_combine_push(r, 5, 100, 5, s += 100);
  all_to_all_v(r, 100, 300, 100 * W, false, s += 100);
  all_to_all_v(r, 300, 100, 120, true, s += 100);  // rows past M dropped; rank W - 1 receives nothing
  moe_combine_residual(r, 37, 2, 300, 3, 50, s += 100);
  moe_combine_residual(r, 1, 2, 256, 5, 7, s += 100);
  ep_counts_exchange(r, 3, s += 100);
  ep_counts_exchange(r, 5, s += 100);
  ep_bias_update(r, 5000, 64, false, s += 100);
  ep_bias_update(r, 300, 6, true, s += 100);
  // Vocabulary parallel: the padding id in rank 0's shard and in the last rank's.
  vp_embedding(r, 37, 50, 300, 7, s += 100);
  vp_embedding(r, 20, 13, 256, 13 * W - 1, s += 100);
  vp_ce(r, 37, 300, 0.1f, s += 100);
  vp_ce(r, 1, 1000, 0.f, s += 100);
  vp_ce_bwd(r, 37, 300, 0.1f, s += 100);
  // fp8 communication.
  fp8_allgather_cols(r, 37, 300, s += 100);
  fp8_allgather_cols(r, 1, 1024, s += 100);
  moe_a2a_fp8(r, 5, 300, s += 100);
  moe_a2a_fp8(r, 1, 2048, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs22_jit_test");
  // The multi-rank kernels at W = 1, 2, 3 and 4 (run_worlds stops at 3 unless a list is given; one given
  // in the environment wins).
  setenv("PK_TEST_WORLDS", "2 3 4", 0);
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs22_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

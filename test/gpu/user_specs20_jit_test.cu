// The twentieth user-written spec set (test/specs/user_specs20.pk.cpp) through the JIT, each kernel
// against a host reference on fresh random inputs (float64, or exact for integers, gathers, scatters and
// orders; fp8 codes against fp8_model.h's model of the device's rounding), with every output poisoned
// (NaN, or all-ones integers) first. The single-GPU kernels run at W = 1; the kernels that use rank(),
// peers or collectives at W = 1, 2, 3 and 4 (ranks sharing one GPU; PK_TEST_WORLDS or
// PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs. Scatters into caches
// (reshape_and_cache, the paged append, the fp8 append) check every row they must not write still holds
// the poison. Shapes leave partial tiles in every tiled dimension (T not a multiple of 16 or 32, rows
// not a multiple of the row tile, columns not a multiple of 128 / 256 / 512 / 1024 / 2048), and the
// kernels whose comment allows it also run on one-row tensors.
//
// Covered (30 of 48; none takes a template): rope_neox_packed_inplace (set 20 finding 2's newly legal
// in-place read at n + 64, T = 37 and 1, H = 3) and rope_neox_inplace_pos; spec_accept_greedy,
// spec_argmax_accept (row_topk_index<1> of a reshaped [1, 8, 1024] load, ties to the lowest column),
// spec_sampling_accept (uniform() bit for bit); kv_append_slots (i64 slots, -1 dropped),
// paged_kv_append, paged_kv_gather (block tables, bs 16 and 12), kv_append_fp8_rowscale,
// paged_decode_attention (run-time key counts 1 .. MB bs); fp8_quant_per_row_wide,
// fp8_quant_1x128_ragged, fp8_dequant_128x128; adamw_f32_inplace, sgd_nesterov_bf16;
// moe_combine_renorm; fused_add_rmsnorm_inplace, one_row_rmsnorm_f16, softmax_wide_inplace; and the
// multi-rank vp_embedding_i64_scaled, vp_embedding_bwd, vp_cross_entropy_fwd, vp_cross_entropy_bwd,
// vp_greedy_argmax (row_topk<1> of 16 x 2048 tiles, V = 1500 and 37, ties across ranks to the lowest
// rank), fp8_e5m2_per_tensor_tp, clip_grad_global_norm_tp (clipping and not), ring_shift_by_two,
// ring_pull_neighbours_sum, rs_by_pulls, ag_by_row_stores.
//
// Ambiguity the specs leave, taken into account: an fp8 code may be the neighbouring one where x 448 / a
// lies within a few fp32 units of a rounding point (the device's reciprocal and product may round
// differently: e4m3_step / e5m2_step); spec_sampling_accept's accept flag is not checked where u lies
// within 1e-5 relative of pt / pd. The target of vp_cross_entropy_fwd is often planted in the first
// columns of another rank's shard, which this rank's last 256-column tile covers with padding: the
// `col == want` select must pick nothing there.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

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

// Kernels, and whether one of their launches takes a template (none does).
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"rope_neox_packed_inplace", false},  {"rope_neox_inplace_pos", false},   {"spec_accept_greedy", false},
    {"spec_argmax_accept", false},        {"spec_sampling_accept", false},    {"kv_append_slots", false},
    {"paged_kv_append", false},           {"paged_kv_gather", false},         {"kv_append_fp8_rowscale", false},
    {"paged_decode_attention", false},    {"fp8_quant_per_row_wide", false},  {"fp8_quant_1x128_ragged", false},
    {"fp8_dequant_128x128", false},       {"adamw_f32_inplace", false},       {"sgd_nesterov_bf16", false},
    {"moe_combine_renorm", false},        {"fused_add_rmsnorm_inplace", false}, {"one_row_rmsnorm_f16", false},
    {"softmax_wide_inplace", false},      {"vp_embedding_i64_scaled", false}, {"vp_embedding_bwd", false},
    {"vp_cross_entropy_fwd", false},      {"vp_cross_entropy_bwd", false},    {"vp_greedy_argmax", false},
    {"fp8_e5m2_per_tensor_tp", false},    {"clip_grad_global_norm_tp", false}, {"ring_shift_by_two", false},
    {"ring_pull_neighbours_sum", false},  {"rs_by_pulls", false},             {"ag_by_row_stores", false},
};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS20_SPEC, kKernels, {}, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs20", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host references ----

const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline double hv(double x) { return x; }
template <class T>
double hv(const T& x) {
  return val(x);
}

// Values with ties (multiples of 1/8 in [-4, 4]) as T.
template <class T>
std::vector<T> tied(LL n, unsigned seed) {
  const auto k = ints<int>(n, -32, 32, seed);
  std::vector<T> v(n);
  for (LL i = 0; i < n; ++i) v[i] = pkt::from_host<T>(float(k[i]) / 8.f);
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
// The first column of a row's maximum (n values by value(j)).
template <class F>
LL first_argmax(LL n, const F& value) {
  LL b = 0;
  for (LL j = 1; j < n; ++j)
    if (value(j) > value(b)) b = j;
  return b;
}
double e5m2(double x) { return pkt::fp8_decode(pkt::fp8_encode(x, pkt::kE5M2), pkt::kE5M2); }
// How far an fp8 rounding of v can move when v moves by a few fp32 units (a reciprocal taken
// approximately on the device, a product rounded differently): 0 away from the rounding points.
double e4m3_step(double v) { return std::fabs(e4m3(v * (1 + 1e-6)) - e4m3(v * (1 - 1e-6))); }
double e5m2_step(double v) { return std::fabs(e5m2(v * (1 + 1e-6)) - e5m2(v * (1 - 1e-6))); }
// Accepted prefix of speculative decoding: the number of leading j < K with draft[j] == want[j].
template <class F, class G>
LL accepted(LL K, const F& draft, const G& want) {
  LL n = 0;
  while (n < K && draft(n) == want(n)) ++n;
  return n;
}

// ================================================================ rotary embedding ==

// rope_neox_packed_inplace (x [T, H * 128]) and rope_neox_inplace_pos (x [T, H, 128]): in place, for
// head h and j < 64, x1 = x[t, h, j], x2 = x[t, h, 64 + j], c = cosT[pos[t], j], s = sinT[pos[t], j]:
// x1' = bf16(x1 c - x2 s), x2' = bf16(x2 c + x1 s). One launch (in place).
void rope_neox(const Run& r, const std::string& k, LL T, LL H, LL P, unsigned seed) {
  const LL D = 128;
  const auto x = rnd<bf16>(T * H * D, seed, -2.f, 2.f);
  const auto pos = ints<int>(T, 0, P - 1, seed + 1);
  const auto ct = rnd<float>(P * 64, seed + 2), st = rnd<float>(P * 64, seed + 3);
  const bool packed = k == "rope_neox_packed_inplace";
  DevLocal<bf16> xd(packed ? std::vector<LL>{T, H * D} : std::vector<LL>{T, H, D}, x);
  DevLocal<int> pd({T}, pos);
  DevLocal<float> cd({P, 64}, ct), sd({P, 64}, st);
  const int before = begin_case(r);
  if (run(r, k, 1, xd.view(), pd.view(), cd.view(), sd.view())) {
    std::vector<double> want(T * H * D), mag(T * H * D);
    for (LL i = 0; i < T * H * D; ++i) {
      const LL t = i / (H * D), j = i % D, head = i - j, jj = j % 64;
      const double c = ct[pos[t] * 64 + jj], s = st[pos[t] * 64 + jj];
      const double x1 = val(x[head + jj]), x2 = val(x[head + 64 + jj]);
      want[i] = j < 64 ? x1 * c - x2 * s : x2 * c + x1 * s;
      mag[i] = std::fabs(x1 * c) + std::fabs(x2 * s);
    }
    check(r, k + ".x", xd.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-6 * mag[i]; });
  }
  end_case(r, k + " " + dims({T, H}), before);
}

// ================================================================ speculative decoding ==

// Draft tokens equal to want(b, j) except where a miss is planted: row kind 0 accepts everything, kind 1
// misses at j = 0, kinds 2 and 3 miss at random positions (about one in four).
std::vector<int> drafts(LL B, LL K, unsigned seed, const std::function<int(LL, LL)>& want) {
  const auto kind = ints<int>(B, 0, 3, seed), miss = ints<int>(B * K, 0, 3, seed + 1);
  std::vector<int> d(B * K);
  for (LL b = 0; b < B; ++b)
    for (LL j = 0; j < K; ++j) {
      const bool m = kind[b] == 1 ? j == 0 : kind[b] >= 2 && miss[b * K + j] == 0;
      d[b * K + j] = m ? want(b, j) + 1 + miss[b * K + j] : want(b, j);
    }
  return d;
}

// spec_accept_greedy: n[b] = leading j < K with draft == target; out[b, j] = target[b, j] for j <= n[b],
// -1 after (out [B, K + 1]); nacc[b] = n[b].
void spec_accept_greedy(const Run& r, LL B, LL K, unsigned seed) {
  const auto target = ints<int>(B * (K + 1), 0, 31999, seed);
  const auto draft = drafts(B, K, seed + 1, [&](LL b, LL j) { return target[b * (K + 1) + j]; });
  DevLocal<int> dd({B, K}, draft), td({B, K + 1}, target), out({B, K + 1}, {}), nacc({B}, {});
  const int before = begin_case(r);
  if (run(r, "spec_accept_greedy", 2, dd.view(), td.view(), out.view(), nacc.view())) {
    std::vector<double> wo(B * (K + 1)), wn(B);
    for (LL b = 0; b < B; ++b) {
      const LL n = accepted(K, [&](LL j) { return draft[b * K + j]; }, [&](LL j) { return target[b * (K + 1) + j]; });
      wn[b] = double(n);
      for (LL j = 0; j <= K; ++j) wo[b * (K + 1) + j] = j <= n ? double(target[b * (K + 1) + j]) : -1.0;
    }
    check(r, "spec_accept_greedy.out", out.download(), [&](LL i) { return wo[i]; }, exact());
    check(r, "spec_accept_greedy.nacc", nacc.download(), [&](LL i) { return wn[i]; }, exact());
  }
  end_case(r, "spec_accept_greedy " + dims({B, K}), before);
}

// spec_argmax_accept: a[b, j] = argmax_v logits[b, j, v] (lowest v on ties); n[b] = leading j < K with
// draft == a; out[b, j] = a[b, j] for j <= n[b], -1 after. Logits tied (multiples of 1/8).
void spec_argmax_accept(const Run& r, LL B, LL K, LL V, unsigned seed) {
  const auto lg = tied<float>(B * (K + 1) * V, seed);
  std::vector<int> a(B * (K + 1));
  for (LL i = 0; i < B * (K + 1); ++i) a[i] = int(first_argmax(V, [&](LL v) { return lg[i * V + v]; }));
  const auto draft = drafts(B, K, seed + 1, [&](LL b, LL j) { return a[b * (K + 1) + j]; });
  DevLocal<float> ld({B, K + 1, V}, lg);
  DevLocal<int> dd({B, K}, draft), out({B, K + 1}, {});
  const int before = begin_case(r);
  if (run(r, "spec_argmax_accept", 2, ld.view(), dd.view(), out.view())) {
    std::vector<double> wo(B * (K + 1));
    for (LL b = 0; b < B; ++b) {
      const LL n = accepted(K, [&](LL j) { return draft[b * K + j]; }, [&](LL j) { return a[b * (K + 1) + j]; });
      for (LL j = 0; j <= K; ++j) wo[b * (K + 1) + j] = j <= n ? double(a[b * (K + 1) + j]) : -1.0;
    }
    check(r, "spec_argmax_accept.out", out.download(), [&](LL i) { return wo[i]; }, exact());
  }
  end_case(r, "spec_argmax_accept " + dims({B, K, V}), before);
}

// spec_sampling_accept: u = uniform(seed, r, 0); acc[r] = u < min(1, pt[r, d] / pd[r, d]);
// resid[r, v] = max(pt - pd, 0) / sum_v max(pt - pd, 0).
void spec_sampling_accept(const Run& r, LL R, LL V, LL seed, unsigned s) {
  const auto pt = rnd<float>(R * V, s, 0.f, 1.f), pdv = rnd<float>(R * V, s + 1, 0.f, 1.f);
  const auto d = ints<int>(R, 0, V - 1, s + 2);
  DevLocal<float> ptd({R, V}, pt), pdd({R, V}, pdv), resid({R, V}, {});
  DevLocal<int> dd({R}, d), acc({R}, {});
  const int before = begin_case(r);
  if (run(r, "spec_sampling_accept", 2, ptd.view(), pdd.view(), dd.view(), acc.view(), resid.view(), seed)) {
    const auto ga = acc.download();
    LL accepted_rows = 0, bad = 0;
    std::vector<double> z(R, 0.0);
    for (LL m = 0; m < R; ++m) {
      for (LL v = 0; v < V; ++v) z[m] += std::max(double(pt[m * V + v]) - double(pdv[m * V + v]), 0.0);
      const double u = uniform_at(seed, {m, 0}), ratio = double(pt[m * V + d[m]]) / double(pdv[m * V + d[m]]);
      const double w = u < std::min(ratio, 1.0) ? 1 : 0;
      accepted_rows += ga[m] == 1;
      if (std::fabs(u - ratio) < 1e-5 * ratio) continue;
      if (ga[m] != w && bad++ < 3)
        pkt::fail("spec_sampling_accept row " + std::to_string(m) + ": acc " + std::to_string(ga[m]) + ", want " +
                  std::to_string(w));
    }
    if (R > 8 && (accepted_rows == 0 || accepted_rows == R)) pkt::fail("spec_sampling_accept: every row the same");
    check(r, "spec_sampling_accept.resid", resid.download(),
          [&](LL i) { return std::max(double(pt[i]) - double(pdv[i]), 0.0) / z[i / V]; },
          [&](LL i) { return 1e-5 * std::max(double(pt[i]) - double(pdv[i]), 0.0) / z[i / V] + 1e-12; });
  }
  end_case(r, "spec_sampling_accept " + dims({R, V}) + " seed " + std::to_string(seed), before);
}

// ================================================================ KV cache ==

// kv_append_slots: kcache[slots[t]] = key[t], vcache[slots[t]] = value[t] (slots distinct, -1 for about
// one token in five: nothing written); every other cache row untouched.
void kv_append_slots(const Run& r, LL T, LL D, LL NS, unsigned seed) {
  const auto key = rnd<bf16>(T * D, seed), value = rnd<bf16>(T * D, seed + 1);
  const auto perm = permutation(NS, seed + 2);
  const auto kind = ints<int>(T, 0, 4, seed + 3);
  std::vector<long long> slots(T);
  for (LL t = 0; t < T; ++t) slots[t] = kind[t] == 0 || t == 1 ? -1 : perm[t];
  DevLocal<bf16> kd({T, D}, key), vd({T, D}, value), kc({NS, D}, {}), vc({NS, D}, {});
  DevLocal<long long> sd({T}, slots);
  const int before = begin_case(r);
  if (run(r, "kv_append_slots", 2, kd.view(), vd.view(), sd.view(), kc.view(), vc.view())) {
    std::vector<double> wk(NS * D, kNaN), wv(NS * D, kNaN);
    for (LL t = 0; t < T; ++t)
      if (slots[t] >= 0)
        for (LL j = 0; j < D; ++j) wk[slots[t] * D + j] = val(key[t * D + j]), wv[slots[t] * D + j] = val(value[t * D + j]);
    check_or_poison(r, "kv_append_slots.kcache", kc.download(), wk, exact());
    check_or_poison(r, "kv_append_slots.vcache", vc.download(), wv, exact());
  }
  end_case(r, "kv_append_slots " + dims({T, D, NS}), before);
}

// A block table of S sequences of MB blocks each: distinct physical blocks of NB, as bt [S MB, 1].
std::vector<int> block_table(LL S, LL MB, LL NB, unsigned seed) {
  auto p = permutation(NB, seed);
  p.resize(S * MB);
  return p;
}

// paged_kv_append: token t of sequence seq[t] at position pos[t] goes to kcache row
// bt[seq MB + pos / bs] bs + pos % bs. Each sequence appends a run of positions from a random start; the
// tokens of the sequences interleaved. Every other cache row untouched.
void paged_kv_append(const Run& r, LL S, LL MB, LL bs, LL NB, LL D, unsigned seed) {
  const auto bt = block_table(S, MB, NB, seed);
  std::mt19937 g(seed + 1);
  std::vector<std::pair<int, int>> tok;  // (sequence, position)
  for (LL b = 0; b < S; ++b) {
    const LL cap = MB * bs, start = std::uniform_int_distribution<LL>(0, cap / 2)(g);
    const LL n = std::uniform_int_distribution<LL>(1, cap - start)(g);
    for (LL p = start; p < start + n; ++p) tok.push_back({int(b), int(p)});
  }
  std::shuffle(tok.begin(), tok.end(), g);
  const LL T = LL(tok.size());
  std::vector<int> seq(T), pos(T);
  for (LL t = 0; t < T; ++t) seq[t] = tok[t].first, pos[t] = tok[t].second;
  const auto key = rnd<bf16>(T * D, seed + 2);
  DevLocal<bf16> kd({T, D}, key), kc({NB * bs, D}, {});
  DevLocal<int> sd({T}, seq), pd({T}, pos), btd({S * MB, 1}, bt);
  const int before = begin_case(r);
  if (run(r, "paged_kv_append", 2, kd.view(), sd.view(), pd.view(), btd.view(), kc.view(), MB, bs)) {
    std::vector<double> want(NB * bs * D, kNaN);
    for (LL t = 0; t < T; ++t) {
      const LL slot = LL(bt[seq[t] * MB + pos[t] / bs]) * bs + pos[t] % bs;
      for (LL j = 0; j < D; ++j) want[slot * D + j] = val(key[t * D + j]);
    }
    check_or_poison(r, "paged_kv_append.kcache", kc.download(), want, exact());
  }
  end_case(r, "paged_kv_append " + dims({S, MB, bs, NB, D, T}), before);
}

// paged_kv_gather: out[i, :] = kcache[bt[b MB + i / bs] bs + i % bs, :] for i < L.
void paged_kv_gather(const Run& r, LL S, LL MB, LL bs, LL NB, LL L, LL b, LL D, unsigned seed) {
  const auto bt = block_table(S, MB, NB, seed);
  const auto kc = rnd<bf16>(NB * bs * D, seed + 1);
  DevLocal<bf16> kcd({NB * bs, D}, kc), out({L, D}, {});
  DevLocal<int> btd({S * MB, 1}, bt);
  const int before = begin_case(r);
  if (run(r, "paged_kv_gather", 2, kcd.view(), btd.view(), out.view(), b, MB, bs))
    check(r, "paged_kv_gather.out", out.download(), [&](LL x) {
      const LL i = x / D, j = x % D;
      return val(kc[(LL(bt[b * MB + i / bs]) * bs + i % bs) * D + j]);
    }, exact());
  end_case(r, "paged_kv_gather " + dims({S, MB, bs, NB, L, b, D}), before);
}

// kv_append_fp8_rowscale: a = max(max_j |k[t, j]|, 1e-12); kq[slot[t]] = e4m3(k[t] 448 / a),
// ks[slot[t], 0] = a / 448; slot -1 writes nothing. Row 2 is all zeros (a = 1e-12, codes 0).
void kv_append_fp8_rowscale(const Run& r, LL T, LL NS, unsigned seed) {
  const LL D = 128;
  auto k = rnd<bf16>(T * D, seed, -3.f, 3.f);
  if (T > 2)
    for (LL j = 0; j < D; ++j) k[2 * D + j] = pkt::from_host<bf16>(0.f);
  const auto perm = permutation(NS, seed + 1);
  const auto kind = ints<int>(T, 0, 4, seed + 2);
  std::vector<int> slot(T);
  for (LL t = 0; t < T; ++t) slot[t] = kind[t] == 0 && t > 0 ? -1 : perm[t];
  DevLocal<bf16> kd({T, D}, k);
  DevLocal<int> sd({T, 1}, slot);
  DevLocal<f8e4m3> kq({NS, D}, {});
  DevLocal<float> ks({NS, 1}, {});
  const int before = begin_case(r);
  if (run(r, "kv_append_fp8_rowscale", 2, kd.view(), sd.view(), kq.view(), ks.view())) {
    std::vector<double> wq(NS * D, kNaN), step(NS * D, 0.0), wa(NS, kNaN);
    for (LL t = 0; t < T; ++t) {
      if (slot[t] < 0) continue;
      float a = 1e-12f;
      for (LL j = 0; j < D; ++j) a = std::max(a, std::fabs(float(val(k[t * D + j]))));
      wa[slot[t]] = double(a) / 448;
      for (LL j = 0; j < D; ++j) {
        const double v = val(k[t * D + j]) * 448 / double(a);
        wq[slot[t] * D + j] = e4m3(v), step[slot[t] * D + j] = e4m3_step(v);
      }
    }
    check_or_poison(r, "kv_append_fp8_rowscale.kq", kq.download(), wq, [&](LL i) { return step[i]; });
    check_or_poison(r, "kv_append_fp8_rowscale.ks", ks.download(), wa, [&](LL i) { return 1e-6 * wa[i]; });
  }
  end_case(r, "kv_append_fp8_rowscale " + dims({T, NS}), before);
}

// paged_decode_attention: o[b] = bf16(softmax_j(scale q[b] . k_j) v_j) over the lens[b] keys of sequence b,
// key j at row bt[b MB + j / bs] bs + j % bs of kc / vc. Lengths 1 .. MB bs, the first two planted at 1 and
// MB bs.
void paged_decode_attention(const Run& r, LL B, LL MB, LL bs, unsigned seed) {
  const LL D = 128, NB = B * MB + 3;
  const float scale = 0.088388f;
  const auto bt = block_table(B, MB, NB, seed);
  auto lens = ints<int>(B, 1, int(MB * bs), seed + 1);
  lens[0] = 1;
  if (B > 1) lens[1] = int(MB * bs);
  const auto q = rnd<bf16>(B * D, seed + 2, -2.f, 2.f), kc = rnd<bf16>(NB * bs * D, seed + 3, -2.f, 2.f),
             vc = rnd<bf16>(NB * bs * D, seed + 4);
  DevLocal<bf16> qd({B, D}, q), kcd({NB * bs, D}, kc), vcd({NB * bs, D}, vc), o({B, D}, {});
  DevLocal<int> btd({B * MB, 1}, bt), ld({B}, lens);
  const int before = begin_case(r);
  if (run(r, "paged_decode_attention", 2, qd.view(), kcd.view(), vcd.view(), btd.view(), ld.view(), o.view(), MB, bs,
          scale)) {
    std::vector<double> wo(B * D), wl(B);
    for (LL b = 0; b < B; ++b) {
      auto row = [&](LL j) { return LL(bt[b * MB + j / bs]) * bs + j % bs; };
      attend(1, lens[b], D, [&](LL, LL j) { return dot(q, b * D, kc, row(j) * D, D) * scale; }, [](LL, LL) { return true; },
             [&](LL j, LL d) { return val(vc[row(j) * D + d]); }, wo.data() + b * D, wl.data() + b);
    }
    check(r, "paged_decode_attention.o", o.download(), [&](LL i) { return wo[i]; },
          [&](LL i) { return 2 * kBf * std::fabs(wo[i]) + 4e-3; });
  }
  end_case(r, "paged_decode_attention " + dims({B, MB, bs}), before);
}

// ================================================================ fp8 quantisation ==

// fp8_quant_per_row_wide: a = max(max_j |x[i, j]|, 1e-12); q = e4m3(x 448 / a); s[i, 0] = a / 448. Row 2
// all zeros.
void fp8_quant_per_row_wide(const Run& r, LL R, LL C, unsigned seed) {
  auto x = rnd<bf16>(R * C, seed, -3.f, 3.f);
  if (R > 2)
    for (LL j = 0; j < C; ++j) x[2 * C + j] = pkt::from_host<bf16>(0.f);
  DevLocal<bf16> xd({R, C}, x);
  DevLocal<f8e4m3> q({R, C}, {});
  DevLocal<float> s({R, 1}, {});
  const int before = begin_case(r);
  if (run(r, "fp8_quant_per_row_wide", 2, xd.view(), q.view(), s.view())) {
    std::vector<double> a(R, 1e-12);
    for (LL i = 0; i < R * C; ++i) a[i / C] = std::max(a[i / C], std::fabs(val(x[i])));
    for (auto& m : a) m = std::max(double(float(m)), double(1e-12f));
    auto v = [&](LL i) { return val(x[i]) * 448 / a[i / C]; };
    check(r, "fp8_quant_per_row_wide.s", s.download(), [&](LL i) { return a[i] / 448; }, [&](LL i) { return 1e-6 * a[i] / 448; });
    check(r, "fp8_quant_per_row_wide.q", q.download(), [&](LL i) { return e4m3(v(i)); }, [&](LL i) { return e4m3_step(v(i)); });
  }
  end_case(r, "fp8_quant_per_row_wide " + dims({R, C}), before);
}

// fp8_quant_1x128_ragged: per row and 128-column block (the last one shorter), a = max(max |x|, 1e-10);
// q = e4m3(x 448 / a); s[i, k] = a / 448. Row 1's first block all zeros.
void fp8_quant_1x128_ragged(const Run& r, LL R, LL C, unsigned seed) {
  const LL NB = (C + 127) / 128;
  auto x = rnd<float>(R * C, seed, -3.f, 3.f);
  if (R > 1)
    for (LL j = 0; j < std::min<LL>(C, 128); ++j) x[C + j] = 0.f;
  DevLocal<float> xd({R, C}, x), s({R, NB}, {});
  DevLocal<f8e4m3> q({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "fp8_quant_1x128_ragged", 2, xd.view(), q.view(), s.view())) {
    std::vector<double> a(R * NB, double(1e-10f));
    for (LL i = 0; i < R * C; ++i) {
      double& m = a[(i / C) * NB + (i % C) / 128];
      m = std::max(m, std::fabs(double(x[i])));
    }
    auto v = [&](LL i) { return double(x[i]) * 448 / a[(i / C) * NB + (i % C) / 128]; };
    check(r, "fp8_quant_1x128_ragged.s", s.download(), [&](LL i) { return a[i] / 448; }, [&](LL i) { return 1e-6 * a[i] / 448; });
    check(r, "fp8_quant_1x128_ragged.q", q.download(), [&](LL i) { return e4m3(v(i)); }, [&](LL i) { return e4m3_step(v(i)); });
  }
  end_case(r, "fp8_quant_1x128_ragged " + dims({R, C}), before);
}

// fp8_dequant_128x128: y = bf16(f32(q) s[i / 128, j / 128]), exact.
void fp8_dequant_128x128(const Run& r, LL R, LL C, unsigned seed) {
  const LL RB = (R + 127) / 128, CB = (C + 127) / 128;
  const auto q = rnd<f8e4m3>(R * C, seed, -448.f, 448.f);
  const auto s = rnd<float>(RB * CB, seed + 1, 0.01f, 2.f);
  DevLocal<f8e4m3> qd({R, C}, q);
  DevLocal<float> sd({RB, CB}, s);
  DevLocal<bf16> y({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "fp8_dequant_128x128", 2, qd.view(), sd.view(), y.view()))
    check(r, "fp8_dequant_128x128.y", y.download(), [&](LL i) {
      const LL m = i / C, n = i % C;
      return bf16r(float(val(q[i])) * s[(m / 128) * CB + n / 128]);
    }, exact());
  end_case(r, "fp8_dequant_128x128 " + dims({R, C}), before);
}

// fp8_e5m2_per_tensor_tp (multi-rank): rmax[0, i] = max(max_j |x[i, j]|, 1e-12) of this rank's rows;
// g = the maximum over ranks; q = e5m2(x 57344 / g), sc = g / 57344 on every rank. Rank p's values lie in
// [-(1 + p), 1 + p), so the maximum is the last rank's.
void fp8_e5m2_per_tensor_tp(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(R * C, seed + p, -1.f - p, 1.f + p);
  DevLocal<float> xd({R, C}, x[me]), rmax({1, R}, {}), sc({1, 1}, {});
  SymArg<float> amax(r.ctx, {1, 1}, nullptr), gmax(r.ctx, {1, 1}, nullptr);
  DevLocal<f8e5m2> q({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "fp8_e5m2_per_tensor_tp", 2, xd.view(), rmax.view(), amax.view, gmax.view, q.view(), sc.view())) {
    std::vector<float> rm(R, 1e-12f);
    float g = 1e-12f;
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < R * C; ++i) {
        g = std::max(g, std::fabs(x[p][i]));
        if (p == me) rm[i / C] = std::max(rm[i / C], std::fabs(x[p][i]));
      }
    check(r, "fp8_e5m2_per_tensor_tp.rmax", rmax.download(), [&](LL i) { return double(rm[i]); }, exact());
    check(r, "fp8_e5m2_per_tensor_tp.amax", amax.download(), [&](LL) { return double(*std::max_element(rm.begin(), rm.end())); },
          exact());
    check(r, "fp8_e5m2_per_tensor_tp.gmax", gmax.download(), [&](LL) { return double(g); }, exact());
    auto v = [&](LL i) { return double(x[me][i]) * 57344 / double(g); };
    check(r, "fp8_e5m2_per_tensor_tp.q", q.download(), [&](LL i) { return e5m2(v(i)); }, [&](LL i) { return e5m2_step(v(i)); });
    check(r, "fp8_e5m2_per_tensor_tp.sc", sc.download(), [&](LL) { return double(g) / 57344; },
          [&](LL) { return 1e-6 * double(g) / 57344; });
  }
  end_case(r, "fp8_e5m2_per_tensor_tp " + dims({R, C}), before);
}

// ================================================================ optimizers ==

// adamw_f32_inplace: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr (m / bc1) / (sqrt(v / bc2) + eps)
// + lr wd p (old p). The f32 constants (1 - b1, lr wd) as the kernel forms them; the rest in float64.
void adamw_f32_inplace(const Run& r, LL N, unsigned seed) {
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.1f, bc1 = 1 - 0.9f * 0.9f * 0.9f,
              bc2 = 1 - 0.999f * 0.999f * 0.999f;
  const auto p = rnd<float>(N, seed, -2.f, 2.f), g = rnd<float>(N, seed + 1), m = rnd<float>(N, seed + 2, -0.1f, 0.1f),
             v = rnd<float>(N, seed + 3, 0.f, 0.01f);
  DevLocal<float> pd({N}, p), gd({N}, g), md({N}, m), vd({N}, v);
  const int before = begin_case(r);
  if (run(r, "adamw_f32_inplace", 1, pd.view(), gd.view(), md.view(), vd.view(), lr, b1, b2, eps, wd, bc1, bc2)) {
    std::vector<double> wm(N), wv(N), wp(N), tm(N), tv(N), tp(N);
    for (LL i = 0; i < N; ++i) {
      const double gi = g[i];
      wm[i] = double(m[i]) * b1 + gi * double(1.0f - b1);
      wv[i] = double(v[i]) * b2 + gi * gi * double(1.0f - b2);
      const double upd = (wm[i] / bc1) / (std::sqrt(wv[i] / bc2) + eps) * lr, decay = double(p[i]) * double(lr * wd);
      wp[i] = double(p[i]) - upd - decay;
      tm[i] = 1e-6 * (std::fabs(m[i] * b1) + std::fabs(gi)) + 1e-12;
      tv[i] = 1e-6 * (std::fabs(v[i]) + gi * gi) + 1e-15;
      tp[i] = 2e-6 * (std::fabs(p[i]) + std::fabs(upd)) + 1e-9;
    }
    check(r, "adamw_f32_inplace.m", md.download(), [&](LL i) { return wm[i]; }, [&](LL i) { return tm[i]; });
    check(r, "adamw_f32_inplace.v", vd.download(), [&](LL i) { return wv[i]; }, [&](LL i) { return tv[i]; });
    check(r, "adamw_f32_inplace.p", pd.download(), [&](LL i) { return wp[i]; }, [&](LL i) { return tp[i]; });
  }
  end_case(r, "adamw_f32_inplace " + dims({N}), before);
}

// sgd_nesterov_bf16: buf = mu buf + g (f32); p = bf16(p - lr (g + mu buf)).
void sgd_nesterov_bf16(const Run& r, LL N, unsigned seed) {
  const float lr = 0.05f, mu = 0.9f;
  const auto p = rnd<bf16>(N, seed, -2.f, 2.f), g = rnd<bf16>(N, seed + 1);
  const auto buf = rnd<float>(N, seed + 2);
  DevLocal<bf16> pd({N}, p), gd({N}, g);
  DevLocal<float> bd({N}, buf);
  const int before = begin_case(r);
  if (run(r, "sgd_nesterov_bf16", 1, pd.view(), gd.view(), bd.view(), lr, mu)) {
    std::vector<double> wb(N), wp(N);
    for (LL i = 0; i < N; ++i) {
      wb[i] = double(buf[i]) * mu + val(g[i]);
      wp[i] = val(p[i]) - (val(g[i]) + wb[i] * mu) * lr;
    }
    check(r, "sgd_nesterov_bf16.buf", bd.download(), [&](LL i) { return wb[i]; },
          [&](LL i) { return 1e-6 * (std::fabs(buf[i]) + std::fabs(val(g[i]))) + 1e-12; });
    check(r, "sgd_nesterov_bf16.p", pd.download(), [&](LL i) { return wp[i]; },
          [&](LL i) { return kBf * std::fabs(wp[i]) + 1e-6; });
  }
  end_case(r, "sgd_nesterov_bf16 " + dims({N}), before);
}

// clip_grad_global_norm_tp (multi-rank): ss = this rank's sum of g^2; tot = the sum over ranks; g *= min(1,
// max_norm / (sqrt(tot) + 1e-6)) in place. max_norm 1 clips; 1e6 leaves g unchanged, bit for bit.
void clip_grad_global_norm_tp(const Run& r, LL R, LL C, float max_norm, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> g(W);
  for (int p = 0; p < W; ++p) g[p] = rnd<float>(R * C, seed + p);
  DevLocal<float> gd({R, C}, g[me]), ss({1, 1}, {});
  SymArg<float> part(r.ctx, {1, 1}, nullptr), tot(r.ctx, {1, 1}, nullptr);
  const int before = begin_case(r);
  if (run(r, "clip_grad_global_norm_tp", 1, gd.view(), ss.view(), part.view, tot.view, max_norm)) {
    double own = 0, all = 0;
    for (int p = 0; p < W; ++p)
      for (float x : g[p]) (p == me ? own : all) += double(x) * x;
    all += own;
    const double f = std::min(double(max_norm) / (std::sqrt(all) + 1e-6), 1.0);
    check(r, "clip_grad_global_norm_tp.ss", ss.download(), [&](LL) { return own; }, [&](LL) { return 1e-5 * own; });
    check(r, "clip_grad_global_norm_tp.tot", tot.download(), [&](LL) { return all; }, [&](LL) { return 1e-5 * all; });
    check(r, "clip_grad_global_norm_tp.g", gd.download(), [&](LL i) { return double(g[me][i]) * f; },
          [&](LL i) { return f < 1 ? 2e-5 * std::fabs(double(g[me][i]) * f) : 0.0; });
    if (max_norm < 10 && !(f < 0.5)) pkt::fail("clip_grad_global_norm_tp: choose inputs that clip");
  }
  end_case(r, "clip_grad_global_norm_tp " + dims({R, C}) + " max_norm " + std::to_string(max_norm), before);
}

// ================================================================ MoE, norms, softmax ==

// moe_combine_renorm: out[t] = bf16(sum_k (w[t, k] / sum_k' w[t, k']) y[slot[t, k]]), a -1 slot adding
// nothing while its weight stays in the sum.
void moe_combine_renorm(const Run& r, LL T, LL H, LL Kc, LL N, unsigned seed) {
  const auto y = rnd<bf16>(N * H, seed);
  const auto w = rnd<float>(T * Kc, seed + 1, 0.05f, 1.f);
  auto slot = ints<int>(T * Kc, 0, N - 1, seed + 2);
  const auto kind = ints<int>(T * Kc, 0, 5, seed + 3);
  for (LL i = 0; i < T * Kc; ++i)
    if (kind[i] == 0) slot[i] = -1;
  DevLocal<bf16> yd({N, H}, y), out({T, H}, {});
  DevLocal<int> sd({T, Kc}, slot);
  DevLocal<float> wd({T, Kc}, w);
  const int before = begin_case(r);
  if (run(r, "moe_combine_renorm", 2, yd.view(), sd.view(), wd.view(), out.view())) {
    std::vector<double> want(T * H, 0.0), mag(T * H, 0.0);
    for (LL t = 0; t < T; ++t) {
      double ws = 0;
      for (LL k = 0; k < Kc; ++k) ws += w[t * Kc + k];
      for (LL k = 0; k < Kc; ++k) {
        if (slot[t * Kc + k] < 0) continue;
        for (LL h = 0; h < H; ++h) {
          const double c = w[t * Kc + k] / ws * val(y[slot[t * Kc + k] * H + h]);
          want[t * H + h] += c, mag[t * H + h] += std::fabs(c);
        }
      }
    }
    check(r, "moe_combine_renorm.out", out.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "moe_combine_renorm " + dims({T, H, Kc, N}), before);
}

// fused_add_rmsnorm_inplace: res = bf16(x + res); x = bf16(res rsqrt(mean res^2 + eps) w), in place.
void fused_add_rmsnorm_inplace(const Run& r, LL T, LL H, unsigned seed) {
  const float eps = 1e-6f;
  const auto x = rnd<bf16>(T * H, seed, -2.f, 2.f), res = rnd<bf16>(T * H, seed + 1, -2.f, 2.f);
  const auto w = rnd<bf16>(H, seed + 2, 0.5f, 1.5f);
  DevLocal<bf16> xd({T, H}, x), rd({T, H}, res), wd({H}, w);
  const int before = begin_case(r);
  if (run(r, "fused_add_rmsnorm_inplace", 1, xd.view(), rd.view(), wd.view(), eps)) {
    std::vector<double> s(T * H);
    for (LL i = 0; i < T * H; ++i) s[i] = bf16r(float(val(x[i])) + float(val(res[i])));
    const auto want = rmsnorm_rows(T, H, eps, [&](LL i) { return s[i]; }, [&](LL j) { return val(w[j]); });
    check(r, "fused_add_rmsnorm_inplace.res", rd.download(), [&](LL i) { return s[i]; }, exact());
    check(r, "fused_add_rmsnorm_inplace.x", xd.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kBf * std::fabs(want[i]) + 1e-6; });
  }
  end_case(r, "fused_add_rmsnorm_inplace " + dims({T, H}), before);
}

// one_row_rmsnorm_f16: y = f16(x rsqrt(sum x^2 / C + eps) w) of a [1, C] tensor.
void one_row_rmsnorm_f16(const Run& r, LL C, unsigned seed) {
  const float eps = 1e-5f;
  const auto x = rnd<f16>(C, seed, -3.f, 3.f), w = rnd<f16>(C, seed + 1, 0.5f, 1.5f);
  DevLocal<f16> xd({1, C}, x), wd({1, C}, w), y({1, C}, {});
  const int before = begin_case(r);
  if (run(r, "one_row_rmsnorm_f16", 2, xd.view(), wd.view(), y.view(), eps)) {
    const auto want = rmsnorm_rows(1, C, eps, [&](LL i) { return val(x[i]); }, [&](LL j) { return val(w[j]); });
    check(r, "one_row_rmsnorm_f16.y", y.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return kHf * std::fabs(want[i]) + 1e-6; });
  }
  end_case(r, "one_row_rmsnorm_f16 " + dims({C}), before);
}

// softmax_wide_inplace: x = exp(x - m) / l of each row, in place.
void softmax_wide_inplace(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = rnd<float>(R * C, seed, -8.f, 8.f);
  DevLocal<float> xd({R, C}, x);
  const int before = begin_case(r);
  if (run(r, "softmax_wide_inplace", 1, xd.view())) {
    std::vector<double> want(R * C);
    for (LL m = 0; m < R; ++m) {
      double mx = -1e300, l = 0;
      for (LL j = 0; j < C; ++j) mx = std::max(mx, double(x[m * C + j]));
      for (LL j = 0; j < C; ++j) l += (want[m * C + j] = std::exp(double(x[m * C + j]) - mx));
      for (LL j = 0; j < C; ++j) want[m * C + j] /= l;
    }
    check(r, "softmax_wide_inplace.x", xd.download(), [&](LL i) { return want[i]; },
          [&](LL i) { return 2e-5 * want[i] + 1e-12; });
  }
  end_case(r, "softmax_wide_inplace " + dims({R, C}), before);
}

// ================================================================ vocabulary-parallel (multi-rank) ==

// vp_embedding_i64_scaled: out[t] = f32(table_q[id - q V]) scale for the rank q whose shard holds id (0 for
// an id in no shard: two planted at -1 and W V), summed over ranks.
void vp_embedding_i64_scaled(const Run& r, LL T, LL V, LL H, unsigned seed) {
  const int W = r.W, me = r.me;
  const float scale = 3.5f;
  std::vector<std::vector<bf16>> table(W);
  for (int p = 0; p < W; ++p) table[p] = rnd<bf16>(V * H, seed + p);
  auto ids = ints<long long>(T, -3, W * V + 2, seed + 20);
  if (T > 3) ids[T / 2] = -1, ids[T / 3] = W * V;
  DevLocal<long long> idd({T}, ids);
  DevLocal<bf16> td({V, H}, table[me]);
  SymArg<float> part(r.ctx, {T, H}, nullptr), out(r.ctx, {T, H}, nullptr);
  const int before = begin_case(r);
  if (run(r, "vp_embedding_i64_scaled", 2, idd.view(), td.view(), part.view, out.view, scale)) {
    auto want = [&](LL i) {
      const LL id = ids[i / H];
      if (id < 0 || id >= W * V) return 0.0;
      return double(float(val(table[id / V][(id % V) * H + i % H])) * scale);
    };
    check(r, "vp_embedding_i64_scaled.out", out.download(), want, [&](LL i) { return 1e-7 * std::fabs(want(i)); });
  }
  end_case(r, "vp_embedding_i64_scaled " + dims({T, V, H}), before);
}

// vp_embedding_bwd: dtable[id - r V] += dy[t] for every token whose id lies in this rank's shard (ids
// -2 .. W V + 1, with duplicates), on a random dtable0.
void vp_embedding_bwd(const Run& r, LL T, LL V, LL H, unsigned seed) {
  const int W = r.W, me = r.me;
  const auto ids = ints<int>(T, -2, W * V + 1, seed);
  const auto dy = rnd<bf16>(T * H, seed + 1);
  const auto d0 = rnd<float>(V * H, seed + 10 + me, -4.f, 4.f);
  DevLocal<int> idd({T}, ids);
  DevLocal<bf16> dyd({T, H}, dy);
  DevLocal<float> dt({V, H}, d0);
  const int before = begin_case(r);
  if (run(r, "vp_embedding_bwd", 1, idd.view(), dyd.view(), dt.view())) {
    std::vector<double> want(d0.begin(), d0.end()), mag(V * H);
    for (LL i = 0; i < V * H; ++i) mag[i] = std::fabs(d0[i]);
    for (LL t = 0; t < T; ++t) {
      const LL row = LL(ids[t]) - LL(me) * V;
      if (row < 0 || row >= V) continue;
      for (LL h = 0; h < H; ++h) want[row * H + h] += val(dy[t * H + h]), mag[row * H + h] += std::fabs(val(dy[t * H + h]));
    }
    check(r, "vp_embedding_bwd.dtable", dt.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i] + 1e-7; });
  }
  end_case(r, "vp_embedding_bwd " + dims({T, V, H}), before);
}

// The logits of a vocabulary-parallel head: rank p's shard [T, V] of the full [T, W V], and global targets
// (every fourth planted in the first columns of some rank's shard, which the previous rank's last
// 256-column tile covers with padding when V % 256 != 0).
struct VocabShards {
  std::vector<std::vector<bf16>> lg;
  std::vector<long long> target;
  std::vector<double> mx, s0, s1;  // the global max, sum of exp(x - mx), the target's logit
};
VocabShards vocab_shards(int W, LL T, LL V, unsigned seed) {
  VocabShards v;
  v.lg.resize(W);
  for (int p = 0; p < W; ++p) v.lg[p] = rnd<bf16>(T * V, seed + p, -4.f, 4.f);
  v.target = ints<long long>(T, 0, W * V - 1, seed + 20);
  for (LL t = 0; t < T; t += 4) v.target[t] = (t / 4 % W) * V + t % 7 % V;
  v.mx.assign(T, -1e300), v.s0.assign(T, 0.0), v.s1.assign(T, 0.0);
  auto x = [&](LL t, LL c) { return val(v.lg[c / V][t * V + c % V]); };
  for (LL t = 0; t < T; ++t) {
    for (LL c = 0; c < W * V; ++c) v.mx[t] = std::max(v.mx[t], x(t, c));
    for (LL c = 0; c < W * V; ++c) v.s0[t] += std::exp(x(t, c) - v.mx[t]);
    v.s1[t] = x(t, v.target[t]);
  }
  return v;
}

// vp_cross_entropy_fwd: mx = the max over all W V logits; sums[t] = (sum exp(x - mx), the target's logit);
// loss = log(sums[t, 0]) + mx - sums[t, 1].
void vp_cross_entropy_fwd(const Run& r, LL T, LL V, unsigned seed) {
  const auto v = vocab_shards(r.W, T, V, seed);
  DevLocal<bf16> ld({T, V}, v.lg[r.me]);
  DevLocal<long long> tg({T, 1}, v.target);
  SymArg<float> pmax(r.ctx, {T, 1}, nullptr), mx(r.ctx, {T, 1}, nullptr), psums(r.ctx, {T, 2}, nullptr),
      sums(r.ctx, {T, 2}, nullptr);
  DevLocal<float> loss({T}, {});
  const int before = begin_case(r);
  if (run(r, "vp_cross_entropy_fwd", 2, ld.view(), tg.view(), pmax.view, mx.view, psums.view, sums.view, loss.view())) {
    check(r, "vp_cross_entropy_fwd.mx", mx.download(), [&](LL t) { return v.mx[t]; }, exact());
    check(r, "vp_cross_entropy_fwd.sums", sums.download(), [&](LL i) { return i % 2 ? v.s1[i / 2] : v.s0[i / 2]; },
          [&](LL i) { return i % 2 ? 0.0 : 1e-5 * v.s0[i / 2]; });
    check(r, "vp_cross_entropy_fwd.loss", loss.download(), [&](LL t) { return std::log(v.s0[t]) + v.mx[t] - v.s1[t]; },
          [&](LL t) { return 2e-5 * (1 + std::fabs(v.mx[t]) + std::fabs(v.s1[t])); });
  }
  end_case(r, "vp_cross_entropy_fwd " + dims({T, V}), before);
}

// vp_cross_entropy_bwd: dlogits = bf16((exp(x - mx) / sums[t, 0] - (v + r V == target)) dloss), the
// statistics the host's.
void vp_cross_entropy_bwd(const Run& r, LL T, LL V, unsigned seed) {
  const int me = r.me;
  const auto v = vocab_shards(r.W, T, V, seed);
  std::vector<float> mx(T), sums(2 * T);
  for (LL t = 0; t < T; ++t) mx[t] = float(v.mx[t]), sums[2 * t] = float(v.s0[t]), sums[2 * t + 1] = float(v.s1[t]);
  const auto dloss = rnd<float>(T, seed + 30, 0.5f, 2.f);
  DevLocal<bf16> ld({T, V}, v.lg[me]), dl({T, V}, {});
  DevLocal<long long> tg({T, 1}, v.target);
  DevLocal<float> mxd({T, 1}, mx), sd({T, 2}, sums), dd({T}, dloss);
  const int before = begin_case(r);
  if (run(r, "vp_cross_entropy_bwd", 2, ld.view(), tg.view(), mxd.view(), sd.view(), dd.view(), dl.view())) {
    auto want = [&](LL i) {
      const LL t = i / V, c = i % V + LL(me) * V;
      const double p = std::exp(val(v.lg[me][i]) - double(mx[t])) / double(sums[2 * t]);
      return (p - (c == v.target[t] ? 1.0 : 0.0)) * dloss[t];
    };
    check(r, "vp_cross_entropy_bwd.dlogits", dl.download(), want,
          [&](LL i) { return kBf * std::fabs(want(i)) + 1e-6 * dloss[i / V]; });
  }
  end_case(r, "vp_cross_entropy_bwd " + dims({T, V}), before);
}

// vp_greedy_argmax: every rank's row maximum and its column in every rank's cand_v / cand_i at column r;
// tok[t] = q V + i of the largest candidate, the lowest rank on ties. Values k / 8 (k in -4000 .. 4000);
// rows t % 3 == 0 hold 600 on every rank (and twice on rank 0: ties within and across ranks), rows
// t % 3 == 1 hold 600 on rank t % W only.
void vp_greedy_argmax(const Run& r, LL T, LL V, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> lg(W);
  for (int p = 0; p < W; ++p) {
    const auto k = ints<int>(T * V, -4000, 4000, seed + p);
    lg[p].resize(T * V);
    for (LL i = 0; i < T * V; ++i) lg[p][i] = float(k[i]) / 8.f;
    for (LL t = 0; t < T; ++t) {
      if (t % 3 == 0) lg[p][t * V + (t * 7 + p * 3) % V] = 600.f;
      if (t % 3 == 0 && p == 0) lg[p][t * V + (t * 11 + 5) % V] = 600.f;
      if (t % 3 == 1 && p == t % W) lg[p][t * V + (t * 5) % V] = 600.f;
    }
  }
  DevLocal<float> ld({T, V}, lg[me]);
  SymArg<float> cv(r.ctx, {T, 8}, nullptr);
  SymArg<int> ci(r.ctx, {T, 8}, nullptr);
  DevLocal<long long> tok({T}, {});
  const int before = begin_case(r);
  if (run(r, "vp_greedy_argmax", 2, ld.view(), cv.view, ci.view, tok.view())) {
    std::vector<double> wv(T * 8, kNaN), wi(T * 8, kNaN), wt(T);
    for (LL t = 0; t < T; ++t) {
      int bq = 0;
      for (int p = 0; p < W; ++p) {
        const LL b = first_argmax(V, [&](LL j) { return lg[p][t * V + j]; });
        wv[t * 8 + p] = lg[p][t * V + b], wi[t * 8 + p] = double(b);
        if (wv[t * 8 + p] > wv[t * 8 + bq]) bq = p;
      }
      wt[t] = double(bq) * double(V) + wi[t * 8 + bq];
    }
    // Columns W .. 7 are never written: cand_v keeps its poison (NaN); cand_i's (-1) is not checked.
    const auto gi = ci.download();
    std::vector<double> gid(T * 8);
    for (LL i = 0; i < T * 8; ++i) gid[i] = i % 8 < W ? double(gi[i]) : kNaN;
    check_or_poison(r, "vp_greedy_argmax.cand_v", cv.download(), wv, exact());
    check_or_poison(r, "vp_greedy_argmax.cand_i", gid, wi, exact());
    check(r, "vp_greedy_argmax.tok", tok.download(), [&](LL t) { return wt[t]; }, exact());
  }
  end_case(r, "vp_greedy_argmax " + dims({T, V}), before);
}

// ================================================================ rings and pulls (multi-rank) ==

// ring_shift_by_two: y on rank (r + 2) % W gets x of rank r, so rank me's y is x of rank (me - 2) mod W.
void ring_shift_by_two(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(R * C, seed + p);
  DevLocal<float> xd({R, C}, x[me]);
  SymArg<float> y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "ring_shift_by_two", 2, xd.view(), y.view)) {
    const int src = ((me - 2) % W + W) % W;
    check(r, "ring_shift_by_two.y", y.download(), [&](LL i) { return double(x[src][i]); }, exact());
  }
  end_case(r, "ring_shift_by_two " + dims({R, C}), before);
}

// ring_pull_neighbours_sum: y = x_r + x_{r - 1} + x_{r + 1} (ranks mod W; at W = 1 3 x, at W = 2 x_r + 2 x_o).
void ring_pull_neighbours_sum(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me, prev = (me + W - 1) % W, next = (me + 1) % W;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(R * C, seed + p);
  SymArg<float> xd(r.ctx, {R, C}, &x[me]);
  DevLocal<float> y({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "ring_pull_neighbours_sum", 2, xd.view, y.view())) {
    check(r, "ring_pull_neighbours_sum.y", y.download(),
          [&](LL i) { return double(x[me][i]) + double(x[prev][i]) + double(x[next][i]); },
          [&](LL i) { return 1e-6 * (std::fabs(x[me][i]) + std::fabs(x[prev][i]) + std::fabs(x[next][i])); });
  }
  end_case(r, "ring_pull_neighbours_sum " + dims({R, C}), before);
}

// rs_by_pulls: x [W R, C] on every rank; y[i, j] on rank r = sum_q x_q[r R + i, j].
void rs_by_pulls(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<float>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<float>(W * R * C, seed + p);
  SymArg<float> xd(r.ctx, {W * R, C}, &x[me]);
  DevLocal<float> y({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "rs_by_pulls", 2, xd.view, y.view())) {
    std::vector<double> want(R * C, 0.0), mag(R * C, 0.0);
    for (int p = 0; p < W; ++p)
      for (LL i = 0; i < R * C; ++i) want[i] += x[p][me * R * C + i], mag[i] += std::fabs(x[p][me * R * C + i]);
    check(r, "rs_by_pulls.y", y.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 1e-6 * mag[i]; });
  }
  end_case(r, "rs_by_pulls " + dims({R, C}), before);
}

// ag_by_row_stores: y_q[r R + i] = x_r[i] on every rank q.
void ag_by_row_stores(const Run& r, LL R, LL C, unsigned seed) {
  const int W = r.W, me = r.me;
  std::vector<std::vector<bf16>> x(W);
  for (int p = 0; p < W; ++p) x[p] = rnd<bf16>(R * C, seed + p);
  DevLocal<bf16> xd({R, C}, x[me]);
  SymArg<bf16> y(r.ctx, {W * R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "ag_by_row_stores", 2, xd.view(), y.view))
    check(r, "ag_by_row_stores.y", y.download(), [&](LL i) { return val(x[i / (R * C)][i % (R * C)]); }, exact());
  end_case(r, "ag_by_row_stores " + dims({R, C}), before);
}

void single_gpu_cases(const Run& r) {
  unsigned s = 100;
  // Rotary in place: T not a multiple of 16, H = 3, and a one-token tensor.
  rope_neox(r, "rope_neox_packed_inplace", 37, 3, 50, s += 100);
  rope_neox(r, "rope_neox_packed_inplace", 1, 3, 10, s += 100);
  rope_neox(r, "rope_neox_packed_inplace", 70, 1, 100, s += 100);
  rope_neox(r, "rope_neox_inplace_pos", 37, 3, 50, s += 100);
  // Speculative decoding: K = 5 (the draft 11 columns short of its 16-wide tile), 15 (out fills the tile),
  // 1; argmax rows of V = 1000, 1024 (K + 1 = 8) and 77.
  spec_accept_greedy(r, 37, 5, s += 100);
  spec_accept_greedy(r, 20, 15, s += 100);
  spec_accept_greedy(r, 1, 1, s += 100);
  spec_argmax_accept(r, 37, 5, 1000, s += 100);
  spec_argmax_accept(r, 9, 7, 1024, s += 100);
  spec_argmax_accept(r, 5, 1, 77, s += 100);
  spec_sampling_accept(r, 37, 1000, -12345, s += 100);
  spec_sampling_accept(r, 1, 100, (LL(1) << 33) + 7, s += 100);
  // KV cache: D = 128 and D short of the tile; block sizes 16 and 12 (not a power of two).
  kv_append_slots(r, 37, 128, 100, s += 100);
  kv_append_slots(r, 20, 80, 25, s += 100);
  paged_kv_append(r, 3, 4, 16, 16, 256, s += 100);
  paged_kv_append(r, 2, 5, 12, 13, 200, s += 100);
  paged_kv_gather(r, 3, 8, 16, 30, 100, 1, 128, s += 100);
  paged_kv_gather(r, 2, 6, 12, 15, 70, 0, 72, s += 100);
  paged_kv_gather(r, 2, 6, 12, 15, 1, 1, 128, s += 100);
  kv_append_fp8_rowscale(r, 37, 50, s += 100);
  kv_append_fp8_rowscale(r, 1, 4, s += 100);
  paged_decode_attention(r, 5, 20, 16, s += 100);
  paged_decode_attention(r, 3, 7, 12, s += 100);
  // fp8.
  fp8_quant_per_row_wide(r, 37, 3000, s += 100);
  fp8_quant_per_row_wide(r, 1, 1000, s += 100);
  fp8_quant_1x128_ragged(r, 37, 300, s += 100);
  fp8_quant_1x128_ragged(r, 1, 100, s += 100);
  fp8_dequant_128x128(r, 300, 200, s += 100);
  fp8_dequant_128x128(r, 1, 130, s += 100);
  // Optimizers: lengths short of the 1024 / 2048 tile, and one element.
  adamw_f32_inplace(r, 3000, s += 100);
  adamw_f32_inplace(r, 1, s += 100);
  sgd_nesterov_bf16(r, 5000, s += 100);
  sgd_nesterov_bf16(r, 1, s += 100);
  // MoE combine, norms, softmax.
  moe_combine_renorm(r, 37, 300, 3, 50, s += 100);
  moe_combine_renorm(r, 20, 256, 8, 30, s += 100);
  fused_add_rmsnorm_inplace(r, 37, 1000, s += 100);
  fused_add_rmsnorm_inplace(r, 1, 4096, s += 100);
  one_row_rmsnorm_f16(r, 4096, s += 100);
  one_row_rmsnorm_f16(r, 1000, s += 100);
  softmax_wide_inplace(r, 13, 3000, s += 100);
  softmax_wide_inplace(r, 1, 1, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  vp_embedding_i64_scaled(r, 37, 50, 300, s += 100);
  vp_embedding_i64_scaled(r, 1, 7, 256, s += 100);
  vp_embedding_bwd(r, 100, 20, 300, s += 100);
  vp_cross_entropy_fwd(r, 37, 300, s += 100);
  vp_cross_entropy_fwd(r, 1, 1000, s += 100);
  vp_cross_entropy_bwd(r, 37, 300, s += 100);
  vp_greedy_argmax(r, 37, 1500, s += 100);
  vp_greedy_argmax(r, 20, 37, s += 100);
  vp_greedy_argmax(r, 1, 2048, s += 100);
  fp8_e5m2_per_tensor_tp(r, 37, 1000, s += 100);
  fp8_e5m2_per_tensor_tp(r, 1, 100, s += 100);
  clip_grad_global_norm_tp(r, 37, 300, 1.f, s += 100);
  clip_grad_global_norm_tp(r, 37, 300, 1e6f, s += 100);
  ring_shift_by_two(r, 37, 300, s += 100);
  ring_pull_neighbours_sum(r, 37, 300, s += 100);
  rs_by_pulls(r, 37, 200, s += 100);
  ag_by_row_stores(r, 37, 300, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs20_jit_test");
  // The multi-rank kernels at W = 1, 2, 3 and 4 (run_worlds stops at 3 unless a list is given; one given
  // in the environment wins).
  setenv("PK_TEST_WORLDS", "2 3 4", 0);
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs20_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

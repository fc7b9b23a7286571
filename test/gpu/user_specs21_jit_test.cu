// The twenty-first user-written spec set (test/specs/user_specs21.pk.cpp: attention variants, ring /
// Ulysses / context-parallel attention at odd world sizes) through the JIT, each kernel against a float64
// host reference written from its comment, on fresh random inputs (q and k uniform in [-2, 2), v in [-1, 1),
// fresh per case and per rank), with every output poisoned (NaN) first: local outputs by DevLocal with no
// data, symmetric ones (Ulysses' o, qh, kh, vh, oh; the split decode's op, lp) by SymArg with no data, and
// the ring kernels' second K/V slot by NaN, so a block read before its neighbour sent it shows. The
// single-GPU kernels run at W = 1, the four with a window or an offset also with templates = false
// ("name/general"); the multi-rank kernels at W = 1, 2, 3 and 4 (ranks sharing one GPU; PK_TEST_WORLDS
// or PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs against single-GPU attention
// over the whole sequence computed on the host. Sequence lengths leave partial tiles everywhere (37, 50,
// 70, 77, 100, 130, 150, 333 rows / keys against 64-row, 32- / 64- / 128-key tiles), with one-row and
// one-key cases where the comment allows them.
//
// Covered (22 of 44, every one on the Hopper attention template): prefill_offset_window_d64 and
// decode_window_d64 (set 21 finding 1: a window behind a query offset with past >= window, which the launch
// used to refuse, and past < window, window 1 and a window wider than the cache), gqa_g3_window_d128
// (G = 3), gqa_sizes_causal_d128, softcap_causal_d128, softcap_window_gqa_f16_d64, alibi_causal_d64,
// cross_attention_d64 (Sq != Sk both ways, Sq = 1), cross_attention_kvlen_f16_d128,
// prefill_offset_causal_d128, decode_one_row_gqa_d128, swa_distance_lse1d_d64, chunked_local_causal_d128;
// and the multi-rank ring_striped_causal_gqa_f16_d64, ring_zigzag_causal_d128,
// ring_contig_causal_k128_d64, ring_full_f16_k32_d128, ulysses_gqa_causal_d128 and ulysses_window_f16_d64
// (Hq, Hk multiples of W: the head counts scale with W), cp_allgather_kv_causal_gqa_d128 (kf, vf checked
// exactly too), sp_decode_allgather_merge_d64 (the partials and the gathered blocks checked too),
// sp_pull_kv_attention_d64 (kf, vf exactly).
//
// Error bounds. o of a bf16 kernel: o is rounded to bf16 once (at most 2^-8 |o|) and p to bf16 before
// P V (each p_j by at most 2^-8 relative, so at most 2^-8 max |v| = 3.9e-3 in all; l sums the unrounded
// p), scores and sums in fp32 with exp2 / log approximations (1e-6 relative): 2 kBf |o| + 4e-3 (sets 15
// and 19's bound). f16: 2^-11 for each: 4 kHf |o| + 2e-3. A merge of partials (ring steps, the split
// decode) is a convex combination of partials each already rounded (|o| <= max |v| < 1, so at most
// 2^-9 bf16 or 2^-11 f16 apiece): 1 / 512 (bf16) or 1 / 2048 (f16) more per rounding that feeds the
// result (W - 1 for a ring of W steps, 1 for the split decode). Soft-capping's tanh is tanh.approx.f32
// (about 2^-11 relative): a score moves by at most cap 1e-3, o by twice that, lse by that. lse is f32
// and compared as f32 against float64: 1e-3 |lse| + 2e-3 (as sets 15 and 19).
//
// Ambiguity the specs leave, taken into account: decode_window_d64's mask has no causal bound (only
// j > i + past - window, j < Sk), which is its comment's window for the one query row it documents (q
// [H, 1, 64]); it runs with Sq = 1 only. The ring kernels' step 2 sends into the next rank's slot 0, so for
// W >= 3 a launch overwrites the callers' own K / V (the comments' design): each ring case launches once.
// A row that sees no key of a ring step (striped with j > r at row 0, contiguous and zigzag with later
// blocks) gets lp about -1e30 and weight 0, as the comments say; only the merged o and lse are checked.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <type_traits>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f16;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

// Kernels, and whether one of their launches takes a template (every one does).
const std::vector<std::pair<const char*, bool>> kKernels = {
    {"prefill_offset_window_d64", true},    {"decode_window_d64", true},
    {"gqa_g3_window_d128", true},           {"gqa_sizes_causal_d128", true},
    {"softcap_causal_d128", true},          {"softcap_window_gqa_f16_d64", true},
    {"alibi_causal_d64", true},             {"cross_attention_d64", true},
    {"cross_attention_kvlen_f16_d128", true}, {"prefill_offset_causal_d128", true},
    {"decode_one_row_gqa_d128", true},      {"swa_distance_lse1d_d64", true},
    {"chunked_local_causal_d128", true},    {"ring_striped_causal_gqa_f16_d64", true},
    {"ring_zigzag_causal_d128", true},      {"ring_contig_causal_k128_d64", true},
    {"ring_full_f16_k32_d128", true},       {"ulysses_gqa_causal_d128", true},
    {"ulysses_window_f16_d64", true},       {"cp_allgather_kv_causal_gqa_d128", true},
    {"sp_decode_allgather_merge_d64", true}, {"sp_pull_kv_attention_d64", true},
    {"ring_striped_causal_gqa_sizes_f16_d64", true}, {"attention_from_packed_qkv_d64", true},
};
// The window / offset kernels also run with templates = false ("name/general").
const std::vector<const char*> kGeneralToo = {"attention_from_packed_qkv_d64", "prefill_offset_window_d64", "decode_window_d64",
                                              "prefill_offset_causal_d128", "gqa_g3_window_d128"};

KernelSet g_kernels;

bool compile_all() { return compile_set(PK_USER_SPECS21_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels); }

const pk::jit::Kernel& K(const std::string& name) { return g_kernels.at(name); }

// This set's PASS / FAIL lines and launches by kernel name (jit_spec_cases.h).
void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs21", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, K(kernel), kernel, times, args...);
}

// ---- host references and bounds ----

template <class T>
constexpr bool kIsF16 = std::is_same<T, f16>::value;
constexpr double kBfUnit = 1.0 / 512, kHfUnit = 1.0 / 2048;  // one rounding of a value below 1 (bf16, f16)
const float kNaNf = std::numeric_limits<float>::quiet_NaN();

// The bound of an attention output o of type T (the header): `feeds` earlier roundings of partials merged
// into it, `extra` more (soft-capping's tanh).
template <class T>
std::function<double(LL)> o_tol(const std::vector<double>& w, int feeds = 0, double extra = 0) {
  if (kIsF16<T>) return [&w, feeds, extra](LL i) { return 4 * kHf * std::fabs(w[i]) + 2e-3 + feeds * kHfUnit + extra; };
  return [&w, feeds, extra](LL i) { return 2 * kBf * std::fabs(w[i]) + 4e-3 + feeds * kBfUnit + extra; };
}
std::function<double(LL)> lse_tol(const std::vector<double>& w, double extra = 0) {
  return [&w, extra](LL i) { return 1e-3 * std::fabs(w[i]) + 2e-3 + extra; };
}

// Float64 attention of H query heads: q [H, Sq, D], k and v [*, Sk, D], query head h reading K/V head
// kvh(h); key j counts for query i where keep(h, i, j) (every row keeps one at least), with the score
// score(h, i, j, q_i . k_j). wo [H, Sq, D] and wl [H, Sq].
template <class T, class KV, class Score, class Keep>
void reference(LL H, LL Sq, LL Sk, LL D, const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v,
               const KV& kvh, const Score& score, const Keep& keep, std::vector<double>& wo, std::vector<double>& wl) {
  wo.assign(H * Sq * D, 0.0), wl.assign(H * Sq, 0.0);
  for (LL h = 0; h < H; ++h) {
    const LL c = kvh(h);
    attend(Sq, Sk, D, [&](LL i, LL j) { return score(h, i, j, dot(q, (h * Sq + i) * D, k, (c * Sk + j) * D, D)); },
           [&](LL i, LL j) { return keep(h, i, j); }, [&](LL j, LL d) { return val(v[(c * Sk + j) * D + d]); },
           wo.data() + h * Sq * D, wl.data() + h * Sq);
  }
}
// The plain score, scale q . k (scale as the kernel receives it).
auto scaled(float scale) {
  return [scale](LL, LL, LL, double d) { return d * double(scale); };
}
auto same_head() {
  return [](LL h) { return h; };
}
auto group_of(LL G) {
  return [G](LL h) { return h / G; };
}
auto all_keys() {
  return [](LL, LL, LL) { return true; };
}

// ================================================================ single-GPU attention ==

// One single-GPU case: q [H, Sq, D] and k, v [Hk, Sk, D] of T (2-D [S, D] tensors and a 1-D lse when
// two_d), o poisoned and lse ([H, Sq, 1], or none when !with_lse) poisoned; launch(q, k, v, o, lse) runs the
// kernel (twice: it must give the same); the reference as `reference` gives it.
template <class T, class Launch, class KV, class Score, class Keep>
void attention_case(const Run& r, const std::string& kn, const std::string& what, LL H, LL Hk, LL Sq, LL Sk, LL D,
                    bool with_lse, bool two_d, unsigned seed, const Launch& launch, const KV& kvh, const Score& score,
                    const Keep& keep, double o_extra = 0, double l_extra = 0) {
  const auto q = rnd<T>(H * Sq * D, seed, -2.f, 2.f), k = rnd<T>(Hk * Sk * D, seed + 1, -2.f, 2.f),
             v = rnd<T>(Hk * Sk * D, seed + 2);
  auto shape = [&](LL h, LL s, LL d) { return two_d ? std::vector<LL>{s, d} : std::vector<LL>{h, s, d}; };
  DevLocal<T> qd(shape(H, Sq, D), q), kd(shape(Hk, Sk, D), k), vd(shape(Hk, Sk, D), v), o(shape(H, Sq, D), {});
  DevLocal<float> lse(two_d ? std::vector<LL>{Sq} : std::vector<LL>{H, Sq, 1}, {});
  const int before = begin_case(r);
  if (launch(qd.view(), kd.view(), vd.view(), o.view(), lse.view())) {
    std::vector<double> wo, wl;
    reference(H, Sq, Sk, D, q, k, v, kvh, score, keep, wo, wl);
    check(r, kn + ".o", o.download(), [&](LL i) { return wo[i]; }, o_tol<T>(wo, 0, o_extra));
    if (with_lse) check(r, kn + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl, l_extra));
  }
  end_case(r, kn + " " + what, before);
}

// prefill_offset_window_d64: queries are the last Sq of Sk positions (past = Sk - Sq); row i sees keys
// i + past - window < j <= i + past. d64 bf16, lse [H, Sq, 1].
void prefill_offset_window(const Run& r, const std::string& kn, LL H, LL Sq, LL Sk, LL window, unsigned seed) {
  const LL past = Sk - Sq;
  const float scale = 0.125f;
  attention_case<bf16>(
      r, kn, dims({H, Sq, Sk, window}) + " past " + std::to_string(past), H, H, Sq, Sk, 64, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, window, scale);
      },
      same_head(), scaled(scale), [&](LL, LL i, LL j) { return j <= i + past && j > i + past - window; });
}

// decode_window_d64: one query row (position Sk - 1) sees keys Sk - window <= j < Sk. d64 bf16, lse [H, 1, 1].
void decode_window(const Run& r, const std::string& kn, LL H, LL Sk, LL window, unsigned seed) {
  const float scale = 0.125f;
  attention_case<bf16>(
      r, kn, dims({H, Sk, window}) + " past " + std::to_string(Sk - 1), H, H, 1, Sk, 64, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, window, scale);
      },
      same_head(), scaled(scale), [&](LL, LL, LL j) { return j >= Sk - window; });
}

// gqa_g3_window_d128: K/V head h / group, keys i - window < j <= i. d128 bf16, lse.
void gqa_g3_window(const Run& r, const std::string& kn, LL Hq, LL Hk, LL S, LL window, unsigned seed) {
  const LL G = Hq / Hk;
  const float scale = 0.088388f;
  attention_case<bf16>(
      r, kn, dims({Hq, Hk, S, window}), Hq, Hk, S, S, 128, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, G, window, scale);
      },
      group_of(G), scaled(scale), [&](LL, LL i, LL j) { return j <= i && j > i - window; });
}

// gqa_sizes_causal_d128: G = Hq / Hk from the sizes, causal. d128 bf16, lse.
void gqa_sizes_causal(const Run& r, LL Hq, LL Hk, LL S, unsigned seed) {
  const std::string kn = "gqa_sizes_causal_d128";
  const float scale = 0.088388f;
  attention_case<bf16>(
      r, kn, dims({Hq, Hk, S}), Hq, Hk, S, S, 128, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, scale);
      },
      group_of(Hq / Hk), scaled(scale), [](LL, LL i, LL j) { return j <= i; });
}

// attention_from_packed_qkv_d64: q [H, S, 64] and packed qkv [3H, S, 64] (its first H heads random and
// unread), K at head H + h and V at 2H + h of it; causal, d64 bf16, lse.
void packed_qkv(const Run& r, const std::string& kn, LL H, LL S, unsigned seed) {
  const float scale = 0.125f;
  const LL D = 64, head = S * D;
  const auto q = rnd<bf16>(H * head, seed, -2.f, 2.f), qkv = rnd<bf16>(3 * H * head, seed + 1, -2.f, 2.f);
  const std::vector<bf16> k(qkv.begin() + H * head, qkv.begin() + 2 * H * head), v(qkv.begin() + 2 * H * head, qkv.end());
  DevLocal<bf16> qd({H, S, D}, q), kvd({3 * H, S, D}, qkv), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kvd.view(), o.view(), lse.view(), scale)) {
    std::vector<double> wo, wl;
    reference(H, S, S, D, q, k, v, same_head(), scaled(scale), [](LL, LL i, LL j) { return j <= i; }, wo, wl);
    check(r, kn + ".o", o.download(), [&](LL i) { return wo[i]; }, o_tol<bf16>(wo));
    check(r, kn + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, kn + " " + dims({H, S}), before);
}

// softcap_causal_d128: s = tanh(scale q.k / cap) cap, causal. d128 bf16, lse.
void softcap_causal(const Run& r, LL H, LL S, float cap, unsigned seed) {
  const std::string kn = "softcap_causal_d128";
  const float scale = 0.088388f;
  const double ds = double(cap) * 1e-3;
  attention_case<bf16>(
      r, kn, dims({H, S}) + " cap " + std::to_string(cap), H, H, S, S, 128, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, scale, cap);
      },
      same_head(), [&](LL, LL, LL, double d) { return std::tanh(d * double(scale) / double(cap)) * double(cap); },
      [](LL, LL i, LL j) { return j <= i; }, 2 * ds, ds);
}

// softcap_window_gqa_f16_d64: s = tanh(scale q[h].k[h / G] / cap) cap for i - window < j <= i; G = Hq / Hk;
// f16, no lse.
void softcap_window_gqa(const Run& r, LL Hq, LL Hk, LL S, LL window, float cap, unsigned seed) {
  const std::string kn = "softcap_window_gqa_f16_d64";
  const float scale = 0.125f;
  const double ds = double(cap) * 1e-3;
  attention_case<f16>(
      r, kn, dims({Hq, Hk, S, window}) + " cap " + std::to_string(cap), Hq, Hk, S, S, 64, false, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto&) {
        return run(r, kn, 2, q, k, v, o, window, scale, cap);
      },
      group_of(Hq / Hk), [&](LL, LL, LL, double d) { return std::tanh(d * double(scale) / double(cap)) * double(cap); },
      [&](LL, LL i, LL j) { return j <= i && j > i - window; }, 2 * ds, ds);
}

// alibi_causal_d64: s = scale q.k - (i - j) 2^(-8 (h + 1) / H), causal. d64 bf16, lse.
void alibi_causal(const Run& r, LL H, LL S, unsigned seed) {
  const std::string kn = "alibi_causal_d64";
  const float scale = 0.125f;
  attention_case<bf16>(
      r, kn, dims({H, S}), H, H, S, S, 64, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, scale);
      },
      same_head(),
      [&](LL h, LL i, LL j, double d) { return d * double(scale) - double(i - j) * std::pow(2.0, -8.0 * double(h + 1) / double(H)); },
      [](LL, LL i, LL j) { return j <= i; });
}

// cross_attention_d64: q [H, Sq, 64] against k, v [H, Sk, 64], every key. bf16, lse.
void cross_attention(const Run& r, LL H, LL Sq, LL Sk, unsigned seed) {
  const std::string kn = "cross_attention_d64";
  const float scale = 0.125f;
  attention_case<bf16>(
      r, kn, dims({H, Sq, Sk}), H, H, Sq, Sk, 64, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, scale);
      },
      same_head(), scaled(scale), all_keys());
}

// cross_attention_kvlen_f16_d128: only keys j < kv_len count. f16, lse.
void cross_attention_kvlen(const Run& r, LL H, LL Sq, LL Sk, LL kv_len, unsigned seed) {
  const std::string kn = "cross_attention_kvlen_f16_d128";
  const float scale = 0.088388f;
  attention_case<f16>(
      r, kn, dims({H, Sq, Sk, kv_len}), H, H, Sq, Sk, 128, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, kv_len, scale);
      },
      same_head(), scaled(scale), [&](LL, LL, LL j) { return j < kv_len; });
}

// prefill_offset_causal_d128: past = Sk - Sq, row i sees keys j <= i + past. d128 bf16, lse.
void prefill_offset_causal(const Run& r, const std::string& kn, LL H, LL Sq, LL Sk, unsigned seed) {
  const LL past = Sk - Sq;
  const float scale = 0.088388f;
  attention_case<bf16>(
      r, kn, dims({H, Sq, Sk}), H, H, Sq, Sk, 128, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, scale);
      },
      same_head(), scaled(scale), [&](LL, LL i, LL j) { return j <= i + past; });
}

// decode_one_row_gqa_d128: q [Hq, 1, 128] against the cache k, v [Hk, Sk, 128], K/V head h / group. bf16, lse.
void decode_one_row_gqa(const Run& r, LL Hq, LL Hk, LL Sk, unsigned seed) {
  const std::string kn = "decode_one_row_gqa_d128";
  const LL G = Hq / Hk;
  const float scale = 0.088388f;
  attention_case<bf16>(
      r, kn, dims({Hq, Hk, Sk}), Hq, Hk, 1, Sk, 128, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, G, scale);
      },
      group_of(G), scaled(scale), all_keys());
}

// swa_distance_lse1d_d64: one head, [S, 64] tensors, keys i - window < j <= i, lse [S].
void swa_distance_lse1d(const Run& r, LL S, LL window, unsigned seed) {
  const std::string kn = "swa_distance_lse1d_d64";
  const float scale = 0.125f;
  attention_case<bf16>(
      r, kn, dims({S, window}), 1, 1, S, S, 64, true, true, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, window, scale);
      },
      same_head(), scaled(scale), [&](LL, LL i, LL j) { return j <= i && i - j < window; });
}

// chunked_local_causal_d128: keys j <= i with j / chunk == i / chunk. d128 bf16, lse.
void chunked_local_causal(const Run& r, LL H, LL S, LL chunk, unsigned seed) {
  const std::string kn = "chunked_local_causal_d128";
  const float scale = 0.088388f;
  attention_case<bf16>(
      r, kn, dims({H, S, chunk}), H, H, S, S, 128, true, false, seed,
      [&](const auto& q, const auto& k, const auto& v, const auto& o, const auto& lse) {
        return run(r, kn, 2, q, k, v, o, lse, chunk, scale);
      },
      same_head(), scaled(scale), [&](LL, LL i, LL j) { return j <= i && j / chunk == i / chunk; });
}

// ================================================================ ring attention (multi-rank) ==

// A ring kernel (ring_striped_causal_gqa_f16_d64, ring_zigzag_causal_d128, ring_contig_causal_k128_d64,
// ring_full_f16_k32_d128): every rank holds S rows; pos(p, t) is the global position of rank p's row t,
// the same for its queries and its keys. Global q, K, V [*, W S, D] are drawn once (the same on every
// rank); rank p's q [H, S, D] and slot 0 of kr, vr [2 Hk, S, D] are its rows, slot 1 is NaN (the previous
// rank's send fills it before it is read). The reference: rank me's queries against all W S keys of K/V
// head h / G (G = H / Hk, an argument when group_arg), key position pj visible to query position pi when
// pj <= pi (causal) or always. One launch (step 2 overwrites slot 0 for W >= 3).
template <class T>
void ring_case(const Run& r, const std::string& kn, LL H, LL Hk, LL S, LL D, bool group_arg, bool causal,
               const std::function<LL(int, LL)>& pos, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL N = W * S, G = H / Hk;
  const float scale = D == 64 ? 0.125f : 0.088388f;
  const auto qg = rnd<T>(H * N * D, seed, -2.f, 2.f), kg = rnd<T>(Hk * N * D, seed + 1, -2.f, 2.f),
             vg = rnd<T>(Hk * N * D, seed + 2);
  std::vector<T> q(H * S * D), ks(2 * Hk * S * D, pkt::from_host<T>(kNaNf)), vs(2 * Hk * S * D, pkt::from_host<T>(kNaNf));
  for (LL t = 0; t < S; ++t) {
    const LL g = pos(me, t);
    for (LL d = 0; d < D; ++d) {
      for (LL h = 0; h < H; ++h) q[(h * S + t) * D + d] = qg[(h * N + g) * D + d];
      for (LL c = 0; c < Hk; ++c) ks[(c * S + t) * D + d] = kg[(c * N + g) * D + d], vs[(c * S + t) * D + d] = vg[(c * N + g) * D + d];
    }
  }
  SymArg<T> kr(r.ctx, {2 * Hk, S, D}, &ks), vr(r.ctx, {2 * Hk, S, D}, &vs);
  DevLocal<T> qd({H, S, D}, q), o({H, S, D}, {}), op({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {}), lp({H, S, 1}, {});
  const int before = begin_case(r);
  const bool ok = group_arg ? run(r, kn, 1, qd.view(), kr.view, vr.view, o.view(), lse.view(), op.view(), lp.view(), G, scale)
                            : run(r, kn, 1, qd.view(), kr.view, vr.view, o.view(), lse.view(), op.view(), lp.view(), scale);
  if (ok) {
    std::vector<double> wo, wl;
    reference(H, S, N, D, q, kg, vg, group_of(G), scaled(scale),
              [&](LL, LL i, LL j) { return !causal || j <= pos(me, i); }, wo, wl);
    check(r, kn + ".o", o.download(), [&](LL i) { return wo[i]; }, o_tol<T>(wo, W - 1));
    check(r, kn + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, kn + " " + dims({H, Hk, S}), before);
}

// ring_striped_causal_gqa_f16_d64: rank r's row t is position t W + r; G an argument.
void ring_striped(const Run& r, LL H, LL Hk, LL S, unsigned seed) {
  const int W = r.W;
  ring_case<f16>(r, "ring_striped_causal_gqa_f16_d64", H, Hk, S, 64, true, true,
                 [W](int p, LL t) { return t * W + p; }, seed);
}
// ring_striped_causal_gqa_sizes_f16_d64: the same, G written from the sizes (H / (kr.dim(0) / 2)).
void ring_striped_sizes(const Run& r, LL H, LL Hk, LL S, unsigned seed) {
  const int W = r.W;
  ring_case<f16>(r, "ring_striped_causal_gqa_sizes_f16_d64", H, Hk, S, 64, false, true,
                 [W](int p, LL t) { return t * W + p; }, seed);
}
// ring_zigzag_causal_d128: S = 2C rows, chunks r and 2W-1-r: row t at t + r C (t < C), t + (2W - 2 - r) C.
void ring_zigzag(const Run& r, LL H, LL C, unsigned seed) {
  const int W = r.W;
  ring_case<bf16>(r, "ring_zigzag_causal_d128", H, H, 2 * C, 128, false, true,
                  [W, C](int p, LL t) { return t < C ? t + p * C : t + (2 * W - 2 - p) * C; }, seed);
}
// ring_contig_causal_k128_d64: rank r holds positions r S .. r S + S - 1.
void ring_contig(const Run& r, LL H, LL S, unsigned seed) {
  ring_case<bf16>(r, "ring_contig_causal_k128_d64", H, H, S, 64, false, true, [S](int p, LL t) { return p * S + t; }, seed);
}
// ring_full_f16_k32_d128: not causal (positions contiguous, unused by the mask).
void ring_full(const Run& r, LL H, LL S, unsigned seed) {
  ring_case<f16>(r, "ring_full_f16_k32_d128", H, H, S, 128, false, false, [S](int p, LL t) { return p * S + t; }, seed);
}

// ================================================================ Ulysses (multi-rank) ==

// ulysses_gqa_causal_d128 (bf16, d128, GQA from the sizes, causal) and ulysses_window_f16_d64 (f16, d64,
// G = 1, keys i - window < j <= i): global q [Hq, S, D], k, v [Hk, S, D] with S = W Sl, rank p holding rows
// p Sl .. of every head (Sym, uploaded); qh, kh, vh, oh [H*/W, S, D] Sym and o [Hq, Sl, D] poisoned. Rank
// me checks o (its rows of every head), oh and lse [Hq/W, S, 1] (its heads r Hq/W .., every row).
template <class T>
void ulysses_case(const Run& r, const std::string& kn, LL Hq, LL Hk, LL Sl, LL D, LL window, unsigned seed) {
  const int W = r.W, me = r.me;
  const LL S = W * Sl, G = Hq / Hk, Hl = Hq / W, Hkl = Hk / W;
  const float scale = D == 64 ? 0.125f : 0.088388f;
  const auto qg = rnd<T>(Hq * S * D, seed, -2.f, 2.f), kg = rnd<T>(Hk * S * D, seed + 1, -2.f, 2.f),
             vg = rnd<T>(Hk * S * D, seed + 2);
  auto rows = [&](const std::vector<T>& g, LL heads) {  // rank me's rows of every head
    std::vector<T> x(heads * Sl * D);
    for (LL h = 0; h < heads; ++h)
      std::copy(g.begin() + (h * S + me * Sl) * D, g.begin() + (h * S + me * Sl + Sl) * D, x.begin() + h * Sl * D);
    return x;
  };
  const auto ql = rows(qg, Hq), kl = rows(kg, Hk), vl = rows(vg, Hk);
  SymArg<T> qd(r.ctx, {Hq, Sl, D}, &ql), kd(r.ctx, {Hk, Sl, D}, &kl), vd(r.ctx, {Hk, Sl, D}, &vl),
      o(r.ctx, {Hq, Sl, D}, nullptr), qh(r.ctx, {Hl, S, D}, nullptr), kh(r.ctx, {Hkl, S, D}, nullptr),
      vh(r.ctx, {Hkl, S, D}, nullptr), oh(r.ctx, {Hl, S, D}, nullptr);
  DevLocal<float> lse({Hl, S, 1}, {});
  const int before = begin_case(r);
  const bool ok =
      window > 0 ? run(r, kn, 2, qd.view, kd.view, vd.view, o.view, qh.view, kh.view, vh.view, oh.view, lse.view(), window, scale)
                 : run(r, kn, 2, qd.view, kd.view, vd.view, o.view, qh.view, kh.view, vh.view, oh.view, lse.view(), scale);
  if (ok) {
    std::vector<double> wo, wl;
    reference(Hq, S, S, D, qg, kg, vg, group_of(G), scaled(scale),
              [&](LL, LL i, LL j) { return j <= i && (window <= 0 || j > i - window); }, wo, wl);
    check(r, kn + ".o", o.download(), [&](LL x) { return wo[((x / (Sl * D)) * S + me * Sl) * D + x % (Sl * D)]; },
          [&, tol = o_tol<T>(wo)](LL x) { return tol(((x / (Sl * D)) * S + me * Sl) * D + x % (Sl * D)); });
    const LL mine = me * Hl * S * D;  // rank me's heads in wo, wl
    check(r, kn + ".oh", oh.download(), [&](LL x) { return wo[mine + x]; },
          [&, tol = o_tol<T>(wo)](LL x) { return tol(mine + x); });
    check(r, kn + ".lse", lse.download(), [&](LL x) { return wl[me * Hl * S + x]; },
          [&, tol = lse_tol(wl)](LL x) { return tol(me * Hl * S + x); });
  }
  end_case(r, kn + " " + dims({Hq, Hk, Sl}) + (window > 0 ? " window " + std::to_string(window) : ""), before);
}

// ================================================================ context parallelism (multi-rank) ==

// cp_allgather_kv_causal_gqa_d128: rank p holds rows p S .. of every head: q [H, S, 128] local, k, v [Hk, S,
// 128] Sym; kf, vf [Hk, W S, 128] (checked exactly: the all-gather), o, lse poisoned. Query i of rank me is
// position me S + i and sees keys t <= me S + i of K/V head h / group.
void cp_allgather_causal(const Run& r, LL H, LL Hk, LL S, unsigned seed) {
  const std::string kn = "cp_allgather_kv_causal_gqa_d128";
  const int W = r.W, me = r.me;
  const LL D = 128, N = W * S, G = H / Hk;
  const float scale = 0.088388f;
  const auto kg = rnd<bf16>(Hk * N * D, seed, -2.f, 2.f), vg = rnd<bf16>(Hk * N * D, seed + 1);
  const auto q = rnd<bf16>(H * S * D, seed + 10 + me, -2.f, 2.f);
  std::vector<bf16> kl(Hk * S * D), vl(Hk * S * D);
  for (LL c = 0; c < Hk; ++c)
    for (LL x = 0; x < S * D; ++x) kl[c * S * D + x] = kg[(c * N + me * S) * D + x], vl[c * S * D + x] = vg[(c * N + me * S) * D + x];
  SymArg<bf16> kd(r.ctx, {Hk, S, D}, &kl), vd(r.ctx, {Hk, S, D}, &vl);
  DevLocal<bf16> qd({H, S, D}, q), kf({Hk, N, D}, {}), vf({Hk, N, D}, {}), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view, vd.view, kf.view(), vf.view(), o.view(), lse.view(), G, scale)) {
    check(r, kn + ".kf", kf.download(), [&](LL x) { return val(kg[x]); }, exact());
    check(r, kn + ".vf", vf.download(), [&](LL x) { return val(vg[x]); }, exact());
    std::vector<double> wo, wl;
    reference(H, S, N, D, q, kg, vg, group_of(G), scaled(scale), [&](LL, LL i, LL j) { return j <= me * S + i; }, wo, wl);
    check(r, kn + ".o", o.download(), [&](LL i) { return wo[i]; }, o_tol<bf16>(wo));
    check(r, kn + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, kn + " " + dims({H, Hk, S}), before);
}

// sp_decode_allgather_merge_d64: q [H, 1, 64] the same on every rank, rank p's cache k, v [H, Sl, 64] the
// keys p Sl .. of the whole [H, W Sl, 64]. op [H, 1, 64] and lp [H, 1, 1] (Sym) are this rank's partial;
// opa [W H, 1, 64] and lpa [W H, 1, 1] every rank's (block p from rank p); o, lse the attention over all W
// Sl keys (the bf16 partials merged: one rounding feeds o).
void sp_decode_merge(const Run& r, LL H, LL Sl, unsigned seed) {
  const std::string kn = "sp_decode_allgather_merge_d64";
  const int W = r.W, me = r.me;
  const LL D = 64, N = W * Sl;
  const float scale = 0.125f;
  const auto q = rnd<bf16>(H * D, seed, -2.f, 2.f), kg = rnd<bf16>(H * N * D, seed + 1, -2.f, 2.f),
             vg = rnd<bf16>(H * N * D, seed + 2);
  // Rank p's cache, [H, Sl, D].
  auto cache = [&](const std::vector<bf16>& g, int p) {
    std::vector<bf16> x(H * Sl * D);
    for (LL h = 0; h < H; ++h)
      std::copy(g.begin() + (h * N + p * Sl) * D, g.begin() + (h * N + p * Sl + Sl) * D, x.begin() + h * Sl * D);
    return x;
  };
  const auto kl = cache(kg, me), vl = cache(vg, me);
  DevLocal<bf16> qd({H, 1, D}, q), kd({H, Sl, D}, kl), vd({H, Sl, D}, vl), opa({W * H, 1, D}, {}), o({H, 1, D}, {});
  SymArg<bf16> op(r.ctx, {H, 1, D}, nullptr);
  SymArg<float> lp(r.ctx, {H, 1, 1}, nullptr);
  DevLocal<float> lpa({W * H, 1, 1}, {}), lse({H, 1, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view(), vd.view(), op.view, lp.view, opa.view(), lpa.view(), o.view(), lse.view(), scale)) {
    // Every rank's partial, then the whole.
    std::vector<double> po(W * H * D), pl(W * H), wo, wl;
    for (int p = 0; p < W; ++p) {
      std::vector<double> a, b;
      reference(H, 1, Sl, D, q, cache(kg, p), cache(vg, p), same_head(), scaled(scale), all_keys(), a, b);
      std::copy(a.begin(), a.end(), po.begin() + p * H * D), std::copy(b.begin(), b.end(), pl.begin() + p * H);
    }
    reference(H, 1, N, D, q, kg, vg, same_head(), scaled(scale), all_keys(), wo, wl);
    const std::vector<double> mo(po.begin() + me * H * D, po.begin() + (me + 1) * H * D),
        ml(pl.begin() + me * H, pl.begin() + (me + 1) * H);
    check(r, kn + ".op", op.download(), [&](LL i) { return mo[i]; }, o_tol<bf16>(mo));
    check(r, kn + ".lp", lp.download(), [&](LL i) { return ml[i]; }, lse_tol(ml));
    check(r, kn + ".opa", opa.download(), [&](LL i) { return po[i]; }, o_tol<bf16>(po));
    check(r, kn + ".lpa", lpa.download(), [&](LL i) { return pl[i]; }, lse_tol(pl));
    check(r, kn + ".o", o.download(), [&](LL i) { return wo[i]; }, o_tol<bf16>(wo, 1));
    check(r, kn + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, kn + " " + dims({H, Sl}), before);
}

// sp_pull_kv_attention_d64: rank p's k, v [H, S, 64] (Sym) are rows p S .. of the whole [H, W S, 64]; kf, vf
// the whole (checked exactly: the pulls); o, lse: rank me's q [H, S, 64] against every key, not causal.
void sp_pull_attention(const Run& r, LL H, LL S, unsigned seed) {
  const std::string kn = "sp_pull_kv_attention_d64";
  const int W = r.W, me = r.me;
  const LL D = 64, N = W * S;
  const float scale = 0.125f;
  const auto kg = rnd<bf16>(H * N * D, seed, -2.f, 2.f), vg = rnd<bf16>(H * N * D, seed + 1);
  const auto q = rnd<bf16>(H * S * D, seed + 10 + me, -2.f, 2.f);
  std::vector<bf16> kl(H * S * D), vl(H * S * D);
  for (LL h = 0; h < H; ++h)
    for (LL x = 0; x < S * D; ++x) kl[h * S * D + x] = kg[(h * N + me * S) * D + x], vl[h * S * D + x] = vg[(h * N + me * S) * D + x];
  SymArg<bf16> kd(r.ctx, {H, S, D}, &kl), vd(r.ctx, {H, S, D}, &vl);
  DevLocal<bf16> qd({H, S, D}, q), kf({H, N, D}, {}), vf({H, N, D}, {}), o({H, S, D}, {});
  DevLocal<float> lse({H, S, 1}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, qd.view(), kd.view, vd.view, kf.view(), vf.view(), o.view(), lse.view(), scale)) {
    check(r, kn + ".kf", kf.download(), [&](LL x) { return val(kg[x]); }, exact());
    check(r, kn + ".vf", vf.download(), [&](LL x) { return val(vg[x]); }, exact());
    std::vector<double> wo, wl;
    reference(H, S, N, D, q, kg, vg, same_head(), scaled(scale), all_keys(), wo, wl);
    check(r, kn + ".o", o.download(), [&](LL i) { return wo[i]; }, o_tol<bf16>(wo));
    check(r, kn + ".lse", lse.download(), [&](LL i) { return wl[i]; }, lse_tol(wl));
  }
  end_case(r, kn + " " + dims({H, S}), before);
}

void single_gpu_cases(const Run& r) {
  unsigned s = 100;
  for (const char* k : {"prefill_offset_window_d64", "prefill_offset_window_d64/general"}) {
    prefill_offset_window(r, k, 3, 70, 333, 20, s += 100);   // past 263 >= window (refused at launch before)
    prefill_offset_window(r, k, 2, 130, 200, 64, s += 100);  // past 70 >= window, window one key tile
    prefill_offset_window(r, k, 2, 70, 200, 1, s += 100);    // window 1: each row its own key j = i + past
    prefill_offset_window(r, k, 2, 100, 130, 50, s += 100);  // past 30 < window
    prefill_offset_window(r, k, 2, 300, 320, 40, s += 100);  // past 20 < window: key steps skipped below
    prefill_offset_window(r, k, 1, 37, 37, 16, s += 100);    // past 0
    prefill_offset_window(r, k, 2, 64, 150, 1000, s += 100); // a window wider than the cache
  }
  for (const char* k : {"decode_window_d64", "decode_window_d64/general"}) {
    decode_window(r, k, 3, 300, 100, s += 100);  // past 299 >= window (refused at launch before)
    decode_window(r, k, 4, 1000, 64, s += 100);  // past 999 >= window
    decode_window(r, k, 2, 200, 1, s += 100);    // window 1: o = v[Sk - 1]
    decode_window(r, k, 3, 50, 100, s += 100);   // past 49 < window
    decode_window(r, k, 2, 1, 1, s += 100);      // one key
  }
  for (const char* k : {"gqa_g3_window_d128", "gqa_g3_window_d128/general"}) {
    gqa_g3_window(r, k, 6, 2, 333, 40, s += 100);  // key steps skipped below the window
    gqa_g3_window(r, k, 3, 1, 37, 100, s += 100);
  }
  for (const char* k : {"prefill_offset_causal_d128", "prefill_offset_causal_d128/general"}) {
    prefill_offset_causal(r, k, 2, 70, 200, s += 100);
    prefill_offset_causal(r, k, 2, 37, 37, s += 100);
    prefill_offset_causal(r, k, 1, 1, 100, s += 100);
  }
  for (const char* k : {"attention_from_packed_qkv_d64", "attention_from_packed_qkv_d64/general"}) {
    packed_qkv(r, k, 3, 200, s += 100);
    packed_qkv(r, k, 1, 37, s += 100);
  }
  gqa_sizes_causal(r, 6, 2, 100, s += 100);
  gqa_sizes_causal(r, 4, 1, 37, s += 100);
  softcap_causal(r, 2, 130, 2.f, s += 100);
  softcap_causal(r, 1, 70, 0.5f, s += 100);
  softcap_window_gqa(r, 4, 2, 100, 33, 1.5f, s += 100);
  softcap_window_gqa(r, 2, 2, 37, 1, 1.5f, s += 100);
  alibi_causal(r, 4, 100, s += 100);
  alibi_causal(r, 3, 200, s += 100);
  cross_attention(r, 2, 77, 300, s += 100);
  cross_attention(r, 3, 130, 37, s += 100);
  cross_attention(r, 1, 1, 100, s += 100);
  cross_attention_kvlen(r, 2, 50, 200, 133, s += 100);
  cross_attention_kvlen(r, 1, 64, 64, 1, s += 100);
  decode_one_row_gqa(r, 8, 2, 300, s += 100);
  decode_one_row_gqa(r, 3, 3, 1, s += 100);
  swa_distance_lse1d(r, 300, 30, s += 100);
  swa_distance_lse1d(r, 37, 1, s += 100);
  chunked_local_causal(r, 2, 200, 48, s += 100);
  chunked_local_causal(r, 1, 100, 7, s += 100);
}

void multi_rank_cases(const Run& r) {
  unsigned s = 9000;
  const int W = r.W;
  ring_striped(r, 4, 2, 50, s += 100);
  ring_striped(r, 2, 1, 1, s += 100);  // one row per rank
  ring_striped_sizes(r, 6, 2, 50, s += 100);  // G = 3 from the sizes
  ring_zigzag(r, 2, 37, s += 100);
  ring_contig(r, 2, 100, s += 100);
  ring_contig(r, 1, 150, s += 100);
  ring_full(r, 2, 77, s += 100);
  // Ulysses: the heads scale with W (Hq and Hk multiples of W).
  ulysses_case<bf16>(r, "ulysses_gqa_causal_d128", 2 * W, W, 37, 128, 0, s += 100);
  ulysses_case<bf16>(r, "ulysses_gqa_causal_d128", 3 * W, W, 50, 128, 0, s += 100);
  ulysses_case<f16>(r, "ulysses_window_f16_d64", 2 * W, 2 * W, 50, 64, 30, s += 100);
  ulysses_case<f16>(r, "ulysses_window_f16_d64", W, W, 70, 64, 1, s += 100);
  cp_allgather_causal(r, 4, 2, 70, s += 100);
  sp_decode_merge(r, 3, 100, s += 100);
  sp_decode_merge(r, 2, 1, s += 100);
  sp_pull_attention(r, 2, 45, s += 100);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_all()) return pkt::finish("user_specs21_jit_test");
  // The multi-rank kernels at W = 1, 2, 3 and 4 (run_worlds stops at 3 unless a list is given; one given
  // in the environment wins).
  setenv("PK_TEST_WORLDS", "2 3 4", 0);
  // The single-GPU kernels at W = 1 only.
  return run_worlds("user_specs21_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) single_gpu_cases(r);
    multi_rank_cases(r);
  });
}

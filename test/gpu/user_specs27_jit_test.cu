// The twenty-seventh user-written spec set (test/specs/user_specs27.pk.cpp: the 8-bit integer type i8 with every
// other construct: block, tensor and asymmetric int8 quantisation, rounding modes, casts at their saturation edges,
// dequantise + norms, int8 KV caches by slot and by block table, int8 embeddings, scatters, a quantised MoE
// dispatch, int4 packing, shifts and wrapping edges, int8 masks and selects, transpose, 3-D and 1-D tiles, int8
// GEMMs, and int8 communication) through the JIT, each kernel against a host reference written from its comment
// (exact for every integer result, float64 with the bounds below otherwise) on fresh random inputs, with every
// output poisoned first (0xFF bytes: NaN for floats, -1 for i8 / i32 / i64; i8 results are checked element by
// element, so a kernel that left outputs unwritten fails at every element not meant to be -1). Single-GPU kernels
// run at W = 1; the kernels that use ranks, peers or collectives at W = 1, 2 and 3 (ranks sharing one GPU;
// PK_TEST_WORLDS or PK_SHARED_GPU_RANKS choose others), each rank checking its own outputs. Shapes leave partial
// tiles in every tiled dimension (37 / 100 / 300 rows and columns against 16- to 128-wide tiles, K = 72 and 136
// against 32 and 64). Every kernel launches twice (a relaunch must give the same result) except i8_moe_dispatch,
// whose counters carry over (once).
//
// Not tested: the probes (user_specs27_probes.pk.cpp): they reproduce findings, not kernels of the set.
//
// Bounds: quantised levels q = sat8(rne(v)): the device forms v in fp32 (a reciprocal product, or an fp32 GEMM sum),
// so where v lies within tol(v) of a half-way point either neighbour is accepted, elsewhere exactly the float64
// level (qcheck); scales 1e-6 relative; bf16 outputs two units in the last place (kBf) plus the fp32 bound of their
// inputs; fp32 sums 1e-5 of the sum of the terms' magnitudes; softmax 2e-5 relative.
#include <pk/jit/compile.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
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
using pk::f8e4m3;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;
using i8 = signed char;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"i8_block_quant_128", false},     {"i8_per_tensor_quant", false},    {"i8_asym_quant_rows", false},
    {"i8_rounding_modes", false},      {"i8_cast_edges", false},          {"i8_dequant_rmsnorm_requant", false},
    {"i8_dequant_layernorm", false},   {"i8_kv_cache_write", false},      {"i8_kv_cache_gather", false},
    {"i8_embedding_i64_ids", false},   {"i8_scatter_rows_wrap", false},   {"i8_moe_dispatch", false},
    {"i8_int4_pack_unpack", false},    {"i8_shift_counts", false},        {"i8_wrap_edges", false},
    {"i8_saturating_add", false},      {"i8_zero_point_rows", false},     {"i8_scalar_offset_1d", false},
    {"i8_value_histogram", false},     {"i8_row_sums", false},            {"i8_masked_softmax", false},
    {"i8_selects", false},             {"i8_dropout_mask", false},        {"i8_topk_dequant", false},
    {"i8_transpose", false},           {"i8_3d_bias", false},             {"i8_dequant_groups_1d", false},
    {"i8_gemm_ab_layout", false},      {"i8_gemm_quant_epilogue", false}, {"i8_weight_only_bias", true},
    {"i8_dynamic_quant_gemm", false},  {"i8_grad_allgather_mean", false}, {"i8_all_gather_cols", false},
    {"i8_all_to_all_cols", false},     {"i8_all_to_all_heads", false},    {"i8_ring_shift", false},
    {"i8_pull_prev_xor", false},       {"i8_gather_rows_to_root", false}, {"i8_allreduce_requant", false},
    {"i8_rows_to_owners", false},
};
const std::vector<const char*> kGeneralToo = {"i8_weight_only_bias"};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs27", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}

// ---- host models ----
unsigned rs(unsigned seed, int p) { return seed + 7919u * unsigned(p + 1); }
std::vector<i8> bytes(LL n, unsigned seed) { return ints<i8>(n, -128, 127, seed); }
i8 wrap8(long long v) { return static_cast<i8>(static_cast<unsigned char>(static_cast<unsigned long long>(v) & 0xFF)); }
i8 sat8(double v) {  // toward zero, clamped, NaN 0 (cvt.rzi.sat)
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  return static_cast<i8>(std::max(-128.0, std::min(127.0, t)));
}
double kNaNd() { return std::numeric_limits<double>::quiet_NaN(); }
double fl(double x) { return static_cast<double>(static_cast<float>(x)); }

// Quantised levels: got[i] against sat8(rne(v(i))) (with `off` added before the saturation), either neighbour
// where v(i) lies within tol(i) of a half-way point.
template <class F, class T>
void qcheck(const Run& r, const std::string& what, const std::vector<i8>& got, F v, T tol, double off = 0) {
  LL bad = 0;
  for (LL i = 0; i < LL(got.size()); ++i) {
    const double x = v(i);
    if (std::isnan(x)) continue;  // not an element the kernel writes
    const double lo = std::nearbyint(x - tol(i)), hi = std::nearbyint(x + tol(i));
    const int g = got[i];
    bool ok = false;
    for (double c = lo; c <= hi; c += 1) ok |= g == sat8(c + off);
    if (!ok && bad++ < 3)
      pkt::fail(what + " W=" + std::to_string(r.W) + " element " + std::to_string(i) + ": got " + std::to_string(g) +
                ", want " + std::to_string(int(sat8(std::nearbyint(x) + off))) + " (value " + std::to_string(x) + ")");
  }
  if (bad > 3) pkt::fail(what + ": " + std::to_string(bad) + " elements wrong");
}
auto qtol(double e = 2e-6) { return [e](LL) { return e * 128 + 1e-9; }; }

// ---- quantisation ----
void block_quant(const Run& r, LL M, LL K, unsigned seed) {
  auto x = rnd<float>(M * K, seed, -4.f, 4.f);
  for (LL k = 0; k < K; ++k) x[3 * K + k] = 0.f;
  const LL B = (K + 127) / 128;
  DevLocal<float> xd({M, K}, x), s({M, B}, {});
  DevLocal<i8> q({M, K}, {});
  const int before = begin_case(r);
  if (run(r, "i8_block_quant_128", 2, xd.view(), q.view(), s.view())) {
    std::vector<double> a(M * B, 0);
    for (LL i = 0; i < M * K; ++i) a[i / K * B + i % K / 128] = std::max(a[i / K * B + i % K / 128], double(std::fabs(x[i])));
    for (auto& v : a) v = std::max(v, 1e-12);
    qcheck(r, "i8_block_quant_128.q", q.download(), [&](LL i) { return x[i] * 127.0 / a[i / K * B + i % K / 128]; }, qtol());
    check(r, "i8_block_quant_128.s", s.download(), [&](LL i) { return a[i] / 127; }, [&](LL i) { return 1e-6 * a[i]; });
  }
  end_case(r, "i8_block_quant_128 " + dims({M, K}), before);
}

void per_tensor_quant(const Run& r, LL M, LL K, unsigned seed) {
  const auto x = rnd<float>(M * K, seed, -3.f, 3.f);
  DevLocal<float> xd({M, K}, x), amax({M, 1}, {}), g({1, 1}, {});
  DevLocal<i8> q({M, K}, {});
  const int before = begin_case(r);
  if (run(r, "i8_per_tensor_quant", 2, xd.view(), amax.view(), g.view(), q.view())) {
    std::vector<double> a(M, 0);
    for (LL i = 0; i < M * K; ++i) a[i / K] = std::max(a[i / K], double(std::fabs(x[i])));
    const double G = std::max(*std::max_element(a.begin(), a.end()), 1e-12);
    check(r, "i8_per_tensor_quant.amax", amax.download(), [&](LL m) { return a[m]; }, exact());
    check(r, "i8_per_tensor_quant.g", g.download(), [&](LL) { return G; }, exact());
    qcheck(r, "i8_per_tensor_quant.q", q.download(), [&](LL i) { return x[i] * 127.0 / G; }, qtol());
  }
  end_case(r, "i8_per_tensor_quant " + dims({M, K}), before);
}

void asym_quant(const Run& r, LL M, LL K, unsigned seed) {
  const auto x = rnd<bf16>(M * K, seed, -2.f, 5.f);
  DevLocal<bf16> xd({M, K}, x);
  DevLocal<i8> q({M, K}, {});
  DevLocal<float> sz({M, 2}, {});
  const int before = begin_case(r);
  if (run(r, "i8_asym_quant_rows", 2, xd.view(), q.view(), sz.view())) {
    std::vector<double> lo(M, 1e300), hi(M, -1e300), sc(M);
    for (LL i = 0; i < M * K; ++i) lo[i / K] = std::min(lo[i / K], val(x[i])), hi[i / K] = std::max(hi[i / K], val(x[i]));
    for (LL m = 0; m < M; ++m) sc[m] = fl(fl(std::max(fl(hi[m] - lo[m]), 1e-8)) * fl(1.0 / 255.0));
    // v = (x - lo) / sc within 2 ulp (a reciprocal product): 255 * 2^-22 absolute.
    qcheck(r, "i8_asym_quant_rows.q", q.download(), [&](LL i) { return (val(x[i]) - lo[i / K]) / sc[i / K]; },
           [](LL) { return 1e-4; }, -128);
    check(r, "i8_asym_quant_rows.sz", sz.download(), [&](LL i) { return i % 2 ? lo[i / 2] : sc[i / 2]; },
          [&](LL i) { return 1e-6 * std::fabs(i % 2 ? lo[i / 2] : sc[i / 2]); });
  }
  end_case(r, "i8_asym_quant_rows " + dims({M, K}), before);
}

void rounding_modes(const Run& r, LL M, LL N, unsigned seed) {
  auto x = rnd<float>(M * N, seed, -200.f, 200.f);
  const float sp[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 127.5f, -127.5f, -128.5f, -129.f, NAN, INFINITY, -INFINITY, -0.f};
  for (int i = 0; i < 15; ++i) x[(11 * i + 2) % (M * N)] = sp[i];
  for (LL i = 100; i < 600; ++i) x[i] = std::floor(x[i]) + 0.5f;
  DevLocal<float> xd({M, N}, x);
  DevLocal<i8> up({M, N}, {}), ev({M, N}, {}), dn({M, N}, {}), tz({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_rounding_modes", 2, xd.view(), up.view(), ev.view(), dn.view(), tz.view())) {
    check(r, "i8_rounding_modes.up", up.download(), [&](LL i) { return sat8(std::floor(x[i] + 0.5f)); }, exact());
    check(r, "i8_rounding_modes.ev", ev.download(), [&](LL i) { return sat8(std::nearbyint(x[i])); }, exact());
    check(r, "i8_rounding_modes.dn", dn.download(), [&](LL i) { return sat8(std::ceil(x[i] - 0.5f)); }, exact());
    check(r, "i8_rounding_modes.tz", tz.download(), [&](LL i) { return sat8(x[i]); }, exact());
  }
  end_case(r, "i8_rounding_modes " + dims({M, N}), before);
}

void cast_edges(const Run& r, LL M, LL N, unsigned seed) {
  const LL n = M * N;
  auto h = rnd<f16>(n, seed, -300.f, 300.f);
  const float hs[] = {NAN, INFINITY, -INFINITY, 127.9f, -128.9f, 128.f, -129.f, 65504.f, -0.75f, 0.99f};
  for (int i = 0; i < 10; ++i) h[(7 * i + 1) % n] = pkt::from_host<f16>(hs[i]);
  auto e = rnd<f8e4m3>(n, seed + 1, -440.f, 440.f);
  const auto l = ints<long long>(n, LLONG_MIN, LLONG_MAX, seed + 2);
  const auto q = bytes(n, seed + 3);
  DevLocal<f16> hd({M, N}, h), q16({M, N}, {});
  DevLocal<f8e4m3> ed({M, N}, e), q8({M, N}, {});
  DevLocal<long long> ld({M, N}, l), q64({M, N}, {});
  DevLocal<i8> qd({M, N}, q), qh({M, N}, {}), qe({M, N}, {}), ql({M, N}, {});
  DevLocal<float> qf({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_cast_edges", 2, hd.view(), ed.view(), ld.view(), qd.view(), qh.view(), qe.view(), ql.view(), q16.view(),
          q8.view(), q64.view(), qf.view())) {
    check(r, "i8_cast_edges.qh", qh.download(), [&](LL i) { return sat8(val(h[i])); }, exact());
    check(r, "i8_cast_edges.qe", qe.download(), [&](LL i) { return sat8(val(e[i])); }, exact());
    check(r, "i8_cast_edges.ql", ql.download(), [&](LL i) { return wrap8(l[i]); }, exact());
    check(r, "i8_cast_edges.q16", q16.download(), [&](LL i) { return double(q[i]); }, exact());
    check(r, "i8_cast_edges.q8", q8.download(), [&](LL i) { return e4m3(q[i]); }, exact());
    const auto g64 = q64.download();
    LL bad = 0;
    for (LL i = 0; i < n; ++i) bad += g64[i] != q[i];
    if (bad) pkt::fail("i8_cast_edges.q64: " + std::to_string(bad) + " elements wrong");
    check(r, "i8_cast_edges.qf", qf.download(), [&](LL i) { return double(q[i]); }, exact());
  }
  end_case(r, "i8_cast_edges " + dims({M, N}), before);
}

void rmsnorm_requant(const Run& r, LL M, LL D, unsigned seed) {
  const auto q = bytes(M * D, seed);
  const auto s = rnd<float>(M, seed + 1, 1e-3f, 1e-2f);
  const auto w = rnd<bf16>(D, seed + 2, -2.f, 2.f);
  const float eps = 1e-6f;
  DevLocal<i8> qd({M, D}, q), out({M, D}, {});
  DevLocal<float> sd({M, 1}, s), os({M, 1}, {});
  DevLocal<bf16> wd({D}, w);
  const int before = begin_case(r);
  if (run(r, "i8_dequant_rmsnorm_requant", 2, qd.view(), sd.view(), wd.view(), out.view(), os.view(), eps)) {
    std::vector<double> y(M * D), a(M, 0);
    for (LL m = 0; m < M; ++m) {
      double ss = 0;
      for (LL j = 0; j < D; ++j) ss += std::pow(double(q[m * D + j]) * s[m], 2);
      const double inv = 1 / std::sqrt(ss / D + eps);
      for (LL j = 0; j < D; ++j) y[m * D + j] = double(q[m * D + j]) * s[m] * inv * val(w[j]), a[m] = std::max(a[m], std::fabs(y[m * D + j]));
      a[m] = std::max(a[m], 1e-12);
    }
    qcheck(r, "i8_dequant_rmsnorm_requant.out", out.download(), [&](LL i) { return y[i] * 127 / a[i / D]; }, qtol(2e-5));
    check(r, "i8_dequant_rmsnorm_requant.os", os.download(), [&](LL m) { return a[m] / 127; }, [&](LL m) { return 2e-5 * a[m]; });
  }
  end_case(r, "i8_dequant_rmsnorm_requant " + dims({M, D}), before);
}

void layernorm(const Run& r, LL M, LL D, unsigned seed) {
  const auto q = bytes(M * D, seed);
  const auto g = rnd<float>(D, seed + 1, 0.5f, 1.5f), b = rnd<float>(D, seed + 2, -1.f, 1.f);
  const float scale = 0.02f, eps = 1e-5f;
  DevLocal<i8> qd({M, D}, q);
  DevLocal<float> gd({D}, g), bd({D}, b);
  DevLocal<bf16> y({M, D}, {});
  const int before = begin_case(r);
  if (run(r, "i8_dequant_layernorm", 2, qd.view(), gd.view(), bd.view(), y.view(), scale, eps)) {
    std::vector<double> want(M * D), tol(M * D);
    for (LL m = 0; m < M; ++m) {
      double mu = 0, var = 0;
      for (LL j = 0; j < D; ++j) mu += double(q[m * D + j]) * scale;
      mu /= D;
      for (LL j = 0; j < D; ++j) var += std::pow(double(q[m * D + j]) * scale - mu, 2);
      const double inv = 1 / std::sqrt(var / D + eps);
      for (LL j = 0; j < D; ++j) {
        const double c = (double(q[m * D + j]) * scale - mu) * inv * g[j];
        want[m * D + j] = c + b[j];
        tol[m * D + j] = kBf * std::fabs(want[m * D + j]) + 1e-4 * (std::fabs(c) + 1) + 1e-6;
      }
    }
    check_vec(r, "i8_dequant_layernorm.y", y.download(), want, tol);
  }
  end_case(r, "i8_dequant_layernorm " + dims({M, D}), before);
}

// ---- caches, embeddings, scatters ----
void kv_cache_write(const Run& r, LL T, LL S, unsigned seed) {
  const LL D = 128;
  const auto k = rnd<bf16>(T * D, seed, -3.f, 3.f);
  std::vector<int> perm(S);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(seed));
  std::vector<int> slot(T);
  for (LL t = 0; t < T; ++t) slot[t] = t % 7 == 3 ? -1 : perm[t];
  DevLocal<bf16> kd({T, D}, k);
  DevLocal<int> sd({T}, slot);
  DevLocal<i8> kc({S, D}, {});
  DevLocal<float> ks({S, 1}, {});
  const int before = begin_case(r);
  if (run(r, "i8_kv_cache_write", 2, kd.view(), sd.view(), kc.view(), ks.view())) {
    std::vector<LL> tok(S, -1);
    std::vector<double> a(T, 0);
    for (LL t = 0; t < T; ++t) {
      if (slot[t] >= 0) tok[slot[t]] = t;
      for (LL j = 0; j < D; ++j) a[t] = std::max(a[t], std::fabs(val(k[t * D + j])));
      a[t] = std::max(a[t], 1e-6);
    }
    const auto gc = kc.download();
    qcheck(r, "i8_kv_cache_write.kc", gc,
           [&](LL i) { const LL t = tok[i / D]; return t < 0 ? kNaNd() : val(k[t * D + i % D]) * 127 / a[t]; }, qtol());
    LL untouched = 0;
    for (LL i = 0; i < S * D; ++i) untouched += tok[i / D] < 0 && gc[i] != -1;
    if (untouched) pkt::fail("i8_kv_cache_write.kc: " + std::to_string(untouched) + " elements of unused slots written");
    std::vector<double> ws(S);
    for (LL s = 0; s < S; ++s) ws[s] = tok[s] < 0 ? kNaNd() : a[tok[s]] / 127;
    check_or_poison(r, "i8_kv_cache_write.ks", ks.download(), ws, [&](LL s) { return 1e-6 * std::fabs(ws[s]); });
  }
  end_case(r, "i8_kv_cache_write " + dims({T, S}), before);
}

void kv_cache_gather(const Run& r, LL B, LL P, LL NB, LL D, unsigned seed) {
  const LL S = NB * 16;
  const auto kc = bytes(S * D, seed);
  const auto ks = rnd<float>(S, seed + 1, 1e-3f, 1e-1f);
  auto bt = ints<int>(B * P, -1, int(NB) - 1, seed + 2);
  DevLocal<i8> kd({S, D}, kc);
  DevLocal<float> sd({S, 1}, ks);
  DevLocal<int> btd({B, P}, bt);
  DevLocal<bf16> out({B, P * 16, D}, {});
  const int before = begin_case(r);
  if (run(r, "i8_kv_cache_gather", 2, kd.view(), sd.view(), btd.view(), out.view()))
    check(r, "i8_kv_cache_gather.out", out.download(),
          [&](LL i) {
            const LL d = i % D, j = i / D % (P * 16), b = i / D / (P * 16), blk = bt[b * P + j / 16];
            if (blk < 0) return 0.0;
            const LL row = blk * 16 + j % 16;
            return bf16r(fl(double(kc[row * D + d]) * ks[row]));
          },
          exact());
  end_case(r, "i8_kv_cache_gather " + dims({B, P, NB, D}), before);
}

void embedding_i64(const Run& r, LL T, LL V, LL D, unsigned seed) {
  const auto ids = ints<long long>(T, -2, V + 1, seed);
  const auto table = bytes(V * D, seed + 1);
  DevLocal<long long> idd({T}, ids);
  DevLocal<i8> td({V, D}, table), y({T, D}, {});
  const int before = begin_case(r);
  if (run(r, "i8_embedding_i64_ids", 2, idd.view(), td.view(), y.view()))
    check(r, "i8_embedding_i64_ids.y", y.download(),
          [&](LL i) { const LL id = ids[i / D]; return id < 0 || id >= V ? 0.0 : double(table[id * D + i % D]); }, exact());
  end_case(r, "i8_embedding_i64_ids " + dims({T, V, D}), before);
}

void scatter_rows_wrap(const Run& r, LL T, LL R, LL D, unsigned seed) {
  const auto x = bytes(T * D, seed), y0 = bytes(R * D, seed + 1);
  std::vector<int> perm(R);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(seed));
  std::vector<int> dst(T);
  for (LL t = 0; t < T; ++t) dst[t] = t % 5 == 1 ? -1 : t % 9 == 4 ? int(R) + 3 : perm[t];
  DevLocal<i8> xd({T, D}, x), y({R, D}, y0);
  DevLocal<int> dd({T}, dst);
  const int before = begin_case(r);
  if (run(r, "i8_scatter_rows_wrap", 2, xd.view(), dd.view(), y.view())) {
    std::vector<LL> src(R, -1);
    for (LL t = 0; t < T; ++t)
      if (dst[t] >= 0 && dst[t] < R) src[dst[t]] = t;
    check(r, "i8_scatter_rows_wrap.y", y.download(),
          [&](LL i) { const LL t = src[i / D]; return t < 0 ? double(y0[i]) : double(wrap8(x[t * D + i % D] + 1)); }, exact());
  }
  end_case(r, "i8_scatter_rows_wrap " + dims({T, R, D}), before);
}

void moe_dispatch(const Run& r, LL T, LL E, LL cap, unsigned seed) {
  const LL D = 128;
  const auto x = rnd<bf16>(T * D, seed, -2.f, 2.f);
  const auto ex = ints<int>(T, -1, int(E), seed + 1);
  DevLocal<bf16> xd({T, D}, x);
  DevLocal<int> ed({T}, ex), fill({E}, std::vector<int>(E, 0)), slot({T}, {});
  DevLocal<i8> buf({E * cap, D}, {});
  DevLocal<float> bs({E * cap, 1}, {});
  const int before = begin_case(r);
  if (run(r, "i8_moe_dispatch", 1, xd.view(), ed.view(), fill.view(), buf.view(), bs.view(), slot.view(), cap)) {
    const auto gs = slot.download(), gf = fill.download();
    const auto gb = buf.download();
    const auto gsc = bs.download();
    std::vector<LL> count(E, 0), kept(E, 0);
    std::set<int> seen;
    for (LL t = 0; t < T; ++t)
      if (ex[t] >= 0 && ex[t] < E) ++count[ex[t]];
    LL bad = 0;
    for (LL t = 0; t < T; ++t) {
      const int e = ex[t], s = gs[t];
      if (e < 0 || e >= E) { bad += s != -1; continue; }
      if (s == -1) continue;
      bad += s < e * cap || s >= (e + 1) * cap || !seen.insert(s).second;
      ++kept[e];
      double a = 0;
      for (LL j = 0; j < D; ++j) a = std::max(a, std::fabs(val(x[t * D + j])));
      a = std::max(a, 1e-6);
      bad += !(std::fabs(gsc[s] - a / 127) <= 1e-6 * a);
      for (LL j = 0; j < D; ++j) {
        const double v = val(x[t * D + j]) * 127 / a;
        bad += std::abs(gb[s * D + j] - sat8(std::nearbyint(v))) > (std::fabs(std::fabs(v - std::trunc(v)) - 0.5) < 1e-4 ? 1 : 0);
      }
    }
    for (LL e = 0; e < E; ++e) bad += kept[e] != std::min(count[e], cap) || gf[e] != count[e];
    if (bad) pkt::fail("i8_moe_dispatch: " + std::to_string(bad) + " mismatches (slots, counts or rows)");
  }
  end_case(r, "i8_moe_dispatch " + dims({T, E, cap}), before);
}

// ---- integer arithmetic and bits ----
void int4_pack(const Run& r, LL M, LL N, unsigned seed) {
  const auto lo = ints<i8>(M * N, -8, 7, seed), hi = ints<i8>(M * N, -8, 7, seed + 1);
  DevLocal<i8> l({M, N}, lo), h({M, N}, hi), p({M, N}, {}), ul({M, N}, {}), uh({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_int4_pack_unpack", 2, l.view(), h.view(), p.view(), ul.view(), uh.view())) {
    check(r, "i8_int4_pack_unpack.p", p.download(), [&](LL i) { return double(i8((lo[i] & 15) | wrap8(hi[i] * 16))); }, exact());
    check(r, "i8_int4_pack_unpack.ulo", ul.download(), [&](LL i) { return double(lo[i]); }, exact());
    check(r, "i8_int4_pack_unpack.uhi", uh.download(), [&](LL i) { return double(hi[i]); }, exact());
  }
  end_case(r, "i8_int4_pack_unpack " + dims({M, N}), before);
}

void shift_counts(const Run& r, LL M, LL N, unsigned seed) {
  const LL n = M * N;
  const auto x = bytes(n, seed);
  auto c = ints<i8>(n, -3, 10, seed + 1);
  const auto wide = bytes(n, seed + 2);
  for (LL i = 0; i < n; i += 5) c[i] = wide[i];
  DevLocal<i8> xd({M, N}, x), cd({M, N}, c), l({M, N}, {}), rr({M, N}, {}), l7({M, N}, {}), r7({M, N}, {}), r8({M, N}, {}), l8({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_shift_counts", 2, xd.view(), cd.view(), l.view(), rr.view(), l7.view(), r7.view(), r8.view(), l8.view())) {
    auto in = [&](LL i) { return c[i] >= 0 && c[i] < 8; };
    check(r, "i8_shift_counts.l", l.download(), [&](LL i) { return in(i) ? double(wrap8(LL(x[i]) * (1LL << c[i]))) : 0.0; }, exact());
    check(r, "i8_shift_counts.r", rr.download(), [&](LL i) { return in(i) ? double(x[i] >> c[i]) : x[i] < 0 ? -1.0 : 0.0; }, exact());
    check(r, "i8_shift_counts.l7", l7.download(), [&](LL i) { return double(wrap8(LL(x[i]) * 128)); }, exact());
    check(r, "i8_shift_counts.r7", r7.download(), [&](LL i) { return double(x[i] >> 7); }, exact());
    check(r, "i8_shift_counts.r8", r8.download(), [&](LL i) { return x[i] < 0 ? -1.0 : 0.0; }, exact());
    check(r, "i8_shift_counts.l8", l8.download(), [&](LL) { return 0.0; }, exact());
  }
  end_case(r, "i8_shift_counts " + dims({M, N}), before);
}

void wrap_edges(const Run& r, LL M, LL N, unsigned seed) {
  const LL n = M * N;
  auto a = bytes(n, seed), b = bytes(n, seed + 1);
  for (LL i = 0; i < n; i += 17) a[i] = -128, b[i] = -1;
  for (LL i = 5; i < n; i += 23) b[i] = 0;
  DevLocal<i8> ad({M, N}, a), bd({M, N}, b), ng({M, N}, {}), ab({M, N}, {}), dv({M, N}, {}), md({M, N}, {}), mx({M, N}, {}),
      mn({M, N}, {}), sq({M, N}, {}), k({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_wrap_edges", 2, ad.view(), bd.view(), ng.view(), ab.view(), dv.view(), md.view(), mx.view(), mn.view(),
          sq.view(), k.view())) {
    check(r, "i8_wrap_edges.neg", ng.download(), [&](LL i) { return double(wrap8(-LL(a[i]))); }, exact());
    check(r, "i8_wrap_edges.abs", ab.download(), [&](LL i) { return double(wrap8(std::llabs(a[i]))); }, exact());
    check(r, "i8_wrap_edges.div", dv.download(), [&](LL i) { return b[i] == 0 ? 0.0 : double(wrap8(LL(a[i]) / b[i])); }, exact());
    check(r, "i8_wrap_edges.mod", md.download(), [&](LL i) { return b[i] == 0 || b[i] == -1 ? 0.0 : double(a[i] % b[i]); }, exact());
    check(r, "i8_wrap_edges.max", mx.download(), [&](LL i) { return double(std::max(a[i], b[i])); }, exact());
    check(r, "i8_wrap_edges.min", mn.download(), [&](LL i) { return double(std::min(a[i], b[i])); }, exact());
    check(r, "i8_wrap_edges.sq", sq.download(), [&](LL i) { return double(wrap8(LL(a[i]) * a[i])); }, exact());
    check(r, "i8_wrap_edges.k", k.download(), [&](LL i) { return double(wrap8(LL(a[i]) * -128 + 127)); }, exact());
  }
  end_case(r, "i8_wrap_edges " + dims({M, N}), before);
}

void saturating_add(const Run& r, LL M, LL N, unsigned seed) {
  const auto a = bytes(M * N, seed), b = bytes(M * N, seed + 1);
  DevLocal<i8> ad({M, N}, a), bd({M, N}, b), y({M, N}, {}), w({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_saturating_add", 2, ad.view(), bd.view(), y.view(), w.view())) {
    check(r, "i8_saturating_add.y", y.download(), [&](LL i) { return std::max(-128.0, std::min(127.0, double(a[i] + b[i]))); }, exact());
    check(r, "i8_saturating_add.w", w.download(), [&](LL i) { return double(wrap8(a[i] + b[i])); }, exact());
  }
  end_case(r, "i8_saturating_add " + dims({M, N}), before);
}

void zero_point_rows(const Run& r, LL M, LL N, unsigned seed) {
  const auto q = bytes(M * N, seed), zp = bytes(M, seed + 1);
  const auto sc = rnd<float>(M, seed + 2, 1e-3f, 1.f);
  DevLocal<i8> qd({M, N}, q), zd({M}, zp);
  DevLocal<float> sd({M}, sc), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_zero_point_rows", 2, qd.view(), zd.view(), sd.view(), y.view()))
    check(r, "i8_zero_point_rows.y", y.download(), [&](LL i) { return double(float(q[i] - zp[i / N]) * sc[i / N]); }, exact());
  end_case(r, "i8_zero_point_rows " + dims({M, N}), before);
}

void scalar_offset(const Run& r, LL N, unsigned seed) {
  const auto q = bytes(N, seed);
  const std::vector<i8> off = {77};
  DevLocal<i8> qd({N}, q), od({1}, off), y({N}, {}), z({N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_scalar_offset_1d", 2, qd.view(), od.view(), y.view(), z.view())) {
    check(r, "i8_scalar_offset_1d.y", y.download(), [&](LL i) { return double(wrap8(q[i] + 77)); }, exact());
    check(r, "i8_scalar_offset_1d.z", z.download(), [&](LL i) { return double(wrap8(LL(q[i]) * 77 - 3)); }, exact());
  }
  end_case(r, "i8_scalar_offset_1d N=" + std::to_string(N), before);
}

void value_histogram(const Run& r, LL N, unsigned seed) {
  const auto q = bytes(N, seed);
  DevLocal<i8> qd({N}, q);
  DevLocal<int> h({1, 256}, {});
  const int before = begin_case(r);
  if (run(r, "i8_value_histogram", 2, qd.view(), h.view())) {
    std::vector<double> c(256, 0);
    for (i8 v : q) c[v + 128] += 1;
    check_vec(r, "i8_value_histogram.h", h.download(), c, std::vector<double>(256, 0.0));
  }
  end_case(r, "i8_value_histogram N=" + std::to_string(N), before);
}

void row_sums(const Run& r, LL M, LL N, unsigned seed) {
  auto q = bytes(M * N, seed);
  for (LL i = 0; i < M * N; i += 3) q[i] = 0;
  DevLocal<i8> qd({M, N}, q);
  DevLocal<int> rsd({M, 1}, {}), cs({M, N}, {}), nz({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "i8_row_sums", 2, qd.view(), rsd.view(), cs.view(), nz.view())) {
    std::vector<double> s(M, 0), c(M * N), z(M, 0);
    for (LL i = 0; i < M * N; ++i) s[i / N] += q[i], c[i] = s[i / N], z[i / N] += q[i] != 0;
    check_vec(r, "i8_row_sums.rs", rsd.download(), s, std::vector<double>(M, 0.0));
    check_vec(r, "i8_row_sums.cs", cs.download(), c, std::vector<double>(M * N, 0.0));
    check_vec(r, "i8_row_sums.nz", nz.download(), z, std::vector<double>(M, 0.0));
  }
  end_case(r, "i8_row_sums " + dims({M, N}), before);
}

// ---- masks and selects ----
void masked_softmax(const Run& r, LL M, LL N, unsigned seed) {
  const auto s = rnd<float>(M * N, seed, -5.f, 5.f);
  auto mk = ints<i8>(M * N, -2, 2, seed + 1);
  for (LL j = 0; j < N; ++j) mk[4 * N + j] = 0;  // a row with no kept key
  DevLocal<float> sd({M, N}, s), p({M, N}, {});
  DevLocal<i8> md({M, N}, mk);
  const int before = begin_case(r);
  if (run(r, "i8_masked_softmax", 2, sd.view(), md.view(), p.view())) {
    std::vector<double> want(M * N);
    for (LL m = 0; m < M; ++m) {
      double mx = -1e300, sum = 0;
      for (LL j = 0; j < N; ++j)
        if (mk[m * N + j]) mx = std::max(mx, double(s[m * N + j]));
      for (LL j = 0; j < N; ++j) sum += mk[m * N + j] ? std::exp(s[m * N + j] - mx) : 0;
      for (LL j = 0; j < N; ++j)
        want[m * N + j] = mx == -1e300 ? 1.0 / 128 : mk[m * N + j] ? std::exp(s[m * N + j] - mx) / sum : 0.0;
    }
    check(r, "i8_masked_softmax.p", p.download(), [&](LL i) { return want[i]; }, [&](LL i) { return 2e-5 * want[i] + 1e-30; });
  }
  end_case(r, "i8_masked_softmax " + dims({M, N}), before);
}

void selects(const Run& r, LL M, LL N, unsigned seed) {
  const auto a = bytes(M * N, seed), b = bytes(M * N, seed + 1);
  const auto c = rnd<float>(M * N, seed + 2, -1.f, 1.f);
  DevLocal<i8> ad({M, N}, a), bd({M, N}, b), y({M, N}, {}), z({M, N}, {}), u({M, N}, {});
  DevLocal<float> cd({M, N}, c);
  const int before = begin_case(r);
  if (run(r, "i8_selects", 2, ad.view(), bd.view(), cd.view(), y.view(), z.view(), u.view())) {
    check(r, "i8_selects.y", y.download(), [&](LL i) { return double(c[i] > 0 ? a[i] : b[i]); }, exact());
    check(r, "i8_selects.z", z.download(), [&](LL i) { return a[i] > b[i] ? double(a[i]) : -128.0; }, exact());
    check(r, "i8_selects.u", u.download(), [&](LL i) { return c[i] < 0 ? 127.0 : double(a[i]); }, exact());
  }
  end_case(r, "i8_selects " + dims({M, N}), before);
}

void dropout_mask(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = rnd<bf16>(M * N, seed, -2.f, 2.f);
  const LL sd = 123456789;
  const float p = 0.3f, k = 1.0f / (1.0f - p);
  DevLocal<bf16> xd({M, N}, x), y({M, N}, {});
  DevLocal<i8> mk({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_dropout_mask", 2, xd.view(), mk.view(), y.view(), sd, p)) {
    auto keep = [&](LL i) { return uniform_at(sd, {i / N, i % N}) >= p ? 1.0 : 0.0; };
    check(r, "i8_dropout_mask.mk", mk.download(), keep, exact());
    check(r, "i8_dropout_mask.y", y.download(), [&](LL i) { return bf16r(fl(fl(val(x[i]) * keep(i)) * k)); }, exact());
  }
  end_case(r, "i8_dropout_mask " + dims({M, N}), before);
}

void topk_dequant(const Run& r, LL M, unsigned seed) {
  const LL N = 64;
  const auto q = ints<i8>(M * N, -20, 20, seed);  // ties within a row
  const auto s = rnd<float>(M, seed + 1, 0.1f, 1.f);
  DevLocal<i8> qd({M, N}, q);
  DevLocal<float> sd({M, 1}, s), v({M, 2}, {});
  DevLocal<int> ix({M, 2}, {});
  const int before = begin_case(r);
  if (run(r, "i8_topk_dequant", 2, qd.view(), sd.view(), v.view(), ix.view())) {
    std::vector<double> wv(M * 2), wi(M * 2);
    for (LL m = 0; m < M; ++m) {
      std::vector<int> o(N);
      std::iota(o.begin(), o.end(), 0);
      std::stable_sort(o.begin(), o.end(), [&](int a, int b) { return q[m * N + a] > q[m * N + b]; });
      for (int k = 0; k < 2; ++k) wi[m * 2 + k] = o[k], wv[m * 2 + k] = double(float(q[m * N + o[k]]) * s[m]);
    }
    check_vec(r, "i8_topk_dequant.v", v.download(), wv, std::vector<double>(M * 2, 0.0));
    check_vec(r, "i8_topk_dequant.ix", ix.download(), wi, std::vector<double>(M * 2, 0.0));
  }
  end_case(r, "i8_topk_dequant M=" + std::to_string(M), before);
}

// ---- shapes ----
void transpose(const Run& r, LL M, LL N, unsigned seed) {
  const auto x = bytes(M * N, seed);
  DevLocal<i8> xd({M, N}, x), y({N, M}, {});
  const int before = begin_case(r);
  if (run(r, "i8_transpose", 2, xd.view(), y.view()))
    check(r, "i8_transpose.y", y.download(), [&](LL i) { return double(x[(i % M) * N + i / M]); }, exact());
  end_case(r, "i8_transpose " + dims({M, N}), before);
}

void bias3d(const Run& r, LL B, LL S, LL D, unsigned seed) {
  const auto x = bytes(B * S * D, seed), bias = bytes(D, seed + 1);
  DevLocal<i8> xd({B, S, D}, x), bd({D}, bias), y({B, S, D}, {}), head({S, D}, {});
  const int before = begin_case(r);
  if (run(r, "i8_3d_bias", 2, xd.view(), bd.view(), y.view(), head.view())) {
    check(r, "i8_3d_bias.y", y.download(), [&](LL i) { return double(wrap8(x[i] + bias[i % D])); }, exact());
    check(r, "i8_3d_bias.head", head.download(), [&](LL i) { return double(x[i]); }, exact());
  }
  end_case(r, "i8_3d_bias " + dims({B, S, D}), before);
}

void dequant_groups(const Run& r, LL N, unsigned seed) {
  const auto q = bytes(N, seed);
  const auto s = rnd<float>((N + 127) / 128, seed + 1, 1e-3f, 1.f);
  DevLocal<i8> qd({N}, q);
  DevLocal<float> sd({(N + 127) / 128}, s), y({N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_dequant_groups_1d", 2, qd.view(), sd.view(), y.view()))
    check(r, "i8_dequant_groups_1d.y", y.download(), [&](LL i) { return double(float(q[i]) * s[i / 128]); }, exact());
  end_case(r, "i8_dequant_groups_1d N=" + std::to_string(N), before);
}

// ---- GEMMs ----
void gemm_ab(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const auto a = bytes(M * Kd, seed), b = bytes(Kd * N, seed + 1);
  const auto sa = rnd<float>(M, seed + 2, 1e-3f, 1e-2f), sb = rnd<float>(N, seed + 3, 1e-3f, 1e-2f);
  DevLocal<i8> ad({M, Kd}, a), bd({Kd, N}, b);
  DevLocal<float> sad({M, 1}, sa), sbd({1, N}, sb), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_gemm_ab_layout", 2, ad.view(), bd.view(), sad.view(), sbd.view(), y.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return double(a[m * Kd + k]); }, [&](LL k, LL n) { return double(b[k * N + n]); });
    check(r, "i8_gemm_ab_layout.y", y.download(), [&](LL i) { return g.c[i] * sa[i / N] * sb[i % N]; },
          [&](LL i) { return 1e-6 * std::fabs(g.c[i] * sa[i / N] * sb[i % N]) + 1e-12; });
  }
  end_case(r, "i8_gemm_ab_layout " + dims({M, N, Kd}), before);
}

void gemm_quant_epilogue(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const auto x = rnd<bf16>(M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1);
  const float inv = 40.f;  // |x w^T| up to ~8: levels past 127 saturate
  DevLocal<bf16> xd({M, Kd}, x), wd({N, Kd}, w);
  DevLocal<i8> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_gemm_quant_epilogue", 2, xd.view(), wd.view(), y.view(), inv)) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); }, [&](LL k, LL n) { return val(w[n * Kd + k]); });
    qcheck(r, "i8_gemm_quant_epilogue.y", y.download(), [&](LL i) { return g.c[i] * inv; },
           [&](LL i) { return 1e-5 * g.mag[i] * inv + 1e-6; });
  }
  end_case(r, "i8_gemm_quant_epilogue " + dims({M, N, Kd}), before);
}

void weight_only_bias(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed) {
  const auto x = rnd<bf16>(M * Kd, seed), bias = rnd<bf16>(N, seed + 3);
  const auto w = bytes(N * Kd, seed + 1);
  const auto ws = rnd<float>(N, seed + 2, 1e-3f, 1e-2f);
  DevLocal<bf16> xd({M, Kd}, x), bd({1, N}, bias), y({M, N}, {});
  DevLocal<i8> wd({N, Kd}, w);
  DevLocal<float> wsd({N, 1}, ws);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), wsd.view(), bd.view(), y.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); }, [&](LL k, LL n) { return double(w[n * Kd + k]); });
    auto want = [&](LL i) { return g.c[i] * ws[i % N] + val(bias[i % N]); };
    check(r, kn + ".y", y.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-5 * g.mag[i] * ws[i % N] + 1e-6; });
  }
  end_case(r, kn + " " + dims({M, N, Kd}) + (Kd % 16 ? " (general twin)" : ""), before);
}

void dynamic_quant_gemm(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const auto x = rnd<bf16>(M * Kd, seed, -3.f, 3.f);
  const auto w = bytes(N * Kd, seed + 1);
  const auto sw = rnd<float>(N, seed + 2, 1e-3f, 1e-2f);
  DevLocal<bf16> xd({M, Kd}, x);
  DevLocal<i8> xq({M, Kd}, {}), wd({N, Kd}, w);
  DevLocal<float> xs({M, 1}, {}), swd({N}, sw), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_dynamic_quant_gemm", 2, xd.view(), xq.view(), xs.view(), wd.view(), swd.view(), y.view())) {
    std::vector<double> a(M, 0);
    for (LL i = 0; i < M * Kd; ++i) a[i / Kd] = std::max(a[i / Kd], std::fabs(val(x[i])));
    for (auto& v : a) v = std::max(v, 1e-6);
    const auto gq = xq.download();
    const auto gs = xs.download();
    qcheck(r, "i8_dynamic_quant_gemm.xq", gq, [&](LL i) { return val(x[i]) * 127 / a[i / Kd]; }, qtol());
    check(r, "i8_dynamic_quant_gemm.xs", gs, [&](LL m) { return a[m] / 127; }, [&](LL m) { return 1e-6 * a[m]; });
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return double(gq[m * Kd + k]); }, [&](LL k, LL n) { return double(w[n * Kd + k]); });
    check(r, "i8_dynamic_quant_gemm.y", y.download(), [&](LL i) { return g.c[i] * gs[i / N] * sw[i % N]; },
          [&](LL i) { return 1e-6 * std::fabs(g.c[i] * gs[i / N] * sw[i % N]) + 1e-12; });
  }
  end_case(r, "i8_dynamic_quant_gemm " + dims({M, N, Kd}), before);
}

// ---- across ranks ----
void grad_allgather_mean(const Run& r, LL R, LL C, unsigned seed) {
  std::vector<std::vector<float>> g(r.W);
  for (int p = 0; p < r.W; ++p) g[p] = rnd<float>(R * C, rs(seed, p), -1.f, 1.f);
  DevLocal<float> gd({R, C}, g[r.me]), as({r.W * R, 1}, {}), out({R, C}, {});
  SymArg<i8> gq(r.ctx, {R, C}, nullptr);
  SymArg<float> gs(r.ctx, {R, 1}, nullptr);
  DevLocal<i8> aq({r.W * R, C}, {});
  const int before = begin_case(r);
  if (run(r, "i8_grad_allgather_mean", 2, gd.view(), gq.view, gs.view, aq.view(), as.view(), out.view())) {
    std::vector<double> a(r.W * R, 0);
    for (int p = 0; p < r.W; ++p)
      for (LL i = 0; i < R * C; ++i) a[p * R + i / C] = std::max(a[p * R + i / C], double(std::fabs(g[p][i])));
    for (auto& v : a) v = std::max(v, 1e-12);
    const auto gaq = aq.download();
    const auto gas = as.download();
    qcheck(r, "i8_grad_allgather_mean.aq", gaq, [&](LL i) { const LL p = i / (R * C); return g[p][i % (R * C)] * 127 / a[i / C]; }, qtol());
    check(r, "i8_grad_allgather_mean.as", gas, [&](LL i) { return a[i] / 127; }, [&](LL i) { return 1e-6 * a[i]; });
    check(r, "i8_grad_allgather_mean.out", out.download(),
          [&](LL i) {
            double s = 0;
            for (int p = 0; p < r.W; ++p) s += double(gaq[(p * R + i / C) * C + i % C]) * gas[p * R + i / C];
            return s / r.W;
          },
          [&](LL i) {  // f32 sums of W products: relative to the terms' magnitudes, not this rank's value
            double mag = 0;
            for (int p = 0; p < r.W; ++p) mag += std::fabs(double(gaq[(p * R + i / C) * C + i % C]) * gas[p * R + i / C]);
            return 1e-6 * mag / r.W + 1e-9;
          });
  }
  end_case(r, "i8_grad_allgather_mean " + dims({R, C}), before);
}

std::vector<std::vector<i8>> rank_bytes(int W, LL n, unsigned seed) {
  std::vector<std::vector<i8>> v(W);
  for (int p = 0; p < W; ++p) v[p] = bytes(n, rs(seed, p));
  return v;
}

void all_gather_cols(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = rank_bytes(r.W, R * C, seed);
  SymArg<i8> xd(r.ctx, {R, C}, &x[r.me]), y(r.ctx, {R, r.W * C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "i8_all_gather_cols", 2, xd.view, y.view))
    check(r, "i8_all_gather_cols.y", y.download(),
          [&](LL i) { const LL row = i / (r.W * C), c = i % (r.W * C); return double(x[c / C][row * C + c % C]); }, exact());
  end_case(r, "i8_all_gather_cols " + dims({R, C}), before);
}

void all_to_all_cols(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = rank_bytes(r.W, R * C, seed);
  SymArg<i8> xd(r.ctx, {R, C}, &x[r.me]), y(r.ctx, {R, C}, nullptr);
  const LL b = C / r.W;
  const int before = begin_case(r);
  if (run(r, "i8_all_to_all_cols", 2, xd.view, y.view))
    check(r, "i8_all_to_all_cols.y", y.download(),
          [&](LL i) { const LL row = i / C, c = i % C; return double(x[c / b][row * C + r.me * b + c % b]); }, exact());
  end_case(r, "i8_all_to_all_cols " + dims({R, C}), before);
}

void all_to_all_heads(const Run& r, LL H, LL Sl, LL D, unsigned seed) {
  const auto x = rank_bytes(r.W, H * Sl * D, seed);
  const LL Hl = H / r.W;
  SymArg<i8> xd(r.ctx, {H, Sl, D}, &x[r.me]), y(r.ctx, {Hl, Sl * r.W, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "i8_all_to_all_heads", 2, xd.view, y.view))
    check(r, "i8_all_to_all_heads.y", y.download(),
          [&](LL i) {
            const LL d = i % D, s = i / D % (Sl * r.W), h = i / D / (Sl * r.W);
            return double(x[s / Sl][((r.me * Hl + h) * Sl + s % Sl) * D + d]);
          },
          exact());
  end_case(r, "i8_all_to_all_heads " + dims({H, Sl, D}), before);
}

void ring_shift(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = rank_bytes(r.W, R * C, seed);
  SymArg<i8> xd(r.ctx, {R, C}, &x[r.me]), y(r.ctx, {R, C}, nullptr);
  const int prev = (r.me + r.W - 1) % r.W;
  const int before = begin_case(r);
  if (run(r, "i8_ring_shift", 2, xd.view, y.view))
    check(r, "i8_ring_shift.y", y.download(), [&](LL i) { return double(wrap8(x[prev][i] + prev + 1)); }, exact());
  end_case(r, "i8_ring_shift " + dims({R, C}), before);
}

void pull_prev_xor(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = rank_bytes(r.W, R * C, seed);
  SymArg<i8> xd(r.ctx, {R, C}, &x[r.me]);
  DevLocal<i8> y({R, C}, {});
  const int prev = (r.me + r.W - 1) % r.W;
  const int before = begin_case(r);
  if (run(r, "i8_pull_prev_xor", 2, xd.view, y.view()))
    check(r, "i8_pull_prev_xor.y", y.download(), [&](LL i) { return double(i8(x[r.me][i] ^ x[prev][i])); }, exact());
  end_case(r, "i8_pull_prev_xor " + dims({R, C}), before);
}

void gather_rows_to_root(const Run& r, LL R, LL C, unsigned seed) {
  const auto x = rank_bytes(r.W, R * C, seed);
  DevLocal<i8> xd({R, C}, x[r.me]);
  SymArg<i8> y(r.ctx, {r.W * R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "i8_gather_rows_to_root", 2, xd.view(), y.view)) {
    std::vector<double> want(r.W * R * C, kNaNd());
    if (r.me == 0)
      for (LL i = 0; i < r.W * R * C; ++i) want[i] = x[i / (R * C)][i % (R * C)];
    // Poison is -1: a gathered -1 is accepted by value.
    check_or_poison(r, "i8_gather_rows_to_root.y", y.download(), want, exact());
  }
  end_case(r, "i8_gather_rows_to_root " + dims({R, C}), before);
}

void allreduce_requant(const Run& r, LL R, LL C, unsigned seed) {
  const auto g = rank_bytes(r.W, R * C, seed);
  const float sc = 0.01f, osc = 0.004f;
  SymArg<i8> gq(r.ctx, {R, C}, &g[r.me]);
  SymArg<int> acc(r.ctx, {R, C}, nullptr), tot(r.ctx, {R, C}, nullptr);
  DevLocal<i8> y({R, C}, {});
  const int before = begin_case(r);
  if (run(r, "i8_allreduce_requant", 2, gq.view, acc.view, tot.view, y.view(), sc, osc)) {
    std::vector<double> t(R * C, 0);
    for (int p = 0; p < r.W; ++p)
      for (LL i = 0; i < R * C; ++i) t[i] += g[p][i];
    check_vec(r, "i8_allreduce_requant.tot", tot.download(), t, std::vector<double>(R * C, 0.0));
    const float k = sc / float(r.W) / osc;
    qcheck(r, "i8_allreduce_requant.y", y.download(), [&](LL i) { return double(float(t[i]) * k); }, [](LL) { return 1e-9; });
  }
  end_case(r, "i8_allreduce_requant " + dims({R, C}), before);
}

void rows_to_owners(const Run& r, LL T, LL R, LL D, unsigned seed) {
  const auto x = rank_bytes(r.W, T * D, seed);
  // One global assignment: rank p's token t goes to global row dst[p][t] (distinct), or nowhere.
  std::vector<int> perm(r.W * T);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(seed));
  std::vector<std::vector<int>> dst(r.W, std::vector<int>(T));
  for (int p = 0; p < r.W; ++p)
    for (LL t = 0; t < T; ++t) {
      const int g = perm[p * T + t];
      dst[p][t] = g < r.W * R ? g : (t % 2 ? -1 : int(r.W * R) + g);
    }
  DevLocal<i8> xd({T, D}, x[r.me]);
  DevLocal<int> dd({T}, dst[r.me]);
  SymArg<i8> y(r.ctx, {R, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "i8_rows_to_owners", 2, xd.view(), dd.view(), y.view)) {
    std::vector<double> want(R * D, kNaNd());
    for (int p = 0; p < r.W; ++p)
      for (LL t = 0; t < T; ++t) {
        const int g = dst[p][t];
        if (g >= r.me * R && g < (r.me + 1) * R)
          for (LL j = 0; j < D; ++j) want[(g - r.me * R) * D + j] = x[p][t * D + j];
      }
    check_or_poison(r, "i8_rows_to_owners.y", y.download(), want, exact());
  }
  end_case(r, "i8_rows_to_owners " + dims({T, R, D}), before);
}

void cases(const Run& r) {
  if (r.W == 1) {
    block_quant(r, 37, 300, 11);
    per_tensor_quant(r, 37, 300, 13);
    asym_quant(r, 37, 200, 17);
    rounding_modes(r, 37, 100, 19);
    cast_edges(r, 37, 100, 23);
    rmsnorm_requant(r, 37, 300, 29);
    layernorm(r, 37, 200, 31);
    kv_cache_write(r, 37, 64, 37);
    kv_cache_gather(r, 3, 4, 5, 100, 41);
    embedding_i64(r, 37, 50, 100, 43);
    scatter_rows_wrap(r, 37, 50, 100, 47);
    moe_dispatch(r, 100, 4, 12, 53);
    int4_pack(r, 37, 100, 59);
    shift_counts(r, 37, 100, 61);
    wrap_edges(r, 37, 100, 67);
    saturating_add(r, 37, 100, 71);
    zero_point_rows(r, 37, 300, 73);
    scalar_offset(r, 2500, 79);
    value_histogram(r, 10000, 83);
    row_sums(r, 37, 200, 89);
    masked_softmax(r, 37, 100, 97);
    selects(r, 37, 100, 101);
    dropout_mask(r, 37, 300, 103);
    topk_dequant(r, 37, 107);
    transpose(r, 37, 100, 109);
    bias3d(r, 3, 37, 100, 113);
    dequant_groups(r, 1000, 127);
    gemm_ab(r, 37, 100, 72, 131);
    gemm_quant_epilogue(r, 100, 72, 136, 137);
    weight_only_bias(r, "i8_weight_only_bias", 300, 520, 208, 139);
    weight_only_bias(r, "i8_weight_only_bias", 100, 136, 72, 149);  // the twin
    weight_only_bias(r, "i8_weight_only_bias/general", 300, 520, 208, 151);
    dynamic_quant_gemm(r, 37, 72, 200, 157);
  }
  grad_allgather_mean(r, 37, 200, 163);
  all_gather_cols(r, 37, 99, 167);
  all_to_all_cols(r, 37, 60, 173);
  all_to_all_heads(r, 12, 5, 33, 179);
  ring_shift(r, 37, 100, 181);
  pull_prev_xor(r, 37, 100, 191);
  gather_rows_to_root(r, 37, 100, 193);
  allreduce_requant(r, 37, 100, 197);
  rows_to_owners(r, 37, 20, 100, 199);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_USER_SPECS27_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return pkt::finish("user_specs27_jit_test");
  return run_worlds("user_specs27_jit_test", g_kernels, cases);
}

// The thirty-second user-written spec set (test/specs/user_specs32.pk.cpp: integer and indexed tensors, fp8,
// transposes and per-peer variable sizes) through the JIT, each kernel against an exact (integers, row moves) or
// float64 host reference written from its comment, on fresh random inputs, with every output poisoned first (0xff:
// NaN for floats, -1 for integers). Sizes are never multiples of the tiles; ids include -1 and past-the-end values,
// duplicates, and skewed routing in which some experts and some ranks receive nothing.
//
// Not run here (their emitted CUDA was read, see specs32_findings.md): b32_moe_route_dispatch and
// b32_moe_dispatch_peers (claim hands out places in no fixed order), b32_fp8_row_quant_e5m2,
// b32_fp8_mma_t_scaled, b32_fp8_mma_mixed, b32_w8_gemm_chscale, b32_vp_xent, b32_scatter_fp8_rows.
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>

#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"b32_divmod_neg", false},      {"b32_divmod_tiles_i64", false},  {"b32_hash_i64", false},
    {"b32_clamp_ids", false},       {"b32_casts", false},             {"b32_round_to_int", false},
    {"b32_segments_scale", false},  {"b32_ragged_mask", false},       {"b32_embed_i64", false},
    {"b32_embed_grad_dup", false},  {"b32_permute_roundtrip", false}, {"b32_cumsum_long", false},
    {"b32_cumsum_carry", false},    {"b32_int_row_stats", false},
    {"b32_cumsum_rows", false},     {"b32_hist_e37", false},          {"b32_hist_bins_tiled", false},
    {"b32_moe_combine", false},     {"b32_fp8_block_quant", false},   {"b32_fp8_block_dequant", false},
    {"b32_fp8_saturate", false},    {"b32_transpose_tails", false},   {"b32_transpose_i32", false},
    {"b32_colsum_transposed", false}, {"b32_gumbel_sample", false},   {"b32_one_row_and_empty", false},
    {"b32_gather_from_peers", false}, {"b32_a2av_counts", false},     {"b32_vp_embed", false},
};
const std::vector<const char*> kGeneralToo = {};

KernelSet g_kernels;
const char* kSet = "user_specs32";

template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}
template <class T>
void check_rel(const Run& r, const std::string& what, const std::vector<T>& got, const std::function<double(LL)>& want,
               double rel, double abs) {
  check(r, what, got, want, [&](LL i) { return rel * std::fabs(want(i)) + abs; });
}
template <class T>
void check_exact(const Run& r, const std::string& what, const std::vector<T>& got, const std::function<double(LL)>& want) {
  check(r, what, got, want, exact());
}

// C++'s truncating / and %, 0 for a zero divisor, wrapping for the minimum by -1 (the language's integer rules).
template <class T>
T tdiv(T x, T y) {
  if (y == 0) return 0;
  if (y == -1) return static_cast<T>(0 - static_cast<typename std::make_unsigned<T>::type>(x));
  return x / y;
}
template <class T>
T trem(T x, T y) {
  return y == 0 || y == -1 ? 0 : x % y;
}
// Float to integer: toward zero, saturating, NaN gives 0.
template <class T>
T f2i(double x) {
  if (std::isnan(x)) return 0;
  const double t = std::trunc(x);
  if (t <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (t >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(t);
}
// x rounded once to `bits` significant bits, ties to even (bf16: 8).
double round_sig(double x, int bits) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e;
  std::frexp(x, &e);
  const double step = std::ldexp(1.0, e - bits);
  return std::nearbyint(x / step) * step;
}
double e5m2(double x) { return pkt::fp8_decode(pkt::fp8_encode(x, pkt::kE5M2), pkt::kE5M2); }

// ---- integer arithmetic ----
void divmod(const Run& r) {
  const LL M = 37, N = 101;
  auto x = ints<int>(M * N, -1000, 1000, 1);
  x[0] = std::numeric_limits<int>::min(), x[1] = std::numeric_limits<int>::max(), x[2] = -1, x[3] = 0;
  for (LL d : {7LL, -7LL, 1LL, -1LL, 0LL, 2LL, 1000003LL}) {
    DevLocal<int> xd({M, N}, x), q({M, N}, {}), rr({M, N}, {}), fq({M, N}, {}), fr({M, N}, {});
    const int before = begin_case(r);
    if (run(r, "b32_divmod_neg", 1, xd.view(), q.view(), rr.view(), fq.view(), fr.view(), d)) {
      const int di = int(d);
      check_exact(r, "b32_divmod_neg.q", q.download(), [&](LL i) { return tdiv(x[i], di); });
      check_exact(r, "b32_divmod_neg.r", rr.download(), [&](LL i) { return trem(x[i], di); });
      // The spec's own formulas, in wrapping i32.
      auto pos = [&](LL i) { return trem(int(uint32_t(trem(x[i], di)) + uint32_t(di)), di); };
      check_exact(r, "b32_divmod_neg.fr", fr.download(), [&](LL i) { return pos(i); });
      check_exact(r, "b32_divmod_neg.fq", fq.download(), [&](LL i) { return tdiv(int(uint32_t(x[i]) - uint32_t(pos(i))), di); });
    }
    end_case(r, kSet, "b32_divmod_neg d=" + std::to_string(d), before);
  }
  {
    const LL A = 19, B = 83;
    auto a = ints<long long>(A * B, -(1LL << 40), 1LL << 40, 2), b = ints<long long>(A * B, -9, 9, 3);
    a[0] = std::numeric_limits<long long>::min(), b[0] = -1, b[1] = 0;
    DevLocal<long long> ad({A, B}, a), bd({A, B}, b), q({A, B}, {}), rr({A, B}, {});
    const int before = begin_case(r);
    if (run(r, "b32_divmod_tiles_i64", 2, ad.view(), bd.view(), q.view(), rr.view())) {
      auto qg = q.download(), rg = rr.download();
      LL bad = 0;
      for (LL i = 0; i < A * B; ++i) bad += qg[i] != tdiv(a[i], b[i]) || rg[i] != trem(a[i], b[i]);
      if (bad) pkt::fail("b32_divmod_tiles_i64: " + std::to_string(bad) + " wrong (compared as i64)");
    }
    end_case(r, kSet, "b32_divmod_tiles_i64 19x83", before);
  }
}

void hash(const Run& r) {
  const LL N = 1234;
  auto x = ints<long long>(N, -(1LL << 62), 1LL << 62, 4);
  for (LL s : {0LL, 13LL, 63LL, 64LL}) {
    const LL buckets = 1000003;
    DevLocal<long long> xd({N}, x), h({N}, {}), bk({N}, {});
    const int before = begin_case(r);
    if (run(r, "b32_hash_i64", 2, xd.view(), h.view(), bk.view(), s, buckets)) {
      auto hg = h.download(), bg = bk.download();
      LL bad = 0;
      for (LL i = 0; i < N; ++i) {
        const uint64_t v = uint64_t(x[i]);
        const uint64_t sh = uint64_t(x[i] >> 33);  // arithmetic
        const uint64_t shl = s >= 0 && s < 64 ? v << s : 0;
        const long long hh = static_cast<long long>(((v ^ sh) * 0x9E3779B97F4A7C15ULL) ^ shl);
        const long long b = (hh & 0x7fffffffffffffffLL) % buckets;
        bad += hg[i] != hh || bg[i] != b;
      }
      if (bad) pkt::fail("b32_hash_i64 s=" + std::to_string(s) + ": " + std::to_string(bad) + " wrong");
    }
    end_case(r, kSet, "b32_hash_i64 s=" + std::to_string(s), before);
  }
}

void clamp(const Run& r) {
  const LL M = 33, N = 50;
  auto x = ints<int>(M * N, -100, 100, 5);
  x[0] = std::numeric_limits<int>::min();
  DevLocal<int> xd({M, N}, x), y({M, N}, {}), f({M, N}, {}), a({M, N}, {});
  const LL lo = -20, hi = 30;
  const int before = begin_case(r);
  if (run(r, "b32_clamp_ids", 2, xd.view(), y.view(), f.view(), a.view(), lo, hi)) {
    check_exact(r, "b32_clamp_ids.y", y.download(), [&](LL i) { return std::min<LL>(std::max<LL>(x[i], lo), hi); });
    check_exact(r, "b32_clamp_ids.flag", f.download(), [&](LL i) { return x[i] < lo || x[i] > hi ? 1 : 0; });
    check_exact(r, "b32_clamp_ids.a", a.download(), [&](LL i) {
      const int ab = x[i] < 0 ? int(0u - uint32_t(x[i])) : x[i];
      return double(int(uint32_t(ab) - uint32_t(x[i] >= 0)));
    });
  }
  end_case(r, kSet, "b32_clamp_ids 33x50", before);
}

// ---- casts ----
void casts(const Run& r) {
  const LL M = 11, N = 150;
  auto x = rnd<float>(M * N, 6, -5e9f, 5e9f);
  for (LL i = 0; i < M * N; i += 7) x[i] = x[i] * 1e-9f;  // small, with fractions of both signs
  x[1] = NAN, x[2] = INFINITY, x[3] = -INFINITY, x[4] = -0.999f, x[5] = 2147483520.0f, x[6] = 3e19f;
  auto w = ints<long long>(M * N, -(1LL << 62), 1LL << 62, 7);
  w[0] = (1LL << 24) + 1, w[1] = -((1LL << 53) + 3), w[2] = 4294967297LL, w[3] = -1;
  DevLocal<float> xd({M, N}, x), wf({M, N}, {});
  DevLocal<long long> wd({M, N}, w), xl({M, N}, {});
  DevLocal<int> xi({M, N}, {}), wi({M, N}, {});
  DevLocal<bf16> wb({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "b32_casts", 2, xd.view(), wd.view(), xi.view(), xl.view(), wf.view(), wi.view(), wb.view())) {
    check_exact(r, "b32_casts.xi", xi.download(), [&](LL i) { return f2i<int>(x[i]); });
    auto xg = xl.download();
    LL bad = 0;
    for (LL i = 0; i < M * N; ++i) bad += xg[i] != f2i<long long>(x[i]);
    if (bad) pkt::fail("b32_casts.xl: " + std::to_string(bad) + " wrong");
    check_exact(r, "b32_casts.wf", wf.download(), [&](LL i) { return double(static_cast<float>(w[i])); });
    check_exact(r, "b32_casts.wi", wi.download(), [&](LL i) { return double(static_cast<int32_t>(uint32_t(uint64_t(w[i])))); });
    check_exact(r, "b32_casts.wb", wb.download(), [&](LL i) { return round_sig(double(w[i]), 8); });  // one rounding
  }
  end_case(r, kSet, "b32_casts 11x150", before);
}

void round_int(const Run& r) {
  const LL M = 45, N = 77;
  auto x = rnd<float>(M * N, 8, -40.f, 40.f);
  for (LL i = 0; i < M * N; i += 5) x[i] = std::round(x[i] * 2) / 2;  // half-way cases
  const float s = 1.0f;
  DevLocal<float> xd({M, N}, x);
  DevLocal<int> rd({M, N}, {}), fl({M, N}, {}), ce({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "b32_round_to_int", 2, xd.view(), rd.view(), fl.view(), ce.view(), s)) {
    check_exact(r, "b32_round_to_int.round", rd.download(), [&](LL i) { return std::nearbyint(double(x[i])); });
    check_exact(r, "b32_round_to_int.floor", fl.download(), [&](LL i) { return std::floor(double(x[i])); });
    check_exact(r, "b32_round_to_int.ceil", ce.download(), [&](LL i) { return std::ceil(double(x[i])); });
  }
  end_case(r, kSet, "b32_round_to_int 45x77", before);
}

// ---- bounds and offsets from memory ----
void segments(const Run& r) {
  const LL E = 5, N = 150;
  const std::vector<int> cnt = {0, 37, 1, 0, 70};  // experts receiving nothing, one row, tails
  std::vector<int> offs(E);
  int o = 3;
  for (LL e = 0; e < E; ++e) offs[e] = o, o += cnt[e] + 2;  // gaps between segments stay untouched
  const LL R = o;
  auto x = rnd<float>(R * N, 9);
  auto g = rnd<float>(E, 10, 0.5f, 2.f);
  DevLocal<float> xd({R, N}, x), gd({E}, g), y({R, N}, {});
  DevLocal<int> od({E}, offs), cd({E}, cnt);
  const int before = begin_case(r);
  if (run(r, "b32_segments_scale", 1, xd.view(), od.view(), cd.view(), gd.view(), y.view())) {
    std::vector<double> want(R * N, NAN);
    for (LL e = 0; e < E; ++e)
      for (LL i = offs[e]; i < offs[e] + cnt[e]; ++i)
        for (LL n = 0; n < N; ++n) want[i * N + n] = double(x[i * N + n]) * g[e];
    check_or_poison(r, "b32_segments_scale", y.download(), want, [&](LL i) { return 1e-6 * std::fabs(want[i]) + 1e-7; });
  }
  end_case(r, kSet, "b32_segments_scale", before);
}

void ragged(const Run& r) {
  const LL B = 21, N = 200;
  auto x = rnd<float>(B * N, 11);
  auto len = ints<long long>(B, -3, N + 5, 12);
  len[0] = 0, len[1] = N, len[2] = (1LL << 33);  // a length past 2^32 keeps the row
  DevLocal<float> xd({B, N}, x), y({B, N}, {});
  DevLocal<long long> ld({B, 1}, len);
  const int before = begin_case(r);
  if (run(r, "b32_ragged_mask", 2, xd.view(), ld.view(), y.view()))
    check_exact(r, "b32_ragged_mask", y.download(), [&](LL i) { return i % N < len[i / N] ? double(x[i]) : 0.0; });
  end_case(r, kSet, "b32_ragged_mask 21x200", before);
}

// ---- gathers and scatters ----
void embed(const Run& r) {
  const LL V = 97, D = 300, T = 77;
  auto table = rnd<bf16>(V * D, 13);
  auto ids = ints<long long>(T, -2, V + 2, 14);
  ids[0] = -1, ids[1] = V, ids[2] = (1LL << 32) + 5, ids[3] = -(1LL << 32) + 5;  // never row 5
  DevLocal<bf16> td({V, D}, table), y({T, D}, {});
  DevLocal<long long> idd({T}, ids);
  const int before = begin_case(r);
  if (run(r, "b32_embed_i64", 2, td.view(), idd.view(), y.view()))
    check_exact(r, "b32_embed_i64", y.download(), [&](LL i) {
      const LL t = i / D, id = ids[t];
      return id >= 0 && id < V ? val(table[id * D + i % D]) : 0.0;
    });
  end_case(r, kSet, "b32_embed_i64 97x300", before);
}

void embed_grad(const Run& r) {
  const LL T = 100, D = 130, V = 13;
  auto dy = rnd<float>(T * D, 15);
  auto ids = ints<int>(T, -1, V, 16);  // many duplicates, -1 and V (past the table)
  std::vector<float> zero(V * D, 0.f);
  DevLocal<float> dyd({T, D}, dy), dt({V, D}, zero);
  DevLocal<int> idd({T, 1}, ids);
  const int before = begin_case(r);
  if (run(r, "b32_embed_grad_dup", 1, dyd.view(), idd.view(), dt.view())) {
    std::vector<double> want(V * D, 0);
    for (LL t = 0; t < T; ++t)
      if (ids[t] >= 0 && ids[t] < V)
        for (LL d = 0; d < D; ++d) want[ids[t] * D + d] += dy[t * D + d];
    check_vec(r, "b32_embed_grad_dup", dt.download(), want, std::vector<double>(V * D, 1e-4));
  }
  end_case(r, kSet, "b32_embed_grad_dup 100x130", before);
}

void permute(const Run& r) {
  const LL R = 75, C = 70;
  auto x = rnd<float>(R * C, 17);
  std::vector<long long> perm(R);
  for (LL i = 0; i < R; ++i) perm[i] = i;
  std::mt19937 g(18);
  std::shuffle(perm.begin(), perm.end(), g);
  DevLocal<float> xd({R, C}, x), y({R, C}, {}), z({R, C}, {});
  DevLocal<long long> pd({R, 1}, perm);
  const int before = begin_case(r);
  if (run(r, "b32_permute_roundtrip", 2, xd.view(), pd.view(), y.view(), z.view())) {
    auto yg = y.download();
    check_exact(r, "b32_permute_roundtrip.y", yg, [&](LL i) {
      const LL row = i / C;
      const LL src = std::find(perm.begin(), perm.end(), row) - perm.begin();
      return double(x[src * C + i % C]);
    });
    check_exact(r, "b32_permute_roundtrip.z", z.download(), [&](LL i) { return double(x[i]); });
  }
  end_case(r, kSet, "b32_permute_roundtrip 75x70", before);
}

// ---- running sums and counts ----
// y must hold x's inclusive running sums, exactly.
void check_running_sums(const std::string& kn, const std::vector<long long>& x, const std::vector<long long>& y) {
  long long s = 0;
  LL bad = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i], bad += y[i] != s;
  if (bad) pkt::fail(kn + " N=" + std::to_string(x.size()) + ": " + std::to_string(bad) + " wrong");
}
void cumsums(const Run& r) {
  for (LL N : {1LL, 999LL, 1000LL, 4321LL}) {
    auto x = ints<long long>(N, -(1LL << 40), 1LL << 40, 19 + unsigned(N));
    const LL chunks = (N + 999) / 1000;
    DevLocal<long long> xd({N}, x), tot({chunks, 1}, {}), off({chunks, 1}, {}), y({N}, {});
    const int before = begin_case(r);
    if (run(r, "b32_cumsum_long", 2, xd.view(), tot.view(), off.view(), y.view()))
      check_running_sums("b32_cumsum_long", x, y.download());
    end_case(r, kSet, "b32_cumsum_long N=" + std::to_string(N), before);
  }
  for (LL N : {1LL, 1024LL, 5000LL}) {  // the carry as an exact i64 row_sum
    auto x = ints<long long>(N, -(1LL << 40), 1LL << 40, 29 + unsigned(N));
    DevLocal<long long> xd({N}, x), y({N}, {});
    const int before = begin_case(r);
    if (run(r, "b32_cumsum_carry", 2, xd.view(), y.view())) check_running_sums("b32_cumsum_carry", x, y.download());
    end_case(r, kSet, "b32_cumsum_carry N=" + std::to_string(N), before);
  }
  {  // i32 row sum / max / min (37 rows: a tail of the 16-row tiles), i64 row sums past 2^53 (7 rows of 1000)
    const LL M = 37, N = 64, W = 7, K = 1000;
    auto x = ints<int>(M * N, -2000000, 2000000, 31);
    auto w = ints<long long>(W * K, -(1LL << 55), 1LL << 55, 37);
    DevLocal<int> xd({M, N}, x), s({M, 1}, {}), mx({M, 1}, {}), mn({M, 1}, {});
    DevLocal<long long> wd({W, K}, w), ws({W, 1}, {});
    const int before = begin_case(r);
    if (run(r, "b32_int_row_stats", 2, xd.view(), s.view(), mx.view(), mn.view(), wd.view(), ws.view())) {
      auto sg = s.download(), mxg = mx.download(), mng = mn.download();
      auto wsg = ws.download();
      LL bad = 0;
      for (LL m = 0; m < M; ++m) {
        long long sum = 0;
        int hi = x[m * N], lo = x[m * N];
        for (LL n = 0; n < N; ++n) sum += x[m * N + n], hi = std::max(hi, x[m * N + n]), lo = std::min(lo, x[m * N + n]);
        bad += sg[m] != int(sum) || mxg[m] != hi || mng[m] != lo;
      }
      for (LL m = 0; m < W; ++m) {
        long long sum = 0;
        for (LL k = 0; k < K; ++k) sum += w[m * K + k];
        bad += wsg[m] != sum;
      }
      if (bad) pkt::fail("b32_int_row_stats: " + std::to_string(bad) + " rows wrong");
    }
    end_case(r, kSet, "b32_int_row_stats 37x64, 7x1000", before);
  }
  {
    const LL M = 19, N = 333;
    auto x = ints<int>(M * N, -50, 50, 23);
    DevLocal<int> xd({M, N}, x), y({M, N}, {});
    const int before = begin_case(r);
    if (run(r, "b32_cumsum_rows", 2, xd.view(), y.view())) {
      std::vector<double> want(M * N);
      for (LL m = 0; m < M; ++m) {
        double s = 0;
        for (LL n = 0; n < N; ++n) want[m * N + n] = s += x[m * N + n];
      }
      check_vec(r, "b32_cumsum_rows", y.download(), want, std::vector<double>(M * N, 0));
    }
    end_case(r, kSet, "b32_cumsum_rows 19x333", before);
  }
}

void histograms(const Run& r) {
  {
    const LL T = 250, K = 3, E = 37;
    auto ids = ints<int>(T * K, 0, 9, 24);  // skewed: experts 10..36 receive nothing
    ids[0] = -1, ids[1] = E, ids[2] = 36;
    DevLocal<int> idd({T, K}, ids), cnt({1, E}, {}), off({1, E}, {});
    const int before = begin_case(r);
    if (run(r, "b32_hist_e37", 2, idd.view(), cnt.view(), off.view())) {
      std::vector<double> c(E, 0), o(E, 0);
      for (int v : ids)
        if (v >= 0 && v < E) c[v] += 1;
      for (LL e = 1; e < E; ++e) o[e] = o[e - 1] + c[e - 1];
      check_vec(r, "b32_hist_e37.counts", cnt.download(), c, std::vector<double>(E, 0));
      check_vec(r, "b32_hist_e37.offsets", off.download(), o, std::vector<double>(E, 0));
    }
    end_case(r, kSet, "b32_hist_e37 250x3", before);
  }
  {
    const LL N = 1000, B = 300;
    auto ids = ints<long long>(N, -5, B + 5, 25);
    ids[0] = (1LL << 32) + 7;  // counts nowhere (not bin 7)
    DevLocal<long long> idd({N}, ids);
    DevLocal<int> cnt({1, B}, {});
    const int before = begin_case(r);
    if (run(r, "b32_hist_bins_tiled", 2, idd.view(), cnt.view())) {
      std::vector<double> c(B, 0);
      for (long long v : ids)
        if (v >= 0 && v < B) c[v] += 1;
      check_vec(r, "b32_hist_bins_tiled", cnt.download(), c, std::vector<double>(B, 0));
    }
    end_case(r, kSet, "b32_hist_bins_tiled 1000 ids, 300 bins", before);
  }
}

void combine(const Run& r) {
  const LL T = 45, K = 3, S = 60, D = 200;
  auto out = rnd<bf16>(S * D, 26);
  auto slot = ints<int>(T * K, -1, S, 27);  // -1 (dropped) and S (past the buffer) contribute nothing
  auto wts = rnd<float>(T * K, 28, 0.f, 1.f);
  DevLocal<bf16> od({S, D}, out), y({T, D}, {});
  DevLocal<int> sd({T, K}, slot);
  DevLocal<float> wd({T, K}, wts);
  const int before = begin_case(r);
  if (run(r, "b32_moe_combine", 2, od.view(), sd.view(), wd.view(), y.view()))
    check_rel(r, "b32_moe_combine", y.download(), [&](LL i) {
      const LL t = i / D, d = i % D;
      double s = 0;
      for (LL k = 0; k < K; ++k) {
        const int sl = slot[t * K + k];
        if (sl >= 0 && sl < S) s += val(out[sl * D + d]) * wts[t * K + k];
      }
      return s;
    }, kBf, 1e-5);
  end_case(r, kSet, "b32_moe_combine 45x3", before);
}

// ---- fp8 ----
void fp8(const Run& r) {
  const LL M = 40, N = 300, NB = (N + 127) / 128;
  auto x = rnd<bf16>(M * N, 29, -3.f, 3.f);
  for (LL n = 0; n < 128; ++n) x[5 * N + n] = pkt::from_host<bf16>(0.f);  // a zero block
  DevLocal<bf16> xd({M, N}, x), yd({M, N}, {});
  DevLocal<pk::f8e4m3> q({M, N}, {});
  DevLocal<float> s({M, NB}, {});
  const int before = begin_case(r);
  if (run(r, "b32_fp8_block_quant", 2, xd.view(), q.view(), s.view())) {
    std::vector<double> amax(M * NB, 0);
    for (LL i = 0; i < M * N; ++i) amax[(i / N) * NB + (i % N) / 128] = std::max(amax[(i / N) * NB + (i % N) / 128], std::fabs(val(x[i])));
    auto qg = q.download();
    check_exact(r, "b32_fp8_block_quant.q", qg, [&](LL i) {
      const double a = amax[(i / N) * NB + (i % N) / 128];
      return a > 0 ? e4m3(double(float(val(x[i])) * (448.0f / float(a)))) : 0.0;
    });
    check_rel(r, "b32_fp8_block_quant.s", s.download(), [&](LL i) { return amax[i] / 448.0; }, 1e-6, 0);
    if (run(r, "b32_fp8_block_dequant", 2, q.view(), s.view(), yd.view()))
      check_rel(r, "b32_fp8_block_dequant", yd.download(), [&](LL i) { return val(x[i]); }, 1.0 / 16 + kBf, 1e-4);
  }
  end_case(r, kSet, "b32_fp8_block_quant + dequant 40x300", before);
  {
    const LL L = 200;
    auto v = rnd<float>(L, 30, -1e5f, 1e5f);
    v[0] = NAN, v[1] = INFINITY, v[2] = -INFINITY, v[3] = 448.f, v[4] = 464.f, v[5] = -470.f, v[6] = 57344.f,
    v[7] = 61440.f, v[8] = 1e-9f, v[9] = -0.f;
    DevLocal<float> vd({L}, v), b4({L}, {}), b5({L}, {});
    DevLocal<pk::f8e4m3> q4({L}, {});
    DevLocal<pk::f8e5m2> q5({L}, {});
    const int b2 = begin_case(r);
    if (run(r, "b32_fp8_saturate", 2, vd.view(), q4.view(), q5.view(), b4.view(), b5.view())) {
      auto g4 = b4.download(), g5 = b5.download();
      LL bad = 0;
      for (LL i = 0; i < L; ++i) {
        const double w4 = e4m3(v[i]), w5 = e5m2(v[i]);
        bad += !(std::isnan(w4) ? std::isnan(g4[i]) : g4[i] == w4);
        bad += !(std::isnan(w5) ? std::isnan(g5[i]) : g5[i] == w5);
      }
      if (bad) pkt::fail("b32_fp8_saturate: " + std::to_string(bad) + " wrong (saturation, NaN)");
    }
    end_case(r, kSet, "b32_fp8_saturate 200", b2);
  }
}

// ---- transposes ----
void transposes(const Run& r) {
  const LL R = 100, C = 170;
  auto x = rnd<float>(R * C, 31);
  {
    DevLocal<float> xd({R, C}, x), y({C, R}, {});
    const int before = begin_case(r);
    if (run(r, "b32_transpose_tails", 2, xd.view(), y.view()))
      check_exact(r, "b32_transpose_tails", y.download(), [&](LL i) { return double(x[(i % R) * C + i / R]); });
    end_case(r, kSet, "b32_transpose_tails 100x170", before);
  }
  {
    const LL A = 37, B = 90;
    auto xi = ints<int>(A * B, -1000, 1000, 32);
    DevLocal<int> xd({A, B}, xi), y({B, A}, {});
    const int before = begin_case(r);
    if (run(r, "b32_transpose_i32", 2, xd.view(), y.view()))
      check_exact(r, "b32_transpose_i32", y.download(), [&](LL i) {
        const LL j = i / A, k = i % A;  // y[j, k] = x[k, j] * 3 - k
        return double(xi[k * B + j] * 3 - k);
      });
    end_case(r, kSet, "b32_transpose_i32 37x90", before);
  }
  {
    DevLocal<float> xd({R, C}, x), cs({1, C}, {});
    const int before = begin_case(r);
    if (run(r, "b32_colsum_transposed", 1, xd.view(), cs.view()))
      check_rel(r, "b32_colsum_transposed", cs.download(), [&](LL n) {
        double s = 0;
        for (LL m = 0; m < R; ++m) s += x[m * C + n];
        return s;
      }, 1e-5, 1e-5);
    end_case(r, kSet, "b32_colsum_transposed 100x170", before);
  }
}

// ---- sampling and edge shapes ----
void sample(const Run& r) {
  const LL B = 13, V = 1500;
  auto lg = rnd<float>(B * V, 33, -3.f, 3.f);
  const LL seed = -1234567890123LL;
  const float inv_t = 1.25f;
  DevLocal<float> ld({B, V}, lg);
  DevLocal<long long> tok({B, 1}, {});
  const int before = begin_case(r);
  if (run(r, "b32_gumbel_sample", 2, ld.view(), tok.view(), seed, inv_t)) {
    auto tg = tok.download();
    for (LL b = 0; b < B; ++b) {
      // Scores in f32 as the kernel computes them (log of the flushed uniform); a near-tie may pick either.
      double best = -1e300, second = -1e300;
      LL bi = -1;
      for (LL j = 0; j < V; ++j) {
        const float u = std::max(uniform_at(seed, {b, j}), 1e-20f);
        const double g = double(lg[b * V + j] * inv_t) - std::log(-std::log(double(u)));
        if (g > best) second = best, best = g, bi = j;
        else second = std::max(second, g);
      }
      if (tg[b] != bi && best - second > 1e-4)
        pkt::fail("b32_gumbel_sample row " + std::to_string(b) + ": got " + std::to_string(tg[b]) + ", want " + std::to_string(bi));
    }
  }
  end_case(r, kSet, "b32_gumbel_sample 13x1500", before);
}

void edges(const Run& r) {
  for (LL N : {0LL, 1LL, 65LL}) {
    const LL C = 129;
    auto x = rnd<float>(C, 34);
    auto a = ints<int>(std::max<LL>(N, 1), -5, 5, 35);
    a.resize(N);
    DevLocal<float> xd({1, C}, x), y({1, C}, {});
    DevLocal<int> ad({N}, N ? a : std::vector<int>{}), bd({N}, {});
    const int before = begin_case(r);
    if (run(r, "b32_one_row_and_empty", 2, xd.view(), y.view(), ad.view(), bd.view())) {
      check_exact(r, "b32_one_row_and_empty.y", y.download(), [&](LL i) { return 2.0 * x[i]; });
      std::vector<double> want(N);
      double s = 0;
      for (LL i = 0; i < N; ++i) {
        if (i % 64 == 0) s = 0;  // 64-element tiles: each tile's own running sums
        want[i] = s += a[i];
      }
      check_vec(r, "b32_one_row_and_empty.b", bd.download(), want, std::vector<double>(N, 0));
    }
    end_case(r, kSet, "b32_one_row_and_empty N=" + std::to_string(N), before);
  }
}

// ---- peers ----
void peers(const Run& r) {
  const int W = r.W, me = r.me;
  {  // rows pulled from the ranks' tables by (rank, row)
    const LL V = 50, D = 100, T = 70;
    std::vector<std::vector<float>> tabs;
    for (int q = 0; q < W; ++q) tabs.push_back(rnd<float>(V * D, 40 + 3u * unsigned(q)));
    auto src = ints<int>(T * 2, 0, 0, 41);
    auto ranks = ints<int>(T, -1, W, 42 + unsigned(me)), rows = ints<int>(T, -1, V, 43 + unsigned(me));
    for (LL t = 0; t < T; ++t) src[2 * t] = ranks[t], src[2 * t + 1] = rows[t];
    SymArg<float> tab(r.ctx, {V, D}, &tabs[me]);
    DevLocal<int> sd({T, 2}, src);
    DevLocal<float> y({T, D}, {});
    const int before = begin_case(r);
    if (run(r, "b32_gather_from_peers", 2, tab.view, sd.view(), y.view()))
      check_exact(r, "b32_gather_from_peers", y.download(), [&](LL i) {
        const LL t = i / D, p = ranks[t], row = rows[t];
        return p >= 0 && p < W && row >= 0 && row < V ? double(tabs[p][row * D + i % D]) : 0.0;
      });
    end_case(r, kSet, "b32_gather_from_peers 70x100", before);
  }
  {  // all_to_all_v: rank q sends its rows grouped by destination; counts from the routing (rank 0 receives nothing)
    const LL Nr = 90, H = 100, M = 3 * Nr;
    std::vector<std::vector<int>> dests(W);
    std::vector<std::vector<float>> xs(W);
    for (int q = 0; q < W; ++q) {
      auto d = ints<int>(Nr, W > 1 ? 1 : 0, W - 1, 44 + 5u * unsigned(q));
      std::sort(d.begin(), d.end());
      dests[q] = d;
      xs[q] = rnd<float>(Nr * H, 45 + 5u * unsigned(q));
    }
    DevLocal<float> xd({Nr, H}, xs[me]);
    DevLocal<int> dd({Nr}, dests[me]);
    SymArg<int> recv(r.ctx, {W}, nullptr);
    SymArg<float> y(r.ctx, {M, H}, nullptr);
    const int before = begin_case(r);
    if (run(r, "b32_a2av_counts", 1, xd.view(), dd.view(), recv.view, y.view)) {
      std::vector<double> want(M * H, NAN), wc(W, 0);
      LL at = 0;
      for (int q = 0; q < W; ++q)
        for (LL i = 0; i < Nr; ++i)
          if (dests[q][i] == me) {
            for (LL h = 0; h < H; ++h) want[at * H + h] = xs[q][i * H + h];
            ++at, wc[q] += 1;
          }
      check_vec(r, "b32_a2av_counts.recv", recv.download(), wc, std::vector<double>(W, 0));
      check_or_poison(r, "b32_a2av_counts.y", y.download(), want, exact());
    }
    end_case(r, kSet, "b32_a2av_counts 90 rows a rank", before);
  }
  {  // vocabulary-parallel embedding: rank q holds rows q V .. q V + V
    const LL V = 40, D = 70, T = 50;
    std::vector<std::vector<bf16>> tabs;
    for (int q = 0; q < W; ++q) tabs.push_back(rnd<bf16>(V * D, 46 + 3u * unsigned(q)));
    auto ids = ints<int>(T, -1, W * V, 47);  // the same ids on every rank; -1 and W V read nothing
    DevLocal<bf16> td({V, D}, tabs[me]);
    DevLocal<int> idd({T}, ids);
    SymArg<float> part(r.ctx, {T, D}, nullptr), out(r.ctx, {T, D}, nullptr);
    const int before = begin_case(r);
    if (run(r, "b32_vp_embed", 2, td.view(), idd.view(), part.view, out.view))
      check_exact(r, "b32_vp_embed", out.download(), [&](LL i) {
        const LL id = ids[i / D];
        return id >= 0 && id < W * V ? val(tabs[id / V][(id % V) * D + i % D]) : 0.0;
      });
    end_case(r, kSet, "b32_vp_embed 50 ids", before);
  }
}

void cases(const Run& r) {
  if (r.W == 1) {
    divmod(r), hash(r), clamp(r), casts(r), round_int(r), segments(r), ragged(r);
    embed(r), embed_grad(r), permute(r), cumsums(r), histograms(r), combine(r);
    fp8(r), transposes(r), sample(r), edges(r);
  }
  peers(r);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_USER_SPECS32_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return pkt::finish("user_specs32_jit_test");
  return run_worlds("user_specs32_jit_test", g_kernels, cases);
}

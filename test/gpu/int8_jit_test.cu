// i8 tensors and tiles (test/specs/int8.pk.cpp) through the JIT on one GPU, against host models.
//
// round / floor / ceil of float tiles (half-way cases to even), including halves, NaN and infinity.
// Casts: f32 -> i8 rounds toward zero and saturates (NaN 0; the inputs include NaN, infinities,
// +-127.9, -128.9 and values past the range), i32 -> i8 wraps; i8 arithmetic wraps at 8 bits (+, *,
// -, ^, >> arithmetic, <<) over every i8 value at random; per-row quantisation (q = i8(x * 127 /
// amax)) and its inverse; an int8 embedding (rows by i32 ids, ids out of the table reading zeros); an
// i8 zero point read as a scalar; an all-gather of i8 shards at W = 1-3 (ranks sharing one GPU); and
// weight-only int8 GEMMs, whose i8 B the GEMM template widens to bf16 / f16 in its ring (every i8
// value at random, partial tiles in M, N and K; K = 72 runs the general-path twin, and one kernel
// also with templates off). Outputs are poisoned first (NaN; -1 for i8 and i32, which random data
// hit at 1 in 256 per element, so a kernel that left outputs unwritten fails nearly every element).
//
// GEMM bounds: a bf16 / f16 value times an i8 one is exact in fp32, so the fp32 sum over K is within 1e-5 of the
// sum of the terms' magnitudes; a bf16 output adds two units in its last place (2^-7 of the value).
#include <pk/jit/compile.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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
using i8 = signed char;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"i8_quantise_rows", false}, {"i8_dequantise_rows", false},  {"i8_arith", false},
    {"i8_embedding", false},     {"i8_zero_point", false},       {"i8_all_gather", false},
    {"rounding", false},         {"i8_w8a8", false},
    {"i8_weight_only_gemm", true}, {"i8_weight_only_small", true}, {"i8_epilogue_gemm", true},
    {"i8_w8a8_s32", true},         {"i8_gemm_s32", true},        {"i8_w8a8_requant", true},
};
const std::vector<const char*> kGeneralToo = {"i8_weight_only_gemm", "i8_epilogue_gemm", "i8_w8a8_s32",
                                              "i8_gemm_s32", "i8_w8a8_requant"};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "int8", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}

std::vector<i8> bytes(LL n, unsigned seed) { return ints<i8>(n, -128, 127, seed); }
i8 wrap8(long long v) { return static_cast<i8>(static_cast<unsigned char>(static_cast<unsigned long long>(v) & 0xFF)); }
// cvt.rzi.sat.s8.f32: toward zero, clamped, NaN 0.
i8 sat8(float v) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(double(v));
  return static_cast<i8>(std::max(-128.0, std::min(127.0, t)));
}

void quantise_rows(const Run& r, LL M, unsigned seed) {
  auto x = rnd<bf16>(M * 256, seed, -3.f, 3.f);
  for (LL j = 0; j < 256; ++j) x[5 * 256 + j] = pkt::from_host<bf16>(0.f);  // a zero row: amax 1e-30
  DevLocal<bf16> xd({M, 256}, x);
  DevLocal<i8> q({M, 256}, {});
  DevLocal<float> s({M, 1}, {});
  const int before = begin_case(r);
  if (run(r, "i8_quantise_rows", 2, xd.view(), q.view(), s.view())) {
    std::vector<float> amax(M), mult(M);
    for (LL m = 0; m < M; ++m) {
      float a = 0;
      for (LL j = 0; j < 256; ++j) a = std::max(a, std::fabs(pkt::to_host(x[m * 256 + j])));
      amax[m] = std::max(a, 1e-30f);
      mult[m] = 127.0f / amax[m];
    }
    const auto got = q.download();
    LL bad = 0;
    for (LL i = 0; i < M * 256; ++i) {
      const float v = pkt::to_host(x[i]) * mult[i / 256];
      const i8 want = sat8(std::nearbyint(v));  // half-way cases to even (the default rounding mode)
      // One count either way only where v lies within 1e-5 of a half-way point (the spec's f32 products may be
      // formed in another order); rounding against truncation differs by far more than that elsewhere.
      const float frac = std::fabs(v - std::trunc(v));
      const bool edge = std::fabs(frac - 0.5f) < 1e-5f * std::max(1.f, std::fabs(v));
      if (got[i] != want && !(edge && std::abs(got[i] - want) <= 1) && bad++ < 3)
        pkt::fail("i8_quantise_rows element " + std::to_string(i) + ": got " + std::to_string(int(got[i])) +
                  ", want " + std::to_string(int(want)) + " (value " + std::to_string(v) + ")");
    }
    if (bad > 3) pkt::fail("i8_quantise_rows: " + std::to_string(bad) + " elements wrong");
    check(r, "i8_quantise_rows.s", s.download(), [&](LL m) { return double(amax[m]) / 127.0; },
          [&](LL m) { return 1e-6 * amax[m] / 127.0 + 1e-40; });
  }
  end_case(r, "i8_quantise_rows M=" + std::to_string(M), before);
}

void dequantise_rows(const Run& r, LL M, LL N, unsigned seed) {
  const auto q = bytes(M * N, seed);
  const auto s = rnd<float>(M, seed + 1, 1e-3f, 1e-1f);
  DevLocal<i8> qd({M, N}, q);
  DevLocal<float> sd({M, 1}, s);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_dequantise_rows", 2, qd.view(), sd.view(), y.view()))
    check(r, "i8_dequantise_rows.y", y.download(), [&](LL i) { return bf16r(float(q[i]) * s[i / N]); }, exact());
  end_case(r, "i8_dequantise_rows " + dims({M, N}), before);
}

void arith(const Run& r, LL M, LL N, unsigned seed) {
  const LL n = M * N;
  const auto a = bytes(n, seed), b = bytes(n, seed + 1);
  const auto v = ints<int>(n, std::numeric_limits<int>::min(), std::numeric_limits<int>::max(), seed + 2);
  auto x = rnd<float>(n, seed + 3, -300.f, 300.f);
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY, 127.9f, -128.9f, -0.5f, 0.99f, -127.99f, 128.f, -129.f};
  for (int i = 0; i < 10; ++i) x[(7 * i + 3) % n] = specials[i];
  DevLocal<float> xd({M, N}, x);
  DevLocal<int> vd({M, N}, v), g({M, N}, {});
  DevLocal<i8> ad({M, N}, a), bd({M, N}, b), c({M, N}, {}), d({M, N}, {}), e({M, N}, {}), f({M, N}, {}),
      w({M, N}, {}), sat({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_arith", 2, xd.view(), vd.view(), ad.view(), bd.view(), c.view(), d.view(), e.view(), f.view(),
          w.view(), sat.view(), g.view())) {
    check(r, "i8_arith.c", c.download(), [&](LL i) { return double(wrap8(a[i] + b[i])); }, exact());
    check(r, "i8_arith.d", d.download(), [&](LL i) { return double(wrap8(3 * a[i] - b[i])); }, exact());
    check(r, "i8_arith.e", e.download(), [&](LL i) { return double(i8(a[i] ^ b[i]) >> 1); }, exact());
    check(r, "i8_arith.f", f.download(), [&](LL i) { return double(wrap8(LL(a[i]) * 4)); }, exact());
    check(r, "i8_arith.w", w.download(), [&](LL i) { return double(wrap8(v[i])); }, exact());
    check(r, "i8_arith.sat", sat.download(), [&](LL i) { return double(sat8(x[i])); }, exact());
    check(r, "i8_arith.g", g.download(), [&](LL i) { return double(int(a[i]) * int(b[i])); }, exact());
  }
  end_case(r, "i8_arith " + dims({M, N}), before);
}

void rounding(const Run& r, LL M, LL N, unsigned seed) {
  auto x = rnd<float>(M * N, seed, -50.f, 50.f);
  const float halves[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 1e9f + 0.f, -0.f, 8388609.f, NAN, INFINITY};
  for (int i = 0; i < 11; ++i) x[(5 * i + 1) % (M * N)] = halves[i];
  for (LL i = 200; i < 400 && i < M * N; ++i) x[i] = std::floor(x[i]) + 0.5f;  // many half-way cases
  DevLocal<float> xd({M, N}, x), rd({M, N}, {}), fd({M, N}, {});
  DevLocal<bf16> cd({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "rounding", 2, xd.view(), rd.view(), fd.view(), cd.view())) {
    auto same = [](double g, double w) { return (std::isnan(g) && std::isnan(w)) || g == w; };
    const auto gr = rd.download(), gf = fd.download();
    const auto gc = cd.download();
    LL bad = 0;
    for (LL i = 0; i < M * N; ++i) {
      const bool ok = same(gr[i], std::nearbyint(x[i])) && same(gf[i], std::floor(x[i])) &&
                      same(val(gc[i]), bf16r(std::ceil(x[i])));
      if (!ok && bad++ < 3)
        pkt::fail("rounding element " + std::to_string(i) + " of " + std::to_string(x[i]) + ": round " +
                  std::to_string(gr[i]) + ", floor " + std::to_string(gf[i]) + ", ceil " + std::to_string(val(gc[i])));
    }
    if (bad > 3) pkt::fail("rounding: " + std::to_string(bad) + " elements wrong");
  }
  end_case(r, "rounding " + dims({M, N}), before);
}

void embedding(const Run& r, LL T, LL V, LL N, unsigned seed) {
  auto ids = ints<int>(T, 0, V - 1, seed);
  ids[1] = -1, ids[T - 2] = int(V);  // outside the table: rows of zeros
  const auto table = bytes(V * N, seed + 1);
  const auto s = rnd<float>(V, seed + 2, 0.01f, 0.1f);
  DevLocal<int> idd({T}, ids);
  DevLocal<i8> td({V, N}, table);
  DevLocal<float> sd({V, 1}, s);
  DevLocal<bf16> y({T, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_embedding", 2, idd.view(), td.view(), sd.view(), y.view()))
    check(r, "i8_embedding.y", y.download(),
          [&](LL i) {
            const LL id = ids[i / N];
            return id < 0 || id >= V ? 0.0 : bf16r(float(table[id * N + i % N]) * s[id]);
          },
          exact());
  end_case(r, "i8_embedding " + dims({T, V, N}), before);
}

void zero_point(const Run& r, LL M, LL N, unsigned seed) {
  const auto q = bytes(M * N, seed);
  const std::vector<i8> zp = {i8(-37), i8(5)};
  const float scale = 0.0625f;
  DevLocal<i8> qd({M, N}, q), zd({2}, zp);
  DevLocal<float> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_zero_point", 2, qd.view(), zd.view(), y.view(), scale))
    check(r, "i8_zero_point.y", y.download(), [&](LL i) { return (q[i] + 37) * 0.0625; }, exact());
  end_case(r, "i8_zero_point " + dims({M, N}), before);
}

void all_gather(const Run& r, LL R, LL C, unsigned seed) {
  std::vector<std::vector<i8>> x(r.W);
  for (int q = 0; q < r.W; ++q) x[q] = bytes(R * C, seed + q);
  SymArg<i8> xd(r.ctx, {R, C}, &x[r.me]), y(r.ctx, {r.W * R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "i8_all_gather", 2, xd.view, y.view))
    check(r, "i8_all_gather.y", y.download(), [&](LL i) { return double(x[i / (R * C)][i % (R * C)]); }, exact());
  end_case(r, "i8_all_gather " + dims({R, C}), before);
}

// y = x * i8(w)^T (* s[n] for the bf16 kernel); X bf16 or f16, Y bf16 or f32.
template <class X, class Y>
void weight_only(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed) {
  const bool scaled = kn.rfind("i8_weight_only_gemm", 0) == 0;
  const auto x = rnd<X>(M * Kd, seed), s = rnd<float>(N, seed + 2, 0.5f, 2.f);
  const auto w = bytes(N * Kd, seed + 1);
  DevLocal<X> xd({M, Kd}, x);
  DevLocal<i8> wd({N, Kd}, w);
  DevLocal<float> sd({N}, s);
  DevLocal<Y> y({M, N}, {});
  const int before = begin_case(r);
  const bool ok = scaled ? run(r, kn, 2, xd.view(), wd.view(), sd.view(), y.view()) : run(r, kn, 2, xd.view(), wd.view(), y.view());
  if (ok) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); }, [&](LL k, LL n) { return double(w[n * Kd + k]); });
    const double ulps = std::is_same<Y, bf16>::value ? std::ldexp(1.0, -7) : 1e-6;
    auto sc = [&](LL i) { return scaled ? double(s[i % N]) : 1.0; };
    check(r, kn + ".y", y.download(), [&](LL i) { return g.c[i] * sc(i); },
          [&](LL i) { return ulps * std::fabs(g.c[i] * sc(i)) + 1e-5 * g.mag[i] * sc(i) + 1e-6; });
  }
  end_case(r, kn + " " + dims({M, N, Kd}) + (Kd % 16 ? " (general twin)" : ""), before);
}

// A bf16 GEMM whose epilogue reads i8 tensors: y = bf16((mk != 0 ? acc * code[0] : 0) - max(zp[n], -100)),
// every i8 value at random in mk and zp (a third of the mask 0).
void epilogue_gemm(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed) {
  const auto x = rnd<bf16>(M * Kd, seed), w = rnd<bf16>(N * Kd, seed + 1);
  auto mk = bytes(M * N, seed + 2);
  for (LL i = 0; i < M * N; i += 3) mk[i] = 0;
  const auto zp = bytes(N, seed + 3);
  const std::vector<i8> code = {-7};
  DevLocal<bf16> xd({M, Kd}, x), wd({N, Kd}, w);
  DevLocal<i8> mkd({M, N}, mk), zpd({N}, zp), coded({1}, code);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), mkd.view(), zpd.view(), coded.view(), y.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); }, [&](LL k, LL n) { return val(w[n * Kd + k]); });
    auto want = [&](LL i) {
      return (mk[i] != 0 ? g.c[i] * code[0] : 0.0) - std::max(double(zp[i % N]), -100.0);
    };
    check(r, kn + ".y", y.download(), want,
          [&](LL i) { return std::ldexp(1.0, -7) * std::fabs(want(i)) + 1e-5 * g.mag[i] * 7 + 1e-6; });
  }
  end_case(r, kn + " " + dims({M, N, Kd}) + (Kd % 16 ? " (general twin)" : ""), before);
}

// W8A8 on the int8 tensor cores: y = bf16(float(sum_k x w) * sx[m] * sw[n]), every i8 value at
// random in both operands; the s32 sum is exact (|sum| < 2^31 for K <= 2^17), its f32 conversion
// rounds once.
void w8a8_s32(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed) {
  const auto x = bytes(M * Kd, seed), w = bytes(N * Kd, seed + 1);
  const auto sx = rnd<float>(M, seed + 2, 1e-3f, 1e-2f), sw = rnd<float>(N, seed + 3, 1e-3f, 1e-2f);
  DevLocal<i8> xd({M, Kd}, x), wd({N, Kd}, w);
  DevLocal<float> sxd({M, 1}, sx), swd({N}, sw);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), sxd.view(), swd.view(), y.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return double(x[m * Kd + k]); }, [&](LL k, LL n) { return double(w[n * Kd + k]); });
    auto want = [&](LL i) { return double(float(g.c[i])) * sx[i / N] * sw[i % N]; };
    check(r, kn + ".y", y.download(), want, [&](LL i) { return std::ldexp(1.0, -7) * std::fabs(want(i)) + 1e-6; });
  }
  end_case(r, kn + " " + dims({M, N, Kd}) + (Kd % 16 ? " (general twin)" : ""), before);
}

// The raw s32 sums c = x w^T and d = c - 3 * (c >> 4), compared exactly.
void gemm_s32(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed) {
  const auto x = bytes(M * Kd, seed), w = bytes(N * Kd, seed + 1);
  DevLocal<i8> xd({M, Kd}, x), wd({N, Kd}, w);
  DevLocal<int> c({M, N}, {}), d({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), c.view(), d.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return double(x[m * Kd + k]); }, [&](LL k, LL n) { return double(w[n * Kd + k]); });
    check(r, kn + ".c", c.download(), [&](LL i) { return g.c[i]; }, exact());
    check(r, kn + ".d", d.download(), [&](LL i) {
      const long long v = static_cast<long long>(g.c[i]);
      return double(v - 3 * (v >> 4));  // arithmetic shift, as the language's >> on i32
    }, exact());
  }
  end_case(r, kn + " " + dims({M, N, Kd}) + (Kd % 16 ? " (general twin)" : ""), before);
}

// An integer to bf16, rounded once to nearest even (8 significant bits).
double bf16_of_integer(long long v) {
  const unsigned long long a = v < 0 ? -static_cast<unsigned long long>(v) : v;
  int bits = 0;
  while ((a >> bits) > 0) ++bits;
  if (bits <= 8) return double(v);
  const int drop = bits - 8;
  unsigned long long q = a >> drop;
  const unsigned long long rest = a & ((1ull << drop) - 1), half = 1ull << (drop - 1);
  if (rest > half || (rest == half && (q & 1))) ++q;
  const double r = std::ldexp(double(q), drop);
  return v < 0 ? -r : r;
}

// Requantised sums and bf16 sums (K = 2048 gives sums past 2^24): c = i32(rint(float(acc) * s[m])),
// d = bf16(acc), both exact against the host's float arithmetic and a once-rounded bf16.
void w8a8_requant(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed) {
  auto x = bytes(M * Kd, seed), w = bytes(N * Kd, seed + 1);
  for (LL k = 0; k < Kd; ++k) x[k] = 127, w[k] = 127;  // row 0 times column 0: 127^2 K, past 2^24 at K = 2048
  const auto s = rnd<float>(M, seed + 2, 0.01f, 0.5f);
  DevLocal<i8> xd({M, Kd}, x), wd({N, Kd}, w);
  DevLocal<float> sd({M, 1}, s);
  DevLocal<int> c({M, N}, {});
  DevLocal<bf16> d({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), sd.view(), c.view(), d.view())) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return double(x[m * Kd + k]); }, [&](LL k, LL n) { return double(w[n * Kd + k]); });
    check(r, kn + ".c", c.download(), [&](LL i) {
      const float f = static_cast<float>(static_cast<long long>(g.c[i])) * s[i / N];
      return double(static_cast<int>(std::rint(f)));
    }, exact());
    check(r, kn + ".d", d.download(), [&](LL i) { return bf16_of_integer(static_cast<long long>(g.c[i])); }, exact());
  }
  end_case(r, kn + " " + dims({M, N, Kd}) + (Kd % 16 ? " (general twin)" : ""), before);
}

// W8A8 on the general path: y = bf16((x w^T) * sx[m] * sw[n]), every i8 value at random in both operands.
void w8a8(const Run& r, LL M, LL N, LL Kd, unsigned seed) {
  const auto x = bytes(M * Kd, seed), w = bytes(N * Kd, seed + 1);
  const auto sx = rnd<float>(M, seed + 2, 1e-3f, 1e-2f), sw = rnd<float>(N, seed + 3, 1e-3f, 1e-2f);
  DevLocal<i8> xd({M, Kd}, x), wd({N, Kd}, w);
  DevLocal<float> sxd({M, 1}, sx), swd({N}, sw);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "i8_w8a8", 2, xd.view(), wd.view(), sxd.view(), swd.view(), y.view())) {
    // Every product and partial sum is an integer below 2^24 in magnitude (K <= 1024): the f32 sum is exact.
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return double(x[m * Kd + k]); }, [&](LL k, LL n) { return double(w[n * Kd + k]); });
    check(r, "i8_w8a8.y", y.download(), [&](LL i) { return g.c[i] * sx[i / N] * sw[i % N]; },
          [&](LL i) { return std::ldexp(1.0, -7) * std::fabs(g.c[i] * sx[i / N] * sw[i % N]) + 1e-6; });
  }
  end_case(r, "i8_w8a8 " + dims({M, N, Kd}), before);
}

void cases(const Run& r) {
  if (r.W == 1) {
    quantise_rows(r, 37, 11);
    dequantise_rows(r, 37, 300, 21);
    arith(r, 37, 100, 31);
    rounding(r, 37, 100, 35);
    embedding(r, 37, 50, 300, 41);
    zero_point(r, 37, 100, 51);
    weight_only<bf16, bf16>(r, "i8_weight_only_gemm", 300, 520, 208, 61);
    weight_only<bf16, bf16>(r, "i8_weight_only_gemm", 129, 264, 1024, 71);
    weight_only<bf16, bf16>(r, "i8_weight_only_gemm", 100, 136, 72, 81);  // the twin
    weight_only<bf16, bf16>(r, "i8_weight_only_gemm/general", 300, 520, 208, 91);
    weight_only<f16, float>(r, "i8_weight_only_small", 300, 520, 208, 101);
    weight_only<f16, float>(r, "i8_weight_only_small", 100, 136, 72, 111);  // the twin
    w8a8(r, 100, 136, 200, 141);
    epilogue_gemm(r, "i8_epilogue_gemm", 300, 520, 208, 151);
    epilogue_gemm(r, "i8_epilogue_gemm", 100, 136, 72, 161);  // the twin
    epilogue_gemm(r, "i8_epilogue_gemm/general", 300, 520, 208, 171);
    w8a8_s32(r, "i8_w8a8_s32", 300, 520, 256, 181);
    w8a8_s32(r, "i8_w8a8_s32", 129, 264, 2048, 191);
    w8a8_s32(r, "i8_w8a8_s32", 100, 136, 72, 201);  // the twin
    w8a8_s32(r, "i8_w8a8_s32/general", 300, 520, 256, 211);
    gemm_s32(r, "i8_gemm_s32", 300, 520, 1040, 221);
    gemm_s32(r, "i8_gemm_s32", 100, 136, 72, 231);  // the twin
    gemm_s32(r, "i8_gemm_s32/general", 130, 260, 160, 241);
    w8a8_requant(r, "i8_w8a8_requant", 200, 264, 2048, 251);
    w8a8_requant(r, "i8_w8a8_requant", 100, 136, 72, 261);  // the twin
    w8a8_requant(r, "i8_w8a8_requant/general", 130, 260, 2048, 271);
  }
  all_gather(r, 37, 100, 121);
  all_gather(r, 37, 99, 131);  // an odd byte count per rank
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_INT8_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return pkt::finish("int8_jit_test");
  return run_worlds("int8_jit_test", g_kernels, cases);
}

// GEMM forms of the template through the JIT on one GPU, against float64.
//
// Weight-only quantised GEMMs (test/specs/weight_only_gemm.pk.cpp): bf16 or f16
// activations times e4m3 or e5m2 weights stored [N, K], which the GEMM template widens in its ring
// (templates/include/pk/templates/widen_b.cuh), against float64. The weights take every finite fp8 bit pattern
// (subnormals, both signs, the largest values) in random order; a second case per kernel puts NaN (e4m3) or
// infinity and NaN (e5m2) into chosen weight rows, whose output columns must come out non-finite while every other
// column stays exact. Shapes leave partial tiles in M, N and K (K = 208: three 64-wide steps and a 16-wide one);
// K = 72 (not whole 16-byte fp8 rows) runs each kernel's general-path twin, and two kernels also compile with
// templates off (the general path's own route). Epilogues: per-channel scales as a row [1, N] (f32 output) and as
// a column [N, 1] read transposed. Outputs are poisoned first (NaN; the special-value case a finite
// 7.0 instead, so that a NaN it finds was written).
//
// Trailing products (test/specs/gemm_trailing.pk.cpp): a second product after the K loop into the same
// accumulator (LoRA), streamed as further K steps: f16 with B [N, K] and a scale row, bf16 with B [K, N] and rank 96
// (two steps); its K2 = R, K2 < R (zeros past its end), and K2 > R or N not whole 16-byte rows (the twin, which
// reads R columns only).
//
// Bounds: every product of a bf16 / f16 value and an fp8 one is exact in fp32, so the fp32 sum over K is within
// 1e-5 of the sum of the terms' magnitudes; a bf16 output adds two units in its last place (2^-7 of the value), an
// f16 output two of its own (2^-9); the f32 output of the scaled kernel one fp32 product (1e-6).
#include <pk/jit/compile.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <random>

#include "fp8_model.h"
#include "jit_spec_cases.h"
#include "sym_test_util.h"
#include "tile_test_util.h"

namespace {

using pk::bf16;
using pk::f16;
using pk::f8e4m3;
using pk::f8e5m2;
using pkt::DevLocal;
using namespace pkt::cases;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"wo_e4m3_bf16", true}, {"wo_e5m2_bf16", true}, {"wo_e4m3_f16", true},
    {"wo_e5m2_f16", true},  {"wo_e4m3_scaled_f32", true}, {"wo_e4m3_colscale_bf16", true},
};
const std::vector<const char*> kGeneralToo = {"wo_e4m3_bf16", "wo_e5m2_f16"};
const std::vector<std::pair<const char*, bool>> kTrailing = {{"trail_f16_scaled", true}, {"trail_kn_bf16", true}};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "gemm_forms", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}

template <class F>
constexpr bool kE4m3 = std::is_same<F, f8e4m3>::value;
template <class F>
bool special(unsigned char b) {
  return kE4m3<F> ? (b & 0x7F) == 0x7F : (b & 0x7C) == 0x7C;
}
// Every finite pattern, in random order: specials moved to a finite neighbour.
template <class F>
std::vector<F> fp8_weights(LL n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<F> w(n);
  for (LL i = 0; i < n; ++i) {
    unsigned char b = static_cast<unsigned char>(gen() & 0xFF);
    if (special<F>(b)) b = kE4m3<F> ? b ^ 1 : b & 0xFB;
    w[i].bits = b;
  }
  return w;
}

// y [M, N] of kernel `kn` (activation X, weight F, output Y) against float64; `specials`: NaN / infinity in rows
// 0, 7 and N - 1 of the weights, whose columns must be non-finite (the output pre-filled with 7.0).
template <class X, class F, class Y>
void wo_case(const Run& r, const std::string& kn, LL M, LL N, LL Kd, unsigned seed, bool specials = false,
             bool scaled = false) {
  const float xs = std::is_same<X, f16>::value && !kE4m3<F> ? 1.f / 1024 : 1.f;  // f16 outputs stay finite
  const auto x = rnd<X>(M * Kd, seed, -xs, xs);
  auto w = fp8_weights<F>(N * Kd, seed + 1);
  std::vector<bool> odd_col(N, false);
  if (specials) {
    const unsigned char pats[3] = {static_cast<unsigned char>(kE4m3<F> ? 0x7F : 0x7C),
                                   static_cast<unsigned char>(kE4m3<F> ? 0xFF : 0xFC),
                                   static_cast<unsigned char>(kE4m3<F> ? 0x7F : 0x7E)};
    const LL rows[3] = {0, 7, N - 1};
    for (int i = 0; i < 3; ++i) {
      w[rows[i] * Kd + (Kd / 2 + 3 * i) % Kd].bits = pats[i];
      odd_col[rows[i]] = true;
    }
  }
  const auto s = rnd<float>(N, seed + 2, 0.5f, 2.f);
  DevLocal<X> xd({M, Kd}, x);
  DevLocal<F> wd({N, Kd}, w);
  DevLocal<float> sd(kn.rfind("wo_e4m3_colscale", 0) == 0 ? std::vector<LL>{N, 1} : std::vector<LL>{1, N}, s);
  DevLocal<Y> y({M, N}, specials ? std::vector<Y>(M * N, pkt::from_host<Y>(7.f)) : std::vector<Y>{});
  const int before = begin_case(r);
  const bool ok = scaled ? run(r, kn, 2, xd.view(), wd.view(), sd.view(), y.view()) : run(r, kn, 2, xd.view(), wd.view(), y.view());
  if (ok) {
    const auto g = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); },
                        [&](LL k, LL n) { return special<F>(w[n * Kd + k].bits) ? 0.0 : val(w[n * Kd + k]); });
    const double ulps = std::is_same<Y, bf16>::value ? std::ldexp(1.0, -7) : std::is_same<Y, f16>::value ? std::ldexp(1.0, -9) : 1e-6;
    auto want = [&](LL i) { return g.c[i] * (scaled ? s[i % N] : 1.0); };
    auto tol = [&](LL i) { return ulps * std::fabs(want(i)) + 1e-5 * g.mag[i] * (scaled ? s[i % N] : 1.0) + 1e-6; };
    const auto got = y.download();
    LL bad = 0;
    for (LL i = 0; i < M * N; ++i) {
      const double v = val(got[i]);
      const bool pass = odd_col[i % N] ? !std::isfinite(v) : std::fabs(v - want(i)) <= tol(i);
      if (!pass && bad++ < 3)
        pkt::fail(kn + " element " + std::to_string(i) + " (column " + std::to_string(i % N) + "): got " +
                  std::to_string(v) + ", want " + (odd_col[i % N] ? std::string("NaN or infinity") : std::to_string(want(i))));
    }
    if (bad > 3) pkt::fail(kn + ": " + std::to_string(bad) + " of " + std::to_string(M * N) + " wrong");
  }
  end_case(r, kn + " " + dims({M, N, Kd}) + (Kd % 16 ? " (general twin)" : "") + (specials ? " specials" : ""), before);
}

template <class X, class F, class Y>
void wo_all(const Run& r, const std::string& kn, unsigned seed, bool general_too = false, bool scaled = false) {
  wo_case<X, F, Y>(r, kn, 300, 520, 208, seed, false, scaled);
  wo_case<X, F, Y>(r, kn, 129, 264, 1024, seed + 10, false, scaled);
  wo_case<X, F, Y>(r, kn, 200, 264, 208, seed + 20, true, scaled);
  wo_case<X, F, Y>(r, kn, 100, 136, 72, seed + 30, false, scaled);  // the twin
  if (general_too) wo_case<X, F, Y>(r, kn + "/general", 300, 520, 208, seed + 40, false, scaled);
}

// y = (x w^T + u lb^T) (* s[n] for the f16 kernel); B [N, K] or ([K, N], kn). u has K2 columns, the spec's tiles R.
template <class T>
void trailing_case(const Run& r, const std::string& kn, LL M, LL N, LL Kd, LL K2, LL R, unsigned seed) {
  const bool knB = kn == "trail_kn_bf16";
  const auto x = rnd<T>(M * Kd, seed), w = rnd<T>(N * Kd, seed + 1), u = rnd<T>(M * K2, seed + 2),
             lb = rnd<T>(N * K2, seed + 3);
  const auto s = rnd<float>(N, seed + 4, 0.5f, 2.f);
  DevLocal<T> xd({M, Kd}, x), wd(knB ? std::vector<LL>{Kd, N} : std::vector<LL>{N, Kd}, w), ud({M, K2}, u),
      lbd(knB ? std::vector<LL>{K2, N} : std::vector<LL>{N, K2}, lb), y({M, N}, {});
  DevLocal<float> sd({1, N}, s);
  const int before = begin_case(r);
  const bool ok = knB ? run(r, kn, 2, xd.view(), wd.view(), ud.view(), lbd.view(), y.view())
                      : run(r, kn, 2, xd.view(), wd.view(), ud.view(), lbd.view(), sd.view(), y.view());
  if (ok) {
    const auto base = gemm(M, N, Kd, [&](LL m, LL k) { return val(x[m * Kd + k]); },
                           [&](LL k, LL n) { return val(w[knB ? k * N + n : n * Kd + k]); });
    const LL used = std::min(K2, R);  // the spec reads R columns of u
    const auto low = gemm(M, N, used, [&](LL m, LL k) { return val(u[m * K2 + k]); },
                          [&](LL k, LL n) { return val(lb[knB ? k * N + n : n * K2 + k]); });
    const double ulps = std::is_same<T, bf16>::value ? std::ldexp(1.0, -7) : std::ldexp(1.0, -9);
    auto sc = [&](LL i) { return knB ? 1.0 : double(s[i % N]); };
    check(r, kn + ".y", y.download(), [&](LL i) { return (base.c[i] + low.c[i]) * sc(i); },
          [&](LL i) { return ulps * std::fabs((base.c[i] + low.c[i]) * sc(i)) + 1e-5 * (base.mag[i] + low.mag[i]) * sc(i) + 1e-6; });
  }
  const bool twin = N % 8 || Kd % 8 || K2 % 8 || K2 > R;
  end_case(r, kn + " " + dims({M, N, Kd, K2}) + (twin ? " (general twin)" : ""), before);
}

void cases(const Run& r) {
  trailing_case<f16>(r, "trail_f16_scaled", 300, 520, 1000, 32, 32, 71);
  trailing_case<f16>(r, "trail_f16_scaled", 200, 264, 208, 24, 32, 81);
  trailing_case<f16>(r, "trail_f16_scaled", 130, 264, 200, 40, 32, 91);  // K2 > R: the twin
  trailing_case<bf16>(r, "trail_kn_bf16", 300, 520, 1000, 96, 96, 101);
  trailing_case<bf16>(r, "trail_kn_bf16", 200, 264, 208, 72, 96, 111);
  trailing_case<bf16>(r, "trail_kn_bf16", 100, 100, 200, 96, 96, 121);  // N % 8: the twin
  wo_all<bf16, f8e4m3, bf16>(r, "wo_e4m3_bf16", 11, true);
  wo_all<bf16, f8e5m2, bf16>(r, "wo_e5m2_bf16", 21);
  wo_all<f16, f8e4m3, f16>(r, "wo_e4m3_f16", 31);
  wo_all<f16, f8e5m2, f16>(r, "wo_e5m2_f16", 41, true);
  wo_all<bf16, f8e4m3, float>(r, "wo_e4m3_scaled_f32", 51, false, true);
  wo_all<bf16, f8e4m3, bf16>(r, "wo_e4m3_colscale_bf16", 61, false, true);  // the scale column read transposed
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_WEIGHT_ONLY_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels) ||
      !compile_set(PK_TRAILING_SPEC, kTrailing, {}, PK_PKC, g_kernels))
    return pkt::finish("gemm_forms_jit_test");
  // Every kernel is single-GPU: the cases run at W = 1 only.
  return run_worlds("gemm_forms_jit_test", g_kernels, [](const Run& r) {
    if (r.W == 1) cases(r);
  });
}

// The thirtieth user-written spec set (test/specs/user_specs30.pk.cpp: every kind of kernel argument, Tensor / Sym /
// Scratch of every element type at ranks 1-4, float and integer scalars, rank and size values, templates, collectives,
// peers, host loops) through the JIT C++ API, each kernel against a float64 (or exact integer) host reference written
// from its comment, on fresh random non-zero inputs, with every output poisoned first (0xff bytes: NaN for floats, -1
// for integers; an element the reference does not predict fails).
//
// Beside the results, the JIT's host side: every refusal the API promises (argument count, kind, element type, rank,
// negative extent, numel, null data, unmapped peers, scalar types, the kernels' own pk-host-check rules) comes back as
// an error from launch() naming the problem, nothing is launched, and a valid launch right after still pairs its
// epochs on every rank; empty tensors skip the launch; two specs whose kernels share a name keep their own flag
// regions on one context; the cache (same spec twice, changed spec, changed options).
//
// Findings (test/specs/specs30_findings.md) that the JIT can show are checked as "KNOWN" lines: by default they
// print what happens now and do not fail; with PK_TEST_S30_FINDINGS=1 each open one fails the test (for the fix).
// Local kernels run at W = 1; rank-aware and multi-rank kernels at every world size (PK_TEST_WORLDS); every kernel
// launches twice (a second launch must give the same result and keep the epochs in step).
#include <pk/jit/compile.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include <pk/runtime/kernel_args.h>
#include <pk/runtime/module.h>
#include <pk/runtime/shared_gpu.h>

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
using i64 = long long;
using E4 = pk::f8e4m3;
using E5 = pk::f8e5m2;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"a30_i8_1d_add", false},          {"a30_i32_2d_affine", false},     {"a30_i64_3d_scale", false},
    {"a30_f16_4d", false},             {"a30_bf16_row_scale", false},    {"a30_f32_axpy", false},
    {"a30_e4m3_quant", false},         {"a30_e5m2_dequant", false},      {"a30_i8_3d_to_f32", false},
    {"a30_i32_4d_widen", false},       {"a30_rank_values", false},       {"a30_scalar_mix", false},
    {"a30_dims_as_values", false},     {"a30_count_bound", false},       {"a30_gather_i64", false},
    {"a30_concat", false},             {"a30_scalar_reads", false},      {"a30_row_bias", false},
    {"a30_sym_i32_ring", false},       {"a30_sym_bf16_all_reduce", false}, {"a30_sym_f32_all_gather", false},
    {"a30_sym_i64_max", false},        {"a30_sym_f16_reduce_scatter", false}, {"a30_sym_i8_gather_cols", false},
    {"a30_sym_e4m3_gather", false},    {"a30_sym_4d_broadcast", false},  {"a30_scratch_all_reduce", false},
    {"a30_scratch_i32", false},        {"a30_sym_i64_pull", false},      {"a30_store_add_next", false},
    {"a30_host_loop", false},          {"a30_gemm_alpha", true},         {"a30_gemm_f16_bias_f32", true},
    {"a30_w8a8_i32", true},            {"a30_gemm_e5m2_weights", true},
};
const std::vector<const char*> kGeneralToo = {"a30_gemm_alpha", "a30_gemm_f16_bias_f32", "a30_w8a8_i32",
                                              "a30_gemm_e5m2_weights"};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs30", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}

// ---- findings: KNOWN lines by default, failures with PK_TEST_S30_FINDINGS ----
bool strict_findings() {
  const char* s = std::getenv("PK_TEST_S30_FINDINGS");
  return s && *s && *s != '0';
}
void finding(bool fixed, const std::string& what) {
  if (fixed) std::printf("FIXED user_specs30 %s\n", what.c_str());
  else if (strict_findings()) pkt::fail("finding still open: " + what);
  else std::printf("KNOWN user_specs30 %s\n", what.c_str());
  std::fflush(stdout);
}

// ---- values ----
uint64_t u64(i64 v) { return static_cast<uint64_t>(v); }
int32_t wrap32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
i8 wrap8(uint64_t v) { return static_cast<i8>(static_cast<unsigned char>(v & 0xFF)); }
i64 wrap64(uint64_t v) { return static_cast<i64>(v); }
template <class T>
std::vector<T> nzints(LL n, LL lo, LL hi, unsigned seed) {
  auto v = ints<T>(n, lo, hi, seed);
  for (auto& x : v)
    if (x == 0) x = 1;
  return v;
}
// nz (jit_spec_cases.h) over [-2, 2) unless told otherwise.
template <class T>
std::vector<T> wide_nz(LL n, unsigned seed, float lo = -2.f, float hi = 2.f) {
  return nz<T>(n, seed, lo, hi);
}
double h16(double x) { return pkt::f16_round(static_cast<float>(x)); }
std::string tag(const std::string& kn, std::initializer_list<LL> d, const std::string& how = "") {
  return kn + " " + dims(d) + (how.empty() ? "" : " (" + how + ")");
}
// A view whose shape is given explicitly (a rank, extents and numel a user may get wrong).
template <class T>
pk::Tensor<T> with_shape(pk::Tensor<T> t, std::vector<long long> shape, long long numel = -1) {
  long long n = 1;
  for (int d = 0; d < 4; ++d) {
    t.shape[d] = d < int(shape.size()) ? shape[d] : 1;
    n *= t.shape[d];
  }
  t.numel = numel >= 0 ? numel : n;
  return t;
}

// launch() must refuse with a message containing `needle`, and launch nothing.
template <class... A>
void refused(const Run& r, const std::string& kernel, const std::string& what, const std::string& needle, const A&... args) {
  const pk::Status s = g_kernels.at(kernel).launch(r.ctx, r.s, args...);
  if (s.is_ok())
    pkt::fail(kernel + " " + what + " W=" + std::to_string(r.W) + ": launched; want a refusal naming '" + needle + "'");
  else if (s.message().find(needle) == std::string::npos)
    pkt::fail(kernel + " " + what + ": refused with '" + s.message() + "'; want it to name '" + needle + "'");
}

// ---- local kernels, every element type and rank ----
void i8_1d_add(const Run& r, LL N) {
  const auto x = nzints<i8>(N, -128, 127, 11 + unsigned(N));
  const LL add = 300;  // an index: wraps at 8 bits beside an i8 tile
  DevLocal<i8> xd({N}, x), y({N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_i8_1d_add", 2, xd.view(), y.view(), add))
    check(r, "a30_i8_1d_add", y.download(), [&](LL i) { return double(wrap8(u64(x[i]) + u64(add))); }, exact());
  end_case(r, tag("a30_i8_1d_add", {N}), before);
}
// 2^31 + 1000 i8 elements: tile origins past 2^31 (a 64-bit extent), checked in full.
void i8_1d_add_large(const Run& r) {
  const LL N = (1LL << 31) + 1000;
  std::vector<i8> block(1 << 16);
  std::mt19937 g(4242);
  for (auto& b : block) {
    b = i8(int(g() % 255) - 127);
    if (b == 0) b = 3;
  }
  std::vector<i8> x(N);
  for (LL i = 0; i < N; ++i) x[i] = block[(i * 7 + i / 65536) & 0xFFFF];
  i8 *xd = nullptr, *yd = nullptr;
  if (cudaMalloc(&xd, N) != cudaSuccess || cudaMalloc(&yd, N) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(xd);
    std::printf("SKIP user_specs30 a30_i8_1d_add 2^31+1000 (no 4 GiB free)\n");
    return;
  }
  PKT_CUDA(cudaMemcpy(xd, x.data(), N, cudaMemcpyHostToDevice));
  PKT_CUDA(pkt::poison(yd, N));
  pk::Tensor<i8> xv{}, yv{};
  xv.data = xd, yv.data = yd;
  xv = with_shape(xv, {N});
  yv = with_shape(yv, {N});
  const int before = begin_case(r);
  if (run(r, "a30_i8_1d_add", 1, xv, yv, LL(-7))) {
    std::vector<i8> y(N);
    PKT_CUDA(cudaMemcpy(y.data(), yd, N, cudaMemcpyDeviceToHost));
    LL bad = 0;
    for (LL i = 0; i < N; ++i)
      if (y[i] != wrap8(u64(x[i]) - 7) && bad++ < 3)
        pkt::fail("a30_i8_1d_add large element " + std::to_string(i) + ": got " + std::to_string(y[i]));
    if (bad > 3) pkt::fail("a30_i8_1d_add large: " + std::to_string(bad) + " elements wrong");
  }
  end_case(r, tag("a30_i8_1d_add", {N}, "past 2^31"), before);
  cudaFree(xd), cudaFree(yd);
}

void i32_2d_affine(const Run& r, LL M, LL N) {
  const auto x = nzints<int>(M * N, INT32_MIN, INT32_MAX, 21);
  const LL mul = (1LL << 32) + 3, add = -5;  // mul wraps to 3 beside an i32 tile
  DevLocal<int> xd({M, N}, x), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_i32_2d_affine", 2, xd.view(), y.view(), mul, add))
    check(r, "a30_i32_2d_affine", y.download(), [&](LL i) { return double(wrap32(u64(x[i]) * u64(mul) + u64(add))); }, exact());
  end_case(r, tag("a30_i32_2d_affine", {M, N}), before);
}

void i64_3d_scale(const Run& r, LL A, LL B, LL C) {
  const auto x = nzints<i64>(A * B * C, -(1LL << 45), 1LL << 45, 31);
  const LL k = -3;
  DevLocal<i64> xd({A, B, C}, x), y({A, B, C}, {});
  const int before = begin_case(r);
  if (run(r, "a30_i64_3d_scale", 2, xd.view(), y.view(), k)) {
    const auto got = y.download();
    LL bad = 0;
    for (LL i = 0; i < A * B * C; ++i)
      if (got[i] != wrap64(u64(x[i]) * u64(k) - 7) && bad++ < 3)
        pkt::fail("a30_i64_3d_scale element " + std::to_string(i) + ": got " + std::to_string(got[i]));
  }
  end_case(r, tag("a30_i64_3d_scale", {A, B, C}), before);
}

void f16_4d(const Run& r, LL A, LL B, LL M, LL N) {
  const LL n = A * B * M * N;
  const auto x = wide_nz<f16>(n, 41);
  const float s = 1.75f;
  DevLocal<f16> xd({A, B, M, N}, x), y({A, B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_f16_4d", 2, xd.view(), y.view(), s))
    check(r, "a30_f16_4d", y.download(), [&](LL i) { return h16(val(x[i]) * s + 0.25); },
          [&](LL i) { return kHf * std::fabs(val(x[i]) * s + 0.25) + 1e-6; });
  end_case(r, tag("a30_f16_4d", {A, B, M, N}), before);
}

void bf16_row_scale(const Run& r, LL M, LL N) {
  const auto x = wide_nz<bf16>(M * N, 51);
  const auto w = wide_nz<float>(N, 52);
  DevLocal<bf16> xd({M, N}, x), y({M, N}, {});
  DevLocal<float> wd({N}, w);
  const int before = begin_case(r);
  if (run(r, "a30_bf16_row_scale", 2, xd.view(), wd.view(), y.view()))
    check(r, "a30_bf16_row_scale", y.download(), [&](LL i) { return val(x[i]) * w[i % N]; },
          [&](LL i) { return kBf * std::fabs(val(x[i]) * w[i % N]) + 1e-6; });
  end_case(r, tag("a30_bf16_row_scale", {M, N}), before);
}

void f32_axpy(const Run& r, LL N) {
  const auto x = wide_nz<float>(N, 61), y = wide_nz<float>(N, 62);
  const float a = -0.625f;
  DevLocal<float> xd({N}, x), yd({N}, y), z({N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_f32_axpy", 2, xd.view(), yd.view(), z.view(), a))
    check(r, "a30_f32_axpy", z.download(), [&](LL i) { return double(a) * x[i] + y[i]; },
          [&](LL i) { return 1e-6 * (std::fabs(a * x[i]) + std::fabs(y[i])) + 1e-7; });
  end_case(r, tag("a30_f32_axpy", {N}), before);
}

void e4m3_quant(const Run& r, LL M, LL N) {
  const auto x = wide_nz<bf16>(M * N, 71, -4.f, 4.f);
  const LL blocks = (N + 127) / 128;
  DevLocal<bf16> xd({M, N}, x);
  DevLocal<E4> q({M, N}, {});
  DevLocal<float> s({M, blocks}, {});
  std::vector<float> amax(M * blocks, 1e-12f);
  for (LL i = 0; i < M * N; ++i) {
    float& a = amax[(i / N) * blocks + (i % N) / 128];
    a = std::max(a, std::fabs(float(val(x[i]))));
  }
  const int before = begin_case(r);
  if (run(r, "a30_e4m3_quant", 2, xd.view(), q.view(), s.view())) {
    check(r, "a30_e4m3_quant.q", q.download(), [&](LL i) {
      const float a = amax[(i / N) * blocks + (i % N) / 128];
      return e4m3(double(float(val(x[i])) * (448.0f / a)));
    }, [&](LL i) {  // one unit of e4m3 where the f32 product sits at a rounding boundary
      const float a = amax[(i / N) * blocks + (i % N) / 128];
      return std::max(std::fabs(double(float(val(x[i])) * (448.0f / a))) / 8, std::ldexp(1.0, -9));
    });
    check(r, "a30_e4m3_quant.s", s.download(), [&](LL i) { return double(amax[i] * (1.0f / 448.0f)); },
          [&](LL i) { return 1e-6 * amax[i]; });
  }
  end_case(r, tag("a30_e4m3_quant", {M, N}), before);
}

void e5m2_dequant(const Run& r, LL M, LL N) {
  const auto q = wide_nz<E5>(M * N, 81, -100.f, 100.f);
  const float s = 0.03125f;
  DevLocal<E5> qd({M, N}, q);
  DevLocal<float> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_e5m2_dequant", 2, qd.view(), y.view(), s))
    check(r, "a30_e5m2_dequant", y.download(), [&](LL i) { return val(q[i]) * s; }, exact());
  end_case(r, tag("a30_e5m2_dequant", {M, N}), before);
}

void i8_3d_to_f32(const Run& r, LL A, LL B, LL C) {
  const auto x = nzints<i8>(A * B * C, -128, 127, 91);
  const float s = 0.1f;
  DevLocal<i8> xd({A, B, C}, x);
  DevLocal<float> y({A, B, C}, {});
  const int before = begin_case(r);
  if (run(r, "a30_i8_3d_to_f32", 2, xd.view(), y.view(), s))
    check(r, "a30_i8_3d_to_f32", y.download(), [&](LL i) { return double(float(x[i]) * s); }, exact());
  end_case(r, tag("a30_i8_3d_to_f32", {A, B, C}), before);
}

void i32_4d_widen(const Run& r, LL A, LL B, LL C, LL D) {
  const LL n = A * B * C * D;
  const auto x = nzints<int>(n, INT32_MIN, INT32_MAX, 101);
  DevLocal<int> xd({A, B, C, D}, x);
  DevLocal<i64> y({A, B, C, D}, {});
  const int before = begin_case(r);
  if (run(r, "a30_i32_4d_widen", 2, xd.view(), y.view())) {
    const auto got = y.download();
    LL bad = 0;
    for (LL i = 0; i < n; ++i)
      if (got[i] != wrap64(u64(i64(x[i])) * (1ULL << 32) + u64(i64(x[i]))) && bad++ < 3)
        pkt::fail("a30_i32_4d_widen element " + std::to_string(i) + ": got " + std::to_string(got[i]));
  }
  end_case(r, tag("a30_i32_4d_widen", {A, B, C, D}), before);
}

void rank_values(const Run& r, LL M, LL N) {
  const auto x = wide_nz<float>(M * N, 111 + unsigned(r.me));
  DevLocal<float> xd({M, N}, x), y({M, N}, {});
  const double base = 1000.0 * r.me + 100.0 * r.W + 10.0 * ((r.me + 1) % r.W) + (r.me + r.W - 1) % r.W;
  const int before = begin_case(r);
  if (run(r, "a30_rank_values", 2, xd.view(), y.view()))
    check(r, "a30_rank_values", y.download(), [&](LL i) { return double(x[i] + float(base)); }, exact());
  end_case(r, tag("a30_rank_values", {M, N}), before);
}

void scalar_mix(const Run& r, LL N) {
  const auto x = wide_nz<float>(N, 121);
  const float a = 1.5f, c = -0.5f;
  const LL b = 3, d = -11;
  DevLocal<float> xd({N}, x), y({N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_scalar_mix", 2, xd.view(), a, b, y.view(), c, d))
    check(r, "a30_scalar_mix", y.download(), [&](LL i) { return (double(x[i]) * a + b) * c - d; },
          [&](LL i) { return 1e-6 * (std::fabs(x[i] * a) + 20); });
  end_case(r, tag("a30_scalar_mix", {N}), before);
}

void dims_as_values(const Run& r, LL A, LL B, LL M, LL N) {
  const LL n = A * B * M * N;
  const auto x = wide_nz<float>(n, 131);
  const float k = float(A + 10 * B + 100 * M + 1000 * N);
  DevLocal<float> xd({A, B, M, N}, x), y({A, B, M, N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_dims_as_values", 2, xd.view(), y.view()))
    check(r, "a30_dims_as_values", y.download(), [&](LL i) { return double(x[i] + k); }, exact());
  end_case(r, tag("a30_dims_as_values", {A, B, M, N}), before);
}

void count_bound(const Run& r, LL M, LL N, int cnt) {
  const auto x = wide_nz<float>(M * N, 141);
  DevLocal<int> cd({1}, {cnt});
  DevLocal<float> xd({M, N}, x), y({M, N}, {});
  const LL rows = std::min<LL>(M, (LL(std::max(cnt, 0)) + 15) / 16 * 16);  // whole 16-row tiles up to the count
  std::vector<double> want(M * N, std::nan(""));
  for (LL i = 0; i < rows * N; ++i) want[i] = 2.0 * x[i];
  const int before = begin_case(r);
  if (run(r, "a30_count_bound", 2, cd.view(), xd.view(), y.view()))
    check_or_poison(r, "a30_count_bound", y.download(), want, exact());
  end_case(r, tag("a30_count_bound", {M, N}, "count " + std::to_string(cnt)), before);
}

void gather_i64(const Run& r, LL T, LL V, LL N) {
  auto ids = nzints<i64>(T, 0, V - 1, 151);
  ids[1] = -1, ids[2] = V, ids[3] = (1LL << 33) + 1, ids[4] = V - 1, ids[T - 1] = 0;  // outside: zeros
  const auto table = wide_nz<float>(V * N, 152);
  DevLocal<i64> idd({T}, ids);
  DevLocal<float> td({V, N}, table), out({T, N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_gather_i64", 2, td.view(), idd.view(), out.view()))
    check(r, "a30_gather_i64", out.download(), [&](LL i) {
      const i64 id = ids[i / N];
      return id >= 0 && id < V ? double(table[id * N + i % N]) : 0.0;
    }, exact());
  end_case(r, tag("a30_gather_i64", {T, V, N}), before);
}

void concat(const Run& r, LL A, LL B, LL extra) {
  const auto a = wide_nz<float>(A, 161), b = wide_nz<float>(B, 162);
  const LL L = A + B + extra;
  DevLocal<float> ad({A}, a), bd({B}, b), out({L}, {});
  std::vector<double> want(L, std::nan(""));
  for (LL i = 0; i < A; ++i) want[i] = a[i];
  for (LL i = 0; i < B; ++i) want[A + i] = b[i];
  // The last tile of b stores its padding zeros up to out's end (a store clips at the tensor it writes).
  for (LL i = A + B; i < std::min(L, A + (B + 255) / 256 * 256); ++i) want[i] = 0.0;
  if (B == 0)  // the padding of a's last tile lands the same way, with no b after it
    for (LL i = A; i < std::min(L, (A + 255) / 256 * 256); ++i) want[i] = 0.0;
  const int before = begin_case(r);
  if (run(r, "a30_concat", 2, ad.view(), bd.view(), out.view()))
    check_or_poison(r, "a30_concat", out.download(), want, exact());
  end_case(r, tag("a30_concat", {A, B, L}), before);
}

void scalar_reads(const Run& r, LL N) {
  const std::vector<float> s = {1.25f, -3.5f, 99.f, 7.f, 8.f, 9.f};  // [2, 3]: s[0, 0], s[0, 1]
  const auto x = wide_nz<bf16>(N, 171);
  DevLocal<float> sd({2, 3}, s), y({N}, {});
  DevLocal<bf16> xd({N}, x);
  const int before = begin_case(r);
  if (run(r, "a30_scalar_reads", 2, sd.view(), xd.view(), y.view()))
    check(r, "a30_scalar_reads", y.download(), [&](LL i) { return val(x[i]) * 1.25 - 3.5; },
          [&](LL i) { return 1e-6 * (std::fabs(val(x[i]) * 1.25) + 3.5); });
  end_case(r, tag("a30_scalar_reads", {N}), before);
}

void row_bias(const Run& r, LL M, LL N) {
  const auto x = wide_nz<float>(M * N, 181), bias = wide_nz<float>(N, 182);
  DevLocal<float> xd({M, N}, x), bd({1, N}, bias), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_row_bias", 2, xd.view(), bd.view(), y.view()))
    check(r, "a30_row_bias", y.download(), [&](LL i) { return double(x[i] + bias[i % N]); }, exact());
  end_case(r, tag("a30_row_bias", {M, N}), before);
}

// ---- GEMMs: the template, its twin (sizes TMA cannot take) and templates off ----
void gemm_alpha(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto a = wide_nz<bf16>(M * K, 191, -1.f, 1.f), b = wide_nz<bf16>(N * K, 192, -1.f, 1.f);
  const float alpha = 0.375f;
  DevLocal<bf16> ad({M, K}, a), bd({N, K}, b), c({M, N}, {});
  const Gemm g = gemm(M, N, K, [&](LL m, LL k) { return val(a[m * K + k]); }, [&](LL k, LL n) { return val(b[n * K + k]); });
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), c.view(), alpha))
    check(r, kn, c.download(), [&](LL i) { return alpha * g.c[i]; },
          [&](LL i) { return kBf * std::fabs(alpha * g.c[i]) + 3e-5 * alpha * g.mag[i] + 1e-6; });
  end_case(r, tag(kn, {M, N, K}, how), before);
}
void gemm_f16_bias_f32(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto a = wide_nz<f16>(M * K, 201, -1.f, 1.f), b = wide_nz<f16>(N * K, 202, -1.f, 1.f);
  const auto bias = wide_nz<float>(N, 203);
  DevLocal<f16> ad({M, K}, a), bd({N, K}, b);
  DevLocal<float> biasd({N}, bias), c({M, N}, {});
  const Gemm g = gemm(M, N, K, [&](LL m, LL k) { return val(a[m * K + k]); }, [&](LL k, LL n) { return val(b[n * K + k]); });
  const int before = begin_case(r);
  if (run(r, kn, 2, ad.view(), bd.view(), biasd.view(), c.view()))
    check(r, kn, c.download(), [&](LL i) { return g.c[i] + bias[i % N]; },
          [&](LL i) { return 3e-5 * (g.mag[i] + std::fabs(bias[i % N])) + 1e-6; });
  end_case(r, tag(kn, {M, N, K}, how), before);
}
void w8a8_i32(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto x = nzints<i8>(M * K, -128, 127, 211), w = nzints<i8>(N * K, -128, 127, 212);
  DevLocal<i8> xd({M, K}, x), wd({N, K}, w);
  DevLocal<int> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), c.view()))
    check(r, kn, c.download(), [&](LL i) {
      i64 s = 0;
      for (LL k = 0; k < K; ++k) s += i64(x[(i / N) * K + k]) * w[(i % N) * K + k];
      return double(wrap32(u64(s)));
    }, exact());
  end_case(r, tag(kn, {M, N, K}, how), before);
}
void gemm_e5m2(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how) {
  const auto x = wide_nz<bf16>(M * K, 221, -1.f, 1.f);
  const auto w = wide_nz<E5>(N * K, 222, -2.f, 2.f);
  DevLocal<bf16> xd({M, K}, x), y({M, N}, {});
  DevLocal<E5> wd({N, K}, w);
  const Gemm g = gemm(M, N, K, [&](LL m, LL k) { return val(x[m * K + k]); }, [&](LL k, LL n) { return val(w[n * K + k]); });
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), y.view()))
    check(r, kn, y.download(), [&](LL i) { return g.c[i]; },
          [&](LL i) { return kBf * std::fabs(g.c[i]) + 3e-5 * g.mag[i] + 1e-6; });
  end_case(r, tag(kn, {M, N, K}, how), before);
}

// ---- symmetric tensors, workspace, peers, host loops (every world size) ----
template <class T>
std::vector<std::vector<T>> per_rank(int W, LL n, const std::function<std::vector<T>(unsigned)>& make, unsigned seed) {
  std::vector<std::vector<T>> v;
  for (int q = 0; q < W; ++q) v.push_back(make(seed + 97u * unsigned(q)));
  return v;
}

void sym_i32_ring(const Run& r, LL R, LL C) {
  const int W = r.W, src = (r.me + W - 1) % W;
  auto xs = per_rank<int>(W, R * C, [&](unsigned s) { return nzints<int>(R * C, INT32_MIN, INT32_MAX, s); }, 301);
  SymArg<int> x(r.ctx, {R, C}, &xs[r.me]), y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_sym_i32_ring", 2, x.view, y.view))
    check(r, "a30_sym_i32_ring", y.download(), [&](LL i) { return double(wrap32(u64(i64(xs[src][i])) + u64(src))); }, exact());
  end_case(r, tag("a30_sym_i32_ring", {R, C}), before);
}

void sym_bf16_all_reduce(const Run& r, LL N) {
  auto xs = per_rank<bf16>(r.W, N, [&](unsigned s) { return wide_nz<bf16>(N, s); }, 311);
  SymArg<bf16> x(r.ctx, {N}, &xs[r.me]), y(r.ctx, {N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_sym_bf16_all_reduce", 2, x.view, y.view)) {
    auto want = [&](LL i) {
      double s = 0;
      for (int q = 0; q < r.W; ++q) s += val(xs[q][i]);
      return s;
    };
    check(r, "a30_sym_bf16_all_reduce", y.download(), want, [&](LL i) { return kBf * std::fabs(want(i)) + 1e-6; });
  }
  end_case(r, tag("a30_sym_bf16_all_reduce", {N}), before);
}

void sym_f32_all_gather(const Run& r, LL R, LL C) {
  auto xs = per_rank<float>(r.W, R * C, [&](unsigned s) { return wide_nz<float>(R * C, s); }, 321);
  SymArg<float> x(r.ctx, {R, C}, &xs[r.me]), y(r.ctx, {r.W * R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_sym_f32_all_gather", 2, x.view, y.view))
    check(r, "a30_sym_f32_all_gather", y.download(), [&](LL i) { return double(xs[i / (R * C)][i % (R * C)]); }, exact());
  end_case(r, tag("a30_sym_f32_all_gather", {R, C}), before);
}

void sym_i64_max(const Run& r, LL N) {
  auto xs = per_rank<i64>(r.W, N, [&](unsigned s) { return nzints<i64>(N, INT64_MIN + 1, INT64_MAX, s); }, 331);
  SymArg<i64> x(r.ctx, {N}, &xs[r.me]), y(r.ctx, {N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_sym_i64_max", 2, x.view, y.view)) {
    const auto got = y.download();
    LL bad = 0;
    for (LL i = 0; i < N; ++i) {
      i64 m = xs[0][i];
      for (int q = 1; q < r.W; ++q) m = std::max(m, xs[q][i]);
      if (got[i] != m && bad++ < 3) pkt::fail("a30_sym_i64_max element " + std::to_string(i) + " W=" + std::to_string(r.W));
    }
  }
  end_case(r, tag("a30_sym_i64_max", {N}), before);
}

void sym_f16_reduce_scatter(const Run& r, LL R, LL C, LL D) {
  const LL n = r.W * R * C * D, part = R * C * D;
  auto xs = per_rank<f16>(r.W, n, [&](unsigned s) { return wide_nz<f16>(n, s); }, 341);
  SymArg<f16> x(r.ctx, {r.W * R, C, D}, &xs[r.me]), y(r.ctx, {R, C, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_sym_f16_reduce_scatter", 2, x.view, y.view)) {
    auto want = [&](LL i) {
      double s = 0;
      for (int q = 0; q < r.W; ++q) s += val(xs[q][r.me * part + i]);
      return s;
    };
    check(r, "a30_sym_f16_reduce_scatter", y.download(), want, [&](LL i) { return kHf * std::fabs(want(i)) + 1e-3; });
  }
  end_case(r, tag("a30_sym_f16_reduce_scatter", {R, C, D}), before);
}

void sym_i8_gather_cols(const Run& r, LL R, LL C) {
  auto xs = per_rank<i8>(r.W, R * C, [&](unsigned s) { return nzints<i8>(R * C, -128, 127, s); }, 351);
  SymArg<i8> x(r.ctx, {R, C}, &xs[r.me]), y(r.ctx, {R, r.W * C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_sym_i8_gather_cols", 2, x.view, y.view))
    check(r, "a30_sym_i8_gather_cols", y.download(), [&](LL i) {
      const LL row = i / (r.W * C), col = i % (r.W * C);
      return double(xs[col / C][row * C + col % C]);
    }, exact());
  end_case(r, tag("a30_sym_i8_gather_cols", {R, C}), before);
}

void sym_e4m3_gather(const Run& r, LL R, LL C) {
  auto xs = per_rank<E4>(r.W, R * C, [&](unsigned s) { return wide_nz<E4>(R * C, s, -300.f, 300.f); }, 361);
  SymArg<E4> x(r.ctx, {R, C}, &xs[r.me]);
  DevLocal<E4> y({r.W * R, C}, {});
  const int before = begin_case(r);
  if (run(r, "a30_sym_e4m3_gather", 2, x.view, y.view())) {
    const auto got = y.download();
    LL bad = 0;
    for (LL i = 0; i < r.W * R * C; ++i)
      if (got[i].bits != xs[i / (R * C)][i % (R * C)].bits && bad++ < 3)
        pkt::fail("a30_sym_e4m3_gather element " + std::to_string(i) + " W=" + std::to_string(r.W));
  }
  end_case(r, tag("a30_sym_e4m3_gather", {R, C}), before);
}

void sym_4d_broadcast(const Run& r, LL A, LL B, LL C, LL D) {
  const LL n = A * B * C * D;
  const LL root = r.W - 1;
  auto xs = per_rank<float>(r.W, n, [&](unsigned s) { return wide_nz<float>(n, s); }, 371);
  SymArg<float> x(r.ctx, {A, B, C, D}, &xs[r.me]), y(r.ctx, {A, B, C, D}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_sym_4d_broadcast", 2, x.view, y.view, root))
    check(r, "a30_sym_4d_broadcast", y.download(), [&](LL i) { return double(xs[root][i]); }, exact());
  end_case(r, tag("a30_sym_4d_broadcast", {A, B, C, D}), before);
}

void scratch_all_reduce(const Run& r, LL R, LL C) {
  auto xs = per_rank<float>(r.W, R * C, [&](unsigned s) { return wide_nz<float>(R * C, s); }, 381);
  DevLocal<float> x({R, C}, xs[r.me]);
  SymArg<float> p(r.ctx, {R, C}, nullptr), y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_scratch_all_reduce", 2, x.view(), p.view, y.view)) {
    auto want = [&](LL i) {
      double s = 0;
      for (int q = 0; q < r.W; ++q) s += 2.0 * xs[q][i] + q;
      return s;
    };
    check(r, "a30_scratch_all_reduce", y.download(), want, [&](LL i) { return 1e-6 * (std::fabs(want(i)) + 8 * r.W) + 1e-6; });
  }
  end_case(r, tag("a30_scratch_all_reduce", {R, C}), before);
}

void scratch_i32(const Run& r, LL N) {
  auto xs = per_rank<int>(r.W, N, [&](unsigned s) { return nzints<int>(N, INT32_MIN, INT32_MAX, s); }, 391);
  DevLocal<int> x({N}, xs[r.me]);
  SymArg<int> p(r.ctx, {N}, nullptr), y(r.ctx, {N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_scratch_i32", 2, x.view(), p.view, y.view))
    check(r, "a30_scratch_i32", y.download(), [&](LL i) {
      uint64_t s = 0;
      for (int q = 0; q < r.W; ++q) s += u64(i64(wrap32(u64(i64(xs[q][i])) + u64(q))));
      return double(wrap32(s));
    }, exact());
  end_case(r, tag("a30_scratch_i32", {N}), before);
}

void sym_i64_pull(const Run& r, LL N) {
  const int src = (r.me + r.W - 1) % r.W;
  auto xs = per_rank<i64>(r.W, N, [&](unsigned s) { return nzints<i64>(N, -(1LL << 40), 1LL << 40, s); }, 401);
  SymArg<i64> x(r.ctx, {N}, &xs[r.me]);
  DevLocal<float> y({N}, {});
  const int before = begin_case(r);
  if (run(r, "a30_sym_i64_pull", 2, x.view, y.view()))
    check(r, "a30_sym_i64_pull", y.download(), [&](LL i) { return double(static_cast<float>(xs[src][i])); }, exact());
  end_case(r, tag("a30_sym_i64_pull", {N}), before);
}

void store_add_next(const Run& r, LL R, LL C) {
  const int src = (r.me + r.W - 1) % r.W;
  auto xs = per_rank<float>(r.W, R * C, [&](unsigned s) { return wide_nz<float>(R * C, s); }, 411);
  DevLocal<float> x({R, C}, xs[r.me]);
  SymArg<float> y(r.ctx, {R, C}, nullptr);
  const int before = begin_case(r);
  if (run(r, "a30_store_add_next", 2, x.view(), y.view))
    check(r, "a30_store_add_next", y.download(), [&](LL i) { return double(xs[src][i]); }, exact());
  end_case(r, tag("a30_store_add_next", {R, C}), before);
}

void host_loop(const Run& r, LL N, LL steps) {
  auto xs = per_rank<float>(r.W, N, [&](unsigned s) { return wide_nz<float>(N, s, -1.f, 1.f); }, 421);
  SymArg<float> x(r.ctx, {N}, &xs[r.me]), y(r.ctx, {N}, nullptr);
  const float scale = 0.5f;
  // float64 model: every trip y = sum over ranks of x, then x = y * scale + t (the same on every rank).
  std::vector<std::vector<double>> cur(r.W, std::vector<double>(N));
  for (int q = 0; q < r.W; ++q)
    for (LL i = 0; i < N; ++i) cur[q][i] = xs[q][i];
  std::vector<double> ys(N, std::nan(""));
  for (LL t = 0; t < steps; ++t)
    for (LL i = 0; i < N; ++i) {
      double s = 0;
      for (int q = 0; q < r.W; ++q) s += cur[q][i];
      ys[i] = s;
      for (int q = 0; q < r.W; ++q) cur[q][i] = s * scale + double(t);
    }
  const int before = begin_case(r);
  if (run(r, "a30_host_loop", 1, x.view, y.view, steps, scale)) {
    check(r, "a30_host_loop.x", x.download(), [&](LL i) { return cur[r.me][i]; }, [&](LL i) { return 1e-5 * (std::fabs(cur[r.me][i]) + steps * r.W) + 1e-6; });
    if (steps > 0)
      check(r, "a30_host_loop.y", y.download(), [&](LL i) { return ys[i]; }, [&](LL i) { return 1e-5 * (std::fabs(ys[i]) + steps * r.W) + 1e-6; });
    else
      check_untouched(r, "a30_host_loop.y", y.download(), [](LL) { return true; });
  }
  end_case(r, tag("a30_host_loop", {N, steps}), before);
}

// ---- the JIT's host side ----
void refusals(const Run& r) {
  const int before = begin_case(r);
  const LL N = 1000;
  DevLocal<float> x({N}, wide_nz<float>(N, 501)), y({N}, wide_nz<float>(N, 502)), z({N}, {});
  DevLocal<int> xi({N}, nzints<int>(N, -5, 5, 503));
  const std::string ax = "a30_f32_axpy";
  refused(r, ax, "with an i32 x", "element type i32, want f32", xi.view(), y.view(), z.view(), 1.0f);
  refused(r, ax, "with three arguments", "takes 4 arguments, got 3", x.view(), y.view(), z.view());
  refused(r, ax, "with an index for a float", "element type index, want f32", x.view(), y.view(), z.view(), 1LL);
  refused(r, ax, "with a 2-D x", "shape[1] = 2 but the spec's rank is 1", with_shape(x.view(), {500, 2}), y.view(), z.view(), 1.0f);
  refused(r, ax, "with a negative extent", "must not be negative", with_shape(x.view(), {-4}, -4), y.view(), z.view(), 1.0f);
  refused(r, ax, "with numel past the shape", "numel does not match the shape", with_shape(x.view(), {N}, N + 1), y.view(), z.view(), 1.0f);
  pk::Tensor<float> null_x = x.view();
  null_x.data = nullptr;
  refused(r, ax, "with null data", "null data", null_x, y.view(), z.view(), 1.0f);
  refused(r, "a30_i8_1d_add", "with a float for an index", "element type f32, want index",
          DevLocal<i8>({4}, {1, 2, 3, 4}).view(), DevLocal<i8>({4}, {}).view(), 1.0f);
  // Sym arguments: the kind, mapping on every rank, and the collectives' shape rules (every rank refuses alike).
  SymArg<bf16> sx(r.ctx, {N}, nullptr), sy(r.ctx, {N}, nullptr), sshort(r.ctx, {N - 1}, nullptr);
  DevLocal<bf16> lx({N}, {});
  refused(r, "a30_sym_bf16_all_reduce", "with a local x", "wrong kind", lx.view(), sy.view);
  refused(r, "a30_sym_bf16_all_reduce", "with a shorter y", "input and output must have the same element count", sx.view, sshort.view);
  if (r.W > 1) {
    pk::SymTensor<bf16> unmapped = sx.view;
    unmapped.peer[r.W - 1] = nullptr;
    refused(r, "a30_sym_bf16_all_reduce", "with a peer unmapped", "not mapped on rank " + std::to_string(r.W - 1), unmapped, sy.view);
  }
  SymArg<float> gx(r.ctx, {16, 32}, nullptr), gy(r.ctx, {16 * r.W + 1, 32}, nullptr);
  refused(r, "a30_sym_f32_all_gather", "with y of W R + 1 rows", "the output must hold", gx.view, gy.view);
  SymArg<i8> cx(r.ctx, {8, 32}, nullptr), cy(r.ctx, {8, 32 * r.W + 8}, nullptr);
  refused(r, "a30_sym_i8_gather_cols", "with y of W C + 8 columns", "dimension 1 of the output must be world_size times", cx.view, cy.view);
  SymArg<float> bx(r.ctx, {2, 3, 4, 5}, nullptr), by(r.ctx, {2, 3, 4, 5}, nullptr);
  refused(r, "a30_sym_4d_broadcast", "with root = W", "the root must be a rank below world_size", bx.view, by.view, LL(r.W));
  refused(r, "a30_sym_4d_broadcast", "with root = -1", "the root must be a rank below world_size", bx.view, by.view, LL(-1));
  // After the refusals (nothing launched anywhere), the epochs still pair: a valid all-reduce gives the sum.
  end_case(r, "host refusals", before);
  sym_bf16_all_reduce(r, 777);
}

// Empty tensors: a launch whose tensors are all empty returns ok without launching (no epoch spent), one with
// some empty runs as usual.
void empties(const Run& r) {
  {
    SymArg<bf16> x(r.ctx, {0}, nullptr), y(r.ctx, {0}, nullptr);
    const int before = begin_case(r);
    run(r, "a30_sym_bf16_all_reduce", 3, x.view, y.view);
    end_case(r, "a30_sym_bf16_all_reduce empty (skipped)", before);
  }
  sym_bf16_all_reduce(r, 1000);  // the next launch still pairs on every rank
  if (r.W == 1) {
    {
      DevLocal<i8> x({0}, {}), y({0}, {});
      const int before = begin_case(r);
      run(r, "a30_i8_1d_add", 2, x.view(), y.view(), 1LL);
      end_case(r, "a30_i8_1d_add empty", before);
    }
    concat(r, 0, 300, 0);
    concat(r, 300, 0, 20);
    count_bound(r, 80, 128, 0);
    {  // a 0 x 128 x and y beside a non-empty bias: launches, writes nothing
      DevLocal<float> x({0, 128}, {}), b({1, 128}, wide_nz<float>(128, 601)), y({0, 128}, {});
      const int before = begin_case(r);
      run(r, "a30_row_bias", 2, x.view(), b.view(), y.view());
      end_case(r, "a30_row_bias 0x128", before);
    }
  }
}

// Holes the JIT does not check (findings), shown without a launch that could fault.
void unchecked(const Run& r) {
  const LL M = 16, N = 128;
  DevLocal<float> x({M, N}, wide_nz<float>(M * N, 701)), bias1({N}, wide_nz<float>(N, 702)), y({M, N}, {});
  const auto& k = g_kernels.at("a30_row_bias");
  // Finding 12: a 1-D [N] tensor for the Tensor<f32, 2> [1, N] bias is taken as [N, 1] (pk::Tensor has no rank).
  const pk::Status rank = pk::jit::check_launch_args(k.info(), {pk::jit::arg_value(x.view()), pk::jit::arg_value(bias1.view()),
                                                                 pk::jit::arg_value(y.view())}, r.W);
  finding(!rank.is_ok(), "12: a 1-D tensor for a 2-D parameter is refused by the JIT (now: " +
                             (rank.is_ok() ? std::string("accepted as [N, 1]") : rank.message()) + ")");
  // Finding 13: a data pointer that is not aligned to its element type (an f32 at a 2-byte offset).
  pk::Tensor<float> odd = x.view();
  odd.data = reinterpret_cast<float*>(reinterpret_cast<char*>(odd.data) + 2);
  odd = with_shape(odd, {M, N - 1});
  const pk::Status align = pk::jit::check_launch_args(k.info(), {pk::jit::arg_value(odd), pk::jit::arg_value(DevLocal<float>({1, N}, wide_nz<float>(N, 703)).view()),
                                                                  pk::jit::arg_value(y.view())}, r.W);
  finding(!align.is_ok(), "13: an f32 tensor at a 2-byte offset is refused on the host (now: " +
                              (align.is_ok() ? std::string("accepted; a launch would fault") : align.message()) + ")");
}

// Two specs whose kernels share a name (one all-reduces, one stores into the next rank) launched in turn on one
// context: each keeps its own flag region and epoch (the JIT tags the region with the code).
void same_name(const Run& r, const pk::jit::Kernel& ka, const pk::jit::Kernel& kb) {
  const LL N = 4096;
  auto xs = per_rank<float>(r.W, N, [&](unsigned s) { return wide_nz<float>(N, s); }, 801);
  SymArg<float> x(r.ctx, {N}, &xs[r.me]), ya(r.ctx, {N}, nullptr), yb(r.ctx, {N}, nullptr);
  const int before = begin_case(r);
  for (int t = 0; t < 3; ++t) {
    if (!pkt::cases::run(r, ka, "s30_same (all-reduce)", 1, x.view, ya.view)) break;
    if (!pkt::cases::run(r, kb, "s30_same (ring)", 1, x.view, yb.view)) break;
  }
  const int src = (r.me + r.W - 1) % r.W;
  check(r, "s30_same all-reduce", ya.download(), [&](LL i) {
    double s = 0;
    for (int q = 0; q < r.W; ++q) s += xs[q][i];
    return s;
  }, [&](LL i) { return 1e-6 * r.W * 2 + 1e-6 * std::fabs(xs[0][i]); });
  check(r, "s30_same ring", yb.download(), [&](LL i) { return 2.0 * xs[src][i]; }, exact());
  end_case(r, "two specs, one kernel name, one context", before);
}


// Finding 3, as the typed launchers run kernels: two launcher libraries (other NAMESPACEs, or other spec files)
// whose kernels share a name take the flag region of the bare name (`const std::string region = "<name>";` in
// every generated launcher), so their epochs interleave on one context. This launches the two s30_same kernels
// exactly as their generated launchers would (grid, block, region, arguments), in turn, and reports what happens.
// It leaves the context's flags out of step when it fails (a timeout), so it runs last, at W = 2, and only with
// PK_TEST_S30_LAUNCHER_REGION=1.
void launcher_regions(const Run& r, const pk::jit::Kernel& ka, const pk::jit::Kernel& kb) {
  const LL N = 1 << 16;
  auto xs = per_rank<float>(r.W, N, [&](unsigned s) { return wide_nz<float>(N, s); }, 901);
  SymArg<float> x(r.ctx, {N}, &xs[r.me]), ya(r.ctx, {N}, nullptr), yb(r.ctx, {N}, nullptr);
  auto ma = pk::Module::load(ka.image());
  auto mb = pk::Module::load(kb.image());
  if (!ma.is_ok() || !mb.is_ok()) return pkt::fail("launcher_regions: module load");
  auto fa = (*ma)->kernel("s30_same");
  auto fb = (*mb)->kernel("s30_same");
  if (!fa.is_ok() || !fb.is_ok()) return pkt::fail("launcher_regions: kernel lookup");
  pkt::ready(r.ctx);
  r.ctx.set_timeout_ns(2000000000ull);  // 2 s: a mismatched wait ends soon
  auto as_launcher = [&](const pk::Kernel& f, const pk::jit::KernelInfo& info, const pk::SymTensor<float>& y) {
    pk::LaunchConfig cfg;
    cfg.grid = dim3(pk::rank_grid(r.ctx, info.blocks, info.blocks_per_sm));
    cfg.block = dim3(info.threads);
    cfg.shared_bytes = info.shared_bytes;
    auto lc = r.ctx.make_launch_context("s30_same");  // what the generated launcher passes
    if (!lc.is_ok()) return lc.status();
    pk::KernelArgs args;
    args.add(*lc);
    args.add(x.view);
    args.add(y);
    return f.launch(cfg, r.s, args);
  };
  pk::Status s;
  for (int t = 0; t < 2 && s.is_ok(); ++t) {
    s = as_launcher(*fa, ka.info(), ya.view);
    if (s.is_ok()) s = as_launcher(*fb, kb.info(), yb.view);
  }
  cudaStreamSynchronize(r.s);
  const pk::Status e = s.is_ok() ? r.ctx.check_errors() : s;
  bool right = e.is_ok();
  if (right) {
    const int src = (r.me + r.W - 1) % r.W;
    const auto ga = ya.download(), gb = yb.download();
    for (LL i = 0; i < N && right; ++i) {
      double sum = 0;
      for (int q = 0; q < r.W; ++q) sum += xs[q][i];
      right = std::fabs(ga[i] - sum) <= 1e-5 * (std::fabs(sum) + 1) && gb[i] == 2.0f * xs[src][i];
    }
  }
  if (r.me == 0)
    finding(right, "3: two launcher libraries' kernels of one name on one context (now: " +
                       (e.is_ok() ? std::string(right ? "right" : "wrong results") : e.message().substr(0, 160)) + ")");
}


// Finding 1, on the device: unsigned arithmetic of the probes (user_specs30_probes.pk.cpp) against C++'s.
std::optional<pk::jit::Kernel> g_p1, g_p2;
void unsigned_probes(const Run& r) {
  if (!g_p1 || !g_p2) return;
  const LL N = 300;
  DevLocal<float> y({N}, {});
  if (pkt::cases::run(r, *g_p1, "p1_unsigned_wrap", 1, y.view())) {
    const auto got = y.download();
    const bool cxx = got[0] == 4294967295.0f;
    finding(cxx, "1: unsigned b = 5u - 6u is 4294967295 as in C++ (now: " + std::to_string(got[0]) + ")");
  }
  const LL M = 20, C = 70;
  const LL seed = 123456789;  // seed * 2654435761 passes 2^32
  DevLocal<float> u({M, C}, {});
  if (pkt::cases::run(r, *g_p2, "p2_unsigned_seed", 1, u.view(), seed)) {
    const auto got = u.download();
    const LL mixed = LL(uint32_t(uint64_t(seed) * 2654435761ull));  // C++: unsigned arithmetic wraps at 2^32
    LL same = 0;
    for (LL i = 0; i < M * C; ++i) same += got[i] == uniform_at(mixed, {i / C, i % C});
    finding(same == M * C, "1: uniform(seed * 2654435761u) with an unsigned seed follows C++'s 32-bit product (now: " +
                               std::to_string(same) + " of " + std::to_string(M * C) + " elements agree)");
  }
}

// ---- the cache (before any rank starts) ----
std::string temp_dir() {
  char pattern[] = "/tmp/pk-s30-XXXXXX";
  const char* d = mkdtemp(pattern);
  return d ? d : "";
}
void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

const char* kScaleSpec =
    "#include <pk/spec.h>\nusing namespace pk;\n"
    "PK_KERNEL void s30_scale(Tensor<f32, 1> x, Tensor<f32, 1> y) {\n"
    "  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * SCALE, i);\n}\n";

void cache_checks() {
  const pk::jit::Frontend fe = pk::jit::pkc_frontend(PK_PKC);
  const std::string dir = temp_dir(), cache = dir + "/cache";
  if (dir.empty()) return pkt::fail("cache: cannot make a temporary directory");
  mkdir(cache.c_str(), 0755);
  pk::jit::Options o;
  o.cache_dir = cache;
  auto text = [](const char* scale) {
    std::string t = kScaleSpec;
    return t.replace(t.find("SCALE"), 5, scale);
  };
  auto a = pk::jit::compile_spec(dir + "/s30.pk.cpp", text("2.0f"), o, fe);
  auto b = pk::jit::compile_spec(dir + "/elsewhere/s30.pk.cpp", text("2.0f"), o, fe);
  auto c = pk::jit::compile_spec(dir + "/s30.pk.cpp", text("3.0f"), o, fe);
  pk::jit::Options off = o;
  off.tile_threads = 1024;
  auto d = pk::jit::compile_spec(dir + "/s30.pk.cpp", text("2.0f"), off, fe);
  if (!a.is_ok() || !b.is_ok() || !c.is_ok() || !d.is_ok()) {
    pkt::fail("cache: a compile failed: " + (!a.is_ok() ? a.status() : !b.is_ok() ? b.status() : !c.is_ok() ? c.status() : d.status()).message());
  } else {
    PKT_CHECK(!a->from_cache(), "the first compile came from the cache");
    PKT_CHECK(b->from_cache() && b->image() == a->image(), "the same text under another path was not a hit");
    PKT_CHECK(!c->from_cache() && c->image() != a->image(), "a changed spec was a hit");
    PKT_CHECK(!d->from_cache(), "changed options were a hit");
  }
  // Errors come back as values naming the spec's line.
  auto bad = pk::jit::compile_spec(dir + "/bad30.pk.cpp", "#include <pk/spec.h>\nusing namespace pk;\nPK_KERNEL void b(Tensor<f32, 1> x, double s) {}\n", o, fe);
  PKT_CHECK(!bad.is_ok() && bad.status().message().find("bad30.pk.cpp:3:") != std::string::npos,
            "a bad spec's error does not name its line: " + (bad.is_ok() ? std::string("compiled") : bad.status().message()));
  auto which = pk::jit::compile_spec(dir + "/two.pk.cpp", std::string(kScaleSpec).replace(std::string(kScaleSpec).find("SCALE"), 5, "2.0f") +
                                         "PK_KERNEL void s30_other(Tensor<f32, 1> x) {}\n", o, fe);
  PKT_CHECK(!which.is_ok() && which.status().message().find("several kernels") != std::string::npos,
            "two kernels without Options::kernel: " + (which.is_ok() ? std::string("compiled") : which.status().message()));

  // Finding 2: an included header's change is not in the cache key (a stale kernel comes back).
  write_file(dir + "/s30_cfg.h", "#define S30_CFG 2.0f\n");
  const std::string inc = "#include <pk/spec.h>\n#include \"" + dir + "/s30_cfg.h\"\nusing namespace pk;\n"
                          "PK_KERNEL void s30_inc(Tensor<f32, 1> x, Tensor<f32, 1> y) {\n"
                          "  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * S30_CFG, i);\n}\n";
  auto i1 = pk::jit::compile_spec(dir + "/s30_inc.pk.cpp", inc, o, fe);
  write_file(dir + "/s30_cfg.h", "#define S30_CFG 3.0f\n");
  auto i2 = pk::jit::compile_spec(dir + "/s30_inc.pk.cpp", inc, o, fe);
  if (i1.is_ok() && i2.is_ok())
    finding(!i2->from_cache() && i2->image() != i1->image(),
            "2: a changed header gives a new kernel (now: from_cache=" + std::to_string(i2->from_cache()) + ")");
  else
    pkt::fail("include compile: " + (i1.is_ok() ? i2.status() : i1.status()).message());
  // Finding 2b: through the pkc front end (pk_torch's) a header next to the spec is not found.
  write_file(dir + "/s30_near.h", "#define S30_NEAR 4.0f\n");
  std::string near = inc;
  near.replace(near.find("#include \"" + dir + "/s30_cfg.h\""), ("#include \"" + dir + "/s30_cfg.h\"").size(), "#include \"s30_near.h\"");
  near.replace(near.find("S30_CFG"), 7, "S30_NEAR");
  write_file(dir + "/s30_near.pk.cpp", near);
  auto n1 = pk::jit::compile_spec(dir + "/s30_near.pk.cpp", near, o, fe);
  finding(n1.is_ok(), "2b: a spec's relative #include compiles through pkc_frontend (now: " +
                          (n1.is_ok() ? std::string("ok") : n1.status().message().substr(0, 120)) + ")");
  // Finding 14: a cache_dir that does not exist fails the compile after the work is done.
  pk::jit::Options missing = o;
  missing.cache_dir = dir + "/not/yet/there";
  auto m1 = pk::jit::compile_spec(dir + "/s30.pk.cpp", text("5.0f"), missing, fe);
  finding(m1.is_ok(), "14: Options::cache_dir is created when missing (now: " +
                          (m1.is_ok() ? std::string("ok") : m1.status().message().substr(0, 120)) + ")");
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

const char* kSameA =
    "#include <pk/spec.h>\nusing namespace pk;\n"
    "PK_KERNEL void s30_same(Sym<f32, 1> x, Sym<f32, 1> y) { all_reduce(Sum, x, y); }\n";
const char* kSameB =
    "#include <pk/spec.h>\nusing namespace pk;\n"
    "PK_KERNEL void s30_same(Sym<f32, 1> x, Sym<f32, 1> y) {\n"
    "  for (auto i : tiles(x.size(), {256})) store(y.on(next_rank()), load<256>(x, i) * 2.0f, i);\n}\n";

std::optional<pk::jit::Kernel> g_same_a, g_same_b;

// ---- cases ----
void cases(const Run& r) {
  if (r.W == 1) {
    i8_1d_add(r, 1000);
    i8_1d_add(r, 4096);
    i32_2d_affine(r, 37, 100);
    i32_2d_affine(r, 64, 128);
    i64_3d_scale(r, 3, 13, 70);
    f16_4d(r, 2, 3, 21, 70);
    bf16_row_scale(r, 45, 300);
    f32_axpy(r, 5000);
    e4m3_quant(r, 37, 384);
    e4m3_quant(r, 20, 200);
    e5m2_dequant(r, 30, 200);
    i8_3d_to_f32(r, 5, 9, 70);
    i32_4d_widen(r, 3, 5, 9, 40);
    scalar_mix(r, 3000);
    dims_as_values(r, 2, 3, 17, 45);
    count_bound(r, 80, 128, 37);
    count_bound(r, 80, 200, 100);
    gather_i64(r, 37, 50, 200);
    concat(r, 300, 77, 0);
    concat(r, 256, 512, 0);
    scalar_reads(r, 1500);
    row_bias(r, 37, 300);
    for (const char* how : {"", "general twin", "templates off"}) {
      const std::string h = how, sfx = h == "templates off" ? "/general" : "";
      const bool twin = h == "general twin";
      gemm_alpha(r, "a30_gemm_alpha" + sfx, 200, 264, twin ? 70 : 272, h);
      gemm_f16_bias_f32(r, "a30_gemm_f16_bias_f32" + sfx, 200, twin ? 262 : 264, 136, h);
      w8a8_i32(r, "a30_w8a8_i32" + sfx, 200, 264, twin ? 72 : 272, h);
      gemm_e5m2(r, "a30_gemm_e5m2_weights" + sfx, 200, 264, twin ? 72 : 272, h);
    }
    unchecked(r);
    unsigned_probes(r);
    if (std::getenv("PK_TEST_S30_LARGE")) i8_1d_add_large(r);
  }
  rank_values(r, 19, 300);
  sym_i32_ring(r, 37, 100);
  sym_bf16_all_reduce(r, 100003);
  sym_bf16_all_reduce(r, 64);
  sym_f32_all_gather(r, 37, 70);
  sym_i64_max(r, 5000);
  sym_f16_reduce_scatter(r, 7, 9, 40);
  sym_i8_gather_cols(r, 13, 100);
  sym_e4m3_gather(r, 19, 64);
  sym_4d_broadcast(r, 2, 3, 7, 50);
  scratch_all_reduce(r, 37, 200);
  scratch_i32(r, 3001);
  sym_i64_pull(r, 2000);
  store_add_next(r, 37, 200);
  host_loop(r, 3000, 3);
  host_loop(r, 500, 0);
  refusals(r);
  empties(r);
  if (g_same_a && g_same_b) same_name(r, *g_same_a, *g_same_b);
  if (g_same_a && g_same_b && r.W == 2 && std::getenv("PK_TEST_S30_LAUNCHER_REGION"))
    launcher_regions(r, *g_same_a, *g_same_b);  // last: a timeout leaves this context's flags out of step
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  cache_checks();
  {
    const pk::jit::Frontend fe = pk::jit::pkc_frontend(PK_PKC);
    auto a = pk::jit::compile_spec("s30_same_a.pk.cpp", kSameA, {}, fe);
    auto b = pk::jit::compile_spec("s30_same_b.pk.cpp", kSameB, {}, fe);
    if (!a.is_ok() || !b.is_ok()) pkt::fail("same-name specs: " + (a.is_ok() ? b.status() : a.status()).message());
    else g_same_a = *a, g_same_b = *b;
  }
  // The probes of finding 1 (unsigned int arithmetic) are refused by pkc now, behind PK_PROBE_UNSIGNED in the probes
  // file; test/Compile/user_specs30.test checks the refusal.
  if (!compile_set(PK_USER_SPECS30_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return pkt::finish("user_specs30_jit_test");
  KernelSet all = g_kernels;
  if (g_same_a) all.emplace("s30_same/a", *g_same_a), all.emplace("s30_same/b", *g_same_b);
  if (g_p1) all.emplace("p1_unsigned_wrap", *g_p1), all.emplace("p2_unsigned_seed", *g_p2);
  return run_worlds("user_specs30_jit_test", all, cases);
}

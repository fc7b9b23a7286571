// The twenty-ninth user-written spec set (test/specs/user_specs29.pk.cpp: W8A8 GEMMs, i8 x i8 into an i32
// accumulator, with every epilogue kind on the int8 template and the general path, beside collectives and peers;
// integer register tiles moved by whole runs or element by element) through the JIT, each kernel against a host
// reference written from its comment, on fresh random non-zero inputs (every i8 value), with every output poisoned
// first (0xff bytes: -1 for integers, NaN for floats; a -1 the reference does not predict fails).
//
// GEMM kernels on the template run three ways: at sizes with tails in every dimension (M = 200, N = 264, K = 272
// against 128 x 256 x 128 steps; K % 16 == 0 as the int8 template needs), at K = 72 (not a multiple of 16: the
// general-path twin), and compiled with templates off ("name/general"). w29_raw_s32 also sums past 2^31 (x = -128
// and w = -128 over K = 131088: each sum wraps at 32 bits) on its template and on its twin (K = 131080).
// Integer references are exact (int64 sums wrapped to 32 bits); float outputs are taken within their rounding:
// f32(acc) is exact (|acc| < 2^24 at these K), a few fp32 steps add 1e-6 relative, a bf16 / f16 output two units in
// its last place (2^-7 / 2^-10 relative), tanh.approx 2^-10 of |x| / 2 for GELU.
//
// The integer-tile kernels run on whole tiles inside aligned tensors (the whole-run path), on odd sizes (tails, rows
// not multiples of 8: the element path) and on views whose data pointer is 1, 3 or 8 elements past a 256-byte
// allocation's start (inputs and outputs), so that the run test (16-byte base, rows and origins multiples of 8)
// flips both ways. Multi-rank kernels run at W = 1, 2 and 3 (ranks sharing one GPU), each rank checking its own
// outputs; every kernel launches twice.
//
// Not tested: the probes (user_specs29_probes.pk.cpp) and the bad specs: they reproduce findings and refusals.
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
using pk::f16;
using pkt::DevLocal;
using pkt::SymArg;
using namespace pkt::cases;
using i8 = signed char;
using i64 = long long;

const std::vector<std::pair<const char*, bool>> kKernels = {
    {"w29_raw_s32", true},          {"w29_token_channel_bias", true}, {"w29_f16_alpha", true},
    {"w29_zero_point_f32", true},   {"w29_zero_point_i32", true},     {"w29_shift_clamp", true},
    {"w29_where_bits", true},       {"w29_i8_residual", true},        {"w29_wrap_coords", true},
    {"w29_tiles_64x128_k64", true}, {"w29_tiles_128_k32_bf16", true}, {"w29_gelu", true},
    {"w29_lengths", true},          {"w29_split_hi_lo", true},        {"w29_ab_general", false},
    {"w29_at_general", false},      {"w29_bmm_general", false},       {"w29_requant_i8", false},
    {"w29_i64_square", false},      {"w29_doubling_loop", false},     {"w29_two_products", false},
    {"w29_gemm_all_reduce", true},  {"w29_all_gather_gemm", true},    {"w29_gemm_reduce_scatter", true},
    {"w29_gemm_peer_store", false}, {"t29_i8_affine", false},         {"t29_i8_widen", false},
    {"t29_i32_shift_rows", false},  {"t29_i32_col_offset", false},    {"t29_i64_wide", false},
    {"t29_i32_1d_shift", false},    {"t29_i8_3d", false},             {"t29_i32_4d", false},
    {"t29_i32_transpose", false},   {"t29_i64_reshape", false},       {"t29_i8_gather", false},
    {"t29_i32_scatter", false},     {"t29_i32_sym_peer", false},      {"t29_i8_peer", false},
};
// Every kernel that takes a template, also with templates off (the general path: the reference route).
const std::vector<const char*> kGeneralToo = {
    "w29_raw_s32",          "w29_token_channel_bias", "w29_f16_alpha",   "w29_zero_point_f32",  "w29_zero_point_i32",
    "w29_shift_clamp",      "w29_where_bits",         "w29_i8_residual", "w29_wrap_coords",     "w29_tiles_64x128_k64",
    "w29_tiles_128_k32_bf16", "w29_gelu",             "w29_lengths",     "w29_split_hi_lo",     "w29_gemm_all_reduce",
    "w29_all_gather_gemm",  "w29_gemm_reduce_scatter",
};

KernelSet g_kernels;

void end_case(const Run& r, const std::string& what, int before) { pkt::cases::end_case(r, "user_specs29", what, before); }
template <class... A>
bool run(const Run& r, const std::string& kernel, int times, const A&... args) {
  return pkt::cases::run(r, g_kernels.at(kernel), kernel, times, args...);
}

// ---- inputs, wrapping and rounding ----
int32_t wrap32(i64 v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<unsigned long long>(v))); }
i8 wrap8(i64 v) { return static_cast<i8>(static_cast<unsigned char>(static_cast<unsigned long long>(v) & 0xFF)); }
i64 wrap64(unsigned long long v) { return static_cast<i64>(v); }
// Every i8 value but 0, at random.
std::vector<i8> bytes(LL n, unsigned seed) {
  auto v = ints<i8>(n, -128, 127, seed);
  for (auto& x : v)
    if (x == 0) x = 1;
  return v;
}
template <class T>
std::vector<T> nzints(LL n, LL lo, LL hi, unsigned seed) {
  auto v = ints<T>(n, lo, hi, seed);
  for (auto& x : v)
    if (x == 0) x = 1;
  return v;
}
const double kBf = std::ldexp(1.0, -7), kHf = std::ldexp(1.0, -10);
double gelu_t(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
// cvt.rzi.sat.s8.f32 of round-half-even.
i8 sat8(double v) { return static_cast<i8>(std::max(-128.0, std::min(127.0, std::nearbyint(v)))); }

// The i32 sums of x [M, K] times w, w [N, K] (kn false) or [K, N] (kn true), wrapping at 32 bits.
std::vector<int32_t> sums(LL M, LL N, LL K, const std::vector<i8>& x, const std::vector<i8>& w, bool kn = false) {
  std::vector<int32_t> c(M * N);
  for (LL m = 0; m < M; ++m)
    for (LL n = 0; n < N; ++n) {
      i64 s = 0;
      for (LL k = 0; k < K; ++k) s += i64(x[m * K + k]) * i64(kn ? w[k * N + n] : w[n * K + k]);
      c[m * N + n] = wrap32(s);
    }
  return c;
}
// Integers, exactly.
template <class T>
void check_int(const Run& r, const std::string& what, const std::vector<T>& got, const std::function<i64(LL)>& want) {
  LL bad = 0;
  for (LL i = 0; i < LL(got.size()); ++i)
    if (i64(got[i]) != want(i)) {
      if (bad < 3)
        pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + " element " + std::to_string(i) +
                  ": got " + std::to_string(i64(got[i])) + ", want " + std::to_string(want(i)));
      ++bad;
    }
  if (bad > 3) pkt::fail(what + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) + " elements wrong");
}
// Floats within rel * |want| + abs.
template <class T>
void check_rel(const Run& r, const std::string& what, const std::vector<T>& got, const std::function<double(LL)>& want,
               double rel, double abs = 1e-6, const std::function<double(LL)>& extra = nullptr) {
  check(r, what, got, want, [&](LL i) { return rel * std::fabs(want(i)) + abs + (extra ? extra(i) : 0.0); });
}
std::string tag(const std::string& kn, const std::string& how, std::initializer_list<LL> d) {
  return kn + " " + dims(d) + (how.empty() ? "" : " (" + how + ")");
}

// A device tensor whose data pointer lies `off` elements past a 256-byte aligned allocation (a view at an odd
// element offset), with `data` uploaded or poisoned (0xff) when empty.
template <class T>
struct OffLocal {
  std::vector<long long> shape;
  long long numel = 1;
  T* base = nullptr;
  int off;
  OffLocal(std::vector<long long> s, const std::vector<T>& data, int o) : shape(s), off(o) {
    for (long long d : s) numel *= d;
    PKT_CUDA(cudaMalloc(&base, (numel + off + 8) * sizeof(T)));
    PKT_CUDA(pkt::poison(base, (numel + off + 8) * sizeof(T)));
    if (!data.empty()) PKT_CUDA(cudaMemcpy(base + off, data.data(), numel * sizeof(T), cudaMemcpyHostToDevice));
  }
  OffLocal(const OffLocal&) = delete;
  ~OffLocal() { cudaFree(base); }
  pk::Tensor<T> view() const {
    pk::Tensor<T> t{};
    t.data = base + off;
    for (size_t d = 0; d < 4; ++d) t.shape[d] = d < shape.size() ? shape[d] : 1;
    t.numel = numel;
    return t;
  }
  std::vector<T> download() const {
    std::vector<T> v(static_cast<size_t>(numel));
    const cudaError_t e = cudaMemcpy(v.data(), base + off, numel * sizeof(T), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) pkt::fail(std::string("download: ") + cudaGetErrorString(e));
    return v;
  }
  // The elements around the view (before it and after it) still hold the poison: no store strayed.
  void check_margins(const Run& r, const std::string& what) const {
    std::vector<unsigned char> all((numel + off + 8) * sizeof(T));
    PKT_CUDA(cudaMemcpy(all.data(), base, all.size(), cudaMemcpyDeviceToHost));
    LL bad = 0;
    for (LL b = 0; b < LL(off * sizeof(T)); ++b) bad += all[b] != 0xff;
    for (LL b = LL((numel + off) * sizeof(T)); b < LL(all.size()); ++b) bad += all[b] != 0xff;
    if (bad) pkt::fail(what + " W=" + std::to_string(r.W) + ": " + std::to_string(bad) + " bytes written outside the view");
  }
};

// ---- W8A8 on the template ----
struct Ops {
  LL M, N, K;
  std::vector<i8> x, w;
  std::vector<int32_t> c;
  Ops(LL m, LL n, LL k, unsigned s) : M(m), N(n), K(k), x(bytes(m * k, s)), w(bytes(n * k, s + 1)) { c = sums(M, N, K, x, w); }
};

void raw_s32(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  Ops o(M, N, K, s);
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<int> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), c.view())) check_int(r, kn, c.download(), [&](LL i) { return o.c[i]; });
  end_case(r, tag(kn, how, {M, N, K}), before);
}
// Sums past 2^31: x = -128 everywhere, w = -128 in even rows and 127 in odd ones (each sum of an even row wraps).
void raw_s32_wrap(const Run& r, const std::string& kn, LL K, const std::string& how) {
  const LL M = 8, N = 16;
  std::vector<i8> x(M * K, i8(-128)), w(N * K);
  for (LL n = 0; n < N; ++n)
    for (LL k = 0; k < K; ++k) w[n * K + k] = n % 2 ? i8(127) : i8(-128);
  DevLocal<i8> xd({M, K}, x), wd({N, K}, w);
  DevLocal<int> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), c.view()))
    check_int(r, kn + ".wrap", c.download(), [&](LL i) { return wrap32(-128LL * w[(i % N) * K] * K); });
  end_case(r, tag(kn, how + (how.empty() ? "" : ", ") + "sums past 2^31", {M, N, K}), before);
}

void token_channel_bias(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  Ops o(M, N, K, s);
  const auto sx = nz<float>(M, s + 2, 1e-4f, 1e-3f), sw = nz<float>(N, s + 3, -1e-3f, 1e-3f);
  const auto bias = nz<bf16>(N, s + 4, -2.f, 2.f);
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<float> sxd({M, 1}, sx), swd({N}, sw);
  DevLocal<bf16> bd({N}, bias), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), sxd.view(), swd.view(), bd.view(), y.view())) {
    auto want = [&](LL i) { return double(o.c[i]) * sx[i / N] * sw[i % N] + val(bias[i % N]); };
    check_rel(r, kn, y.download(), want, kBf, 1e-5, [&](LL i) { return 1e-6 * std::fabs(double(o.c[i]) * sx[i / N] * sw[i % N]); });
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void f16_alpha(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  Ops o(M, N, K, s);
  const auto sw = nz<float>(N, s + 2, -1e-3f, 1e-3f);
  const float alpha = 0.75f;
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<float> swd({N, 1}, sw);
  DevLocal<f16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), swd.view(), y.view(), alpha))
    check_rel(r, kn, y.download(), [&](LL i) { return double(o.c[i]) * (alpha * sw[i % N]); }, kHf + 1e-6, 1e-6);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void zero_point(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s, bool f32out) {
  Ops o(M, N, K, s);
  const auto zx = nzints<int>(M, -128, 127, s + 2);
  const auto rw = nzints<int>(N, -40000, 40000, s + 3);
  const auto sx = nz<float>(M, s + 4, 1e-4f, 1e-3f), sw = nz<float>(N, s + 5, -1e-3f, 1e-3f);
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<int> zxd({M}, zx), rwd({N}, rw);
  DevLocal<float> sxd({M}, sx), swd({N}, sw);
  auto q = [&](LL i) { return wrap32(i64(o.c[i]) - wrap32(i64(zx[i / N]) * rw[i % N])); };
  const int before = begin_case(r);
  if (f32out) {
    DevLocal<float> y({M, N}, {});
    if (run(r, kn, 2, xd.view(), wd.view(), zxd.view(), rwd.view(), sxd.view(), swd.view(), y.view()))
      check_rel(r, kn, y.download(), [&](LL i) { return double(float(q(i))) * sx[i / N] * sw[i % N]; }, 1e-6, 1e-9);
  } else {
    DevLocal<int> c({M, N}, {});
    if (run(r, kn, 2, xd.view(), wd.view(), zxd.view(), rwd.view(), c.view()))
      check_int(r, kn, c.download(), [&](LL i) { return q(i); });
  }
  end_case(r, tag(kn, how, {M, N, K}), before);
}
void zero_point_f32(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  zero_point(r, kn, M, N, K, how, s, true);
}
void zero_point_i32(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  zero_point(r, kn, M, N, K, how, s, false);
}

// Kernels of x, w and one i32 output, with a reference of (acc, row, col).
void int_epilogue(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s,
                  const std::function<i64(int32_t, LL, LL)>& f) {
  Ops o(M, N, K, s);
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<int> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), c.view()))
    check_int(r, kn, c.download(), [&](LL i) { return f(o.c[i], i / N, i % N); });
  end_case(r, tag(kn, how, {M, N, K}), before);
}
void shift_clamp(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  int_epilogue(r, kn, M, N, K, how, s, [](int32_t a, LL, LL) {
    return std::min<i64>(std::max<i64>(wrap32(i64(a) + 128) >> 8, -127), 127);
  });
}
void wrap_coords(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  int_epilogue(r, kn, M, N, K, how, s, [](int32_t a, LL m, LL n) {
    return wrap32(i64(wrap32(i64(a) * 65536)) + m % 5 - (n == 7 ? 1 : 0));
  });
}
void tiles_64x128_k64(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  int_epilogue(r, kn, M, N, K, how, s, [](int32_t a, LL, LL) { return i64(a); });
}

void where_bits(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  Ops o(M, N, K, s);
  const LL t = 0x100000000LL + 1500;  // the compare takes t's low 32 bits, 1500
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<int> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), c.view(), t))
    check_int(r, kn, c.download(), [&](LL i) { return o.c[i] > 1500 ? i64(o.c[i] & 0xFFFF) : i64(o.c[i] ^ -1); });
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void i8_residual(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  Ops o(M, N, K, s);
  auto res = bytes(M * N, s + 2);
  res[0] = -128, res[1] = -1, res[2] = 127;
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w), rd({M, N}, res);
  DevLocal<int> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), rd.view(), c.view()))
    check_int(r, kn, c.download(), [&](LL i) { return wrap32(i64(o.c[i]) + 3 * i64(res[i])); });
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void tiles_128_k32_bf16(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  Ops o(M, N, K, s);
  const auto sw = nz<float>(N, s + 2, -1e-3f, 1e-3f);
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<float> swd({N}, sw);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), swd.view(), y.view()))
    check_rel(r, kn, y.download(), [&](LL i) { return double(o.c[i]) * sw[i % N]; }, kBf + 1e-6, 1e-9);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void gelu(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  Ops o(M, N, K, s);
  const float sc = 2e-5f;
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), y.view(), sc))
    check_rel(r, kn, y.download(), [&](LL i) { return gelu_t(double(o.c[i]) * sc); }, kBf, 1e-5,
              [&](LL i) { return std::ldexp(1.0, -10) * 0.5 * std::fabs(double(o.c[i]) * sc) + 1e-6 * std::fabs(double(o.c[i]) * sc); });
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void lengths(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  Ops o(M, N, K, s);
  const auto lens = nzints<int>(M, -3, N + 5, s + 2);
  const float sc = 0.001f;
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<int> ld({M, 1}, lens);
  DevLocal<float> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), ld.view(), y.view(), sc))
    check_rel(r, kn, y.download(), [&](LL i) { return i % N < lens[i / N] ? double(o.c[i]) * sc : -1.0; }, 1e-6, 1e-9);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

void split_hi_lo(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  Ops o(M, N, K, s);
  const auto sv = nz<float>(M, s + 2, -2.f, 2.f);
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<float> sd({M, 1}, sv), y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), sd.view(), y.view()))
    check_rel(r, kn, y.download(), [&](LL i) { return double(o.c[i] >> 4) * sv[i / N] + double(o.c[i] & 15); }, 1e-6, 1e-6);
  end_case(r, tag(kn, how, {M, N, K}), before);
}

// ---- W8A8 on the general path ----
void ab_general(const Run& r, LL M, LL N, LL K, unsigned s) {
  const auto x = bytes(M * K, s), w = bytes(K * N, s + 1);
  const auto c = sums(M, N, K, x, w, true);
  DevLocal<i8> xd({M, K}, x), wd({K, N}, w);
  DevLocal<int> cd({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "w29_ab_general", 2, xd.view(), wd.view(), cd.view()))
    check_int(r, "w29_ab_general", cd.download(), [&](LL i) { return c[i]; });
  end_case(r, tag("w29_ab_general", "", {M, N, K}), before);
}
void at_general(const Run& r, LL M, LL N, LL K, unsigned s) {
  const auto a = bytes(K * M, s), w = bytes(N * K, s + 1);
  std::vector<i8> x(M * K);
  for (LL k = 0; k < K; ++k)
    for (LL m = 0; m < M; ++m) x[m * K + k] = a[k * M + m];
  const auto c = sums(M, N, K, x, w);
  DevLocal<i8> ad({K, M}, a), wd({N, K}, w);
  DevLocal<int> cd({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "w29_at_general", 2, ad.view(), wd.view(), cd.view()))
    check_int(r, "w29_at_general", cd.download(), [&](LL i) { return c[i]; });
  end_case(r, tag("w29_at_general", "", {M, N, K}), before);
}
void bmm_general(const Run& r, LL Z, LL M, LL N, LL K, unsigned s) {
  const auto x = bytes(Z * M * K, s), w = bytes(Z * N * K, s + 1);
  std::vector<int32_t> c;
  for (LL z = 0; z < Z; ++z) {
    auto cz = sums(M, N, K, std::vector<i8>(x.begin() + z * M * K, x.begin() + (z + 1) * M * K),
                   std::vector<i8>(w.begin() + z * N * K, w.begin() + (z + 1) * N * K));
    c.insert(c.end(), cz.begin(), cz.end());
  }
  DevLocal<i8> xd({Z, M, K}, x), wd({Z, N, K}, w);
  DevLocal<int> cd({Z, M, N}, {});
  const int before = begin_case(r);
  if (run(r, "w29_bmm_general", 2, xd.view(), wd.view(), cd.view()))
    check_int(r, "w29_bmm_general", cd.download(), [&](LL i) { return c[i]; });
  end_case(r, tag("w29_bmm_general", "", {Z, M, N, K}), before);
}
void requant_i8(const Run& r, LL M, LL N, LL K, unsigned s) {
  Ops o(M, N, K, s);
  const auto sx = nz<float>(M, s + 2, 0.01f, 0.1f), sw = nz<float>(N, s + 3, -0.1f, 0.1f);
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w), q({M, N}, {});
  DevLocal<float> sxd({M, 1}, sx), swd({N}, sw);
  const int before = begin_case(r);
  if (run(r, "w29_requant_i8", 2, xd.view(), wd.view(), sxd.view(), swd.view(), q.view())) {
    const auto got = q.download();
    LL bad = 0;
    for (LL i = 0; i < M * N; ++i) {
      const double v = double(o.c[i]) * sx[i / N] * sw[i % N];
      const i8 want = sat8(v);
      // One count either way only within 1e-5 of a half-way point (fp32 products against the float64 one).
      const double frac = std::fabs(v - std::trunc(v));
      const bool edge = std::fabs(frac - 0.5) < 1e-5 * std::max(1.0, std::fabs(v));
      if (got[i] != want && !(edge && std::abs(got[i] - want) <= 1) && bad++ < 3)
        pkt::fail("w29_requant_i8 element " + std::to_string(i) + ": got " + std::to_string(int(got[i])) + ", want " +
                  std::to_string(int(want)));
    }
    if (bad > 3) pkt::fail("w29_requant_i8: " + std::to_string(bad) + " elements wrong");
  }
  end_case(r, tag("w29_requant_i8", "", {M, N, K}), before);
}
void i64_square(const Run& r, LL M, LL N, LL K, unsigned s) {
  Ops o(M, N, K, s);
  DevLocal<i8> xd({M, K}, o.x), wd({N, K}, o.w);
  DevLocal<i64> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "w29_i64_square", 2, xd.view(), wd.view(), c.view()))
    check_int(r, "w29_i64_square", c.download(), [&](LL i) { return i64(o.c[i]) * i64(o.c[i]); });
  end_case(r, tag("w29_i64_square", "", {M, N, K}), before);
}
void doubling_loop(const Run& r, LL M, LL N, LL K, unsigned s) {
  const auto x = bytes(M * K, s), w = bytes(N * K, s + 1);
  DevLocal<i8> xd({M, K}, x), wd({N, K}, w);
  DevLocal<int> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "w29_doubling_loop", 2, xd.view(), wd.view(), c.view()))
    check_int(r, "w29_doubling_loop", c.download(), [&](LL i) {
      const LL m = i / N, n = i % N;
      int32_t acc = 0;
      for (LL k0 = 0; k0 < K; k0 += 32) {
        i64 p = 0;
        for (LL k = k0; k < std::min(K, k0 + 32); ++k) p += i64(x[m * K + k]) * w[n * K + k];
        acc = wrap32(i64(wrap32(2 * i64(acc))) + p);
      }
      return i64(acc);
    });
  end_case(r, tag("w29_doubling_loop", "", {M, N, K}), before);
}
void two_products(const Run& r, LL M, LL N, LL K, unsigned s) {
  Ops a(M, N, K, s), b(M, N, K, s + 10);
  DevLocal<i8> x1({M, K}, a.x), w1({N, K}, a.w), x2({M, K}, b.x), w2({N, K}, b.w);
  DevLocal<int> c({M, N}, {});
  const int before = begin_case(r);
  if (run(r, "w29_two_products", 2, x1.view(), w1.view(), x2.view(), w2.view(), c.view()))
    check_int(r, "w29_two_products", c.download(), [&](LL i) { return wrap32(i64(a.c[i]) + b.c[i]); });
  end_case(r, tag("w29_two_products", "", {M, N, K}), before);
}

// ---- beside collectives ----
std::vector<Ops> rank_ops(int W, LL M, LL N, LL K, unsigned s) {
  std::vector<Ops> v;
  for (int p = 0; p < W; ++p) v.emplace_back(M, N, K, s + 7919u * unsigned(p + 1));
  return v;
}
void gemm_all_reduce(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const auto o = rank_ops(r.W, M, N, K, s);
  DevLocal<i8> xd({M, K}, o[r.me].x), wd({N, K}, o[r.me].w);
  SymArg<int> p(r.ctx, {M, N}, nullptr), c(r.ctx, {M, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), p.view, c.view))
    check_int(r, kn, c.download(), [&](LL i) {
      i64 t = 0;
      for (const Ops& q : o) t += q.c[i];
      return i64(wrap32(t));
    });
  end_case(r, tag(kn, how, {M, N, K}), before);
}
void all_gather_gemm(const Run& r, const std::string& kn, LL R, LL N, LL K, const std::string& how, unsigned s) {
  const int W = r.W;
  const LL M = W * R;
  std::vector<std::vector<i8>> xs;
  for (int q = 0; q < W; ++q) xs.push_back(bytes(R * K, s + 31u * unsigned(q + 1)));
  const auto w = bytes(N * K, s + 1);
  const auto sw = nz<float>(N, s + 2, -1e-3f, 1e-3f);
  std::vector<i8> xf;
  for (auto& v : xs) xf.insert(xf.end(), v.begin(), v.end());
  const auto c = sums(M, N, K, xf, w);
  SymArg<i8> xd(r.ctx, {R, K}, &xs[r.me]), full(r.ctx, {M, K}, nullptr);
  DevLocal<i8> wd({N, K}, w);
  DevLocal<float> swd({N}, sw);
  DevLocal<bf16> y({M, N}, {});
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view, full.view, wd.view(), swd.view(), y.view()))
    check_rel(r, kn, y.download(), [&](LL i) { return double(c[i]) * sw[i % N]; }, kBf + 1e-6, 1e-9);
  end_case(r, tag(kn, how, {R, N, K}), before);
}
void gemm_reduce_scatter(const Run& r, const std::string& kn, LL M, LL N, LL K, const std::string& how, unsigned s) {
  const LL rows = M / r.W;
  const auto o = rank_ops(r.W, M, N, K, s);
  DevLocal<i8> xd({M, K}, o[r.me].x), wd({N, K}, o[r.me].w);
  SymArg<int> p(r.ctx, {M, N}, nullptr), c(r.ctx, {rows, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), wd.view(), p.view, c.view))
    check_int(r, kn, c.download(), [&](LL i) {
      i64 t = 0;
      for (const Ops& q : o) t += q.c[r.me * rows * N + i];
      return i64(wrap32(t));
    });
  end_case(r, tag(kn, how, {M, N, K}), before);
}
void gemm_peer_store(const Run& r, LL M, LL N, LL K, unsigned s) {
  const int W = r.W, src = (r.me + W - 1) % W;
  const auto o = rank_ops(W, M, N, K, s);
  DevLocal<i8> xd({M, K}, o[r.me].x), wd({N, K}, o[r.me].w);
  SymArg<int> y(r.ctx, {W * M, N}, nullptr);
  const int before = begin_case(r);
  if (run(r, "w29_gemm_peer_store", 2, xd.view(), wd.view(), y.view))
    check_int(r, "w29_gemm_peer_store", y.download(), [&](LL i) {
      const LL row = i / N;
      // A store clips at the tensor it writes (docs/language.md): the last 64-row tile's padding rows,
      // past the source's M, land as zeros in the rows after its region; the other rows stay untouched.
      if (row / M == src) return i64(o[src].c[(row % M) * N + i % N]);
      return row >= (src + 1) * M && row < src * M + (M + 63) / 64 * 64 ? i64(0) : i64(-1);
    });
  end_case(r, tag("w29_gemm_peer_store", "", {M, N, K}), before);
}

// ---- integer tiles ----
// One input and one output tensor (shapes xs, ys; element offsets ox, oy) and the output's reference.
template <class TI, class TO>
void unary(const Run& r, const std::string& kn, std::vector<long long> xs, std::vector<long long> ys, int ox, int oy,
           const std::vector<TI>& x, const std::function<i64(LL)>& want) {
  OffLocal<TI> xd(xs, x, ox);
  OffLocal<TO> y(ys, {}, oy);
  std::string d;
  for (auto v : xs) d += (d.empty() ? "" : "x") + std::to_string(v);
  const int before = begin_case(r);
  if (run(r, kn, 2, xd.view(), y.view())) {
    check_int(r, kn, y.download(), want);
    y.check_margins(r, kn);
  }
  end_case(r, kn + " " + d + " offsets " + std::to_string(ox) + "/" + std::to_string(oy), before);
}
// The offsets each integer-tile case runs at: aligned (runs), one and three elements (never runs), eight (runs
// for i32 / i64, whose 8 elements are 32 / 64 bytes; not for i8), and a mixed pair.
const std::vector<std::pair<int, int>> kOffsets = {{0, 0}, {1, 3}, {3, 1}, {8, 8}, {0, 8}, {8, 1}};

template <class T>
std::vector<T> with_edges(std::vector<T> v) {
  const T e[] = {T(-1), std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(1)};
  for (int i = 0; i < 4 && i < int(v.size()); ++i) v[i * 7 % v.size()] = e[i];
  return v;
}

void int_tiles_2d(const Run& r) {
  unsigned s = 500;
  for (auto [M, N] : std::vector<std::pair<LL, LL>>{{64, 128}, {37, 100}, {48, 72}}) {
    for (auto [ox, oy] : kOffsets) {
      s += 10;
      const auto x8 = with_edges(bytes(M * N, s));
      unary<i8, i8>(r, "t29_i8_affine", {M, N}, {M, N}, ox, oy, x8, [&](LL i) { return wrap8(i64(x8[i]) * 3 + 1); });
      unary<i8, int>(r, "t29_i8_widen", {M, N}, {M, N}, ox, oy, x8, [&](LL i) { return i64(x8[i]) * 1000; });
      const auto x = with_edges(nzints<int>(M * N, INT32_MIN, INT32_MAX, s + 2));
      unary<int, int>(r, "t29_i32_shift_rows", {M, N}, {M, N}, ox, oy, x,
                      [&](LL i) { return wrap32((i / N > 0 ? i64(x[i - N]) : 0) - x[i]); });
      unary<int, int>(r, "t29_i32_col_offset", {M, N}, {M, N}, ox, oy, x,
                      [&](LL i) { return i % N + 4 < N ? i64(x[i + 4]) : 0; });
      unary<int, int>(r, "t29_i32_transpose", {M, N}, {N, M}, ox, oy, x,
                      [&](LL i) { return wrap32(i64(x[(i % M) * N + i / M]) + 1); });
      auto x64 = with_edges(nzints<i64>(M * N, -(1LL << 40), 1LL << 40, s + 3));
      x64[5] = INT64_MIN + 3, x64[6] = INT64_MAX - 5;
      unary<i64, i64>(r, "t29_i64_wide", {M, N}, {M, N}, ox, oy, x64, [&](LL i) {
        const unsigned long long t = static_cast<unsigned long long>(x64[i]);
        return wrap64((t * 3ull + static_cast<unsigned long long>(x64[i] >> 33)) ^ 0x100000000ull);
      });
    }
  }
}

void int_tiles_nd(const Run& r) {
  unsigned s = 900;
  for (auto [ox, oy] : kOffsets) {
    s += 10;
    for (LL L : {LL(1024), LL(1000), LL(259)}) {
      const auto x = with_edges(nzints<int>(L, INT32_MIN, INT32_MAX, s));
      unary<int, int>(r, "t29_i32_1d_shift", {L}, {L}, ox, oy, x,
                      [&](LL i) { return wrap32((i + 3 < L ? i64(x[i + 3]) : 0) + 1); });
    }
    for (auto d : std::vector<std::vector<long long>>{{4, 16, 64}, {3, 13, 40}, {2, 8, 33}}) {
      const auto x = with_edges(bytes(d[0] * d[1] * d[2], s + 1));
      unary<i8, i8>(r, "t29_i8_3d", d, d, ox, oy, x, [&](LL i) { return i64(i8(x[i] ^ 0x55)); });
    }
    for (auto d : std::vector<std::vector<long long>>{{3, 2, 8, 32}, {2, 2, 5, 20}, {2, 1, 4, 16}}) {
      const auto x = with_edges(nzints<int>(d[0] * d[1] * d[2] * d[3], INT32_MIN, INT32_MAX, s + 2));
      unary<int, int>(r, "t29_i32_4d", d, d, ox, oy, x, [&](LL i) { return wrap32(i64(x[i]) - 7); });
    }
    for (auto [L, R, C] : std::vector<std::tuple<LL, LL, LL>>{{4096, 32, 128}, {1000, 13, 77}, {640, 10, 72}}) {
      auto x = with_edges(nzints<i64>(L, -(1LL << 50), 1LL << 50, s + 3));
      x[2] = INT64_MIN;
      unary<i64, i64>(r, "t29_i64_reshape", {L}, {R, C}, ox, oy, x,
                      [&](LL i) { return wrap64(static_cast<unsigned long long>(i < L ? x[i] : 0) - 1ull); });
    }
  }
}

void gather_scatter(const Run& r) {
  unsigned s = 1300;
  for (auto [T, V, N, ot] : std::vector<std::tuple<LL, LL, LL, int>>{{64, 80, 128, 0}, {37, 50, 100, 3}, {40, 30, 72, 8}}) {
    s += 10;
    auto ids = ints<int>(T, 0, V - 1, s);
    ids[1] = -1, ids[T - 2] = int(V);  // outside the table: zeros
    const auto table = with_edges(bytes(V * N, s + 1));
    DevLocal<int> idd({T}, ids);
    OffLocal<i8> td({V, N}, table, ot);
    OffLocal<i8> y({T, N}, {}, ot == 3 ? 1 : ot);
    const int before = begin_case(r);
    if (run(r, "t29_i8_gather", 2, idd.view(), td.view(), y.view())) {
      check_int(r, "t29_i8_gather", y.download(), [&](LL i) {
        const LL t = i / N, n = i % N, id = ids[t];
        const i64 g = id >= 0 && id < V ? table[id * N + n] : 0, p = t < V ? table[t * N + n] : 0;
        return i64(wrap8(g + p));
      });
      y.check_margins(r, "t29_i8_gather");
    }
    end_case(r, "t29_i8_gather " + dims({T, V, N}) + " offset " + std::to_string(ot), before);
  }
  for (auto [T, S, N, ox] : std::vector<std::tuple<LL, LL, LL, int>>{{64, 80, 128, 0}, {37, 50, 100, 1}, {40, 45, 72, 8}}) {
    s += 10;
    std::vector<int> perm(S);
    for (LL i = 0; i < S; ++i) perm[i] = int(i);
    std::shuffle(perm.begin(), perm.end(), std::mt19937(s));
    std::vector<int> slot(perm.begin(), perm.begin() + T);
    slot[2] = -1, slot[T - 1] = int(S + 3);  // dropped
    const auto x = with_edges(nzints<int>(T * N, INT32_MIN, INT32_MAX, s + 1));
    DevLocal<int> sd({T}, slot);
    OffLocal<int> xd({T, N}, x, ox), y({S, N}, {}, ox);
    std::vector<double> want(S * N, std::nan(""));
    for (LL t = 0; t < T; ++t)
      if (slot[t] >= 0 && slot[t] < S)
        for (LL n = 0; n < N; ++n) want[slot[t] * N + n] = double(wrap32(2 * i64(x[t * N + n])));
    const int before = begin_case(r);
    if (run(r, "t29_i32_scatter", 2, sd.view(), xd.view(), y.view())) {
      check_or_poison(r, "t29_i32_scatter", y.download(), want, exact());
      y.check_margins(r, "t29_i32_scatter");
    }
    end_case(r, "t29_i32_scatter " + dims({T, S, N}) + " offset " + std::to_string(ox), before);
  }
}

void sym_peers(const Run& r) {
  const int W = r.W, src = (r.me + W - 1) % W;
  unsigned s = 1700;
  for (auto [M, N] : std::vector<std::pair<LL, LL>>{{64, 128}, {37, 100}}) {
    s += 10;
    std::vector<std::vector<int>> xs;
    std::vector<std::vector<i8>> bs;
    for (int q = 0; q < W; ++q) {
      xs.push_back(with_edges(nzints<int>(M * N, INT32_MIN, INT32_MAX, s + 97u * unsigned(q))));
      bs.push_back(with_edges(bytes(M * N, s + 5 + 97u * unsigned(q))));
    }
    {
      DevLocal<int> xd({M, N}, xs[r.me]);
      SymArg<int> y(r.ctx, {M, N}, nullptr), z(r.ctx, {W * M, N}, nullptr);
      const int before = begin_case(r);
      if (run(r, "t29_i32_sym_peer", 2, xd.view(), y.view, z.view)) {
        check_int(r, "t29_i32_sym_peer.y", y.download(), [&](LL i) { return wrap32(i64(xs[r.me][i]) + r.me); });
        check_int(r, "t29_i32_sym_peer.z", z.download(), [&](LL i) {
          const LL row = i / N;
          if (row / M == src) return i64(xs[src][(row % M) * N + i % N]);
          // The last 16-row tile's padding rows land as zeros past the source's region (stores clip at the
          // tensor they write); the other rows stay untouched.
          return row >= (src + 1) * M && row < src * M + (M + 15) / 16 * 16 ? i64(0) : i64(-1);
        });
      }
      end_case(r, "t29_i32_sym_peer " + dims({M, N}), before);
    }
    {
      DevLocal<i8> xd({M, N}, bs[r.me]);
      SymArg<i8> z(r.ctx, {W * M, N}, nullptr);
      const int before = begin_case(r);
      if (run(r, "t29_i8_peer", 2, xd.view(), z.view))
        check_int(r, "t29_i8_peer", z.download(), [&](LL i) {
          const LL row = i / N;
          return row / M == src ? i64(wrap8(i64(bs[src][(row % M) * N + i % N]) - 1)) : -1;
        });
      end_case(r, "t29_i8_peer " + dims({M, N}), before);
    }
  }
}

// ---- cases ----
using Plain = void (*)(const Run&, const std::string&, LL, LL, LL, const std::string&, unsigned);
// The template (tails in M, N and K), the twin (K % 16 != 0) and templates off.
void three_ways(const Run& r, Plain f, const char* kn, unsigned seed) {
  f(r, kn, 200, 264, 272, "", seed);
  f(r, kn, 200, 264, 72, "general twin", seed + 100);
  f(r, std::string(kn) + "/general", 200, 264, 272, "templates off", seed + 200);
}

void cases(const Run& r) {
  if (r.W == 1) {
    three_ways(r, raw_s32, "w29_raw_s32", 11);
    raw_s32(r, "w29_raw_s32", 129, 264, 2048, "", 12);  // a long K on the template
    raw_s32_wrap(r, "w29_raw_s32", 131088, "");
    raw_s32_wrap(r, "w29_raw_s32", 131080, "general twin");
    three_ways(r, token_channel_bias, "w29_token_channel_bias", 13);
    three_ways(r, f16_alpha, "w29_f16_alpha", 17);
    three_ways(r, zero_point_f32, "w29_zero_point_f32", 19);
    three_ways(r, zero_point_i32, "w29_zero_point_i32", 23);
    three_ways(r, shift_clamp, "w29_shift_clamp", 29);
    three_ways(r, where_bits, "w29_where_bits", 31);
    three_ways(r, i8_residual, "w29_i8_residual", 37);
    three_ways(r, wrap_coords, "w29_wrap_coords", 41);
    three_ways(r, tiles_64x128_k64, "w29_tiles_64x128_k64", 43);
    three_ways(r, tiles_128_k32_bf16, "w29_tiles_128_k32_bf16", 47);
    three_ways(r, gelu, "w29_gelu", 53);
    three_ways(r, lengths, "w29_lengths", 59);
    three_ways(r, split_hi_lo, "w29_split_hi_lo", 61);
    ab_general(r, 100, 136, 200, 67);
    ab_general(r, 37, 70, 45, 71);
    at_general(r, 100, 136, 200, 73);
    at_general(r, 37, 70, 45, 79);
    bmm_general(r, 3, 70, 100, 72, 83);
    requant_i8(r, 200, 264, 272, 89);
    i64_square(r, 100, 136, 200, 97);
    doubling_loop(r, 37, 20, 100, 101);
    two_products(r, 70, 45, 100, 103);
    int_tiles_2d(r);
    int_tiles_nd(r);
    gather_scatter(r);
  }
  for (const char* how : {"", "general twin", "templates off"}) {
    const std::string h = how, sfx = h == "templates off" ? "/general" : "";
    const LL K = h == "general twin" ? 72 : 272;
    gemm_all_reduce(r, "w29_gemm_all_reduce" + sfx, 200, 264, K, h, 107);
    all_gather_gemm(r, "w29_all_gather_gemm" + sfx, 72, 264, K, h, 109);
    gemm_reduce_scatter(r, "w29_gemm_reduce_scatter" + sfx, 192, 264, K, h, 113);
  }
  gemm_peer_store(r, 100, 72, 136, 127);
  sym_peers(r);
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  if (!compile_set(PK_USER_SPECS29_SPEC, kKernels, kGeneralToo, PK_PKC, g_kernels)) return pkt::finish("user_specs29_jit_test");
  return run_worlds("user_specs29_jit_test", g_kernels, cases);
}

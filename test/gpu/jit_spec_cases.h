// The shared harness of the JIT spec-set tests (user_specs10_jit_test, user_specs11_jit_test,
// audit2_jit_test): compiling a set's kernels, which launch took a template, reproducible random
// inputs, host values of every element type, element-wise checks against a reference, one PASS /
// FAIL line per case once every rank is through it, and the world sizes the cases run at.
#pragma once
#include <pk/jit/compile.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sym_test_util.h"
#include "tile_test_util.h"

namespace pkt::cases {

using LL = long long;

// Whether the kernel, or one of its launches, took a Hopper template.
inline bool took_template(const pk::jit::Kernel& k) {
  if (!k.info().tmpl.kernel.empty()) return true;
  for (const auto& p : k.parts())
    if (!p.tmpl.kernel.empty()) return true;
  return false;
}

// Values uniform in [lo, hi), as T (rounded), reproducible from the seed on every rank.
template <class T>
std::vector<T> rnd(LL n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 g(seed * 2654435761u + 12345u);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = pkt::from_host<T>(u(g));
  return v;
}
template <class T>
std::vector<T> ints(LL n, LL lo, LL hi, unsigned seed) {
  return pkt::random_ints<T>(n, lo, hi, seed * 40503u + 7u);
}

inline double val(double x) { return x; }
inline double val(float x) { return x; }
inline double val(pk::bf16 x) { return pkt::to_host(x); }
inline double val(pk::f16 x) { return pkt::to_host(x); }
inline double val(pk::f8e4m3 x) { return pkt::to_host(x); }
inline double val(pk::f8e5m2 x) { return pkt::to_host(x); }
inline double val(int x) { return x; }
inline double val(long long x) { return static_cast<double>(x); }
inline double val(signed char x) { return x; }

// Random values in [lo, hi), none exactly zero (a zero would hide a missing factor).
template <class T>
std::vector<T> nz(LL n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  auto v = rnd<T>(n, seed, lo, hi);
  for (auto& x : v)
    if (val(x) == 0) x = pkt::from_host<T>(0.5f * (lo + hi) == 0 ? 0.375f : 0.5f * (lo + hi));
  return v;
}
inline double bf16r(double x) { return pkt::bf16_round(static_cast<float>(x)); }
inline double f16r(double x) { return pkt::f16_round(static_cast<float>(x)); }
inline double silu(double x) { return x / (1 + std::exp(-x)); }
inline double gelu_erf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
inline double e4m3(double x) { return pkt::fp8_decode(pkt::fp8_encode(x, pkt::kE4M3), pkt::kE4M3); }
// Relative tolerances of a bf16 and an f16 result: two units in the last place.
constexpr double kBf = 2.0 / 256, kHf = 2.0 / 2048;
// "2x3x4": a case's sizes in its PASS / FAIL line.
inline std::string dims(std::initializer_list<LL> d) {
  std::string s;
  for (LL x : d) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

// Softmax attention of one head in float64: o [Sq, D] and lse [Sq] for scores score(i, j), keys
// masked where keep(i, j) is false (every row keeps at least one key); vv(j, d) is V.
template <class F, class Keep, class V>
void attend(LL Sq, LL Sk, LL D, const F& score, const Keep& keep, const V& vv, double* o, double* lse) {
  std::vector<double> p(Sk);
  for (LL i = 0; i < Sq; ++i) {
    double m = -1e300, s = 0;
    for (LL j = 0; j < Sk; ++j)
      if (keep(i, j)) p[j] = score(i, j), m = std::max(m, p[j]);
    for (LL j = 0; j < Sk; ++j) p[j] = keep(i, j) ? std::exp(p[j] - m) : 0.0, s += p[j];
    for (LL d = 0; d < D; ++d) o[i * D + d] = 0;
    for (LL j = 0; j < Sk; ++j)
      if (p[j] != 0)
        for (LL d = 0; d < D; ++d) o[i * D + d] += p[j] / s * vv(j, d);
    lse[i] = m + std::log(s);
  }
}
// The same into vectors sized to fit.
template <class F, class Keep, class V>
void attend(LL Sq, LL Sk, LL D, const F& score, const Keep& keep, const V& vv, std::vector<double>& o,
            std::vector<double>& lse) {
  o.assign(Sq * D, 0.0), lse.assign(Sq, 0.0);
  attend(Sq, Sk, D, score, keep, vv, o.data(), lse.data());
}
// RMSNorm of each of M rows of N elements in float64: x(i) is element i (row-major), w(j) the
// weight of column j; returns x * rsqrt(mean(x^2) + eps) * w.
template <class X, class Wt>
std::vector<double> rmsnorm_rows(LL M, LL N, double eps, const X& x, const Wt& w) {
  std::vector<double> out(M * N);
  for (LL m = 0; m < M; ++m) {
    double ss = 0;
    for (LL j = 0; j < N; ++j) ss += x(m * N + j) * x(m * N + j);
    const double inv = 1 / std::sqrt(ss / N + eps);
    for (LL j = 0; j < N; ++j) out[m * N + j] = x(m * N + j) * inv * w(j);
  }
  return out;
}
// A float64 GEMM reference: want[m N + n] = sum_q A(m, q) B(q, n), and mag[m N + n] = sum_q
// |A(m, q) B(q, n)| (what an error bound follows).
inline void matmul(LL M, LL N, LL Kd, const std::function<double(LL, LL)>& A, const std::function<double(LL, LL)>& B,
                   std::vector<double>& want, std::vector<double>& mag) {
  want.assign(M * N, 0.0), mag.assign(M * N, 0.0);
  std::vector<double> bt(N * Kd), arow(Kd);
  for (LL q = 0; q < Kd; ++q)
    for (LL n = 0; n < N; ++n) bt[n * Kd + q] = B(q, n);
  for (LL m = 0; m < M; ++m) {
    for (LL q = 0; q < Kd; ++q) arow[q] = A(m, q);
    for (LL n = 0; n < N; ++n) {
      double s = 0, g = 0;
      for (LL q = 0; q < Kd; ++q) {
        const double t = arow[q] * bt[n * Kd + q];
        s += t, g += std::fabs(t);
      }
      want[m * N + n] = s, mag[m * N + n] = g;
    }
  }
}
// The same as one value: the product and its magnitude.
struct Gemm {
  std::vector<double> c, mag;
};
inline Gemm gemm(LL M, LL N, LL Kd, const std::function<double(LL, LL)>& A, const std::function<double(LL, LL)>& B) {
  Gemm g;
  matmul(M, N, Kd, A, B, g.c, g.mag);
  return g;
}
// A * B^T (B [N, K]) and A * B (B [K, N]) of host vectors.
template <class TA, class TB>
Gemm gemm_t(LL M, LL N, LL K, const std::vector<TA>& a, const std::vector<TB>& b) {
  return gemm(M, N, K, [&](LL m, LL k) { return val(a[m * K + k]); }, [&](LL k, LL n) { return val(b[n * K + k]); });
}
template <class TA, class TB>
Gemm gemm_n(LL M, LL N, LL K, const std::vector<TA>& a, const std::vector<TB>& b) {
  return gemm(M, N, K, [&](LL m, LL k) { return val(a[m * K + k]); }, [&](LL k, LL n) { return val(b[k * N + n]); });
}
// uniform(seed, coordinates) as docs/language.md defines it: H(u, v) = f(u ^ f(v + 0x9e3779b9)) >> 1
// with f MurmurHash3's finaliser, over the seed's words (seed mod 2^32) - 2^31 and floor(seed / 2^32), then
// each coordinate in turn (its low 32 bits); the value (h / 128) * 2^-24.
inline uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}
inline uint32_t hash_words(uint32_t u, uint32_t v) { return fmix32(u ^ fmix32(v + 0x9e3779b9u)) >> 1; }
inline float uniform_at(LL seed, std::initializer_list<LL> coords) {
  const LL word = LL(1) << 32;
  const LL mod = ((seed % word) + word) % word;
  const auto low = static_cast<int32_t>(mod - word / 2);
  const auto high = static_cast<int32_t>((seed - mod) / word);  // floor(seed / 2^32)
  uint32_t h = hash_words(static_cast<uint32_t>(low), static_cast<uint32_t>(high));
  for (LL c : coords) h = hash_words(h, static_cast<uint32_t>(c));
  return static_cast<float>(h / 128) * 0x1p-24f;
}
// Row xo of x dotted with row yo of y over D elements, in float64.
template <class T>
double dot(const std::vector<T>& x, LL xo, const std::vector<T>& y, LL yo, LL D) {
  double s = 0;
  for (LL d = 0; d < D; ++d) s += val(x[xo + d]) * val(y[yo + d]);
  return s;
}

// One rank's view of a case.
struct Run {
  pk::Context& ctx;
  cudaStream_t s;
  int W, me;
};

// Every element of `got` against want(i) within tol(i) (NaN never passes); names the first three.
template <class T>
void check(const Run& r, const std::string& what, const std::vector<T>& got, const std::function<double(LL)>& want,
           const std::function<double(LL)>& tol) {
  LL bad = 0;
  for (LL i = 0; i < LL(got.size()); ++i) {
    const double w = want(i), g = val(got[i]);
    if (!(std::fabs(g - w) <= tol(i))) {
      if (bad < 3)
        pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + " element " +
                  std::to_string(i) + ": got " + std::to_string(g) + ", want " + std::to_string(w));
      ++bad;
    }
  }
  if (bad > 3) pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + ": " +
                         std::to_string(bad) + " of " + std::to_string(got.size()) + " elements wrong");
}
// A vector check against precomputed want / tol vectors.
template <class T>
void check_vec(const Run& r, const std::string& what, const std::vector<T>& got, const std::vector<double>& want,
               const std::vector<double>& tol) {
  check(r, what, got, [&](LL i) { return want[i]; }, [&](LL i) { return tol[i]; });
}
// Elements where pick(i) is true still hold the poison (NaN): the kernel must not write them
// (another rank's rows, a rank that sends or receives nothing, gaps between stored blocks).
template <class T>
void check_untouched(const Run& r, const std::string& what, const std::vector<T>& got, const std::function<bool(LL)>& pick) {
  LL bad = 0;
  for (LL i = 0; i < LL(got.size()); ++i)
    if (pick(i) && !std::isnan(val(got[i]))) ++bad;
  if (bad)
    pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + ": " + std::to_string(bad) +
              " elements written that the kernel must not write");
}
// Every element of `got` against want[i] within tol(i); where want[i] is NaN the element must still hold
// the poison (NaN for floats, -1 for integers): an element the kernel must not write.
template <class T>
void check_or_poison(const Run& r, const std::string& what, const std::vector<T>& got, const std::vector<double>& want,
                     const std::function<double(LL)>& tol) {
  LL bad = 0;
  for (LL i = 0; i < LL(got.size()); ++i) {
    const double g = val(got[i]), w = want[i];
    const bool poisoned = std::is_integral<T>::value ? g == -1.0 : std::isnan(g);
    if (std::isnan(w) ? !poisoned : !(std::fabs(g - w) <= tol(i))) {
      if (bad < 3)
        pkt::fail(what + " W=" + std::to_string(r.W) + " rank " + std::to_string(r.me) + " element " +
                  std::to_string(i) + ": got " + std::to_string(g) + ", want " +
                  (std::isnan(w) ? "untouched" : std::to_string(w)));
      ++bad;
    }
  }
  if (bad > 3) pkt::fail(what + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) + " elements wrong");
}
inline auto exact() { return [](LL) { return 0.0; }; }
inline auto abs_tol(double t) { return [t](LL) { return t; }; }

// The failure count before the case starts (every rank past the last case).
inline int begin_case(const Run& r) {
  const int before = pkt::failure_count();
  const pk::Status s = r.ctx.exchange().barrier();
  if (!s.is_ok()) pkt::fail("barrier: " + s.message());
  return before;
}
// Once every rank is through the case, rank 0 prints "PASS|FAIL <set> <what> W=<W>".
inline void end_case(const Run& r, const char* set, const std::string& what, int before) {
  const pk::Status s = r.ctx.exchange().barrier();
  if (!s.is_ok()) pkt::fail("barrier: " + s.message());
  if (r.me == 0)
    std::printf("%s %s %s W=%d\n", pkt::failure_count() == before ? "PASS" : "FAIL", set, what.c_str(), r.W),
        std::fflush(stdout);
  const pk::Status t = r.ctx.exchange().barrier();
  if (!t.is_ok()) pkt::fail("barrier: " + t.message());
}

// Uploads done and every rank there, `times` launches of `k`, then the stream and the kernel's
// errors, and every rank's launches done.
template <class... A>
bool run(const Run& r, const pk::jit::Kernel& k, const std::string& name, int times, const A&... args) {
  pkt::ready(r.ctx);
  for (int t = 0; t < times; ++t) {
    const pk::Status s = k.launch(r.ctx, r.s, args...);
    if (!s.is_ok()) return pkt::fail(name + " launch: " + s.message()), false;
  }
  const cudaError_t e = cudaStreamSynchronize(r.s);
  if (e != cudaSuccess) return pkt::fail(name + ": " + cudaGetErrorString(e)), false;
  const pk::Status c = r.ctx.check_errors();
  if (!c.is_ok()) return pkt::fail(name + ": " + c.message()), false;
  const pk::Status b = r.ctx.exchange().barrier();
  if (!b.is_ok()) return pkt::fail("barrier: " + b.message()), false;
  return true;
}

// A set's kernels by name ("name"; "name/general" for one also compiled with templates off).
using KernelSet = std::map<std::string, pk::jit::Kernel>;

// Compiles each of `kernels` from `spec` with templates on (the bool: whether it must take a
// template), and each of `general_too` also with them off, by the pkc executable `pkc`; false,
// after a FAIL line, at the first (in list order) that does not compile or takes the wrong route.
// The compiles (a pkc process and NVRTC each) run on several threads: a set's cold cache is
// otherwise most of its device time. PK_JIT_THREADS caps the count (default: every core, at most 16).
inline bool compile_set(const char* spec, const std::vector<std::pair<const char*, bool>>& kernels,
                        const std::vector<const char*>& general_too, const char* pkc, KernelSet& out) {
  auto text = pk::jit::read_spec(spec);
  if (!text.is_ok()) return pkt::fail(std::string("read the spec: ") + text.status().message()), false;
  struct Job {
    const char* name;
    bool templates, want_template;
    std::optional<pk::Result<pk::jit::Kernel>> result;
  };
  std::vector<Job> jobs;
  for (auto [name, tmpl] : kernels) jobs.push_back({name, true, tmpl, std::nullopt});
  for (const char* name : general_too) jobs.push_back({name, false, false, std::nullopt});
  const pk::jit::Frontend frontend = pk::jit::pkc_frontend(pkc);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next++) < jobs.size();) {
      pk::jit::Options options;
      options.kernel = jobs[i].name;
      options.templates = jobs[i].templates;
      jobs[i].result = pk::jit::compile_spec(spec, *text, options, frontend);
    }
  };
  unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  if (const char* t = std::getenv("PK_JIT_THREADS"); t && std::atoi(t) > 0) threads = unsigned(std::atoi(t));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<std::size_t>(threads, jobs.size()); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  for (Job& j : jobs) {
    auto& k = *j.result;
    if (!k.is_ok()) return pkt::fail(std::string("compile ") + j.name + ": " + k.status().message()), false;
    if (took_template(*k) != j.want_template)
      return pkt::fail(std::string(j.name) + (j.want_template ? " took no template" : " took a template")), false;
    out.emplace(std::string(j.name) + (j.templates ? "" : "/general"), std::move(*k));
  }
  return true;
}

// Runs `cases` on every rank at each world size of the tier: W = 1, 2 and 3 on one GPU, or the
// list PK_TEST_WORLDS or PK_SHARED_GPU_RANKS give; every kernel is loaded on every rank first,
// in a context with a flag region for each (a set holds more than the default 31 kernels that
// communicate). Returns the test's exit status.
inline int run_worlds(const char* test, const KernelSet& kernels, const std::function<void(const Run&)>& cases) {
  pk::ContextOptions options;
  options.flag_slots = 4 * 65536;  // 127 kernel regions of 2048 words
  std::vector<int> worlds = pkt::test_worlds(/*with_one=*/true);
  if (!std::getenv("PK_TEST_WORLDS") && !std::getenv("PK_SHARED_GPU_RANKS"))
    worlds.erase(std::remove_if(worlds.begin(), worlds.end(), [](int w) { return w > 3; }), worlds.end());
  for (int world : worlds) {
    pkt::announce_world(test, world);
    pkt::run_ranks(world, [&](pk::Context& ctx) {
      cudaStream_t s;
      PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      for (auto& [name, k] : kernels) PKT_OK(k.load(ctx));
      PKT_OK(ctx.exchange().barrier());  // every rank loaded every module before any launch
      cases(Run{ctx, s, ctx.world(), ctx.rank()});
      PKT_CUDA(cudaStreamDestroy(s));
    }, options);
  }
  return pkt::finish(test);
}

}  // namespace pkt::cases

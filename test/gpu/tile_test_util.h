// Helpers of the one-GPU tile tests: device tensors with random host data (or poisoned), their
// pk::Tensor views, host conversions of bf16 / f16 / fp8, and an element-wise check against a
// float64 reference.
#pragma once
#include <cuda_fp16.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "fp8_model.h"
#include "harness.h"

namespace pkt {

#ifdef __CUDACC__  // host-only tests (the JIT ones) compile as plain C++
// A launch of an emitted kernel with the dynamic shared memory its prefetch rings take
// (pk_<name>::kSharedBytes), opted into (the default allowance is 48 KiB less the kernel's
// static shared memory): PKT_LAUNCH(kernel, grid)(args...).
template <class K>
struct EmittedLaunch {
  K kernel;
  dim3 grid;
  int threads;
  unsigned shared_bytes;
  template <class... A>
  void operator()(const A&... args) const {
    if (shared_bytes > 0)
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes));
    kernel<<<grid, threads, shared_bytes>>>(args...);
  }
};
#define PKT_LAUNCH(kernel, grid) \
  pkt::EmittedLaunch<decltype(&kernel)>{&kernel, dim3(grid), pk_##kernel::kThreads, pk_##kernel::kSharedBytes}
#endif

using pk::bf16;
using pk::f16;

inline float to_host(float x) { return x; }
inline float to_host(bf16 x) { return pkt::to_f(x); }
inline float to_host(f16 x) {
  __half h;
  std::memcpy(&h, &x.bits, 2);
  return __half2float(h);
}
inline float to_host(pk::f8e4m3 x) { return static_cast<float>(fp8_decode(x.bits, kE4M3)); }
inline float to_host(pk::f8e5m2 x) { return static_cast<float>(fp8_decode(x.bits, kE5M2)); }

template <class T> T from_host(float x);
template <> inline pk::f8e4m3 from_host<pk::f8e4m3>(float x) { return pk::f8e4m3{fp8_encode(x, kE4M3)}; }
template <> inline pk::f8e5m2 from_host<pk::f8e5m2>(float x) { return pk::f8e5m2{fp8_encode(x, kE5M2)}; }
template <> inline float from_host<float>(float x) { return x; }
template <> inline bf16 from_host<bf16>(float x) { return pkt::from_f<bf16>(x); }
template <> inline f16 from_host<f16>(float x) {
  __half h = __float2half_rn(x);
  f16 r;
  std::memcpy(&r.bits, &h, 2);
  return r;
}

// A device tensor with host data (random in [-2, 2) as T) and its pk::Tensor view.
template <class T>
struct DevTensor {
  std::vector<long long> shape;
  std::vector<T> host;
  T* dev = nullptr;
  DevTensor(std::vector<long long> s, unsigned seed, bool poison = false) : shape(s) {
    long long n = 1;
    for (long long d : s) n *= d;
    host.resize(n);
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(-2.f, 2.f);
    for (auto& x : host) x = from_host<T>(u(g));
    PKT_CUDA(cudaMalloc(&dev, n * sizeof(T)));
    if (poison) PKT_CUDA(pkt::poison(dev, n * sizeof(T)));
    else PKT_CUDA(cudaMemcpy(dev, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DevTensor() { cudaFree(dev); }
  long long numel() const { return static_cast<long long>(host.size()); }
  pk::Tensor<T> view() const {
    pk::Tensor<T> t{};
    t.data = dev;
    for (size_t d = 0; d < 4; ++d) t.shape[d] = d < shape.size() ? shape[d] : 1;  // as pk::make_tensor
    t.numel = numel();
    return t;
  }
  double at(long long i) const { return to_host(host[i]); }
  void upload() const { PKT_CUDA(cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> download() const {
    std::vector<T> v(host.size());
    const cudaError_t e = cudaMemcpy(v.data(), dev, v.size() * sizeof(T), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) pkt::fail(std::string("download: ") + cudaGetErrorString(e));
    return v;
  }
};

// Row r of A [M, K] times column c of B, stored [N, K] (b_kn false) or [K, N] (true), in float64:
// a GEMM reference element.
template <class T, class U>
double gemm_dot(const DevTensor<T>& a, const DevTensor<U>& b, bool b_kn, long long r, long long c, long long N,
                long long K) {
  double s = 0;
  for (long long k = 0; k < K; ++k) s += a.at(r * K + k) * (b_kn ? b.at(k * N + c) : b.at(c * K + k));
  return s;
}

// Every element of `out` against want(i), within atol + rtol * |want|.
template <class T>
void expect(const char* what, const DevTensor<T>& out, const std::function<double(long long)>& want,
            double atol, double rtol) {
  auto got = out.download();
  long long bad = 0, first = -1;
  for (long long i = 0; i < out.numel(); ++i) {
    const double w = want(i), g = to_host(got[i]);
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  PKT_CHECK(bad == 0, std::string(what) + ": " + std::to_string(bad) + " of " +
                          std::to_string(out.numel()) + " wrong, first at " + std::to_string(first) +
                          (first >= 0 ? " got " + std::to_string(to_host(got[first])) + " want " +
                                            std::to_string(want(first))
                                      : std::string()));
}

enum Poisoned { poisoned };  // a tag: a braced shape must never pick the values constructor

// A device copy of host values, or a poisoned buffer of a shape.
template <class T>
struct Dev {
  std::vector<T> host;
  T* dev = nullptr;
  std::vector<long long> shape;
  Dev(std::vector<T> values, std::vector<long long> s) : host(std::move(values)), shape(std::move(s)) {
    PKT_CUDA(cudaMalloc(&dev, host.size() * sizeof(T)));
    PKT_CUDA(cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  Dev(std::vector<long long> s, Poisoned) : shape(std::move(s)) {
    long long n = 1;
    for (long long d : shape) n *= d;
    host.resize(n);
    PKT_CUDA(cudaMalloc(&dev, n * sizeof(T)));
    PKT_CUDA(pkt::poison(dev, n * sizeof(T)));
  }
  ~Dev() { cudaFree(dev); }
  pk::Tensor<T> view() const {
    pk::Tensor<T> t{};
    t.data = dev;
    for (size_t d = 0; d < 4; ++d) t.shape[d] = d < shape.size() ? shape[d] : 1;
    t.numel = static_cast<long long>(host.size());
    return t;
  }
  std::vector<T> download() const {
    std::vector<T> v(host.size());
    const cudaError_t e = cudaMemcpy(v.data(), dev, v.size() * sizeof(T), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) pkt::fail(std::string("download: ") + cudaGetErrorString(e));
    return v;
  }
};

template <class T>
std::vector<T> random_ints(long long n, long long lo, long long hi, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<long long> u(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(u(g));
  return v;
}

// Every integer of `out` against want(i), within `tol`.
template <class T>
void expect_int(const char* what, const Dev<T>& out, const std::function<long long(long long)>& want,
                long long tol = 0) {
  auto got = out.download();
  long long bad = 0, first = -1;
  for (long long i = 0; i < static_cast<long long>(got.size()); ++i) {
    const long long w = want(i), g = static_cast<long long>(got[i]);
    const long long d = g > w ? g - w : w - g;
    if (d > tol) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  PKT_CHECK(bad == 0, std::string(what) + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) +
                          " wrong, first at " + std::to_string(first) +
                          (first >= 0 ? " got " + std::to_string(static_cast<long long>(got[first])) + " want " +
                                            std::to_string(want(first))
                                      : std::string()));
}

// float64 references of the activations, and rounding to the narrow float types.
inline double gelu_tanh(double t) { return 0.5 * t * (1 + std::tanh(0.7978845608028654 * (t + 0.044715 * t * t * t))); }
inline double gelu_erf(double t) { return 0.5 * t * (1 + std::erf(t / std::sqrt(2.0))); }
inline double sigmoid(double t) { return 1 / (1 + std::exp(-t)); }
inline double silu(double t) { return t * sigmoid(t); }
inline float bf16_round(float x) { return to_host(from_host<bf16>(x)); }
inline float f16_round(float x) { return to_host(from_host<f16>(x)); }

}  // namespace pkt

// Host float64 reference and data helpers shared by the GEMM GPU tests (C = A * B^T).
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "harness.h"

namespace pkt {

using pk::bf16;

inline unsigned seed_of(int rank, int what, int round) { return 1000u * rank + 100u * what + round; }

inline std::vector<float> as_float(const std::vector<bf16>& v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = to_f(v[i]);
  return f;
}

// out[i, j] += sum_k a[row0 + i, k] * b[j, k] for i < rows; with `magnitude`, also adds the
// partial product's absolute value there (the error bound of a sum of rounded partials).
inline void ref_gemm_add(const std::vector<float>& a, long long row0, long long rows, const std::vector<float>& b,
                  long long n, long long k, std::vector<double>& out,
                  std::vector<double>* magnitude = nullptr) {
  for (long long i = 0; i < rows; ++i)
    for (long long j = 0; j < n; ++j) {
      double s = 0;
      const float* ar = &a[(row0 + i) * k];
      const float* br = &b[j * k];
      for (long long q = 0; q < k; ++q) s += double(ar[q]) * double(br[q]);
      out[i * n + j] += s;
      if (magnitude) (*magnitude)[i * n + j] += std::fabs(s);
    }
}

// The fused kernels add bf16-rounded partial products, so allow a few bf16 ulps of the result
// plus a small absolute term relative to the spread of the sums. For a sum over `ranks` partials
// (`magnitude`: the sum of their absolute values) each partial is rounded to bf16 and each add
// into the bf16 output rounds again at the running sum's size: at most ranks half-ulps of the
// magnitude, ranks * magnitude * 2^-9, which can exceed the result's own ulps when partials cancel.
inline void expect_close(const std::vector<bf16>& got, const std::vector<double>& want, long long k_total,
                  const std::string& what, const std::vector<double>* magnitude = nullptr,
                  int ranks = 1) {
  const double atol = 0.02 * std::sqrt(double(k_total));
  long long bad = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = to_f(got[i]);
    const double rounding = magnitude ? ranks * (*magnitude)[i] / 512 : 0.0;
    if (!(std::fabs(g - want[i]) <= atol + rounding + std::fabs(want[i]) / 64)) {
      if (first < 0) first = static_cast<long long>(i);
      ++bad;
    }
  }
  PKT_CHECK(bad == 0, what + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) +
                          " wrong, first at " + std::to_string(first) +
                          (first >= 0 ? " got " + std::to_string(to_f(got[first])) + " want " +
                                            std::to_string(want[first])
                                      : std::string()));
}

template <class T>
T* upload(const std::vector<T>& v) {
  void* p = nullptr;
  if (cudaMalloc(&p, v.size() * sizeof(T)) != cudaSuccess) return nullptr;
  cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  return static_cast<T*>(p);
}

inline std::vector<bf16> download(const void* p, size_t n) {
  std::vector<bf16> v(n);
  cudaMemcpy(v.data(), p, n * sizeof(bf16), cudaMemcpyDeviceToHost);
  return v;
}

}  // namespace pkt

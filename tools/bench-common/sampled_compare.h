// A benchmark's 16-bit output against its reference (both on the device), every 7th element:
// the worst absolute difference and how many elements differ by more than 0.05 + |want| / 64
// (a NaN, as in a poisoned element never written, counts as different).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace pk_bench {

struct SampledDiff {
  double worst = 0;
  long long bad = 0;
};

// `value` turns an element's bits into its value (bf16 or f16).
template <class Value>
SampledDiff compare_sampled(const unsigned short* got_dev, const unsigned short* want_dev, long long elems,
                            Value value) {
  std::vector<unsigned short> got(elems), want(elems);
  cudaMemcpy(got.data(), got_dev, elems * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(want.data(), want_dev, elems * 2, cudaMemcpyDeviceToHost);
  SampledDiff r;
  for (long long i = 0; i < elems; i += 7) {
    const double g = value(got[i]), w = value(want[i]), d = std::fabs(g - w);
    r.worst = std::max(r.worst, std::isnan(d) ? 1e30 : d);
    r.bad += !(d <= 0.05 + std::fabs(w) / 64);
  }
  return r;
}

}  // namespace pk_bench

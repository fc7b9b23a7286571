// Timing two launch paths against each other on one stream, for the one-GPU benchmarks: batches
// of `launches` back-to-back calls timed with one CUDA event pair, the two paths alternating
// batch by batch (so clock and neighbour drift hits both alike), 5 warm-ups each, medians of 7.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace pk_bench {

// The median microseconds per call of `first` and of `second`.
inline std::pair<double, double> paired_median_us(const std::function<void()>& first,
                                                  const std::function<void()>& second,
                                                  cudaStream_t stream, int launches = 20) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  auto batch = [&](const std::function<void()>& run) {
    cudaEventRecord(a, stream);
    for (int i = 0; i < launches; ++i) run();
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return 1000.0 * ms / launches;
  };
  for (int i = 0; i < 5; ++i) first(), second();
  std::vector<double> t1, t2;
  for (int rep = 0; rep < 7; ++rep) {
    if (rep % 2) t2.push_back(batch(second)), t1.push_back(batch(first));
    else t1.push_back(batch(first)), t2.push_back(batch(second));
  }
  std::sort(t1.begin(), t1.end());
  std::sort(t2.begin(), t2.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return {t1[t1.size() / 2], t2[t2.size() / 2]};
}

}  // namespace pk_bench

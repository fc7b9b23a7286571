// Matrix multiply-accumulate of register tiles on the general path: acc (M x N, f32) +=
// a (M x K) * b (K x N), or b^T with b stored N x K. Operands pass through the shared-memory
// stage in chunks of K; every thread then accumulates its own acc elements in fp32. Correct for
// every shape; loops that match a Hopper template take the template instead.
#pragma once
#include <pk/tile/rows.cuh>

namespace pk {
namespace tile {

template <bool TransposeB, class Acc, class A, class B>
__device__ void mma(Acc& acc, const A& a, const B& b, float* stage) {
  constexpr int M = A::dim(0), K = A::dim(1);
  constexpr int N = TransposeB ? B::dim(0) : B::dim(1);
  static_assert((TransposeB ? B::dim(1) : B::dim(0)) == K && Acc::dim(0) == M && Acc::dim(1) == N,
                "mma shapes");
  static_assert(M + N <= kStageFloats, "one K column of a and b must fit the stage");
  constexpr int kc0 = kStageFloats / (M + N);
  constexpr int kc = kc0 < K ? kc0 : K;
  float* sa = stage;           // [M][kc]
  float* sb = stage + M * kc;  // [kc][N]
  for (int k0 = 0; k0 < K; k0 += kc) {
    __syncthreads();
#pragma unroll
    for (int s = 0; s < A::kSlots; ++s) {
      const long long i = A::index(s);
      const int r = static_cast<int>(i / K), k = static_cast<int>(i % K);
      if (i < A::kCount && k >= k0 && k < k0 + kc) sa[r * kc + (k - k0)] = a.v[s];
    }
#pragma unroll
    for (int s = 0; s < B::kSlots; ++s) {
      const long long i = B::index(s);
      if (i >= B::kCount) continue;
      const int k = TransposeB ? static_cast<int>(i % K) : static_cast<int>(i / N);
      const int c = TransposeB ? static_cast<int>(i / K) : static_cast<int>(i % N);
      if (k >= k0 && k < k0 + kc) sb[(k - k0) * N + c] = b.v[s];
    }
    __syncthreads();
    const int kn = K - k0 < kc ? K - k0 : kc;
    // k outermost, the slots unrolled inside it: acc's slots are indexed by constants, so
    // they stay in registers (a run-time k loop inside each slot left them in local memory).
    for (int kk = 0; kk < kn; ++kk) {
#pragma unroll
      for (int s = 0; s < Acc::kSlots; ++s) {
        const long long i = Acc::source(s);
        if (i >= Acc::kCount) continue;
        const int r = static_cast<int>(i / N), c = static_cast<int>(i % N);
        acc.v[s] += sa[r * kc + kk] * sb[kk * N + c];
      }
    }
  }
}

}  // namespace tile
}  // namespace pk

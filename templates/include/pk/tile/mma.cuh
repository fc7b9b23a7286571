// Matrix multiply-accumulate of register tiles on the general path: acc (M x N, f32) +=
// a (M x K) * b (K x N), or b^T with b stored N x K. Operands pass through the shared-memory
// stage in chunks of K. bf16 and f16 operands whose shapes split into 16 x 8 output blocks and
// 16-wide K steps go through the tensor cores (mma.sync m16n8k16, fp32 accumulation); any other
// shape or type has every thread accumulate its own acc elements in fp32 (correct for every
// shape). Loops that match a Hopper template take the template instead.
#pragma once
#include <pk/tile/rows.cuh>

namespace pk {
namespace tile {

// Hands each of this thread's elements of K columns [k0, k0 + kc) to put_a(row, k - k0, v) (a is
// M x K) and put_b(col, k - k0, v) (b is K x N, or N x K with TransposeB), col an output column.
template <bool TransposeB, class A, class B, class PutA, class PutB>
__device__ __forceinline__ void stage_columns(const A& a, const B& b, int k0, int kc, PutA put_a, PutB put_b) {
  constexpr int K = A::dim(1), N = TransposeB ? B::dim(0) : B::dim(1);
#pragma unroll
  for (int s = 0; s < A::kSlots; ++s) {
    const long long i = A::index(s);
    const int r = static_cast<int>(i / K), k = static_cast<int>(i % K);
    if (i < A::kCount && k >= k0 && k < k0 + kc) put_a(r, k - k0, a.v[s]);
  }
#pragma unroll
  for (int s = 0; s < B::kSlots; ++s) {
    const long long i = B::index(s);
    if (i >= B::kCount) continue;
    const int k = TransposeB ? static_cast<int>(i % K) : static_cast<int>(i / N);
    const int col = TransposeB ? static_cast<int>(i / K) : static_cast<int>(i % N);
    if (k >= k0 && k < k0 + kc) put_b(col, k - k0, b.v[s]);
  }
}

// The tensor-core route's shape: output blocks of 16 x 8 dealt to the warps round-robin (each
// warp keeps its blocks' fp32 fragments in registers over the whole K), K staged kc columns at a
// time as 16-bit values, the product added into acc in bands of rows that fit the stage.
template <bool TransposeB, class Acc, class A, class B>
struct tensor_core_shape {
  static constexpr int M = A::dim(0), K = A::dim(1), N = TransposeB ? B::dim(0) : B::dim(1);
  static constexpr int kWarps = A::kThreads / 32;
  static constexpr int kBlocksN = N / 8, kBlocks = (M / 16) * kBlocksN;
  static constexpr int kPerWarp = (kBlocks + kWarps - 1) / kWarps;
  static constexpr int kc0 = (2 * kStageFloats / (M + N)) / 16 * 16;
  static constexpr int kc = kc0 < K ? kc0 : K;
  static constexpr int kBandRows = (kStageFloats / (N > 0 ? N : 1)) / 16 * 16;
  static constexpr bool kSixteenBit = (::pk::is_same<typename A::elem, bf16>::value ||
                                       ::pk::is_same<typename A::elem, f16>::value) &&
                                      ::pk::is_same<typename A::elem, typename B::elem>::value;
  static constexpr bool ok = kSixteenBit && A::kRank == 2 && B::kRank == 2 && Acc::kRank == 2 &&
                             M % 16 == 0 && N % 8 == 0 && K % 16 == 0 && kc >= 16 && kBandRows >= 16 &&
                             kPerWarp <= 16 && A::kThreads == B::kThreads && A::kThreads == Acc::kThreads;
};

// c (16 x 8, fp32) += a (16 x 16) b (16 x 8) for one warp, in mma.sync's fragment layouts.
template <class T>
__device__ __forceinline__ void mma_16x8x16(float (&c)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                            unsigned b0, unsigned b1) {
  if constexpr (::pk::is_same<T, bf16>::value)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <bool TransposeB, class Acc, class A, class B>
__device__ void mma_tensor_cores(Acc& acc, const A& a, const B& b, float* stage) {
  using S = tensor_core_shape<TransposeB, Acc, A, B>;
  using T = typename A::elem;
  constexpr int M = S::M, K = S::K, N = S::N, kc = S::kc;
  // A as [M][kc] and B as [N][kc], K contiguous: each fragment register is one 32-bit load.
  unsigned short* sa = reinterpret_cast<unsigned short*>(stage);
  unsigned short* sb = sa + M * kc;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int g = lane / 4, t = lane % 4;
  float c[S::kPerWarp][4];
#pragma unroll
  for (int j = 0; j < S::kPerWarp; ++j) c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.f;
  for (int k0 = 0; k0 < K; k0 += kc) {
    __syncthreads();
    stage_columns<TransposeB>(
        a, b, k0, kc, [&](int r, int k, float v) { sa[r * kc + k] = from_float<T>(v).bits; },
        [&](int col, int k, float v) { sb[col * kc + k] = from_float<T>(v).bits; });
    __syncthreads();
    const int kn = K - k0 < kc ? K - k0 : kc;
    for (int ks = 0; ks < kn; ks += 16) {
#pragma unroll
      for (int j = 0; j < S::kPerWarp; ++j) {
        const int block = warp + j * S::kWarps;
        if (block >= S::kBlocks) continue;
        const unsigned short* ra = sa + ((block / S::kBlocksN) * 16 + g) * kc + ks + 2 * t;
        const unsigned short* rb = sb + ((block % S::kBlocksN) * 8 + g) * kc + ks + 2 * t;
        auto word = [](const unsigned short* p) { return *reinterpret_cast<const unsigned*>(p); };
        mma_16x8x16<T>(c[j], word(ra), word(ra + 8 * kc), word(ra + 8), word(ra + 8 * kc + 8), word(rb),
                       word(rb + 8));
      }
    }
  }
  // The fragments into acc, a band of rows at a time through the stage.
  for (int band = 0; band < M; band += S::kBandRows) {
    __syncthreads();
#pragma unroll
    for (int j = 0; j < S::kPerWarp; ++j) {
      const int block = warp + j * S::kWarps;
      const int row = (block / S::kBlocksN) * 16 + g - band, col = (block % S::kBlocksN) * 8 + 2 * t;
      if (block >= S::kBlocks || row < 0 || row >= S::kBandRows) continue;
      stage[row * N + col] = c[j][0];
      stage[row * N + col + 1] = c[j][1];
      stage[(row + 8) * N + col] = c[j][2];
      stage[(row + 8) * N + col + 1] = c[j][3];
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < Acc::kSlots; ++s) {
      const long long i = Acc::source(s);
      if (i >= Acc::kCount) continue;
      const int r = static_cast<int>(i / N) - band, col = static_cast<int>(i % N);
      if (r >= 0 && r < S::kBandRows) acc.v[s] += stage[r * N + col];
    }
  }
}

// PK_TILE_MMA_FMA (an NVRTC -D option) keeps every shape on the fp32 FMA route, so a benchmark
// can compare the two routes in one run (pk-bench-gemm-general).
#ifdef PK_TILE_MMA_FMA
constexpr bool kTensorCoreMma = false;
#else
constexpr bool kTensorCoreMma = true;
#endif

template <bool TransposeB, class Acc, class A, class B>
__device__ void mma(Acc& acc, const A& a, const B& b, float* stage) {
  if constexpr (kTensorCoreMma && tensor_core_shape<TransposeB, Acc, A, B>::ok) {
    mma_tensor_cores<TransposeB>(acc, a, b, stage);
    return;
  }
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
    stage_columns<TransposeB>(
        a, b, k0, kc, [&](int r, int k, float v) { sa[r * kc + k] = v; },
        [&](int col, int k, float v) { sb[k * N + col] = v; });
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

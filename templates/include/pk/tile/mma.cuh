// Matrix multiply-accumulate of register tiles on the general path: acc (M x N, f32) +=
// a (M x K) * b (K x N), or b^T with b stored N x K. Operands pass through the shared-memory
// stage in chunks of K. bf16 and f16 operands whose shapes split into 16 x 8 output blocks and
// 16-wide K steps go through the tensor cores (mma.sync m16n8k16, fp32 accumulation); any other
// shape or type has every thread accumulate its own acc elements in fp32 (i8 operands: in i32;
// correct for every shape). Loops that match a Hopper template take the template instead.
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

// The tensor-core route's shape. The warps tile the M x N product as a grid of rectangles of
// kTm x kTn output blocks of 16 x 8 (edge rectangles partly outside it); each warp keeps its
// blocks' fp32 fragments in registers over the whole K, loading per 16-wide K step one A
// fragment per block row and one B fragment per block column. K is staged kc columns at a time
// (a power of two) as 16-bit values; the product goes into acc in bands of rows that fit the
// stage.
template <bool TransposeB, class Acc, class A, class B>
struct tensor_core_shape {
  static constexpr int M = A::dim(0), K = A::dim(1), N = TransposeB ? B::dim(0) : B::dim(1);
  static constexpr int kWarps = A::kThreads / 32;
  static constexpr int kBlocksM = M / 16, kBlocksN = N / 8;
  __host__ __device__ static constexpr int ceil_div(int x, int y) { return (x + y - 1) / y; }
  // The grid with the fewest blocks per warp, then the fewest fragment loads (4 words an A
  // fragment, 2 a B fragment) per K step: its rows of warps.
  __host__ __device__ static constexpr int pick_warps_m() {
    int best = 1, best_blocks = 1 << 30, best_loads = 1 << 30;
    for (int wm = 1; wm <= kWarps; ++wm) {
      if (kWarps % wm) continue;
      const int tm = ceil_div(kBlocksM, wm), tn = ceil_div(kBlocksN, kWarps / wm);
      const int blocks = tm * tn, loads = 4 * tm + 2 * tn;
      if (blocks < best_blocks || (blocks == best_blocks && loads < best_loads))
        best = wm, best_blocks = blocks, best_loads = loads;
    }
    return best;
  }
  static constexpr int kWarpsM = pick_warps_m(), kWarpsN = kWarps / kWarpsM;
  static constexpr int kTm = ceil_div(kBlocksM > 0 ? kBlocksM : 1, kWarpsM);
  static constexpr int kTn = ceil_div(kBlocksN > 0 ? kBlocksN : 1, kWarpsN);
  static constexpr int kPerWarp = kTm * kTn;
  __host__ __device__ static constexpr int pick_kc() {
    int kc = 16;
    while (kc < K && (M + N) * 2 * kc <= 2 * kStageFloats) kc *= 2;
    return kc;
  }
  static constexpr int kc = pick_kc();
  static constexpr int kBandRows = (kStageFloats / (N > 0 ? N : 1)) / 16 * 16;
  static constexpr bool kSixteenBit = (::pk::is_same<typename A::elem, bf16>::value ||
                                       ::pk::is_same<typename A::elem, f16>::value) &&
                                      ::pk::is_same<typename A::elem, typename B::elem>::value;
  static constexpr bool ok = kSixteenBit && A::kRank == 2 && B::kRank == 2 && Acc::kRank == 2 &&
                             M % 16 == 0 && N % 8 == 0 && K % 16 == 0 && (M + N) * kc <= 2 * kStageFloats &&
                             kBandRows >= 16 && kPerWarp <= 16 && A::kThreads == B::kThreads &&
                             A::kThreads == Acc::kThreads;
  // The stage offset (in 16-bit values) of column k of `row` in a [rows][kc] region: rows of
  // kc / 8 chunks of 16 bytes, the chunks of each row permuted so that the eight rows one
  // ldmatrix phase reads fall in eight different bank groups.
  __device__ static int at(int row, int k) {
    constexpr int C = kc / 8;
    const int x = C >= 8 ? row % 8 : (row / (8 / C)) % C;
    return row * kc + (((k / 8) ^ x) * 8) + k % 8;
  }
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

// Where fragment j of this warp sits in the M x N product: its block's first row and column.
// Fragment f of this warp: block (f / kTn, f % kTn) of its rectangle; its first row and column
// in the product, and whether the block lies inside it.
template <class S>
__device__ __forceinline__ int fragment_block_row(int f) {
  return (static_cast<int>(threadIdx.x) / 32 / S::kWarpsN) * S::kTm + f / S::kTn;
}
template <class S>
__device__ __forceinline__ int fragment_block_col(int f) {
  return (static_cast<int>(threadIdx.x) / 32 % S::kWarpsN) * S::kTn + f % S::kTn;
}
template <class S>
__device__ __forceinline__ int fragment_row(int f) {
  return fragment_block_row<S>(f) * 16 + static_cast<int>(threadIdx.x) % 32 / 4;
}
template <class S>
__device__ __forceinline__ int fragment_col(int f) {
  return fragment_block_col<S>(f) * 8 + 2 * (static_cast<int>(threadIdx.x) % 4);
}
template <class S>
__device__ __forceinline__ bool fragment_held(int f) {
  return fragment_block_row<S>(f) < S::kBlocksM && fragment_block_col<S>(f) < S::kBlocksN;
}

// Eight 16-bit matrices' rows from shared memory into mma fragments (ldmatrix: lane l gives
// the address of a row; x4 fills an A fragment, x2 a B fragment).
__device__ __forceinline__ void load_matrix_x4(unsigned (&r)[4], const unsigned short* p) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ void load_matrix_x2(unsigned (&r)[2], const unsigned short* p) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
}

// Two values as the 16-bit pair of one 32-bit word (the first in the low half).
template <class T>
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  return static_cast<unsigned>(from_float<T>(lo).bits) | (static_cast<unsigned>(from_float<T>(hi).bits) << 16);
}

// Columns [k0, k0 + kc) of a tile with K along its rows into a [rows][kc] region (S::at), each
// run of 8 along K as one 16-byte store.
template <class S, class Tile>
__device__ __forceinline__ void stage_runs(const Tile& tile, int k0, unsigned short* to) {
  using T = typename Tile::elem;
  constexpr int K = S::K;
#pragma unroll
  for (int s = 0; s < Tile::kSlots; s += Tile::kVec) {
    const long long i = Tile::index(s);
    const int row = static_cast<int>(i / K), k = static_cast<int>(i % K) - k0;
    if (i >= Tile::kCount || k < 0 || k >= S::kc) continue;
    uint4 w;
    w.x = pack2<T>(tile.v[s], tile.v[s + 1]);
    w.y = pack2<T>(tile.v[s + 2], tile.v[s + 3]);
    w.z = pack2<T>(tile.v[s + 4], tile.v[s + 5]);
    w.w = pack2<T>(tile.v[s + 6], tile.v[s + 7]);
    *reinterpret_cast<uint4*>(to + S::at(row, k)) = w;
  }
}

// Columns [k0, k0 + kc) of a (M x K) into sa and of b into sb, both [rows][kc] with K along the
// row: b stored N x K goes by runs as a does; b stored K x N has its runs along N, so it is
// transposed element by element.
template <bool TransposeB, class S, class A, class B>
__device__ __forceinline__ void stage_fragments(const A& a, const B& b, int k0, unsigned short* sa,
                                                unsigned short* sb) {
  stage_runs<S>(a, k0, sa);
  if constexpr (TransposeB) {
    stage_runs<S>(b, k0, sb);
  } else {
    constexpr int N = S::N;
#pragma unroll
    for (int s = 0; s < B::kSlots; ++s) {
      const long long i = B::index(s);
      const int k = static_cast<int>(i / N) - k0, col = static_cast<int>(i % N);
      if (i < B::kCount && k >= 0 && k < S::kc) sb[S::at(col, k)] = from_float<typename B::elem>(b.v[s]).bits;
    }
  }
}

// c += a * b on the tensor cores, c in this warp's mma.sync fragments (fragment_row / _col).
template <bool TransposeB, class S, class A, class B>
__device__ void mma_fragments(float (&c)[S::kPerWarp][4], const A& a, const B& b, float* stage) {
  using T = typename A::elem;
  constexpr int K = S::K, kc = S::kc;
  unsigned short* sa = reinterpret_cast<unsigned short*>(stage);
  unsigned short* sb = sa + S::M * kc;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  for (int k0 = 0; k0 < K; k0 += kc) {
    __syncthreads();
    stage_fragments<TransposeB, S>(a, b, k0, sa, sb);
    __syncthreads();
    const int kn = K - k0 < kc ? K - k0 : kc;
    for (int ks = 0; ks < kn; ks += 16) {
      unsigned fa[S::kTm][4], fb[S::kTn][2];
#pragma unroll
      for (int i = 0; i < S::kTm; ++i) {
        const int block = fragment_block_row<S>(i * S::kTn);
        if (block < S::kBlocksM) load_matrix_x4(fa[i], sa + S::at(block * 16 + lane % 16, ks + lane / 16 * 8));
      }
#pragma unroll
      for (int j = 0; j < S::kTn; ++j) {
        const int block = fragment_block_col<S>(j);
        if (block < S::kBlocksN) load_matrix_x2(fb[j], sb + S::at(block * 8 + lane % 8, ks + lane % 16 / 8 * 8));
      }
#pragma unroll
      for (int f = 0; f < S::kPerWarp; ++f)
        if (fragment_held<S>(f))
          mma_16x8x16<T>(c[f], fa[f / S::kTn][0], fa[f / S::kTn][1], fa[f / S::kTn][2], fa[f / S::kTn][3],
                         fb[f % S::kTn][0], fb[f % S::kTn][1]);
    }
  }
}

// Moves values between fragments and a register tile through the stage, a band of rows at a
// time: `add` adds the fragments into acc; otherwise acc's values become the fragments.
template <class S, bool ToTile, class Acc>
__device__ void fragments_exchange(float (&c)[S::kPerWarp][4], Acc& acc, float* stage) {
  constexpr int N = S::N;
  for (int band = 0; band < S::M; band += S::kBandRows) {
    __syncthreads();
    if constexpr (ToTile) {
#pragma unroll
      for (int j = 0; j < S::kPerWarp; ++j) {
        const int row = fragment_row<S>(j) - band, col = fragment_col<S>(j);
        if (!fragment_held<S>(j) || row < 0 || row >= S::kBandRows) continue;
        stage[row * N + col] = c[j][0];
        stage[row * N + col + 1] = c[j][1];
        stage[(row + 8) * N + col] = c[j][2];
        stage[(row + 8) * N + col + 1] = c[j][3];
      }
    } else {
#pragma unroll
      for (int s = 0; s < Acc::kSlots; ++s) {
        const long long i = Acc::source(s);
        if (i >= Acc::kCount) continue;
        const int r = static_cast<int>(i / N) - band, col = static_cast<int>(i % N);
        if (r >= 0 && r < S::kBandRows) stage[r * N + col] = acc.v[s];
      }
    }
    __syncthreads();
    if constexpr (ToTile) {
#pragma unroll
      for (int s = 0; s < Acc::kSlots; ++s) {
        const long long i = Acc::source(s);
        if (i >= Acc::kCount) continue;
        const int r = static_cast<int>(i / N) - band, col = static_cast<int>(i % N);
        if (r >= 0 && r < S::kBandRows) acc.v[s] += stage[r * N + col];
      }
    } else {
#pragma unroll
      for (int j = 0; j < S::kPerWarp; ++j) {
        const int row = fragment_row<S>(j) - band, col = fragment_col<S>(j);
        if (!fragment_held<S>(j) || row < 0 || row >= S::kBandRows) continue;
        c[j][0] = stage[row * N + col];
        c[j][1] = stage[row * N + col + 1];
        c[j][2] = stage[(row + 8) * N + col];
        c[j][3] = stage[(row + 8) * N + col + 1];
      }
    }
  }
}

template <bool TransposeB, class Acc, class A, class B>
__device__ void mma_tensor_cores(Acc& acc, const A& a, const B& b, float* stage) {
  using S = tensor_core_shape<TransposeB, Acc, A, B>;
  float c[S::kPerWarp][4];
#pragma unroll
  for (int j = 0; j < S::kPerWarp; ++j) c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.f;
  mma_fragments<TransposeB, S>(c, a, b, stage);
  fragments_exchange<S, /*ToTile=*/true>(c, acc, stage);
}

// PK_TILE_MMA_FMA (an NVRTC -D option) keeps every shape on the fp32 FMA route, so a benchmark
// can compare the two routes in one run (pk-bench-gemm-general).
#ifdef PK_TILE_MMA_FMA
constexpr bool kTensorCoreMma = false;
#else
constexpr bool kTensorCoreMma = true;
#endif
// PK_TILE_MMA_NO_CARRY keeps loop-carried accumulators in register tiles (mma_carry's tile
// route), adding each trip's product back: the benchmark's other comparison.
#ifdef PK_TILE_MMA_NO_CARRY
constexpr bool kCarryFragments = false;
#else
constexpr bool kCarryFragments = true;
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
        // i8 operands into an i32 accumulator: each product is exact in f32 (|x| <= 2^14) and
        // the sum wraps at 32 bits, as the tensor cores' s32 sums do.
        if constexpr (is_integer_v<typename Acc::elem>)
          acc.v[s] = wrap_add(acc.v[s], static_cast<typename Acc::value>(sa[r * kc + kk] * sb[kk * N + c]));
        else
          acc.v[s] += sa[r * kc + kk] * sb[kk * N + c];
      }
    }
  }
}

// An accumulator that a range loop carries through mma alone (`acc = mma(a, b, acc)` each trip,
// acc used nowhere else in the loop). On the tensor-core route it stays in the warps' fragments
// for the whole loop and becomes a register tile once, after it: the product is not added back
// into the tile every trip. On the FMA route it is the tile.
template <bool TransposeB, class Acc, class A, class B,
          bool Fragments = kTensorCoreMma && kCarryFragments && tensor_core_shape<TransposeB, Acc, A, B>::ok>
struct mma_carry {
  Acc tile;
  __device__ mma_carry(const Acc& init, float*) : tile(init) {}
  __device__ void step(const A& a, const B& b, float* stage) { mma<TransposeB>(tile, a, b, stage); }
  __device__ Acc result(float*) const { return tile; }
};

template <bool TransposeB, class Acc, class A, class B>
struct mma_carry<TransposeB, Acc, A, B, true> {
  using S = tensor_core_shape<TransposeB, Acc, A, B>;
  float c[S::kPerWarp][4];
  long long valid[4];  // the initial tile's valid extents, which mma keeps
  __device__ mma_carry(const Acc& init, float* stage) {
    valid[0] = init.valid0, valid[1] = init.valid1, valid[2] = init.valid2, valid[3] = init.valid3;
    Acc copy = init;
    fragments_exchange<S, /*ToTile=*/false>(c, copy, stage);
  }
  __device__ void step(const A& a, const B& b, float* stage) { mma_fragments<TransposeB, S>(c, a, b, stage); }
  __device__ Acc result(float* stage) {
    Acc out;
#pragma unroll
    for (int s = 0; s < Acc::kSlots; ++s) out.v[s] = 0.f;
    out.valid0 = valid[0], out.valid1 = valid[1], out.valid2 = valid[2], out.valid3 = valid[3];
    fragments_exchange<S, /*ToTile=*/true>(c, out, stage);
    return out;
  }
};

}  // namespace tile
}  // namespace pk

// Job: C[M, N] = epilogue(A * B) on one GPU (no communication), A stored [M, K] (or [K, M]:
// AMMajor, read transposed, the weight gradient dY^T X), with B stored [N, K]
// (C = A * B^T, BNMajor false) or [K, N] (C = A * B, BNMajor true), bf16 or f16 operands (or
// fp8, e4m3 or e5m2 for A and for B, with B stored [N, K]; or i8 for both, B stored [N, K]:
// s8 wgmma into exact s32 accumulators, whose bits the epilogue and an i32 C take), bf16, f16 or
// f32 output (or i32), and an optional element-wise epilogue Epi on the accumulators
// (NoEpilogue, or one pkc writes: struct Args, prepare, prepare_row, prepare_col, apply). The reference point for the fused
// kernels and pkc's GEMM alone. Batched: A [B, M, K], B [B, N, K] or [B, K, N] and C [B, M, N],
// one product per batch, the tile order's segments the batches (3-D tensor maps, so a box clips
// at its batch's last row and column; row and col in the epilogue count inside the batch, and its
// prepare() takes the batch). SharedB (with Batched): B is one 2-D [N, K] or [K, N] weight that
// every batch multiplies by. A weight-only quantised B (bf16 or f16 A, fp8 B stored [N, K], not
// batched) is widened to A's type in the ring (kWidenB, widen_b.cuh).
#pragma once
#include <pk/templates/lcsc.cuh>
#include <pk/templates/tma3d.cuh>

namespace pk {
namespace gemm {

template <class In = bf16, class Out = bf16, bool BNMajor = false, class Epi = NoEpilogue, class InB = In,
          bool Batched = false, bool SharedB = false, bool AMMajor = false, bool Trailing = false>
struct GemmJobT : JobDefaults {
  // Trailing: a second product added into the same accumulators after the K loop (LoRA's
  // u lb^T beside x w^T): its operands a2 [M, K2] and b2 (B's layout) stream as further K steps.
  static_assert(!Trailing || (!Batched && !AMMajor && sizeof(In) == 2 && sizeof(InB) == 2),
                "a trailing product: the plain 16-bit GEMM");
  static_assert(!AMMajor || (!Batched && sizeof(In) == 2), "an M-major A: the plain bf16 / f16 GEMM");
  // fp8 B beside a 16-bit A: B is widened to A's type before wgmma reads it.
  static constexpr bool kWidenB = sizeof(In) == 2 && sizeof(InB) == 1;
  static_assert(sizeof(In) == sizeof(InB) || (kWidenB && !BNMajor && !AMMajor && !Batched),
                "operands of one size, or an fp8 B stored [N, K] beside a 16-bit A (not batched)");
  using WidenFrom = InB;
  using WidenTo = In;
  static_assert(Batched || !SharedB, "a shared B belongs to a batched GEMM");
  static_assert(sizeof(Out) == 2 || is_same<Out, float>::value || (is_same<Out, int>::value && is_same<In, signed char>::value),
                "a bf16, f16 or f32 output (or i32 from i8 operands)");
  static_assert(!is_same<In, signed char>::value || (is_same<InB, signed char>::value && !Batched && !Trailing),
                "i8 operands: both i8, the plain GEMM (s8 wgmma)");
  static constexpr wg::Operand kA = wg::operand_of<In>(), kB = kWidenB ? kA : wg::operand_of<InB>();
  static constexpr bool kF16Out = is_same<Out, f16>::value;
  static constexpr int kOutBytes = sizeof(Out);
  // f32 goes straight from the accumulators to global memory: each thread's adjacent column
  // pair is one 8-byte store, a warp's store 8 full 32-byte sectors. Through the storer it
  // would take four shared-memory hand-overs per tile instead of two (measured 0.875 of cuBLAS
  // at 8192^3 that way).
  static constexpr bool kDirectStore = kOutBytes == 4;
  static constexpr bool kBNMajor = BNMajor;
  static constexpr bool kAMMajor = AMMajor;
  static constexpr bool kHasEpilogue = Epi::kActive;
  static constexpr bool kSplitK = true;
  static constexpr int kBBox = 64;  // N-major B: 64 x 64 boxes, four per stage
  struct PlainParams {
    // In 2-byte units (fp8 rows as K / 2 of them, so k too is K / 2 for fp8):
    // (Batched: each with the batches as a third dimension, boxes one batch deep.)
    TensorMap a;  // [M, K], box 128 x 64; or [K, M], box 64 x 64; 128-byte swizzle
    TensorMap b;  // [N, K], box 256 x 64; or [K, N], box 64 x 64; 128-byte swizzle (kWidenB: fp8
                  // [N, K] as K / 2 units, box 256 x 32, unswizzled)
    TensorMap c;  // [M, N], box 64 x 64, 128-byte swizzle (unused for f32: kDirectStore)
    TileOrder order;
    int k, m, n;  // per batch
    int comm_blocks;  // always 0
    typename Epi::Args epi;
    Out* c_out;  // C's data: an f32 output is stored from the registers (kDirectStore)
    int splits;       // K pieces per tile (split_k.cuh); 0 or 1: none
    float* split_ws;  // their workspace (null when unsplit)
  };
  // After the plain fields, so that they keep their offsets.
  struct TrailingParams : PlainParams {
    TensorMap a2;  // [M, K2], box 128 x 64
    TensorMap b2;  // [N, K2], box 256 x 64; or [K2, N], box 64 x 64
    int k2;        // K2
  };
  using Params = typename conditional<Trailing, TrailingParams, PlainParams>::type;
  // K steps of the main product, then (Trailing) of the second one.
  __device__ static int steps(const Params& p) {
    if constexpr (Trailing) return k_steps(p.k) + k_steps(p.k2);
    else return k_steps(p.k);
  }
  // The map and K offset of the step at k0: the main product's, or past its steps the second's.
  __device__ static const TensorMap* operand_map(const Params& p, const TensorMap* main, int& k0, bool b) {
    if constexpr (Trailing) {
      const int k1 = k_steps(p.k) * kBK;
      if (k0 >= k1) {
        k0 -= k1;
        return b ? &p.b2 : &p.a2;
      }
    }
    return main;
  }
  static constexpr bool kHasCommunicator = false;
  __device__ static void communicate(const Params&, unsigned char*, int) {}
  __device__ static void before_loads(const Params&, const TileCoord&) {}
  // A box at (x, y) of `map`, in the tile's batch when Batched (and the map is 3-D).
  template <bool ThreeD = Batched>
  __device__ static void load_box(void* dst, const TensorMap* map, int x, int y, const TileCoord& t, Mbarrier* bar) {
    if constexpr (ThreeD) load_async_tensor_3d(dst, map, x, y, t.seg, bar);
    else load_async_tensor_2d(dst, map, x, y, bar);
  }
  __device__ static void load_a(const Params& p, const TileCoord& t, int k0, void* dst, Mbarrier* bar) {
    if constexpr (AMMajor) {  // two 64 x 64 boxes of M-rows: one per consumer's 64 rows
#pragma unroll
      for (int j = 0; j < kBM / kBBox; ++j)
        load_box(static_cast<unsigned char*>(dst) + j * kBBox * kBK * 2, &p.a, t.mi * kBM + j * kBBox, k0, t, bar);
    } else {
      const TensorMap* map = operand_map(p, &p.a, k0, false);
      load_box(dst, map, k0, t.mi * kBM, t, bar);
    }
  }
  __device__ static void load_b(const Params& p, const TileCoord& t, int k0, void* dst, Mbarrier* bar) {
    const TensorMap* map = operand_map(p, &p.b, k0, true);
    if constexpr (BNMajor) {
#pragma unroll
      for (int j = 0; j < kBN / kBBox; ++j)
        load_box<Batched && !SharedB>(static_cast<unsigned char*>(dst) + j * kBBox * kBK * 2, map,
                                      t.ni * kBN + j * kBBox, k0, t, bar);
    } else {
      load_box<Batched && !SharedB>(dst, map, kWidenB ? k0 / 2 : k0, t.ni * kBN, t, bar);
    }
  }
  template <int First, int Count>
  __device__ static void epilogue(const Params& p, const TileCoord& t, int row0, int col0,
                                  float (&acc)[128]) {
    apply_epilogue<Epi, First, Count, Batched>(p.epi, row0, col0, acc, t.seg);
  }
  // The consumer's 64 x 256 accumulators whose top-left output is (row0, col0), clipped to
  // m x n (kDirectStore, and split tiles of any output type). n is a multiple of 4 for 4-byte
  // outputs and of 8 for 2-byte ones (the C row rule), so pairs at even columns are aligned and lie
  // wholly inside or outside. (A 2-byte pair is rounded as the storer's boxes round it.)
  __device__ static void store_direct(const Params& p, const TileCoord& tile, int row0, int col0,
                                      const float (&acc)[128]) {
    Out* const c_out = p.c_out + (Batched ? static_cast<long long>(tile.seg) * p.m * p.n : 0);
    const int t = wg::thread();
    const int row = row0 + 16 * (t / 32) + (t % 32) / 4, col = col0 + 2 * (t % 4);
#pragma unroll
    for (int g = 0; g < 32; ++g)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row + 8 * h, c = col + 8 * g;
        if (r < p.m && c < p.n) {
          Out* const at = c_out + static_cast<long long>(r) * p.n + c;
          if constexpr (kOutBytes == 4)
            *reinterpret_cast<float2*>(at) = make_float2(acc[4 * g + 2 * h], acc[4 * g + 2 * h + 1]);
          else
            *reinterpret_cast<unsigned int*>(at) = pack_x2<kF16Out>(acc[4 * g + 2 * h], acc[4 * g + 2 * h + 1]);
        }
      }
  }
  __device__ static int store_rows(const Params& p, const TileCoord&) { return p.m; }
  __device__ static int store_cols(const Params& p) { return p.n; }
  __device__ static void storer_begin(const Params&, int) {}
  __device__ static void store_box(const Params& p, const TileCoord& t, int row, int col, const bf16* box) {
    if constexpr (Batched) store_async_tensor_3d(&p.c, box, col, row, t.seg);
    else store_async_tensor_2d(&p.c, box, col, row);
  }
  __device__ static void storer_end(const Params&, int) {}
};

// bf16, C = A * B^T, no epilogue: the GEMM of the nvcc plans and the shipped gemm spec.
using GemmJob = GemmJobT<>;

}  // namespace gemm
}  // namespace pk

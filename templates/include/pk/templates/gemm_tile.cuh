// The Hopper GEMM main loop, split by role: the loader's TMA loads of one K step, the consumer's
// wgmma over one output tile with fp32 accumulators, an optional element-wise epilogue on them,
// and the consumer's hand-over to the storer as bf16 or f16 in a TMA-ready (128-byte swizzled)
// shared-memory box (an f32 output skips it: the job stores it from the registers). A is [M, K] (K-major); B is [N, K] (K-major, C = A * B^T, a linear layer's
// weight) or [K, N] (N-major, C = A * B). Operands are bf16 or f16, or fp8 with B K-major. TMA
// moves every operand as 2-byte units (an fp8 row of K elements is K / 2 of them, and a K step
// is 128 bytes of each row either way: 64 bf16 / f16 or 128 fp8), so only the instruction and
// the output conversion depend on the type.
#pragma once
#include <pk/device/bf16.cuh>
#include <pk/device/load.cuh>
#include <pk/device/mbarrier.cuh>
#include <pk/device/store.cuh>
#include <pk/templates/ring.cuh>
#include <pk/tile/guarded_load.cuh>
#include <pk/tile/int_math.cuh>
#include <pk/tile/math.cuh>
#include <pk/templates/warpgroup.cuh>
#include <pk/templates/wgmma.cuh>
#include <pk/templates/widen_b.cuh>

namespace pk {
namespace gemm {

constexpr int kBM = 128;             // tile rows: two consumer warpgroups of 64 rows
constexpr int kBN = 256;             // tile columns: one m64n256k16 per warpgroup and K step
constexpr int kBK = 64;              // K step: one 128-byte swizzle row of bf16 (128 fp8)
constexpr int kStages = 4;           // ring depth: loads run ~3 K steps ahead of the math
constexpr int kConsumers = 2;        // math warpgroups
constexpr int kThreads = (1 + kConsumers) * wg::kThreads;
constexpr int kEpiCols = 128;        // columns handed to the storer per pass (two 64-col boxes)
constexpr int kBoxCols = 64;         // C box: 64 x 64 bf16 = one 128-byte swizzle row per row
constexpr int kBoxRows = 64;
constexpr int kLoaderRegs = 40;      // setmaxnreg split: 128 x 40 + 256 x 232 <= 64K registers
constexpr int kConsumerRegs = 232;

constexpr unsigned int kABytes = kBM * kBK * 2;
constexpr unsigned int kBBytes = kBN * kBK * 2;
constexpr unsigned int kStageBytes = kABytes + kBBytes;
constexpr int kBoxElems = kBoxRows * kBoxCols;

struct alignas(1024) SharedStorage {
  bf16 a[kStages][kBM * kBK];              // 1024-aligned: swizzle atoms start on 1024 B
  bf16 b[kStages][kBN * kBK];
  bf16 c[kConsumers][kBoxRows * kEpiCols];  // per consumer: two 64 x 64 boxes
  Ring<kStages> ring;
  Mbarrier raw_full[kStages];    // loader -> consumers: a stage's fp8 B box has landed (widen_b.cuh)
  Mbarrier c_full[kConsumers];   // consumer -> storer: the box pair is written
  Mbarrier c_empty[kConsumers];  // storer -> consumer: TMA has read it
};
// Dynamic shared memory to request: the storage plus room to align its start to 1024 bytes.
constexpr unsigned int kSharedBytes = sizeof(SharedStorage) + 1024;
static_assert(kSharedBytes <= 232448, "GEMM shared memory exceeds the sm_90 per-block limit");
static_assert(kRawOffset == kBBytes / 2, "the fp8 B box fills the upper half of a stage's B slot");

__device__ __forceinline__ SharedStorage& shared_storage(unsigned char* raw) {
  const unsigned long long a = reinterpret_cast<unsigned long long>(raw);
  return *reinterpret_cast<SharedStorage*>((a + 1023ull) & ~1023ull);
}

__device__ __forceinline__ int k_steps(int k) { return (k + kBK - 1) / kBK; }

// Consumer: acc = A[tile rows of this warpgroup] * B[tile cols] over all K steps, releasing
// each stage to the loader once the wgmma that read it has completed. WidenFrom (an fp8 type):
// B arrives as fp8 (raw_full) and both consumers widen it to WidenTo (widen_b.cuh) while the
// previous step's wgmma runs. acc is f32, or s32 for int8 operands (wg::accumulator_of).
template <wg::Operand A, wg::Operand B, bool BNMajor, bool AMMajor = false, class WidenFrom = void,
          class WidenTo = void>
__device__ __forceinline__ void mma_tile(SharedStorage& ss, RingCursor<kStages>& cur, int ksteps,
                                         int consumer, typename wg::accumulator_of<A>::type (&acc)[128]) {
#pragma unroll
  for (int j = 0; j < 128; ++j) acc[j] = 0;
  int prev = -1;
  for (int k = 0; k < ksteps; ++k) {
    ss.ring.wait_full(cur);
    if constexpr (!is_same<WidenFrom, void>::value) {
      mbarrier_wait_parity(&ss.raw_full[cur.stage], cur.phase);
      widen_stage<WidenFrom, WidenTo>(reinterpret_cast<unsigned char*>(&ss.b[cur.stage][0]),
                                      consumer * wg::kThreads + wg::thread());
    }
    // An M-major A (stored [K, M]) is two 64 x 64 boxes per stage, one per consumer: the same
    // 8 KiB at the same place, laid out as an N-major B's box.
    const unsigned long long da = AMMajor ? wg::desc_n_major_sw128(&ss.a[cur.stage][consumer * 64 * kBK])
                                          : wg::desc_k_major_sw128(&ss.a[cur.stage][consumer * 64 * kBK]);
    const unsigned long long db = BNMajor ? wg::desc_n_major_sw128(&ss.b[cur.stage][0])
                                          : wg::desc_k_major_sw128(&ss.b[cur.stage][0]);
#pragma unroll
    for (int j = 0; j < 128; ++j) wg::fence_operand(acc[j]);
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk)  // K-major: 32 B = 2 descriptor units per step;
      wg::mma_m64n256_32bytes<A, B, BNMajor, AMMajor>(  // N-major B: 16 K-rows = 2048 B = 128 units
          acc, da + (AMMajor ? 128ull : 2ull) * kk, db + (BNMajor ? 128ull : 2ull) * kk);
    wg::commit();
#pragma unroll
    for (int j = 0; j < 128; ++j) wg::fence_operand(acc[j]);
    if (prev >= 0) {
      wg::wait<1>();  // the previous step's wgmma is done: its stage may be refilled
      ss.ring.release(prev);
    }
    prev = cur.stage;
    cur.advance();
  }
  wg::wait<0>();
#pragma unroll
  for (int j = 0; j < 128; ++j) wg::fence_operand(acc[j]);
  if (prev >= 0) ss.ring.release(prev);
}

template <bool F16>
__device__ __forceinline__ unsigned int pack_x2(float lo, float hi) {
  unsigned int r;
  if constexpr (F16) asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// tanh by the SFU (relative error about 2^-11): epilogues round to bf16 or f16 anyway, and the
// accurate tanhf would cost the consumers several microseconds per tile.
__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// GELU (tanh form) on the SFU's tanh.
__device__ __forceinline__ float gelu_tanh_approx(float x) {
  // 0.5 x (1 + tanh(0.79788456 (x + 0.044715 x^3))), as x (c0 + c1 x^2) and 0.5x + 0.5x t by fused
  // multiply-adds (five instructions and the SFU's tanh, against eight).
  const float h = 0.5f * x;
  return fmaf(h, tanh_approx(x * fmaf(0.0356774081f * x, x, 0.7978845608f)), h);
}

// No epilogue: the accumulators are stored as they are.
struct NoEpilogue {
  struct Args {};
  struct Pre {};
  static constexpr bool kActive = false;
  struct PreRow {};
  struct PreCol {};
  __device__ static Pre prepare(const Args&) { return {}; }
  __device__ static PreRow prepare_row(const Args&, const Pre&, int) { return {}; }
  __device__ static PreCol prepare_col(const Args&, const Pre&, int) { return {}; }
  __device__ static float apply(const Args&, const Pre&, const PreRow&, const PreCol&, float v, int, int) { return v; }
};

// Applies Epi::apply(args, pre, pre_row, pre_col, value, row, col) to accumulators [First, First +
// Count) of a consumer's 64 x 256 tile whose top-left output element is (row0, col0), in place
// (the layout of wg::mma_m64n256_32bytes: accumulators [64 p, 64 p + 64) are the columns of storer
// pass p; accumulator 4 g + 2 h + q is row 8 h, column 8 g + q of the thread's origin). A thread
// holds 2 rows and 64 columns, so what follows only the row is made twice and what follows only
// the column (a bias row) once per column, not once per element.
// Elements outside the m x n output still get a value; the TMA store clips them, so apply
// must only guard its own loads (it is told m and n through its Args).
// Batch: a batched GEMM's epilogue, whose prepare() takes the tile's batch (`batch`).
template <class Epi, int First = 0, int Count = 128, bool Batch = false>
__device__ __forceinline__ void apply_epilogue(const typename Epi::Args& args, int row0, int col0,
                                               float (&acc)[128], int batch = 0) {
  static_assert(First % 4 == 0 && Count % 4 == 0, "whole 8-column groups");
  const int t = wg::thread();
  const int row = row0 + 16 * (t / 32) + (t % 32) / 4, col = col0 + 2 * (t % 4);
  // What does not depend on the element, once.
  typename Epi::Pre u;
  if constexpr (Batch) u = Epi::prepare(args, batch);
  else u = Epi::prepare(args);
  const typename Epi::PreRow r[2] = {Epi::prepare_row(args, u, row), Epi::prepare_row(args, u, row + 8)};
#pragma unroll
  for (int g = First / 4; g < (First + Count) / 4; ++g)
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const typename Epi::PreCol c = Epi::prepare_col(args, u, col + 8 * g + q);
#pragma unroll
      for (int h = 0; h < 2; ++h)
        acc[4 * g + 2 * h + q] = Epi::apply(args, u, r[h], c, acc[4 * g + 2 * h + q], row + 8 * h, col + 8 * g + q);
    }
}

// Byte offset in a pass's pair of 64 x 64 boxes of the 16-byte row that lane `lane` of warp
// `warp` addresses in the stmatrix.x4 for column groups `g`, `g` + 1 of the pass (g even,
// 0..14). Matrix l / 8 is row half (l / 8) % 2 of group g + l / 16; its row l % 8 lands where
// the C tensor map's 128-byte swizzle puts it: 16-byte chunk index XOR row % 8, so the 8 rows
// of one matrix fall in 8 different bank groups. Host-callable for the layout test.
__host__ __device__ constexpr unsigned int epilogue_row_offset(int warp, int lane, int g) {
  const int mat = lane / 8;
  const int row = 16 * warp + 8 * (mat % 2) + lane % 8;
  const int col = 8 * (g + mat / 2);  // 0..127 inside the pass
  const int box = col / kBoxCols, chunk = (col % kBoxCols) / 8;
  return box * (kBoxElems * 2) + row * 128 + ((chunk ^ (row % 8)) * 16);
}

// Consumer: writes columns [pass * 128, pass * 128 + 128) of its 64 x 256 accumulator tile as
// bf16 (or f16) into its two boxes. The accumulators of one 8-column group are an 8 x 8 matrix per row
// half in stmatrix's register layout, so one stmatrix.x4 stores two groups of both halves:
// four times fewer shared-memory stores than 4-byte ones (measured 3-5% faster GEMMs).
template <int Pass, bool F16 = false>
__device__ __forceinline__ void write_epilogue_boxes(bf16* boxes, const float (&acc)[128]) {
  const int t = wg::thread();
  const unsigned int base = smem_addr(boxes);
#pragma unroll
  for (int g = Pass * 16; g < Pass * 16 + 16; g += 2) {
    const unsigned int addr = base + epilogue_row_offset(t / 32, t % 32, g - Pass * 16);
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
                 "r"(pack_x2<F16>(acc[4 * g], acc[4 * g + 1])),
                 "r"(pack_x2<F16>(acc[4 * g + 2], acc[4 * g + 3])),
                 "r"(pack_x2<F16>(acc[4 * g + 4], acc[4 * g + 5])),
                 "r"(pack_x2<F16>(acc[4 * g + 6], acc[4 * g + 7]))
                 : "memory");
  }
}

}  // namespace gemm
}  // namespace pk

// The Hopper attention forward main loop: O = softmax(Q K^T * scale) V per head with the online
// softmax, and the row log-sum-exp, for head dims 64 and 128, causal or not. One block computes
// 64 query rows per consumer warpgroup of one head (128 rows at head dim 128, 192 at 64):
//   warpgroup 0, one thread: producer - TMA loads of the Q tile once, then K and V tiles of 128
//                            keys into two rings (mbarrier full/empty; K and V apart, so S = Q K^T
//                            starts while V is still arriving)
//   warpgroups 1..C:         consumers - 64 query rows each: S by wgmma from shared memory, the
//                            softmax in registers (exp2 with the scale folded in), P V by wgmma
//                            with P straight from registers; the next S is issued beside P V.
// At head dim 64 a key step has half the products of dim 128 for the same softmax work, so a
// third consumer keeps the tensor cores busy while the other two exponentiate.
// Q, K, V are [heads, rows, D] bf16 or f16 (heads 1 for one head), or token-major [rows, heads, D],
// read through 3-D tensor maps with boxes of one head's 128 rows by 64 columns and 128-byte
// swizzle (the same shared-memory box either way); rows past the end load as zeros, keys past the
// end and (causal) keys after the query are masked. O of their type and lse f32, at any row and
// head strides, are stored directly by the consumers, rows past sq skipped.
#pragma once
#include <pk/device/bf16.cuh>
#include <pk/device/mbarrier.cuh>
#include <pk/device/tensor_map.cuh>
#include <pk/device/tile_ticket.cuh>
#include <pk/templates/gemm_tile.cuh>
#include <pk/templates/ring.cuh>
#include <pk/templates/tma3d.cuh>
#include <pk/templates/warpgroup.cuh>
#include <pk/templates/wgmma_attention.cuh>

namespace pk {
namespace attention {

constexpr int kBN = 128;         // keys per step
constexpr int kBox = 64;         // TMA box columns: 64 16-bit elements = one 128-byte swizzle row
constexpr int kBoxRows = 128;    // TMA box rows, for Q, K and V alike
constexpr int kProducerRegs = 24;
// At head dim 64, one score in kPolyEvery64 is exponentiated on the FMA pipe (exp2_fma).
constexpr int kPolyEvery64 = 8;

// No score map: the scores are q k^T * scale (the scale folded into the softmax's exp2).
struct NoScoreMap {
  struct Args {};
  struct Pre {};
  static constexpr bool kActive = false;
  __device__ static Pre prepare(const Args&, int) { return {}; }
  __device__ static float apply(const Args&, const Pre&, float s, int, int, float, float) { return s; }
};

// Map (pkc's ScoreMap: ALiBi, soft-capping, extra masks) turns each raw score q.k of query row
// `row` and key `col` into the score the softmax takes, in natural-log units with the scale
// applied; prepare() computes once per tile what depends only on the query head (ALiBi's slope).
// Its arguments follow the fixed fields. F16: q, k, v and o are f16 (else bf16).
template <class MapT = NoScoreMap, bool F16 = false>
struct ParamsOf {
  using Map = MapT;
  static constexpr bool kF16 = F16;
  using Elem = typename conditional<F16, f16, bf16>::type;
  TensorMap q, k, v;  // {D, rows, heads}, box {64, 128, 1}; token-major {D, heads, rows}, box {64, 1, 128}
  Elem* o;
  float* lse;  // null: not stored
  int sq, sk, heads;
  int kv_group;  // query heads per K/V head (grouped-query attention; 1: one each)
  int kv_head0;  // the K/V head of query head 0 (heads stacked in a larger tensor; usually 0)
  int v_head0;   // V's, where packed q / k / v heads put it elsewhere (else kv_head0)
  int o_pitch, o_cols;  // o's row stride, and the columns of a row written (<= D)
  int lse_pitch;        // lse's row stride (0: nothing stored)
  int token_major;      // q, k, v (and o, lse) [S, H, D]: a box's coordinates are (col, head, row)
  long long o_head_stride, lse_head_stride;  // elements from one head's row 0 to the next's
  int key_window;  // > 0: row i sees keys j > i - key_window only, so earlier steps are skipped (<= 0: none)
  // Causal: row i sees keys j <= i + causal_offset (past keys of a KV cache; 0: the plain mask).
  // Negative (rows that see no key): every key is visited, and a score map masks them as the
  // spec does (pkc shifts the mask only with a score map).
  int causal_offset;
  float scale;
  TileTicket ticket;  // the causal kernels' tile counter
  typename Map::Args map;
};
using Params = ParamsOf<>;

// Consumer warpgroups: three at head dim 64 (each then has 128 registers, with no room to spare
// in the plain loop), two otherwise; a score map at head dim 64 takes two, for its registers.
template <int D>
constexpr int kDefaultConsumers = D == 64 ? 3 : 2;

template <int D, int C = kDefaultConsumers<D>>
struct Layout {
  static_assert(D == 64 || D == 128, "attention head dims are 64 or 128");
  static_assert(C == 2 || C == 3, "two or three consumer warpgroups");
  static constexpr int kConsumers = C;
  static constexpr int kBM = 64 * kConsumers;  // query rows per block
  static constexpr int kThreads = (1 + kConsumers) * wg::kThreads;
  // setmaxnreg split of the 64K registers: 128 x 24 + 256 x 240, or 128 x 24 + 384 x 160.
  static constexpr int kConsumerRegs = kConsumers == 2 ? 240 : 160;
  static constexpr int kBoxes = D / kBox;
  static constexpr int kQLoads = (kBM + kBoxRows - 1) / kBoxRows;  // Q boxes down the rows
  static constexpr int kStages = D == 64 ? 4 : 3;  // 128: Q and three K/V stages fill 224 KiB
  static constexpr unsigned int kBoxBytes = kBoxRows * kBox * 2;
  static constexpr unsigned int kTileBytes = kBoxes * kBoxBytes;  // a K or V step
  static constexpr unsigned int kQBytes = kQLoads * kTileBytes;   // rows past kBM load too
  static_assert(kBN == kBoxRows, "a K or V step is one box down the rows");
  static_assert(kConsumers * wg::kThreads * kConsumerRegs + wg::kThreads * kProducerRegs <= 65536,
                "the register split exceeds the SM's 64K registers");
};

template <int D, int C = kDefaultConsumers<D>>
struct alignas(1024) SharedStorage {
  using L = Layout<D, C>;
  // 1024-aligned boxes (swizzle atoms start on 1024 B); Q's row boxes follow each other, so
  // consumer c's 64 rows start at row 64 c whichever box they came in.
  bf16 q[L::kBoxes][L::kQLoads * kBoxRows * kBox];
  bf16 k[L::kStages][L::kBoxes][kBN * kBox];
  bf16 v[L::kStages][L::kBoxes][kBN * kBox];
  Ring<L::kStages> k_ring, v_ring;
  Mbarrier q_full, q_empty;  // Q loaded; the consumers' last q k^T of a tile has read Q
  int tile;                  // causal: the tile whose Q q_full announces; -1: no more tiles
};
// The block size a kernel instantiating run<D, ...> launches with.
template <int D, int C = kDefaultConsumers<D>>
__host__ __device__ constexpr int threads() {
  return Layout<D, C>::kThreads;
}
template <int D, int C = kDefaultConsumers<D>>
__host__ __device__ constexpr unsigned int shared_bytes() {
  return sizeof(SharedStorage<D, C>) + 1024;  // room to align the start to 1024 bytes
}
static_assert(shared_bytes<128>() <= 232448 && shared_bytes<64>() <= 232448,
              "attention shared memory exceeds the sm_90 per-block limit");

constexpr float kLog2e = 1.4426950408889634f;  // exp(x) = exp2(x log2(e))

// -inf (NVRTC has no <cmath> INFINITY).
__device__ __forceinline__ float minus_inf() { return __int_as_float(0xff800000u); }

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 2^x on the FMA pipe, about 8e-5 relative error (0 below 2^-126), for a share of the scores:
// the SFU runs ex2 at 16 a cycle per SM, which at head dim 64 (half of dim 128's products per
// key step, the same exponentials) is as slow as the tensor cores. A rounding add splits x into
// an integer (t's low bits, added to the exponent) and f in [-0.5, 0.5] for a cubic fitted to
// 2^f; the _rn intrinsics keep the compiler from folding the rounding away.
__device__ __forceinline__ float exp2_fma(float x) {
  const float xc = fmaxf(x, -127.f);
  const float t = __fadd_rn(xc, 12582912.f);  // 1.5 * 2^23
  const float f = __fsub_rn(xc, __fsub_rn(t, 12582912.f));
  float p = fmaf(f, 0.0550886838f, 0.242604051f);
  p = fmaf(p, f, 0.693276242f);
  p = fmaf(p, f, 0.99992894f);
  const float y = __int_as_float(__float_as_int(p) + (__float_as_int(t) << 23));
  return x < -126.f ? 0.f : y;
}

// Whether the consumers' turn chain runs on across a block's tiles (consumer 0 starts the next
// tile's q k^T while the others finish this one) or restarts at each tile (the last consumer
// keeps its final turn, so consumer 0 waits for every consumer's last p v). Measured in one
// call (docs/benchmarks/attention-1xH200.md, run 14): across tiles is 2-3 % faster at head dim
// 64 (three consumers) and 2.5 % slower for causal head dim 128 (two), so only three chain on.
template <int Consumers>
constexpr bool kChainAcrossTiles = Consumers > 2;

// Turns between the consumers, round robin: each issues its wgmmas only in its turn and then
// passes the turn on, so one consumer's softmax runs while another's matrix products use the
// tensor cores (otherwise all reach their products together and the softmax overlaps nothing).
// Named barrier 1 + c (0 is __syncthreads) is consumer c's turn: its own 128 threads wait there
// and the previous consumer's 128 arrive.
__device__ __forceinline__ void turn_wait(int consumer) {
  asm volatile("bar.sync %0, %1;" ::"r"(1 + consumer), "n"(2 * wg::kThreads) : "memory");
}
template <int Consumers>
__device__ __forceinline__ void turn_pass(int consumer) {
  asm volatile("bar.arrive %0, %1;" ::"r"(1 + (consumer + 1) % Consumers), "n"(2 * wg::kThreads) : "memory");
}

// The block's tile. Blocks run in index order, so consecutive blocks take tiles of one head:
// the blocks resident together then share that head's K and V in L2 rather than stream many
// heads' (no clear gain measured over interleaved heads at H32 S16384; the order is kept for
// the L2 reuse). Causal: a head's heavy (late) tiles first.
struct BlockTile {
  int head, m0;
  int key0;   // the first key step's first key: 0, or (sliding window) where the block's window starts
  int steps;  // key steps from key0
};
template <int BM, class P>
__device__ __forceinline__ int tile_count(const P& p) { return p.heads * ((p.sq + BM - 1) / BM); }
// Causal: one past the last key row `row` sees (every key where the offset is negative).
template <class P>
__device__ __forceinline__ int causal_reach(const P& p, int row) {
  return p.causal_offset >= 0 ? min(p.sk, row + p.causal_offset + 1) : p.sk;
}
template <bool Causal, int BM, class P>
__device__ __forceinline__ BlockTile block_tile(const P& p, int t) {
  constexpr int kBM = BM;
  const int tiles_m = (p.sq + kBM - 1) / kBM;
  BlockTile b;
  b.head = t / tiles_m;
  const int mt = Causal ? tiles_m - 1 - t % tiles_m : t % tiles_m;
  b.m0 = mt * kBM;
  const int keys = Causal ? causal_reach(p, b.m0 + kBM - 1) : p.sk;
  const int end = (keys + kBN - 1) / kBN;
  // Steps wholly before the block's first row's window are masked for every row of it: skipped
  // (causal, the launch checks key_window >= 1, so each row keeps its own key; otherwise a
  // key_window at or below 0, a window behind a query offset, skips nothing). Never all of them.
  // A negative causal offset skips nothing (rows that see no key average every key, as the spec).
  const bool skip = p.key_window > 0 && (!Causal || p.causal_offset >= 0);
  const int first = skip ? min(max(0, b.m0 - p.key_window + 1) / kBN, end - 1) : 0;
  b.key0 = first * kBN;
  b.steps = end - first;
  return b;
}

// A box of one head's rows at (col, row, head): its coordinates in the map's order.
template <class P>
__device__ __forceinline__ void load_rows(const P& p, void* dst, const TensorMap* map, int col, int row, int head,
                                          Mbarrier* bar) {
  if (p.token_major) load_async_tensor_3d(dst, map, col, head, row, bar);
  else load_async_tensor_3d(dst, map, col, row, head, bar);
}

// The producer's share of one tile: Q once the consumers are done with the last tile's (the
// first wait, on a fresh barrier, returns at once), then the K and V steps; the rings' cursors
// and Q's phase run on across the block's tiles.
template <int D, int C, class P>
__device__ __forceinline__ void produce(const P& p, SharedStorage<D, C>& ss, const BlockTile& b,
                                        RingCursor<Layout<D>::kStages>& kc, RingCursor<Layout<D>::kStages>& vc,
                                        unsigned int q_phase) {
  using L = Layout<D, C>;
  mbarrier_wait_parity(&ss.q_empty, q_phase ^ 1u);
  mbarrier_arrive_expect_tx(&ss.q_full, L::kQBytes);  // out-of-bounds boxes count fully
  for (int r = 0; r < L::kQLoads; ++r)
    for (int x = 0; x < L::kBoxes; ++x)
      load_rows(p, &ss.q[x][r * kBoxRows * kBox], &p.q, x * kBox, b.m0 + r * kBoxRows, b.head, &ss.q_full);
  // The launch checks kv_group >= 1 and that the heads read lie inside k and v.
  const int kv_head = p.kv_head0 + b.head / p.kv_group, v_head = p.v_head0 + b.head / p.kv_group;
  for (int j = 0; j < b.steps; ++j) {
    ss.k_ring.wait_empty(kc);
    mbarrier_arrive_expect_tx(&ss.k_ring.full[kc.stage], L::kTileBytes);
    for (int x = 0; x < L::kBoxes; ++x)
      load_rows(p, ss.k[kc.stage][x], &p.k, x * kBox, b.key0 + j * kBN, kv_head, &ss.k_ring.full[kc.stage]);
    kc.advance();
    ss.v_ring.wait_empty(vc);
    mbarrier_arrive_expect_tx(&ss.v_ring.full[vc.stage], L::kTileBytes);
    for (int x = 0; x < L::kBoxes; ++x)
      load_rows(p, ss.v[vc.stage][x], &p.v, x * kBox, b.key0 + j * kBN, v_head, &ss.v_ring.full[vc.stage]);
    vc.advance();
  }
}

// s = Q (this consumer's 64 rows) K^T over the head dim.
template <int D, bool F16, int C>
__device__ __forceinline__ void issue_qk(SharedStorage<D, C>& ss, int consumer, int stage, float (&s)[64]) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {  // 16 columns = 32 B = 2 descriptor units
    const unsigned long long dq = wg::desc_k_major_sw128(&ss.q[kk / 4][consumer * 64 * kBox]) + 2ull * (kk % 4);
    const unsigned long long dk = wg::desc_k_major_sw128(&ss.k[stage][kk / 4][0]) + 2ull * (kk % 4);
    wg::mma_ss_m64n128k16<F16>(s, dq, dk, kk > 0);
  }
}

// o += P V with P packed as bf16 (f16) pairs in the A-fragment layout (4 registers per k16 step).
template <int D, bool F16, int C>
__device__ __forceinline__ void issue_pv(SharedStorage<D, C>& ss, int stage, const unsigned int (&pa)[kBN / 4],
                                         float (&o)[D / 2]) {
  const unsigned long long dv = wg::desc_n_major_sw128(&ss.v[stage][0][0], Layout<D>::kBoxBytes);
#pragma unroll
  for (int kk = 0; kk < kBN / 16; ++kk) {  // 16 key rows = 2048 B = 128 descriptor units
    const unsigned int a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
    wg::mma_rs_n_major<D, F16>(o, a, dv + 128ull * kk);
  }
}

// One key step's online softmax on this consumer's scores s (rows row0 and row0 + 8 of the
// thread): mask keys past the end and (causal) after the query, update the running max m (in
// log2 units) and this thread's share of the running sum l, and leave p = exp2(s c - m) in s,
// with c the scale in log2 units. Sets, per row, the factor the output accumulated so far must
// be scaled by, and returns whether any row of the warp needs it. The running max moves only
// when a score passes it by more than kSlack (log2 units), so p stays below 2^kSlack and most
// steps rescale nothing (the same stale max scales l, O and the lse, so the result is exact up
// to rounding). The max is taken over the raw scores and scaled after, so each score costs
// one fma and one ex2: c > 0 keeps the order (a max), c < 0 reverses it (a min), and a zero
// scale is taken as the smallest normal float, which gives every key the weight 1.0 exactly.
// With a score map, each score is first mapped (on every step: its masks may cut any step) and
// taken to log2 units, and c is 1: the map has applied the scale. (A product s c in the fma below
// would not round as the max's did: a row masked wholly to the spec's finite -1e30 would get
// 2^(its rounding error) instead of the 1 the spec's exp(s - m) gives.)
template <bool Causal, int PolyEvery, class Map>  // PolyEvery > 0: every PolyEvery-th score by exp2_fma
struct Softmax {
  float m[2], l[2];  // m in log2 units
  float c;           // the scale in log2 units, never 0
  typename Map::Pre pre;  // the score map's per-tile values
  template <class P>
  __device__ __forceinline__ void mask(float (&s)[64], const P& p, int n0, int row0) const {
    const int lane = threadIdx.x % 32;
    const float masked = c > 0.f ? minus_inf() : -minus_inf();  // scaled: -inf either way
#pragma unroll
    for (int i = 0; i < 64; ++i) {
      const int col = n0 + 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
      const int row = row0 + 8 * ((i % 4) / 2);
      if (col >= (Causal ? causal_reach(p, row) : p.sk)) s[i] = masked;
    }
  }
  static constexpr float kSlack = 8.f;
  template <class P>
  __device__ __forceinline__ bool step(float (&s)[64], const P& p, int n0, int row0, bool edge,
                                       float (&corr)[2]) {
    if constexpr (Map::kActive) {
      // Row and column as floats by adds to one conversion each (exact below 2^24).
      const int col0 = n0 + 2 * (threadIdx.x % 4);
      const float row0f = float(row0), col0f = float(col0);
#pragma unroll
      for (int i = 0; i < 64; ++i) {
        const int dr = 8 * ((i % 4) / 2), dc = 8 * (i / 4) + (i % 2);
        s[i] = Map::apply(p.map, pre, s[i], row0 + dr, col0 + dc, row0f + float(dr), col0f + float(dc)) *
               kLog2e;
      }
    }
    // A separate branch: folded into the loop below, the mask's index math runs on every step.
    if (edge) mask(s, p, n0, row0);
    float raw[2] = {s[0], s[2]};
    if (c > 0.f) {
#pragma unroll
      for (int i = 0; i < 64; ++i) raw[(i % 4) / 2] = fmaxf(raw[(i % 4) / 2], s[i]);
    } else {
#pragma unroll
      for (int i = 0; i < 64; ++i) raw[(i % 4) / 2] = fminf(raw[(i % 4) / 2], s[i]);
    }
    float neg_mx[2];
    bool moved[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // the 4 threads of a quad share a row
      float mx = raw[h] * c;
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      moved[h] = mx > m[h] + kSlack;  // always on the first step (m = -inf)
      corr[h] = moved[h] ? exp2_approx(m[h] - mx) : 1.f;  // 0 on the first step
      if (moved[h]) m[h] = mx;
      neg_mx[h] = -m[h];
    }
    float sum[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < 64; ++i) {
      const float x = fmaf(s[i], c, neg_mx[(i % 4) / 2]);
      // The divisor is never 0 (nvcc warns on a constant `% 0` even where it is not reached).
      s[i] = PolyEvery > 0 && i % (PolyEvery > 0 ? PolyEvery : 1) == PolyEvery - 1 ? exp2_fma(x) : exp2_approx(x);
      sum[(i % 4) / 2] += s[i];
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) l[h] = l[h] * corr[h] + sum[h];
    return __any_sync(0xffffffffu, moved[0] || moved[1]);
  }
};

// Key step j of a consumer, in its turn: issue q k^T of step j + 1, then p v of step j, pass
// the turn; the softmax of step j + 1 runs as soon as its scores are in (wgmma groups complete
// in order), beside this consumer's p v and the other consumer's products; the output is
// rescaled and p packed once p v is done with both.
template <int D, bool Causal, int C, class P>
__device__ __forceinline__ void consume(const P& p, float scale, SharedStorage<D, C>& ss,
                                        const BlockTile& b, int consumer, RingCursor<Layout<D>::kStages>& kc,
                                        RingCursor<Layout<D>::kStages>& vc, unsigned int q_phase) {
  using L = Layout<D, C>;
  constexpr bool kF16 = P::kF16;
  using Elem = typename P::Elem;
  constexpr bool kChain = kChainAcrossTiles<L::kConsumers>;
  constexpr int kLast = L::kConsumers - 1;
  const int t = wg::thread();
  const int row0 = b.m0 + consumer * 64 + 16 * (t / 32) + (t % 32) / 4;  // and row0 + 8
  float scale_log2 = P::Map::kActive ? 1.f : scale * kLog2e;
  if (scale_log2 == 0.f) scale_log2 = 1.17549435e-38f;
  float o[D / 2], s[64], corr[2];
  unsigned int pa[kBN / 4];
  Softmax<Causal, D == 64 ? kPolyEvery64 : 0, typename P::Map> sm{
      {minus_inf(), minus_inf()}, {0.f, 0.f}, scale_log2, P::Map::prepare(p.map, b.head)};
  auto edge = [&](int n0) { return n0 + kBN > (Causal ? causal_reach(p, b.m0 + consumer * 64) : p.sk); };
  // Causal, three consumers: the key steps this consumer's rows reach; the block's later steps
  // (the other consumers' rows reach further) are masked out entirely for it, so it only takes
  // their turns and releases their ring stages. The last consumer's rows reach every step of the
  // block, and with two consumers (128 rows, 128 keys a step) both do.
  const int steps =
      Causal && L::kConsumers > 2 ? (causal_reach(p, b.m0 + consumer * 64 + 63) - b.key0 + kBN - 1) / kBN : b.steps;
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
  mbarrier_wait_parity(&ss.q_full, q_phase);
  // Turns: all take b.steps + 1 turns a tile (the first q k^T, then one per key step). Chained
  // across tiles, run() starts and ends the chain; otherwise the last consumer passes first, so
  // consumer 0 goes first, and keeps its last turn, so every arrival is waited for. No wgmma is
  // issued under a branch (the last step is peeled): ptxas serialises every wgmma of a kernel
  // whose wgmma sits in a conditional path (C7520).
  if (!kChain && consumer == kLast) turn_pass<L::kConsumers>(consumer);
  ss.k_ring.wait_full(kc);
  turn_wait(consumer);
  wg::fence();
  issue_qk<D, kF16>(ss, consumer, kc.stage, s);
  wg::commit();
  turn_pass<L::kConsumers>(consumer);
  wg::wait<0>();
#pragma unroll
  for (int i = 0; i < 64; ++i) wg::fence_operand(s[i]);
  ss.k_ring.release(kc.stage);
  kc.advance();
  if (steps == 1) mbarrier_arrive(&ss.q_empty);  // the tile's last q k^T has read Q
  sm.step(s, p, b.key0, row0, edge(b.key0), corr);  // o is 0: no rescale
#pragma unroll
  for (int i = 0; i < kBN / 4; ++i) pa[i] = gemm::pack_x2<kF16>(s[2 * i], s[2 * i + 1]);
  for (int j = 0; j + 1 < steps; ++j) {
    ss.v_ring.wait_full(vc);
    ss.k_ring.wait_full(kc);
#pragma unroll
    for (int i = 0; i < D / 2; ++i) wg::fence_operand(o[i]);
    turn_wait(consumer);
    wg::fence();
    issue_qk<D, kF16>(ss, consumer, kc.stage, s);
    wg::commit();
    issue_pv<D, kF16>(ss, vc.stage, pa, o);
    wg::commit();
    turn_pass<L::kConsumers>(consumer);
    wg::wait<1>();  // q k^T of step j + 1 is done; p v of step j may still run
#pragma unroll
    for (int i = 0; i < 64; ++i) wg::fence_operand(s[i]);
    ss.k_ring.release(kc.stage);
    kc.advance();
    if (j + 2 == steps) mbarrier_arrive(&ss.q_empty);  // the producer may load the next Q
    const int n0 = b.key0 + (j + 1) * kBN;
    const bool rescale = sm.step(s, p, n0, row0, edge(n0), corr);
    wg::wait<0>();
#pragma unroll
    for (int i = 0; i < D / 2; ++i) wg::fence_operand(o[i]);
    ss.v_ring.release(vc.stage);
    vc.advance();
    if (rescale) {
#pragma unroll
      for (int i = 0; i < D / 2; ++i) o[i] *= corr[(i % 4) / 2];
    }
#pragma unroll
    for (int i = 0; i < kBN / 4; ++i) pa[i] = gemm::pack_x2<kF16>(s[2 * i], s[2 * i + 1]);
  }
  // The last step: p v alone.
  ss.v_ring.wait_full(vc);
#pragma unroll
  for (int i = 0; i < D / 2; ++i) wg::fence_operand(o[i]);
  turn_wait(consumer);
  wg::fence();
  issue_pv<D, kF16>(ss, vc.stage, pa, o);
  wg::commit();
  if (kChain || consumer != kLast) turn_pass<L::kConsumers>(consumer);
  wg::wait<0>();
#pragma unroll
  for (int i = 0; i < D / 2; ++i) wg::fence_operand(o[i]);
  ss.v_ring.release(vc.stage);
  vc.advance();  // the cursors run on into the block's next tile
  // Steps masked out for these rows: a turn each, in order, releasing the step's K and V once
  // they are in (the consumers still computing wait for the same stages at that turn).
  for (int j = steps; j < b.steps; ++j) {
    ss.k_ring.wait_full(kc);
    ss.v_ring.wait_full(vc);
    turn_wait(consumer);
    turn_pass<L::kConsumers>(consumer);  // never the last consumer: its rows reach every step
    ss.k_ring.release(kc.stage);
    kc.advance();
    ss.v_ring.release(vc.stage);
    vc.advance();
  }
  float (&m_run)[2] = sm.m;
  float (&l_run)[2] = sm.l;
  const int lane = t % 32;
  // Finish: whole-row sums, O / l as bf16 (f16), lse = m ln 2 + ln l.
  float inv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 1);
    l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 2);
    inv[h] = 1.f / l_run[h];
  }
  Elem* o_head = p.o + b.head * p.o_head_stride;
  // Pairs go as one 4-byte store only where every row starts 4-byte aligned (even strides and
  // base); otherwise element by element (o of [S, 65]).
  const bool pairs = (p.o_pitch % 2) == 0 && (p.o_head_stride % 2) == 0 &&
                     (reinterpret_cast<unsigned long long>(p.o) % 4) == 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + 8 * h;
    if (row >= p.sq) continue;
    Elem* out = o_head + static_cast<long long>(row) * p.o_pitch;
#pragma unroll
    for (int g = 0; g < D / 8; ++g) {
      const int col = 8 * g + 2 * (lane % 4);
      const float x0 = o[4 * g + 2 * h] * inv[h], x1 = o[4 * g + 2 * h + 1] * inv[h];
      if (col + 1 < p.o_cols && pairs) {
        const unsigned int packed = gemm::pack_x2<kF16>(x0, x1);
        *reinterpret_cast<unsigned int*>(out + col) = packed;
      } else {
        if (col < p.o_cols) out[col] = from_float<Elem>(x0);
        if (col + 1 < p.o_cols) out[col + 1] = from_float<Elem>(x1);
      }
    }
    // An lse of no columns (pitch 0) holds nothing: every row would land on its element 0.
    if (p.lse != nullptr && p.lse_pitch > 0 && lane % 4 == 0)
      p.lse[b.head * p.lse_head_stride + static_cast<long long>(row) * p.lse_pitch] =
          m_run[h] * 0.6931471805599453f + logf(l_run[h]);
  }
}

// The whole kernel body; the kernel pkc emits wraps it with __launch_bounds__(threads<D>(), 1) and
// shared_bytes<D>() of dynamic shared memory, on a persistent grid of at most one block per SM,
// so the producer loads a tile's Q and first K/V steps while the consumers finish the last
// one's products and store its output. Non-causal tiles all cost the same: block b takes tiles
// b, b + grid, ... in order. Causal tiles cost 1 to S / 128 key steps, and fixed shares drift
// apart (measured 16 % slower at H32 S16384): there block b starts with tile b and then takes
// the next unclaimed one from p.ticket, in the order a block per tile would run them (a head's
// heavy tiles first, heads in turn), so the blocks at work share few heads' K and V in L2. The
// producer takes it just before it needs the next Q (after the consumers' last q k^T) and hands
// it to the consumers in ss.tile with Q's full barrier; -1 and a bare arrival end the walk. The
// scale is p.scale, or the spec's constant (1 with a score map, which scales the scores itself).
template <int D, bool Causal, class Map = NoScoreMap, int C = kDefaultConsumers<D>, bool F16 = false>
__device__ __forceinline__ void run(const ParamsOf<Map, F16>& p, float scale) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned long long base = reinterpret_cast<unsigned long long>(smem_raw);
  SharedStorage<D, C>& ss = *reinterpret_cast<SharedStorage<D, C>*>((base + 1023ull) & ~1023ull);
  if (p.sk <= 0) return;  // no keys: the launch refuses a zero-extent k first; never wait here
  using L = Layout<D, C>;
  if (threadIdx.x == 0) {
    ss.k_ring.init(L::kConsumers * wg::kThreads);
    ss.v_ring.init(L::kConsumers * wg::kThreads);
    mbarrier_init(&ss.q_full, 1);
    mbarrier_init(&ss.q_empty, L::kConsumers * wg::kThreads);
  }
  __syncthreads();
  RingCursor<Layout<D>::kStages> kc, vc;
  unsigned int q_phase = 0;
  const int tiles = tile_count<L::kBM>(p);
  if (wg::index() == 0) {
    wg::release_registers<kProducerRegs>();
    if (threadIdx.x != 0) return;
    for (int t = blockIdx.x; t < tiles; q_phase ^= 1u) {
      produce<D>(p, ss, block_tile<Causal, L::kBM>(p, t), kc, vc, q_phase);
      if (!Causal) {
        t += gridDim.x;
        continue;
      }
      t = static_cast<int>(gridDim.x) + take_tile(p.ticket);  // tiles below the grid start blocks
      // ss.tile is free once the consumers released this tile's Q (they read it before); the
      // next produce() waits on the same phase again, and its q_full arrival publishes ss.tile.
      mbarrier_wait_parity(&ss.q_empty, q_phase);
      ss.tile = t < tiles ? t : -1;
      if (t >= tiles) mbarrier_arrive(&ss.q_full);
    }
  } else {
    wg::claim_registers<L::kConsumerRegs>();
    // The turn chain across tiles: the last consumer passes first, so consumer 0 goes first;
    // consumer 0 takes the last consumer's final pass, so every arrival is waited for.
    constexpr bool kChain = kChainAcrossTiles<L::kConsumers>;
    const int consumer = wg::index() - 1;
    if (kChain && consumer == L::kConsumers - 1) turn_pass<L::kConsumers>(consumer);
    for (int t = blockIdx.x; t < tiles; q_phase ^= 1u) {
      consume<D, Causal>(p, scale, ss, block_tile<Causal, L::kBM>(p, t), consumer, kc, vc, q_phase);
      if (!Causal) {
        t += gridDim.x;
        continue;
      }
      mbarrier_wait_parity(&ss.q_full, q_phase ^ 1u);  // consume() waits on it again
      t = ss.tile;
      if (t < 0) break;
    }
    if (kChain && consumer == 0) turn_wait(consumer);
  }
}

}  // namespace attention
}  // namespace pk

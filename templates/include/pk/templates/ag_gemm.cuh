// Job: all-gather + GEMM, inter-SM overlap. Rank r holds its row shard A_r[Ms, K] and B[N, K];
// every rank ends with C[W * Ms, N] = [A_0; ...; A_{W-1}] * B^T. Communicator blocks push this
// rank's shard, one 128-row block at a time, into every peer's landing buffer A_full
// ([W, Ms, K], symmetric) with TMA bulk copies and one signal per row block; compute blocks do
// their own shard first (no wait), then the peers' shards, waiting on each row block's flag.
// The landing buffer is reused only after every peer's compute blocks have finished reading
// the previous launch's rows (their done signals), so back-to-back launches cannot overwrite
// rows still being read.
#pragma once
#include <pk/device/signal.cuh>
#include <pk/device/wait.cuh>
#include <pk/templates/lcsc.cuh>
#include <pk/templates/tma3d.cuh>

namespace pk {
namespace gemm {

constexpr int kAgDoneSlot = 64;  // compute blocks of peers finished with our landing rows
constexpr int kAgRowSlot = 128;  // + shard * row_blocks + row block: that row block landed

template <bool BNMajor = false>
struct AgGemmJobT : JobDefaults {
  static constexpr bool kBNMajor = BNMajor;
  struct Params {
    TensorMap a_own;   // [Ms, K] (this rank's shard), box 128 x 64
    TensorMap a_full;  // [W, Ms, K] (landing buffer), box 1 x 128 x 64
    TensorMap b;       // [N, K], or [K, N] (BNMajor: C = A * B)
    TensorMap c;       // [W, Ms, N] (this rank's output), box 1 x 64 x 64
    LaunchContext ctx;
    TileOrder order;   // segments = shards, in order, first = rank
    const bf16* a_own_ptr;
    bf16* a_full_peer[PK_MAX_RANKS];
    int k, m_shard, n;
    int row_blocks;    // ceil(Ms / 128) per shard
    int comm_blocks;
    int blocks;        // compute blocks, the same on every rank
  };
  static constexpr bool kHasCommunicator = true;
  static constexpr int kChunkBytes = 32768;  // one bulk copy
  static constexpr int kSlots = 6;           // shared-memory chunks in flight
  static constexpr int kAhead = 3;           // loads issued ahead of the chunk being stored

  // One thread pushes row blocks comm_block, comm_block + comm_blocks, ...: bulk loads into a
  // ring of chunks (kAhead ahead), bulk stores from it to every peer, and after each row block
  // bulk_wait_complete + a release signal per peer.
  __device__ static void communicate(const Params& p, unsigned char* smem_raw, int comm_block) {
    if (threadIdx.x != 0) return;
    const LaunchContext& c = p.ctx;
    unsigned char* slots = reinterpret_cast<unsigned char*>(
        (reinterpret_cast<unsigned long long>(smem_raw) + 127ull) & ~127ull);
    Mbarrier* bars = reinterpret_cast<Mbarrier*>(slots + kSlots * kChunkBytes);
    for (int s = 0; s < kSlots; ++s) mbarrier_init(&bars[s], 1);
    if (c.epoch > 1)
      wait_ge(c, kAgDoneSlot,
              (c.epoch - 1) * static_cast<unsigned long long>(c.world - 1) * p.blocks);
    proxy_fence_after_wait();  // our TMA writes into the peers come after their reads

    const long long row_bytes = 2ll * p.k;
    unsigned long long used = 0;  // chunks through the ring so far: slot and phase
    for (int rb = comm_block; rb < p.row_blocks; rb += p.comm_blocks) {
      const int rows = p.m_shard - rb * kBM < kBM ? p.m_shard - rb * kBM : kBM;
      const long long bytes = rows * row_bytes;
      const long long first_row = static_cast<long long>(rb) * kBM;
      const unsigned char* src = reinterpret_cast<const unsigned char*>(p.a_own_ptr) + first_row * row_bytes;
      const long long dst_off = (static_cast<long long>(c.rank) * p.m_shard + first_row) * row_bytes;
      const int chunks = static_cast<int>((bytes + kChunkBytes - 1) / kChunkBytes);
      auto chunk_size = [&](int j) {
        const long long rest = bytes - static_cast<long long>(j) * kChunkBytes;
        return static_cast<unsigned int>(rest < kChunkBytes ? rest : kChunkBytes);
      };
      auto issue_load = [&](int j) {
        const int s = static_cast<int>((used + j) % kSlots);
        mbarrier_arrive_expect_tx(&bars[s], chunk_size(j));
        load_async_bulk(slots + s * kChunkBytes, src + static_cast<long long>(j) * kChunkBytes,
                        chunk_size(j), &bars[s]);
      };
      for (int j = 0; j < chunks && j < kAhead; ++j) issue_load(j);
      for (int j = 0; j < chunks; ++j) {
        const int next = j + kAhead;
        if (next < chunks) {
          // The slot of chunk `next` last held chunk next - kSlots: its stores (group
          // next - kSlots of the j groups committed) must have read it.
          if (next >= kSlots) bulk_wait_read_n<kSlots - kAhead - 1>();
          issue_load(next);
        }
        const unsigned long long g = used + j;
        const int s = static_cast<int>(g % kSlots);
        mbarrier_wait_parity(&bars[s], static_cast<unsigned int>((g / kSlots) & 1ull));
        for (int i = 1; i < c.world; ++i) {
          const int peer = (c.rank + i) % c.world;
          store_async_bulk(reinterpret_cast<unsigned char*>(p.a_full_peer[peer]) + dst_off +
                               static_cast<long long>(j) * kChunkBytes,
                           slots + s * kChunkBytes, chunk_size(j));
        }
        bulk_commit();
      }
      used += chunks;
      bulk_wait_complete();  // the row block is in every peer's memory before the signal
      fence_acq_rel_sys();
      for (int i = 1; i < c.world; ++i)
        signal_after_fence(c, (c.rank + i) % c.world, kAgRowSlot + c.rank * p.row_blocks + rb, 1);
    }
  }

  __device__ static void before_loads(const Params& p, const TileCoord& t) {
    if (t.seg == p.ctx.rank) return;
    wait_ge(p.ctx, kAgRowSlot + t.seg * p.row_blocks + t.mi, p.ctx.epoch);
    proxy_fence_after_wait();  // TMA (async proxy) reads of the rows the peer published
  }
  __device__ static void load_a(const Params& p, const TileCoord& t, int k0, void* dst, Mbarrier* bar) {
    if (t.seg == p.ctx.rank) load_async_tensor_2d(dst, &p.a_own, k0, t.mi * kBM, bar);
    else load_async_tensor_3d(dst, &p.a_full, k0, t.mi * kBM, t.seg, bar);
  }
  __device__ static void load_b(const Params& p, const TileCoord& t, int k0, void* dst, Mbarrier* bar) {
    load_b_2d<BNMajor>(&p.b, t.ni, k0, dst, bar);
  }
  __device__ static int store_rows(const Params& p, const TileCoord&) { return p.m_shard; }
  __device__ static int store_cols(const Params& p) { return p.n; }
  __device__ static void storer_begin(const Params&, int) {}
  __device__ static void store_box(const Params& p, const TileCoord& t, int row, int col, const bf16* box) {
    store_async_tensor_3d(&p.c, box, col, row, t.seg);
  }
  // Every tile's operands have been consumed: the peers may overwrite our landing rows.
  __device__ static void storer_end(const Params& p, int) { signal_all(p.ctx, kAgDoneSlot); }
};

using AgGemmJob = AgGemmJobT<>;  // B [N, K]: the nvcc plans' job

}  // namespace gemm
}  // namespace pk

// Host: launch plans for the GEMM templates (compile with nvcc for sm_90a). A plan checks the
// shapes, encodes the TMA descriptors once and picks the grid; launch() enqueues one run on
// the context's stream. All plans take bf16 A[rows, K] and B[N, K] row-major (C = A * B^T).
//   GemmPlan    C[M, N] on one GPU
//   GemmRsPlan  C_r[M / W, N] = rows of sum_ranks(A * B^T) owned by rank r   (intra-SM)
//   GemmArPlan  C[M, N] = sum_ranks(A * B^T) on every rank                   (intra-SM)
//   AgGemmPlan  C[W * Ms, N] = all_gather(A_shard) * B^T                     (inter-SM)
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>

#include <pk/runtime/context.h>
#include <pk/runtime/cuda_check.h>
#include <pk/runtime/profile.h>
#include <pk/runtime/shared_gpu.h>
#include <pk/runtime/side_stream.h>
#include <pk/runtime/symmetric.h>
#include <pk/templates/ag_gemm.cuh>
#include <pk/templates/gemm.cuh>
#include <pk/templates/gemm_ar.cuh>
#include <pk/templates/gemm_rs.cuh>
#include <pk/templates/host/tensor_maps.h>

namespace pk {
namespace gemm {

// How AG + GEMM moves the shards: communicator blocks (TMA, inter-SM overlap) or the copy
// engine (host-issued pushes on a second stream, no SM spent on the transfer).
// automatic is the SM gather: on 2 x H200 the copy-engine gather was no faster at any measured
// size (8192^3: 1777 against 1718 us; docs/benchmarks/gemm-2xH200.md), though it frees the
// communicator SMs; it stays an option for machines where those SMs matter more.
enum class Gather { automatic, sm, copy_engine };

struct PlanOptions {
  int max_blocks = 0;   // cap on compute blocks (0: every SM not used by communicators)
  int comm_blocks = 0;  // AG + GEMM communicator blocks (0: chosen from the tile count)
  int group_m = 16;     // L2 group height in row tiles (16: measured best with 128 blocks)
  Gather gather = Gather::automatic;
};

namespace detail {

// Waits compare a flag with epoch * (signals per launch), so a flag region and its epoch
// belong to one launch configuration: plans of another shape or grid touch other slots a
// different number of times. The region is keyed by the kernel and its configuration.
template <class Params>
std::string flag_key(const std::string& kernel, const Params& p) {
  return kernel + "[tiles=" + std::to_string(p.order.count()) + ",k=" + std::to_string(p.k) +
         ",n=" + std::to_string(p.n) + ",blocks=" + std::to_string(p.blocks) +
         ",comm=" + std::to_string(p.comm_blocks) + "]";
}

inline Status check_gemm_dims(long long m, long long n, long long k) {
  if (m <= 0 || n <= 0 || k <= 0)
    return Status::error("gemm: M, N and K must be positive (got " + std::to_string(m) + ", " +
                         std::to_string(n) + ", " + std::to_string(k) + ")");
  if (k % 8 != 0)
    return Status::error("gemm: K = " + std::to_string(k) +
                         " must be a multiple of 8: A and B rows are TMA rows of 16-byte pitch");
  if (n % 8 != 0)
    return Status::error("gemm: N = " + std::to_string(n) +
                         " must be a multiple of 8: C rows are TMA rows of 16-byte pitch");
  if (m >= (1ll << 31) || n >= (1ll << 31) || k >= (1ll << 31))
    return Status::error("gemm: dimensions must be below 2^31");
  return Status::ok();
}

inline Result<int> sm_count() {
  int dev = 0, sms = 0;
  PK_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&dev), "cudaGetDevice"));
  PK_RETURN_IF_ERROR(cuda_status(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                                 "cudaDeviceGetAttribute"));
  return sms;
}

inline int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

// Persistent blocks for `tiles` tiles on at most `avail` SMs (and at most `max_blocks` when
// positive): the fewest that finish in the same number of waves, so that every block walks
// the same number of tiles and no last partial wave runs on a few SMs. GEMMs run at the power
// cap on H200, so the SMs this leaves idle give their power to the others' clocks: 2048 tiles
// on 128 blocks instead of 132 ran 1-3% faster (docs/benchmarks/gemm-2xH200.md).
inline int balanced_blocks(int tiles, int avail, int max_blocks) {
  const int cap = std::max(1, max_blocks > 0 ? std::min(max_blocks, avail) : avail);
  return ceil_div(tiles, ceil_div(tiles, cap));
}

// Ranks sharing one GPU (pk/runtime/shared_gpu.h) wait for each other's blocks: a fused
// kernel's grid must fit beside theirs, or this is an error instead of a launch.
template <class Job>
Status check_fits_shared_gpu(int grid) {
  int dev = 0, per_sm = 0;
  PK_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&dev), "cudaGetDevice"));
  PK_RETURN_IF_ERROR(cuda_status(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                     &per_sm, lcsc_kernel<Job>, kThreads, kSharedBytes),
                                 "cudaOccupancyMaxActiveBlocksPerMultiprocessor"));
  return check_co_resident(dev, "lcsc_kernel", grid, per_sm);
}

// waits_on_peers = false (GEMM alone): no rank waits for another, so no residency check.
template <class Job>
Status launch_job(const typename Job::Params& p, int grid, cudaStream_t stream,
                  bool waits_on_peers = true) {
  // Set on every launch: the attribute is per device, and a plan may launch on any of them.
  PK_RETURN_IF_ERROR(cuda_status(
      cudaFuncSetAttribute(lcsc_kernel<Job>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(kSharedBytes)),
      "cudaFuncSetAttribute(max dynamic shared memory)"));
  if (waits_on_peers && shared_gpu_ranks_exist()) PK_RETURN_IF_ERROR(check_fits_shared_gpu<Job>(grid));
  lcsc_kernel<Job><<<grid, kThreads, kSharedBytes, stream>>>(p);
  return cuda_status(cudaGetLastError(), "lcsc_kernel launch");
}

inline Status check_world(const Context& ctx) {
  if (ctx.world() > PK_MAX_RANKS)
    return Status::error("gemm: world size " + std::to_string(ctx.world()) + " exceeds " +
                         std::to_string(PK_MAX_RANKS));
  return Status::ok();
}

}  // namespace detail

class GemmPlan {
 public:
  static Result<GemmPlan> create(const bf16* a, const bf16* b, bf16* c, long long m, long long n,
                                 long long k, PlanOptions opt = {}) {
    PK_RETURN_IF_ERROR(detail::check_gemm_dims(m, n, k));
    GemmPlan plan;
    GemmJob::Params& p = plan.p_;
    PK_ASSIGN_OR_RETURN(p.a, encode_bf16_map(a, 1, m, k, kBM));
    PK_ASSIGN_OR_RETURN(p.b, encode_bf16_map(b, 1, n, k, kBN));
    PK_ASSIGN_OR_RETURN(p.c, encode_bf16_map(c, 1, m, n, kBoxRows));
    p.order = TileOrder{1, detail::ceil_div(m, kBM), detail::ceil_div(n, kBN), opt.group_m, 0, 0, 0};
    p.k = static_cast<int>(k);
    p.m = static_cast<int>(m);
    p.n = static_cast<int>(n);
    p.comm_blocks = 0;
    PK_ASSIGN_OR_RETURN(int sms, detail::sm_count());
    plan.grid_ = detail::balanced_blocks(p.order.count(), sms, opt.max_blocks);
    return plan;
  }
  Status launch(cudaStream_t stream) const {
    return detail::launch_job<GemmJob>(p_, grid_, stream, /*waits_on_peers=*/false);
  }
  // For launching a kernel loaded elsewhere (pkc's emitted wrapper) with grid() blocks.
  const GemmJob::Params& params() const { return p_; }
  int grid() const { return grid_; }

 private:
  GemmJob::Params p_{};
  int grid_ = 0;
};

// Each rank: A[M, K], B[N, K] (its slice of K); `c` holds [M / W, N] on every rank. M must be
// a multiple of W (every owner gets the same rows).
class GemmRsPlan {
 public:
  static Result<GemmRsPlan> create(Context& ctx, const bf16* a, const bf16* b,
                                   const SymmetricBuffer& c, long long m, long long n, long long k,
                                   PlanOptions opt = {}) {
    PK_RETURN_IF_ERROR(detail::check_gemm_dims(m, n, k));
    PK_RETURN_IF_ERROR(detail::check_world(ctx));
    const int w = ctx.world();
    if (m % w != 0)
      return Status::error("gemm_rs: M = " + std::to_string(m) + " is not a multiple of the world size " +
                           std::to_string(w) + " (each rank owns M / W rows)");
    const long long m_own = m / w;
    if (c.bytes() < static_cast<std::size_t>(m_own * n * 2))
      return Status::error("gemm_rs: the output buffer holds less than [M / W, N] bf16");
    GemmRsPlan plan;
    GemmRsJob::Params& p = plan.p_;
    PK_ASSIGN_OR_RETURN(p.a, encode_bf16_map(a, 1, m, k, kBM));
    PK_ASSIGN_OR_RETURN(p.b, encode_bf16_map(b, 1, n, k, kBN));
    for (int r = 0; r < w; ++r) {
      PK_ASSIGN_OR_RETURN(p.c[r], encode_bf16_map(c.peer(r), 1, m_own, n, kBoxRows));
    }
    p.order = TileOrder{w, detail::ceil_div(m_own, kBM), detail::ceil_div(n, kBN), opt.group_m,
                        (ctx.rank() + 1) % w, 1, 0};
    p.k = static_cast<int>(k);
    p.m_own = static_cast<int>(m_own);
    p.n = static_cast<int>(n);
    p.comm_blocks = 0;
    // This rank's share of the SMs: all of them, or 1/W when W ranks share the GPU.
    PK_ASSIGN_OR_RETURN(int sms, rank_sm_count(ctx));
    p.blocks = detail::balanced_blocks(p.order.count(), sms, opt.max_blocks);
    plan.out_ = c.local();
    plan.out_bytes_ = static_cast<std::size_t>(m_own * n * 2);
    return plan;
  }
  // Zeroes this rank's output (the adds accumulate into it) on the context's stream and
  // returns the Params of the next launch of the kernel named `kernel`: for launching a
  // kernel loaded elsewhere (pkc's emitted wrapper) with grid() blocks of kThreads threads
  // and kSharedBytes of dynamic shared memory.
  Result<GemmRsJob::Params> prepare(Context& ctx, const std::string& kernel = "pk_gemm_rs") const {
    PK_RETURN_IF_ERROR(cuda_status(cudaMemsetAsync(out_, 0, out_bytes_, ctx.stream()), "cudaMemsetAsync"));
    GemmRsJob::Params p = p_;
    PK_ASSIGN_OR_RETURN(p.ctx, ctx.make_launch_context(detail::flag_key(kernel, p)));
    return p;
  }
  Status launch(Context& ctx) const {
    PK_ASSIGN_OR_RETURN(GemmRsJob::Params p, prepare(ctx));
    Status s = detail::launch_job<GemmRsJob>(p, p.blocks, ctx.stream());
    if (!s.is_ok()) ctx.retract_launch(detail::flag_key("pk_gemm_rs", p));  // nothing ran
    return s;
  }
  int grid() const { return p_.blocks; }

 private:
  GemmRsJob::Params p_{};
  void* out_ = nullptr;
  std::size_t out_bytes_ = 0;
};

// Each rank: A[M, K], B[N, K] (its slice of K); `c` holds [M, N] on every rank.
class GemmArPlan {
 public:
  static Result<GemmArPlan> create(Context& ctx, const bf16* a, const bf16* b,
                                   const SymmetricBuffer& c, long long m, long long n, long long k,
                                   PlanOptions opt = {}) {
    PK_RETURN_IF_ERROR(detail::check_gemm_dims(m, n, k));
    PK_RETURN_IF_ERROR(detail::check_world(ctx));
    const int w = ctx.world();
    if (c.bytes() < static_cast<std::size_t>(m * n * 2))
      return Status::error("gemm_ar: the output buffer holds less than [M, N] bf16");
    GemmArPlan plan;
    GemmArJob::Params& p = plan.p_;
    PK_ASSIGN_OR_RETURN(p.a, encode_bf16_map(a, 1, m, k, kBM));
    PK_ASSIGN_OR_RETURN(p.b, encode_bf16_map(b, 1, n, k, kBN));
    for (int r = 0; r < w; ++r) {
      PK_ASSIGN_OR_RETURN(p.c[r], encode_bf16_map(c.peer(r), 1, m, n, kBoxRows));
    }
    const int tm = detail::ceil_div(m, kBM), tn = detail::ceil_div(n, kBN);
    p.order = TileOrder{1, tm, tn, opt.group_m, 0, 0, static_cast<int>((1ll * tm * tn * ctx.rank()) / w)};
    p.k = static_cast<int>(k);
    p.m = static_cast<int>(m);
    p.n = static_cast<int>(n);
    p.comm_blocks = 0;
    // This rank's share of the SMs: all of them, or 1/W when W ranks share the GPU.
    PK_ASSIGN_OR_RETURN(int sms, rank_sm_count(ctx));
    p.blocks = detail::balanced_blocks(p.order.count(), sms, opt.max_blocks);
    plan.out_ = c.local();
    plan.out_bytes_ = static_cast<std::size_t>(m * n * 2);
    return plan;
  }
  // As GemmRsPlan::prepare.
  Result<GemmArJob::Params> prepare(Context& ctx, const std::string& kernel = "pk_gemm_ar") const {
    PK_RETURN_IF_ERROR(cuda_status(cudaMemsetAsync(out_, 0, out_bytes_, ctx.stream()), "cudaMemsetAsync"));
    GemmArJob::Params p = p_;
    PK_ASSIGN_OR_RETURN(p.ctx, ctx.make_launch_context(detail::flag_key(kernel, p)));
    return p;
  }
  Status launch(Context& ctx) const {
    PK_ASSIGN_OR_RETURN(GemmArJob::Params p, prepare(ctx));
    Status s = detail::launch_job<GemmArJob>(p, p.blocks, ctx.stream());
    if (!s.is_ok()) ctx.retract_launch(detail::flag_key("pk_gemm_ar", p));  // nothing ran
    return s;
  }
  int grid() const { return p_.blocks; }

 private:
  GemmArJob::Params p_{};
  void* out_ = nullptr;
  std::size_t out_bytes_ = 0;
};

// Rule 2's communicator count for AG + GEMM, from a cost model. With c communicator blocks the
// compute blocks (balanced over the other sms - c) run the tiles in waves of one tile time
// each; they start on the peers' rows once their own rows are done, but not before the gather
// (its bytes at the profile's TMA bandwidth for c SMs) has landed. The count with the shortest
// estimate wins; among equal estimates, the faster gather. Checked against a sweep of 1-16
// blocks on 2 x H200 (docs/benchmarks/gemm-2xH200.md): the model's choice was the measured
// best at every size (16 at 2048^3, 4 at 4096^3 and above).
constexpr double kGemmSmFlopsPerUs = 6.0e6;  // pkc's GEMM per block: 773 TFLOP/s on 128 (8192^3)

inline int choose_comm_blocks(const MachineProfile& profile, int sms, int tiles, int peer_tiles,
                              long long k, long long gather_bytes) {
  const double tile_us = 2.0 * kBM * kBN * static_cast<double>(k) / kGemmSmFlopsPerUs;
  int best = 1;
  double best_us = 0, best_gather_us = 0;
  for (int c = 1; c <= 16 && c < sms; ++c) {
    const int blocks = detail::balanced_blocks(tiles, sms - c, 0);  // as the plan will run
    const double gbps = profile.bandwidth(Mechanism::tma, gather_bytes, c);
    const double gather_us = gbps > 0 ? gather_bytes / (gbps * 1e3) : 1e30;
    const double own_done_us = ((tiles - peer_tiles) / blocks) * tile_us;
    const double peer_us = ((peer_tiles + blocks - 1) / blocks) * tile_us;
    const double all_us = ((tiles + blocks - 1) / blocks) * tile_us;
    const double us = std::max(all_us, std::max(gather_us, own_done_us) + peer_us);
    if (c == 1 || us < best_us || (us == best_us && gather_us < best_gather_us)) {
      best = c;
      best_us = us;
      best_gather_us = gather_us;
    }
  }
  return best;
}

namespace detail {

// The copy-engine gather's device side: one-block kernels on the second stream, beside the
// GEMM on the one SM it leaves free. Before the pushes: every peer's compute blocks finished
// reading the rows of the previous launch (the same wait as AgGemmJob::communicate).
static __global__ void ag_ce_wait_done(LaunchContext c, int blocks) {
  if (threadIdx.x == 0 && c.epoch > 1)
    wait_ge(c, kAgDoneSlot, (c.epoch - 1) * static_cast<unsigned long long>(c.world - 1) * blocks);
}

// After the push of row blocks [rb0, rb1) (stream order: the copies have completed): one
// release signal per row block on every peer, as a communicator block would give.
static __global__ void ag_ce_signal_rows(LaunchContext c, int row_blocks, int rb0, int rb1) {
  if (threadIdx.x != 0) return;
  fence_acq_rel_sys();
  for (int i = 1; i < c.world; ++i)
    for (int rb = rb0; rb < rb1; ++rb)
      signal_after_fence(c, (c.rank + i) % c.world, kAgRowSlot + c.rank * row_blocks + rb, 1);
}

}  // namespace detail

// Each rank: its shard A_shard[Ms, K] and B[N, K]; `a_full` (symmetric) holds [W * Ms, K] as
// the landing buffer; `c` is this rank's [W * Ms, N]. With the copy-engine gather, create() is
// collective (every rank makes the same plans in the same order).
class AgGemmPlan {
 public:
  static Result<AgGemmPlan> create(Context& ctx, const bf16* a_shard, const SymmetricBuffer& a_full,
                                   const bf16* b, bf16* c, long long m_shard, long long n,
                                   long long k, PlanOptions opt = {}) {
    PK_RETURN_IF_ERROR(detail::check_gemm_dims(m_shard, n, k));
    PK_RETURN_IF_ERROR(detail::check_world(ctx));
    const int w = ctx.world();
    if (a_full.bytes() < static_cast<std::size_t>(w * m_shard * k * 2))
      return Status::error("ag_gemm: the landing buffer holds less than [W * Ms, K] bf16");
    if (reinterpret_cast<unsigned long long>(a_shard) % 16 != 0)
      return Status::error("ag_gemm: the shard must be 16-byte aligned for bulk copies");
    AgGemmPlan plan;
    AgGemmJob::Params& p = plan.p_;
    PK_ASSIGN_OR_RETURN(p.a_own, encode_bf16_map(a_shard, 1, m_shard, k, kBM));
    PK_ASSIGN_OR_RETURN(p.a_full, encode_bf16_map(a_full.local(), w, m_shard, k, kBM, true));
    PK_ASSIGN_OR_RETURN(p.b, encode_bf16_map(b, 1, n, k, kBN));
    PK_ASSIGN_OR_RETURN(p.c, encode_bf16_map(c, w, m_shard, n, kBoxRows, true));
    const int tm = detail::ceil_div(m_shard, kBM), tn = detail::ceil_div(n, kBN);
    p.row_blocks = tm;
    if (kAgRowSlot + w * tm > kKernelFlagRegion)
      return Status::error("ag_gemm: " + std::to_string(w * tm) + " row blocks need more flag slots than the " +
                           std::to_string(kKernelFlagRegion) + " of a kernel's region");
    p.order = TileOrder{w, tm, tn, opt.group_m, ctx.rank(), 0, 0};
    p.a_own_ptr = a_shard;
    for (int r = 0; r < w; ++r) p.a_full_peer[r] = static_cast<bf16*>(a_full.peer(r));
    p.k = static_cast<int>(k);
    p.m_shard = static_cast<int>(m_shard);
    p.n = static_cast<int>(n);
    // This rank's share of the SMs: all of them, or 1/W when W ranks share the GPU.
    PK_ASSIGN_OR_RETURN(int sms, rank_sm_count(ctx));
    const bool ce = opt.gather == Gather::copy_engine && w > 1;
    const int peer_tiles = p.order.count() / w * (w - 1);
    p.comm_blocks = opt.comm_blocks > 0
                        ? opt.comm_blocks
                        : choose_comm_blocks(builtin_profile(), sms, p.order.count(), peer_tiles,
                                             k, (w - 1) * m_shard * k * 2);
    if (w == 1 || ce) p.comm_blocks = 0;
    if (p.comm_blocks >= sms) return Status::error("ag_gemm: no SM left for compute blocks");
    // The copy-engine gather leaves one SM free for its one-block signal kernels: a GEMM on
    // every SM would keep them from running until it ended, and it waits for their signals.
    const int avail = sms - p.comm_blocks - (ce ? 1 : 0);
    p.blocks = detail::balanced_blocks(p.order.count(), avail, opt.max_blocks);
    if (ce) {
      auto side = std::make_shared<SideStream>();  // shared by copies of the plan
      PK_RETURN_IF_ERROR(side->create());
      // Load the signal kernels on every rank before any rank can spin in one of them: a load
      // may wait for a peer GPU that is busy in a wait on this rank.
      cudaFuncAttributes attr;
      PK_RETURN_IF_ERROR(cuda_status(cudaFuncGetAttributes(&attr, detail::ag_ce_wait_done), "load"));
      PK_RETURN_IF_ERROR(cuda_status(cudaFuncGetAttributes(&attr, detail::ag_ce_signal_rows), "load"));
      PK_RETURN_IF_ERROR(ctx.exchange().barrier());
      plan.side_ = std::move(side);
    }
    return plan;
  }
  // The Params of the next launch of the kernel named `kernel` (see GemmRsPlan::prepare), for
  // a caller that launches the kernel itself; the copy-engine gather needs launch().
  Result<AgGemmJob::Params> prepare(Context& ctx, const std::string& kernel = "pk_ag_gemm") const {
    if (side_)
      return Status::error("ag_gemm: this plan gathers with the copy engine, which only "
                           "AgGemmPlan::launch drives; create it with Gather::sm to launch the "
                           "kernel yourself");
    AgGemmJob::Params p = p_;
    PK_ASSIGN_OR_RETURN(p.ctx, ctx.make_launch_context(detail::flag_key(kernel, p)));
    return p;
  }
  Status launch(Context& ctx) const {
    if (!side_) {
      PK_ASSIGN_OR_RETURN(AgGemmJob::Params p, prepare(ctx));
      Status s = detail::launch_job<AgGemmJob>(p, p.comm_blocks + p.blocks, ctx.stream());
      if (!s.is_ok()) ctx.retract_launch(detail::flag_key("pk_ag_gemm", p));  // nothing ran
      return s;
    }
    AgGemmJob::Params p = p_;
    PK_ASSIGN_OR_RETURN(p.ctx, ctx.make_launch_context(detail::flag_key("pk_ag_gemm_ce", p)));
    return launch_copy_engine(p, ctx.stream());
  }
  int grid() const { return p_.comm_blocks + p_.blocks; }
  int comm_blocks() const { return p_.comm_blocks; }
  bool copy_engine() const { return side_ != nullptr; }

 private:
  // The GEMM on `stream`; on the second stream, forked from it: wait until the peers are done
  // with the previous launch's rows, then push this rank's shard into every peer's landing
  // buffer in chunks of about 8 MiB, each followed by its row blocks' signals; joined back.
  Status launch_copy_engine(const AgGemmJob::Params& p, cudaStream_t stream) const {
    const SideStream& side = *side_;
    auto ok = [](cudaError_t e, const char* what) { return cuda_status(e, what); };
    PK_RETURN_IF_ERROR(ok(cudaEventRecord(side.fork, stream), "cudaEventRecord"));
    PK_RETURN_IF_ERROR(ok(cudaStreamWaitEvent(side.stream, side.fork, 0), "cudaStreamWaitEvent"));
    detail::ag_ce_wait_done<<<1, 32, 0, side.stream>>>(p.ctx, p.blocks);
    PK_RETURN_IF_ERROR(ok(cudaGetLastError(), "ag_ce_wait_done launch"));
    PK_RETURN_IF_ERROR(detail::launch_job<AgGemmJob>(p, p.blocks, stream));
    const long long row_bytes = 2ll * p.k, block_bytes = row_bytes * kBM;
    const int per_chunk = static_cast<int>(std::max(1ll, (8ll << 20) / block_bytes));
    const LaunchContext& c = p.ctx;
    for (int rb0 = 0; rb0 < p.row_blocks; rb0 += per_chunk) {
      const int rb1 = std::min(p.row_blocks, rb0 + per_chunk);
      const long long first = static_cast<long long>(rb0) * kBM;
      const long long rows = std::min<long long>(p.m_shard, static_cast<long long>(rb1) * kBM) - first;
      const char* src = reinterpret_cast<const char*>(p.a_own_ptr) + first * row_bytes;
      for (int i = 1; i < c.world; ++i) {
        const int peer = (c.rank + i) % c.world;
        char* dst = reinterpret_cast<char*>(p.a_full_peer[peer]) +
                    (static_cast<long long>(c.rank) * p.m_shard + first) * row_bytes;
        PK_RETURN_IF_ERROR(ok(cudaMemcpyAsync(dst, src, rows * row_bytes, cudaMemcpyDefault, side.stream),
                              "cudaMemcpyAsync (copy-engine gather)"));
      }
      detail::ag_ce_signal_rows<<<1, 32, 0, side.stream>>>(c, p.row_blocks, rb0, rb1);
      PK_RETURN_IF_ERROR(ok(cudaGetLastError(), "ag_ce_signal_rows launch"));
    }
    PK_RETURN_IF_ERROR(ok(cudaEventRecord(side.join, side.stream), "cudaEventRecord"));
    return ok(cudaStreamWaitEvent(stream, side.join, 0), "cudaStreamWaitEvent");
  }

  AgGemmJob::Params p_{};
  std::shared_ptr<SideStream> side_;  // set when the gather takes the copy engine
};

}  // namespace gemm
}  // namespace pk

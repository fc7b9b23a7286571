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
#include <string>

#include <pk/runtime/context.h>
#include <pk/runtime/cuda_check.h>
#include <pk/runtime/symmetric.h>
#include <pk/templates/ag_gemm.cuh>
#include <pk/templates/gemm.cuh>
#include <pk/templates/gemm_ar.cuh>
#include <pk/templates/gemm_rs.cuh>
#include <pk/templates/host/tensor_maps.h>

namespace pk {
namespace gemm {

struct PlanOptions {
  int max_blocks = 0;   // cap on compute blocks (0: every SM not used by communicators)
  int comm_blocks = 0;  // AG + GEMM communicator blocks (0: chosen from the tile count)
  int group_m = 8;      // L2 group height in row tiles
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

template <class Job>
Status launch_job(const typename Job::Params& p, int grid, cudaStream_t stream) {
  // Set on every launch: the attribute is per device, and a plan may launch on any of them.
  PK_RETURN_IF_ERROR(cuda_status(
      cudaFuncSetAttribute(lcsc_kernel<Job>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(kSharedBytes)),
      "cudaFuncSetAttribute(max dynamic shared memory)"));
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
    plan.grid_ = std::min(p.order.count(), opt.max_blocks > 0 ? std::min(opt.max_blocks, sms) : sms);
    return plan;
  }
  Status launch(cudaStream_t stream) const { return detail::launch_job<GemmJob>(p_, grid_, stream); }
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
    PK_ASSIGN_OR_RETURN(int sms, detail::sm_count());
    p.blocks = std::min(p.order.count(), opt.max_blocks > 0 ? std::min(opt.max_blocks, sms) : sms);
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
    return detail::launch_job<GemmRsJob>(p, p.blocks, ctx.stream());
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
    PK_ASSIGN_OR_RETURN(int sms, detail::sm_count());
    p.blocks = std::min(p.order.count(), opt.max_blocks > 0 ? std::min(opt.max_blocks, sms) : sms);
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
    return detail::launch_job<GemmArJob>(p, p.blocks, ctx.stream());
  }
  int grid() const { return p_.blocks; }

 private:
  GemmArJob::Params p_{};
  void* out_ = nullptr;
  std::size_t out_bytes_ = 0;
};

// Communicator blocks for AG + GEMM: the most that do not add a wave of compute tiles over
// the minimum of 2 (the all-gather rides on SMs the GEMM would leave idle in its last wave).
inline int choose_comm_blocks(int sms, int tiles) {
  auto waves = [&](int comm) { return (tiles + (sms - comm) - 1) / (sms - comm); };
  int best = 2;
  for (int comm = 3; comm <= 16 && comm < sms; ++comm)
    if (waves(comm) <= waves(2)) best = comm;
  return best;
}

// Each rank: its shard A_shard[Ms, K] and B[N, K]; `a_full` (symmetric) holds [W * Ms, K] as
// the landing buffer; `c` is this rank's [W * Ms, N].
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
    PK_ASSIGN_OR_RETURN(int sms, detail::sm_count());
    p.comm_blocks = opt.comm_blocks > 0 ? opt.comm_blocks : choose_comm_blocks(sms, p.order.count());
    if (w == 1) p.comm_blocks = 0;
    if (p.comm_blocks >= sms) return Status::error("ag_gemm: no SM left for compute blocks");
    const int avail = sms - p.comm_blocks;
    p.blocks = std::min(p.order.count(), opt.max_blocks > 0 ? std::min(opt.max_blocks, avail) : avail);
    return plan;
  }
  // The Params of the next launch of the kernel named `kernel` (see GemmRsPlan::prepare).
  Result<AgGemmJob::Params> prepare(Context& ctx, const std::string& kernel = "pk_ag_gemm") const {
    AgGemmJob::Params p = p_;
    PK_ASSIGN_OR_RETURN(p.ctx, ctx.make_launch_context(detail::flag_key(kernel, p)));
    return p;
  }
  Status launch(Context& ctx) const {
    PK_ASSIGN_OR_RETURN(AgGemmJob::Params p, prepare(ctx));
    return detail::launch_job<AgGemmJob>(p, p.comm_blocks + p.blocks, ctx.stream());
  }
  int grid() const { return p_.comm_blocks + p_.blocks; }
  int comm_blocks() const { return p_.comm_blocks; }

 private:
  AgGemmJob::Params p_{};
};

}  // namespace gemm
}  // namespace pk

// pk-bench-gemm: pkc's GEMM and fused GEMM + communication kernels against cuBLAS and
// cuBLAS + NCCL one after the other, on 2 GPUs in one process (one thread per GPU), with the
// result of each pkc kernel checked against the baseline's result in the same run.
//   pk-bench-gemm [table.md]     writes the markdown table there as well as to stdout
// On a machine with one GPU it runs only the GEMM-alone rows (pkc against cuBLAS), and says so.
// Layout: A[rows, K] and B[N, K] row-major bf16, C = A * B^T (cuBLAS "TN"), fp32 accumulation.
// Sizes are the local GEMM each rank runs: AG + GEMM gathers M rows (M / 2 per rank), GEMM + RS
// reduce-scatters the M x N product by rows, GEMM + AR all-reduces it.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <pk/runtime/runtime.h>
#include <pk/templates/host/fused_gemm.cuh>

#include "roofline_bound.h"

namespace {

constexpr int kMaxWorld = 2;
int g_world = kMaxWorld;  // 1 on a one-GPU machine: GEMM-alone rows only
constexpr int kWarmup = 3;
constexpr int kTimed = 15;

struct Size { long long m, n, k; };
const Size kSizes[] = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}, {16384, 4096, 8192}};

#define BENCH_CHECK(cond, msg)                                                     \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::fprintf(stderr, "pk-bench-gemm: %s:%d: %s\n", __FILE__, __LINE__, msg); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)
#define CUDA_OK(x) BENCH_CHECK((x) == cudaSuccess, #x)
#define NCCL_OK(x) BENCH_CHECK((x) == ncclSuccess, #x)
#define CUBLAS_OK(x) BENCH_CHECK((x) == CUBLAS_STATUS_SUCCESS, #x)
#define PK_OK(x)                                                                      \
  do {                                                                                \
    ::pk::Status s_ = (x);                                                            \
    if (!s_.is_ok()) {                                                                \
      std::fprintf(stderr, "pk-bench-gemm: %s: %s\n", #x, s_.message().c_str());     \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)
template <class T> T take(pk::Result<T> r, const char* what) {
  if (!r.is_ok()) {
    std::fprintf(stderr, "pk-bench-gemm: %s: %s\n", what, r.status().message().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

// Host barrier for the rank threads, with a slot per rank to combine per-iteration times.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> l(m_);
    const unsigned long long gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(l, [&] { return gen_ != gen; });
    }
  }
 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  unsigned long long gen_ = 0;
};

__global__ void fill_random(pk::bf16* p, long long n, unsigned int seed) {
  for (long long i = blockIdx.x * 1ll * blockDim.x + threadIdx.x; i < n; i += 1ll * gridDim.x * blockDim.x) {
    unsigned int x = static_cast<unsigned int>(i) * 2654435761u ^ (seed * 0x9E3779B9u) ^ static_cast<unsigned int>(i >> 32);
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    const float f = (x >> 8) * (1.0f / 8388608.0f) - 1.0f;  // uniform in [-1, 1)
    p[i] = pk::from_float<pk::bf16>(f);
  }
}

// Counts elements with |got - want| > atol + rtol |want| (NaN counts), and the largest error.
__global__ void compare(const pk::bf16* got, const pk::bf16* want, long long n, float atol, float rtol,
                        unsigned long long* bad, float* max_err) {
  unsigned long long local_bad = 0;
  float local_max = 0.f;
  for (long long i = blockIdx.x * 1ll * blockDim.x + threadIdx.x; i < n; i += 1ll * gridDim.x * blockDim.x) {
    const float g = pk::to_float(got[i]), w = pk::to_float(want[i]);
    const float e = fabsf(g - w);
    if (!(e <= atol + rtol * fabsf(w))) ++local_bad;
    if (!(e <= local_max)) local_max = isnan(e) ? INFINITY : fmaxf(local_max, e);
  }
  if (local_bad) atomicAdd(bad, local_bad);
  atomicMax(reinterpret_cast<int*>(max_err), __float_as_int(local_max));  // non-negative floats order as ints
}

struct Row {
  std::string job, size;
  double pk_us = 0, base_us = 0, cublas_us = 0, pk_gemm_us = 0, flops = 0;
  unsigned long long bad = 0;
  float max_err = 0;
  int comm_blocks = 0;
  bool copy_engine = false;  // ag_gemm gathered with the copy engine
};

struct Shared {
  Barrier barrier{g_world};
  std::mutex m;
  double iter_us[kMaxWorld] = {};
  std::vector<Row> rows;
  unsigned long long pending_bad = 0;  // both ranks' check results for the row being recorded
  float pending_max = 0;
  ncclComm_t nccl[kMaxWorld];
};

struct Rank {
  pk::Context& ctx;
  Shared& sh;
  cublasHandle_t blas;
  ncclComm_t nccl;
  cudaStream_t s;
  cudaEvent_t e0, e1;
  unsigned long long* d_bad;
  float* d_max;

  // Medians over kTimed rounds of the slower rank's time of each op; a round runs every op
  // once, in an order rotated by one each round, and each run starts with both ranks idle.
  // Interleaving keeps the ops' shares of a drifting clock even: these GPUs run GEMMs at their
  // power cap, and the clock a run gets depends on what ran before it (gemm-2xH200.md).
  std::vector<double> times(const std::vector<std::function<void()>>& ops,
                            const std::vector<std::string>& labels = {}) {
    const size_t n = ops.size();
    std::vector<std::vector<double>> t(n);
    for (int i = 0; i < kWarmup + kTimed; ++i)
      for (size_t j = 0; j < n; ++j) {
        const size_t o = (i + j) % n;
        CUDA_OK(cudaStreamSynchronize(s));
        sh.barrier.wait();
        CUDA_OK(cudaEventRecord(e0, s));
        ops[o]();
        CUDA_OK(cudaEventRecord(e1, s));
        CUDA_OK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        sh.iter_us[ctx.rank()] = ms * 1e3;
        sh.barrier.wait();
        if (i >= kWarmup) t[o].push_back(*std::max_element(sh.iter_us, sh.iter_us + g_world));
        sh.barrier.wait();
      }
    PK_OK(ctx.check_errors());
    std::vector<double> med(n);
    for (size_t o = 0; o < n; ++o) {
      std::sort(t[o].begin(), t[o].end());
      med[o] = t[o][t[o].size() / 2];
    }
    if (std::getenv("PK_GEMM_SOAK"))
      for (size_t o = 0; o < n && o < labels.size(); ++o) soak(ops[o], labels[o]);
    return med;
  }

  // PK_GEMM_SOAK=n (a diagnostic): n runs back to back, bracketed by wall-clock stamps on
  // stderr, so a clock and power trace (nvidia-smi -lms) can be matched to the job.
  void soak(const std::function<void()>& op, const std::string& what) {
    const int n = std::atoi(std::getenv("PK_GEMM_SOAK"));
    CUDA_OK(cudaStreamSynchronize(s));
    sh.barrier.wait();
    const auto wall = [] {
      return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    };
    const double w0 = wall();
    CUDA_OK(cudaEventRecord(e0, s));
    for (int i = 0; i < n; ++i) op();
    CUDA_OK(cudaEventRecord(e1, s));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    if (ctx.rank() == 0)
      std::fprintf(stderr, "soak %s: wall %.3f-%.3f, %d runs back to back, %.1f us each\n",
                   what.c_str(), w0, wall(), n, ms * 1e3 / n);
    sh.barrier.wait();
  }

  void gemm_ref(const pk::bf16* a, const pk::bf16* b, pk::bf16* c, long long m, long long n, long long k) {
    const float one = 1.f, zero = 0.f;
    CUBLAS_OK(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &one, b, CUDA_R_16BF,
                           int(k), a, CUDA_R_16BF, int(k), &zero, c, CUDA_R_16BF, int(n),
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  void check(Row& row, const pk::bf16* got, const pk::bf16* want, long long n, double k_total) {
    const float scale = float(std::sqrt(k_total) / 3.0);  // std of a sum of k products of U(-1,1)
    CUDA_OK(cudaMemsetAsync(d_bad, 0, sizeof(*d_bad), s));
    CUDA_OK(cudaMemsetAsync(d_max, 0, sizeof(*d_max), s));
    compare<<<264, 512, 0, s>>>(got, want, n, 0.02f * scale, 1.0f / 64, d_bad, d_max);
    unsigned long long bad = 0;
    float mx = 0;
    CUDA_OK(cudaMemcpyAsync(&bad, d_bad, sizeof(bad), cudaMemcpyDeviceToHost, s));
    CUDA_OK(cudaMemcpyAsync(&mx, d_max, sizeof(mx), cudaMemcpyDeviceToHost, s));
    CUDA_OK(cudaStreamSynchronize(s));
    row.bad += bad;
    row.max_err = std::max(row.max_err, mx);
  }

  // Every rank checked its own output; rank 0 records the row with both ranks' results.
  void record(Row& row) {
    {
      std::lock_guard<std::mutex> l(sh.m);
      sh.pending_bad += row.bad;
      sh.pending_max = std::max(sh.pending_max, row.max_err);
    }
    sh.barrier.wait();
    if (ctx.rank() == 0) {
      std::lock_guard<std::mutex> l(sh.m);
      row.bad = sh.pending_bad;
      row.max_err = sh.pending_max;
      sh.rows.push_back(row);
      sh.pending_bad = 0;
      sh.pending_max = 0;
    }
    sh.barrier.wait();
  }
};

// PK_GEMM_MAX_BLOCKS=n and PK_GEMM_GROUP_M=n (diagnostic sweeps) override every plan's grid cap
// and L2 group height.
pk::gemm::PlanOptions plan_options() {
  pk::gemm::PlanOptions opt;
  if (const char* v = std::getenv("PK_GEMM_MAX_BLOCKS")) opt.max_blocks = std::atoi(v);
  if (const char* v = std::getenv("PK_GEMM_GROUP_M")) opt.group_m = std::atoi(v);
  return opt;
}

pk::bf16* dalloc(long long elems) {
  void* p = nullptr;
  CUDA_OK(cudaMalloc(&p, elems * 2));
  return static_cast<pk::bf16*>(p);
}

// A fused job's row: the baseline and pkc's kernel once each, pkc's output checked against the
// baseline's, then pkc's kernel, cuBLAS + NCCL and both GEMMs alone timed interleaved
// (Rank::times), so the GEMM-alone references share the job's clock conditions; every rank is
// done with the row's buffers when it returns.
void run_fused(Rank& R, Row& row, const std::function<void()>& pkc, const std::function<void()>& baseline,
               const pk::bf16* got, const pk::bf16* want, long long elems, double k_total,
               const std::function<void()>& cublas_gemm, const std::function<void()>& pk_gemm) {
  baseline();
  pkc();
  PK_OK(R.ctx.check_errors());
  R.check(row, got, want, elems, k_total);
  const auto t = R.times({pkc, baseline, cublas_gemm, pk_gemm},
                         {"pkc " + row.job + " " + row.size, "baseline " + row.job + " " + row.size});
  row.pk_us = t[0];
  row.base_us = t[1];
  row.cublas_us = t[2];
  row.pk_gemm_us = t[3];
  R.record(row);
  CUDA_OK(cudaStreamSynchronize(R.s));
  R.sh.barrier.wait();
}

void run_rank(Rank& R, const Size& sz) {
  const long long m = sz.m, n = sz.n, k = sz.k, w = g_world, r = R.ctx.rank();
  const std::string size = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  const double flops = 2.0 * m * n * k;
  cudaStream_t s = R.s;
  pk::bf16* a = dalloc(m * k);
  pk::bf16* b = dalloc(n * k);
  pk::bf16* c_pk = dalloc(m * n);
  pk::bf16* c_ref = dalloc(m * n);
  fill_random<<<1024, 256, 0, s>>>(a, m * k, unsigned(11 + r));
  fill_random<<<1024, 256, 0, s>>>(b, n * k, unsigned(23 + r));
  CUDA_OK(cudaStreamSynchronize(s));

  // GEMM alone.
  Row g{"gemm", size};
  g.flops = flops;
  auto gp = take(pk::gemm::GemmPlan::create(a, b, c_pk, m, n, k, plan_options()), "GemmPlan");
  if (r == 0)
    std::fprintf(stderr, "pkc gemm %s: %d blocks\n", size.c_str(), gp.grid());
  CUDA_OK(cudaMemsetAsync(c_pk, 0xff, m * n * 2, s));
  R.gemm_ref(a, b, c_ref, m, n, k);
  PK_OK(gp.launch(s));
  R.check(g, c_pk, c_ref, m * n, double(k));
  auto pk_gemm = [&] { PK_OK(gp.launch(s)); };
  auto cublas_gemm = [&] { R.gemm_ref(a, b, c_ref, m, n, k); };
  {
    const auto t = R.times({pk_gemm, cublas_gemm}, {"pkc gemm " + size, "cublas gemm " + size});
    g.pk_us = g.pk_gemm_us = t[0];
    g.base_us = g.cublas_us = t[1];
  }
  R.record(g);
  if (g_world == kMaxWorld) {  // the fused jobs need both GPUs
    // AG + GEMM: rank r's shard is rows [r * M / 2, ...) of A.
    {
      Row row{"ag_gemm", size};
      row.flops = flops;
      const long long ms = m / w;
      const pk::bf16* shard = a + r * ms * k;
      auto full = take(R.ctx.allocate(size_t(m * k * 2)), "allocate A_full");
      pk::bf16* gathered = dalloc(m * k);
      // PK_AG_GATHER=sm|copy_engine overrides the plan's automatic choice (for measuring both).
      pk::gemm::PlanOptions opt = plan_options();
      if (const char* g = std::getenv("PK_AG_GATHER")) {
        if (!std::strcmp(g, "sm")) opt.gather = pk::gemm::Gather::sm;
        if (!std::strcmp(g, "copy_engine")) opt.gather = pk::gemm::Gather::copy_engine;
      }
      // PK_AG_COMM_BLOCKS=n overrides the plan's communicator-block count (for sweeping it).
      if (const char* cb = std::getenv("PK_AG_COMM_BLOCKS")) opt.comm_blocks = std::atoi(cb);
      auto plan = take(pk::gemm::AgGemmPlan::create(R.ctx, shard, full, b, c_pk, ms, n, k, opt), "AgGemmPlan");
      row.comm_blocks = plan.comm_blocks();
      row.copy_engine = plan.copy_engine();
      auto baseline = [&] {
        NCCL_OK(ncclAllGather(shard, gathered, size_t(ms * k), ncclBfloat16, R.nccl, s));
        R.gemm_ref(gathered, b, c_ref, m, n, k);
      };
      CUDA_OK(cudaMemsetAsync(c_pk, 0xff, m * n * 2, s));
      CUDA_OK(cudaMemsetAsync(full.local(), 0xff, m * k * 2, s));
      CUDA_OK(cudaStreamSynchronize(s));
      R.sh.barrier.wait();  // nobody's poison may land after a peer's push
      run_fused(R, row, [&] { PK_OK(plan.launch(R.ctx)); }, baseline, c_pk, c_ref, m * n, double(k),
                cublas_gemm, pk_gemm);
      PK_OK(full.free());
      CUDA_OK(cudaFree(gathered));
    }

    // GEMM + RS and GEMM + AR: each rank's A, B is its own slice of the reduction.
    {
      Row row{"gemm_rs", size};
      row.flops = flops;
      const long long mo = m / w;
      auto out = take(R.ctx.allocate(size_t(mo * n * 2)), "allocate RS output");
      pk::bf16* scattered = dalloc(mo * n);
      auto plan = take(pk::gemm::GemmRsPlan::create(R.ctx, a, b, out, m, n, k, plan_options()), "GemmRsPlan");
      auto baseline = [&] {
        R.gemm_ref(a, b, c_ref, m, n, k);
        NCCL_OK(ncclReduceScatter(c_ref, scattered, size_t(mo * n), ncclBfloat16, ncclSum, R.nccl, s));
      };
      CUDA_OK(cudaMemsetAsync(out.local(), 0xff, mo * n * 2, s));  // the plan zeroes it; poison anyway
      run_fused(R, row, [&] { PK_OK(plan.launch(R.ctx)); }, baseline, static_cast<pk::bf16*>(out.local()),
                scattered, mo * n, double(k * w), cublas_gemm, pk_gemm);
      PK_OK(out.free());
      CUDA_OK(cudaFree(scattered));
    }
    {
      Row row{"gemm_ar", size};
      row.flops = flops;
      auto out = take(R.ctx.allocate(size_t(m * n * 2)), "allocate AR output");
      auto plan = take(pk::gemm::GemmArPlan::create(R.ctx, a, b, out, m, n, k, plan_options()), "GemmArPlan");
      auto baseline = [&] {
        R.gemm_ref(a, b, c_ref, m, n, k);
        NCCL_OK(ncclAllReduce(c_ref, c_ref, size_t(m * n), ncclBfloat16, ncclSum, R.nccl, s));
      };
      CUDA_OK(cudaMemsetAsync(out.local(), 0xff, m * n * 2, s));
      run_fused(R, row, [&] { PK_OK(plan.launch(R.ctx)); }, baseline, static_cast<pk::bf16*>(out.local()),
                c_ref, m * n, double(k * w), cublas_gemm, pk_gemm);
      PK_OK(out.free());
    }
  }
  CUDA_OK(cudaFree(a));
  CUDA_OK(cudaFree(b));
  CUDA_OK(cudaFree(c_pk));
  CUDA_OK(cudaFree(c_ref));
}

// pkc's roofline bound for a row's shipped spec (templates/specs/<job>.pk.cpp) at its sizes
// (docs/roofline.md), in microseconds; 0 without a pkc to ask.
double bound_us(const Row& r) {
#ifdef PK_PKC
  long long m = 0, n = 0, k = 0;
  if (std::sscanf(r.size.c_str(), "%lldx%lldx%lld", &m, &n, &k) != 3) return 0;
  const long long w = g_world;
  auto dims = [](long long a, long long b) { return std::to_string(a) + "x" + std::to_string(b); };
  std::string shapes;
  if (r.job == "gemm") shapes = "0:" + dims(m, k) + ",1:" + dims(n, k) + ",2:" + dims(m, n);
  if (r.job == "ag_gemm")
    shapes = "0:" + dims(m / w, k) + ",1:" + dims(m, k) + ",2:" + dims(n, k) + ",3:" + dims(m, n);
  if (r.job == "gemm_rs") shapes = "0:" + dims(m, k) + ",1:" + dims(n, k) + ",2:" + dims(m / w, n);
  if (r.job == "gemm_ar")
    shapes = "0:" + dims(m, k) + ",1:" + dims(n, k) + ",2:" + dims(m, n) + ",3:" + dims(m, n);
  return pk_bench::roofline_us(PK_PKC, std::string(PK_SPECS_DIR) + "/" + r.job + ".pk.cpp", r.job,
                               shapes, r.job == "gemm" ? 1 : int(w));
#else
  (void)r;
  return 0;
#endif
}

std::string table(const std::vector<Row>& rows, int* beaten) {
  std::ostringstream o;
  char buf[512];
  o << "| job | M x N x K | pkc us | baseline us | speedup | cuBLAS GEMM us | pkc / cuBLAS GEMM time | "
       "pkc TFLOP/s | pkc of roofline bound | exposed comm | comm SMs | check |\n"
       "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    const std::string bound = pk_bench::fraction_of_bound(bound_us(r), r.pk_us, beaten);
    const bool fused = r.job != "gemm";
    const double exposed = fused ? std::max(0.0, r.pk_us - r.pk_gemm_us) / r.pk_us : 0.0;
    const std::string comm = r.copy_engine ? "0 (copy engine)" : std::to_string(r.comm_blocks);
    std::snprintf(buf, sizeof buf, "| %s | %s | %.1f | %.1f (%s) | %.3fx | %.1f | %.3f | %.0f | %s | %s | %s | %s |\n",
                  r.job.c_str(), r.size.c_str(), r.pk_us, r.base_us,
                  fused ? "cuBLAS+NCCL" : "cuBLAS", r.base_us / r.pk_us, r.cublas_us,
                  r.pk_us / r.cublas_us, r.flops / (r.pk_us * 1e6), bound.c_str(),
                  fused ? (std::to_string(int(exposed * 1000 + 0.5) / 10.0).substr(0, 4) + "%").c_str() : "-",
                  comm.c_str(),
                  r.bad == 0 ? "ok" : ("FAIL " + std::to_string(r.bad) + " bad, max err " + std::to_string(r.max_err)).c_str());
    o << buf;
  }
  o << "\nbaseline: cuBLAS GEMM (gemm) or cuBLAS then NCCL on the same stream (fused jobs); times are "
       "medians of " << kTimed << " runs (slower rank) after " << kWarmup << " warm-ups, each row's "
       "runs interleaved with its references (a fused row: pkc, cuBLAS + NCCL, cuBLAS GEMM alone, pkc "
       "GEMM alone, rotated each round), so cuBLAS GEMM us and exposed comm are per row. exposed comm: "
       "(pkc fused - pkc GEMM alone) / pkc fused. pkc of roofline bound: pkc's bound for the "
       "job's spec at these sizes (docs/roofline.md) / pkc us.\n";
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (pk::Status s = pk::refuse_shared_gpu("pk-bench-gemm"); !s.is_ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 2;
  }
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    std::printf("skipped: no GPU\n");
    return 77;
  }
  if (devices < kMaxWorld) {
    g_world = 1;
    std::printf("one GPU: only the GEMM-alone rows (the fused jobs need %d GPUs)\n", kMaxWorld);
  }
  const std::string out_path = argc > 1 ? argv[1] : "bench-gemm.md";
  Shared sh;
  int devs[kMaxWorld];
  for (int i = 0; i < g_world; ++i) devs[i] = i;
  NCCL_OK(ncclCommInitAll(sh.nccl, g_world, devs));
  auto ex = take(pk::NcclExchange::create_single_process(g_world), "bootstrap");
  std::vector<std::thread> threads;
  for (int r = 0; r < g_world; ++r) {
    threads.emplace_back([&, r] {
      pk::Exchange& e = *ex[r];
      CUDA_OK(cudaSetDevice(e.device()));
      auto ctx = take(pk::Context::create(e), "context");
      Rank R{*ctx, sh};
      R.s = ctx->stream();
      R.nccl = sh.nccl[r];
      CUBLAS_OK(cublasCreate(&R.blas));
      CUBLAS_OK(cublasSetStream(R.blas, R.s));
      CUDA_OK(cudaEventCreate(&R.e0));
      CUDA_OK(cudaEventCreate(&R.e1));
      CUDA_OK(cudaMalloc(&R.d_bad, sizeof(*R.d_bad)));
      CUDA_OK(cudaMalloc(&R.d_max, sizeof(*R.d_max)));
      // PK_BENCH_M=m: only the sizes with that M (diagnostic runs).
      const char* only_m = std::getenv("PK_BENCH_M");
      for (const Size& sz : kSizes) {
        if (only_m && std::atoll(only_m) != sz.m) continue;
        run_rank(R, sz);
        if (r == 0) std::fprintf(stderr, "done %lldx%lldx%lld\n", sz.m, sz.n, sz.k);
      }
      CUBLAS_OK(cublasDestroy(R.blas));
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < g_world; ++r) ncclCommDestroy(sh.nccl[r]);
  int beaten = 0;  // measured times below their bound: a wrong bound
  const std::string t = table(sh.rows, &beaten);
  std::printf("%s", t.c_str());
  std::ofstream(out_path) << t;
  bool ok = beaten == 0;
  for (const Row& r : sh.rows) ok = ok && r.bad == 0;
  return ok ? 0 : 1;
}

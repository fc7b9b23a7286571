// bench-collectives: pkc's generated collectives against NCCL called directly, on 2 GPUs in
// one process (a thread per GPU). For each collective and size: median of per-call times
// after warm-up, bus bandwidth as nccl-tests defines it, and correctness against NCCL's output
// on random data. Prints a table and writes it as markdown.
//   bench-collectives <table.md> [--min-bytes N] [--max-bytes N] [--only name]
// PK_COLLECTIVES_DIR in the environment replaces the built-in kernel directory (sweeps of
// hand-varied kernels).
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collective_kernels.h"
#include "roofline_bound.h"

#ifndef PK_COLLECTIVES_DIR
#error "PK_COLLECTIVES_DIR must name the directory of the pkc-generated collectives"
#endif

namespace {

using pkc_coll::Coll;
constexpr int kWorld = 2;
constexpr int kTimed = 20;

#define CHECK_CUDA(x)                                                                        \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)
#define CHECK_NCCL(x)                                                                        \
  do {                                                                                       \
    ncclResult_t r_ = (x);                                                                   \
    if (r_ != ncclSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)
#define CHECK_PK(x)                                                                          \
  do {                                                                                       \
    pk::Status s_ = (x);                                                                     \
    if (!s_.is_ok()) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_.message().c_str()); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// Non-zero random bf16 in +-[0.25, 2), from a hash of (seed, index): no host-side generation
// of gigabytes.
__global__ void fill_random(__nv_bfloat16* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 29;
    const float mag = 0.25f + 1.75f * float(h & 0xffffff) / float(0x1000000);
    p[i] = __float2bfloat16((h >> 40) & 1 ? mag : -mag);
  }
}

// Counts elements of a (pkc) that differ from b (NCCL) by more than rel * max(1, |b|), or are
// NaN (outputs are poisoned with 0xFF = NaN before the run).
__global__ void count_mismatches(const __nv_bfloat16* a, const __nv_bfloat16* b, long long n,
                                 float rel, unsigned long long* bad) {
  unsigned long long local = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const float x = __bfloat162float(a[i]), y = __bfloat162float(b[i]);
    if (!(fabsf(x - y) <= rel * fmaxf(1.0f, fabsf(y)))) ++local;
  }
  if (local) atomicAdd(bad, local);
}

// nccl-tests' bus-bandwidth factors; `bytes` is the size column (see sizes_of).
double bus_factor(Coll c) {
  const double w = kWorld;
  switch (c) {
    case Coll::all_reduce: return 2 * (w - 1) / w;
    case Coll::broadcast:
    case Coll::reduce: return 1;
    default: return (w - 1) / w;
  }
}

// The size column is the larger buffer (all-gather/gather: output; reduce-scatter/scatter and
// all-to-all: input), as nccl-tests reports it; n is the shard in elements.
long long shard_elems(Coll c, long long bytes) {
  const long long elems = bytes / 2;
  const auto in = pkc_coll::info(c);
  return (in.in_times_world || in.out_times_world) ? elems / kWorld : elems;
}

void nccl_call(Coll c, const void* x, void* y, long long n, int root, ncclComm_t comm,
               cudaStream_t s) {
  const ncclDataType_t t = ncclBfloat16;
  switch (c) {
    case Coll::all_reduce: CHECK_NCCL(ncclAllReduce(x, y, n, t, ncclSum, comm, s)); break;
    case Coll::all_gather: CHECK_NCCL(ncclAllGather(x, y, n, t, comm, s)); break;
    case Coll::reduce_scatter: CHECK_NCCL(ncclReduceScatter(x, y, n, t, ncclSum, comm, s)); break;
    case Coll::broadcast: CHECK_NCCL(ncclBroadcast(x, y, n, t, root, comm, s)); break;
    case Coll::reduce: CHECK_NCCL(ncclReduce(x, y, n, t, ncclSum, root, comm, s)); break;
#if NCCL_VERSION_CODE >= 22800
    case Coll::all_to_all: CHECK_NCCL(ncclAlltoAll(x, y, n, t, comm, s)); break;
    case Coll::gather: CHECK_NCCL(ncclGather(x, y, n, t, root, comm, s)); break;
    case Coll::scatter: CHECK_NCCL(ncclScatter(x, y, n, t, root, comm, s)); break;
#else
    // Older NCCL: the same collectives as grouped point-to-point calls, as nccl-tests does.
    case Coll::all_to_all:
    case Coll::gather:
    case Coll::scatter: {
      int me = 0;
      CHECK_NCCL(ncclCommUserRank(comm, &me));
      const char* xb = static_cast<const char*>(x);
      char* yb = static_cast<char*>(y);
      CHECK_NCCL(ncclGroupStart());
      for (int r = 0; r < kWorld; ++r) {
        const size_t off = size_t(r) * n * 2;
        if (c == Coll::all_to_all) {
          CHECK_NCCL(ncclSend(xb + off, n, t, r, comm, s));
          CHECK_NCCL(ncclRecv(yb + off, n, t, r, comm, s));
        } else if (c == Coll::gather) {
          if (r == root) CHECK_NCCL(ncclSend(xb, n, t, root, comm, s));
          if (me == root) CHECK_NCCL(ncclRecv(yb + off, n, t, r, comm, s));
        } else {
          if (me == root) CHECK_NCCL(ncclSend(xb + off, n, t, r, comm, s));
          if (r == root) CHECK_NCCL(ncclRecv(yb, n, t, root, comm, s));
        }
      }
      CHECK_NCCL(ncclGroupEnd());
      break;
    }
#endif
  }
}

struct Row {
  std::string coll;
  long long bytes = 0;
  double pkc_us = 0, nccl_us = 0;            // median of per-call times
  double pkc_loop_us = 0, nccl_loop_us = 0;  // back-to-back calls, as nccl-tests times them
  bool correct = true;
  bool copy_engine = false;  // pkc took the copy-engine route
};

// Median of per-call GPU times (an event pair around each call) after `warm` untimed calls.
template <class F>
double median_us(cudaStream_t s, int warm, F&& call) {
  for (int i = 0; i < warm; ++i) call();
  std::vector<cudaEvent_t> ev(2 * kTimed);
  for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  for (int i = 0; i < kTimed; ++i) {
    CHECK_CUDA(cudaEventRecord(ev[2 * i], s));
    call();
    CHECK_CUDA(cudaEventRecord(ev[2 * i + 1], s));
  }
  CHECK_CUDA(cudaStreamSynchronize(s));
  std::vector<double> t(kTimed);
  for (int i = 0; i < kTimed; ++i) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    t[i] = ms * 1000.0;
  }
  for (auto& e : ev) cudaEventDestroy(e);
  std::sort(t.begin(), t.end());
  return (t[kTimed / 2 - 1] + t[kTimed / 2]) / 2;
}

// Mean time per call of kTimed calls issued back to back between one event pair (the way
// nccl-tests and ../shared/HARDWARE.md time NCCL): launch overheads overlap with the previous
// call's run, unlike in median_us.
// `host_us` gets the host's time per call to issue them (a call that takes longer to issue
// than to run leaves the GPU idle between calls).
template <class F>
double loop_us(cudaStream_t s, F&& call, double* host_us = nullptr) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  CHECK_CUDA(cudaEventRecord(a, s));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kTimed; ++i) call();
  if (host_us)
    *host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kTimed;
  CHECK_CUDA(cudaEventRecord(b, s));
  CHECK_CUDA(cudaEventSynchronize(b));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms * 1000.0 / kTimed;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string size_name(long long b) {
  if (b >= (1ll << 30)) return std::to_string(b >> 30) + " GiB";
  if (b >= (1ll << 20)) return std::to_string(b >> 20) + " MiB";
  return std::to_string(b >> 10) + " KiB";
}

}  // namespace

int main(int argc, char** argv) {
  if (pk::Status s = pk::refuse_shared_gpu("bench-collectives"); !s.is_ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 2;
  }
  // NVLink multicast stays off on the shared machines, for NCCL and everything it starts.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <table.md> [--min-bytes N] [--max-bytes N] [--only collective] [--copy-engine-min-bytes N]\n", argv[0]);
    return 2;
  }
  const std::string out_path = argv[1];
  long long min_bytes = 4 << 10, max_bytes = 1ll << 30;
  std::string only;
  long long copy_engine_min = -1;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--min-bytes")) min_bytes = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--max-bytes")) max_bytes = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--only")) only = argv[i + 1];
    // The contexts' override of pkc's copy-engine threshold (0: off, 1: every size).
    if (!std::strcmp(argv[i], "--copy-engine-min-bytes")) copy_engine_min = std::atoll(argv[i + 1]);
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < kWorld) {
    std::printf("skipped: needs %d GPUs\n", kWorld);
    return 77;
  }
  std::vector<Coll> colls;
  for (Coll c : pkc_coll::kAll)
    if (only.empty() || only == pkc_coll::info(c).name) colls.push_back(c);
  std::vector<long long> sizes;
  // x4 steps from 4 KiB, plus 8 MiB: the size of ../shared/HARDWARE.md's PyTorch
  // symmetric-memory all-reduce baseline (46 us two-shot).
  for (long long b = 4 << 10; b <= max_bytes; b *= 4) {
    if (b >= min_bytes) sizes.push_back(b);
    if (b == (4ll << 20) && 2 * b <= max_bytes && 2 * b >= min_bytes) sizes.push_back(2 * b);
  }
  const char* dir_env = std::getenv("PK_COLLECTIVES_DIR");
  const std::string kernel_dir = dir_env && *dir_env ? dir_env : PK_COLLECTIVES_DIR;

  ncclComm_t comms[kWorld];
  int devs[kWorld] = {0, 1};
  CHECK_NCCL(ncclCommInitAll(comms, kWorld, devs));
  auto ex = pk::NcclExchange::create_single_process(kWorld);
  CHECK_PK(ex.is_ok() ? pk::Status::ok() : ex.status());

  std::vector<Row> rows(colls.size() * sizes.size());
  std::mutex rows_mutex;
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kWorld; ++rank) {
    threads.emplace_back([&, rank] {
      pk::Exchange& e = *(*ex)[rank];
      CHECK_CUDA(cudaSetDevice(e.device()));
      cudaStream_t ns;
      CHECK_CUDA(cudaStreamCreateWithFlags(&ns, cudaStreamNonBlocking));
      unsigned long long* bad = nullptr;
      CHECK_CUDA(cudaMalloc(&bad, sizeof(*bad)));
      for (size_t ci = 0; ci < colls.size(); ++ci) {
        const Coll c = colls[ci];
        const auto in = pkc_coll::info(c);
        // A context per kernel: its flags and epochs count this kernel's launches only.
        pk::ContextOptions options;
        options.copy_engine_min_bytes = copy_engine_min;
        auto ctx = pk::Context::create(e, options);
        CHECK_PK(ctx.is_ok() ? pk::Status::ok() : ctx.status());
        pk::Context& C = **ctx;
        auto l = pkc_coll::load(pkc_coll::variant_path(kernel_dir, c, "bf16", "sum"));
        CHECK_PK(l.is_ok() ? pk::Status::ok() : l.status());
        const int root = 0;
        for (size_t si = 0; si < sizes.size(); ++si) {
          const long long n = shard_elems(c, sizes[si]);
          const long long nx = in.in_times_world ? kWorld * n : n;
          const long long ny = in.out_times_world ? kWorld * n : n;
          auto xb = C.allocate(nx * 2, false);
          auto yb = C.allocate(ny * 2, false);
          CHECK_PK(xb.is_ok() ? pk::Status::ok() : xb.status());
          CHECK_PK(yb.is_ok() ? pk::Status::ok() : yb.status());
          void* nccl_y = nullptr;
          CHECK_CUDA(cudaMalloc(&nccl_y, ny * 2));
          fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(xb->local()), nx,
                                     unsigned(sizes[si] * 8 + rank * 131 + ci));
          CHECK_CUDA(cudaMemset(yb->local(), 0xff, ny * 2));
          CHECK_CUDA(cudaMemset(nccl_y, 0xff, ny * 2));
          CHECK_CUDA(cudaDeviceSynchronize());
          CHECK_PK(e.barrier());

          // Correctness first, on fresh random inputs and poisoned outputs.
          CHECK_PK(pkc_coll::launch<pk::bf16>(C, *l, c, *xb, *yb, n, root));
          CHECK_PK(C.check_errors());
          nccl_call(c, xb->local(), nccl_y, n, root, comms[rank], ns);
          CHECK_CUDA(cudaStreamSynchronize(ns));
          bool ok = true;
          if (!in.out_on_root_only || rank == root) {
            CHECK_CUDA(cudaMemset(bad, 0, sizeof(*bad)));
            count_mismatches<<<1024, 256>>>(static_cast<__nv_bfloat16*>(yb->local()),
                                            static_cast<__nv_bfloat16*>(nccl_y), ny,
                                            in.reduces ? 1.0f / 128 : 0.0f, bad);
            unsigned long long nbad = 0;
            CHECK_CUDA(cudaMemcpy(&nbad, bad, sizeof(nbad), cudaMemcpyDeviceToHost));
            ok = nbad == 0;
            if (!ok)
              std::fprintf(stderr, "rank %d: %s %s: %llu of %lld elements differ from NCCL\n",
                           rank, in.name, size_name(sizes[si]).c_str(), nbad, ny);
          }

          const int warm = sizes[si] >= (256ll << 20) ? 2 : 5;
          CHECK_PK(e.barrier());
          auto pkc_call = [&] { CHECK_PK(pkc_coll::launch<pk::bf16>(C, *l, c, *xb, *yb, n, root)); };
          auto nccl_one = [&] { nccl_call(c, xb->local(), nccl_y, n, root, comms[rank], ns); };
          const double pkc_us = median_us(C.stream(), warm, pkc_call);
          double pkc_host = 0, nccl_host = 0;
          const double pkc_loop = loop_us(C.stream(), pkc_call, &pkc_host);
          CHECK_PK(C.check_errors());
          CHECK_PK(e.barrier());
          const double nccl_us = median_us(ns, warm, nccl_one);
          const double nccl_loop = loop_us(ns, nccl_one, &nccl_host);
          if (sizes[si] <= (1 << 20))
            std::printf("rank %d %s %s: host us per call to issue: pkc %.1f, NCCL %.1f\n", rank,
                        in.name, size_name(sizes[si]).c_str(), pkc_host, nccl_host);
          {
            std::lock_guard<std::mutex> g(rows_mutex);
            Row& r = rows[ci * sizes.size() + si];
            r.coll = in.name;
            r.bytes = sizes[si];
            // The slower rank's median: a collective is done when every rank is.
            r.pkc_us = std::max(r.pkc_us, pkc_us);
            r.nccl_us = std::max(r.nccl_us, nccl_us);
            r.pkc_loop_us = std::max(r.pkc_loop_us, pkc_loop);
            r.nccl_loop_us = std::max(r.nccl_loop_us, nccl_loop);
            r.correct = r.correct && ok;
            r.copy_engine = l->copy_engine &&
                            pk::takes_copy_engine(C, *l->copy_engine,
                                                  pk::copy_engine_message_bytes(
                                                      l->copy_engine->kind, nx, ny, kWorld, 2));
          }
          CHECK_PK(e.barrier());  // no rank frees while a peer still reads
          CHECK_CUDA(cudaFree(nccl_y));
          CHECK_PK(xb->free());
          CHECK_PK(yb->free());
        }
      }
      cudaFree(bad);
      cudaStreamDestroy(ns);
    });
  }
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int nccl_version = 0;
  ncclGetVersion(&nccl_version);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M", std::localtime(&now));
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);

  std::string md = "# pkc collectives vs NCCL\n\n";
  md += "- date: " + std::string(date) + "\n- GPUs: " + std::to_string(kWorld) + " x " +
        prop.name + " (one process, a thread per GPU)\n- NCCL " + std::to_string(nccl_version) +
        " called directly; NCCL_NVLS_ENABLE=0\n- command: `" + cmd + "`\n";
  md += "- bf16, sum, root 0; time = median of " + std::to_string(kTimed) +
        " calls (event pair per call) after warm-up, slower rank; busbw as nccl-tests; "
        "ratio = NCCL time / pkc time (> 1: pkc faster); loop = mean of " +
        std::to_string(kTimed) + " calls back to back between one event pair (as nccl-tests "
        "times), with its own ratio; correct = pkc output equals NCCL's "
        "on random data (reductions within 1 bf16 ulp); path = pkc's kernel or its copy-engine "
        "route (host-issued copy-engine pulls between two one-way flag rounds); pkc loop of "
        "roofline bound = pkc's bound for the spec at these sizes (docs/roofline.md) / loop time\n- run time: " +
        fmt("%.0f", seconds) + " s\n\n";
  md += "| collective | size | pkc us | NCCL us | pkc busbw GB/s | NCCL busbw GB/s | ratio | "
        "pkc loop us | NCCL loop us | loop ratio | pkc loop of roofline bound | correct | path |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::printf("%-15s %9s %9s %9s %9s %9s %6s %9s %9s %6s %s %s\n", "collective", "size", "pkc us",
              "NCCL us", "pkc GB/s", "NCCL GB/s", "ratio", "pkc loop", "NCCL loop", "ratio",
              "correct", "path");
  bool all_correct = true;
  int beaten = 0;  // measured times below their roofline bound: a wrong bound
  for (size_t ci = 0; ci < colls.size(); ++ci)
    for (size_t si = 0; si < sizes.size(); ++si) {
      const Row& r = rows[ci * sizes.size() + si];
      // pkc's bound for the shipped spec at these sizes (docs/roofline.md), against the
      // back-to-back time, which carries no per-call host overhead.
      const auto in = pkc_coll::info(colls[ci]);
      const long long n = shard_elems(colls[ci], r.bytes);
      const std::string shapes = "0:" + std::to_string(in.in_times_world ? kWorld * n : n) + ",1:" +
                                 std::to_string(in.out_times_world ? kWorld * n : n);
      const std::string bound = pk_bench::fraction_of_bound(
          pk_bench::roofline_us(PK_PKC, std::string(PK_SPECS_DIR) + "/" + in.name + ".pk.cpp", in.name,
                                shapes, kWorld),
          r.pkc_loop_us, &beaten);
      const double f = bus_factor(colls[ci]);
      const double pb = r.bytes / (r.pkc_us * 1e3) * f, nb = r.bytes / (r.nccl_us * 1e3) * f;
      all_correct = all_correct && r.correct;
      const char* path = r.copy_engine ? "copy engine" : "kernel";
      std::printf("%-15s %9s %9.1f %9.1f %9.1f %9.1f %6.2f %9.1f %9.1f %6.2f %s %s\n", r.coll.c_str(),
                  size_name(r.bytes).c_str(), r.pkc_us, r.nccl_us, pb, nb, r.nccl_us / r.pkc_us,
                  r.pkc_loop_us, r.nccl_loop_us, r.nccl_loop_us / r.pkc_loop_us,
                  r.correct ? "yes" : "NO", path);
      md += "| " + r.coll + " | " + size_name(r.bytes) + " | " + fmt("%.1f", r.pkc_us) + " | " +
            fmt("%.1f", r.nccl_us) + " | " + fmt("%.1f", pb) + " | " + fmt("%.1f", nb) + " | " +
            fmt("%.2f", r.nccl_us / r.pkc_us) + " | " + fmt("%.1f", r.pkc_loop_us) + " | " +
            fmt("%.1f", r.nccl_loop_us) + " | " + fmt("%.2f", r.nccl_loop_us / r.pkc_loop_us) +
            " | " + bound + " | " + (r.correct ? "yes" : "NO") + " | " + path + " |\n";
    }
  if (FILE* f = std::fopen(out_path.c_str(), "w")) {
    std::fputs(md.c_str(), f);
    std::fclose(f);
  } else {
    std::fprintf(stderr, "cannot write %s\n", out_path.c_str());
    return 1;
  }
  for (auto& c : comms) ncclCommDestroy(c);
  std::printf("wrote %s (%.0f s)\n", out_path.c_str(), seconds);
  return all_correct && beaten == 0 ? 0 : 1;
}

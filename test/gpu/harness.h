// Shared scaffolding for pk GPU tests: skip rules, one thread per rank, checks, test data.
#pragma once
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <pk/runtime/runtime.h>

namespace pkt {

// NVLink multicast must stay off on the shared test machines, in this process and children.
inline void safety_env() {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
}

// The device count, read once in a child process: CUDA in this process then starts only after
// require_gpus has chosen the shared-GPU settings, some of which CUDA reads when it starts.
inline int gpu_count() {
  static const int count = [] {
    const pid_t pid = fork();
    if (pid == 0) {
      int n = 0;
      _exit(cudaGetDeviceCount(&n) == cudaSuccess ? std::min(n, 100) : 0);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) return WEXITSTATUS(status);
    int n = 0;  // no child: count here
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
  }();
  return count;
}

// Whether the multi-rank parts run as ranks sharing GPU 0 in this process
// (pk/runtime/shared_gpu.h): on a one-GPU machine, or when PK_SHARED_GPU_RANKS is set.
inline bool shared_gpu() {
  const char* w = std::getenv("PK_SHARED_GPU_RANKS");
  return (w && *w) || gpu_count() == 1;
}

// Exits with 77 (ctest SKIP_RETURN_CODE) unless `need` GPUs are usable (tests whose ranks may
// share one GPU ask test_worlds instead).
inline void require_gpus(int need) {
  safety_env();
  const int n = gpu_count();
  if (n == 0) {
    std::printf("skipped: no GPU\n");
    std::exit(77);
  }
  if (shared_gpu()) {
    // Before this process starts CUDA (gpu_count counted in a child): eager module loading (a
    // lazy load can wait for another rank's spinning kernel) and a hardware queue per stream
    // (so no rank's kernel queues behind another's).
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  }
  if (n < need) {
    std::printf("skipped: needs %d GPUs\n", need);
    std::exit(77);
  }
}

inline std::mutex& out_mutex() {
  static std::mutex m;
  return m;
}
inline int& failure_count() {
  static int n = 0;
  return n;
}
inline void fail(const std::string& what) {
  std::lock_guard<std::mutex> l(out_mutex());
  ++failure_count();
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
}

#define PKT_CHECK(cond, msg)                                                                 \
  do {                                                                                       \
    if (!(cond)) ::pkt::fail(std::string(__FILE__ ":") + std::to_string(__LINE__) + ": " + \
                             #cond + " -- " + (msg));                                        \
  } while (0)

// Fails the test (and returns from the enclosing void function) when a Status is an error.
#define PKT_OK(expr)                                                                     \
  do {                                                                                   \
    ::pk::Status pkt_s_ = (expr);                                                        \
    if (!pkt_s_.is_ok()) {                                                               \
      ::pkt::fail(std::string(__FILE__ ":") + std::to_string(__LINE__) + ": " + #expr + \
                  " -> " + pkt_s_.message());                                            \
      return;                                                                            \
    }                                                                                    \
  } while (0)

#define PKT_CUDA(call) PKT_OK(::pk::cuda_status((call), #call))

// One thread per rank of `ex`, each with its own Context (and so its own stream).
inline void run_ranks_on(std::vector<std::unique_ptr<pk::Exchange>>& ex,
                         const std::function<void(pk::Context&)>& fn,
                         pk::ContextOptions options = {}) {
  std::vector<std::thread> threads;
  for (int r = 0; r < static_cast<int>(ex.size()); ++r) {
    threads.emplace_back([&, r] {
      pk::Exchange& e = *ex[r];
      cudaSetDevice(e.device());
      auto ctx = pk::Context::create(e, options);
      if (!ctx.is_ok()) {
        fail("rank " + std::to_string(r) + ": " + ctx.status().message());
        return;
      }
      fn(**ctx);
    });
  }
  for (auto& t : threads) t.join();
}

// Single-process mode: one thread per rank. On one GPU the ranks share it (no NCCL);
// otherwise each rank drives GPU r through NCCL.
inline void run_ranks(int world, const std::function<void(pk::Context&)>& fn,
                      pk::ContextOptions options = {}) {
  auto ex = shared_gpu() ? pk::create_shared_gpu_exchanges(world, 0)
                         : pk::NcclExchange::create_single_process(world);
  if (!ex.is_ok()) {
    fail("bootstrap: " + ex.status().message());
    return;
  }
  run_ranks_on(*ex, fn, options);
}

inline int finish(const char* name) {
  if (failure_count()) {
    std::printf("%s: FAILED (%d failures)\n", name, failure_count());
    return 1;
  }
  std::printf("%s: passed\n", name);
  return 0;
}

// The world sizes a multi-rank test runs at: 2 on two or more GPUs (a GPU per rank, NCCL, as
// before); on one GPU 2, 3 and 4 ranks sharing it, so that odd worlds, tails and world-size
// choices run there too; W alone with PK_SHARED_GPU_RANKS=W (2 <= W <= 16), or the list in
// PK_TEST_WORLDS ("2 3 4 8"). with_one: world size 1 first on a one-GPU machine.
inline std::vector<int> test_worlds(bool with_one = false) {
  require_gpus(1);
  std::vector<int> worlds;
  if (!shared_gpu()) return {2};
  if (with_one) worlds.push_back(1);
  const char* one = std::getenv("PK_SHARED_GPU_RANKS");
  const char* list = std::getenv("PK_TEST_WORLDS");
  std::string text = one && *one ? one : list && *list ? list : "2 3 4";
  char* p = &text[0];
  while (*p) {
    char* end = nullptr;
    const long w = std::strtol(p, &end, 10);
    if (end == p) break;
    if (w >= 2 && w <= PK_MAX_RANKS) worlds.push_back(static_cast<int>(w));
    p = end;
  }
  if (worlds.empty() || worlds.back() < 2) {  // never a pass that ran no ranks
    std::printf("FAIL: no world size in [2, %d] in '%s'\n", PK_MAX_RANKS, text.c_str());
    std::exit(1);
  }
  return worlds;
}

// Says where the next runs happen: honest labels, since shared ranks say nothing about links.
inline void announce_world(const char* name, int world) {
  if (shared_gpu())
    std::printf("%s: world size %d, %d rank(s) sharing GPU 0 (not NVLink)\n", name, world, world);
  else
    std::printf("%s: world size %d, one GPU per rank\n", name, world);
  std::fflush(stdout);
}

// Waits for this thread's uploads and memsets (the legacy default stream) before a barrier or
// a launch. Where ranks share the GPU a device-wide sync would also wait for other ranks'
// kernels, which may be waiting for this rank's next launch; elsewhere it stays the device sync.
inline cudaError_t sync_uploads() {
  return shared_gpu() ? cudaStreamSynchronize(cudaStreamLegacy) : cudaDeviceSynchronize();
}

// ---- test data ----

inline unsigned short bf16_bits(float f) {  // round to nearest even, as cvt.rn.bf16.f32
  unsigned int u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
}
inline float bf16_float(unsigned short b) {
  unsigned int u = static_cast<unsigned int>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

template <class T> inline T from_f(float x);
template <> inline float from_f<float>(float x) { return x; }
template <> inline pk::bf16 from_f<pk::bf16>(float x) { return pk::bf16{bf16_bits(x)}; }
inline float to_f(float x) { return x; }
inline float to_f(pk::bf16 x) { return bf16_float(x.bits); }

// Non-zero random values, reproducible from (seed) so every rank can recompute every rank's data.
template <class T>
std::vector<T> random_data(std::size_t n, unsigned seed) {
  std::mt19937 g(seed * 7919u + 17u);
  std::uniform_real_distribution<float> d(0.25f, 2.0f);
  std::vector<T> v(n);
  for (auto& x : v) x = from_f<T>((g() & 1) ? d(g) : -d(g));
  return v;
}

// Fills device memory with 0xFF bytes: NaN as f32 and as bf16, so unwritten outputs show.
inline cudaError_t poison(void* p, std::size_t bytes) { return cudaMemset(p, 0xff, bytes); }

inline bool close(float got, float want, float rel) {
  if (std::isnan(got)) return false;
  return std::fabs(got - want) <= rel * std::fmax(1.0f, std::fabs(want));
}

// An all-reduce (sum) of bf16 inputs summed in f32 and rounded once to bf16 is within one
// bf16 ulp of the exact sum; reports the first few elements that are not.
inline void check_bf16_sum(const std::vector<pk::bf16>& got,
                           const std::vector<std::vector<pk::bf16>>& inputs, int rank) {
  const long long n = static_cast<long long>(got.size());
  int bad = 0;
  for (long long i = 0; i < n && bad < 5; ++i) {
    double want = 0;
    for (const auto& d : inputs) want += double(to_f(d[i]));
    const double g = to_f(got[i]);
    if (!(std::fabs(g - want) <= std::ldexp(std::fabs(want), -7) + 1e-30)) {
      ++bad;
      fail("n=" + std::to_string(n) + " rank " + std::to_string(rank) + ": y[" +
           std::to_string(i) + "] = " + std::to_string(g) + ", want " + std::to_string(want));
    }
  }
}

}  // namespace pkt

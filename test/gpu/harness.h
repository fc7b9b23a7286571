// Shared scaffolding for pk GPU tests: skip rules, one thread per rank, checks, test data.
#pragma once
#include <cuda_runtime.h>

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

inline int gpu_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

// Exits with 77 (ctest SKIP_RETURN_CODE) unless `need` GPUs are usable.
inline void require_gpus(int need) {
  safety_env();
  const int n = gpu_count();
  if (n == 0) {
    std::printf("skipped: no GPU\n");
    std::exit(77);
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

// Single-process mode: one thread per rank, each with its own Context.
inline void run_ranks(int world, const std::function<void(pk::Context&)>& fn,
                      pk::ContextOptions options = {}) {
  auto ex = pk::NcclExchange::create_single_process(world);
  if (!ex.is_ok()) {
    fail("bootstrap: " + ex.status().message());
    return;
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      pk::Exchange& e = *(*ex)[r];
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

inline int finish(const char* name) {
  if (failure_count()) {
    std::printf("%s: FAILED (%d failures)\n", name, failure_count());
    return 1;
  }
  std::printf("%s: passed\n", name);
  return 0;
}

// The world size a test runs at: 2, or 1 on a one-GPU machine, where finish_world then reports
// the test as skipped (77) after its world-size-1 run passed, never as passed.
inline int test_world() {
  require_gpus(1);
  return gpu_count() < 2 ? 1 : 2;
}
inline int finish_world(const char* name, int world) {
  if (world < 2 && !failure_count()) {
    std::printf("skipped: the two-GPU runs need 2 GPUs (%s passed at world size 1)\n", name);
    return 77;
  }
  return finish(name);
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

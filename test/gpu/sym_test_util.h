// Helpers of the multi-rank tests of pkc-emitted kernels: symmetric tensors with a rank's data
// (or poisoned), an element-wise check against a float64 reference, every rank's inputs
// reproducible on every rank, an exact check of integer outputs, and a launch for the context's next epoch of a kernel.
#pragma once
#include <cmath>
#include <cstdio>
#include <functional>

#include "harness.h"

namespace pkt {

using pk::bf16;

inline float host_of(float x) { return x; }
inline float host_of(bf16 x) { return pkt::to_f(x); }

// A symmetric tensor of `shape` on every rank, with this rank's data uploaded (or poisoned).
template <class T>
struct SymArg {
  pk::SymmetricBuffer buf;
  pk::SymTensor<T> view{};
  std::vector<long long> shape;
  long long numel = 1;
  SymArg(pk::Context& ctx, std::vector<long long> s, const std::vector<T>* data) : shape(s) {
    for (long long d : s) numel *= d;
    auto b = ctx.allocate(numel * sizeof(T));
    PKT_OK(b.is_ok() ? pk::Status::ok() : b.status());
    if (!b.is_ok()) return;
    buf = std::move(*b);
    auto v = buf.sym_tensor<T>(shape);
    PKT_OK(v.is_ok() ? pk::Status::ok() : v.status());
    if (v.is_ok()) view = *v;
    if (data)
      PKT_CUDA(cudaMemcpy(buf.local(), data->data(), numel * sizeof(T), cudaMemcpyHostToDevice));
    else
      PKT_CUDA(pkt::poison(buf.local(), numel * sizeof(T)));
  }
  std::vector<T> download() const {
    std::vector<T> v(static_cast<size_t>(numel));
    const cudaError_t e = cudaMemcpy(v.data(), buf.local(), numel * sizeof(T), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) pkt::fail(std::string("download: ") + cudaGetErrorString(e));
    return v;
  }
};

// A rank's local (not symmetric) device tensor with `data` uploaded, or poisoned when empty.
template <class T>
struct DevLocal {
  std::vector<long long> shape;
  long long numel = 1;
  T* dev = nullptr;
  DevLocal(std::vector<long long> s, const std::vector<T>& data) : shape(s) {
    for (long long d : s) numel *= d;
    PKT_CUDA(cudaMalloc(&dev, numel * sizeof(T)));
    if (data.empty()) PKT_CUDA(pkt::poison(dev, numel * sizeof(T)));
    else PKT_CUDA(cudaMemcpy(dev, data.data(), numel * sizeof(T), cudaMemcpyHostToDevice));
  }
  DevLocal(const DevLocal&) = delete;
  ~DevLocal() { cudaFree(dev); }
  pk::Tensor<T> view() const {
    pk::Tensor<T> t{};
    t.data = dev;
    for (size_t d = 0; d < 4; ++d) t.shape[d] = d < shape.size() ? shape[d] : 1;  // as pk::make_tensor
    t.numel = numel;
    return t;
  }
  std::vector<T> download() const {
    std::vector<T> v(static_cast<size_t>(numel));
    const cudaError_t e = cudaMemcpy(v.data(), dev, numel * sizeof(T), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) pkt::fail(std::string("download: ") + cudaGetErrorString(e));
    return v;
  }
};

// Every element against want(i) within tol(i); reports the first few misses.
template <class T>
void expect(const pk::Context& ctx, const char* what, const std::vector<T>& got,
            const std::function<double(long long)>& want,
            const std::function<double(long long)>& tol) {
  long long bad = 0;
  for (long long i = 0; i < static_cast<long long>(got.size()); ++i) {
    const double w = want(i), g = host_of(got[i]);
    if (!(std::fabs(g - w) <= tol(i))) {
      if (bad < 3)
        pkt::fail(std::string(what) + " rank " + std::to_string(ctx.rank()) + " element " +
                  std::to_string(i) + ": got " + std::to_string(g) + ", want " +
                  std::to_string(w));
      ++bad;
    }
  }
  if (bad > 3) pkt::fail(std::string(what) + ": " + std::to_string(bad) + " elements wrong");
}

// All ranks' inputs, reproducible on every rank from (seed, rank).
template <class T>
std::vector<std::vector<T>> inputs(int world, long long n, unsigned seed) {
  std::vector<std::vector<T>> all;
  for (int r = 0; r < world; ++r) all.push_back(pkt::random_data<T>(n, seed + 97 * r));
  return all;
}

#ifdef __CUDACC__  // host-only tests (the JIT ones) compile as plain C++ and launch nothing this way
// Launches `kernel` for ctx's next epoch of `name` on a grid fitted to the ranks sharing the GPU,
// with the context's landing buffers where `landing` (a kernel whose collectives may take the
// one-round paths) and without (most of these kernels never push).
template <class K, class... A>
void launch_landing(pk::Context& ctx, bool landing, const std::string& name, K kernel, int blocks, int threads,
                    const A&... args) {
  auto lc = ctx.make_launch_context(name, landing);
  PKT_OK(lc.is_ok() ? pk::Status::ok() : lc.status());
  if (!lc.is_ok()) return;
  kernel<<<pk::rank_grid(ctx, blocks), threads, 0, ctx.stream()>>>(*lc, args...);
  PKT_CUDA(cudaGetLastError());
}
template <class K, class... A>
void launch(pk::Context& ctx, const std::string& name, K kernel, int blocks, int threads, const A&... args) {
  launch_landing(ctx, false, name, kernel, blocks, threads, args...);
}
#endif

// Runs fn(ctx) on every rank at every test world size (W = 1, then 2-4 sharing one GPU, or 2
// GPUs), after every rank has loaded `kernels` and met the others: a module load can wait for
// a kernel that spins for the loading rank. Returns the test's exit code.
template <class... K>
int run_worlds(const char* name, const std::function<void(pk::Context&)>& fn, K... kernels) {
  for (int world : test_worlds(/*with_one=*/true)) {
    announce_world(name, world);
    run_ranks(world, [&](pk::Context& ctx) {
      cudaFuncAttributes a;
      for (const void* k : {reinterpret_cast<const void*>(kernels)...})
        PKT_CUDA(cudaFuncGetAttributes(&a, k));
      PKT_OK(ctx.exchange().barrier());
      fn(ctx);
    });
  }
  return finish(name);
}

// The steps of a multi-rank case: inputs uploaded and every rank there (ready), the kernel's
// error slot clean (done), every rank past the case before the next reuses buffers (next).
inline void ready(pk::Context& ctx) {
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
}
inline void done(pk::Context& ctx) { PKT_OK(ctx.check_errors()); }
inline void next(pk::Context& ctx) { PKT_OK(ctx.exchange().barrier()); }
// An absolute tolerance for every element.
inline auto abs_tol(double t) { return [t](long long) { return t; }; }
// Names the multi-rank case about to run (rank 0), so that a hang shows where it is.
inline void step(const pk::Context& ctx, const char* name) {
  if (ctx.rank() == 0) std::printf("  %s (W = %d)\n", name, ctx.world()), std::fflush(stdout);
}

// Exact check of a rank's integer output against want(i); names the first three wrong elements.
template <class I>
void expect_i(const pk::Context& ctx, const char* what, const std::vector<I>& got,
              const std::function<long long(long long)>& want) {
  long long bad = 0;
  for (long long i = 0; i < static_cast<long long>(got.size()); ++i)
    if (static_cast<long long>(got[i]) != want(i)) {
      if (bad < 3)
        fail(std::string(what) + " rank " + std::to_string(ctx.rank()) + " element " + std::to_string(i) +
             ": got " + std::to_string(got[i]) + ", want " + std::to_string(want(i)));
      ++bad;
    }
  if (bad > 3) fail(std::string(what) + ": " + std::to_string(bad) + " elements wrong");
}

}  // namespace pkt

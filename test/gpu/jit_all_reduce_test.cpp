// JIT from C++ on two GPUs (on one: world size 1, then 2, 3 and 4 ranks sharing it): compiles
// templates/specs/all_reduce.mlir at run time (in process, or through a pkc executable when
// built as jit_pkc_all_reduce_test), launches it on every
// rank on the caller's stream, and checks against a float64 host sum; then checks that a
// wrongly typed launch is an error value, not a fault; that a wrongly sized one fails at the
// call with the kernel's own check run on the host ("expected 1024, got 1000") and launches
// nothing; that all-reduces and all-gathers of zero elements are no-ops (on every rank, with
// later launches still in step); then an all-gather through the JIT's copy-engine route.
#include <chrono>
#include <cmath>
#include <cstring>

#include "harness.h"
#ifdef PK_JIT_PKC
#include <pk/jit/compile.h>
#else
#include <pk/jit/jit.h>
#endif

namespace {

int g_world = 2;  // the world size of the current pass (pkt::test_worlds)

pk::Result<pk::jit::Kernel> compile(const char* spec) {
#ifdef PK_JIT_PKC
  auto text = pk::jit::read_spec(spec);
  return text.is_ok() ? pk::jit::compile_spec(spec, *text, {}, pk::jit::pkc_frontend(PK_PKC))
                      : pk::Result<pk::jit::Kernel>(text.status());
#else
  return pk::jit::compile_file(spec);
#endif
}

// The JIT's copy-engine route: all-gather with the route forced from 4 KiB per message, so
// 4097 and 1000003 elements take it and 1 element the kernel, in one context.
void all_gather_copy_engine() {
  auto kernel = compile(PK_ALL_GATHER_SPEC);
  if (!kernel.is_ok()) return pkt::fail("compile all_gather: " + kernel.status().message());
  PKT_CHECK(kernel->info().copy_engine.has_value(), "all_gather has no copy-engine route");
  pk::ContextOptions options;
  options.copy_engine_min_bytes = 4096;
  pkt::run_ranks(g_world, [&](pk::Context& ctx) {
    cudaStream_t stream;
    PKT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const int W = ctx.world();
    for (long long n : {1LL, 4097LL, 1000003LL, 1LL}) {
      auto xb = ctx.allocate(n * sizeof(pk::bf16));
      auto yb = ctx.allocate(W * n * sizeof(pk::bf16));
      PKT_OK(xb.is_ok() ? pk::Status::ok() : xb.status());
      PKT_OK(yb.is_ok() ? pk::Status::ok() : yb.status());
      std::vector<std::vector<pk::bf16>> data;
      for (int r = 0; r < W; ++r) data.push_back(pkt::random_data<pk::bf16>(n, 17 * r + 3));
      PKT_CUDA(cudaMemcpy(xb->local(), data[ctx.rank()].data(), n * 2, cudaMemcpyHostToDevice));
      PKT_CUDA(pkt::poison(yb->local(), W * n * 2));
      PKT_CUDA(pkt::sync_uploads());
      PKT_OK(ctx.exchange().barrier());
      auto x = xb->sym_tensor<pk::bf16>({n});
      auto y = yb->sym_tensor<pk::bf16>({W * n});
      for (int l = 0; l < 3; ++l) PKT_OK(kernel->launch(ctx, stream, *x, *y));
      PKT_CUDA(cudaStreamSynchronize(stream));
      PKT_OK(ctx.check_errors());
      std::vector<pk::bf16> got(W * n);
      PKT_CUDA(cudaMemcpy(got.data(), yb->local(), W * n * 2, cudaMemcpyDeviceToHost));
      long long bad = 0;
      for (int r = 0; r < W; ++r)
        for (long long i = 0; i < n; ++i)
          bad += std::memcmp(&got[r * n + i], &data[r][i], sizeof(pk::bf16)) != 0;
      PKT_CHECK(bad == 0, "JIT all_gather n=" + std::to_string(n) + " rank " +
                              std::to_string(ctx.rank()) + ": " + std::to_string(bad) +
                              " elements differ");
      PKT_OK(ctx.exchange().barrier());  // peers may still read x until everyone checked
      PKT_OK(yb->free());
      PKT_OK(xb->free());
    }
    cudaStreamDestroy(stream);
  }, options);
}

// A wrongly sized all-reduce fails at the call on every rank (the host runs the kernel's
// check), and empty ones are no-ops; the launches after them still agree on their epochs.
void host_checks_and_empty_tensors(const pk::jit::Kernel& all_reduce) {
  auto all_gather = compile(PK_ALL_GATHER_SPEC);
  if (!all_gather.is_ok()) return pkt::fail("compile all_gather: " + all_gather.status().message());
  pkt::run_ranks(g_world, [&](pk::Context& ctx) {
    cudaStream_t stream;
    PKT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const long long n = 1024;
    auto xb = ctx.allocate(n * sizeof(pk::bf16));
    auto yb = ctx.allocate(n * sizeof(pk::bf16));
    auto eb = ctx.allocate(0);  // an empty symmetric buffer is a real, mapped allocation
    PKT_OK(xb.is_ok() ? pk::Status::ok() : xb.status());
    PKT_OK(yb.is_ok() ? pk::Status::ok() : yb.status());
    PKT_OK(eb.is_ok() ? pk::Status::ok() : eb.status());
    PKT_CHECK(eb->valid() && eb->bytes() == 0, "allocate(0) did not give an empty buffer");
    auto x = xb->sym_tensor<pk::bf16>({n});
    auto y = yb->sym_tensor<pk::bf16>({n});
    auto short_y = yb->sym_tensor<pk::bf16>({1000});
    auto empty = eb->sym_tensor<pk::bf16>({0});
    PKT_OK(empty.is_ok() ? pk::Status::ok() : empty.status());

    pk::Status bad = all_reduce.launch(ctx, stream, *x, *short_y);
    PKT_CHECK(!bad.is_ok() && bad.message().find("expected 1024, got 1000") != std::string::npos,
              "a 1024 -> 1000 all-reduce: " + (bad.is_ok() ? std::string("accepted") : bad.message()));
    // An empty input with a full output is a size mismatch too, not a skip.
    PKT_CHECK(!all_reduce.launch(ctx, stream, *empty, *y).is_ok(), "0 -> 1024 accepted");
    for (int l = 0; l < 3; ++l) {
      PKT_OK(all_reduce.launch(ctx, stream, *empty, *empty));
      PKT_OK(all_gather->launch(ctx, stream, *empty, *empty));
    }
    PKT_CUDA(cudaStreamSynchronize(stream));
    PKT_OK(ctx.check_errors());  // nothing failed on the device: nothing was launched

    // The next real launches still pair up across ranks and add correctly.
    std::vector<std::vector<pk::bf16>> data;
    for (int r = 0; r < ctx.world(); ++r) data.push_back(pkt::random_data<pk::bf16>(n, 7 * r + 1));
    PKT_CUDA(cudaMemcpy(xb->local(), data[ctx.rank()].data(), n * 2, cudaMemcpyHostToDevice));
    PKT_CUDA(pkt::poison(yb->local(), n * 2));
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    PKT_OK(all_reduce.launch(ctx, stream, *x, *y));
    PKT_CUDA(cudaStreamSynchronize(stream));
    PKT_OK(ctx.check_errors());
    std::vector<pk::bf16> got(n);
    PKT_CUDA(cudaMemcpy(got.data(), yb->local(), n * 2, cudaMemcpyDeviceToHost));
    pkt::check_bf16_sum(got, data, ctx.rank());
    PKT_OK(ctx.exchange().barrier());
    PKT_OK(eb->free());
    PKT_OK(yb->free());
    PKT_OK(xb->free());
    cudaStreamDestroy(stream);
  });
}

}  // namespace

int main() {
  const std::vector<int> worlds = pkt::test_worlds(/*with_one=*/true);
  cudaSetDevice(0);
  auto start = std::chrono::steady_clock::now();
  auto kernel = compile(PK_ALL_REDUCE_SPEC);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start).count();
  if (!kernel.is_ok()) {
    pkt::fail("compile: " + kernel.status().message());
    return pkt::finish("jit_all_reduce_test");
  }
  std::printf("compile: %.2f ms (%s)\n", ms, kernel->from_cache() ? "cache hit" : "compiled");

  for (int world : worlds) {
    g_world = world;
    pkt::announce_world("jit_all_reduce_test", world);
    pkt::run_ranks(g_world, [&](pk::Context& ctx) {
      cudaStream_t stream;  // the caller's own stream, not the context's
      PKT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      for (long long n : {1LL, 4097LL, 1000003LL}) {
        auto xb = ctx.allocate(n * sizeof(pk::bf16));
        PKT_OK(xb.is_ok() ? pk::Status::ok() : xb.status());
        std::vector<std::vector<pk::bf16>> data;
        for (int r = 0; r < ctx.world(); ++r) data.push_back(pkt::random_data<pk::bf16>(n, 31 * r + 5));
        PKT_CUDA(cudaMemcpy(xb->local(), data[ctx.rank()].data(), n * 2, cudaMemcpyHostToDevice));
        // The spec's output is symmetric (so pkc may pick two-shot on more ranks).
        auto yb = ctx.allocate(n * sizeof(pk::bf16));
        PKT_OK(yb.is_ok() ? pk::Status::ok() : yb.status());
        void* yp = yb->local();
        PKT_CUDA(pkt::poison(yp, n * 2));
        auto x = xb->sym_tensor<pk::bf16>({n});
        auto y = yb->sym_tensor<pk::bf16>({n});
        auto yf = yb->sym_tensor<float>({n / 2 > 0 ? n / 2 : 1});
        PKT_CUDA(pkt::sync_uploads());
        PKT_OK(ctx.exchange().barrier());

        // A float output where the spec says bf16: rejected on the host on every rank.
        pk::Status wrong = kernel->launch(ctx, stream, *x, *yf);
        PKT_CHECK(!wrong.is_ok() && wrong.message().find("bf16") != std::string::npos,
                  wrong.message());

        for (int l = 0; l < 10; ++l) PKT_OK(kernel->launch(ctx, stream, *x, *y));
        PKT_CUDA(cudaStreamSynchronize(stream));
        PKT_OK(ctx.check_errors());
        std::vector<pk::bf16> got(n);
        PKT_CUDA(cudaMemcpy(got.data(), yp, n * 2, cudaMemcpyDeviceToHost));
        pkt::check_bf16_sum(got, data, ctx.rank());
        PKT_OK(yb->free());
        PKT_OK(xb->free());
      }
      cudaStreamDestroy(stream);
    });
    host_checks_and_empty_tensors(*kernel);
    all_gather_copy_engine();
  }
  return pkt::finish("jit_all_reduce_test");
}

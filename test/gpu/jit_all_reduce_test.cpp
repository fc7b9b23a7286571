// JIT from C++ on two GPUs: compiles templates/specs/all_reduce.mlir at run time (in process,
// or through a pkc executable when built as jit_pkc_all_reduce_test), launches it on every
// rank on the caller's stream, and checks against a float64 host sum; then checks that a
// wrongly typed launch is an error value, not a fault.
#include <chrono>
#include <cmath>

#include "harness.h"
#ifdef PK_JIT_PKC
#include <pk/jit/compile.h>
#else
#include <pk/jit/jit.h>
#endif

int main() {
  pkt::require_gpus(2);
  cudaSetDevice(0);
  auto start = std::chrono::steady_clock::now();
#ifdef PK_JIT_PKC
  auto text = pk::jit::read_spec(PK_ALL_REDUCE_SPEC);
  auto kernel = text.is_ok() ? pk::jit::compile_spec(PK_ALL_REDUCE_SPEC, *text, {},
                                                     pk::jit::pkc_frontend(PK_PKC))
                             : pk::Result<pk::jit::Kernel>(text.status());
#else
  auto kernel = pk::jit::compile_file(PK_ALL_REDUCE_SPEC);
#endif
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start).count();
  if (!kernel.is_ok()) {
    pkt::fail("compile: " + kernel.status().message());
    return pkt::finish("jit_all_reduce_test");
  }
  std::printf("compile: %.2f ms (%s)\n", ms, kernel->from_cache() ? "cache hit" : "compiled");

  pkt::run_ranks(2, [&](pk::Context& ctx) {
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
      PKT_CUDA(cudaDeviceSynchronize());
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
  return pkt::finish("jit_all_reduce_test");
}

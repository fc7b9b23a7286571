// The JIT path end to end: NVRTC-compile a kernel with the emitted signature through the
// embedded headers, load it with the lazily loaded driver, launch it on both ranks (on a
// one-GPU machine: one rank, then 2, 3 and 4 ranks sharing the GPU).
#include <unistd.h>

#include "harness.h"

namespace {

const char* kSource = R"(#include <pk/device/all.cuh>
extern "C" __global__ void name(pk::LaunchContext ctx, pk::SymTensor<pk::bf16> x,
                                pk::Tensor<pk::bf16> y) {
  // Every rank's x was written before the launch; the barrier also exercises the flags.
  if (!pk::barrier_block(ctx, 0)) return;
  const long long tile = 2048;
  for (long long off = blockIdx.x * tile; off < y.numel; off += gridDim.x * tile) {
    const long long n = y.numel - off < tile ? y.numel - off : tile;
    pk::reduce_tile<pk::ReduceOp::sum>(ctx, x, off, n, y.data + off);
  }
}
)";

void run_world(int world, long long n) {
  pkt::run_ranks(world, [n](pk::Context& ctx) {
    pk::CompileRequest req;
    req.source = kSource;
    req.program_name = "jit_reduce.cu";
    req.arch = "";  // the device's own
    auto mod = pk::Module::compile_and_load(req);
    PKT_OK(mod.is_ok() ? pk::Status::ok() : mod.status());
    auto kernel = (*mod)->kernel("name");
    PKT_OK(kernel.is_ok() ? pk::Status::ok() : kernel.status());
    PKT_OK(ctx.exchange().barrier());  // every rank loaded before any spins (shared context)

    auto xb = ctx.allocate(n * sizeof(pk::bf16));
    PKT_OK(xb.is_ok() ? pk::Status::ok() : xb.status());
    auto x = xb->sym_tensor<pk::bf16>({n});
    std::vector<std::vector<pk::bf16>> data;
    for (int r = 0; r < ctx.world(); ++r) data.push_back(pkt::random_data<pk::bf16>(n, 7 + r));
    PKT_CUDA(cudaMemcpy(xb->local(), data[ctx.rank()].data(), n * 2, cudaMemcpyHostToDevice));
    void* yp = nullptr;
    PKT_CUDA(cudaMalloc(&yp, n * 2));
    PKT_CUDA(pkt::poison(yp, n * 2));
    auto y = pk::make_tensor<pk::bf16>(yp, n * 2, {n});
    PKT_OK(y.is_ok() ? pk::Status::ok() : y.status());
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());

    pk::LaunchConfig cfg;
    cfg.grid = dim3(16);
    cfg.block = dim3(256);
    PKT_OK(pk::launch(ctx, *kernel, cfg, *x, *y));
    PKT_OK(ctx.check_errors());
    std::vector<pk::bf16> got(n);
    PKT_CUDA(cudaMemcpy(got.data(), yp, n * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (long long i = 0; i < n && bad < 5; ++i) {
      float want = 0;
      for (auto& d : data) want += pkt::to_f(d[i]);
      want = pkt::to_f(pkt::from_f<pk::bf16>(want));
      if (pkt::to_f(got[i]) != want) {
        ++bad;
        pkt::fail("y[" + std::to_string(i) + "] = " + std::to_string(pkt::to_f(got[i])) +
                  ", want " + std::to_string(want));
      }
    }
    PKT_OK(ctx.exchange().barrier());  // peers read x until every rank is done
    cudaFree(yp);
    PKT_OK(xb->free());
  });
}

}  // namespace

int main() {
  const std::vector<int> worlds = pkt::test_worlds(/*with_one=*/true);
  char tmpl[] = "/tmp/pkc-jit-test-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  setenv("PK_CACHE_DIR", tmpl, 1);
  const long long n = 100003;
  for (int world : worlds) {
    pkt::announce_world("nvrtc_launch_test", world);
    run_world(world, n);
  }
  std::system((std::string("rm -rf ") + tmpl).c_str());
  return pkt::finish("nvrtc_launch_test");
}

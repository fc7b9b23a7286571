// The foundation's end-to-end kernel on two GPUs (on one, at world size 1, then 2, 3 and 4
// ranks sharing it):
// pkc's CUDA for templates/specs/all_reduce.mlir (generated at build time), JIT-compiled
// through the runtime, checked against a float64 host reference on random bf16 inputs of
// sizes on and off the tile, then 2000 back-to-back launches alternating between two
// input/output pairs.
#include <cmath>
#include <fstream>
#include <sstream>

#include "harness.h"

namespace {

std::string readFile(const char *path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// "// pk-launch all_reduce threads=512 blocks=64 ..." -> the value of `key`.
int launchFact(const std::string &cu, const std::string &key) {
  size_t line = cu.find("// pk-launch ");
  size_t at = cu.find(" " + key + "=", line);
  return at == std::string::npos ? -1 : std::atoi(cu.c_str() + at + key.size() + 2);
}

// A second kernel with another grid and flag use, interleaved with the all-reduce: each
// kernel must get its own flag region and epoch from the runtime, or the waits would mix.
const char *kOther = R"(#include <pk/device/all.cuh>
extern "C" __global__ void other(pk::LaunchContext ctx) {
  if (threadIdx.x == 0) pk::barrier(ctx, blockIdx.x);
}
)";

}  // namespace

void run_world(int world, const std::string &cu, int threads, int blocks) {
  const std::vector<long long> sizes = {1, 7, 4095, 4096, 4097, 100003, (1 << 22) + 5};
  pkt::run_ranks(world, [&](pk::Context &ctx) {
    pk::CompileRequest req;
    req.source = cu;
    req.program_name = "all_reduce.cu";
    auto mod = pk::Module::compile_and_load(req);
    PKT_OK(mod.is_ok() ? pk::Status::ok() : mod.status());
    auto kernel = (*mod)->kernel("all_reduce");
    PKT_OK(kernel.is_ok() ? pk::Status::ok() : kernel.status());
    pk::LaunchConfig cfg;
    cfg.grid = dim3(pk::rank_grid(ctx, blocks));  // 1/W of the SMs when W ranks share the GPU
    cfg.block = dim3(threads);
    pk::CompileRequest otherReq;
    otherReq.source = kOther;
    otherReq.program_name = "other.cu";
    auto otherMod = pk::Module::compile_and_load(otherReq);
    PKT_OK(otherMod.is_ok() ? pk::Status::ok() : otherMod.status());
    auto other = (*otherMod)->kernel("other");
    PKT_OK(other.is_ok() ? pk::Status::ok() : other.status());
    pk::LaunchConfig otherCfg;
    otherCfg.grid = dim3(3);
    otherCfg.block = dim3(32);
    // Every rank has loaded before any launches: a module load can wait for a kernel that is
    // spinning for this rank (ranks sharing a GPU share its context).
    PKT_OK(ctx.exchange().barrier());

    for (long long n : sizes) {
      // Two input/output pairs with different data, used alternately: a launch that read a
      // landing buffer or an input the next launch overwrites too early shows up as the other
      // pair's values in the checked outputs.
      struct Pair {
        pk::SymmetricBuffer xb, yb;
        std::vector<std::vector<pk::bf16>> data;
      };
      std::vector<Pair> pairs(2);
      for (int p = 0; p < 2; ++p) {
        auto xb = ctx.allocate(n * sizeof(pk::bf16));
        PKT_OK(xb.is_ok() ? pk::Status::ok() : xb.status());
        auto yb = ctx.allocate(n * sizeof(pk::bf16));  // symmetric: pkc may choose two-shot
        PKT_OK(yb.is_ok() ? pk::Status::ok() : yb.status());
        pairs[p].xb = std::move(*xb);
        pairs[p].yb = std::move(*yb);
        for (int r = 0; r < ctx.world(); ++r)
          pairs[p].data.push_back(pkt::random_data<pk::bf16>(n, 1000 * r + int(n % 997) + 7919 * p));
        PKT_CUDA(cudaMemcpy(pairs[p].xb.local(), pairs[p].data[ctx.rank()].data(), n * 2,
                            cudaMemcpyHostToDevice));
        PKT_CUDA(pkt::poison(pairs[p].yb.local(), n * 2));
      }
      PKT_CUDA(pkt::sync_uploads());
      PKT_OK(ctx.exchange().barrier());

      // Many launches back to back: flags are monotone epochs, never reset.
      const int launches = n < 100000 ? 2000 : 20;
      for (int l = 0; l < launches; ++l) {
        Pair &p = pairs[l % 2];
        auto x = p.xb.sym_tensor<pk::bf16>({n});
        auto y = p.yb.sym_tensor<pk::bf16>({n});
        PKT_OK(x.is_ok() ? pk::Status::ok() : x.status());
        PKT_OK(y.is_ok() ? pk::Status::ok() : y.status());
        PKT_OK(pk::launch(ctx, *kernel, cfg, *x, *y));
        if (l % 3 == 0) PKT_OK(pk::launch(ctx, *other, otherCfg));
      }
      PKT_CUDA(cudaStreamSynchronize(ctx.stream()));
      PKT_OK(ctx.check_errors());

      for (Pair &p : pairs) {
        std::vector<pk::bf16> got(n);
        PKT_CUDA(cudaMemcpy(got.data(), p.yb.local(), n * 2, cudaMemcpyDeviceToHost));
        pkt::check_bf16_sum(got, p.data, ctx.rank());
      }
      PKT_OK(ctx.exchange().barrier());  // no rank frees while a peer may still read
      for (Pair &p : pairs) {
        PKT_OK(p.yb.free());
        PKT_OK(p.xb.free());
      }
    }
  });
}

int main() {
  const std::vector<int> worlds = pkt::test_worlds(/*with_one=*/true);
  const std::string cu = readFile(PK_EMITTED_ALL_REDUCE);
  const int threads = launchFact(cu, "threads"), blocks = launchFact(cu, "blocks");
  if (cu.empty() || threads <= 0 || blocks <= 0) {
    pkt::fail("cannot read the emitted kernel or its launch facts from " PK_EMITTED_ALL_REDUCE);
    return pkt::finish("emitted_all_reduce_test");
  }
  for (int world : worlds) {
    pkt::announce_world("emitted_all_reduce_test", world);
    run_world(world, cu, threads, blocks);
  }
  return pkt::finish("emitted_all_reduce_test");
}

// The shared-GPU mode itself (pk/runtime/shared_gpu.h), at 2, 3 and 4 ranks on GPU 0 of any
// machine with a GPU: a grid too large for W ranks to be resident together is refused with an
// error and nothing runs (no hang), a grid from pk::rank_grid runs; the registry and the
// co-residency arithmetic; a rank that never joins a collective, or joins another one, is an
// error after the exchange's deadline; two ranks on one stream are refused by Context::create.
#include <pk/device/all.cuh>

#include <chrono>

#include "harness.h"

namespace {

// Every block meets the same block of every peer: only completes when all ranks' blocks are
// resident at once, the situation the runtime's check exists for.
const char* kSource = R"(#include <pk/device/all.cuh>
extern "C" __global__ void meet(pk::LaunchContext ctx) {
  if (threadIdx.x == 0) pk::barrier(ctx, blockIdx.x);
}
)";

constexpr int kThreads = 1024;  // at most 2 blocks per SM (2048 threads), whatever the registers

std::vector<std::unique_ptr<pk::Exchange>> shared(int world) {
  auto ex = pk::create_shared_gpu_exchanges(world, 0);
  if (!ex.is_ok()) {
    pkt::fail("create_shared_gpu_exchanges(" + std::to_string(world) + "): " + ex.status().message());
    return {};
  }
  return std::move(*ex);
}

int device_sms() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  return sms;
}

// The launch path refuses a grid that fits one rank but not W, and runs pk::rank_grid's.
void too_large_grid(int world) {
  auto ex = shared(world);
  if (ex.empty()) return;
  const int sms = device_sms();
  pkt::run_ranks_on(ex, [&](pk::Context& ctx) {
    pk::CompileRequest req;
    req.source = kSource;
    req.program_name = "meet.cu";
    auto mod = pk::Module::compile_and_load(req);
    PKT_OK(mod.is_ok() ? pk::Status::ok() : mod.status());
    auto kernel = (*mod)->kernel("meet");
    PKT_OK(kernel.is_ok() ? pk::Status::ok() : kernel.status());
    PKT_OK(ctx.exchange().barrier());  // every rank loaded before any launches

    pk::LaunchConfig big;
    big.grid = dim3(2 * sms);  // a whole GPU's worth of 1024-thread blocks
    big.block = dim3(kThreads);
    const auto t0 = std::chrono::steady_clock::now();
    pk::Status s = pk::launch(ctx, *kernel, big);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    PKT_CHECK(!s.is_ok(), "a grid of " + std::to_string(2 * sms) + " blocks at world size " +
                              std::to_string(world) + " on one GPU was launched");
    PKT_CHECK(s.message().find("cannot be resident together") != std::string::npos &&
                  s.message().find("nothing was launched") != std::string::npos,
              "got '" + s.message() + "'");
    PKT_CHECK(ms < 1000, "the refusal took " + std::to_string(ms) + " ms");
    PKT_OK(ctx.check_errors());  // nothing ran, so nothing timed out

    pk::LaunchConfig fit;
    fit.grid = dim3(pk::rank_grid(ctx, 2 * sms));
    fit.block = dim3(kThreads);
    PKT_CHECK(int(fit.grid.x) == std::max(1, sms / world),
              "rank_grid gave " + std::to_string(fit.grid.x) + " blocks at world size " +
                  std::to_string(world));
    // The refused launch was retracted (its epoch given back), so these count from launch 1.
    for (int i = 0; i < 3; ++i) PKT_OK(pk::launch(ctx, *kernel, fit));
    PKT_OK(ctx.check_errors());
    PKT_OK(ctx.exchange().barrier());
  });
}

// ranks_sharing_device and check_co_resident's arithmetic, while W ranks exist and after.
void registry(int world) {
  const int sms = device_sms();
  {
    auto ex = shared(world);
    if (ex.empty()) return;
    PKT_CHECK(pk::ranks_sharing_device(0) == world,
              "ranks_sharing_device(0) = " + std::to_string(pk::ranks_sharing_device(0)));
    PKT_CHECK(ex[0]->ranks_per_device() == world, "ranks_per_device");
    const long long fit = 1ll * sms * 3 / world;  // 3 blocks per SM
    PKT_OK(pk::check_co_resident(0, "k", fit, 3));
    pk::Status s = pk::check_co_resident(0, "k", fit + 1, 3);
    PKT_CHECK(!s.is_ok() && s.message().find("kernel k") != std::string::npos,
              "grid " + std::to_string(fit + 1) + ": '" + s.message() + "'");
  }
  PKT_CHECK(pk::ranks_sharing_device(0) == 1, "the registry kept ranks after the exchanges died");
  PKT_OK(pk::check_co_resident(0, "k", 1ll << 20, 1));
}

// A rank that never joins: an error after PK_SHARED_GPU_TIMEOUT_S, not a hang; then the
// exchange is closed for every rank. A rank in another collective: a size mismatch.
void exchange_faults(int world) {
  setenv("PK_SHARED_GPU_TIMEOUT_S", "0.5", 1);
  {
    auto ex = shared(world);
    if (ex.empty()) return;
    const auto t0 = std::chrono::steady_clock::now();
    pk::Status s = ex[0]->barrier();  // the other ranks never come
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    PKT_CHECK(!s.is_ok() && s.message().find("1 of " + std::to_string(world) + " arrived") !=
                                std::string::npos,
              "got '" + s.message() + "'");
    PKT_CHECK(ms >= 450 && ms < 5000, "the barrier gave up after " + std::to_string(ms) + " ms");
    pk::Status later = ex[world - 1]->barrier();
    PKT_CHECK(!later.is_ok(), "a closed exchange accepted a barrier");
  }
  {
    auto ex = shared(world);
    if (ex.empty()) return;
    std::vector<std::thread> threads;
    std::vector<std::string> got(world);
    for (int r = 0; r < world; ++r)
      threads.emplace_back([&, r] {
        std::vector<char> out(8 * world);
        const char in[8] = {};
        // Rank 0 calls barrier while the others all-gather: they must not read its stale bytes.
        const pk::Status s = r == 0 ? ex[r]->barrier() : ex[r]->all_gather(in, out.data(), 8);
        got[r] = s.is_ok() ? "ok" : s.message();
      });
    for (auto& t : threads) t.join();
    for (int r = 1; r < world; ++r)
      PKT_CHECK(got[r].find("rank 0 gave 0 bytes") != std::string::npos,
                "rank " + std::to_string(r) + ": '" + got[r] + "'");
  }
  unsetenv("PK_SHARED_GPU_TIMEOUT_S");
}

// Ranks sharing a GPU on one stream would serialise kernels that wait for each other.
void one_stream_refused(int world) {
  auto ex = shared(world);
  if (ex.empty()) return;
  cudaSetDevice(0);
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
    return pkt::fail("cudaStreamCreateWithFlags");
  std::vector<std::thread> threads;
  std::vector<std::string> got(world);
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      cudaSetDevice(0);
      pk::ContextOptions o;
      o.stream = stream;
      auto ctx = pk::Context::create(*ex[r], o);
      got[r] = ctx.is_ok() ? "created" : ctx.status().message();
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r)
    PKT_CHECK(got[r].find("same stream") != std::string::npos,
              "rank " + std::to_string(r) + ": '" + got[r] + "'");
  cudaStreamDestroy(stream);
}

}  // namespace

int main() {
  pkt::safety_env();
  if (pkt::gpu_count() == 0) {
    std::printf("skipped: no GPU\n");
    return 77;
  }
  // Before the first CUDA context (see pk::create_shared_gpu_exchanges).
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  for (int world : {2, 3, 4}) {
    std::printf("shared_gpu_test: world size %d, ranks sharing GPU 0 (not NVLink)\n", world);
    registry(world);
    exchange_faults(world);
    one_stream_refused(world);
    too_large_grid(world);
  }
  return pkt::finish("shared_gpu_test");
}

// Ranks sharing one GPU: creating them, SM budgets, the co-residency check and the placement
// check (see pk/runtime/shared_gpu.h; the hub itself is shared_hub.cpp).
#include <pk/runtime/shared_gpu.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include <pk/device/launch_context.cuh>
#include <pk/runtime/checks.h>
#include <pk/runtime/context.h>
#include <pk/runtime/cuda_check.h>

#include "shared_hub.h"

namespace pk {
namespace {

// The SM count, asked once per device: rank_grid runs on every launch.
Result<int> device_sms(int device) {
  static std::atomic<int> cached[64];
  const bool cacheable = device >= 0 && device < 64;
  if (cacheable)
    if (int sms = cached[device].load(std::memory_order_relaxed)) return sms;
  int sms = 0;
  PK_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (cacheable) cached[device].store(sms, std::memory_order_relaxed);
  return sms;
}

}  // namespace

Result<std::vector<std::unique_ptr<Exchange>>> create_shared_gpu_exchanges(int world, int device) {
  PK_RETURN_IF_ERROR(check_world(world).with_context("shared-GPU ranks"));
  // Before the first context only (see the header): eager module loading, and a hardware queue
  // per stream so that one rank's spinning kernel never queues another rank's behind it.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  int count = 0;
  PK_CUDA_TRY(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    return Status::error("shared-GPU ranks: no device " + std::to_string(device) + " (found " +
                         std::to_string(count) + ")");
  double timeout_s = 60;
  if (const char* t = std::getenv("PK_SHARED_GPU_TIMEOUT_S"); t && *t) timeout_s = std::atof(t);
  return detail::make_hub_exchanges(world, device, timeout_s);
}

Result<int> shared_gpu_ranks_from_env() {
  const char* v = std::getenv("PK_SHARED_GPU_RANKS");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long w = std::strtol(v, &end, 10);
  if (*end != '\0' || w < 1 || w > PK_MAX_RANKS)
    return Status::error(std::string("PK_SHARED_GPU_RANKS='") + v + "' is not a world size in [1, " +
                         std::to_string(PK_MAX_RANKS) + "]");
  return static_cast<int>(w);
}

Result<std::vector<std::unique_ptr<Exchange>>> create_single_process_exchanges(int world) {
  PK_ASSIGN_OR_RETURN(int shared, shared_gpu_ranks_from_env());
  if (shared == 0) return NcclExchange::create_single_process(world);
  if (shared != world)
    return Status::error("PK_SHARED_GPU_RANKS=" + std::to_string(shared) + " but the program asks for " +
                         std::to_string(world) + " ranks");
  return create_shared_gpu_exchanges(world, 0);
}

bool shared_gpu_ranks_exist() { return detail::hubs_exist(); }

int ranks_sharing_device(int device) {
  if (!detail::hubs_exist()) return 1;
  return std::max(1, detail::hub_ranks_on(device));
}

Result<int> rank_sm_count(const Context& ctx) {
  PK_ASSIGN_OR_RETURN(int sms, device_sms(ctx.device()));
  return std::max(1, sms / ctx.exchange().ranks_per_device());
}

int rank_grid(const Context& ctx, int blocks, int blocks_per_sm) {
  const int w = std::max(1, ctx.exchange().ranks_per_device());
  auto sms = device_sms(ctx.device());
  if (!sms.is_ok()) return blocks;  // the launch reports the device error
  // At most blocks_per_sm per SM even with a GPU of its own: kernels with a grid-wide barrier
  // need every block resident (a GPU with fewer SMs than pkc's grid gets a smaller one).
  return std::max(1, std::min(blocks, std::max(1, blocks_per_sm) * *sms / w));
}

Status check_co_resident(int device, const std::string& kernel, long long grid,
                         int blocks_per_sm) {
  const int w = ranks_sharing_device(device);
  if (w <= 1) return Status::ok();
  PK_ASSIGN_OR_RETURN(int sms, device_sms(device));
  const long long fit = static_cast<long long>(sms) * blocks_per_sm;
  if (static_cast<long long>(w) * grid <= fit) return Status::ok();
  return Status::error(
      "kernel " + kernel + ": " + std::to_string(w) + " ranks share GPU " +
      std::to_string(device) + ", and " + std::to_string(w) + " grids of " +
      std::to_string(grid) + " blocks cannot be resident together (" + std::to_string(sms) +
      " SMs x " + std::to_string(blocks_per_sm) + " blocks each = " + std::to_string(fit) +
      "); their waits for each other would never finish, so nothing was launched. Use at most " +
      std::to_string(fit / w) + " blocks per rank (pk::rank_grid sizes pkc's kernels)");
}

Status check_rank_placement(Exchange& ex, cudaStream_t stream) {
  struct Place {
    long long host;
    int pid;
    char bus[32];
    unsigned long long stream;
  };
  Place mine{};
  mine.host = gethostid();
  mine.pid = static_cast<int>(getpid());
  PK_CUDA_TRY(cudaDeviceGetPCIBusId(mine.bus, sizeof(mine.bus), ex.device()));
  mine.stream = reinterpret_cast<unsigned long long>(stream);
  std::vector<Place> all(static_cast<std::size_t>(ex.world()));
  PK_RETURN_IF_ERROR(ex.all_gather(&mine, all.data(), sizeof(Place)));
  for (int a = 0; a < ex.world(); ++a)
    for (int b = a + 1; b < ex.world(); ++b) {
      const Place &p = all[a], &q = all[b];
      if (p.host != q.host || std::strncmp(p.bus, q.bus, sizeof(p.bus)) != 0) continue;
      const std::string who = "ranks " + std::to_string(a) + " and " + std::to_string(b);
      if (p.pid != q.pid && !std::getenv("PK_ALLOW_SHARED_GPU_PROCESSES"))
        return Status::error(
            who + " are different processes (" + std::to_string(p.pid) + ", " +
            std::to_string(q.pid) + ") on the same GPU " + p.bus +
            ": without MPS their kernels do not run at the same time, so their waits for each "
            "other would time out. Run the ranks as threads of one process with "
            "PK_SHARED_GPU_RANKS=W (pk::create_shared_gpu_exchanges), or set "
            "PK_ALLOW_SHARED_GPU_PROCESSES=1 under MPS");
      if (p.pid == q.pid && p.stream == q.stream)
        return Status::error(who + " share GPU " + std::string(p.bus) +
                             " and would launch on the same stream: each needs its own, since "
                             "their kernels wait for each other");
    }
  return Status::ok();
}

Status refuse_shared_gpu(const std::string& tool) {
  const char* w = std::getenv("PK_SHARED_GPU_RANKS");
  if (!(w && *w) && !shared_gpu_ranks_exist()) return Status::ok();
  return Status::error(tool + " refuses the shared-GPU mode (PK_SHARED_GPU_RANKS): ranks "
                              "sharing one GPU test correctness, they have no links to measure "
                              "(shared GPU, not NVLink); unset it to benchmark");
}

}  // namespace pk

// Ranks sharing one GPU: the in-process hub exchange, the per-device registry of sharing
// ranks, SM budgets and the co-residency check (see pk/runtime/shared_gpu.h).
#include <pk/runtime/shared_gpu.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <pk/device/launch_context.cuh>
#include <pk/runtime/checks.h>
#include <pk/runtime/context.h>
#include <pk/runtime/cuda_check.h>

namespace pk {
namespace {

// Ranks sharing each device, summed over the live hubs of this process.
std::atomic<int> g_hubs{0};
std::mutex g_registry_mutex;
std::map<int, int>& registry() {
  static std::map<int, int> m;
  return m;
}

// The rendezvous of W threads: a barrier with a deadline, and byte slots for all-gathers.
// Slots alternate between two sets by round parity, so one barrier per all-gather suffices:
// a rank can only write a set again two rounds later, after every rank has read it.
class Hub {
 public:
  Hub(int world, int device, double timeout_s)
      : world_(world), device_(device),
        timeout_(std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000))) {
    for (auto& s : slots_) s.assign(static_cast<std::size_t>(world), std::string());
    std::lock_guard<std::mutex> l(g_registry_mutex);
    registry()[device_] += world_;
    g_hubs.fetch_add(1);
  }
  ~Hub() {
    std::lock_guard<std::mutex> l(g_registry_mutex);
    if ((registry()[device_] -= world_) <= 0) registry().erase(device_);
    g_hubs.fetch_sub(1);
  }

  Status all_gather(int rank, const void* in, void* out, std::size_t bytes) {
    std::unique_lock<std::mutex> l(mutex_);
    std::vector<std::string>& set = slots_[round_ & 1];
    set[rank].assign(static_cast<const char*>(in), bytes);
    PK_RETURN_IF_ERROR(arrive(rank, l));
    for (int r = 0; r < world_; ++r)
      if (set[r].size() != bytes)
        return Status::error("shared-GPU all-gather: rank " + std::to_string(r) + " gave " +
                             std::to_string(set[r].size()) + " bytes, rank " +
                             std::to_string(rank) + " " + std::to_string(bytes) +
                             " (the ranks are not making the same collective calls)");
    for (int r = 0; r < world_; ++r)
      std::memcpy(static_cast<char*>(out) + r * bytes, set[r].data(), bytes);
    return Status::ok();
  }

  Status barrier(int rank) {
    std::unique_lock<std::mutex> l(mutex_);
    // An all-gather meeting this barrier sees a size mismatch, not stale bytes.
    slots_[round_ & 1][rank].clear();
    return arrive(rank, l);
  }

 private:
  Status arrive(int rank, std::unique_lock<std::mutex>& l) {
    if (broken_) return Status::error(why_);
    const unsigned long long round = round_;
    if (++arrived_ == world_) {
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
      return Status::ok();
    }
    const bool done = cv_.wait_for(l, timeout_, [&] { return round_ != round || broken_; });
    if (done && round_ != round) return Status::ok();
    if (!broken_) {
      broken_ = true;
      why_ = "shared-GPU exchange: rank " + std::to_string(rank) + " waited " +
             std::to_string(timeout_.count() / 1000.0) + " s for the other ranks (" +
             std::to_string(arrived_) + " of " + std::to_string(world_) +
             " arrived); a rank left or is stuck, so this exchange is closed "
             "(PK_SHARED_GPU_TIMEOUT_S sets the limit)";
      cv_.notify_all();
    }
    return Status::error(why_);
  }

  const int world_, device_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  unsigned long long round_ = 0;
  bool broken_ = false;
  std::string why_;
  std::vector<std::string> slots_[2];
};

class SharedGpuExchange final : public Exchange {
 public:
  SharedGpuExchange(int rank, int world, int device, std::shared_ptr<Hub> hub)
      : rank_(rank), world_(world), device_(device), hub_(std::move(hub)) {}
  int rank() const override { return rank_; }
  int world() const override { return world_; }
  int device() const override { return device_; }
  int ranks_per_device() const override { return world_; }
  Status all_gather(const void* in, void* out, std::size_t bytes) override {
    return hub_->all_gather(rank_, in, out, bytes);
  }
  Status barrier() override { return hub_->barrier(rank_); }

 private:
  int rank_, world_, device_;
  std::shared_ptr<Hub> hub_;
};

Result<int> device_sms(int device) {
  int sms = 0;
  PK_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
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
  auto hub = std::make_shared<Hub>(world, device, timeout_s);
  std::vector<std::unique_ptr<Exchange>> out;
  for (int r = 0; r < world; ++r)
    out.push_back(std::make_unique<SharedGpuExchange>(r, world, device, hub));
  return out;
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

bool shared_gpu_ranks_exist() { return g_hubs.load(std::memory_order_relaxed) > 0; }

int ranks_sharing_device(int device) {
  if (!shared_gpu_ranks_exist()) return 1;
  std::lock_guard<std::mutex> l(g_registry_mutex);
  auto it = registry().find(device);
  return it == registry().end() ? 1 : std::max(1, it->second);
}

Result<int> rank_sm_count(const Context& ctx) {
  PK_ASSIGN_OR_RETURN(int sms, device_sms(ctx.device()));
  return std::max(1, sms / ctx.exchange().ranks_per_device());
}

int rank_grid(const Context& ctx, int blocks) {
  const int w = ctx.exchange().ranks_per_device();
  if (w <= 1) return blocks;
  auto sms = device_sms(ctx.device());
  if (!sms.is_ok()) return blocks;  // the launch reports the device error
  return std::max(1, std::min(blocks, *sms / w));
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

}  // namespace pk

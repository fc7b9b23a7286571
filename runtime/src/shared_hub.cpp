// Ranks sharing one GPU: the hub that joins their threads, and the registry of devices they
// share (see shared_hub.h).
#include "shared_hub.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace pk::detail {
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
    launches_.assign(static_cast<std::size_t>(world), 0);
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

  // Launch n of `rank` waits until every rank has reached launch n, so that launch n-1 of every
  // rank is queued first (Exchange::order_launch). Past the bound it goes ahead: the kernels'
  // own bounded waits then report a rank that never launched.
  void order_launch(int rank, unsigned long long n, unsigned long long timeout_ns) {
    std::unique_lock<std::mutex> l(launch_mutex_);
    launches_[rank] = n;
    launch_cv_.notify_all();
    if (n <= 1) return;  // nothing queued before the first launch
    launch_cv_.wait_for(l, std::chrono::nanoseconds(timeout_ns), [&] {
      for (unsigned long long m : launches_)
        if (m < n) return false;
      return true;
    });
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
  std::mutex launch_mutex_;  // apart from mutex_: a launch never waits for an exchange
  std::condition_variable launch_cv_;
  std::vector<unsigned long long> launches_;  // per rank, the launch it has reached
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
  void order_launch(unsigned long long n, unsigned long long timeout_ns) override {
    hub_->order_launch(rank_, n, timeout_ns);
  }

 private:
  int rank_, world_, device_;
  std::shared_ptr<Hub> hub_;
};

}  // namespace

std::vector<std::unique_ptr<Exchange>> make_hub_exchanges(int world, int device, double timeout_s) {
  auto hub = std::make_shared<Hub>(world, device, timeout_s);
  std::vector<std::unique_ptr<Exchange>> out;
  for (int r = 0; r < world; ++r)
    out.push_back(std::make_unique<SharedGpuExchange>(r, world, device, hub));
  return out;
}

bool hubs_exist() { return g_hubs.load(std::memory_order_relaxed) > 0; }

int hub_ranks_on(int device) {
  std::lock_guard<std::mutex> l(g_registry_mutex);
  auto it = registry().find(device);
  return it == registry().end() ? 0 : it->second;
}

}  // namespace pk::detail

// Barrier: 100000 back-to-back launches, and a racing rank that breaks a reset-and-compare-equal
// barrier (test-only variant, expected to time out) but not pk::barrier (monotone epochs). On
// 2 GPUs, or at 2, 3 and 4 ranks sharing one GPU.
#include <pk/device/all.cuh>

#include <atomic>
#include <chrono>

#include "harness.h"

namespace {

__device__ void spin_ns(unsigned long long ns) {
  const unsigned long long t0 = pk::globaltimer_ns();
  while (pk::globaltimer_ns() - t0 < ns) {
  }
}

__global__ void k_barrier(pk::LaunchContext c, int slot) {
  pk::barrier_block(c, slot);
}

// One rank dawdles after signalling, so the other can finish this launch and signal again.
__global__ void k_barrier_slow_rank(pk::LaunchContext c, int slot, int slow, unsigned long long ns) {
  if (threadIdx.x != 0) return;
  pk::signal_all(c, slot);
  if (c.rank == slow) spin_ns(ns);
  pk::wait_ge(c, slot, c.epoch * (c.world - 1));
}

// The broken design, for contrast: wait until the flag EQUALS world-1, then reset it to 0.
__global__ void k_barrier_reset_equal(pk::LaunchContext c, int slot, int slow,
                                      unsigned long long ns) {
  if (threadIdx.x != 0) return;
  pk::signal_all(c, slot);
  if (c.rank == slow) spin_ns(ns);
  unsigned long long* f = c.flags[c.rank] + slot;
  const unsigned long long want = c.world - 1;
  const unsigned long long t0 = pk::globaltimer_ns();
  unsigned long long v;
  while ((v = pk::ld_acquire_sys(f)) != want) {
    if (pk::globaltimer_ns() - t0 > c.timeout_ns) {
      pk::record_wait_timeout(c, slot, want, v);
      return;
    }
  }
  pk::st_relaxed_sys(f, 0);
}

void many_launches(pk::Context& ctx) {
  constexpr int kLaunches = 100000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kLaunches; ++i) {
    k_barrier<<<1, 32, 0, ctx.stream()>>>(ctx.make_launch_context(), 1);
    // A thousand kernels queued per stream: where ranks share a GPU their streams may share a
    // hardware queue, which only works because Context orders the ranks' launches
    // (Exchange::order_launch). After a timeout the counters disagree and every later launch
    // would wait its full bound: all ranks stop together at the first error any of them saw.
    if (i % 1000 == 999) {
      pk::Status s = ctx.check_errors();
      if (!s.is_ok())
        pkt::fail("barrier launch " + std::to_string(i + 1) + " of " + std::to_string(kLaunches) +
                  ": " + s.message());
      const char mine = s.is_ok() ? 0 : 1;
      std::vector<char> all(ctx.world());
      PKT_OK(ctx.exchange().all_gather(&mine, all.data(), 1));
      for (char bad : all)
        if (bad) return;
    }
  }
  PKT_OK(ctx.check_errors());
  PKT_CUDA(cudaGetLastError());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> l(pkt::out_mutex());
  std::printf("rank %d: %d barrier launches in %.2f s (%.2f us each)\n", ctx.rank(), kLaunches, s,
              s / kLaunches * 1e6);
}

// Loads this file's kernels (lazily loaded modules otherwise load at the first launch, which
// can wait for another rank's spinning kernel where ranks share the GPU), then meets the peers.
void load_kernels(pk::Context& ctx) {
  cudaFuncAttributes attr;
  PKT_CUDA(cudaFuncGetAttributes(&attr, k_barrier));
  PKT_CUDA(cudaFuncGetAttributes(&attr, k_barrier_slow_rank));
  PKT_CUDA(cudaFuncGetAttributes(&attr, k_barrier_reset_equal));
  PKT_OK(ctx.exchange().barrier());
}

// One barrier launch and a host barrier: every rank's first launch (slower than later ones) is
// done before a test whose short timeout assumes that ranks start within a few milliseconds.
// Epochs count every launch of a context, so a later pk::barrier must use the same slot.
void warm_up(pk::Context& ctx, int slot) {
  k_barrier<<<1, 32, 0, ctx.stream()>>>(ctx.make_launch_context(), slot);
  PKT_OK(ctx.check_errors());
  PKT_OK(ctx.exchange().barrier());
}

void run_world(int world) {
  pkt::run_ranks(world, [](pk::Context& ctx) {
    load_kernels(ctx);
    many_launches(ctx);
  });

  constexpr int kRaces = 20;
  constexpr unsigned long long kDelay = 2'000'000;  // 2 ms: far longer than a launch
  pk::ContextOptions opt;
  opt.timeout_ns = 50'000'000;  // 50 ms

  pkt::run_ranks(world, [&](pk::Context& ctx) {
    load_kernels(ctx);
    warm_up(ctx, 2);
    for (int i = 0; i < kRaces; ++i)
      k_barrier_slow_rank<<<1, 32, 0, ctx.stream()>>>(ctx.make_launch_context(), 2, 1, kDelay);
    pk::Status s = ctx.check_errors();
    PKT_CHECK(s.is_ok(), "pk::barrier with a racing rank: " + s.message());
  }, opt);

  std::atomic<int> timeouts{0};
  pkt::run_ranks(world, [&](pk::Context& ctx) {
    load_kernels(ctx);
    warm_up(ctx, 4);  // slot 3 counts only the reset-and-compare-equal kernel's signals
    for (int i = 0; i < kRaces; ++i)
      k_barrier_reset_equal<<<1, 32, 0, ctx.stream()>>>(ctx.make_launch_context(), 3, 1, kDelay);
    pk::Status s = ctx.check_errors();
    if (!s.is_ok()) {
      ++timeouts;
      std::lock_guard<std::mutex> l(pkt::out_mutex());
      std::printf("reset-and-compare-equal barrier failed as expected: %s\n", s.message().c_str());
    }
  }, opt);
  PKT_CHECK(timeouts.load() > 0, "the reset-and-compare-equal barrier should have timed out at world size " +
                                     std::to_string(world));
}

}  // namespace

int main() {
  for (int world : pkt::test_worlds()) {
    pkt::announce_world("barrier_test", world);
    run_world(world);
  }
  return pkt::finish("barrier_test");
}

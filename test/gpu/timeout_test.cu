// A wait whose signal never comes (a flag wait, and an LL poll) returns a timeout error
// carrying the diagnostic: on 2 GPUs, or at 2, 3 and 4 ranks sharing one GPU.
#include <pk/device/all.cuh>

#include <chrono>

#include "harness.h"

namespace {

constexpr int kSlot = 5;
constexpr int kWaitingBlock = 3;

__global__ void k_wait_forever(pk::LaunchContext c) {
  if (threadIdx.x == 0 && blockIdx.x == kWaitingBlock && c.rank == 0)
    pk::wait_ge(c, kSlot, c.epoch);  // no rank ever signals
}

// An LL poll for words rank 1 never stores.
__global__ void k_ll_wait_forever(pk::LaunchContext c) {
  pk::Vec16 v;
  if (threadIdx.x == 0 && blockIdx.x == kWaitingBlock && c.rank == 0)
    pk::ll::get(c, pk::ll::slot(c, 0, static_cast<int>(c.epoch & 1), 1), 0, pk::ll::tag(c.epoch), 1, v);
}

void run_world(int world, const pk::ContextOptions& opt) {
  pkt::run_ranks(world, [](pk::Context& ctx) {
    const auto t0 = std::chrono::steady_clock::now();
    k_wait_forever<<<8, 32, 0, ctx.stream()>>>(ctx.make_launch_context());
    pk::Status s = ctx.check_errors();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ctx.rank() != 0) {
      PKT_CHECK(s.is_ok(), s.message());
      return;
    }
    const std::string want = "rank 0 timed out waiting on flag slot 5 in block 3: expected >= 1, saw 0";
    PKT_CHECK(s.message() == want, "got '" + s.message() + "'");
    PKT_CHECK(ms >= 45 && ms < 5000, "took " + std::to_string(ms) + " ms");
    // The slot is cleared after reporting.
    PKT_OK(ctx.check_errors());
  }, opt);
  pkt::run_ranks(world, [](pk::Context& ctx) {
    // A named kernel's context carries its landing and LL slots (allocated by every rank).
    auto lc = ctx.make_launch_context("ll_wait_forever");
    PKT_OK(lc.is_ok() ? pk::Status::ok() : lc.status());
    if (ctx.rank() == 0) k_ll_wait_forever<<<8, 32, 0, ctx.stream()>>>(*lc);
    pk::Status s = ctx.check_errors();
    if (ctx.rank() != 0) {
      PKT_CHECK(s.is_ok(), s.message());
    } else {
      // Launch 1 of the region: tag 2 (tags are never 0, the zeroed words' value).
      const std::string want =
          "rank 0 timed out waiting for rank 1's LL words in block 3: expected tag 2, saw 0";
      PKT_CHECK(s.message() == want, "got '" + s.message() + "'");
      PKT_OK(ctx.check_errors());
    }
    PKT_OK(ctx.exchange().barrier());  // rank 1 keeps its LL slots until rank 0 is done
  }, opt);
}

}  // namespace

int main() {
  pk::ContextOptions opt;
  opt.timeout_ns = 50'000'000;  // 50 ms
  for (int world : pkt::test_worlds()) {
    pkt::announce_world("timeout_test", world);
    run_world(world, opt);
  }
  return pkt::finish("timeout_test");
}

// The shared-GPU ranks' hub without a GPU: all-gathers in rank order over many rounds from
// threads that arrive in any order, barriers, the registry of sharing ranks, and the errors
// that replace hangs (a rank that never comes, a rank in another collective). Also
// PK_SHARED_GPU_RANKS parsing and the co-residency check's arithmetic needs no device when
// no rank shares it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <pk/runtime/shared_gpu.h>

#include "shared_hub.h"

namespace {

TEST(SharedHub, AllGathersInRankOrderOverManyRounds) {
  for (int world : {1, 2, 3, 4, 7}) {
    auto ex = pk::detail::make_hub_exchanges(world, 5, 30);
    std::vector<std::thread> threads;
    std::vector<int> bad(world, 0);
    for (int r = 0; r < world; ++r)
      threads.emplace_back([&, r] {
        std::mt19937 g(r);
        for (int round = 0; round < 300; ++round) {
          if (g() % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(g() % 200));
          const long long mine[2] = {round, r};
          std::vector<long long> all(2 * world);
          if (!ex[r]->all_gather(mine, all.data(), sizeof(mine)).is_ok()) ++bad[r];
          for (int q = 0; q < world; ++q)
            if (all[2 * q] != round || all[2 * q + 1] != q) ++bad[r];
          if (round % 7 == 0 && !ex[r]->barrier().is_ok()) ++bad[r];
        }
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < world; ++r) EXPECT_EQ(bad[r], 0) << "world " << world << " rank " << r;
    EXPECT_EQ(ex[0]->ranks_per_device(), world);
    EXPECT_EQ(ex[world - 1]->device(), 5);
  }
}

TEST(SharedHub, RegistryCountsLiveRanksPerDevice) {
  EXPECT_FALSE(pk::detail::hubs_exist());
  {
    auto a = pk::detail::make_hub_exchanges(3, 6, 1);
    auto b = pk::detail::make_hub_exchanges(2, 6, 1);
    EXPECT_TRUE(pk::shared_gpu_ranks_exist());
    EXPECT_EQ(pk::ranks_sharing_device(6), 5);
    EXPECT_EQ(pk::ranks_sharing_device(7), 1);
    a.clear();
    EXPECT_EQ(pk::ranks_sharing_device(6), 2);
  }
  EXPECT_FALSE(pk::shared_gpu_ranks_exist());
  EXPECT_EQ(pk::ranks_sharing_device(6), 1);
  // Nobody shares device 6 now: any grid is fine, and no device is asked.
  EXPECT_TRUE(pk::check_co_resident(6, "k", 1 << 20, 1).is_ok());
}

TEST(SharedHub, AMissingRankIsAnErrorAfterTheDeadline) {
  auto ex = pk::detail::make_hub_exchanges(3, 0, 0.2);
  const auto t0 = std::chrono::steady_clock::now();
  pk::Status s = ex[1]->barrier();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("rank 1 waited"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("1 of 3 arrived"), std::string::npos) << s.message();
  EXPECT_GE(ms, 150);
  EXPECT_LT(ms, 5000);
  // Closed for everyone, at once.
  char in = 0, out[3];
  EXPECT_FALSE(ex[0]->all_gather(&in, out, 1).is_ok());
}

TEST(SharedHub, ARankInAnotherCollectiveIsAnError) {
  auto ex = pk::detail::make_hub_exchanges(2, 0, 5);
  pk::Status s0, s1;
  std::thread t([&] { s0 = ex[0]->barrier(); });
  char in[4] = {1, 2, 3, 4}, out[8];
  s1 = ex[1]->all_gather(in, out, 4);
  t.join();
  EXPECT_TRUE(s0.is_ok());
  ASSERT_FALSE(s1.is_ok());
  EXPECT_NE(s1.message().find("rank 0 gave 0 bytes"), std::string::npos) << s1.message();
}

// Launch n of a rank starts only after every rank has reached launch n, i.e. has queued its
// launch n-1: the record of "queued" launches never shows a rank two ahead of another.
TEST(SharedHub, LaunchesAreOrderedAcrossRanks) {
  for (int world : {2, 3, 5}) {
    auto ex = pk::detail::make_hub_exchanges(world, 0, 30);
    std::mutex m;
    std::vector<unsigned long long> queued(world, 0);
    int violations = 0;
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r)
      threads.emplace_back([&, r] {
        std::mt19937 g(r + 11);
        for (unsigned long long n = 1; n <= 400; ++n) {
          if (g() % 6 == 0) std::this_thread::sleep_for(std::chrono::microseconds(g() % 300));
          ex[r]->order_launch(n, 10'000'000'000ull);
          std::lock_guard<std::mutex> l(m);
          for (unsigned long long q : queued)
            if (q + 1 < n) ++violations;  // some rank has not queued launch n-1
          queued[r] = n;
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(violations, 0) << "world " << world;
  }
}

// A rank that never launches holds the others back only for the bound, then they go ahead.
TEST(SharedHub, LaunchOrderWaitsAreBounded) {
  auto ex = pk::detail::make_hub_exchanges(2, 0, 30);
  ex[0]->order_launch(1, 1'000'000'000ull);  // the first launch waits for nobody's earlier one
  const auto t0 = std::chrono::steady_clock::now();
  ex[0]->order_launch(2, 100'000'000ull);  // rank 1 never reached launch 2
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(ms, 90);
  EXPECT_LT(ms, 5000);
}

TEST(SharedGpuEnv, ParsesTheWorldSize) {
  unsetenv("PK_SHARED_GPU_RANKS");
  auto none = pk::shared_gpu_ranks_from_env();
  ASSERT_TRUE(none.is_ok());
  EXPECT_EQ(*none, 0);
  setenv("PK_SHARED_GPU_RANKS", "3", 1);
  auto three = pk::shared_gpu_ranks_from_env();
  ASSERT_TRUE(three.is_ok());
  EXPECT_EQ(*three, 3);
  EXPECT_FALSE(pk::refuse_shared_gpu("bench").is_ok());
  for (const char* bad : {"0", "17", "2x", "-1"}) {
    setenv("PK_SHARED_GPU_RANKS", bad, 1);
    EXPECT_FALSE(pk::shared_gpu_ranks_from_env().is_ok()) << bad;
  }
  unsetenv("PK_SHARED_GPU_RANKS");
  EXPECT_TRUE(pk::refuse_shared_gpu("bench").is_ok());
}

}  // namespace

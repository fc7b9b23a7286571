// Tests cache keys (every input matters) and the cache's write/read round trip.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <pk/runtime/compile_cache.h>
#include <pk/runtime/nvrtc_compile.h>

namespace {

TEST(CacheKey, EveryInputChangesTheKey) {
  const std::string base = pk::cache_key_hash(pk::cache_key_text("src", {"-O3"}, "sm_90a"));
  EXPECT_EQ(base.size(), 32u);
  EXPECT_EQ(base, pk::cache_key_hash(pk::cache_key_text("src", {"-O3"}, "sm_90a")));
  EXPECT_NE(base, pk::cache_key_hash(pk::cache_key_text("src2", {"-O3"}, "sm_90a")));
  EXPECT_NE(base, pk::cache_key_hash(pk::cache_key_text("src", {"-O2"}, "sm_90a")));
  EXPECT_NE(base, pk::cache_key_hash(pk::cache_key_text("src", {"-O3"}, "sm_100a")));
  // Changed headers (or another NVRTC) under the same source change the key too.
  EXPECT_NE(base, pk::cache_key_hash(pk::cache_key_text("src", {"-O3"}, "sm_90a", "headers 1")));
  EXPECT_NE(pk::cache_key_text("src", {}, "x", "headers 1"), pk::cache_key_text("src", {}, "x", "headers 2"));
  // Field boundaries are unambiguous.
  EXPECT_NE(pk::cache_key_text("", {"a", "b"}, "x"), pk::cache_key_text("", {"ab"}, "x"));
  EXPECT_NE(pk::cache_key_text("s", {}, "x"), pk::cache_key_text("s", {""}, "x"));
  // The version is part of the key.
  EXPECT_NE(pk::cache_key_text("s", {}, "x").find(pk::pkc_version()), std::string::npos);
}

class CacheDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pkc-cache-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
};

TEST_F(CacheDir, RoundTripAndMiss) {
  const std::string key = pk::cache_key_text("kernel", {"-a"}, "sm_90a");
  EXPECT_FALSE(pk::cache_read(dir_, key).has_value());
  std::vector<char> data = {'c', 'u', 'b', 'i', 'n', '\0', 'x'};
  ASSERT_TRUE(pk::cache_write(dir_, key, data).is_ok());
  auto hit = pk::cache_read(dir_, key);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*hit, data);
  EXPECT_FALSE(pk::cache_read(dir_, pk::cache_key_text("kernel", {"-b"}, "sm_90a")).has_value());
}

TEST_F(CacheDir, ConcurrentWritersLeaveAWholeEntry) {
  const std::string key = pk::cache_key_text("same", {}, "sm_90a");
  std::vector<char> data(1 << 20, 'z');
  std::vector<std::thread> ts;
  for (int i = 0; i < 8; ++i)
    ts.emplace_back([&] { EXPECT_TRUE(pk::cache_write(dir_, key, data).is_ok()); });
  for (auto& t : ts) t.join();
  auto hit = pk::cache_read(dir_, key);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*hit, data);
}

TEST_F(CacheDir, DirectoryFromEnvironment) {
  const std::string nested = dir_ + "/a/b";
  setenv("PK_CACHE_DIR", nested.c_str(), 1);
  auto d = pk::cache_dir();
  unsetenv("PK_CACHE_DIR");
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  EXPECT_EQ(*d, nested);
  EXPECT_EQ(access(nested.c_str(), W_OK), 0);
}

}  // namespace

// The JIT keys its spec-level cache with this digest too: a header changed under the same pkc
// version must change it (the digest hashes every embedded header's text).
TEST(Cache, ToolchainDigestCoversHeaders) {
  const std::string& d = pk::toolchain_digest();
  EXPECT_NE(d.find("nvrtc "), std::string::npos);
  EXPECT_NE(d.find(" headers "), std::string::npos);
  EXPECT_EQ(d, pk::toolchain_digest());
}

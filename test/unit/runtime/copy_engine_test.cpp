// Tests the host side of the copy-engine route that needs no GPU: reading the route from a
// `// pk-launch` line, message sizes, and that the sync kernel compiles for sm_90a.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <pk/runtime/copy_engine.h>
#include <pk/runtime/nvrtc_compile.h>

namespace {

const std::string kLine =
    "// pk-launch scatter threads=512 blocks=132 flag_slots=7 copy_engine=scatter:8388608:2:0:1 "
    "args=!pk.tensor<?xf32>,index,!pk.sym<?xf32>";

TEST(CopyEngineRoute, ReadsEveryField) {
  auto r = pk::parse_copy_engine_route(kLine);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_TRUE(r->has_value());
  const pk::CopyEngineRoute& route = **r;
  EXPECT_EQ(route.kind, pk::CopyCollective::scatter);
  EXPECT_EQ(route.min_bytes, 8388608);
  EXPECT_EQ(route.x, 2);
  EXPECT_EQ(route.y, 0);
  EXPECT_EQ(route.root, 1);
  EXPECT_STREQ(pk::copy_collective_name(route.kind), "scatter");
}

TEST(CopyEngineRoute, NoFieldIsNoRoute) {
  auto r = pk::parse_copy_engine_route(
      "// pk-launch all_reduce threads=512 blocks=132 flag_slots=7 args=!pk.sym<?xbf16>");
  ASSERT_TRUE(r.is_ok());
  EXPECT_FALSE(r->has_value());
}

TEST(CopyEngineRoute, MalformedFieldsAreErrors) {
  const char* bad[] = {
      "copy_engine=all_reduce:1:0:1:-1",  // not a copy-only collective
      "copy_engine=all_gather:1:0:1",     // a field missing
      "copy_engine=all_gather:1:0:1:-1:", // a field too many
      "copy_engine=all_gather:0:0:1:-1",  // no size
      "copy_engine=all_gather:x:0:1:-1",  // not a number
      "copy_engine=all_gather:1:-1:1:-1", // no input
      "copy_engine=broadcast:1:0:1:-1",   // rooted without a root
      "copy_engine=all_gather:1:0:1:2",   // a root for an unrooted collective
  };
  for (const char* field : bad) {
    auto r = pk::parse_copy_engine_route(std::string("// pk-launch k threads=1 blocks=1 ") + field +
                                         " args=index");
    EXPECT_FALSE(r.is_ok()) << field;
    if (!r.is_ok()) EXPECT_NE(r.status().message().find("copy_engine"), std::string::npos);
  }
}

TEST(CopyEngineRoute, MessageBytesPerCollective) {
  using C = pk::CopyCollective;
  // World 4, bf16: x and y element counts as the specs define them.
  EXPECT_EQ(pk::copy_engine_message_bytes(C::all_gather, 1000, 4000, 4, 2), 2000);
  EXPECT_EQ(pk::copy_engine_message_bytes(C::all_to_all, 4000, 4000, 4, 2), 2000);
  EXPECT_EQ(pk::copy_engine_message_bytes(C::broadcast, 1000, 1000, 4, 2), 2000);
  EXPECT_EQ(pk::copy_engine_message_bytes(C::gather, 1000, 4000, 4, 2), 2000);
  EXPECT_EQ(pk::copy_engine_message_bytes(C::scatter, 4000, 1000, 4, 4), 4000);
}

TEST(CopyEngineRoute, SyncKernelCompilesForSm90a) {
  setenv("PK_CACHE_DIR", "/tmp/pkc-copy-engine-test-cache", 1);
  pk::CompileRequest req;
  req.source = pk::copy_engine_sync_source();
  req.program_name = "pk_copy_engine_sync.cu";
  req.arch = "sm_90a";
  auto out = pk::compile(req);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(std::string(out->image.data(), 4), "\x7f" "ELF");
  std::system("rm -rf /tmp/pkc-copy-engine-test-cache");
  unsetenv("PK_CACHE_DIR");
}

}  // namespace

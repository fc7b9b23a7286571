// Tests pkc's in-process NVRTC: embedded headers, sm_90a cubins, errors with logs.
#include "pk/Nvrtc/NvrtcCompiler.h"
#include <gtest/gtest.h>

namespace {

TEST(Nvrtc, CompilesAKernelUsingTheDeviceHeadersToSm90a) {
  std::string src = "#include <pk/device/all.cuh>\n"
                    "extern \"C\" __global__ void k(pk::LaunchContext c) {\n"
                    "  if (threadIdx.x == 0) pk::signal_all(c, 0);\n}\n";
  pk::NvrtcResult r = pk::compileWithNvrtc(src, "k.cu", "sm_90a", pk::NvrtcTarget::Cubin);
  ASSERT_TRUE(r.ok) << r.log;
  ASSERT_GE(r.output.size(), 4u);
  EXPECT_EQ(r.output.substr(0, 4), "\x7f" "ELF");
}

TEST(Nvrtc, PtxUsesTheVirtualArchitecture) {
  pk::NvrtcResult r = pk::compileWithNvrtc("extern \"C\" __global__ void k() {}\n", "k.cu",
                                           "sm_90a", pk::NvrtcTarget::Ptx);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_NE(r.output.find(".target sm_90a"), std::string::npos);
}

TEST(Nvrtc, FastCompileStillBuildsACubinAndSaysSo) {
  std::string src = "#include <pk/device/all.cuh>\n"
                    "extern \"C\" __global__ void k(pk::LaunchContext c) {\n"
                    "  if (threadIdx.x == 0) pk::signal_all(c, 0);\n}\n";
  auto hasFast = [](const pk::NvrtcResult &r) {
    for (const std::string &o : r.options)
      if (o == "--Ofast-compile=max") return true;
    return false;
  };
  pk::NvrtcResult fast = pk::compileWithNvrtc(src, "k.cu", "sm_90a", pk::NvrtcTarget::Cubin, true);
  ASSERT_TRUE(fast.ok) << fast.log;
  EXPECT_EQ(fast.output.substr(0, 4), "\x7f" "ELF");
  EXPECT_TRUE(hasFast(fast));
  pk::NvrtcResult full = pk::compileWithNvrtc(src, "k.cu", "sm_90a", pk::NvrtcTarget::Cubin);
  EXPECT_FALSE(hasFast(full));
}

TEST(Nvrtc, ReportsCompileErrorsWithTheLogAndOptions) {
  pk::NvrtcResult r = pk::compileWithNvrtc("this is not cuda", "bad.cu", "sm_90a",
                                           pk::NvrtcTarget::Cubin);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("bad.cu"), std::string::npos);
  EXPECT_FALSE(r.options.empty());
}

} // namespace

// Tests NVRTC compilation through the embedded headers for sm_90a (no GPU needed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <pk/runtime/embedded_headers.h>
#include <pk/runtime/nvrtc_compile.h>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Nvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    // Run from a directory where no pk header is reachable: only the embedded copies count.
    char tmpl[] = "/tmp/pkc-nvrtc-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    setenv("PK_CACHE_DIR", (dir_ + "/cache").c_str(), 1);
    ASSERT_EQ(chdir(dir_.c_str()), 0);
  }
  void TearDown() override {
    unsetenv("PK_CACHE_DIR");
    std::system(("rm -rf " + dir_).c_str());
  }
  std::string dir_;
};

TEST_F(Nvrtc, EveryPrimitiveCompilesToSm90aCubin) {
  pk::CompileRequest req;
  req.source = read(PK_INSTANTIATE_ALL_CU);
  ASSERT_FALSE(req.source.empty());
  req.program_name = "instantiate_all.cu";
  req.arch = "sm_90a";
  // A check that the primitives compile and cache: most optimisations off, five times faster.
  req.options = {"--Ofast-compile=max"};
  auto out = pk::compile(req);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_GT(out->image.size(), 4u);
  EXPECT_EQ(std::string(out->image.data(), 4), "\x7f" "ELF");
  EXPECT_FALSE(out->from_cache);
  // The second compile comes from the on-disk cache, byte-identical.
  auto again = pk::compile(req);
  ASSERT_TRUE(again.is_ok());
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->image, out->image);
}

TEST_F(Nvrtc, PtxHasTheOrderingInstructions) {
  pk::CompileRequest req;
  req.source = read(PK_INSTANTIATE_ALL_CU);
  req.arch = "compute_90a";
  req.use_cache = false;
  req.options = {"--Ofast-compile=max"};  // the ordering instructions are inline PTX either way
  auto out = pk::compile(req);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const std::string ptx(out->image.begin(), out->image.end());
  for (const char* insn :
       {"red.release.sys.global.add.u64", "ld.acquire.sys.global.u64", "fence.acq_rel.sys",
        "%globaltimer", "cp.async.bulk.wait_group 0", "fence.proxy.async",
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16",
        "cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity", "multimem.ld_reduce",
        "multimem.st", "red.relaxed.sys.global.add.noftz.v4.bf16x2"})
    EXPECT_NE(ptx.find(insn), std::string::npos) << insn;
}

TEST_F(Nvrtc, EachHeaderCompilesAlone) {
  for (const auto& h : pk::embedded_headers()) {
    pk::CompileRequest req;
    req.source = std::string("#include <") + h.name + ">\nextern \"C\" __global__ void k() {}\n";
    req.arch = "sm_90a";
    req.use_cache = false;
    auto out = pk::compile(req);
    EXPECT_TRUE(out.is_ok()) << h.name << ": " << out.status().message();
  }
}

TEST_F(Nvrtc, EmittedSignatureCompiles) {
  pk::CompileRequest req;
  req.source = R"(#include <pk/device/all.cuh>
extern "C" __global__ void name(pk::LaunchContext ctx, pk::SymTensor<pk::bf16> x,
                                pk::Tensor<pk::bf16> y) {
  pk::reduce_tile<pk::ReduceOp::sum>(ctx, x, 0, y.numel, y.data);
}
)";
  auto out = pk::compile(req);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
}

TEST_F(Nvrtc, ErrorsCarryLogAndOptions) {
  pk::CompileRequest req;
  req.source = "#include <pk/device/all.cuh>\n__global__ void k() { undeclared_thing(); }\n";
  req.program_name = "broken.cu";
  req.options = {"-DFOO=1"};
  auto out = pk::compile(req);
  ASSERT_FALSE(out.is_ok());
  const std::string& m = out.status().message();
  EXPECT_NE(m.find("broken.cu"), std::string::npos) << m;
  EXPECT_NE(m.find("undeclared_thing"), std::string::npos) << m;
  EXPECT_NE(m.find("--gpu-architecture=sm_90a"), std::string::npos) << m;
  EXPECT_NE(m.find("-DFOO=1"), std::string::npos) << m;
}

}  // namespace

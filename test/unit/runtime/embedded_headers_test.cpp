// Tests that every device header is embedded, byte for byte.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <pk/runtime/embedded_headers.h>

namespace {

TEST(EmbeddedHeaders, ContainsEveryPrimitive) {
  for (const char* name :
       {"pk/device/all.cuh", "pk/device/launch_context.cuh", "pk/device/bf16.cuh",
        "pk/device/signal.cuh", "pk/device/wait.cuh", "pk/device/barrier.cuh",
        "pk/device/reduce.cuh", "pk/device/all_reduce.cuh", "pk/device/store.cuh",
        "pk/device/load.cuh", "pk/device/mbarrier.cuh", "pk/device/tensor_map.cuh",
        "pk/device/copy.cuh", "pk/tile/rt.cuh", "pk/tile/rows.cuh", "pk/tile/mma.cuh"}) {
    EXPECT_NE(pk::find_embedded_header(name), nullptr) << name;
  }
  EXPECT_EQ(pk::find_embedded_header("pk/device/nope.cuh"), nullptr);
}

TEST(EmbeddedHeaders, MatchTheSourceTree) {
  for (const auto& h : pk::embedded_headers()) {
    // Device primitives live in the runtime's tree; the GEMM/LCSC templates and the tile
    // library in templates/.
    const std::string name(h.name);
    const bool is_template = name.rfind("pk/templates/", 0) == 0 || name.rfind("pk/tile/", 0) == 0;
    std::ifstream in(std::string(is_template ? PK_TEMPLATE_INCLUDE_DIR : PK_RUNTIME_INCLUDE_DIR) + "/" + h.name,
                     std::ios::binary);
    ASSERT_TRUE(in) << h.name;
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), std::string(h.text, h.size)) << h.name;
    EXPECT_EQ(h.text[h.size], '\0');
  }
}

TEST(EmbeddedHeaders, NoToolkitIncludes) {
  // NVRTC has no path to the CUDA headers here: device headers and templates include only
  // each other.
  for (const auto& h : pk::embedded_headers()) {
    std::istringstream in(std::string(h.text, h.size));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("#include", 0) != 0) continue;
      EXPECT_TRUE(line.find("<pk/device/") != std::string::npos ||
                  line.find("<pk/templates/") != std::string::npos ||
                  line.find("<pk/tile/") != std::string::npos)
          << h.name << ": " << line;
    }
  }
}

}  // namespace

// 1000 symmetric allocate/free cycles leave device free memory where it started; also prints
// the capability probe and checks a TMA descriptor can be encoded for a peer buffer. Two ranks,
// or on a one-GPU machine one rank, then 2, 3 and 4 ranks sharing it (pointers, no IPC).
#include "harness.h"

namespace {

void run_world(int world) {
  pkt::run_ranks(world, [](pk::Context& ctx) {
    // Warm up: the exchange's staging buffer and allocator pools settle on first use.
    for (int i = 0; i < 3; ++i) {
      auto b = ctx.allocate(1 << 20);
      PKT_OK(b.is_ok() ? b->free() : b.status());
    }
    PKT_CUDA(pkt::sync_uploads());
    // Ranks sharing a GPU see each other's memory: measure while none holds a buffer.
    PKT_OK(ctx.exchange().barrier());
    size_t free0 = 0, total = 0;
    PKT_CUDA(cudaMemGetInfo(&free0, &total));
    PKT_OK(ctx.exchange().barrier());
    for (int i = 0; i < 1000; ++i) {
      const std::size_t bytes = (std::size_t(1) << 20) + std::size_t(i % 7) * 4096;
      auto b = ctx.allocate(bytes, i % 2 == 0);
      PKT_OK(b.is_ok() ? pk::Status::ok() : b.status());
      if (i == 0) {
        auto map = b->tensor_map_2d((ctx.rank() + 1) % ctx.world(), pk::DType::bf16, 256, 512, 64, 64);
        PKT_OK(map.is_ok() ? pk::Status::ok() : map.status());
      }
      PKT_OK(b->free());
    }
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());
    size_t free1 = 0;
    PKT_CUDA(cudaMemGetInfo(&free1, &total));
    const long long lost = static_cast<long long>(free0) - static_cast<long long>(free1);
    PKT_CHECK(lost <= (4ll << 20), "rank " + std::to_string(ctx.rank()) + " lost " +
                                       std::to_string(lost) + " bytes over 1000 cycles");
  });
}

}  // namespace

int main() {
  const std::vector<int> worlds = pkt::test_worlds(/*with_one=*/true);
  auto caps = pk::probe_capabilities();
  if (caps.is_ok()) std::printf("%s", caps->to_string().c_str());
  else pkt::fail(caps.status().message());
  for (int world : worlds) {
    pkt::announce_world("symmetric_leak_test", world);
    run_world(world);
  }
  return pkt::finish("symmetric_leak_test");
}

// The rank context of a one-GPU benchmark (world size 1) with the exchange it keeps using.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <pk/runtime/context.h>
#include <pk/runtime/shared_gpu.h>

namespace pk_bench {

struct OneGpu {
  std::vector<std::unique_ptr<pk::Exchange>> exchanges;
  std::unique_ptr<pk::Context> ctx;
};

// Exits with 77 after "skipped: no GPU" without a GPU, with 1 after the error if the context
// cannot be created. Multicast stays off in this process, as everywhere.
inline OneGpu one_gpu() {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) std::puts("skipped: no GPU"), std::exit(77);
  OneGpu g;
  auto ex = pk::create_single_process_exchanges(1);
  if (!ex.is_ok()) std::fprintf(stderr, "%s\n", ex.status().message().c_str()), std::exit(1);
  g.exchanges = std::move(*ex);
  auto ctx = pk::Context::create(*g.exchanges[0]);
  if (!ctx.is_ok()) std::fprintf(stderr, "%s\n", ctx.status().message().c_str()), std::exit(1);
  g.ctx = std::move(*ctx);
  return g;
}

}  // namespace pk_bench

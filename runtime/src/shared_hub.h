// The in-process exchange of ranks sharing one GPU (pk/runtime/shared_gpu.h): W threads meet
// at a hub with a deadline; no CUDA calls, so the CPU unit tests run it without a GPU.
#pragma once
#include <memory>
#include <vector>

#include <pk/runtime/exchange.h>

namespace pk::detail {

// W exchanges, ranks 0..W-1 on `device`, joined by one hub; a collective some rank never
// joins fails after timeout_s. While any of them lives, `device` counts W more sharing ranks.
std::vector<std::unique_ptr<Exchange>> make_hub_exchanges(int world, int device, double timeout_s);

// Whether any hub lives in this process.
bool hubs_exist();

// Ranks of live hubs on `device` (0 when none).
int hub_ranks_on(int device);

}  // namespace pk::detail

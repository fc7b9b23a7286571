// The dynamic tile counter (pk/device/tile_ticket.cuh) that causal attention's persistent grid
// takes its tiles from: launches back to back on one context word, each handing out every tile
// exactly once, with all blocks taking at once (the worst contention, and the first takes of
// a launch racing to swap in its number) and with staggered takes.
#include <pk/device/all.cuh>
#include <pk/device/tile_ticket.cuh>

#include <vector>

#include "harness.h"

namespace {

// Each block starts at tile blockIdx.x, then takes grid + take_tile(...) until past the end,
// as pk::attention::run does; marks[t] counts the takes of tile t over all launches.
__global__ void k_take(pk::TileTicket ticket, int tiles, unsigned int* marks, int stagger_ns) {
  if (threadIdx.x != 0) return;
  for (int t = blockIdx.x; t < tiles; t = static_cast<int>(gridDim.x) + pk::take_tile(ticket)) {
    atomicAdd(marks + t, 1u);
    if (stagger_ns > 0) __nanosleep(static_cast<unsigned>(stagger_ns * (1 + t % 7)));
  }
}

void run(pk::Context& ctx) {
  cudaStream_t s = ctx.stream();
  struct Case {
    int tiles, grid, stagger_ns, launches;
  } cases[] = {{4096, 132, 0, 300}, {1024, 132, 200, 100}, {132, 132, 0, 300},
               {7, 16, 0, 100},     {5000, 8, 0, 20},      {2080, 66, 50, 100}};
  for (const Case& c : cases) {
    unsigned int* marks = nullptr;
    PKT_CUDA(cudaMalloc(&marks, sizeof(unsigned int) * c.tiles));
    PKT_CUDA(cudaMemsetAsync(marks, 0, sizeof(unsigned int) * c.tiles, s));
    for (int i = 0; i < c.launches; ++i) {
      auto ticket = ctx.tile_ticket("k_take");  // one word for every shape, as the runtime keys it
      PKT_OK(ticket.status());
      k_take<<<c.grid, 32, 0, s>>>(*ticket, c.tiles, marks, c.stagger_ns);
    }
    PKT_CUDA(cudaStreamSynchronize(s));
    std::vector<unsigned int> got(c.tiles);
    PKT_CUDA(cudaMemcpy(got.data(), marks, sizeof(unsigned int) * c.tiles, cudaMemcpyDeviceToHost));
    long long bad = 0;
    for (unsigned int m : got) bad += m != static_cast<unsigned>(c.launches);
    PKT_CHECK(bad == 0, std::to_string(bad) + " of " + std::to_string(c.tiles) + " tiles not taken once per launch (" +
                            std::to_string(c.grid) + " blocks, " + std::to_string(c.launches) + " launches)");
    PKT_CUDA(cudaFree(marks));
  }
}

}  // namespace

int main() {
  pkt::require_gpus(1);
  pkt::run_ranks(1, run);
  return pkt::finish("tile_ticket_test");
}

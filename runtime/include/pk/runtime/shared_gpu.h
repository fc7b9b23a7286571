// Several ranks on one GPU inside one process: a development and test mode (DESIGN.md, "Ranks
// sharing one GPU"). W threads each drive a rank with its own Context, stream and symmetric
// allocations, all on one device; peers' allocations are plain device pointers (no IPC), and
// the exchange is an in-process hub (no NCCL, which refuses two ranks on one device).
//
// Spin-waits only complete when every rank's blocks are resident at once, so while such ranks
// exist the runtime gives each rank 1/W of the SMs (rank_sm_count, rank_grid) and refuses, with
// an error, any launch whose W grids cannot be resident together (check_co_resident). This mode
// checks protocols, tails and world sizes; it says nothing about link speed.
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include <pk/runtime/exchange.h>
#include <pk/runtime/status.h>

namespace pk {

class Context;

// W exchanges, ranks 0..W-1, all on `device`, joined by an in-process hub. Use each from its
// own thread (as NcclExchange::create_single_process's). A collective that some rank never
// joins fails after PK_SHARED_GPU_TIMEOUT_S seconds (default 60) instead of hanging.
// Sets CUDA_MODULE_LOADING=EAGER and CUDA_DEVICE_MAX_CONNECTIONS=32 unless already set; they only
// act before the process's first CUDA context, so set them earlier if CUDA is already in use
// (lazy loading can wait for a spinning kernel; few hardware queues serialise ranks' streams).
Result<std::vector<std::unique_ptr<Exchange>>> create_shared_gpu_exchanges(int world,
                                                                           int device = 0);

// PK_SHARED_GPU_RANKS=W: W when set (an error unless 1 <= W <= PK_MAX_RANKS), 0 when unset.
Result<int> shared_gpu_ranks_from_env();

// One process with a thread per rank: with PK_SHARED_GPU_RANKS=W, W ranks sharing device 0
// (`world` must be W); otherwise NcclExchange::create_single_process(world), one GPU per rank.
Result<std::vector<std::unique_ptr<Exchange>>> create_single_process_exchanges(int world);

// Whether shared-GPU exchanges exist in this process (cheap: the launch path asks it first).
bool shared_gpu_ranks_exist();

// Ranks of this process that share `device` (1 when none do).
int ranks_sharing_device(int device);

// The SMs one rank of ctx may fill: the device's count, divided by the ranks sharing it.
Result<int> rank_sm_count(const Context& ctx);

// The grid of a kernel sized for a whole GPU (pkc's `// pk-launch ... blocks=N
// blocks_per_sm=B`): at most B blocks per SM on a GPU of its own (B is 1 for kernels with a
// grid-wide barrier, which needs all blocks resident; more only for kernels whose blocks never
// wait on each other), and 1/W of that when W ranks share it. pkc's kernels loop over gridDim.x
// and pair block b with block b of every peer, so any grid works that all ranks share.
int rank_grid(const Context& ctx, int blocks, int blocks_per_sm = 1);

// Before launching `kernel` on `device`: an error, naming the numbers, when ranks share the
// device and their grids of `grid` blocks, at `blocks_per_sm` resident per SM (the occupancy
// API's answer for the kernel), cannot all be resident at once; ok otherwise.
Status check_co_resident(int device, const std::string& kernel, long long grid,
                         int blocks_per_sm);

// Collective, from Context::create: an error when ranks of different processes drive the same
// GPU (their kernels do not run at the same time without MPS, so waits between them would time
// out), or when ranks sharing a GPU would launch on the same stream.
Status check_rank_placement(Exchange& ex, cudaStream_t stream);

// For benchmarks and calibration, which measure links that ranks sharing a GPU do not have:
// an error naming `tool` when PK_SHARED_GPU_RANKS is set or shared-GPU ranks exist.
Status refuse_shared_gpu(const std::string& tool);

}  // namespace pk

// Per-rank communicator state: rank, world, stream, flag buffer, epoch counter, error slot.
#pragma once
#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <pk/device/launch_context.cuh>
#include <pk/device/tile_ticket.cuh>
#include <pk/runtime/exchange.h>
#include <pk/runtime/symmetric.h>

namespace pk {

struct ContextOptions {
  // uint64 flags per rank: region 0 for make_launch_context(), then one region of
  // kKernelFlagRegion slots per named kernel.
  int flag_slots = 65536;
  // Bound on every device wait; PK_WAIT_TIMEOUT_MS overrides the default of 10 s.
  unsigned long long timeout_ns = 0;
  cudaStream_t stream = nullptr;  // null: the context creates (and owns) a non-blocking stream
  // Symmetric landing buffer per named kernel, allocated at the kernel's first launch (a
  // collective step: every rank makes the same launches). Small collectives push into it in one
  // round instead of two; 0 turns that path off. Must be equal on every rank.
  unsigned long long landing_bytes = 4ull << 20;
  // LL words for the smallest collectives (pk/device/push_ll.cuh), in the same allocation after
  // the landing slots: messages of up to ll_bytes / (4 W) bytes can take the flag-free LL path
  // (pkc caps them further). 0 turns that path off. Must be equal on every rank.
  unsigned long long ll_bytes = 2ull << 20;
  // The copy-engine route of copy-only collectives (pk/runtime/copy_engine.h): -1 keeps the
  // threshold pkc chose for each kernel, 0 turns the route off, n > 0 takes it for messages of
  // at least n bytes. Must be equal on every rank.
  long long copy_engine_min_bytes = -1;
};

// The copy-engine route's per-context state (its second stream, events and sync kernel),
// created at the route's first use; defined in runtime/src/copy_engine_state.h.
struct CopyEngineState;

// Flag slots each named kernel owns (emitted kernels index slot * gridDim.x + blockIdx.x).
constexpr int kKernelFlagRegion = 2048;
// Tile counters (pk/device/tile_ticket.cuh) a context holds: one per kernel name.
constexpr int kTileTickets = 256;

class Context {
 public:
  // Collective over `ex` (which must outlive the context). Sets the device, enables peer access
  // to same-process peers, allocates the symmetric flag buffer (zeroed once, never reset) and
  // the error slot.
  static Result<std::unique_ptr<Context>> create(Exchange& ex, ContextOptions options = {});
  ~Context();

  int rank() const { return ex_->rank(); }
  int world() const { return ex_->world(); }
  int device() const { return ex_->device(); }
  int flag_slots() const { return flag_slots_; }
  cudaStream_t stream() const { return stream_; }
  Exchange& exchange() const { return *ex_; }
  unsigned long long epoch() const { return epoch_; }
  unsigned long long timeout_ns() const { return timeout_ns_; }
  void set_timeout_ns(unsigned long long ns) { timeout_ns_ = ns; }

  // The LaunchContext for the next launch in the shared region 0: epoch advances by one. Every
  // rank must make the same sequence of launches, and every kernel launched this way must use
  // its slots the same number of times per launch (waits compare with epoch * count). Kernels
  // that differ should use make_launch_context(name), which pk::launch does.
  LaunchContext make_launch_context();

  // The LaunchContext for the next launch of the kernel named `kernel`: each kernel has its own
  // flag region and its own epoch, so kernels with different grids or flag counts never share
  // a slot, and a kernel's waits (flag >= epoch * count) count only its own launches. Regions
  // are handed out in first-launch order, which SPMD programs share across ranks.
  // with_landing = false: the region gets no landing buffer (host-driven paths never push).
  Result<LaunchContext> make_launch_context(const std::string& kernel, bool with_landing = true);

  // Queues the next launch behind every rank's previous one (ranks sharing a GPU), as the two
  // calls above do, for a kernel that uses no flags: it takes no region, so any number of such
  // kernels and shapes can be launched on one context.
  void order_launch();

  // Undoes the last make_launch_context(kernel) when that launch did not happen (refused or
  // failed), so the next launch's waits do not count signals of a launch that never ran. Every
  // rank must make the same calls.
  void retract_launch(const std::string& kernel);

  // The tile counter of the kernel named `kernel` for its next launch (a new launch number on
  // the kernel's own word): what a persistent kernel with a dynamic tile order takes tiles from.
  // Needs no flag region, so any number of shapes may be launched; an error past kTileTickets
  // kernel names.
  Result<TileTicket> tile_ticket(const std::string& kernel);

  // Device memory of at least `bytes` for template kernels launched on `stream` (split-K's partial
  // sums and arrival counters): zeroed when made or grown, otherwise as the last launch on that
  // stream left it. Launches on one stream never overlap, so every kernel on it shares one; other
  // streams get their own. Growing frees the old one (cudaFree waits for the device).
  Result<void*> workspace(cudaStream_t stream, std::size_t bytes);

  // Synchronises the stream, reads the error slot and clears it. A timeout becomes
  // "rank R timed out waiting on flag slot S in block B: expected >= E, saw V". After a timeout
  // the ranks' counters disagree: create a new context before launching again.
  Status check_errors();

  // SymmetricBuffer::allocate on this context's exchange.
  Result<SymmetricBuffer> allocate(std::size_t bytes, bool zero = true);

  const SymmetricBuffer& flags() const { return flags_; }

  long long copy_engine_min_bytes() const { return copy_engine_min_bytes_; }
  // The copy-engine route's state on this context (null until copy_engine.cpp creates it).
  std::unique_ptr<CopyEngineState>& copy_engine_state() { return copy_engine_; }

 private:
  Context() = default;
  Exchange* ex_ = nullptr;
  int flag_slots_ = 0;
  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  SymmetricBuffer flags_;
  WaitError* error_ = nullptr;
  unsigned long long* tickets_ = nullptr;  // kTileTickets words, zeroed once
  struct TicketWord {
    int index;
    unsigned long long epoch;  // launches that took this word
  };
  std::map<std::string, TicketWord> ticket_words_;
  struct Workspace {
    void* data = nullptr;
    std::size_t bytes = 0;
  };
  std::map<cudaStream_t, Workspace> workspaces_;
  unsigned long long epoch_ = 0;
  unsigned long long launches_ = 0;  // launch contexts handed out, both kinds (order_launch)
  unsigned long long landing_bytes_ = 0;
  unsigned long long ll_bytes_ = 0;
  struct KernelFlags {
    int offset;                // first slot of the kernel's region
    unsigned long long epoch;  // launches of this kernel so far
    int landing = -1;          // index into landings_, -1 without one
  };
  // Per-kernel landing buffers in first-launch order (freed in that order on every rank).
  std::vector<SymmetricBuffer> landings_;
  std::map<std::string, KernelFlags> kernel_flags_;
  unsigned long long timeout_ns_ = 0;
  long long copy_engine_min_bytes_ = -1;
  std::unique_ptr<CopyEngineState> copy_engine_;
};

}  // namespace pk

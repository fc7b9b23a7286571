// Per-rank context: flag buffer and error slot set up once, epochs handed out per launch.
#include <pk/runtime/context.h>

#include <cstdlib>
#include <string>

#include <pk/runtime/checks.h>
#include <pk/runtime/cuda_check.h>
#include <pk/runtime/shared_gpu.h>

#include "copy_engine_state.h"

namespace pk {

Result<std::unique_ptr<Context>> Context::create(Exchange& ex, ContextOptions options) {
  PK_RETURN_IF_ERROR(check_world(ex.world()));
  if (options.flag_slots < 1) return Status::error("flag_slots must be positive");
  std::unique_ptr<Context> c(new Context());
  c->ex_ = &ex;
  c->flag_slots_ = options.flag_slots;
  c->timeout_ns_ = options.timeout_ns;
  c->landing_bytes_ = options.landing_bytes & ~15ull;  // 16-byte vectors in every landing slot
  c->ll_bytes_ = options.ll_bytes & ~31ull;            // whole 32-byte LL groups
  c->copy_engine_min_bytes_ = options.copy_engine_min_bytes;
  if (c->timeout_ns_ == 0) {
    c->timeout_ns_ = 10ull * 1000 * 1000 * 1000;
    if (const char* ms = std::getenv("PK_WAIT_TIMEOUT_MS"))
      c->timeout_ns_ = std::strtoull(ms, nullptr, 10) * 1000ull * 1000ull;
  }
  PK_CUDA_TRY(cudaSetDevice(ex.device()));
  if (options.stream) {
    c->stream_ = options.stream;
  } else {
    PK_CUDA_TRY(cudaStreamCreateWithFlags(&c->stream_, cudaStreamNonBlocking));
    c->owns_stream_ = true;
  }
  // Several processes on one GPU would time out in every wait; say so before anything runs.
  PK_RETURN_IF_ERROR(check_rank_placement(ex, c->stream_));
  PK_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&c->error_), sizeof(WaitError)));
  PK_CUDA_TRY(cudaMemset(c->error_, 0, sizeof(WaitError)));
  PK_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&c->tickets_), sizeof(unsigned long long) * kTileTickets));
  PK_CUDA_TRY(cudaMemset(c->tickets_, 0, sizeof(unsigned long long) * kTileTickets));
  // Zeroed here, once: the counters only ever grow afterwards.
  PK_ASSIGN_OR_RETURN(c->flags_, SymmetricBuffer::allocate(
                                     ex, sizeof(unsigned long long) * options.flag_slots, true));
  return c;
}

Context::~Context() {
  if (ex_) cudaSetDevice(ex_->device());
  copy_engine_.reset();
  for (auto& l : landings_) (void)l.free();
  (void)flags_.free();
  if (error_) cudaFree(error_);
  if (tickets_) cudaFree(tickets_);
  for (auto& w : workspaces_) cudaFree(w.second.data);
  if (owns_stream_ && stream_) cudaStreamDestroy(stream_);
}

LaunchContext Context::make_launch_context() {
  ex_->order_launch(++launches_, timeout_ns_);
  LaunchContext c{};
  c.rank = rank();
  c.world = world();
  c.epoch = ++epoch_;
  c.timeout_ns = timeout_ns_;
  for (int r = 0; r < world(); ++r)
    c.flags[r] = static_cast<unsigned long long*>(flags_.peer(r));
  c.error = error_;
  return c;
}

void Context::order_launch() { ex_->order_launch(++launches_, timeout_ns_); }

void Context::retract_launch(const std::string& kernel) {
  auto it = kernel_flags_.find(kernel);
  if (it != kernel_flags_.end() && it->second.epoch > 0) --it->second.epoch;
}

Result<TileTicket> Context::tile_ticket(const std::string& kernel) {
  auto it = ticket_words_.find(kernel);
  if (it == ticket_words_.end()) {
    if (ticket_words_.size() >= kTileTickets)
      return Status::error("no tile counter left for kernel '" + kernel + "': " +
                           std::to_string(kTileTickets) + " kernels already use this context's");
    it = ticket_words_.emplace(kernel, TicketWord{static_cast<int>(ticket_words_.size()), 0}).first;
  }
  // Launch numbers start at 1: the zeroed word (number 0) reads as no launch's.
  return TileTicket{tickets_ + it->second.index, ++it->second.epoch};
}

Result<void*> Context::workspace(cudaStream_t stream, std::size_t bytes) {
  Workspace& w = workspaces_[stream];
  if (w.bytes >= bytes) return w.data;
  if (w.data) PK_CUDA_TRY(cudaFree(w.data));
  w = Workspace{};
  void* data = nullptr;
  PK_CUDA_TRY(cudaMalloc(&data, bytes));
  w = Workspace{data, bytes};
  PK_CUDA_TRY(cudaMemsetAsync(data, 0, bytes, stream));
  return data;
}

Result<LaunchContext> Context::make_launch_context(const std::string& kernel, bool with_landing) {
  ex_->order_launch(++launches_, timeout_ns_);
  auto it = kernel_flags_.find(kernel);
  if (it == kernel_flags_.end()) {
    const int offset = kKernelFlagRegion * static_cast<int>(kernel_flags_.size() + 1);
    if (offset + kKernelFlagRegion > flag_slots_)
      return Status::error("no flag region left for kernel '" + kernel + "': " +
                           std::to_string(kernel_flags_.size()) + " kernels already use this "
                           "context; raise ContextOptions::flag_slots");
    KernelFlags k{offset, 0, -1};
    if (landing_bytes_ + ll_bytes_ && with_landing) {
      // Zeroed: tag 0 in the LL words matches no launch.
      PK_ASSIGN_OR_RETURN(SymmetricBuffer l,
                          SymmetricBuffer::allocate(*ex_, landing_bytes_ + ll_bytes_, true));
      k.landing = static_cast<int>(landings_.size());
      landings_.push_back(std::move(l));
    }
    it = kernel_flags_.emplace(kernel, k).first;
  }
  LaunchContext c{};
  c.rank = rank();
  c.world = world();
  c.epoch = ++it->second.epoch;
  c.timeout_ns = timeout_ns_;
  for (int r = 0; r < world(); ++r)
    c.flags[r] = static_cast<unsigned long long*>(flags_.peer(r)) + it->second.offset;
  c.error = error_;
  if (it->second.landing >= 0) {
    const SymmetricBuffer& l = landings_[it->second.landing];
    for (int r = 0; r < world(); ++r) c.landing[r] = static_cast<unsigned char*>(l.peer(r));
    c.landing_bytes = landing_bytes_;
    c.ll_bytes = ll_bytes_;
  }
  return c;
}

Status Context::check_errors() {
  PK_CUDA_TRY(cudaSetDevice(device()));
  PK_CUDA_TRY(cudaStreamSynchronize(stream_));
  WaitError e{};
  PK_CUDA_TRY(cudaMemcpy(&e, error_, sizeof(e), cudaMemcpyDeviceToHost));
  if (e.code == 0) return Status::ok();
  PK_CUDA_TRY(cudaMemset(error_, 0, sizeof(WaitError)));
  if (e.code == 1)
    return Status::error("rank " + std::to_string(e.rank) + " timed out waiting on flag slot " +
                         std::to_string(e.slot) + " in block " + std::to_string(e.block) +
                         ": expected >= " + std::to_string(e.expected) + ", saw " +
                         std::to_string(e.seen));
  if (e.code == 3)
    return Status::error("rank " + std::to_string(e.rank) + " timed out waiting for rank " +
                         std::to_string(e.slot) + "'s LL words in block " +
                         std::to_string(e.block) + ": expected tag " + std::to_string(e.expected) +
                         ", saw " + std::to_string(e.seen));
  if (e.code == 2)
    return Status::error("rank " + std::to_string(e.rank) + ": the kernel's argument check #" +
                         std::to_string(e.slot) + " failed: expected " +
                         std::to_string(static_cast<long long>(e.expected)) + ", got " +
                         std::to_string(static_cast<long long>(e.seen)) +
                         " (the generated CUDA says what it requires at `pk-check " + std::to_string(e.slot) +
                         "`; no data was moved)");
  if (e.code == 4)
    return Status::error("rank " + std::to_string(e.rank) + ", block " + std::to_string(e.block) +
                         ": a tile was addressed to rank " +
                         std::to_string(static_cast<long long>(e.seen)) + " (`.on(p)`), outside ranks 0.." +
                         std::to_string(static_cast<long long>(e.expected) - 1) +
                         "; that access was skipped");
  if (e.code == 5)
    return Status::error("rank " + std::to_string(e.rank) + ", block " + std::to_string(e.block) +
                         ": a range() loop's step was " +
                         std::to_string(static_cast<long long>(e.seen)) +
                         " at run time; it must be positive (the loop was skipped)");
  if (e.code == 6)
    return Status::error("rank " + std::to_string(e.rank) + ", block " + std::to_string(e.block) +
                         ": a run-time flag slot (`prim::flag(s)`) was " +
                         std::to_string(static_cast<long long>(e.seen)) + "; a launch of this grid has slots 0.." +
                         std::to_string(static_cast<long long>(e.expected) - 1) +
                         " (2048 flag words / blocks); the block stopped there");
  if (e.code == 7)
    return Status::error("rank " + std::to_string(e.rank) + ": a tile loop has " +
                         std::to_string(static_cast<long long>(e.seen)) + " tiles along dimension " +
                         std::to_string(e.slot) + ", more than the 2^31 - 1 a dimension after the first may have: "
                         "take larger tiles along it, or make it the first (the loop ran no tile)");
  return Status::error("rank " + std::to_string(rank()) + ": device error code " +
                       std::to_string(e.code));
}

Result<SymmetricBuffer> Context::allocate(std::size_t bytes, bool zero) {
  return SymmetricBuffer::allocate(*ex_, bytes, zero);
}

}  // namespace pk

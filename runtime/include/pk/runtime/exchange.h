// Bootstrap and exchange layer: rank, world, device, and an all-gather of small byte blobs.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <pk/runtime/status.h>

namespace pk {

// What the runtime needs from a process group. NCCL implements it here; an external group
// (PyTorch's) can implement it too. Every method except the accessors is collective.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual int rank() const = 0;
  virtual int world() const = 0;
  virtual int device() const = 0;  // the local CUDA device this rank drives
  // Gathers `bytes` from every rank into out[world * bytes] in rank order.
  virtual Status all_gather(const void* in, void* out, std::size_t bytes) = 0;
  // Returns after every rank has called it.
  virtual Status barrier();
  // Ranks of this world that share this rank's GPU inside this process: 1 with a GPU of its
  // own; W in the shared-GPU mode (pk/runtime/shared_gpu.h), where peers' allocations are
  // plain pointers on the same device and every rank's grid gets 1/W of the SMs.
  virtual int ranks_per_device() const { return 1; }
  // Called by pk::Context before it hands out this rank's n-th launch context (n counts every
  // launch of the context). Ranks sharing one GPU wait here, at most timeout_ns, until every
  // rank has asked for its n-th: then every rank's launch n-1 is queued before any rank queues
  // launch n. Streams of one process can share a hardware queue, and there a kernel queued
  // behind its own stream's spinning predecessor would hold back the peer kernel that the
  // predecessor waits for. With a GPU per rank this is a no-op.
  virtual void order_launch(unsigned long long /*n*/, unsigned long long /*timeout_ns*/) {}
};

// NCCL-backed exchange: the unique id, then ncclAllGather on a small device buffer.
class NcclExchange final : public Exchange {
 public:
  // Mode 1: one process drives devices 0..world-1, one thread per rank afterwards
  // (ncclCommInitAll). Each returned exchange must then be used from its own thread only.
  static Result<std::vector<std::unique_ptr<Exchange>>> create_single_process(int world);

  // Mode 2: one process per GPU from launcher environment: RANK, WORLD_SIZE, LOCAL_RANK
  // (device; else RANK modulo the device count). Rank 0 writes the NCCL unique id atomically to
  // $PK_BOOTSTRAP_FILE, or to /tmp/pkc-bootstrap-<MASTER_ADDR>-<MASTER_PORT>[-<run id>].id;
  // the others poll for it (up to PK_BOOTSTRAP_TIMEOUT_S, default 120 s).
  static Result<std::unique_ptr<Exchange>> create_from_env();

  // The bootstrap file path create_from_env() would use (for launchers and tests).
  static Result<std::string> bootstrap_path_from_env();

  ~NcclExchange() override;
  int rank() const override { return rank_; }
  int world() const override { return world_; }
  int device() const override { return device_; }
  Status all_gather(const void* in, void* out, std::size_t bytes) override;

 private:
  struct Impl;
  NcclExchange(int rank, int world, int device, std::unique_ptr<Impl> impl);
  int rank_, world_, device_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pk

// Symmetric memory: the same allocation on every rank, each rank's copy mapped into every rank.
#pragma once
#include <cstddef>
#include <vector>

#include <pk/device/launch_context.cuh>
#include <pk/device/tensor_map.cuh>
#include <pk/runtime/checks.h>
#include <pk/runtime/exchange.h>
#include <pk/runtime/status.h>

namespace pk {

class SymmetricBuffer {
 public:
  // Collective: every rank calls it with the same size, on its own device. Memory is
  // cudaMalloc'd; peers in the same process use the pointer directly (peer access enabled),
  // peers in other processes open its CUDA IPC handle. Handles travel through ex.all_gather.
  // Ranks sharing one GPU (ex.ranks_per_device() > 1) exchange plain pointers only.
  // `zero` clears the buffer before any peer can see it. `bytes` may be 0 (for empty tensors):
  // every rank still gets a distinct address, and bytes() is 0.
  static Result<SymmetricBuffer> allocate(Exchange& ex, std::size_t bytes, bool zero = true);

  SymmetricBuffer() = default;
  SymmetricBuffer(SymmetricBuffer&& o) noexcept;
  SymmetricBuffer& operator=(SymmetricBuffer&& o) noexcept;
  SymmetricBuffer(const SymmetricBuffer&) = delete;
  SymmetricBuffer& operator=(const SymmetricBuffer&) = delete;
  // Calls free(): destroy buffers in the same order on every rank.
  ~SymmetricBuffer();

  // Collective: closes the peer mappings, waits for every rank to do the same, then frees the
  // local allocation (an exporter must not free while importers still map it).
  Status free();

  bool valid() const { return local_ != nullptr; }
  std::size_t bytes() const { return bytes_; }
  int world() const { return static_cast<int>(peers_.size()); }
  void* local() const { return local_; }
  void* peer(int r) const { return peers_[r]; }
  const std::vector<void*>& peers() const { return peers_; }

  template <class T>
  Result<SymTensor<T>> sym_tensor(const std::vector<long long>& shape) const {
    return make_sym_tensor<T>(peers_, bytes_, shape);
  }

  // TMA descriptor for a row-major 2-D view [rows, cols] of `peer`'s copy, with boxes of
  // [box_rows, box_cols] elements (cuTensorMapEncodeTiled, no swizzle).
  Result<TensorMap> tensor_map_2d(int peer, DType dtype, unsigned long long rows,
                                  unsigned long long cols, unsigned int box_rows,
                                  unsigned int box_cols) const;

 private:
  static Result<SymmetricBuffer> allocate_shared(SymmetricBuffer b, Exchange& ex, bool zero);
  Exchange* ex_ = nullptr;
  std::size_t bytes_ = 0;
  void* local_ = nullptr;
  std::vector<void*> peers_;
  std::vector<bool> opened_;  // peers_[r] came from cudaIpcOpenMemHandle
};

}  // namespace pk

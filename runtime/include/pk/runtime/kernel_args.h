// A kernel-parameter blob: arguments copied in order, handed to cuLaunchKernel.
#pragma once
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace pk {

class KernelArgs {
 public:
  KernelArgs() : blob_(new Blob) {}

  // Appends a copy of `v` (trivially copyable: LaunchContext, SymTensor<T>, Tensor<T>,
  // TensorMap, scalars, pointers). Returns *this for chaining. Overflowing the 32 KiB blob
  // is reported by ok().
  template <class T>
  KernelArgs& add(const T& v) {
    static_assert(std::is_trivially_copyable<T>::value, "kernel arguments are copied bytewise");
    std::size_t off = (used_ + alignof(T) - 1) / alignof(T) * alignof(T);
    if (off + sizeof(T) > sizeof(Blob::bytes)) {
      overflow_ = true;
      return *this;
    }
    std::memcpy(blob_->bytes + off, &v, sizeof(T));
    offsets_.push_back(off);
    used_ = off + sizeof(T);
    return *this;
  }

  // Appends `bytes` bytes at the next multiple of `align` (a template's parameter block).
  KernelArgs& add_bytes(const void* data, std::size_t bytes, std::size_t align) {
    std::size_t off = (used_ + align - 1) / align * align;
    if (align > alignof(Blob) || off + bytes > sizeof(Blob::bytes)) {
      overflow_ = true;
      return *this;
    }
    std::memcpy(blob_->bytes + off, data, bytes);
    offsets_.push_back(off);
    used_ = off + bytes;
    return *this;
  }

  bool ok() const { return !overflow_; }
  std::size_t count() const { return offsets_.size(); }
  // Pointer array for cuLaunchKernel's kernelParams (valid while this object lives).
  void** pointers() {
    ptrs_.clear();
    for (std::size_t off : offsets_) ptrs_.push_back(blob_->bytes + off);
    return ptrs_.data();
  }

 private:
  struct alignas(128) Blob {
    unsigned char bytes[32768];
  };
  std::unique_ptr<Blob> blob_;
  std::size_t used_ = 0;
  bool overflow_ = false;
  std::vector<std::size_t> offsets_;
  std::vector<void*> ptrs_;
};

}  // namespace pk

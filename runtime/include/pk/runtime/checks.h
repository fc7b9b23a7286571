// Host-side checks run before a launch, so mismatches are errors instead of faults or hangs.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <vector>

#include <pk/device/launch_context.cuh>
#include <pk/runtime/dtype.h>
#include <pk/runtime/status.h>

namespace pk {

// world within [min_world, PK_MAX_RANKS] and, when multiple_of > 1, divisible by it.
Status check_world(int world, int min_world = 1, int multiple_of = 1);

Status check_dtype(const char* name, DType got, DType want);

// `want` entries of -1 match any extent.
Status check_shape(const char* name, const std::vector<long long>& got,
                   const std::vector<long long>& want);

Status check_alignment(const char* name, const void* ptr, std::size_t alignment);

Status check_divisible(const char* what, long long value, long long divisor);

// Fills a SymTensor view of `shape` over per-rank base pointers holding `capacity_bytes` each:
// checks rank count, shape (1..4 dims, none negative; 0 is an empty tensor) against capacity,
// and 16-byte alignment.
template <class T>
Result<SymTensor<T>> make_sym_tensor(const std::vector<void*>& peers, std::size_t capacity_bytes,
                                     const std::vector<long long>& shape);

template <class T>
Result<Tensor<T>> make_tensor(void* data, std::size_t capacity_bytes,
                              const std::vector<long long>& shape);

// Non-template core of the two above.
Status check_view(std::size_t elem_size, std::size_t capacity_bytes,
                  const std::vector<long long>& shape, long long* numel_out);

template <class T>
Result<SymTensor<T>> make_sym_tensor(const std::vector<void*>& peers, std::size_t capacity_bytes,
                                     const std::vector<long long>& shape) {
  PK_RETURN_IF_ERROR(check_world(static_cast<int>(peers.size())));
  SymTensor<T> t{};
  PK_RETURN_IF_ERROR(check_view(sizeof(T), capacity_bytes, shape, &t.numel));
  for (std::size_t r = 0; r < peers.size(); ++r) {
    PK_RETURN_IF_ERROR(check_alignment("symmetric buffer", peers[r], 16));
    t.peer[r] = static_cast<T*>(peers[r]);
  }
  for (std::size_t i = 0; i < 4; ++i) t.shape[i] = i < shape.size() ? shape[i] : 1;
  return t;
}

template <class T>
Result<Tensor<T>> make_tensor(void* data, std::size_t capacity_bytes,
                              const std::vector<long long>& shape) {
  Tensor<T> t{};
  PK_RETURN_IF_ERROR(check_view(sizeof(T), capacity_bytes, shape, &t.numel));
  t.data = static_cast<T*>(data);
  for (std::size_t i = 0; i < 4; ++i) t.shape[i] = i < shape.size() ? shape[i] : 1;
  return t;
}

}  // namespace pk

// Tile stores into a peer's buffer: ld/st copy, reduce-add, and TMA (bulk and tensor) paths.
#pragma once
#include <pk/device/elem.cuh>
#include <pk/device/launch_context.cuh>
#include <pk/device/tensor_map.cuh>

namespace pk {

// Block-cooperative copy of src[0, count) (local global or shared memory) into
// dst.peer[peer][offset, offset + count). 16-byte vectors when both ends allow it; any count.
template <class T>
__device__ __forceinline__ void store_tile(const LaunchContext& c, const SymTensor<T>& dst,
                                           int peer, long long offset, const T* src,
                                           long long count) {
  (void)c;
  constexpr int V = VecTraits<T>::per16;
  const int tid = block_thread(), nthr = block_threads();
  T* d = dst.peer[peer] + offset;
  long long done = 0;
  if (is_aligned16(d) && is_aligned16(src)) {
    const long long nvec = count / V;
    for (long long i = tid; i < nvec; i += nthr)
      reinterpret_cast<Vec16*>(d)[i] = reinterpret_cast<const Vec16*>(src)[i];
    done = nvec * V;
  }
  for (long long k = done + tid; k < count; k += nthr) d[k] = src[k];
}

namespace detail {

__device__ __forceinline__ void red_add(float* p, float v) {
  asm volatile("red.relaxed.sys.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}
__device__ __forceinline__ void red_add(bf16* p, bf16 v) {
  asm volatile("red.relaxed.sys.global.add.noftz.bf16 [%0], %1;" ::"l"(p), "h"(v.bits) : "memory");
}
__device__ __forceinline__ void red_add(f16* p, f16 v) {
  asm volatile("red.relaxed.sys.global.add.noftz.f16 [%0], %1;" ::"l"(p), "h"(v.bits) : "memory");
}
__device__ __forceinline__ void red_add(int* p, int v) {
  asm volatile("red.relaxed.sys.global.add.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void red_add(long long* p, long long v) {  // two's complement: u64 add
  asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// 16 bytes added at once (sm_90 vector reductions).
__device__ __forceinline__ void red_add_v4(float* p, const Vec16& v) {
  asm volatile("red.relaxed.sys.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(__uint_as_float(v.w[0])),
               "f"(__uint_as_float(v.w[1])), "f"(__uint_as_float(v.w[2])),
               "f"(__uint_as_float(v.w[3]))
               : "memory");
}
__device__ __forceinline__ void red_add_v4(bf16* p, const Vec16& v) {
  asm volatile("red.relaxed.sys.global.add.noftz.v4.bf16x2 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.w[0]),
               "r"(v.w[1]), "r"(v.w[2]), "r"(v.w[3])
               : "memory");
}
__device__ __forceinline__ void red_add_v4(f16* p, const Vec16& v) {
  asm volatile("red.relaxed.sys.global.add.noftz.v4.f16x2 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.w[0]),
               "r"(v.w[1]), "r"(v.w[2]), "r"(v.w[3])
               : "memory");
}

}  // namespace detail

// Block-cooperative dst.peer[peer][offset + k] += src[k] for k < count, with system-scope
// red.add (atomic per element, so several ranks may add into the same tile concurrently). f32, bf16
// and f16; 16-byte vector reductions when both ends are 16-byte aligned; any count.
template <class T>
__device__ __forceinline__ void store_add_tile(const LaunchContext& c, const SymTensor<T>& dst,
                                               int peer, long long offset, const T* src,
                                               long long count) {
  (void)c;
  constexpr int V = VecTraits<T>::per16;
  const int tid = block_thread(), nthr = block_threads();
  T* d = dst.peer[peer] + offset;
  long long done = 0;
  if (is_aligned16(d) && is_aligned16(src)) {
    const long long nvec = count / V;
    for (long long i = tid; i < nvec; i += nthr)
      detail::red_add_v4(d + i * V, reinterpret_cast<const Vec16*>(src)[i]);
    done = nvec * V;
  }
  for (long long k = done + tid; k < count; k += nthr) detail::red_add(d + k, src[k]);
}

// ---- TMA (async proxy) paths. One thread issues; bytes and addresses are multiples of 16. ----

// Makes this block's generic-proxy writes to shared memory visible to TMA reads of it. Call
// after the writes and before the __syncthreads() that precedes the issuing thread's copy.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Bulk copy of `bytes` from this block's shared memory to a (peer) global address.
__device__ __forceinline__ void store_async_bulk(void* peer_dst, const void* smem_src,
                                                 unsigned int bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(peer_dst),
               "r"(smem_addr(smem_src)), "r"(bytes)
               : "memory");
}

// Bulk reduce-add of shared memory into a (peer) global address; element type f32, bf16, f16.
template <class T>
__device__ __forceinline__ void store_add_async_bulk(T* peer_dst, const T* smem_src,
                                                     unsigned int bytes) {
  if constexpr (is_same<T, float>::value) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(
                     peer_dst),
                 "r"(smem_addr(smem_src)), "r"(bytes)
                 : "memory");
  } else if constexpr (is_same<T, bf16>::value) {
    asm volatile(
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [%0], [%1], %2;" ::"l"(
            peer_dst),
        "r"(smem_addr(smem_src)), "r"(bytes)
        : "memory");
  } else {
    static_assert(is_same<T, f16>::value, "store_add_async_bulk supports f32, bf16 and f16");
    asm volatile(
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [%0], [%1], %2;" ::"l"(
            peer_dst),
        "r"(smem_addr(smem_src)), "r"(bytes)
        : "memory");
  }
}

// 2-D tensor-map store of the box at element coordinates (x = innermost, y) from shared memory.
// The map was encoded on the host with the peer's base address.
__device__ __forceinline__ void store_async_tensor_2d(const TensorMap* map, const void* smem_src,
                                                      int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   map),
               "r"(smem_addr(smem_src)), "r"(x), "r"(y)
               : "memory");
}

// 2-D tensor-map reduce-add (element type from the map: f32, bf16, f16 add).
__device__ __forceinline__ void store_add_async_tensor_2d(const TensorMap* map,
                                                          const void* smem_src, int x, int y) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], "
      "[%1];" ::"l"(map),
      "r"(smem_addr(smem_src)), "r"(x), "r"(y)
      : "memory");
}

// Closes the current group of bulk operations issued by this thread.
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Waits until all committed bulk groups of this thread have COMPLETED, i.e. their writes are
// performed at the destination. Required before a signal that publishes TMA-written data.
__device__ __forceinline__ void bulk_wait_complete() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// Waits only until the shared-memory sources may be reused; does NOT publish the data.
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

}  // namespace pk

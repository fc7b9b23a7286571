// reduce_tile: read a tile from every rank's copy, reduce in fp32, write it locally.
#pragma once
#include <pk/device/elem.cuh>
#include <pk/device/launch_context.cuh>

namespace pk {

namespace detail {

// True when every rank's src + offset and dst allow 16-byte vector access.
template <class T>
__device__ __forceinline__ bool tile_vectorizable(const LaunchContext& c, const SymTensor<T>& src,
                                                  long long offset, const void* dst) {
  bool ok = is_aligned16(dst);
  for (int r = 0; r < c.world; ++r) ok = ok && is_aligned16(src.peer[r] + offset);
  return ok;
}

// Reduces vector i (16 bytes) of the tile across ranks.
template <ReduceOp R, class T>
__device__ __forceinline__ Vec16 reduce_vec(const LaunchContext& c, const SymTensor<T>& src,
                                            long long offset, long long i) {
  constexpr int V = VecTraits<T>::per16;
  acc_t<T> acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = reduce_identity<R, acc_t<T>>();
  for (int r = 0; r < c.world; ++r) {
    const Vec16 v = ld_cg_v4(src.peer[r] + offset + i * V);
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = reduce_combine<R>(acc[j], vec_get<T>(v, j));
  }
  Vec16 out;
#pragma unroll
  for (int j = 0; j < V; ++j) vec_set<T>(out, j, acc[j]);
  return out;
}

template <ReduceOp R, class T>
__device__ __forceinline__ acc_t<T> reduce_elem(const LaunchContext& c, const SymTensor<T>& src,
                                             long long idx) {
  acc_t<T> acc = reduce_identity<R, acc_t<T>>();
  for (int r = 0; r < c.world; ++r) acc = reduce_combine<R>(acc, ld_cg_elem(src.peer[r] + idx));
  return acc;
}

}  // namespace detail

// Block-cooperative: every thread of the block calls it with the same arguments. Reads
// src.peer[r][offset, offset + count) for all r < c.world, reduces in fp32 and writes
// dst[0, count) (local global or shared memory). 16-byte vectors when every address allows it,
// scalar otherwise and for the tail; any count. Does not synchronise: the caller waits for the
// data to be published before and orders the result after.
template <ReduceOp R, class T>
__device__ __forceinline__ void reduce_tile(const LaunchContext& c, const SymTensor<T>& src,
                                            long long offset, long long count, T* dst) {
  constexpr int V = VecTraits<T>::per16;
  const int tid = block_thread(), nthr = block_threads();
  long long done = 0;
  if (detail::tile_vectorizable(c, src, offset, dst)) {
    const long long nvec = count / V;
    for (long long i = tid; i < nvec; i += nthr)
      reinterpret_cast<Vec16*>(dst)[i] = detail::reduce_vec<R>(c, src, offset, i);
    done = nvec * V;
  }
  for (long long k = done + tid; k < count; k += nthr)
    dst[k] = from_acc<T>(detail::reduce_elem<R>(c, src, offset + k));
}

}  // namespace pk

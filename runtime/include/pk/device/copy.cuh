// copy_elems and reduce_into: block-cooperative bulk moves for whole-tensor collectives.
#pragma once
#include <pk/device/elem.cuh>
#include <pk/device/launch_context.cuh>

namespace pk {

// Block-cooperative: exchanges a[0, count) with b[0, count) (two ranks' copies of one
// tensor); each thread reads both of its elements before writing either. Any count.
template <class T>
__device__ __forceinline__ void swap_elems(T* a, T* b, long long count) {
  const long long tid = block_thread(), nthr = block_threads();
  for (long long k = tid; k < count; k += nthr) {
    const T x = a[k], y = b[k];
    a[k] = y;
    b[k] = x;
  }
}

namespace detail {

// 16-byte vectors each thread keeps in flight: enough bytes outstanding per SM to cover an
// NVLink round trip (about 1-2 us) at link rate with one 512-thread block per SM. Copies go
// 8 deep (2 x H200, 1 GiB: all-to-all 1849 -> 1807 us, gather 1694 -> 1640 us against 4 deep,
// with 32 KiB tiles); reductions stay 4 deep, as they hold two vectors and the fp32 sums per
// step within 128 registers. A kernel may define PK_COPY_UNROLL to try another depth.
#ifndef PK_COPY_UNROLL
#define PK_COPY_UNROLL 8
#endif
constexpr int kUnroll = PK_COPY_UNROLL;
constexpr int kReduceUnroll = 4;

// A .cg (L2, not L1) vector load the compiler may schedule with its neighbours: unlike the
// volatile asm in ptx.cuh it can be batched, and as a memory read it still stays after the
// __syncthreads() that follows a flag wait.
__device__ __forceinline__ Vec16 ld_cg_batched(const Vec16* p) {
  const int4 r = __ldcg(reinterpret_cast<const int4*>(p));
  Vec16 v;
  v.w[0] = static_cast<unsigned int>(r.x);
  v.w[1] = static_cast<unsigned int>(r.y);
  v.w[2] = static_cast<unsigned int>(r.z);
  v.w[3] = static_cast<unsigned int>(r.w);
  return v;
}

template <class T>
__device__ __forceinline__ T ld_cg_scalar(const T* p) {
  if constexpr (ElemBits<T>::bytes == 8)
    return from_bits<T>(ld_cg_u32(p) | (static_cast<unsigned long long>(ld_cg_u32(reinterpret_cast<const unsigned int*>(p) + 1)) << 32));
  else if constexpr (ElemBits<T>::bytes == 4) return from_bits<T>(ld_cg_u32(p));
  else if constexpr (ElemBits<T>::bytes == 2) return from_bits<T>(ld_cg_u16(p));
  else return from_bits<T>(ld_cg_u8(p));
}

}  // namespace detail

// Copies src[0, count) to dst[0, count); either side may be a peer's memory (pull or push).
// 16-byte vectors, kUnroll loads in flight per thread before the stores, when both ends are
// 16-byte aligned; scalars otherwise and for the tail. Any count. No synchronisation.
template <class T>
__device__ __forceinline__ void copy_elems(const T* src, T* dst, long long count) {
  constexpr int V = VecTraits<T>::per16, U = detail::kUnroll;
  const long long tid = block_thread(), nthr = block_threads();
  long long done = 0;
  if (is_aligned16(src) && is_aligned16(dst)) {
    const long long nvec = count / V;
    const Vec16* s = reinterpret_cast<const Vec16*>(src);
    Vec16* d = reinterpret_cast<Vec16*>(dst);
    for (long long base = tid; base < nvec; base += nthr * U) {
      Vec16 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (base + u * nthr < nvec) v[u] = detail::ld_cg_batched(s + base + u * nthr);
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (base + u * nthr < nvec) d[base + u * nthr] = v[u];
    }
    done = nvec * V;
  }
  for (long long k = done + tid; k < count; k += nthr) dst[k] = detail::ld_cg_scalar(src + k);
}

// Reduces src[0..nsrc)[0, count) element-wise in fp32, in source order (pairs of sources per
// step, so 2 x kReduceUnroll vectors are in flight per thread; a fixed order makes every rank's
// result bit-identical), and writes the result to dst[0..ndst)[0, count). Sources and
// destinations may be local or a peer's memory. Any count; 16-byte vectors where every
// pointer is 16-byte aligned.
template <ReduceOp R, class T>
__device__ __forceinline__ void reduce_sources(const T* const* src, int nsrc, long long count,
                                               T* const* dst, int ndst) {
  constexpr int V = VecTraits<T>::per16, U = detail::kReduceUnroll;
  const long long tid = block_thread(), nthr = block_threads();
  bool vec = true;
  for (int r = 0; r < nsrc; ++r) vec = vec && is_aligned16(src[r]);
  for (int j = 0; j < ndst; ++j) vec = vec && is_aligned16(dst[j]);
  long long done = 0;
  if (vec) {
    const long long nvec = count / V;
    for (long long base = tid; base < nvec; base += nthr * U) {
      acc_t<T> acc[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int k = 0; k < V; ++k) acc[u][k] = reduce_identity<R, acc_t<T>>();
      for (int r = 0; r < nsrc; r += 2) {
        const bool pair = r + 1 < nsrc;
        const Vec16* s0 = reinterpret_cast<const Vec16*>(src[r]);
        const Vec16* s1 = reinterpret_cast<const Vec16*>(src[pair ? r + 1 : r]);
        Vec16 a[U], b[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const long long i = base + u * nthr;
          if (i < nvec) {
            a[u] = detail::ld_cg_batched(s0 + i);
            if (pair) b[u] = detail::ld_cg_batched(s1 + i);
          }
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int k = 0; k < V; ++k) {
            acc[u][k] = reduce_combine<R>(acc[u][k], vec_get<T>(a[u], k));
            if (pair) acc[u][k] = reduce_combine<R>(acc[u][k], vec_get<T>(b[u], k));
          }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const long long i = base + u * nthr;
        if (i >= nvec) continue;
        Vec16 out;
#pragma unroll
        for (int k = 0; k < V; ++k) vec_set<T>(out, k, acc[u][k]);
        for (int j = 0; j < ndst; ++j) reinterpret_cast<Vec16*>(dst[j])[i] = out;
      }
    }
    done = nvec * V;
  }
  for (long long k = done + tid; k < count; k += nthr) {
    acc_t<T> acc = reduce_identity<R, acc_t<T>>();
    for (int r = 0; r < nsrc; ++r) acc = reduce_combine<R>(acc, ld_cg_elem(src[r] + k));
    const T v = from_acc<T>(acc);
    for (int j = 0; j < ndst; ++j) dst[j][k] = v;
  }
}

// Reads src.peer[r][offset, offset + count) for every rank r < c.world, reduces them in rank
// order and writes the result to dst[j][dst_offset, dst_offset + count) for j < ndst (local,
// peer, or every rank's copy). Any count.
template <ReduceOp R, class T>
__device__ __forceinline__ void reduce_into(const LaunchContext& c, const SymTensor<T>& src,
                                            long long offset, long long count, T* const* dst,
                                            int ndst, long long dst_offset) {
  const T* from[PK_MAX_RANKS];
  T* to[PK_MAX_RANKS];
  for (int r = 0; r < c.world; ++r) from[r] = src.peer[r] + offset;
  for (int j = 0; j < ndst; ++j) to[j] = dst[j] + dst_offset;
  reduce_sources<R>(from, c.world, count, to, ndst);
}

}  // namespace pk

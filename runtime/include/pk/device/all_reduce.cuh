// all_reduce_tile: reduce a tile across ranks and store the result into every rank's copy.
#pragma once
#include <pk/device/reduce.cuh>

namespace pk {

// Block-cooperative two-shot building block: each rank reduces its own share of the tiles
// (offset/count chosen by the caller) and writes the result into dst on every rank at the same
// offset. 16-byte vectors when every src and dst address allows it, scalar otherwise. The caller
// publishes the stores with __syncthreads() + signal_all() afterwards.
template <ReduceOp R, class T>
__device__ __forceinline__ void all_reduce_tile(const LaunchContext& c, const SymTensor<T>& src,
                                                const SymTensor<T>& dst, long long offset,
                                                long long count) {
  constexpr int V = VecTraits<T>::per16;
  const int tid = block_thread(), nthr = block_threads();
  bool vec = detail::tile_vectorizable(c, src, offset, dst.peer[0] + offset);
  for (int r = 1; r < c.world; ++r) vec = vec && is_aligned16(dst.peer[r] + offset);
  long long done = 0;
  if (vec) {
    const long long nvec = count / V;
    for (long long i = tid; i < nvec; i += nthr) {
      const Vec16 v = detail::reduce_vec<R>(c, src, offset, i);
      for (int r = 0; r < c.world; ++r)
        reinterpret_cast<Vec16*>(dst.peer[r] + offset)[i] = v;
    }
    done = nvec * V;
  }
  for (long long k = done + tid; k < count; k += nthr) {
    const T v = from_acc<T>(detail::reduce_elem<R>(c, src, offset + k));
    for (int r = 0; r < c.world; ++r) dst.peer[r][offset + k] = v;
  }
}

}  // namespace pk

namespace pk {

namespace detail {

template <ReduceOp R> struct MultimemOp;
template <> struct MultimemOp<ReduceOp::sum> { static constexpr const char* name = "add"; };
template <> struct MultimemOp<ReduceOp::max> { static constexpr const char* name = "max"; };
template <> struct MultimemOp<ReduceOp::min> { static constexpr const char* name = "min"; };

// One 16-byte multimem load-reduce: the switch reads the address on every rank and returns the
// reduction. f32 supports add only; bf16/f16 pairs accumulate in fp32 for add.
template <ReduceOp R, class T>
__device__ __forceinline__ Vec16 multimem_ld_reduce_v4(const void* mc) {
  Vec16 v;
  if constexpr (ElemBits<T>::bytes == 4) {
    static_assert(R == ReduceOp::sum, "multimem f32 reductions support add only");
    asm volatile("multimem.ld_reduce.relaxed.sys.global.add.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(mc) : "memory");
  } else if constexpr (sizeof(T) == 2 && R == ReduceOp::sum) {
    if constexpr (is_same<T, bf16>::value)
      asm volatile("multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.bf16x2 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(mc) : "memory");
    else
      asm volatile("multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.f16x2 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(mc) : "memory");
  } else if constexpr (R == ReduceOp::max) {
    if constexpr (is_same<T, bf16>::value)
      asm volatile("multimem.ld_reduce.relaxed.sys.global.max.v4.bf16x2 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(mc) : "memory");
    else
      asm volatile("multimem.ld_reduce.relaxed.sys.global.max.v4.f16x2 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(mc) : "memory");
  } else {
    if constexpr (is_same<T, bf16>::value)
      asm volatile("multimem.ld_reduce.relaxed.sys.global.min.v4.bf16x2 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(mc) : "memory");
    else
      asm volatile("multimem.ld_reduce.relaxed.sys.global.min.v4.f16x2 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(mc) : "memory");
  }
  return v;
}

__device__ __forceinline__ void multimem_st_v4(void* mc, const Vec16& v) {
  asm volatile("multimem.st.relaxed.sys.global.v4.f32 [%0], {%1, %2, %3, %4};"
               ::"l"(mc), "r"(v.w[0]), "r"(v.w[1]), "r"(v.w[2]), "r"(v.w[3]) : "memory");
}

}  // namespace detail

// Multicast (NVLS) lowering of all_reduce_tile: mc_src / mc_dst are multicast addresses of the
// symmetric buffers (cuMulticastCreate + bind, which pk never does unless the user opts in).
// The switch reduces and broadcasts, so each rank handles its own share of the tile. Needs
// 16-byte aligned addresses and count a multiple of 16 bytes (the runtime checks on the host).
// COMPILED ONLY in pk's tests: executing multimem.* on the shared test machines is forbidden.
template <ReduceOp R, class T>
__device__ __forceinline__ void all_reduce_tile_multimem(T* mc_src, T* mc_dst, long long offset,
                                                         long long count) {
  constexpr int V = VecTraits<T>::per16;
  const int tid = block_thread(), nthr = block_threads();
  const long long nvec = count / V;
  for (long long i = tid; i < nvec; i += nthr) {
    const Vec16 v = detail::multimem_ld_reduce_v4<R, T>(mc_src + offset + i * V);
    detail::multimem_st_v4(mc_dst + offset + i * V, v);
  }
}

}  // namespace pk

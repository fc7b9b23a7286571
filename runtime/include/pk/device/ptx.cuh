// Thin inline-PTX wrappers shared by the primitives (no CUDA toolkit header: NVRTC compiles this
// with only pk's embedded headers).
#pragma once

namespace pk {

// std::is_same without <type_traits> (NVRTC has no standard library here).
template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };
// std::conditional likewise.
template <bool B, class T, class F> struct conditional { using type = T; };
template <class T, class F> struct conditional<false, T, F> { using type = F; };

// 16 bytes moved as one vector access.
struct alignas(16) Vec16 {
  unsigned int w[4];
};

__device__ __forceinline__ unsigned long long ld_acquire_sys(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned long long ld_relaxed_sys(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void st_relaxed_sys(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// A flag add with no ordering of its own: counting adds whose order comes from a fence the
// block issued before (one fence instead of one release per add).
__device__ __forceinline__ void red_add_relaxed_sys(unsigned long long* p, unsigned long long v) {
  asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void fence_acq_rel_sys() {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

__device__ __forceinline__ void fence_acquire_sys() {
  // fence.acq_rel is the weakest fence PTX offers that gives acquire semantics to a preceding
  // relaxed load.
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void nanosleep_ns(unsigned int ns) {
  asm volatile("nanosleep.u32 %0;" ::"r"(ns));
}

__device__ __forceinline__ unsigned int atomic_cas_u32(unsigned int* p, unsigned int cmp,
                                                       unsigned int val) {
  unsigned int old;
  asm volatile("atom.global.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(p), "r"(cmp), "r"(val)
               : "memory");
  return old;
}

// Shared-memory address of a generic pointer into this block's shared memory.
__device__ __forceinline__ unsigned int smem_addr(const void* p) {
  unsigned long long a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return static_cast<unsigned int>(a);
}

// Global loads that bypass L1: peer data published after a flag wait must not be served from a
// line this SM cached earlier in the same launch.
__device__ __forceinline__ Vec16 ld_cg_v4(const void* p) {
  Vec16 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3])
               : "l"(p)
               : "memory");
  return v;
}

__device__ __forceinline__ unsigned int ld_cg_u32(const void* p) {
  unsigned int v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned short ld_cg_u16(const void* p) {
  unsigned short v;
  asm volatile("ld.global.cg.u16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned char ld_cg_u8(const void* p) {
  unsigned short v;  // PTX has no 8-bit registers: the byte lands zero-extended in 16 bits
  asm volatile("ld.global.cg.u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
  return static_cast<unsigned char>(v);
}

__device__ __forceinline__ bool is_aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

// Block-wide thread index and size (the primitives use 1-D indexing over all block threads).
__device__ __forceinline__ int block_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ __forceinline__ int block_threads() { return blockDim.x * blockDim.y * blockDim.z; }

}  // namespace pk

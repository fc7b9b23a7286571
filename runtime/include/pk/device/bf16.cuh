// bf16 and fp16 storage types that need no CUDA header, so NVRTC compiles emitted code with
// only pk's embedded headers.
#pragma once

namespace pk {

struct bf16 { unsigned short bits; };
struct f16 { unsigned short bits; };

// The conversions are device code; host code (the runtime) includes this header only for the
// storage types, so they are hidden from a plain C++ compiler.
#if defined(__CUDACC__)

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(bf16 x) {
  return __uint_as_float(static_cast<unsigned int>(x.bits) << 16);
}
__device__ __forceinline__ float to_float(f16 x) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
}

template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ bf16 from_float<bf16>(float x) {
  unsigned short b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(x));
  return bf16{b};
}
template <> __device__ __forceinline__ f16 from_float<f16>(float x) {
  unsigned short b;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(x));
  return f16{b};
}

// Two floats as two T in one word (lo in the low half), rounded to nearest even by one packed
// conversion: half the instructions of two scalar ones, on a faster pipe.
template <class T> __device__ __forceinline__ unsigned pack2(float lo, float hi);
template <> __device__ __forceinline__ unsigned pack2<bf16>(float lo, float hi) {
  unsigned w;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
}
template <> __device__ __forceinline__ unsigned pack2<f16>(float lo, float hi) {
  unsigned w;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
}
#endif  // __CUDACC__

}  // namespace pk

// bf16, fp16 and fp8 (e4m3, e5m2) storage types that need no CUDA header, so NVRTC compiles
// emitted code with only pk's embedded headers.
#pragma once

namespace pk {

struct bf16 { unsigned short bits; };
struct f16 { unsigned short bits; };
// fp8 as OCP's E4M3 (no infinities, max 448) and E5M2 (max 57344). Conversions to them round to
// nearest even and saturate to the largest finite value (cvt's .satfinite; NaN stays NaN).
struct f8e4m3 { unsigned char bits; };
struct f8e5m2 { unsigned char bits; };

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
// Two floats as two fp8 in the low 16 bits (lo in the low byte), by one packed conversion.
template <class T> __device__ __forceinline__ unsigned short pack2_f8(float lo, float hi);
template <> __device__ __forceinline__ unsigned short pack2_f8<f8e4m3>(float lo, float hi) {
  unsigned short b;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(b) : "f"(hi), "f"(lo));
  return b;
}
template <> __device__ __forceinline__ unsigned short pack2_f8<f8e5m2>(float lo, float hi) {
  unsigned short b;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(b) : "f"(hi), "f"(lo));
  return b;
}
// Two fp8 in the low 16 bits (lo in the low byte) as two floats, by one packed conversion
// (exact: fp8 widens through f16).
template <class T> __device__ __forceinline__ void unpack2_f8(unsigned short two, float& lo, float& hi);
template <> __device__ __forceinline__ void unpack2_f8<f8e4m3>(unsigned short two, float& lo, float& hi) {
  unsigned h;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"(two));
  lo = to_float(f16{static_cast<unsigned short>(h)}), hi = to_float(f16{static_cast<unsigned short>(h >> 16)});
}
template <> __device__ __forceinline__ void unpack2_f8<f8e5m2>(unsigned short two, float& lo, float& hi) {
  unsigned h;
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h) : "h"(two));
  lo = to_float(f16{static_cast<unsigned short>(h)}), hi = to_float(f16{static_cast<unsigned short>(h >> 16)});
}
// One fp8 value is the low half of a pair.
__device__ __forceinline__ float to_float(f8e4m3 x) {
  float lo, hi;
  unpack2_f8<f8e4m3>(x.bits, lo, hi);
  return lo;
}
__device__ __forceinline__ float to_float(f8e5m2 x) {
  float lo, hi;
  unpack2_f8<f8e5m2>(x.bits, lo, hi);
  return lo;
}
template <> __device__ __forceinline__ f8e4m3 from_float<f8e4m3>(float x) {
  return f8e4m3{static_cast<unsigned char>(pack2_f8<f8e4m3>(x, 0.0f))};
}
template <> __device__ __forceinline__ f8e5m2 from_float<f8e5m2>(float x) {
  return f8e5m2{static_cast<unsigned char>(pack2_f8<f8e5m2>(x, 0.0f))};
}
#endif  // __CUDACC__

}  // namespace pk

// Element access inside a 16-byte vector and fp32 reduction operators, for f32 / bf16 / f16.
#pragma once
#include <pk/device/bf16.cuh>
#include <pk/device/ptx.cuh>

namespace pk {

enum class ReduceOp { sum, max, min };

template <class T>
struct ElemBits;  // raw bit width of T, as the type loads use
template <> struct ElemBits<float> { static constexpr int bytes = 4; };
template <> struct ElemBits<bf16> { static constexpr int bytes = 2; };
template <> struct ElemBits<f16> { static constexpr int bytes = 2; };

template <class T>
struct VecTraits {
  static constexpr int per16 = 16 / ElemBits<T>::bytes;  // elements per 16-byte vector
};

template <class T> __device__ __forceinline__ T from_bits(unsigned int b);
template <> __device__ __forceinline__ float from_bits<float>(unsigned int b) {
  return __uint_as_float(b);
}
template <> __device__ __forceinline__ bf16 from_bits<bf16>(unsigned int b) {
  return bf16{static_cast<unsigned short>(b)};
}
template <> __device__ __forceinline__ f16 from_bits<f16>(unsigned int b) {
  return f16{static_cast<unsigned short>(b)};
}

__device__ __forceinline__ unsigned int to_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned int to_bits(bf16 x) { return x.bits; }
__device__ __forceinline__ unsigned int to_bits(f16 x) { return x.bits; }

// Element j of a 16-byte vector holding T values, as fp32.
template <class T>
__device__ __forceinline__ float vec_get(const Vec16& v, int j) {
  if constexpr (ElemBits<T>::bytes == 4) {
    return to_float(from_bits<T>(v.w[j]));
  } else {
    return to_float(from_bits<T>((v.w[j >> 1] >> ((j & 1) * 16)) & 0xffffu));
  }
}

template <class T>
__device__ __forceinline__ void vec_set(Vec16& v, int j, float x) {
  const unsigned int b = to_bits(from_float<T>(x));
  if constexpr (ElemBits<T>::bytes == 4) {
    v.w[j] = b;
  } else {
    const int s = (j & 1) * 16;
    v.w[j >> 1] = (v.w[j >> 1] & ~(0xffffu << s)) | (b << s);
  }
}

// Scalar load of one T that bypasses L1 (see ld_cg_v4), as fp32.
template <class T>
__device__ __forceinline__ float ld_cg_elem(const T* p) {
  if constexpr (ElemBits<T>::bytes == 4) {
    return to_float(from_bits<T>(ld_cg_u32(p)));
  } else {
    return to_float(from_bits<T>(ld_cg_u16(p)));
  }
}

template <ReduceOp R>
__device__ __forceinline__ float reduce_identity() {
  if constexpr (R == ReduceOp::sum) return 0.0f;
  if constexpr (R == ReduceOp::max) return -__int_as_float(0x7f800000);  // -inf
  if constexpr (R == ReduceOp::min) return __int_as_float(0x7f800000);   // +inf
}

template <ReduceOp R>
__device__ __forceinline__ float reduce_combine(float a, float b) {
  if constexpr (R == ReduceOp::sum) return a + b;
  if constexpr (R == ReduceOp::max) return fmaxf(a, b);
  if constexpr (R == ReduceOp::min) return fminf(a, b);
}

}  // namespace pk

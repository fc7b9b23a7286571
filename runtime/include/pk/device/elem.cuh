// Element access inside a 16-byte vector and the reduction operators: floats (f32 / bf16 / f16 / fp8)
// reduce in fp32, integers (i32 / i64) in their own type, so integer sums stay exact.
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
template <> struct ElemBits<f8e4m3> { static constexpr int bytes = 1; };
template <> struct ElemBits<f8e5m2> { static constexpr int bytes = 1; };
template <> struct ElemBits<int> { static constexpr int bytes = 4; };
template <> struct ElemBits<long long> { static constexpr int bytes = 8; };
template <> struct ElemBits<signed char> { static constexpr int bytes = 1; };  // i8

template <class T>
struct VecTraits {
  static constexpr int per16 = 16 / ElemBits<T>::bytes;  // elements per 16-byte vector
};

// The type a reduction of T accumulates in.
template <class T> struct AccOf { using type = float; };
template <> struct AccOf<int> { using type = int; };
template <> struct AccOf<long long> { using type = long long; };
template <> struct AccOf<signed char> { using type = signed char; };
template <class T> using acc_t = typename AccOf<T>::type;

template <class T>
__device__ __forceinline__ acc_t<T> to_acc(T x) {
  if constexpr (is_same<acc_t<T>, T>::value) return x;
  else return to_float(x);
}
template <class T>
__device__ __forceinline__ T from_acc(acc_t<T> x) {
  if constexpr (is_same<acc_t<T>, T>::value) return x;
  else return from_float<T>(x);
}

template <class T> __device__ __forceinline__ T from_bits(unsigned long long b);
template <> __device__ __forceinline__ float from_bits<float>(unsigned long long b) {
  return __uint_as_float(static_cast<unsigned int>(b));
}
template <> __device__ __forceinline__ bf16 from_bits<bf16>(unsigned long long b) {
  return bf16{static_cast<unsigned short>(b)};
}
template <> __device__ __forceinline__ f16 from_bits<f16>(unsigned long long b) {
  return f16{static_cast<unsigned short>(b)};
}
template <> __device__ __forceinline__ f8e4m3 from_bits<f8e4m3>(unsigned long long b) {
  return f8e4m3{static_cast<unsigned char>(b)};
}
template <> __device__ __forceinline__ f8e5m2 from_bits<f8e5m2>(unsigned long long b) {
  return f8e5m2{static_cast<unsigned char>(b)};
}
template <> __device__ __forceinline__ int from_bits<int>(unsigned long long b) {
  return static_cast<int>(static_cast<unsigned int>(b));
}
template <> __device__ __forceinline__ long long from_bits<long long>(unsigned long long b) {
  return static_cast<long long>(b);
}
template <> __device__ __forceinline__ signed char from_bits<signed char>(unsigned long long b) {
  return static_cast<signed char>(static_cast<unsigned char>(b));
}

__device__ __forceinline__ unsigned long long to_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned long long to_bits(bf16 x) { return x.bits; }
__device__ __forceinline__ unsigned long long to_bits(f16 x) { return x.bits; }
__device__ __forceinline__ unsigned long long to_bits(f8e4m3 x) { return x.bits; }
__device__ __forceinline__ unsigned long long to_bits(f8e5m2 x) { return x.bits; }
__device__ __forceinline__ unsigned long long to_bits(int x) { return static_cast<unsigned int>(x); }
__device__ __forceinline__ unsigned long long to_bits(long long x) { return static_cast<unsigned long long>(x); }
__device__ __forceinline__ unsigned long long to_bits(signed char x) { return static_cast<unsigned char>(x); }

// The raw bits of element j of a 16-byte vector holding T values, and writing them.
template <class T>
__device__ __forceinline__ unsigned long long vec_bits(const Vec16& v, int j) {
  if constexpr (ElemBits<T>::bytes == 8) return v.w[2 * j] | (static_cast<unsigned long long>(v.w[2 * j + 1]) << 32);
  else if constexpr (ElemBits<T>::bytes == 4) return v.w[j];
  else if constexpr (ElemBits<T>::bytes == 2) return (v.w[j >> 1] >> ((j & 1) * 16)) & 0xffffu;
  else return (v.w[j >> 2] >> ((j & 3) * 8)) & 0xffu;
}
template <class T>
__device__ __forceinline__ void vec_put_bits(Vec16& v, int j, unsigned long long b) {
  if constexpr (ElemBits<T>::bytes == 8) {
    v.w[2 * j] = static_cast<unsigned int>(b);
    v.w[2 * j + 1] = static_cast<unsigned int>(b >> 32);
  } else if constexpr (ElemBits<T>::bytes == 4) {
    v.w[j] = static_cast<unsigned int>(b);
  } else if constexpr (ElemBits<T>::bytes == 2) {
    const int s = (j & 1) * 16;
    v.w[j >> 1] = (v.w[j >> 1] & ~(0xffffu << s)) | (static_cast<unsigned int>(b) << s);
  } else {
    const int s = (j & 3) * 8;
    v.w[j >> 2] = (v.w[j >> 2] & ~(0xffu << s)) | (static_cast<unsigned int>(b & 0xffu) << s);
  }
}

// Element j of a 16-byte vector holding T values, as T's accumulator type, and back.
template <class T>
__device__ __forceinline__ acc_t<T> vec_get(const Vec16& v, int j) {
  return to_acc(from_bits<T>(vec_bits<T>(v, j)));
}
template <class T>
__device__ __forceinline__ void vec_set(Vec16& v, int j, acc_t<T> x) {
  vec_put_bits<T>(v, j, to_bits(from_acc<T>(x)));
}

// Scalar load of one T that bypasses L1 (see ld_cg_v4), as T's accumulator type.
template <class T>
__device__ __forceinline__ acc_t<T> ld_cg_elem(const T* p) {
  if constexpr (ElemBits<T>::bytes == 8) {
    const unsigned long long lo = ld_cg_u32(p), hi = ld_cg_u32(reinterpret_cast<const unsigned int*>(p) + 1);
    return to_acc(from_bits<T>(lo | (hi << 32)));
  } else if constexpr (ElemBits<T>::bytes == 4) {
    return to_acc(from_bits<T>(ld_cg_u32(p)));
  } else if constexpr (ElemBits<T>::bytes == 2) {
    return to_acc(from_bits<T>(ld_cg_u16(p)));
  } else {
    return to_acc(from_bits<T>(ld_cg_u8(p)));
  }
}

template <ReduceOp R, class A = float>
__device__ __forceinline__ A reduce_identity() {
  if constexpr (is_same<A, float>::value) {
    if constexpr (R == ReduceOp::sum) return 0.0f;
    if constexpr (R == ReduceOp::max) return -__int_as_float(0x7f800000);  // -inf
    if constexpr (R == ReduceOp::min) return __int_as_float(0x7f800000);   // +inf
  } else {
    constexpr A highest = A((1ull << (sizeof(A) * 8 - 1)) - 1);
    constexpr A lowest = A(-highest - 1);  // the most negative value
    if constexpr (R == ReduceOp::sum) return A(0);
    if constexpr (R == ReduceOp::max) return lowest;
    if constexpr (R == ReduceOp::min) return ~lowest;
  }
}

template <ReduceOp R, class A>
__device__ __forceinline__ A reduce_combine(A a, A b) {
  if constexpr (is_same<A, float>::value) {
    if constexpr (R == ReduceOp::sum) return a + b;
    if constexpr (R == ReduceOp::max) return fmaxf(a, b);
    if constexpr (R == ReduceOp::min) return fminf(a, b);
  } else {
    if constexpr (R == ReduceOp::sum) return a + b;
    if constexpr (R == ReduceOp::max) return a > b ? a : b;
    if constexpr (R == ReduceOp::min) return a < b ? a : b;
  }
}

}  // namespace pk

// Integer arithmetic of integer tiles' maps, wrapping as the language promises: signed overflow
// is undefined in C++ (a compiler may assume it never happens), so sums, differences, products
// and negations go through the unsigned type of the same width, and the one division that
// overflows (the minimum by -1) is a negation.
#pragma once

namespace pk {
namespace tile {

template <class T> struct unsigned_of;
template <> struct unsigned_of<int> { using type = unsigned int; };
template <> struct unsigned_of<long long> { using type = unsigned long long; };

template <class T>
__device__ __forceinline__ T wrap_add(T x, T y) {
  using U = typename unsigned_of<T>::type;
  return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
}
template <class T>
__device__ __forceinline__ T wrap_sub(T x, T y) {
  using U = typename unsigned_of<T>::type;
  return static_cast<T>(static_cast<U>(x) - static_cast<U>(y));
}
template <class T>
__device__ __forceinline__ T wrap_mul(T x, T y) {
  using U = typename unsigned_of<T>::type;
  return static_cast<T>(static_cast<U>(x) * static_cast<U>(y));
}
template <class T>
__device__ __forceinline__ T wrap_neg(T x) {
  using U = typename unsigned_of<T>::type;
  return static_cast<T>(U(0) - static_cast<U>(x));
}
template <class T>
__device__ __forceinline__ T wrap_abs(T x) {
  return x < 0 ? wrap_neg(x) : x;
}
// x / y truncating toward zero; 0 for y == 0.
template <class T>
__device__ __forceinline__ T wrap_div(T x, T y) {
  return y == 0 ? T(0) : y == -1 ? wrap_neg(x) : x / y;
}
// x % y with the dividend's sign; 0 for y == 0 (and for y == -1, where it is always 0).
template <class T>
__device__ __forceinline__ T wrap_rem(T x, T y) {
  return y == 0 || y == -1 ? T(0) : x % y;
}

}  // namespace tile
}  // namespace pk

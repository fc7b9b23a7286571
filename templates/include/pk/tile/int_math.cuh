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
template <> struct unsigned_of<signed char> { using type = unsigned char; };

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
// x << y with zeros shifted in (through the unsigned type: no overflow); 0 for y outside
// 0 .. bits - 1, where C++ leaves the shift undefined.
template <class T>
__device__ __forceinline__ T wrap_shl(T x, T y) {
  using U = typename unsigned_of<T>::type;
  return y < 0 || y >= T(8 * sizeof(T)) ? T(0) : static_cast<T>(static_cast<U>(x) << y);
}
// x >> y, arithmetic (the sign copied in); y outside 0 .. bits - 1 gives the sign fill (0 or -1).
template <class T>
__device__ __forceinline__ T wrap_shr(T x, T y) {
  return y < 0 || y >= T(8 * sizeof(T)) ? (x < 0 ? T(-1) : T(0)) : x >> y;
}

// MurmurHash3's 32-bit finaliser: a bijection whose every input bit reaches every output bit.
__device__ __forceinline__ unsigned fmix32(unsigned h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}
// x and y mixed into [0, 2^31): uniform() chains it on i32 words, from the seed's two words
// over an element's coordinates. For one x, distinct y give distinct 32-bit mixes, and for one
// y distinct x do (two bijections around an xor), before the top bit is dropped. 64-bit
// operands are folded to 32 bits first (the high word times an odd constant). Not for
// cryptography.
__device__ __forceinline__ unsigned hash_words(unsigned u, unsigned v) {
  return fmix32(u ^ fmix32(v + 0x9e3779b9u)) >> 1;
}
__device__ __forceinline__ int wrap_hash(int x, int y) {
  return static_cast<int>(hash_words(static_cast<unsigned>(x), static_cast<unsigned>(y)));
}
__device__ __forceinline__ long long wrap_hash(long long x, long long y) {
  auto fold = [](long long w) {
    const unsigned long long b = static_cast<unsigned long long>(w);
    return static_cast<unsigned>(b) ^ (static_cast<unsigned>(b >> 32) * 0x9e3779b9u);
  };
  return static_cast<long long>(hash_words(fold(x), fold(y)));
}

}  // namespace tile
}  // namespace pk

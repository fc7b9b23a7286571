// A weight-only quantised GEMM's B operand widened in the ring: B is stored fp8 (e4m3 or e5m2,
// [N, K]) or i8 (signed char) and A is bf16 or f16, which wgmma cannot multiply together. The loader's TMA lands each
// stage's 256 x 64 fp8 box (unswizzled, 64-byte rows) in the upper half of the stage's B slot, and
// the two consumer warpgroups rewrite it in place as the 256 x 64 bf16 / f16 tile wgmma reads
// (128-byte swizzle) while the tensor cores still run the previous step's wgmma. Every fp8 value
// and every i8 value is exact in bf16 and f16, so the product is the one of the widened weights. The widening is
// integer bit moves and one packed multiply per two values: conversion instructions issue at a
// quarter of the ALU rate and would cost more than the stage's wgmma.
#pragma once
#include <pk/device/bf16.cuh>
#include <pk/device/store.cuh>

namespace pk {
namespace gemm {

constexpr int kWidenThreads = 256;        // both consumer warpgroups
constexpr int kWidenBarrier = 1;          // their named barrier
constexpr unsigned int kRawOffset = 16384;  // the fp8 box: the upper half of a stage's 32 KiB B slot
constexpr int kWidenChunks = 256 * 4 / kWidenThreads;  // 16-byte fp8 chunks a thread widens per stage

// a * b or a - b (Op '*' or '-') on two values of type Out (bf16 or f16) packed in a word, rounded to nearest.
template <char Op, class Out>
__device__ __forceinline__ unsigned int packed(unsigned int a, unsigned int b) {
  constexpr bool kBf16 = is_same<Out, bf16>::value;
  unsigned int d;
  if constexpr (Op == '*' && kBf16) asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else if constexpr (Op == '*') asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else if constexpr (kBf16) asm("sub.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// Two i8 values (bytes 0 and 2 of t, the other bytes 0) as two 16-bit values of type Out, by
// magic numbers. f16: 1024 + (x + 128) is 0x6400 | (x ^ 0x80), less 1152 (0x6480) is x. bf16 has
// 7 mantissa bits, too few for x + 128: 128 + (x & 127) is 0x4300 | (x & 0x7F), less 128 where x
// >= 0 and 256 where x < 0 (0x4300 | (x & 0x80)) is x. Every step is exact.
template <class Out>
__device__ __forceinline__ unsigned int widen_i8_pair(unsigned int t) {
  if constexpr (is_same<Out, bf16>::value)
    return packed<'-', bf16>((t & 0x007F007Fu) | 0x43004300u, (t & 0x00800080u) | 0x43004300u);
  else
    return packed<'-', f16>(t ^ 0x64806480u, 0x64806480u);
}

// Two fp8 values (bytes 1 and 3 of t, so that their signs sit at bits 15 and 31) as two 16-bit
// values of type Out: the exponent and mantissa bits moved into place and scaled by 2^(Out's
// bias - the fp8 bias), which keeps fp8 subnormals exact, then the signs. NaN and infinity
// aside (patch_specials).
template <class Fp8, class Out>
__device__ __forceinline__ unsigned int widen_pair(unsigned int t) {
  constexpr bool kE4m3 = is_same<Fp8, f8e4m3>::value, kBf16 = is_same<Out, bf16>::value;
  const unsigned int sign = t & 0x80008000u;
  if constexpr (!kE4m3 && !kBf16) return t;  // e5m2 is the top byte of an f16
  else if constexpr (kE4m3 && kBf16) return packed<'*', bf16>((t >> 4) & 0x07F007F0u, 0x7B807B80u) | sign;  // 2^120
  else if constexpr (kE4m3) return packed<'*', f16>((t >> 1) & 0x3F803F80u, 0x5C005C00u) | sign;             // 2^8
  else return packed<'*', bf16>((t >> 3) & 0x0FE00FE0u, 0x77807780u) | sign;                                 // 2^112
}

// Bytes b0, b1 of w (Pair 0) or b2, b3 (Pair 1) as bytes 1 and 3 of the result (fp8: the sign
// at bit 15 and 31), or as bytes 0 and 2 (i8: Low), the other bytes 0.
template <int Pair, bool Low = false>
__device__ __forceinline__ unsigned int spread_pair(unsigned int w) {
  unsigned int d;
  asm("prmt.b32 %0, %1, 0, %2;"
      : "=r"(d)
      : "r"(w), "n"(Low ? (Pair == 0 ? 0x4140 : 0x4342) : (Pair == 0 ? 0x1404 : 0x3424)));
  return d;
}

// Bytes of w, pair Pair, as two values of type Out.
template <class Fp8, class Out, int Pair>
__device__ __forceinline__ unsigned int widen_word(unsigned int w) {
  if constexpr (is_same<Fp8, signed char>::value) return widen_i8_pair<Out>(spread_pair<Pair, true>(w));
  else return widen_pair<Fp8, Out>(spread_pair<Pair>(w));
}

// A word's bytes that are NaN or infinite (e4m3's only special, S.1111.111; e5m2's S.11111.xx)
// carry into bit 7 of this sum; OR-ed over words, bit 7 of a byte says some word had one there.
template <class Fp8, class Out>
__device__ __forceinline__ unsigned int special_sum(unsigned int w) {
  if constexpr (is_same<Fp8, signed char>::value) return 0u;  // integers have none
  else if constexpr (is_same<Fp8, f8e4m3>::value) return (w & 0x7F7F7F7Fu) + 0x01010101u;
  else if constexpr (is_same<Out, bf16>::value) return (w & 0x7C7C7C7Cu) + 0x04040404u;
  else return 0u;  // e5m2 -> f16 keeps them as they are
}

// Byte offset of 16-byte chunk `chunk` of row `row` in wgmma's K-major tile of 128-byte rows with
// 128-byte swizzle, from a 1024-byte aligned start: the chunk index XORed with the row modulo 8.
__device__ __forceinline__ unsigned int swizzled(int row, int chunk) { return row * 128 + ((chunk ^ (row % 8)) * 16); }

// Raw chunk (row, c) -> the widened tile's chunks 2c and 2c + 1 of the row; returns its specials'
// sum (special_sum).
template <class Fp8, class Out>
__device__ __forceinline__ unsigned int widen_chunk(unsigned char* slot, int row, int c, const uint4& raw) {
  uint4 x, y;
  x.x = widen_word<Fp8, Out, 0>(raw.x);
  x.y = widen_word<Fp8, Out, 1>(raw.x);
  x.z = widen_word<Fp8, Out, 0>(raw.y);
  x.w = widen_word<Fp8, Out, 1>(raw.y);
  y.x = widen_word<Fp8, Out, 0>(raw.z);
  y.y = widen_word<Fp8, Out, 1>(raw.z);
  y.z = widen_word<Fp8, Out, 0>(raw.w);
  y.w = widen_word<Fp8, Out, 1>(raw.w);
  *reinterpret_cast<uint4*>(slot + swizzled(row, 2 * c)) = x;
  *reinterpret_cast<uint4*>(slot + swizzled(row, 2 * c + 1)) = y;
  return special_sum<Fp8, Out>(raw.x) | special_sum<Fp8, Out>(raw.y) | special_sum<Fp8, Out>(raw.z) |
         special_sum<Fp8, Out>(raw.w);
}

// Rewrites the NaNs and infinities among the widened values of chunk (row, c), which the scaling
// made finite but unmistakable: e4m3's NaN became +-480 (above its largest value, 448), e5m2's
// infinity 2^16 and its NaNs 2^16 x 1.25 to 1.75 (above 57344). Rare (weights are finite), so it
// runs after a step's loop when that step met one, and reads back what this thread wrote.
template <class Fp8, class Out>
__device__ __forceinline__ void patch_specials(unsigned char* slot, int row, int c) {
  constexpr bool kE4m3 = is_same<Fp8, f8e4m3>::value, kBf16 = is_same<Out, bf16>::value;
#pragma unroll 1
  for (int i = 0; i < 16; ++i) {
    unsigned short* at = reinterpret_cast<unsigned short*>(slot + swizzled(row, 2 * c + i / 8) + (i % 8) * 2);
    const unsigned int v = *at, sign = v & 0x8000u, mag = v & 0x7FFFu;
    if (kE4m3 && mag == (kBf16 ? 0x43F0u : 0x5F80u)) *at = static_cast<unsigned short>(sign | (kBf16 ? 0x7FC0u : 0x7E00u));
    if (!kE4m3 && mag >= 0x4780u) *at = static_cast<unsigned short>(sign | (mag == 0x4780u ? 0x7F80u : 0x7FC0u));
  }
}

// Chunk `unit` % 4 of fp8 row `unit` / 4 (the box is unswizzled: 64-byte rows).
__device__ __forceinline__ uint4 raw_chunk(const unsigned char* slot, int unit) {
  return *reinterpret_cast<const uint4*>(slot + kRawOffset + unit * 16);
}

__device__ __forceinline__ void widen_sync() {
  asm volatile("bar.sync %0, %1;" ::"n"(kWidenBarrier), "n"(kWidenThreads) : "memory");
}

// One stage's B slot, by consumer thread t (0 .. 255): the widened row r goes to 128 r and
// overwrites fp8 rows 2r - 256 and 2r - 255 for r >= 128, so every thread reads its fp8 chunks
// into registers first, then all write. The second barrier makes every thread's writes, made
// visible to the async proxy, precede both warpgroups' wgmma.
template <class Fp8, class Out>
__device__ __forceinline__ void widen_stage(unsigned char* slot, int t) {
  uint4 raw[kWidenChunks];
#pragma unroll
  for (int i = 0; i < kWidenChunks; ++i) raw[i] = raw_chunk(slot, t + i * kWidenThreads);
  widen_sync();
  unsigned int odd = 0;
#pragma unroll
  for (int i = 0; i < kWidenChunks; ++i) {
    const int u = t + i * kWidenThreads;
    odd |= widen_chunk<Fp8, Out>(slot, u / 4, u % 4, raw[i]);
  }
  if (odd & 0x80808080u)
#pragma unroll 1
    for (int i = 0; i < kWidenChunks; ++i) {
      const int u = t + i * kWidenThreads;
      patch_specials<Fp8, Out>(slot, u / 4, u % 4);
    }
  fence_proxy_async_smem();  // generic writes -> visible to wgmma's reads
  widen_sync();
}

}  // namespace gemm
}  // namespace pk

// Device math of the general tile path's maps that the fp32 library functions make slower than
// they need to be.
#pragma once

namespace pk {
namespace tile {

// e^x as __expf computes it (ex2.approx of x * log2 e, a few ulp), with results below 2^-126
// flushed to zero: __expf's denormal handling costs three more instructions per element, a
// fifth of a softmax's work.
__device__ __forceinline__ float exp_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}

// An integer as a float rounded to odd (toward zero, then the last bit set when inexact): rounding
// that to a narrower type (bf16, f16) rounds the integer once, to nearest even (casts of integer
// tiles, and of a W8A8 GEMM's i32 sums in its epilogue).
template <class X>
__device__ __forceinline__ float to_float_odd(X x) {
  const long long v = static_cast<long long>(x);
  float f = __ll2float_rz(v);
  if (__float2ll_rz(f) != v) f = __uint_as_float(__float_as_uint(f) | 1u);
  return f;
}

}  // namespace tile
}  // namespace pk

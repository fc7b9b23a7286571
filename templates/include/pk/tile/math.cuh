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

}  // namespace tile
}  // namespace pk

// Integer division of index scalars by a divisor known only at run time, with defined results
// where C++ has none: by zero it gives 0 (as integer tiles do), and the most negative value
// divided by -1 wraps instead of overflowing.
#pragma once

namespace pk {

template <class T>
__host__ __device__ __forceinline__ T scalar_div(T a, T b) {
  if (b == 0) return T(0);
  // Negated in unsigned arithmetic, which wraps: the minimum comes back as itself.
  if (b == T(-1)) return static_cast<T>(0ull - static_cast<unsigned long long>(a));
  return a / b;
}

template <class T>
__host__ __device__ __forceinline__ T scalar_rem(T a, T b) {
  if (b == 0 || b == T(-1)) return T(0);
  return a % b;
}

}  // namespace pk

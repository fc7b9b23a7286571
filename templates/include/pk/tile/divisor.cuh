// Division of int tile values by a divisor fixed for the kernel (`ids / experts`, `i % world`):
// the divisor's magic multiplier is computed once where the divisor is defined, and each
// division is then a multiply-high, two shifts and a sign fix instead of the ~25 instructions
// of a general 32-bit division (Granlund and Montgomery's round-up method for unsigned
// 32-bit dividends, applied to magnitudes). Results are C++'s truncating division and
// remainder, and 0 for a zero divisor, as the tile maps define them.
#pragma once

namespace pk {
namespace tile {

class Divisor {
 public:
  __device__ explicit Divisor(int y) : y_(y) {
    // |y| as unsigned (2^31 for INT_MIN); l = ceil(log2 |y|); m = floor(2^32 (2^l - |y|) / |y|) + 1.
    const unsigned a = y < 0 ? 0u - static_cast<unsigned>(y) : static_cast<unsigned>(y);
    const int l = a <= 1 ? 0 : 32 - __clz(a - 1);
    m_ = a == 0 ? 0u : static_cast<unsigned>((((1ull << l) - a) << 32) / a) + 1u;
    s1_ = l < 1 ? l : 1;
    s2_ = l > 1 ? l - 1 : 0;
  }
  __device__ __forceinline__ int div(int x) const {
    if (y_ == 0) return 0;
    const unsigned n = x < 0 ? 0u - static_cast<unsigned>(x) : static_cast<unsigned>(x);
    const unsigned t = __umulhi(m_, n);
    const unsigned q = (t + ((n - t) >> s1_)) >> s2_;
    return (x < 0) != (y_ < 0) ? static_cast<int>(0u - q) : static_cast<int>(q);
  }
  __device__ __forceinline__ int rem(int x) const {
    return y_ == 0 ? 0 : static_cast<int>(static_cast<unsigned>(x) - static_cast<unsigned>(div(x)) * static_cast<unsigned>(y_));
  }

 private:
  int y_;
  unsigned m_;
  int s1_, s2_;
};

}  // namespace tile
}  // namespace pk

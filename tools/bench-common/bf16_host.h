// bf16 on the host for the one-GPU benchmarks: round to nearest even, and back to a double.
#pragma once
#include <cstring>

namespace pk_bench {

inline unsigned short to_bf16(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
}

inline double from_bf16(unsigned short b) {
  unsigned u = unsigned(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace pk_bench

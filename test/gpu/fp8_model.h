// OCP fp8 on the host: a float64 model of the device's e4m3 / e5m2 conversions, for the GPU
// tests' references.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace pkt {

// OCP fp8 on the host, as a float64 model of the device's conversions: E4M3 (bias 7, no
// infinities, largest 448) and E5M2 (bias 15, largest 57344). Encoding rounds to nearest even
// and saturates to the largest finite value; NaN stays NaN (cvt.rn.satfinite).
struct Fp8Format {
  int man, bias;
  double max;
};
constexpr Fp8Format kE4M3{3, 7, 448.0}, kE5M2{2, 15, 57344.0};
inline unsigned char fp8_encode(double x, Fp8Format f) {
  const unsigned char sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x)) return 0x7f;  // a NaN in both formats
  const int emin = 1 - f.bias;
  const double a = std::fabs(x);
  double r = f.max;
  if (a < f.max) {
    const int e = a > 0 && std::ilogb(a) > emin ? std::ilogb(a) : emin;
    const double step = std::ldexp(1.0, e - f.man);
    r = std::min(std::nearbyint(a / step) * step, f.max);  // a / step is exact; ties to even
  }
  if (r == 0) return sign;
  const int e = std::ilogb(r);
  if (e < emin) return sign | static_cast<unsigned char>(r / std::ldexp(1.0, emin - f.man));  // subnormal
  const unsigned mant = static_cast<unsigned>(r / std::ldexp(1.0, e - f.man)) - (1u << f.man);
  return sign | static_cast<unsigned char>(((e + f.bias) << f.man) | mant);
}
inline double fp8_decode(unsigned char b, Fp8Format f) {
  const int e = (b & 0x7f) >> f.man, m = b & ((1 << f.man) - 1);
  const double s = b & 0x80 ? -1.0 : 1.0;
  if (f.man == 3 && e == 15 && m == 7) return NAN;
  if (f.man == 2 && e == 31) return m ? NAN : s * INFINITY;
  if (e == 0) return s * std::ldexp(m, 1 - f.bias - f.man);
  return s * std::ldexp((1 << f.man) + m, e - f.bias - f.man);
}
// Per-block quantisation as the fp8 specs write it, in fp32: each row's blocks of 128 columns
// share amax = max(largest magnitude, 1e-30); q = e4m3(x * (448 / amax)); the stored scale is
// amax * 0.002232142857f (1 / 448), and x comes back as f32(q) * scale.
struct Quantised {
  long long rows, cols, blocks;  // blocks per row
  std::vector<unsigned char> q;
  std::vector<float> amax;
  float scale(long long i) const { return amax[(i / cols) * blocks + (i % cols) / 128] * 0.002232142857f; }
  float value(long long i) const { return static_cast<float>(fp8_decode(q[i], kE4M3)) * scale(i); }
};
inline Quantised quantise_blocks(const std::vector<float>& x, long long rows, long long cols) {
  Quantised r{rows, cols, (cols + 127) / 128, std::vector<unsigned char>(x.size()), {}};
  r.amax.assign(rows * r.blocks, 0.f);
  for (long long i = 0; i < rows * cols; ++i) {
    float& a = r.amax[(i / cols) * r.blocks + (i % cols) / 128];
    a = std::max(a, std::fabs(x[i]));
  }
  for (auto& a : r.amax) a = std::max(a, 1e-30f);
  for (long long i = 0; i < rows * cols; ++i)
    r.q[i] = fp8_encode(x[i] * (448.0f / r.amax[(i / cols) * r.blocks + (i % cols) / 128]), kE4M3);
  return r;
}

}  // namespace pkt

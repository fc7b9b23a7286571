// What the user-written spec sets' GPU tests share: host values of every element type, random
// inputs that are never zero, and the element-by-element check that prints one PASS or FAIL
// line per output against its float64 reference.
#pragma once
#include <cmath>
#include <cstdio>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "tile_test_util.h"

namespace pkt {

inline double hv(float x) { return x; }
inline double hv(pk::bf16 x) { return to_host(x); }
inline double hv(pk::f16 x) { return to_host(x); }
inline double hv(pk::f8e4m3 x) { return to_host(x); }
inline double hv(pk::f8e5m2 x) { return to_host(x); }
inline double hv(int x) { return x; }
inline double hv(long long x) { return double(x); }

// Values of magnitude [0.25, 2) * scale with random signs (or positive), as T; `salt` keeps
// each test's inputs its own.
template <class T>
std::vector<T> spec_random(long long n, unsigned seed, unsigned salt, float scale = 1.f, bool positive = false) {
  std::mt19937 g(seed * 7919u + salt);
  std::uniform_real_distribution<float> d(0.25f, 2.0f);
  std::vector<T> v(n);
  for (auto& x : v) {
    const float f = d(g) * scale;
    x = from_host<T>(positive || (g() & 1) ? f : -f);
  }
  return v;
}

template <class T>
std::vector<double> widen(const std::vector<T>& v) {
  std::vector<double> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = hv(v[i]);
  return o;
}

// Every element of `got` against want(i) within atol + rtol * |want| (or loose(i) where given
// and larger): one `PASS <set> <name>` line (rank 0) or a FAIL line (any rank) with the count,
// the max error and the first miss.
template <class T>
void spec_check(const char* set, const char* name, int W, int rank, const std::vector<T>& got,
                const std::function<double(long long)>& want, double atol, double rtol,
                const std::function<double(long long)>& loose = nullptr) {
  static std::mutex print;
  double max_err = 0;
  long long bad = 0, first = -1;
  for (long long i = 0; i < (long long)got.size(); ++i) {
    const double w = want(i), g = hv(got[i]), e = std::fabs(g - w);
    double tol = atol + rtol * std::fabs(w);
    if (loose) tol = std::max(tol, loose(i));
    if (!(e <= tol)) {
      if (first < 0) first = i;
      ++bad;
    }
    if (e > max_err || std::isnan(e)) max_err = std::isnan(e) ? INFINITY : e;
  }
  std::lock_guard<std::mutex> lock(print);
  if (bad) {
    fail(std::string("FAIL ") + set + " " + name + " W=" + std::to_string(W) + " rank=" + std::to_string(rank) +
         ": " + std::to_string(bad) + " of " + std::to_string(got.size()) + " wrong, max_err " +
         std::to_string(max_err) + ", first at " + std::to_string(first) + " got " +
         std::to_string(hv(got[first])) + " want " + std::to_string(want(first)));
  } else if (rank == 0) {
    std::printf("PASS %s %s W=%d max_err=%.3g (%zu elements)\n", set, name, W, max_err, got.size());
    std::fflush(stdout);
  }
}

}  // namespace pkt

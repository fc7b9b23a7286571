// A benchmark's roofline bound for one kernel and its sizes, from `pkc --roofline=json`
// (docs/roofline.md): the perfect-overlap lower bound in microseconds, so a table can print
// the fraction of it reached. 0 when pkc cannot say (the benchmark then prints no fraction).
#pragma once
#include <cstdio>
#include <string>

namespace pk_bench {

inline double roofline_us(const std::string& pkc, const std::string& spec, const std::string& kernel,
                          const std::string& shapes, int world = 1) {
  const std::string cmd = "'" + pkc + "' '" + spec + "' --roofline=json --kernel=" + kernel +
                          " --shape=" + shapes + " --world-size=" + std::to_string(world) +
                          " -o - 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return 0;
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  if (pclose(p) != 0) return 0;
  const std::string key = "\"overlap_us\": ";
  const std::size_t at = out.find(key);
  return at == std::string::npos ? 0 : std::stod(out.substr(at + key.size()));
}

// "0.83" (bound / measured), or "?" without a bound; `beaten` counts a measured time below
// its bound, which would mean a wrong bound.
inline std::string fraction_of_bound(double bound_us, double measured_us, int* beaten) {
  if (bound_us <= 0 || measured_us <= 0) return "?";
  if (measured_us < bound_us) {
    ++*beaten;
    std::fprintf(stderr, "measured %.2f us beats its roofline bound %.2f us: the bound is wrong\n",
                 measured_us, bound_us);
  }
  char s[32];
  std::snprintf(s, sizeof s, "%.2f", bound_us / measured_us);
  return s;
}

}  // namespace pk_bench

// The flag region a launch takes when its kernel's waits count signals that follow its sizes
// (`flags_by_size=1` on pkc's `// pk-launch` line): one region and epoch per size signature.
// A wait's target is epoch x count, the signals of every launch so far; a launch at other sizes
// would count differently and meet the earlier launches' signals (a wait for too many: a hang;
// too few: it passes before its data came). Launches at one size share a region, so the epochs
// stay in step; each new size takes a region of the context's (ContextOptions::flag_slots).
#pragma once
#include <pk/device/launch_context.cuh>

#include <cstring>
#include <string>
#include <type_traits>

namespace pk {
namespace flag_key_detail {
inline void add(std::string& key, long long v) { key += ',' + std::to_string(v); }
inline void add(std::string& key, double v) {  // by its bits: every value its own key
  long long bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  add(key, bits);
}
// Other scalars (int, int64_t, float, ...) as one of the two above.
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
void add(std::string& key, T v) {
  if constexpr (std::is_floating_point_v<T>) add(key, static_cast<double>(v));
  else add(key, static_cast<long long>(v));
}
template <class T>
void add(std::string& key, const Tensor<T>& t) {
  for (long long d : t.shape) add(key, d);
}
template <class T>
void add(std::string& key, const SymTensor<T>& t) {
  for (long long d : t.shape) add(key, d);
}
}  // namespace flag_key_detail

// "kernel[sizes,...]": every tensor's extents and every scalar's value, in argument order.
template <class... Args>
std::string flag_key_by_size(const std::string& kernel, const Args&... args) {
  std::string key = kernel + "[sizes";
  (flag_key_detail::add(key, args), ...);
  return key + "]";
}

}  // namespace pk

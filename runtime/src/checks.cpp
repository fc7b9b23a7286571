// Host-side argument checks with messages that name the argument and both values.
#include <pk/runtime/checks.h>

#include <cstdint>
#include <string>

namespace pk {
namespace {

std::string dims(const std::vector<long long>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += s[i] < 0 ? std::string("*") : std::to_string(s[i]);
  }
  return out + "]";
}

}  // namespace

Status check_world(int world, int min_world, int multiple_of) {
  if (world < min_world || world > PK_MAX_RANKS)
    return Status::error("world size " + std::to_string(world) + " outside [" +
                         std::to_string(min_world) + ", " + std::to_string(PK_MAX_RANKS) + "]");
  if (multiple_of > 1 && world % multiple_of != 0)
    return Status::error("world size " + std::to_string(world) + " is not a multiple of " +
                         std::to_string(multiple_of));
  return Status::ok();
}

Status check_dtype(const char* name, DType got, DType want) {
  if (got == want) return Status::ok();
  return Status::error(std::string("tensor '") + name + "': expected dtype " + dtype_name(want) +
                       ", got " + dtype_name(got));
}

Status check_shape(const char* name, const std::vector<long long>& got,
                   const std::vector<long long>& want) {
  bool ok = got.size() == want.size();
  for (std::size_t i = 0; ok && i < got.size(); ++i) ok = want[i] < 0 || want[i] == got[i];
  if (ok) return Status::ok();
  return Status::error(std::string("tensor '") + name + "': expected shape " + dims(want) +
                       ", got " + dims(got));
}

Status check_alignment(const char* name, const void* ptr, std::size_t alignment) {
  const auto a = reinterpret_cast<std::uintptr_t>(ptr);
  if (alignment && a % alignment == 0) return Status::ok();
  return Status::error(std::string(name) + ": address " + std::to_string(a) +
                       " is not aligned to " + std::to_string(alignment) + " bytes");
}

Status check_divisible(const char* what, long long value, long long divisor) {
  if (divisor > 0 && value % divisor == 0) return Status::ok();
  return Status::error(std::string(what) + " = " + std::to_string(value) +
                       " is not a multiple of " + std::to_string(divisor));
}

Status check_view(std::size_t elem_size, std::size_t capacity_bytes,
                  const std::vector<long long>& shape, long long* numel_out) {
  if (shape.empty() || shape.size() > 4)
    return Status::error("tensor rank " + std::to_string(shape.size()) + " outside [1, 4]");
  long long n = 1;
  for (long long d : shape) {
    if (d < 0) return Status::error("shape " + dims(shape) + " has a negative extent");
    if (d > 0 && n > (1ll << 62) / d) return Status::error("shape " + dims(shape) + " overflows");
    n *= d;
  }
  if (static_cast<unsigned long long>(n) * elem_size > capacity_bytes)
    return Status::error("shape " + dims(shape) + " needs " + std::to_string(n * elem_size) +
                         " bytes, buffer has " + std::to_string(capacity_bytes));
  *numel_out = n;
  return Status::ok();
}

}  // namespace pk

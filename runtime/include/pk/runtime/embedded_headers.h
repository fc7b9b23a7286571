// pk's device headers, embedded in the library at build time so NVRTC needs no include path.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace pk {

struct EmbeddedHeader {
  const char* name;  // include name, e.g. "pk/device/all.cuh"
  const char* text;  // NUL-terminated contents
  std::size_t size;  // bytes, without the NUL
};

// Every header emitted code may include (runtime/include/pk/device/, templates/include/pk/), sorted
// by name.
const std::vector<EmbeddedHeader>& embedded_headers();

// nullptr when `name` is not embedded.
const EmbeddedHeader* find_embedded_header(const std::string& name);

}  // namespace pk

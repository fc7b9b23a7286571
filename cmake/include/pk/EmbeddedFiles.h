// Files compiled into a binary (device headers, the spec header), served from memory.
#pragma once
#include <cstddef>

namespace pk {
struct EmbeddedFile {
  const char *name;  // path relative to its include root, e.g. "pk/device/all.cuh"
  const char *text;
  size_t size;
};
struct EmbeddedFileList {
  const EmbeddedFile *files;
  size_t count;
};
} // namespace pk

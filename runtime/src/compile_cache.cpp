// On-disk kernel cache: one file per key, written via temp file + rename.
#include <pk/runtime/compile_cache.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#ifndef PKC_VERSION
#error "PKC_VERSION must be defined by the build"
#endif

namespace pk {
namespace {

constexpr char kMagic[8] = {'P', 'K', 'C', 'C', 'A', 'C', 'H', '1'};

std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// A second, differently mixed hash so the two halves fail independently.
std::uint64_t mix_hash(const std::string& s) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
  for (unsigned char c : s) {
    h ^= c + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
  }
  return h ^ (h >> 32);
}

Status mkdirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return Status::error("cannot create cache directory " + cur + ": " + std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace

const char* pkc_version() { return PKC_VERSION; }

std::string cache_key_text(const std::string& source, const std::vector<std::string>& options,
                           const std::string& arch, const std::string& toolchain) {
  // Length-prefixed fields: no choice of contents can make two keys concatenate equally.
  std::string k = "pkc " + std::string(PKC_VERSION) + "\n";
  k += "arch " + std::to_string(arch.size()) + " " + arch + "\n";
  k += "toolchain " + std::to_string(toolchain.size()) + " " + toolchain + "\n";
  for (const auto& o : options) k += "opt " + std::to_string(o.size()) + " " + o + "\n";
  k += "source " + std::to_string(source.size()) + "\n" + source;
  return k;
}

std::string cache_key_hash(const std::string& key_text) {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(key_text, 0xcbf29ce484222325ull)),
                static_cast<unsigned long long>(mix_hash(key_text)));
  return buf;
}

Result<std::string> cache_dir() {
  std::string dir;
  if (const char* d = std::getenv("PK_CACHE_DIR"); d && *d) {
    dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::string(x) + "/pkc";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::string(h) + "/.cache/pkc";
  } else {
    return Status::error("no cache directory: set PK_CACHE_DIR");
  }
  PK_RETURN_IF_ERROR(mkdirs(dir));
  return dir;
}

std::optional<std::vector<char>> cache_read(const std::string& dir, const std::string& key_text) {
  std::ifstream in(dir + "/" + cache_key_hash(key_text) + ".bin", std::ios::binary);
  if (!in) return std::nullopt;
  char magic[sizeof(kMagic)];
  std::uint64_t klen = 0, dlen = 0;
  if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0)
    return std::nullopt;
  if (!in.read(reinterpret_cast<char*>(&klen), sizeof(klen)) || klen != key_text.size())
    return std::nullopt;
  std::string key(klen, '\0');
  if (!in.read(&key[0], static_cast<std::streamsize>(klen)) || key != key_text) return std::nullopt;
  if (!in.read(reinterpret_cast<char*>(&dlen), sizeof(dlen)) || dlen > (1ull << 31))
    return std::nullopt;
  std::vector<char> data(dlen);
  if (!in.read(data.data(), static_cast<std::streamsize>(dlen))) return std::nullopt;
  return data;
}

Status cache_write(const std::string& dir, const std::string& key_text,
                   const std::vector<char>& data) {
  static std::atomic<unsigned> counter{0};
  const std::string final_path = dir + "/" + cache_key_hash(key_text) + ".bin";
  const std::string tmp = final_path + ".tmp." + std::to_string(getpid()) + "." +
                          std::to_string(counter++) + "." + std::to_string(std::random_device{}());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::error("cannot write cache file " + tmp);
    const std::uint64_t klen = key_text.size(), dlen = data.size();
    out.write(kMagic, sizeof(kMagic));
    out.write(reinterpret_cast<const char*>(&klen), sizeof(klen));
    out.write(key_text.data(), static_cast<std::streamsize>(klen));
    out.write(reinterpret_cast<const char*>(&dlen), sizeof(dlen));
    out.write(data.data(), static_cast<std::streamsize>(dlen));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::error("cannot write cache file " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::error("cannot rename " + tmp + " to " + final_path);
  }
  return Status::ok();
}

}  // namespace pk

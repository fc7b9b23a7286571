// On-disk cache of compiled kernels, keyed by source, options, architecture and pkc version.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <pk/runtime/status.h>

namespace pk {

// The pkc version baked into cache keys (PKC_VERSION at build time).
const char* pkc_version();

// The full text a cache entry is keyed by (stored in the entry and compared on read, so a hash
// collision can never return the wrong binary). `toolchain` names what else shapes the binary
// besides the source: the headers it includes and the compiler's version.
std::string cache_key_text(const std::string& source, const std::vector<std::string>& options,
                           const std::string& arch, const std::string& toolchain = "");

// 32 hex digits: two independent 64-bit hashes of the key text.
std::string cache_key_hash(const std::string& key_text);

// $PK_CACHE_DIR, else $XDG_CACHE_HOME/pkc, else $HOME/.cache/pkc; created if missing.
Result<std::string> cache_dir();

// The cached bytes for key_text, or nullopt (missing, unreadable, or a different key).
std::optional<std::vector<char>> cache_read(const std::string& dir, const std::string& key_text);

// Writes to a unique temporary file in `dir` and renames it over the entry, so concurrent
// writers (ranks compiling the same kernel) never expose a partial file.
Status cache_write(const std::string& dir, const std::string& key_text,
                   const std::vector<char>& data);

}  // namespace pk

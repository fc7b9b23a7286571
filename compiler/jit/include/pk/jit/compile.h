// Spec -> cached, loadable kernel: options, the on-disk cache, and the front ends that produce
// CUDA (in-process pipeline in jit.h; a pkc executable here).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <pk/jit/kernel.h>
#include <pk/runtime/status.h>

namespace pk::jit {

struct Options {
  std::string arch;                        // NVRTC target, e.g. sm_90a; empty: current device's
  std::string kernel;                      // which kernel of the spec; empty: the only one
  std::string profile_path;                // machine profile for the passes; empty: built-in
  bool allow_multicast = false;
  int tile_batch = 0;                      // pkc --tile-batch: 0 chosen by pkc, 1 off
  int tile_threads = 0;                    // pkc --tile-threads: 0 chosen by pkc, 256/512/1024
  int tile_stages = 2;                     // pkc --tile-stages: prefetch ring stages, 2-4
  bool templates = true;                   // pkc --templates: false keeps loops on the general path
  bool split_k = true;                     // pkc --split-k: false keeps each GEMM tile on one block
  std::vector<std::string> nvrtc_options;  // extra NVRTC options
  bool use_cache = true;                   // (never for a spec that includes files of its own)
  std::string cache_dir;                   // empty: pk::cache_dir()
};

// Produces pkc's CUDA for a spec; errors keep the spec's file:line:col.
struct Frontend {
  using Fn = std::function<Result<std::string>(const std::string& name, const std::string& text,
                                               const Options&)>;
  template <class F>
  Frontend(F fn, std::string build = "") : run(std::move(fn)), identity(std::move(build)) {}
  Fn run;
  // The compiler build that writes the CUDA, part of the cache key: a rebuilt pkc must not
  // reuse kernels an older build compiled (the version number stays the same between builds).
  std::string identity;
};

// A file's size and modification time, as a build identity ("" when it cannot be read).
std::string file_identity(const std::string& path);

// The cache key: everything the binary depends on. `name` is left out on purpose: the same
// spec text under another path is the same kernel.
std::string cache_key(const std::string& text, const Options& options, const std::string& arch);

// Looks the spec up in the cache first (no front end runs on a hit), else runs `frontend`,
// NVRTC-compiles its CUDA for the architecture and stores the result as one cache entry. A spec
// that includes headers other than pkc's own (`#include "cfg.h"`) is compiled every time: the
// key is the spec's text, which does not see a changed header.
Result<Kernel> compile_spec(const std::string& name, const std::string& text,
                            const Options& options, const Frontend& frontend);

// Whether the spec's text includes a header that is not pkc's own (<pk/...>): such specs skip
// the cache.
bool includes_user_files(const std::string& text);

// The front end of a process without LLVM: runs `pkc <spec> --emit=cuda` from `pkc_path`.
Frontend pkc_frontend(const std::string& pkc_path);

// Reads a spec file (an error names the path).
Result<std::string> read_spec(const std::string& path);

}  // namespace pk::jit

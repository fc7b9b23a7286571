// NVRTC compilation of CUDA source that includes pk's embedded device headers.
#pragma once
#include <string>
#include <vector>

#include <pk/runtime/status.h>

namespace pk {

struct CompileRequest {
  std::string source;
  std::string program_name = "pk_kernel.cu";  // used in diagnostics
  std::string arch = "sm_90a";                // NVRTC --gpu-architecture; sm_* gives a cubin
  std::vector<std::string> options;           // extra options (-D..., -lineinfo, ...)
  bool use_cache = true;                      // the on-disk cache (compile_cache.h)
};

struct CompileOutput {
  std::vector<char> image;  // cubin for sm_* targets, PTX for compute_* targets
  std::string log;          // NVRTC log (warnings)
  bool from_cache = false;
};

// The full NVRTC option list pk uses for a request (also printed on failure to reproduce).
std::vector<std::string> nvrtc_options(const CompileRequest& req);

// NVRTC's version and a hash of the embedded headers: part of every cache key whose binary
// includes them, so that changed headers never reuse an old binary.
const std::string& toolchain_digest();

// Compiles (or fetches from the cache). Errors carry the NVRTC log and the option list.
Result<CompileOutput> compile(const CompileRequest& req);

}  // namespace pk

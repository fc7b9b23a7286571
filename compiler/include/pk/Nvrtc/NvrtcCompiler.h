// In-process NVRTC: CUDA C++ -> PTX or cubin, with pk's device headers from memory.
// libnvrtc is loaded on first use, so pkc runs (and emits CUDA) where CUDA is absent.
#pragma once

#include <string>
#include <vector>

namespace pk {

struct NvrtcResult {
  bool ok = false;
  std::string output;  // PTX text or cubin bytes
  std::string log;     // compiler log, or why NVRTC could not run
  std::vector<std::string> options;  // exactly what NVRTC was given, to reproduce it
};

enum class NvrtcTarget { Ptx, Cubin };

/// Compiles `source` for `arch` (e.g. "sm_90a"). PTX targets the matching virtual
/// architecture (compute_90a). `fastCompile` turns most device optimisations off
/// (NVRTC's --Ofast-compile=max): four to five times faster to build, for checks that a
/// kernel compiles, never for code whose speed matters.
NvrtcResult compileWithNvrtc(const std::string &source, const std::string &sourceName,
                             const std::string &arch, NvrtcTarget target,
                             bool fastCompile = false);

} // namespace pk

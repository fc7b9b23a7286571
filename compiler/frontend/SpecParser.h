// Parses a C++ spec with Clang into the plain-data model (no Clang or MLIR types here).
#pragma once

#include "SpecModel.h"

#include <optional>

namespace pk::fe {

struct Diagnostic {
  SrcLoc loc;
  std::string message;
};

struct ParseRequest {
  std::string path;
  std::vector<std::string> includeDirs;  // -I
  std::vector<std::string> defines;      // -D
  std::string standard;                  // -std
  std::optional<std::string> text;       // the spec's text, served from memory at `path`
  bool exitOnTimeout = true;             // past the time limit: end the process, or fail
  bool captureClangDiagnostics = false;  // Clang's own diagnostics into the result, not stderr
  // Walk only the kernel of this name (`--kernel`, the JIT): another kernel's constructs outside
  // the spec language do not stop it (C++ errors still do). Empty, or no such kernel: all.
  std::string onlyKernel;
  int parseSeconds = 20;  // the time limit
};

struct ParseResult {
  bool clangFailed = false;             // Clang reported errors (already printed by Clang)
  std::vector<Diagnostic> errors;       // constructs outside the spec language
  Module module;
  std::vector<std::string> dependencies;  // every file read from disk, the spec included
  std::string clangDiagnostics;           // with captureClangDiagnostics: Clang's text
};

ParseResult parseSpec(const ParseRequest &request);

} // namespace pk::fe

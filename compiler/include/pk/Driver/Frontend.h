// The hook through which pkc reads C++ specs (.pk.cpp); implemented by the Clang front end.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace pk {

struct FrontendOptions {
  std::vector<std::string> includeDirs;  // -I
  std::vector<std::string> defines;      // -D
  std::string standard = "c++20";        // -std
  /// The spec's text, when it is not (or not only) on disk: served to Clang from memory
  /// under the spec's path, so diagnostics name that path. Empty: read the file.
  std::optional<std::string> text;
  /// What a parse that runs past the time limit (runaway macros or templates) does: end the
  /// process (pkc, whose outputs are not written yet), or return an error and leave the
  /// parse to finish on a detached thread (a host process, such as the JIT's).
  bool exitOnTimeout = true;
  int parseSeconds = 20;  // the parse's time limit (hostile specs)
  /// Where Clang's own diagnostics (C++ errors) go: null for stderr, else appended here.
  std::string *clangDiagnostics = nullptr;
  /// Lower only the kernel of this name (`--kernel`, the JIT), so that another kernel of the
  /// file still under construction does not stop it; C++ errors anywhere still do. Empty, or
  /// no kernel of that name: every kernel.
  std::string onlyKernel;
};

/// True for a path the C++ front end reads (.cpp, .cc, .cxx); anything else is pk IR text.
inline bool isCppSpecPath(llvm::StringRef path) {
  return path.ends_with(".cpp") || path.ends_with(".cc") || path.ends_with(".cxx");
}

/// True when this pkc was built with the Clang front end.
bool haveCppFrontend();

/// Parses a C++ spec and lowers it to spec-level pk. Diagnostics go to the context's
/// handler with source locations; returns null on error.
mlir::OwningOpRef<mlir::ModuleOp> parseCppSpec(const std::string &path,
                                               const FrontendOptions &options,
                                               mlir::MLIRContext &context,
                                               std::vector<std::string> *dependencies);

} // namespace pk

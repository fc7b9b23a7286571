// The hook through which pkc reads C++ specs (.pk.cpp); implemented by the Clang front end.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include <string>
#include <vector>

namespace pk {

struct FrontendOptions {
  std::vector<std::string> includeDirs;  // -I
  std::vector<std::string> defines;      // -D
  std::string standard = "c++20";        // -std
};

/// True when this pkc was built with the Clang front end.
bool haveCppFrontend();

/// Parses a C++ spec and lowers it to spec-level pk. Diagnostics go to the context's
/// handler with source locations; returns null on error.
mlir::OwningOpRef<mlir::ModuleOp> parseCppSpec(const std::string &path,
                                               const FrontendOptions &options,
                                               mlir::MLIRContext &context,
                                               std::vector<std::string> *dependencies);

} // namespace pk

// Translates device-level pk kernels into readable CUDA C++ over pk's device primitives.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace mlir::pk {

struct CudaEmitOptions {
  std::string sourceName;   // named in the header comment
  std::string pkcVersion;
};

/// Emits one .cu translation unit for every pk.kernel in the module. Fails with a
/// diagnostic at the op's location for an op that has no emission pattern.
LogicalResult emitCuda(ModuleOp module, llvm::raw_ostream &os, const CudaEmitOptions &options);

} // namespace mlir::pk

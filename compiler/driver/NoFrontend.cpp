// Stand-in for the Clang front end in builds that do not include it.
#include "pk/Driver/Frontend.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

namespace pk {
bool haveCppFrontend() { return false; }

mlir::OwningOpRef<mlir::ModuleOp> parseCppSpec(const std::string &path, const FrontendOptions &,
                                               mlir::MLIRContext &context,
                                               std::vector<std::string> *) {
  mlir::emitError(mlir::FileLineColLoc::get(&context, path, 0, 0))
      << "this pkc was built without the C++ spec front end; write the spec as .mlir";
  return nullptr;
}
} // namespace pk

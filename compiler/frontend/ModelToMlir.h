// Builds spec-level pk IR from the plain-data model.
#pragma once

#include "SpecModel.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace pk::fe {

/// One pk.kernel per model kernel; every op carries its spec file:line:col.
mlir::OwningOpRef<mlir::ModuleOp> buildModule(const Module &model, mlir::MLIRContext &context);

} // namespace pk::fe

// pkc's passes and their registration.
#pragma once

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "pk/Dialect/Pk.h"
#include <memory>

namespace mlir::pk {
#define GEN_PASS_DECL
#include "pk/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

// Records the decisions passes take, with reasons, on the kernel (`pk.decisions`), so that
// `pkc --explain` and the emitted CUDA header can show them.
#pragma once

#include "mlir/IR/Operation.h"
#include <string>

namespace mlir::pk {
/// "file:line:col" of a location, or "<unknown>".
std::string formatLocation(Location loc);
/// Appends "rule: what at loc: reason" to the enclosing kernel's decision list.
void recordDecision(Operation *op, StringRef rule, const Twine &decision);
/// Removes the decisions recorded for `op`: for an op a template absorbs, whose earlier
/// choices (algorithm, transport) never reach the output.
void dropDecisions(Operation *op);
/// The decisions recorded on a kernel, in order.
SmallVector<std::string> getDecisions(Operation *kernel);
} // namespace mlir::pk

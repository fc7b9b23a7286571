// Records the decisions passes take, with reasons, on the kernel (`pk.decisions`), so that
// `pkc --explain` and the emitted CUDA header can show them.
#pragma once

#include "mlir/IR/Operation.h"
#include <string>

namespace mlir::pk {
/// On a tile op of a one-tile loop that reads (or writes) a tensor the loop also writes (or
/// reads) at another place: pk-check-tile-races puts it there and the emitter puts a block
/// barrier before the op, so the block's threads finish the earlier access first.
constexpr llvm::StringLiteral kBarrierBeforeAttr = "pk.barrier_before";
/// On a launch of a host loop: each trip argument's range ({lb, ub, step}, host expressions,
/// outermost first; the kernel's last arguments), so the protocol checker models trips the
/// host loop makes.
constexpr llvm::StringLiteral kTripsAttr = "pk.trips";
/// "file:line:col" of a location, or "<unknown>".
std::string formatLocation(Location loc);
/// Appends "rule: what at loc: reason" to the enclosing kernel's decision list.
void recordDecision(Operation *op, StringRef rule, const Twine &decision);
/// Removes the decisions recorded for `op` (those whose rule starts with `rule`, when given):
/// for an op a template absorbs, or choices a later pass overrides, which never reach the output.
void dropDecisions(Operation *op, StringRef rule = "");
/// The decisions recorded on a kernel, in order.
SmallVector<std::string> getDecisions(Operation *kernel);
} // namespace mlir::pk

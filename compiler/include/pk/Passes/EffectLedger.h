// The effect ledger: pk-track-effects numbers every spec-level op with an effect (a store, a
// collective, a peer store, a signal or wait), each lowering that replaces such an op marks it
// lowered, and pk-check-effects reports any that left the IR without being lowered. So a
// lowering that drops an op it does not understand fails loudly instead of miscompiling.
#pragma once

#include "mlir/IR/Operation.h"

namespace mlir::pk {
/// Attribute names: the op's number, the kernel's list of [name, location] entries, and the
/// kernel's list of numbers marked lowered.
constexpr llvm::StringLiteral kEffectIdAttr = "pk.effect";
constexpr llvm::StringLiteral kEffectListAttr = "pk.effects";
constexpr llvm::StringLiteral kLoweredListAttr = "pk.lowered";

/// Whether `op` is a spec-level op whose effect must reach the output: a tile store, a
/// collective, a tile sent to a peer, a device primitive, or a signal / wait / barrier.
bool hasSpecEffect(Operation *op);
/// Records that `op` (about to be erased) was lowered; a no-op for ops the ledger did not
/// number (passes run alone, outside the pipeline).
void markLowered(Operation *op);
} // namespace mlir::pk

// The phases of a kernel (collectives and top-level tile loops) and which of them depend on an
// earlier one: the passes that order phases with grid-wide barriers share this analysis.
#pragma once

#include "pk/Dialect/Pk.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::pk {

bool isCollectiveIntent(Operation *op);

// A collective, a top-level op holding a tile loop or a collective (the loop itself, or a
// range loop around one), or a scalar read (`x.at(i)`) outside the tile loops.
bool isPhase(Operation *op);

// The tensors a phase reads and writes (a peer's copy counts as the tensor); with `adds`, the
// ones it adds rows into locally (which commute with other adds) go there instead of `writes`.
void phaseTouches(Operation *phase, llvm::SmallPtrSetImpl<Value> &reads,
                  llvm::SmallPtrSetImpl<Value> &writes,
                  llvm::SmallPtrSetImpl<Value> *adds = nullptr);

// The top-level phases of `body` that touch a tensor an earlier phase wrote (or write one an
// earlier phase read) since the last such phase, in program order: each needs a grid-wide
// barrier before it, which also orders everything before it.
SmallVector<Operation *> dependentPhases(Block &body);

// Whether the spec writes its own protocol (pk::prim flags outside any worker pkc built): such a
// kernel orders its phases and peer accesses itself, and pk-verify-protocol proves it.
bool hasOwnProtocol(KernelOp kernel);

// A tile loop nested in a range loop that depends on another phase of that loop's body (in
// the same iteration or the previous one); null when there is none. Barriers inside range
// loops are not generated yet, so such a kernel is an error, never a race.
Operation *unorderedNestedPhase(Block &body);

// In the body of a range loop: a collective (it would run again each trip, on flags that count
// one run per launch), or a phase that depends on another phase of the body; null when none.
Operation *unorderedInLoop(Block &body);

} // namespace mlir::pk

// Synchronisation primitives: flags, signals, waits and barriers.
#include "pk/Dialect/Pk.h"

using namespace mlir;
using namespace mlir::pk;

#define GET_OP_CLASSES
#include "pk/Dialect/PkSyncOps.cpp.inc"

LogicalResult FlagOp::verify() {
  int64_t slot = getSlotAttr().getInt();
  if (slot < 0 || slot >= 1024)
    return emitOpError("flag slot must be in [0, 1024), got ") << slot;
  return success();
}

// Registers the pk dialect's attributes, types and ops.
#include "pk/Dialect/Pk.h"

using namespace mlir;
using namespace mlir::pk;

#include "pk/Dialect/PkDialect.cpp.inc"

void PkDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "pk/Dialect/PkStructureOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "pk/Dialect/PkTileOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "pk/Dialect/PkCollectiveOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "pk/Dialect/PkCommOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "pk/Dialect/PkSyncOps.cpp.inc"
      >();
}

// Emission patterns for tile ops. Tile compute (mma, map, cast, row reductions) lands with
// the GEMM templates; until then those ops report that they have no pattern.
#include "Emitter.h"

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

void mlir::pk::cuda::addTilePatterns(PatternTable &table) {
  // pk.tile.store is emitted by the pattern of the op producing its tile (fused).
  table["pk.tile.store"] = [](Emitter &, Operation *op) -> LogicalResult {
    return op->emitError("no CUDA emission pattern for storing this tile: only tiles "
                         "produced by pk.comm.reduce can be stored yet");
  };
}

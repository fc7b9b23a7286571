// pk-check-tile-races: a tile loop's iterations run in parallel and in no order, so a loop that
// writes a tensor may read it only at the very tile it writes (an element-wise update in
// place); any other read races with another iteration's write and is an error at the read.
#include "pk/Passes/Passes.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKCHECKTILERACESPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

bool sameTile(TileLoadOp load, TileStoreOp store) {
  return load.getIndices() == store.getIndices() &&
         cast<TileType>(load.getType()).getShape() == store.getValue().getType().getShape();
}

struct CheckTileRaces : mlir::pk::impl::PkCheckTileRacesPassBase<CheckTileRaces> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](TileForeachOp loop) {
      if (loop->getParentOfType<WorkerOp>()) return;  // device-level loops come from pkc
      SmallVector<TileStoreOp> stores;
      loop.walk([&](TileStoreOp s) { stores.push_back(s); });
      loop.walk([&](TileLoadOp load) {
        for (TileStoreOp store : stores) {
          if (store.getDest() != load.getSource() || sameTile(load, store)) continue;
          auto diag = load.emitError(
              "this tile loop reads a tensor at other tiles than it writes; its iterations run "
              "in parallel and in no order, so the read races with another iteration's write: "
              "write the result into another tensor");
          diag.attachNote(store.getLoc()) << "the write";
          failed = true;
          return;
        }
      });
    });
    if (failed) signalPassFailure();
  }
};

} // namespace

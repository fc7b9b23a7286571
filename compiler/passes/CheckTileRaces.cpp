// pk-check-tile-races: a tile loop's iterations run in parallel and in no order, so a loop that
// writes a tensor may read it only at the very tile it writes (an element-wise update in
// place); any other read (a scalar `x.at(i)` too), and any read of rows a loop scatters by
// index or of counters it claims slots from, races with another iteration's write and is an
// error at the read. Peers' copies are the protocol checker's (pk-verify-protocol).
#include "pk/Passes/Passes.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKCHECKTILERACESPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

// Whether a read and a write of one tensor touch exactly the same tile (an element-wise
// update in place); rows moved by index never provably do.
bool sameTile(Operation *read, Operation *write) {
  auto load = dyn_cast<TileLoadOp>(read);
  auto store = dyn_cast<TileStoreOp>(write);
  return load && store && load.getIndices() == store.getIndices() &&
         cast<TileType>(load.getType()).getShape() == store.getValue().getType().getShape();
}

Value readTensor(Operation *op) {
  if (auto l = dyn_cast<TileLoadOp>(op)) return l.getSource();
  if (auto l = dyn_cast<TileLoadRowsOp>(op); l && !l.getPeer()) return l.getSource();
  if (auto l = dyn_cast<LoadScalarOp>(op)) return l.getSource();  // x.at(i): any element
  return {};
}

Value writtenTensor(Operation *op) {
  if (auto s = dyn_cast<TileStoreOp>(op)) return s.getDest();
  if (auto s = dyn_cast<TileStoreRowsOp>(op); s && !s.getPeer()) return s.getDest();
  // Claims are atomic among themselves, but any other read of the counter races with them.
  if (auto c = dyn_cast<TileClaimOp>(op)) return c.getCounter();
  return {};
}

struct CheckTileRaces : mlir::pk::impl::PkCheckTileRacesPassBase<CheckTileRaces> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](TileForeachOp loop) {
      if (loop->getParentOfType<WorkerOp>()) return;  // device-level loops come from pkc
      SmallVector<Operation *> writes;
      loop.walk([&](Operation *op) {
        if (writtenTensor(op)) writes.push_back(op);
      });
      loop.walk([&](Operation *read) {
        Value source = readTensor(read);
        if (!source) return WalkResult::advance();
        for (Operation *write : writes) {
          if (writtenTensor(write) != source || sameTile(read, write)) continue;
          auto diag = read->emitError(
              "this tile loop reads a tensor at other tiles than it writes; its iterations run "
              "in parallel and in no order, so the read races with another iteration's write: "
              "write the result into another tensor");
          diag.attachNote(write->getLoc()) << "the write";
          failed = true;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
    });
    if (failed) signalPassFailure();
  }
};

} // namespace

// pk-batch-tile-loads: a general-path tile loop takes K tiles per block at a time and issues
// the loads of all K before computing any, so a block keeps K times the bytes in flight.
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKBATCHTILELOADSPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

constexpr int64_t kThreads = 512;  // the general path's block (Emitter::threads)
constexpr int64_t kRunElements = 8;  // a thread's run of consecutive elements (pk/tile/rt.cuh)

// fp32 registers per thread that one register tile takes in the tile library.
int64_t slotsPerThread(TileType t) {
  int64_t count = 1;
  for (int64_t d : t.getShape()) count *= d;
  return (count + kRunElements * kThreads - 1) / (kRunElements * kThreads) * kRunElements;
}

// Ops a batched body may hold: they touch only this rank's memory and no shared state across
// tiles, so the K copies of the body can run in any interleaving the pass chooses.
bool batchable(Operation &op) {
  if (op.getNumRegions() != 0) return false;
  if (isa<TileLoadOp>(op))
    return cast<TileType>(op.getResult(0).getType()).getMemorySpace() == MemorySpace::reg;
  if (isa<TileStoreOp, TileMapOp, TileCastOp, TileZerosOp, TileSplatOp, TileSelectOp,
          TileIotaOp, TileReduceRowsOp, DimOp, YieldOp>(op))
    return true;
  return op.getDialect() && op.getDialect()->getNamespace() == "arith";
}

struct BatchTileLoads : mlir::pk::impl::PkBatchTileLoadsPassBase<BatchTileLoads> {
  using PkBatchTileLoadsPassBase::PkBatchTileLoadsPassBase;

  void runOnOperation() override {
    getOperation().walk([&](TileForeachOp loop) { plan(loop); });
  }

  void plan(TileForeachOp loop) {
    Block &body = loop.getBody().front();
    if (!llvm::all_of(body, batchable)) return;
    // Loads no earlier store of the same iteration writes into can move ahead of the body;
    // across iterations the loop is parallel (pk.tile.foreach), so tiles do not interfere.
    SmallVector<TileLoadOp> hoisted;
    llvm::SmallPtrSet<Value, 4> written;
    int64_t slots = 0, bytes = 0;
    for (Operation &op : body) {
      if (auto store = dyn_cast<TileStoreOp>(op)) written.insert(store.getDest());
      auto load = dyn_cast<TileLoadOp>(op);
      if (!load || written.contains(load.getSource())) continue;
      hoisted.push_back(load);
      auto tile = cast<TileType>(load.getType());
      slots += slotsPerThread(tile);
      bytes += tile.getNumElements() * tile.getElementType().getIntOrFloatBitWidth() / 8;
    }
    if (hoisted.empty()) return;
    int64_t k = batch;
    if (k <= 0) {
      k = 1;
      for (int64_t c : {4, 2})
        if (c * slots <= regBudget) { k = c; break; }
    }
    if (k <= 1) return;
    Builder b(loop.getContext());
    loop->setAttr("pk.batch", b.getI64IntegerAttr(k));
    for (TileLoadOp load : hoisted) load->setAttr("pk.hoist", b.getUnitAttr());
    recordDecision(loop, "general path",
                   "each block takes " + Twine(k) + " tiles at a time and issues their " +
                       Twine(hoisted.size()) + " load(s) each before computing any (" +
                       Twine(k * bytes / 1024) + " KiB in flight per block instead of " +
                       Twine(bytes / 1024) +
                       "): the loop is memory-bound and one block per SM needs that many "
                       "bytes in flight to keep HBM busy; " +
                       (batch > 0 ? Twine("--tile-batch set K")
                                  : Twine("K is the largest of 4, 2 whose loaded tiles fit ") +
                                        Twine(regBudget) + " registers per thread"));
  }
};

} // namespace

// Which shared-memory buffers the general path's tile ops need (pk/Passes/TileShared.h).
#include "pk/Passes/TileShared.h"

using namespace mlir;
using namespace mlir::pk;

namespace {
constexpr int64_t kRunElements = 8;  // pk::tile::rt's kVec
constexpr int64_t kMaxBlockwideRows = 64;
} // namespace

bool mlir::pk::blockwideRowReduction(TileType in, int64_t threads) {
  const int64_t cols = in.getShape().back();
  const int64_t rows = in.getNumElements() / cols;
  // Integer rows (exact, in their own type) take the chunked route through the stage.
  return isa<FloatType>(in.getElementType()) && cols % (kRunElements * threads) == 0 && rows <= kMaxBlockwideRows;
}

TileSharedUse mlir::pk::tileSharedUse(Operation *kernel, int64_t threads) {
  TileSharedUse uses;
  kernel->walk([&](Operation *op) {
    if (auto reduce = dyn_cast<TileReduceRowsOp>(op)) {
      TileType in = reduce.getInput().getType();
      if (blockwideRowReduction(in, threads)) {
        const int64_t rows = in.getNumElements() / in.getShape().back();
        uses.partials = std::max(uses.partials, rows * (threads / 32));
      } else {
        uses.stage = uses.rows = true;
      }
    }
    if (isa<TileMmaOp, TileLoadRowsOp, TileStoreRowsOp, TileTransposeOp, TileCumsumOp,
            TileHistogramOp, TileTopkOp>(op))
      uses.stage = true;
    // A broadcast passes its vector through the stage, unless it is one element (a row
    // statistic of a one-row tile), which every thread holds.
    if (auto map = dyn_cast<TileMapOp>(op))
      for (Value in : map.getInputs()) {
        auto tile = dyn_cast<TileType>(in.getType());
        if (in.getType() != map.getResult().getType() && !(tile && tile.getNumElements() == 1))
          uses.stage = true;
      }
  });
  return uses;
}

SmallVector<TileLoadOp> mlir::pk::prefetchedLoads(Operation *loop, int64_t *stageBytes) {
  SmallVector<TileLoadOp> loads;
  *stageBytes = 0;
  for (Operation &op : loop->getRegion(0).front())
    if (auto load = dyn_cast<TileLoadOp>(op); load && load->hasAttr("pk.prefetch")) {
      loads.push_back(load);
      *stageBytes += prefetchSlotBytes(cast<TileType>(load.getType()));
    }
  return loads;
}

int64_t mlir::pk::kernelRingBytes(Operation *kernel) {
  int64_t most = 0;
  kernel->walk([&](TileForeachOp loop) {
    auto stages = loop->getAttrOfType<IntegerAttr>("pk.prefetch");
    if (!stages) return;
    int64_t stage = 0;
    prefetchedLoads(loop, &stage);
    most = std::max(most, stages.getInt() * stage);
  });
  return most;
}

bool mlir::pk::originSlice(Block &body, ArrayRef<TileLoadOp> loads, SmallVectorImpl<Operation *> &slice) {
  llvm::SmallPtrSet<Operation *, 8> needed;
  SmallVector<Value> work;
  for (TileLoadOp load : loads) work.append(load.getIndices().begin(), load.getIndices().end());
  bool scalar = true;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != &body || !needed.insert(def).second) continue;
    scalar &= isa<DimOp>(def) || (def->getDialect() && def->getDialect()->getNamespace() == "arith");
    work.append(def->getOperands().begin(), def->getOperands().end());
  }
  for (Operation &op : body)
    if (needed.contains(&op)) slice.push_back(&op);
  return scalar;
}

// pk-batch-tile-loads: the general path's block shape and load batching. A kernel whose blocks
// never wait on each other gets 1024-thread blocks (32 warps per SM instead of 16); a tile loop
// with row reductions takes K tiles per block at a time and issues the loads of all K before
// computing any, so a block keeps K times the bytes in flight across its barriers.
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKBATCHTILELOADSPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

constexpr int64_t kThreads = 512;         // the general path's block (Emitter::threads)
constexpr int64_t kWideThreads = 1024;    // its block when no block waits on another
constexpr int64_t kRunElements = 8;  // a thread's run of consecutive elements (pk/tile/rt.cuh)

// fp32 registers per thread that one register tile takes in the tile library.
int64_t slotsPerThread(TileType t, int64_t threads) {
  return (t.getNumElements() + kRunElements * threads - 1) / (kRunElements * threads) * kRunElements;
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

// Whether a kernel's blocks run independently: only local tile loops, loops and arithmetic
// (no worker, flag, wait or communication, no template), so any block size and grid work.
bool independentBlocks(KernelOp kernel) {
  bool independent = true;
  kernel.getBody().walk([&](Operation *op) {
    independent &= batchable(*op) ||
                   isa<TileForeachOp, TileMmaOp, ReturnOp, CheckOp, RankOp, WorldSizeOp,
                       scf::ForOp, scf::IfOp, scf::YieldOp>(op);
  });
  return independent;
}

struct BatchTileLoads : mlir::pk::impl::PkBatchTileLoadsPassBase<BatchTileLoads> {
  using PkBatchTileLoadsPassBase::PkBatchTileLoadsPassBase;

  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      int64_t threads = kThreads;
      if (independentBlocks(kernel) && wideBlocks) {
        threads = kWideThreads;
        kernel->setAttr("pk.threads", Builder(kernel.getContext()).getI64IntegerAttr(threads));
        recordDecision(kernel, "general path",
                       "1024 threads per block: no block waits on another, and 32 warps per SM "
                       "keep twice the loads in flight of a 512-thread block (a copy reached "
                       "0.63 of cudaMemcpy's bandwidth with 16 warps per SM, 0.84-0.86 with 32; "
                       "tools/bench-tiles/copy_probe.cu)");
      }
      kernel.walk([&](TileForeachOp loop) { plan(loop, threads); });
    });
  }

  void plan(TileForeachOp loop, int64_t threads) {
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
      slots += slotsPerThread(tile, threads);
      bytes += tile.getNumElements() * tile.getElementType().getIntOrFloatBitWidth() / 8;
    }
    if (hoisted.empty()) return;
    // Measured (docs/benchmarks/tiles-1xH200.md, runs 5-8): batching gains where the block
    // meets at barriers for each tile (row reductions), and costs 3-5% on element-wise loops,
    // whose 32 warps per SM already keep enough loads in flight.
    const bool reduces = llvm::any_of(body, [](Operation &op) { return isa<TileReduceRowsOp>(op); });
    if (batch <= 0 && !reduces) return;
    // The budget is for 512-thread blocks (128 registers a thread at most); a 1024-thread
    // block has half the registers per thread.
    const int64_t budget = regBudget * kThreads / threads;
    int64_t k = batch;
    if (k <= 0) {
      k = 1;
      for (int64_t c : {4, 2})
        if (c * slots <= budget) { k = c; break; }
    }
    if (k <= 1) return;
    Builder b(loop.getContext());
    loop->setAttr("pk.batch", b.getI64IntegerAttr(k));
    for (TileLoadOp load : hoisted) load->setAttr("pk.hoist", b.getUnitAttr());
    recordDecision(loop, "general path",
                   "each block takes " + Twine(k) + " tiles at a time and issues their " +
                       Twine(hoisted.size()) + " load(s) each before computing any (" +
                       Twine(k * bytes / 1024) + " KiB in flight per block of " + Twine(threads) +
                       " threads instead of " +
                       Twine(bytes / 1024) +
                       "): the block meets at barriers for each tile's row reductions, so "
                       "one tile's loads alone cannot keep HBM busy; " +
                       (batch > 0 ? Twine("--tile-batch set K")
                                  : Twine("K is the largest of 4, 2 whose loaded tiles fit ") +
                                        Twine(budget) + " registers per thread"));
  }
};

} // namespace

// pk-batch-tile-loads: the general path's block shape and load batching. A kernel whose blocks
// never wait on each other gets 32 warps per SM, in blocks as small as its tiles' registers
// allow (256 threads x 4 blocks per SM, 512 x 2 or 1024 x 1), so that one block's barriers
// overlap another's loads; a tile loop with row reductions may take K tiles per block at a
// time and issue the loads of all K before computing any.
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"
#include "pk/Passes/TileShared.h"
#include "Phases.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKBATCHTILELOADSPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

constexpr int64_t kThreads = 512;         // the general path's block (Emitter::threads)
constexpr int64_t kThreadsPerSm = 1024;   // 32 warps per SM when no block waits on another
constexpr int64_t kRegsPerSm = 65536;
constexpr int64_t kRunElements = 8;  // a thread's run of consecutive elements (pk/tile/rt.cuh)
// fp32 registers per thread the register tiles live at once in a loop trip may take in blocks
// of 32 warps per SM (64 registers a thread; the rest hold indices and temporaries). Measured
// (docs/benchmarks/tiles-1xH200.md, run 10): at 48 the copy and softmax take 256-thread blocks
// (0.86 and 0.55 of cudaMemcpy; 0.80 and 0.31 at 1024), while add, silu_mul and rms_norm, whose
// 64 spill at 256 threads (0.74, 0.54, 0.50), take 512 (0.82, 0.69, 0.58).
constexpr int64_t kIndependentSlots = 48;
// The most register values a thread may hold in one trip of a loop: 512 x 512 f32 tiles (256 a
// thread at 1024 threads) compile in seconds; three of them (an mma's operands and accumulator)
// kept NVRTC busy for minutes.
constexpr int64_t kMaxLiveSlots = 512;
// Registers per thread a batched trip needs beside its tiles (see plan()).
constexpr int64_t kNonTileRegs = 48;

// 32-bit registers per thread that one register tile takes in the tile library (its slots
// hold fp32, or the integer itself: i64 takes two).
int64_t slotsPerThread(TileType t, int64_t threads) {
  const int64_t words = t.getElementType().getIntOrFloatBitWidth() > 32 ? 2 : 1;
  return (t.getNumElements() + kRunElements * threads - 1) / (kRunElements * threads) * kRunElements * words;
}

// Ops a batched body may hold: they touch only this rank's memory and no shared state across
// tiles, so the K copies of the body can run in any interleaving the pass chooses.
bool batchable(Operation &op) {
  if (op.getNumRegions() != 0) return false;
  if (isa<TileLoadOp>(op))
    return cast<TileType>(op.getResult(0).getType()).getMemorySpace() == MemorySpace::reg;
  if (isa<TileStoreOp, TileMapOp, TileCastOp, TileZerosOp, TileSplatOp, TileSelectOp,
          TileIotaOp, TileReduceRowsOp, TileReshapeOp, ScalarMapOp, DimOp, YieldOp>(op))
    return true;
  return op.getDialect() && op.getDialect()->getNamespace() == "arith";
}

// Whether a kernel's blocks run independently: only local tile loops, loops and arithmetic
// (no worker, flag, wait or communication, no template), so any block size and grid work.
bool independentBlocks(KernelOp kernel) {
  bool independent = true;
  kernel.getBody().walk([&](Operation *op) {
    independent &= batchable(*op) ||
                   isa<TileForeachOp, TileMmaOp, TileLoadRowsOp, TileStoreRowsOp, TileClaimOp,
                       TileTransposeOp, TileCumsumOp, TileHistogramOp, TileTopkOp, LoadScalarOp, ReturnOp,
                       CheckOp, RankOp, WorldSizeOp, scf::ForOp, scf::IfOp, scf::YieldOp>(op);
  });
  return independent;
}

// Whether a kernel's blocks wait only on the general path's own flags: tile loops, rows and
// tiles moved into or out of peers by register loads and stores, and the arrive/depart flags
// and grid-wide barriers around them (no collective's protocol, no template), so its block
// shape is free as long as every block stays resident (checked at launch).
bool generalPathWaits(KernelOp kernel) {
  bool general = true;
  kernel.getBody().walk([&](Operation *op) {
    bool ldst = true;
    if (auto t = op->getAttrOfType<TransportAttr>("transport")) ldst = t.getValue() == Transport::ldst;
    general &= batchable(*op) ||
               isa<TileForeachOp, TileMmaOp, TileLoadRowsOp, TileStoreRowsOp, TileClaimOp,
                   TileTransposeOp, TileCumsumOp, TileHistogramOp, TileTopkOp, LoadScalarOp, ReturnOp, CheckOp,
                   RankOp, WorldSizeOp, scf::ForOp, scf::IfOp, scf::YieldOp, FlagOp, SignalOp,
                   SignalAllOp, WaitOp, GridBlocksOp>(op) ||
               (isa<WorkerOp>(op) && cast<WorkerOp>(op).getRole() == Role::communicator) ||
               (isa<StoreAsyncOp, StoreAddAsyncOp, LoadPeerOp>(op) && ldst);
  });
  return general;
}

struct BatchTileLoads : mlir::pk::impl::PkBatchTileLoadsPassBase<BatchTileLoads> {
  using PkBatchTileLoadsPassBase::PkBatchTileLoadsPassBase;

  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) {
      // Template instances (pk-lower-gemm, pk-lower-attention) have no general-path loops, and
      // a kernel of several launches (pk-split-launches) no code of its own.
      if (kernel->hasAttr("pk.gemm") || kernel->hasAttr("pk.attention") || kernel->hasAttr("pk.launches"))
        return;
      int64_t threads = kThreads, perSm = 1;
      const bool independent = independentBlocks(kernel);
      if (independent || generalPathWaits(kernel)) {
        threads = blockThreads > 0 ? blockThreads : smallestBlock(kernel);
        perSm = kThreadsPerSm / threads;
        Builder b(kernel.getContext());
        kernel->setAttr("pk.threads", b.getI64IntegerAttr(threads));
        if (perSm > 1) kernel->setAttr("pk.blocks_per_sm", b.getI64IntegerAttr(perSm));
        const char *why =
            independent
                ? "no block waits on another, so 32 warps per SM keep loads in flight (a copy "
                  "reached 0.63 of cudaMemcpy's bandwidth with 16, 0.84-0.86 with 32), and "
                  "smaller blocks let one block's barriers overlap another's loads (rms_norm "
                  "0.46 -> 0.64, softmax 0.31 -> 0.57 at 256 x 4 against 1024 x 1; "
                  "tools/bench-tiles/{copy,rows}_probe.cu)"
                : "the blocks wait only on the general path's flags and barriers, so the grid "
                  "takes 32 warps per SM like a kernel whose blocks never wait, all of them "
                  "resident (checked at launch)";
        recordDecision(kernel, "general path",
                       Twine(threads) + " threads per block, " + Twine(perSm) +
                           " block(s) per SM" +
                           (perSm > 1 ? " (the launch has " + Twine(perSm) + " x the worker's blocks)" : Twine()) +
                           ": " + why +
                           (blockThreads > 0 ? Twine("; --tile-threads set the block")
                                             : Twine("; the smallest block whose live tiles "
                                                     "fit 48 registers a thread")));
      }
      // Only kernels whose blocks never wait know what shared memory is left for a prefetch
      // ring (and never need every block resident); the rest keep their loads in registers.
      const int64_t ringBudget =
          independent ? kSmemPerSm / perSm - kSmemReservedPerBlock - tileSharedUse(kernel, threads).staticBytes()
                      : 0;
      // Register tiles live in registers: past a few hundred values a thread, ptxas spills them
      // and NVRTC runs for minutes, so such loops are an error here rather than a hang there.
      kernel.walk([&](TileForeachOp loop) {
        if (loop->getParentOfType<TileForeachOp>()) return;
        const int64_t peak = peakLiveSlots(loop, threads);
        if (peak > kMaxLiveSlots) {
          loop.emitError("this tile loop holds ")
              << peak << " register values a thread at once (its live tiles over " << threads
              << " threads); the general path keeps tiles in registers, at most " << kMaxLiveSlots
              << " a thread: use smaller tiles";
          failed = true;
        }
      });
      // A nested tile loop runs in order inside its outer tile's block: no batch, no ring.
      // --explain says so (set 39, finding 6: a nested loop lost its ring silently).
      kernel.walk([&](TileForeachOp loop) {
        if (!loop->getParentOfType<TileForeachOp>()) plan(loop, threads, perSm, ringBudget);
        else
          recordDecision(loop, "general path",
                         "no prefetch ring or batched loads: this tile loop is nested in another, so "
                         "its tiles run one after another inside the outer tile's block; a "
                         "single loop over both indices keeps them");
      });
      markPackedTiles(kernel);
    });
    if (failed) signalPassFailure();
  }

  // Loads that the kernel only moves are held packed (pk.packed; pk/tile/packed.cuh): 16- or
  // 8-bit float tiles loaded into registers (not through a prefetch ring), whose every use
  // scatters their rows into a tensor of the same type (store_rows, not adding). A bf16 run then
  // takes 4 registers instead of 8 and no conversion either way. The block size above still
  // counts them as fp32.
  static void markPackedTiles(KernelOp kernel) {
    kernel.walk([&](TileLoadOp load) {
      auto type = cast<TileType>(load.getType());
      auto elem = dyn_cast<FloatType>(type.getElementType());
      if (!elem || elem.getWidth() > 16 || type.getMemorySpace() != MemorySpace::reg ||
          load->hasAttr("pk.prefetch") || load->use_empty())
        return;
      const bool moved = llvm::all_of(load->getUses(), [&](OpOperand &use) {
        auto store = dyn_cast<TileStoreRowsOp>(use.getOwner());
        return store && use.getOperandNumber() == 0 && !store.getAdd() &&
               getTensorElementType(store.getDest().getType()) == elem;
      });
      if (!moved) return;
      load->setAttr("pk.packed", UnitAttr::get(load.getContext()));
      recordDecision(load, "general path",
                     "this tile is only moved (its rows scattered by index), so it stays packed as loaded "
                     "(half the registers of fp32 for 16-bit floats, no conversions), which leaves "
                     "registers for more rows in flight");
    });
  }

  // The most fp32 registers per thread that the register tiles of one trip of `loop` hold at
  // once in blocks of `threads`: each tile counts from its definition up to its last use, in
  // program order with nested loops flattened (a tile used inside a nested loop lives to
  // that loop's end, as its next trip reads it again). The last use itself does not count:
  // element-wise ops write their result slot by slot over a dying operand's registers.
  static int64_t peakLiveSlots(TileForeachOp loop, int64_t threads) {
    llvm::DenseMap<Operation *, int64_t> order, end;
    int64_t next = 0;
    loop.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) { order[op] = next++; });
    // end[op]: the last position inside op's subtree.
    for (auto &[op, at] : order) {
      int64_t last = at;
      op->walk([&](Operation *inner) { last = std::max(last, order.lookup(inner)); });
      end[op] = last;
    }
    std::vector<int64_t> live(next + 1, 0);
    auto account = [&](Value v, int64_t from) {
      auto tile = dyn_cast<TileType>(v.getType());
      if (!tile || tile.getMemorySpace() != MemorySpace::reg) return;
      int64_t to = from;
      Block *home = v.getParentBlock();
      for (Operation *user : v.getUsers()) {
        Operation *top = home->findAncestorOpInBlock(*user);
        // A prefix sum or a transpose writes a tile of its operand's size while it still reads
        // the operand: both live there (an element-wise op writes over its dying operand).
        const bool copies = isa<TileCumsumOp, TileTransposeOp, TileTopkOp>(user);
        if (top && end.count(top)) to = std::max(to, end[top] + (copies ? 1 : 0));
      }
      for (int64_t i = from; i < std::max(to, from + 1) && i < next; ++i)
        live[i] += slotsPerThread(tile, threads);
    };
    for (auto &[op, at] : order) {
      for (Value r : op->getResults()) account(r, at);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments()) account(arg, at);
    }
    return *std::max_element(live.begin(), live.end());
  }

  // The smallest of 256, 512 and 1024 threads whose every loop's live tiles fit.
  static int64_t smallestBlock(KernelOp kernel) {
    for (int64_t threads : {256, 512}) {
      bool fits = true;
      kernel.walk([&](TileForeachOp loop) { fits &= peakLiveSlots(loop, threads) <= kIndependentSlots; });
      if (fits) return threads;
    }
    return kThreadsPerSm;
  }

  // Two stages by default (ringStages): one tile computed while the next one's loads are in
  // flight. Measured (docs/benchmarks/tiles-1xH200.md, run 12): rms_norm 0.62 -> 0.85 and the
  // copy 0.86 -> 0.90 of cudaMemcpy; three or four stages were no better for the copy.

  // Marks the hoisted loads of float tiles whose origins the loop can compute a trip ahead
  // (from its indices, dims and scalar arithmetic) to go through a shared-memory ring, if
  // `budget` bytes hold its stages. Loads are copied ahead with no registers held, so each
  // block keeps its next tile in flight while it reduces and stores this one.
  bool prefetch(TileForeachOp loop, ArrayRef<TileLoadOp> hoisted, int64_t budget) {
    int64_t stages = ringStages;
    SmallVector<TileLoadOp> ring;
    int64_t stageBytes = 0;
    for (TileLoadOp load : hoisted) {
      Type elem = cast<TileType>(load.getType()).getElementType();
      SmallVector<Operation *> slice;  // origins from indices, dims and scalar arithmetic only
      if (!(isa<FloatType>(elem) && elem.getIntOrFloatBitWidth() <= 32) ||
          !originSlice(loop.getBody().front(), {load}, slice))
        continue;
      ring.push_back(load);
      stageBytes += prefetchSlotBytes(cast<TileType>(load.getType()));
    }
    if (ring.empty()) return false;
    // Blocks that wait on each other (flags, barriers, collectives) keep their loads in registers:
    // no shared memory is set aside for a ring there (set 41: this said "exceed the 0 KiB").
    if (budget <= 0) {
      recordDecision(loop, "general path",
                     "no prefetch ring: the kernel's blocks wait on each other (flags or grid-wide barriers), "
                     "and the ring is kept for kernels whose blocks never wait; the loads stay in registers");
      return false;
    }
    // Stages that do not fit the shared memory a block may hold: fewer (at least two), or no
    // ring, and either way --explain says so (set 39, finding 5: --tile-stages=3 on rms_norm
    // used to drop the ring silently).
    while (stages > 2 && stages * stageBytes > budget) --stages;
    if (stages * stageBytes > budget) {
      recordDecision(loop, "general path",
                     "no prefetch ring: two stages of this loop's loads (" + Twine(2 * stageBytes / 1024) +
                         " KiB) exceed the " + Twine(budget / 1024) +
                         " KiB of shared memory a block may hold at this block size; smaller tiles or "
                         "fewer blocks per SM would keep one");
      return false;
    }
    if (stages < ringStages)
      recordDecision(loop, "general path",
                     Twine(ringStages) + " ring stages (--tile-stages) of " + Twine(stageBytes / 1024) +
                         " KiB exceed the " + Twine(budget / 1024) + " KiB a block may hold: " +
                         Twine(stages) + " stages instead");
    Builder b(loop.getContext());
    loop->setAttr("pk.prefetch", b.getI64IntegerAttr(stages));
    int64_t reused = 0;
    for (TileLoadOp load : ring) {
      load->setAttr("pk.prefetch", b.getUnitAttr());
      if (!rowInvariant(loop, load)) continue;
      load->setAttr("pk.reuse", b.getUnitAttr());
      ++reused;
    }
    recordDecision(loop, "general path",
                   "each block copies " + Twine(ring.size()) + " load(s) of its next tile into a " +
                       Twine(stages) + "-stage shared-memory ring (" +
                       Twine(stages * stageBytes / 1024) +
                       " KiB a block, cp.async) while it computes this one, so loads stay in "
                       "flight through its reductions and stores without taking registers "
                       "(rms_norm 0.62 -> 0.85 of cudaMemcpy's bandwidth; "
                       "tools/bench-tiles/rows_probe.cu)" +
                       (reused ? Twine("; ") + Twine(reused) +
                                     " of them do not move with the loop's first index (a "
                                     "weight row), so each is copied only when its origin "
                                     "moved and otherwise re-read from the ring, not from L2"
                               : Twine()));
    return true;
  }

  // Whether the origin of `load` does not depend on the loop's first (slowest) index: walking
  // the tiles row by row, it then stays put from trip to trip unless another index moves.
  static bool rowInvariant(TileForeachOp loop, TileLoadOp load) {
    Value first = loop.getBody().front().getArgument(0);
    SmallVector<Value> work(load.getIndices().begin(), load.getIndices().end());
    llvm::SmallPtrSet<Operation *, 8> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (v == first) return false;
      Operation *def = v.getDefiningOp();
      if (def && loop->isProperAncestor(def) && seen.insert(def).second)
        work.append(def->getOperands().begin(), def->getOperands().end());
    }
    return true;
  }

  void plan(TileForeachOp loop, int64_t threads, int64_t perSm, int64_t ringBudget) {
    Block &body = loop.getBody().front();
    if (!llvm::all_of(body, batchable)) {
      // Said where a ring could otherwise have been (set 41: a gather or a transpose beside the
      // loads of a loop whose blocks never wait left it without one, silently).
      Operation *blocker = &*llvm::find_if(body, [](Operation &op) { return !batchable(op); });
      const auto loads = llvm::count_if(body, [](Operation &op) { return isa<TileLoadOp>(op); });
      if (ringBudget > 0 && loads > 0)
        recordDecision(loop, "general path",
                       "no prefetch ring or batched loads: the loop's body holds '" +
                           blocker->getName().getStringRef() +
                           "', which they do not take (only loads, stores, element-wise ops and row "
                           "reductions); its " + Twine(loads) +
                           " load(s) stay in registers, kept in flight by the SM's other warps");
      return;
    }
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
    if (batch <= 0 && prefetch(loop, hoisted, ringBudget)) return;
    // Measured (docs/benchmarks/tiles-1xH200.md, runs 5-8): batching gains where the block
    // meets at barriers for each tile (row reductions), and costs 3-5% on element-wise loops,
    // whose 32 warps per SM already keep enough loads in flight.
    const bool reduces = llvm::any_of(body, [](Operation &op) { return isa<TileReduceRowsOp>(op); });
    if (batch <= 0 && !reduces) return;
    // The K - 1 tiles loaded ahead stay live beside one trip's own tiles and the registers
    // that are not tiles (indices, addresses, the walk: fp8_quantise of test/specs/fp8.pk.cpp
    // takes 64 registers with 24 slots of tiles). Beside a collective nothing is batched: its
    // state stays live through the kernel (fp8_all_gather took 122 registers unbatched, and
    // spilled at K = 2 in 128).
    const int64_t regs = std::min<int64_t>(255, kRegsPerSm / (threads * perSm));
    const int64_t peak = peakLiveSlots(loop, threads);
    bool collective = false;
    loop->getParentOfType<KernelOp>().walk([&](Operation *op) {
      collective |= isCollectiveIntent(op) || isa<WorkerOp>(op);
    });
    int64_t k = batch;
    if (k <= 0) {
      k = 1;
      for (int64_t c : {4, 2})
        if (!collective && (c - 1) * slots + peak + kNonTileRegs <= regs) { k = c; break; }
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
                                  : Twine("K is the largest of 4, 2 for which the K - 1 tiles loaded "
                                          "ahead, one trip's live tiles and ") +
                                        Twine(kNonTileRegs) + " other registers (" +
                                        Twine((k - 1) * slots + peak + kNonTileRegs) + ") fit " +
                                        Twine(regs) + " registers per thread"));
  }
};

} // namespace

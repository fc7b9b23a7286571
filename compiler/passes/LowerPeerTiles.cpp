// Rule 3 for tiles sent to peers from a general tile loop: register stores or adds into the
// peer's copy, inside the computing block, with one-way arrive/depart flags around the kernel.
#include "FlagsAbove.h"
#include "Phases.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/EffectLedger.h"
#include "pk/Passes/Passes.h"
#include "mlir/IR/Builders.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKLOWERPEERTILESPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

struct LowerPeerTiles : mlir::pk::impl::PkLowerPeerTilesPassBase<LowerPeerTiles> {
  using PkLowerPeerTilesPassBase::PkLowerPeerTilesPassBase;

  // Rows moved by index from or into a peer's copy: already the register path; only the
  // decisions are recorded.
  static void lowerRows(Operation *op) {
    bool pull = isa<TileLoadRowsOp>(op);
    recordDecision(op, "rule 1 (transport)",
                   pull ? "ldst: rows gathered by index from the peer's copy with register loads "
                          "(each row's place is known only at run time, so no TMA box)"
                        : "ldst: rows scattered by index into the peer's copy with register "
                          "stores (each row's place is known only at run time, so no TMA box)");
    recordDecision(op, "rule 2 (overlap)",
                   "intra_sm: the block that computes the rows moves them, no hand-off");
  }

  // Replaces a store_tile / add_tile by the register-path primitive, recording why.
  static void lowerOne(Operation *op) {
    if (isa<TileLoadRowsOp, TileStoreRowsOp>(op)) return lowerRows(op);
    if (isa<LoadPeerOp>(op)) {  // already the register path
      recordDecision(op, "rule 1 (transport)",
                     "ldst: a register tile of the general path pulled from the peer's copy with "
                     "register loads (TMA would need a shared-memory tile)");
      recordDecision(op, "rule 2 (overlap)",
                     "intra_sm: the block that computes with the tile loads it, no hand-off");
      return;
    }
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value tile = op->getOperand(0), dest = op->getOperand(1), peer = op->getOperand(2);
    auto indices = op->getOperands().drop_front(3);
    auto ldst = TransportAttr::get(op->getContext(), Transport::ldst);
    bool adds = isa<AddTileOp>(op);
    if (adds)
      StoreAddAsyncOp::create(b, loc, tile, dest, peer, indices, ldst);
    else
      StoreAsyncOp::create(b, loc, tile, dest, peer, indices, ldst);
    // The select passes chose for a warp-specialised template; the general path has one
    // kind of worker, so its own choice replaces theirs.
    dropDecisions(op);
    recordDecision(op, "rule 1 (transport)",
                   Twine("ldst: a register tile of the general path; the block's threads ") +
                       (adds ? "add it into the peer's copy with red.global.add"
                             : "store it into the peer's copy") +
                       " straight from registers (TMA would need a shared-memory staging copy)");
    recordDecision(op, "rule 2 (overlap)",
                   "intra_sm: the block that computes the tile writes it, so the transfer has "
                   "the compute tile's granularity and needs no hand-off");
    // A tile under 128 bytes leaves most of the block idle and each store a few bytes across
    // NVLink: say how large a step fills it (HARDWARE.md: ld/st is efficient from 128 B a warp).
    if (auto t = dyn_cast<TileType>(tile.getType())) {
      int64_t bytes = t.getElementType().getIntOrFloatBitWidth() / 8;
      for (int64_t d : t.getShape()) bytes *= d;
      if (bytes < 128)
        recordDecision(op, "rule 1 (transport)",
                       "the tile is " + Twine(bytes) + " bytes: one thread moves it, and each trip stores "
                       "under the 128 bytes a warp needs for efficient NVLink stores; a step of at least "
                       "a few thousand bytes (thousands of elements along the contiguous dimension) "
                       "uses the whole block");
    }
    markLowered(op);
    op->erase();
  }

  LogicalResult lowerKernel(KernelOp kernel, ArrayRef<Operation *> peerTiles) {
    MLIRContext *ctx = kernel.getContext();
    Block &entry = kernel.getBody().front();
    Location loc = peerTiles.front()->getLoc();
    OpBuilder b(ctx);
    b.setInsertionPointToStart(&entry);
    auto worker = WorkerOp::create(b, loc, Role::communicator, kGeneralPathBlocks);
    Block *body = new Block();
    worker.getBody().push_back(body);
    // The kernel's whole body runs inside the worker, between the two flag rounds.
    for (Operation &op : llvm::make_early_inc_range(entry))
      if (&op != worker.getOperation() && !isa<ReturnOp>(op)) op.moveBefore(body, body->end());
    auto flagType = FlagType::get(ctx);
    b.setInsertionPointToStart(body);
    // The spec's own flags (pk::prim) move up past slots 0 and 1.
    FlagsAbove(kernel).shift(2);
    Value arrive = FlagOp::create(b, loc, flagType, 0, FlagScope::block);
    Value depart = FlagOp::create(b, loc, flagType, 1, FlagScope::block);
    Value world = WorldSizeOp::create(b, loc, b.getIndexType());
    Value peers = arith::SubIOp::create(b, loc, world, arith::ConstantIndexOp::create(b, loc, 1));
    SignalAllOp::create(b, loc, arrive);
    WaitOp::create(b, loc, arrive, peers, Compare::ge);
    b.setInsertionPointToEnd(body);
    SignalAllOp::create(b, loc, depart);
    WaitOp::create(b, loc, depart, peers, Compare::ge);
    YieldOp::create(b, loc);
    recordDecision(kernel, "rule 3 (one-way sync)",
                   "tiles or rows written into or read from peers: each block signals "
                   "arrival once per peer and waits for the peers' before its first peer "
                   "access, then signals departure and waits for the peers' before the kernel "
                   "ends; per-block monotone flags, no handshake, no staging buffer");
    for (Operation *op : peerTiles) lowerOne(op);
    return success();
  }

  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) {
      SmallVector<Operation *> peerTiles;
      Operation *collective = nullptr, *worker = nullptr;
      const bool ownFlags = hasOwnProtocol(kernel);
      kernel.walk([&](Operation *op) {
        if (isa<StoreTileOp, AddTileOp>(op)) peerTiles.push_back(op);
        if (auto l = dyn_cast<TileLoadRowsOp>(op); l && l.getPeer()) peerTiles.push_back(op);
        if (auto s = dyn_cast<TileStoreRowsOp>(op); s && s.getPeer()) peerTiles.push_back(op);
        // A pull written as intent (`load(y.on(p), ...)`); a kernel with flags of its own
        // (pk::prim) orders its pulls itself.
        if (isa<LoadPeerOp>(op) && !ownFlags) peerTiles.push_back(op);
        if (isCollectiveIntent(op) && !collective) collective = op;
        if (isa<WorkerOp>(op) && !worker) worker = op;
      });
      if (peerTiles.empty()) return;
      if (collective || !dependentPhases(kernel.getBody().front()).empty()) {
        // A kernel of phases: pk-lower-collectives runs them in one worker and puts grid-wide
        // barriers around the phases that write into peers, which replace the flags below.
        for (Operation *op : peerTiles) lowerOne(op);
        return;
      }
      if (worker) {  // a template kernel that left a peer tile behind: not this pass's shape
        peerTiles.front()->emitError("a tile written into a peer next to a lowered template; "
                                     "pkc cannot lower this combination yet");
        failed = true;
        return;
      }
      failed |= mlir::failed(lowerKernel(kernel, peerTiles));
    });
    if (failed) signalPassFailure();
  }
};

} // namespace

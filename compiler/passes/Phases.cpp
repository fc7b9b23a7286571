// Phase analysis shared by pk-lower-peer-tiles and pk-lower-collectives.
#include "Phases.h"

using namespace mlir;
using namespace mlir::pk;

bool mlir::pk::isCollectiveIntent(Operation *op) {
  return isa<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp, BroadcastOp, ReduceToRootOp,
             GatherOp, ScatterOp>(op);
}

bool mlir::pk::isPhase(Operation *op) {
  // A scalar read outside the tile loops (a count that bounds the next loop) must see what the
  // phases before it wrote, like a phase.
  if (isCollectiveIntent(op) || isa<LoadScalarOp>(op)) return true;
  bool phase = false;
  op->walk([&](Operation *inner) { phase |= isa<TileForeachOp>(inner) || isCollectiveIntent(inner); });
  return phase;
}

void mlir::pk::phaseTouches(Operation *phase, llvm::SmallPtrSetImpl<Value> &reads,
                            llvm::SmallPtrSetImpl<Value> &writes, llvm::SmallPtrSetImpl<Value> *adds) {
  if (isCollectiveIntent(phase)) {  // input, output
    reads.insert(phase->getOperand(0));
    writes.insert(phase->getOperand(1));
    return;
  }
  phase->walk([&](Operation *op) {
    if (auto l = dyn_cast<TileLoadOp>(op)) reads.insert(l.getSource());
    if (auto l = dyn_cast<TileLoadRowsOp>(op)) reads.insert(l.getSource());
    if (auto l = dyn_cast<LoadScalarOp>(op)) reads.insert(l.getSource());
    if (auto l = dyn_cast<LoadPeerOp>(op)) reads.insert(l.getSource());
    if (auto s = dyn_cast<TileStoreOp>(op)) writes.insert(s.getDest());
    if (auto s = dyn_cast<TileStoreRowsOp>(op))
      (adds && s.getAdd() && !s.getPeer() ? *adds : writes).insert(s.getDest());
    if (auto c = dyn_cast<TileClaimOp>(op)) {  // an atomic read-modify-write
      reads.insert(c.getCounter());
      writes.insert(c.getCounter());
    }
    // A peer's copy, before (intent) or after (primitive) pk-lower-peer-tiles.
    if (isa<StoreTileOp, AddTileOp, StoreAsyncOp, StoreAddAsyncOp>(op))
      writes.insert(op->getOperand(1));
  });
}

bool mlir::pk::hasOwnProtocol(KernelOp kernel) {
  bool own = false;
  kernel.walk([&](FlagOp flag) { own |= !flag->getParentOfType<WorkerOp>(); });
  return own;
}

SmallVector<Operation *> mlir::pk::dependentPhases(Block &body) {
  SmallVector<Operation *> dependent;
  // Adds into this rank's tensor (store_add, store_add_rows) commute with each other: a phase
  // that only adds where earlier phases only added needs no barrier before it.
  llvm::SmallPtrSet<Value, 8> readBefore, wroteBefore, addedBefore;
  for (Operation &op : body) {
    if (!isPhase(&op)) continue;
    llvm::SmallPtrSet<Value, 8> reads, writes, adds;
    phaseTouches(&op, reads, writes, &adds);
    auto touchedBefore = [&](Value v) { return wroteBefore.contains(v) || addedBefore.contains(v); };
    bool uses = llvm::any_of(reads, touchedBefore) ||
                llvm::any_of(writes, [&](Value v) { return touchedBefore(v) || readBefore.contains(v); }) ||
                llvm::any_of(adds, [&](Value v) { return wroteBefore.contains(v) || readBefore.contains(v); });
    if (uses) {
      // The barrier before this phase orders every earlier phase before it and all later
      // ones, so later phases only need checking against the phases from here on (two
      // collectives of one phase's outputs need no barrier between them).
      dependent.push_back(&op);
      readBefore.clear();
      wroteBefore.clear();
      addedBefore.clear();
    }
    readBefore.insert(reads.begin(), reads.end());
    wroteBefore.insert(writes.begin(), writes.end());
    addedBefore.insert(adds.begin(), adds.end());
  }
  return dependent;
}

// Inside a loop body, phase i of iteration k + 1 follows every phase of iteration k, so a
// phase depends on any other phase of the body that writes what it touches or reads what it
// writes, or when a phase moves a tensor between ranks that it also reads or writes. Otherwise a
// phase alone only meets itself at the tiles it writes (pk-check-tile-races), which the same
// block handles in every iteration.
Operation *mlir::pk::unorderedInLoop(Block &body) {
  SmallVector<Operation *> phases;
  for (Operation &op : body)
    if (isPhase(&op)) phases.push_back(&op);
  // A collective runs once per launch on its flags: inside a loop it would run again.
  for (Operation *op : phases)
    if (isCollectiveIntent(op)) return op;
  // A phase that moves a tensor between ranks and also reads or writes it locally meets itself
  // across trips: a peer writes in trip s what this rank reads in trip s + 1 (a ring all-gather's
  // step loop), which only a launch per trip orders.
  for (Operation *op : phases) {
    llvm::SmallPtrSet<Value, 8> reads, writes, peerReads, peerWrites;
    phaseTouches(op, reads, writes);
    op->walk([&](Operation *inner) {
      if (auto l = dyn_cast<LoadPeerOp>(inner)) peerReads.insert(l.getSource());
      if (isa<StoreTileOp, AddTileOp, StoreAsyncOp, StoreAddAsyncOp>(inner)) peerWrites.insert(inner->getOperand(1));
    });
    if (llvm::any_of(peerWrites, [&](Value v) { return reads.contains(v); }) ||
        llvm::any_of(peerReads, [&](Value v) { return writes.contains(v); }))
      return op;
  }
  for (Operation *op : phases) {
    if (phases.size() < 2) break;
    llvm::SmallPtrSet<Value, 8> reads, writes, otherReads, otherWrites;
    phaseTouches(op, reads, writes);
    for (Operation *other : phases)
      if (other != op) phaseTouches(other, otherReads, otherWrites);
    if (llvm::any_of(reads, [&](Value v) { return otherWrites.contains(v); }) ||
        llvm::any_of(writes, [&](Value v) { return otherWrites.contains(v) || otherReads.contains(v); }))
      return op;
  }
  for (Operation *op : phases)
    if (!isa<TileForeachOp, WorkerOp>(op))
      for (Region &region : op->getRegions())
        for (Block &inner : region)
          if (Operation *found = unorderedInLoop(inner)) return found;
  return nullptr;
}

Operation *mlir::pk::unorderedNestedPhase(Block &body) {
  for (Operation &op : body)
    if (isPhase(&op) && !isa<TileForeachOp, WorkerOp>(op) && !isCollectiveIntent(&op))
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          if (Operation *found = unorderedInLoop(inner)) return found;
  return nullptr;
}

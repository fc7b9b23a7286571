// Device communication primitives: verifiers for transports and tile placement.
#include "TileAccess.h"

using namespace mlir;
using namespace mlir::pk;

#define GET_OP_CLASSES
#include "pk/Dialect/PkCommOps.cpp.inc"

// A primitive carries the mechanism the passes chose: never `auto`.
static LogicalResult verifyChosen(Operation *op, Transport t) {
  if (t == Transport::automatic)
    return op->emitOpError("needs a concrete transport; 'auto' is resolved by pk-select-transport");
  return success();
}

static LogicalResult verifyPeerStore(Operation *op, TileType tile, SymTensorType dest,
                                     size_t numIndices, Transport t, bool adds) {
  if (failed(verifyChosen(op, t)) || failed(verifyTileAccess(op, dest, tile, numIndices)))
    return failure();
  if (t == Transport::tma && tile.getMemorySpace() != MemorySpace::smem)
    return op->emitOpError("TMA transfers read the tile from shared memory; the tile is in registers");
  if (t == Transport::copy_engine)
    return op->emitOpError("the copy engine is driven from the host and cannot move a tile");
  // Register tiles add element by element (red.add, exact for i32 and i64); TMA's bulk
  // reduce-add paths are typed for the floats.
  if (adds && t == Transport::ldst && !isCollectiveReducibleElementType(tile.getElementType()))
    return op->emitOpError("adds support bf16, f16, f32, i32 and i64, got ") << tile.getElementType()
                                                                            << narrowReductionHint(tile.getElementType());
  if (adds && t != Transport::ldst && !isReducibleElementType(tile.getElementType()))
    return op->emitOpError("adds by ") << stringifyTransport(t) << " support bf16, f16 and f32, got "
                                       << tile.getElementType() << "; integer tiles add by ldst";
  return success();
}

LogicalResult StoreAsyncOp::verify() {
  return verifyPeerStore(*this, getValue().getType(), getDest().getType(), getIndices().size(),
                         getTransport(), false);
}

LogicalResult StoreAddAsyncOp::verify() {
  return verifyPeerStore(*this, getValue().getType(), getDest().getType(), getIndices().size(),
                         getTransport(), true);
}

// Read-side reductions need registers: only ld/st or multimem can reduce while reading.
static LogicalResult verifyReadReduce(Operation *op, Transport t, Type element) {
  if (failed(verifyChosen(op, t)))
    return failure();
  if (t != Transport::ldst && t != Transport::multimem)
    return op->emitOpError("reduces while reading, which needs transport ldst or multimem");
  if (!isCollectiveReducibleElementType(element))
    return op->emitOpError("reductions support bf16, f16, f32, i32 and i64, got ") << element
                                                                                 << narrowReductionHint(element);
  if (t == Transport::multimem && !isReducibleElementType(element))
    return op->emitOpError("multimem reductions support bf16, f16 and f32, got ") << element;
  return success();
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyReadReduce(*this, getTransport(), getSource().getType().getElementType())))
    return failure();
  if (getResult().getType().getMemorySpace() != MemorySpace::reg)
    return emitOpError("produces a register tile");
  return verifyTileAccess(*this, getSource().getType(), getResult().getType(),
                          getIndices().size());
}

LogicalResult CommAllReduceOp::verify() {
  SymTensorType src = getSource().getType(), dst = getDest().getType();
  if (failed(verifyReadReduce(*this, getTransport(), src.getElementType())))
    return failure();
  if (src != dst)
    return emitOpError("source and destination must have the same type");
  if (getShape().size() != static_cast<size_t>(src.getRank()) || getIndices().size() != getShape().size())
    return emitOpError("needs one index and one tile extent per tensor dimension");
  for (int64_t e : getShape())
    if (e <= 0)
      return emitOpError("tile extents must be positive");
  return success();
}

LogicalResult LoadPeerOp::verify() {
  if (failed(verifyChosen(*this, getTransport())))
    return failure();
  TileType tile = getResult().getType();
  if (getTransport() == Transport::tma && tile.getMemorySpace() != MemorySpace::smem)
    return emitOpError("TMA loads land in shared memory; declare the tile as smem");
  if (getTransport() == Transport::copy_engine || getTransport() == Transport::multimem)
    return emitOpError("loads a tile with tma or ldst only");
  return verifyTileAccess(*this, getSource().getType(), tile, getIndices().size());
}

// A symmetric tensor is addressed on a named rank; a local tensor only on this rank.
static LogicalResult verifyRankedEnd(Operation *op, Type tensor, bool hasRank, StringRef what,
                                     bool rankOptionalForSym) {
  if (isa<LocalTensorType>(tensor) && hasRank)
    return op->emitOpError(what) << " is a local tensor and cannot be addressed on another rank";
  if (isa<SymTensorType>(tensor) && !hasRank && !rankOptionalForSym)
    return op->emitOpError(what) << " is symmetric: name the rank with 'on'";
  return success();  // offsets count elements of the contiguous row-major tensor, any rank
}

LogicalResult CopyOp::verify() {
  if (failed(verifyChosen(*this, getTransport())))
    return failure();
  if (getTransport() != Transport::ldst)
    return emitOpError("copies with transport ldst only for now");
  if (getTensorElementType(getSource().getType()) != getTensorElementType(getDest().getType()))
    return emitOpError("source and destination element types differ");
  if (failed(verifyRankedEnd(*this, getSource().getType(), bool(getSrcRank()), "source", false)))
    return failure();
  return verifyRankedEnd(*this, getDest().getType(), bool(getDstRank()), "destination", false);
}

LogicalResult ReduceIntoOp::verify() {
  Type element = getSource().getType().getElementType();
  if (failed(verifyReadReduce(*this, getTransport(), element)))
    return failure();
  if (getTransport() != Transport::ldst)
    return emitOpError("reduces into a tensor with transport ldst only for now");
  if (getTensorElementType(getDest().getType()) != element)
    return emitOpError("source and destination element types differ");
  if (failed(verifyRankedEnd(*this, getSource().getType(), true, "source", true)))
    return failure();
  return verifyRankedEnd(*this, getDest().getType(), bool(getDstRank()), "destination", true);
}

LogicalResult PushSmallOp::verify() {
  CollectiveKind c = getCollective();
  bool reduces = c == CollectiveKind::all_reduce || c == CollectiveKind::reduce_scatter ||
                 c == CollectiveKind::reduce;
  bool rooted = c == CollectiveKind::broadcast || c == CollectiveKind::reduce ||
                c == CollectiveKind::gather || c == CollectiveKind::scatter;
  if (reduces != bool(getKind()))
    return emitOpError(reduces ? "a reducing collective needs a reduction kind"
                               : "only reducing collectives take a reduction kind");
  if (rooted != bool(getRoot()))
    return emitOpError(rooted ? "a rooted collective needs a root" : "only rooted collectives take a root");
  Type in = getTensorElementType(getInput().getType());
  if (in != getTensorElementType(getOutput().getType()))
    return emitOpError("input and output element types differ");
  if (reduces && !isCollectiveReducibleElementType(in))
    return emitOpError("reductions support bf16, f16, f32, i32 and i64, got ") << in;
  for (Value f : {getCount(), getLlCount(), getLanes()})
    if (auto def = f.getDefiningOp<FlagOp>(); def && def.getScope() != FlagScope::block)
      return emitOpError("flags must be <block> flags");
  if (getMaxBytesAttr().getInt() < 0) return emitOpError("max_bytes must not be negative");
  if (getLlMaxBytesAttr().getInt() < 0) return emitOpError("ll_max_bytes must not be negative");
  return success();
}

int64_t mlir::pk::pushSmallSlotUnits(PushSmallOp op) {
  auto worker = op->getParentOfType<WorkerOp>();
  int64_t blocks = worker && worker.getBlocks() > 0 ? worker.getBlocks() : 1;
  return (kPushSmallSlots + blocks - 1) / blocks;
}

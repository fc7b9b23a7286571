// Communication intent ops: shape and type rules of each collective.
#include "TileAccess.h"

using namespace mlir;
using namespace mlir::pk;

#define GET_OP_CLASSES
#include "pk/Dialect/PkCollectiveOps.cpp.inc"

// Input and output share element type and rank; dimensions other than `dim` (the first by
// default) agree; `firstDimEqual` says whether that one must agree too where both are static.
static LogicalResult verifyCollective(Operation *op, Type input, Type output,
                                      bool reduces, bool firstDimEqual, int64_t dim = 0) {
  auto in = getTensorShape(input), out = getTensorShape(output);
  if (getTensorElementType(input) != getTensorElementType(output))
    return op->emitOpError("input and output element types differ");
  if (reduces && !isCollectiveReducibleElementType(getTensorElementType(input)))
    return op->emitOpError("reductions support bf16, f16, f32, i32 and i64, got ")
           << getTensorElementType(input) << narrowReductionHint(getTensorElementType(input));
  if (in.size() != out.size())
    return op->emitOpError("input and output ranks differ");
  if (dim < 0 || dim >= int64_t(in.size()))
    return op->emitOpError("dimension ") << dim << " is out of range for a tensor of rank "
                                         << in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (int64_t(d) == dim && !firstDimEqual) continue;
    if (!ShapedType::isDynamic(in[d]) && !ShapedType::isDynamic(out[d]) && in[d] != out[d])
      return op->emitOpError("dimension ") << d << " differs: " << in[d] << " vs " << out[d];
  }
  return success();
}

static LogicalResult verifyPrescribedTransport(Operation *op, Transport t, bool reduces) {
  if (reduces && (t == Transport::tma || t == Transport::copy_engine))
    return op->emitOpError("transport '") << stringifyTransport(t)
           << "' cannot reduce while reading; use ldst, multimem or auto";
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyCollective(*this, getInput().getType(), getOutput().getType(), true, true)))
    return failure();
  return verifyPrescribedTransport(*this, getTransport(), true);
}

LogicalResult AllGatherOp::verify() {
  return verifyCollective(*this, getInput().getType(), getOutput().getType(), false, false,
                          getDim());
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyCollective(*this, getInput().getType(), getOutput().getType(), true, false,
                              getDim())))
    return failure();
  return verifyPrescribedTransport(*this, getTransport(), true);
}

LogicalResult AllToAllOp::verify() {
  const int64_t s = getSplitDim(), c = getConcatDim();
  // Within one dimension: input and output have one shape, split in world_size blocks along s.
  if (s == c)
    return verifyCollective(*this, getInput().getType(), getOutput().getType(), false, true, s);
  if (getInput() == getOutput())
    return emitOpError("in place needs split_dim == concat_dim: the two shapes differ");
  auto in = getTensorShape(getInput().getType()), out = getTensorShape(getOutput().getType());
  if (getTensorElementType(getInput().getType()) != getTensorElementType(getOutput().getType()))
    return emitOpError("input and output element types differ");
  if (in.size() != out.size()) return emitOpError("input and output ranks differ");
  for (auto [what, d] : {std::pair{"split_dim", s}, std::pair{"concat_dim", c}})
    if (d < 0 || d >= int64_t(in.size()))
      return emitOpError(what) << " " << d << " is out of range for a tensor of rank " << in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    if (int64_t(d) == s || int64_t(d) == c) continue;
    if (!ShapedType::isDynamic(in[d]) && !ShapedType::isDynamic(out[d]) && in[d] != out[d])
      return emitOpError("dimension ") << d << " differs: " << in[d] << " vs " << out[d];
  }
  return success();
}

static LogicalResult verifyTileToPeer(Operation *op, TileType tile, SymTensorType dest,
                                      size_t numIndices, bool adds) {
  if (failed(verifyTileAccess(op, dest, tile, numIndices)))
    return failure();
  if (adds && !isCollectiveReducibleElementType(tile.getElementType()))
    return op->emitOpError("adds support bf16, f16, f32, i32 and i64, got ") << tile.getElementType()
                                                                            << narrowReductionHint(tile.getElementType());
  return success();
}

LogicalResult StoreTileOp::verify() {
  return verifyTileToPeer(*this, getValue().getType(), getDest().getType(),
                          getIndices().size(), false);
}

LogicalResult AddTileOp::verify() {
  return verifyTileToPeer(*this, getValue().getType(), getDest().getType(),
                          getIndices().size(), true);
}

// Rooted collectives: the root is a run-time index, so only shapes and types are checked.
LogicalResult BroadcastOp::verify() {
  return verifyCollective(*this, getInput().getType(), getOutput().getType(), false, true);
}

LogicalResult ReduceToRootOp::verify() {
  if (failed(verifyCollective(*this, getInput().getType(), getOutput().getType(), true, true)))
    return failure();
  return verifyPrescribedTransport(*this, getTransport(), true);
}

LogicalResult GatherOp::verify() {
  return verifyCollective(*this, getInput().getType(), getOutput().getType(), false, false);
}

LogicalResult ScatterOp::verify() {
  return verifyCollective(*this, getInput().getType(), getOutput().getType(), false, false);
}

int64_t mlir::pk::getCollectiveDim(Operation *op) {
  if (auto ag = dyn_cast<AllGatherOp>(op)) return ag.getDim();
  if (auto rs = dyn_cast<ReduceScatterOp>(op)) return rs.getDim();
  // Split and concatenated along two dimensions: the deeper one, where a rank's part is
  // strided.
  if (auto a2a = dyn_cast<AllToAllOp>(op)) return std::max(a2a.getSplitDim(), a2a.getConcatDim());
  return 0;
}

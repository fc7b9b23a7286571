// Tile ops: verifiers for loads, stores and tile compute.
#include "TileAccess.h"

using namespace mlir;
using namespace mlir::pk;

#define GET_OP_CLASSES
#include "pk/Dialect/PkTileOps.cpp.inc"

LogicalResult TileLoadOp::verify() {
  return verifyTileAccess(*this, getSource().getType(), getResult().getType(),
                          getIndices().size());
}

LogicalResult TileStoreOp::verify() {
  return verifyTileAccess(*this, getDest().getType(), getValue().getType(),
                          getIndices().size());
}

LogicalResult TileZerosOp::verify() {
  if (getResult().getType().getMemorySpace() != MemorySpace::reg)
    return emitOpError("produces a register tile; load into shared memory instead");
  return success();
}

LogicalResult TileMmaOp::verify() {
  TileType a = getA().getType(), b = getB().getType(), acc = getAcc().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || acc.getRank() != 2)
    return emitOpError("operands must be 2-D tiles");
  auto as = a.getShape(), bs = b.getShape(), cs = acc.getShape();
  // b is K x N, or N x K with transpose_b.
  int64_t bk = getTransposeB() ? bs[1] : bs[0], bn = getTransposeB() ? bs[0] : bs[1];
  if (as[1] != bk)
    return emitOpError("inner dimensions differ: a is ") << as[0] << "x" << as[1]
           << ", b is " << bs[0] << "x" << bs[1] << (getTransposeB() ? " (transposed)" : "");
  if (cs[0] != as[0] || cs[1] != bn)
    return emitOpError("accumulator must be ") << as[0] << "x" << bn << ", got " << cs[0]
                                               << "x" << cs[1];
  if (a.getElementType() != b.getElementType() ||
      !(a.getElementType().isBF16() || a.getElementType().isF16()))
    return emitOpError("a and b must both be bf16 or both be f16");
  if (!acc.getElementType().isF32() || acc.getMemorySpace() != MemorySpace::reg)
    return emitOpError("accumulator must be an f32 register tile");
  return success();
}

static bool isUnary(MapKind kind) {
  switch (kind) {
  case MapKind::add: case MapKind::sub: case MapKind::mul: case MapKind::div:
  case MapKind::max: case MapKind::min: case MapKind::pow: case MapKind::lt:
  case MapKind::le: case MapKind::gt: case MapKind::ge: case MapKind::eq: case MapKind::ne:
    return false;
  default: return true;
  }
}

LogicalResult TileMapOp::verify() {
  size_t expected = isUnary(getKind()) ? 1 : 2;
  if (getInputs().size() != expected)
    return emitOpError("'") << stringifyMapKind(getKind()) << "' takes " << expected
                            << " operand(s), got " << getInputs().size();
  TileType out = getResult().getType();
  bool full = false;
  for (Value in : getInputs()) {
    auto t = cast<TileType>(in.getType());
    if (t == out) {
      full = true;
      continue;
    }
    // A rows x 1 or 1 x cols register tile broadcast against a 2-D result.
    bool broadcast = expected == 2 && out.getRank() == 2 && t.getRank() == 2 &&
                     t.getElementType() == out.getElementType() &&
                     t.getMemorySpace() == MemorySpace::reg &&
                     ((t.getShape()[0] == out.getShape()[0] && t.getShape()[1] == 1) ||
                      (t.getShape()[0] == 1 && t.getShape()[1] == out.getShape()[1]));
    if (!broadcast)
      return emitOpError("operands must have the result's tile type, or one of them be a rows x 1 "
                         "or 1 x cols tile broadcast against it; got ")
             << t << " for " << out;
  }
  if (!full) return emitOpError("one operand must have the result's tile type");
  return success();
}

LogicalResult TileSplatOp::verify() {
  if (getResult().getType().getMemorySpace() != MemorySpace::reg)
    return emitOpError("produces a register tile");
  return success();
}

LogicalResult TileSelectOp::verify() {
  auto c = getCond().getType(), r = getResult().getType();
  if (c.getShape() != r.getShape())
    return emitOpError("the mask must have the result's shape; got ") << c << " for " << r;
  if (r.getMemorySpace() != MemorySpace::reg || c.getMemorySpace() != MemorySpace::reg)
    return emitOpError("selects between register tiles");
  return success();
}

LogicalResult TileIotaOp::verify() {
  auto r = getResult().getType();
  if (getDim() < 0 || getDim() >= r.getRank())
    return emitOpError("dimension ") << getDim() << " is not one of the tile's " << r.getRank();
  if (r.getMemorySpace() != MemorySpace::reg) return emitOpError("produces a register tile");
  return success();
}

LogicalResult TileCastOp::verify() {
  if (getInput().getType().getShape() != getResult().getType().getShape())
    return emitOpError("cannot change the tile shape");
  return success();
}

LogicalResult TileReduceRowsOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (in.getRank() != 2)
    return emitOpError("input must be a 2-D tile");
  if (out.getRank() != 2 || out.getShape()[0] != in.getShape()[0] || out.getShape()[1] != 1)
    return emitOpError("result must be a ") << in.getShape()[0] << "x1 tile";
  if (out.getElementType() != in.getElementType())
    return emitOpError("result element type must equal the input's");
  return success();
}

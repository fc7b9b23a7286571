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
  // As the tensor cores take them: bf16 with bf16, f16 with f16, fp8 with fp8 (e4m3 and e5m2
  // mix) into f32; i8 with i8 into i32.
  Type ea = a.getElementType(), eb = b.getElementType();
  const bool int8 = ea.isSignlessInteger(8) && eb.isSignlessInteger(8);
  if (!((ea == eb && (ea.isBF16() || ea.isF16())) || (isFp8(ea) && isFp8(eb)) || int8))
    return emitOpError("a and b must both be bf16, both f16, or both fp8 (e4m3 or e5m2) (or both i8, into an i32 "
                       "accumulator)")
           << (ea.isSignlessInteger(8) || eb.isSignlessInteger(8)
                   ? "; i8 tiles multiply as bf16 beside a float tile (cast<bf16>(t) is exact for every i8 value)"
                   : "");
  if (acc.getMemorySpace() != MemorySpace::reg)
    return emitOpError("accumulator must be a register tile");
  if (int8 && !acc.getElementType().isSignlessInteger(32))
    return emitOpError("i8 operands accumulate into an i32 register tile, got ") << acc.getElementType();
  if (!int8 && !acc.getElementType().isF32())
    return emitOpError("accumulator must be an f32 register tile")
           << (acc.getElementType().isSignlessInteger(32) ? " (an i32 accumulator takes i8 operands)" : "");
  return success();
}

static bool isUnary(MapKind kind) {
  switch (kind) {
  case MapKind::add: case MapKind::sub: case MapKind::mul: case MapKind::div:
  case MapKind::max: case MapKind::min: case MapKind::pow: case MapKind::lt:
  case MapKind::le: case MapKind::gt: case MapKind::ge: case MapKind::eq: case MapKind::ne:
  case MapKind::rem: case MapKind::hash: case MapKind::bit_and: case MapKind::bit_or:
  case MapKind::bit_xor: case MapKind::shl: case MapKind::shr:
    return false;
  default: return true;
  }
}

LogicalResult ScalarMapOp::verify() {
  switch (getKind()) {
  case MapKind::lt: case MapKind::le: case MapKind::gt: case MapKind::ge: case MapKind::eq:
  case MapKind::ne: case MapKind::rem: case MapKind::hash: case MapKind::bit_and:
  case MapKind::bit_or: case MapKind::bit_xor: case MapKind::shl: case MapKind::shr:
    return emitOpError("'") << stringifyMapKind(getKind()) << "' is not a scalar kind";
  default: break;
  }
  size_t expected = isUnary(getKind()) ? 1 : 2;
  if (getInputs().size() != expected)
    return emitOpError("'") << stringifyMapKind(getKind()) << "' takes " << expected
                            << " operand(s), got " << getInputs().size();
  return success();
}

LogicalResult TileMapOp::verify() {
  size_t expected = isUnary(getKind()) ? 1 : 2;
  if (getInputs().size() != expected)
    return emitOpError("'") << stringifyMapKind(getKind()) << "' takes " << expected
                            << " operand(s), got " << getInputs().size();
  TileType out = getResult().getType();
  // Transcendental kinds are fp32 math; remainders are integer arithmetic.
  const bool integer = isa<IntegerType>(out.getElementType());
  switch (getKind()) {
  case MapKind::exp: case MapKind::sqrt: case MapKind::rsqrt: case MapKind::log:
  case MapKind::tanh: case MapKind::sigmoid: case MapKind::silu: case MapKind::gelu_tanh:
  case MapKind::gelu_erf: case MapKind::sin: case MapKind::cos: case MapKind::pow: case MapKind::erf:
  case MapKind::round: case MapKind::floor: case MapKind::ceil:
    if (integer)
      return emitOpError("'") << stringifyMapKind(getKind()) << "' takes float tiles, got "
                              << out << "; cast to f32 first";
    break;
  case MapKind::rem: case MapKind::hash: case MapKind::bit_and: case MapKind::bit_or:
  case MapKind::bit_xor: case MapKind::shl: case MapKind::shr:
    if (!integer)
      return emitOpError("'") << stringifyMapKind(getKind()) << "' takes integer tiles, got " << out;
    break;
  default: break;
  }
  // Each operand has the result's type, or (binary kinds) broadcasts to it: a register tile of
  // its rank and element type whose extents are the result's or 1, the result's extents being
  // those of an operand in every dimension (a row against a tile, [M, 1] x [1, N], ...).
  SmallVector<bool> reached(out.getRank(), false);
  for (Value in : getInputs()) {
    auto t = cast<TileType>(in.getType());
    if (t == out) {
      reached.assign(out.getRank(), true);
      continue;
    }
    bool broadcast = expected == 2 && t.getElementType() == out.getElementType() &&
                     t.getMemorySpace() == MemorySpace::reg && t.getRank() == out.getRank();
    for (int64_t d = 0; broadcast && d < out.getRank(); ++d) {
      broadcast = t.getShape()[d] == out.getShape()[d] || t.getShape()[d] == 1;
      if (t.getShape()[d] == out.getShape()[d]) reached[d] = true;
    }
    if (!broadcast)
      return emitOpError("operands must have the result's tile type, or broadcast to it (a "
                         "register tile of its rank and element type, each extent the result's "
                         "or 1); got ")
             << t << " for " << out;
  }
  if (!llvm::all_of(reached, [](bool r) { return r; }))
    return emitOpError("the result ") << out << " must take each extent from an operand";
  return success();
}

LogicalResult TileSplatOp::verify() {
  if (getResult().getType().getMemorySpace() != MemorySpace::reg)
    return emitOpError("produces a register tile");
  // A float scalar splats to float tiles; an integer or index (a rank, an offset) to any.
  if (isa<FloatType>(getScalar().getType()) && isa<IntegerType>(getResult().getType().getElementType()))
    return emitOpError("a float scalar cannot fill an integer tile; cast the tile to f32 first");
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
  Type e = in.getElementType();
  if (!isa<FloatType>(e) && !e.isInteger(32) && !e.isInteger(64))
    return emitOpError("reduces float, i32 or i64 tiles, got ") << in << "; cast to i32 first";
  return success();
}

// The shared rules of pk.tile.load_rows and pk.tile.store_rows: a 2-D tensor and tile of one
// element type, and an integer register tile with one index per tile row.
static LogicalResult verifyRowAccess(Operation *op, Type tensorType, TileType tile, TileType rows,
                                     bool onPeer) {
  ArrayRef<int64_t> shape = getTensorShape(tensorType);
  if (shape.size() != 2)
    return op->emitOpError("moves rows of 2-D tensors, got ") << tensorType;
  if (onPeer && !isa<SymTensorType>(tensorType))
    return op->emitOpError("moves rows of a peer's copy, which only a symmetric tensor has; got ")
           << tensorType;
  if (tile.getRank() != 2 || tile.getMemorySpace() != MemorySpace::reg)
    return op->emitOpError("moves a 2-D register tile, got ") << tile;
  if (tile.getElementType() != getTensorElementType(tensorType))
    return op->emitOpError("the tile's element type must be the tensor's, got ")
           << tile.getElementType() << " and " << getTensorElementType(tensorType);
  if (!rows.getElementType().isSignlessInteger(32) && !rows.getElementType().isSignlessInteger(64))
    return op->emitOpError("row indices must be an i32 or i64 tile, got ") << rows;
  if (rows.getMemorySpace() != MemorySpace::reg || rows.getNumElements() != tile.getShape()[0] ||
      (rows.getRank() == 2 && rows.getShape()[1] != 1) || rows.getRank() > 2)
    return op->emitOpError("row indices must be a register tile of ")
           << tile.getShape()[0] << " (or " << tile.getShape()[0] << "x1), one per tile row; got "
           << rows;
  return success();
}

LogicalResult TileLoadRowsOp::verify() {
  return verifyRowAccess(*this, getSource().getType(), getResult().getType(), getRows().getType(),
                         bool(getPeer()));
}

LogicalResult TileStoreRowsOp::verify() {
  // Added rows go by red.global.add, which has no fp8 form.
  Type elem = getValue().getType().getElementType();
  if (getAdd() && !isCollectiveReducibleElementType(elem))
    return emitOpError("adds support bf16, f16, f32, i32 and i64, got ") << elem << narrowReductionHint(elem);
  return verifyRowAccess(*this, getDest().getType(), getValue().getType(), getRows().getType(),
                         bool(getPeer()));
}

LogicalResult TileClaimOp::verify() {
  Type counter = getCounter().getType();
  Type elem = getTensorElementType(counter);
  if (getTensorShape(counter).size() != 1 ||
      !(elem.isSignlessInteger(32) || elem.isSignlessInteger(64)))
    return emitOpError("counts in a 1-D i32 or i64 tensor, got ") << counter;
  TileType index = getIndex().getType(), result = getResult().getType();
  if (!isa<IntegerType>(index.getElementType()) || index.getMemorySpace() != MemorySpace::reg)
    return emitOpError("the index must be an integer register tile, got ") << index;
  if (result.getShape() != index.getShape() || result.getElementType() != elem ||
      result.getMemorySpace() != MemorySpace::reg)
    return emitOpError("the result must be a register tile of the index's shape and the "
                       "counter's element type, got ")
           << result;
  return success();
}

LogicalResult TileTransposeOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (in.getRank() != 2 || in.getMemorySpace() != MemorySpace::reg)
    return emitOpError("transposes a 2-D register tile, got ") << in;
  if (out.getRank() != 2 || out.getMemorySpace() != MemorySpace::reg ||
      out.getShape()[0] != in.getShape()[1] || out.getShape()[1] != in.getShape()[0] ||
      out.getElementType() != in.getElementType())
    return emitOpError("the result must be the ") << in.getShape()[1] << "x" << in.getShape()[0]
           << " register tile of the input's element type, got " << out;
  return success();
}

LogicalResult TileReshapeOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  auto nonUnit = [](TileType t) {
    SmallVector<int64_t> dims;
    for (int64_t d : t.getShape())
      if (d != 1) dims.push_back(d);
    return dims;
  };
  if (in.getMemorySpace() != MemorySpace::reg || out.getMemorySpace() != MemorySpace::reg ||
      in.getElementType() != out.getElementType() || nonUnit(in) != nonUnit(out))
    return emitOpError("only adds or drops unit dimensions of a register tile, keeping its "
                       "element type; got ") << in << " -> " << out;
  return success();
}

LogicalResult TileCumsumOp::verify() {
  TileType t = getInput().getType();
  if (t.getMemorySpace() != MemorySpace::reg)
    return emitOpError("sums along the last dimension of a register tile, got ") << t;
  return success();
}

LogicalResult TileTopkOp::verify() {
  TileType in = getInput().getType(), v = getValues().getType(), i = getIndices().getType();
  if (in.getRank() < 1 || in.getRank() > 4 || !isa<FloatType>(in.getElementType()) ||
      in.getMemorySpace() != MemorySpace::reg)
    return emitOpError("takes a float register tile of rank 1 to 4, got ") << in;
  const int64_t last = in.getRank() - 1;
  if (v.getRank() != in.getRank() || v.getShape().drop_back() != in.getShape().drop_back() ||
      v.getElementType() != in.getElementType() || v.getMemorySpace() != MemorySpace::reg)
    return emitOpError("values must be a register tile of the input's rows (all dimensions but the last) and type, "
                       "with K in the last, got ")
           << v;
  if (i.getShape() != v.getShape() || !i.getElementType().isSignlessInteger(32) || i.getMemorySpace() != MemorySpace::reg)
    return emitOpError("indices must be an i32 register tile of the values' shape, got ") << i;
  if (v.getShape()[last] > in.getShape()[last])
    return emitOpError("K (") << v.getShape()[last] << ") is more than the row's " << in.getShape()[last] << " elements";
  return success();
}

LogicalResult TileHistogramOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (!isa<IntegerType>(in.getElementType()) || in.getMemorySpace() != MemorySpace::reg)
    return emitOpError("counts the values of an integer register tile, got ") << in;
  if (out.getRank() != 1 || !out.getElementType().isSignlessInteger(32) ||
      out.getMemorySpace() != MemorySpace::reg)
    return emitOpError("the counts are a 1-D i32 register tile, got ") << out;
  return success();
}

// Shared verification of ops that address a tile of a tensor at an origin.
#include "TileAccess.h"

using namespace mlir;

LogicalResult mlir::pk::verifyTileAccess(Operation *op, Type tensorType, TileType tile,
                                         size_t numIndices) {
  ArrayRef<int64_t> shape = getTensorShape(tensorType);
  if (numIndices != shape.size())
    return op->emitOpError("needs ") << shape.size() << " indices for a tensor of rank "
                                     << shape.size() << ", got " << numIndices;
  if (tile.getRank() != static_cast<int64_t>(shape.size()))
    return op->emitOpError("tile rank ") << tile.getRank() << " does not match tensor rank "
                                         << shape.size();
  if (tile.getElementType() != getTensorElementType(tensorType))
    return op->emitOpError("tile element type ") << tile.getElementType()
           << " does not match tensor element type " << getTensorElementType(tensorType)
           << specCastHint(getTensorElementType(tensorType));
  return success();
}

// The spec's name of a tile element type (pk/spec.h), or "" for one a spec cannot name.
static StringRef specTypeName(Type t) {
  if (t.isBF16()) return "bf16";
  if (t.isF16()) return "f16";
  if (t.isF32()) return "f32";
  if (t.isSignlessInteger(32)) return "i32";
  if (t.isSignlessInteger(64)) return "i64";
  if (t.isSignlessInteger(8)) return "i8";
  if (isa<Float8E4M3FNType>(t)) return "f8e4m3";
  if (isa<Float8E5M2Type>(t)) return "f8e5m2";
  return "";
}

std::string mlir::pk::specCastHint(Type to) {
  StringRef name = specTypeName(to);
  if (name.empty()) return "";
  return ("; convert the tile first (cast<" + name + ">(t) in a spec)").str();
}

StringRef mlir::pk::narrowReductionHint(Type t) {
  if (t.isSignlessInteger(8))
    return "; i8 values would wrap at 8 bits: reduce them as i32 (cast<i32>, then narrow the result)";
  return isFp8(t) ? "; fp8 values do not add: reduce them as f32 or bf16 "
                                                     "(cast, then quantise the result)"
                                                   : "";
}

bool mlir::pk::isReducibleElementType(Type t) { return t.isBF16() || t.isF16() || t.isF32(); }
bool mlir::pk::isCollectiveReducibleElementType(Type t) {
  return isReducibleElementType(t) || t.isSignlessInteger(32) || t.isSignlessInteger(64);
}

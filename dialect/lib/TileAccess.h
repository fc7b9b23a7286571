// Shared verification of ops that address a tile of a tensor at an origin.
#pragma once
#include "pk/Dialect/Pk.h"

#include <string>

namespace mlir::pk {
/// One index per tensor dimension, the tile's rank equal to the tensor's, same element type.
LogicalResult verifyTileAccess(Operation *op, Type tensorType, TileType tile, size_t numIndices);
/// "; convert the tile first (cast<T>(t) in a spec)" for a tensor element type T a spec can
/// name, appended to element type mismatches of tile loads and stores (empty otherwise).
std::string specCastHint(Type to);
/// Element types that reductions and adds support.
bool isReducibleElementType(Type type);
/// A hint appended to reduction errors on fp8 and i8 element types (empty otherwise).
StringRef narrowReductionHint(Type type);
/// What a collective's reduction (read on every rank, combined in registers) takes: the
/// floats, and i32 and i64 (combined exactly in their own type).
bool isCollectiveReducibleElementType(Type type);
} // namespace mlir::pk

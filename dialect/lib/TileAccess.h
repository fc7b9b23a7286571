// Shared verification of ops that address a tile of a tensor at an origin.
#pragma once
#include "pk/Dialect/Pk.h"

namespace mlir::pk {
/// One index per tensor dimension, the tile's rank equal to the tensor's, same element type.
LogicalResult verifyTileAccess(Operation *op, Type tensorType, TileType tile, size_t numIndices);
/// Element types that reductions and adds support.
bool isReducibleElementType(Type type);
/// A hint appended to reduction errors on fp8 element types (empty otherwise).
StringRef fp8ReductionHint(Type type);
/// What a collective's reduction (read on every rank, combined in registers) takes: the
/// floats, and i32 and i64 (combined exactly in their own type).
bool isCollectiveReducibleElementType(Type type);
} // namespace mlir::pk

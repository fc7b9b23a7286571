// The shared memory a general-path kernel's register tiles pass through (pk/tile/rows.cuh,
// pk/tile/prefetch.cuh): which buffers it declares, and how many bytes. pk-batch-tile-loads
// sizes the prefetch ring from what is left of an SM, and the emitter declares the same buffers.
#pragma once

#include "pk/Dialect/Pk.h"

namespace mlir::pk {

constexpr int64_t kTileStageBytes = 4096 * 4;  // pk_stage (pk::tile::kStageFloats)
constexpr int64_t kTileRowsBytes = 4096 * 4;   // pk_rows (pk::tile::kMaxRows)
constexpr int64_t kSmemPerSm = 228 * 1024;     // Hopper: an SM's shared memory ...
constexpr int64_t kSmemReservedPerBlock = 1024;  // ... of which the driver keeps 1 KiB a block

/// Whether a row reduction of `in` in blocks of `threads` takes the block-wide route of
/// pk::tile::reduce_rows (every thread holds whole runs of every row, few rows): it then needs
/// only `rows x warps` partials, not the stage and row accumulators.
bool blockwideRowReduction(TileType in, int64_t threads);

struct TileSharedUse {
  bool stage = false;     // pk_stage: broadcasts, chunked row reductions, mma, gathers
  bool rows = false;      // pk_rows: chunked row reductions
  int64_t partials = 0;   // floats per half of pk_partials (block-wide row reductions)
  /// Bytes of the static buffers above.
  int64_t staticBytes() const {
    return (stage ? kTileStageBytes : 0) + (rows ? kTileRowsBytes : 0) + 2 * partials * 4;
  }
};
/// Bytes of one tile's slot in a loop's prefetch ring (pk/tile/prefetch.cuh), 16-byte aligned.
inline int64_t prefetchSlotBytes(TileType t) {
  return (t.getNumElements() * t.getElementType().getIntOrFloatBitWidth() / 8 + 15) / 16 * 16;
}
/// The loads of `loop` (a pk.tile.foreach) that read through its prefetch ring (`pk.prefetch`
/// on the loop and on each such load), in body order, and the bytes of one stage of the ring.
SmallVector<TileLoadOp> prefetchedLoads(Operation *loop, int64_t *stageBytes);
/// The ops of `body` that the origins of `loads` need, in body order (appended to `slice`):
/// what a trip must compute to issue those loads for a later tile. False when one of them is
/// not scalar arithmetic or a dim (then no later trip can compute it ahead).
bool originSlice(Block &body, ArrayRef<TileLoadOp> loads, SmallVectorImpl<Operation *> &slice);
/// The dynamic shared memory a kernel's prefetch rings take (the largest loop's).
int64_t kernelRingBytes(Operation *kernel);

/// The buffers a kernel's tile ops need in blocks of `threads`.
TileSharedUse tileSharedUse(Operation *kernel, int64_t threads);

} // namespace mlir::pk

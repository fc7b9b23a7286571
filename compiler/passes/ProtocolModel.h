// The protocol model: a device-level kernel interpreted into per-block event lists for
// one world size, so signals, waits and peer accesses can be checked across ranks.
#pragma once

#include "pk/Dialect/Pk.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <map>
#include <string>
#include <optional>
#include <vector>

namespace mlir::pk::protocol {

// Run-time flag slots the model follows: the flag region's 2048 words hold at most this many
// slots of a one-block launch (pk/runtime/context.h's kKernelFlagRegion).
inline constexpr int64_t kMaxModelledSlots = 2048;

// One configuration the checker tries: the world size and values for what the IR leaves
// open (tensor sizes and scalar arguments; the block count of `blocks 0` workers).
struct Config {
  int world = 1;
  int64_t dimValue = 1;
  int64_t blocks = 1;
  // Extents that differ from the default (dimension 0: dimValue, others 1), by kernel argument
  // and dimension: a collective along dimension d needs the sizes its checks accept
  // (modelDims).
  std::map<std::pair<unsigned, int64_t>, int64_t> dims;
  // Extents of dimensions 1, 2, ... of every tensor where dims says nothing (1 when empty): a
  // configuration with several tiles along them too (spreadExtents).
  std::vector<int64_t> spread;
  // The value of integer (and index) arguments: dimValue when unset; 0 in a configuration of
  // its own (a root or peer 0, an offset of nothing).
  std::optional<int64_t> intArgs;
  // Blocks that stand for a worker of more than the model follows (3: tiles t and t + 1, t + 2
  // on other blocks; 2: t and t + 3 too).
  int64_t standIns = 3;
  // Extents that differ between tensors (skewExtents): 1 grows later tensor arguments, -1
  // earlier ones, 0 leaves every tensor its default.
  int skew = 0;
  // The trip of every host loop a launch of one (pk.trips) models: 0 the first, 1 the second.
  int trip = 0;
};

// Extents for the dimensions after the first that give every tile loop a partial third tile
// along each of its dimensions (2 x the largest step at that position + 1), or nothing when no
// loop steps over more than one dimension.
std::vector<int64_t> spreadExtents(KernelOp kernel);

// The kernel's `pk.model_dims` entries ([small, large, dim] per collective along a dimension
// ([small, large, dim, extent] where the small side's extent is not config.dimValue)
// other than the first, written by pk-lower-collectives) as extents for `config`: a few rows
// before `dim`, config.dimValue elements along it on the small side and world times that on the
// large side, so the modelled launch passes the kernel's shape checks and stays small.
void modelDims(KernelOp kernel, Config &config);

// The extent `config` gives kernel argument `arg` along dimension `d`.
int64_t modelledExtent(const Config &config, unsigned arg, int64_t d);

// Gives each tensor argument its own extents where modelDims chose none: the default plus a
// step and one per tensor argument before it (config.skew 1) or after it (-1), so races that
// need two tensors' shapes to differ (a gathered buffer larger than its source, a consumer
// tiled over another tensor's shape) meet in the model. A launch check that ties the shapes
// makes the configuration one no launch runs.
void skewExtents(KernelOp kernel, Config &config);

// A region of one rank's copy of a kernel argument.
struct Access {
  unsigned tensor = 0;   // kernel argument number
  int memRank = 0;       // whose copy is accessed
  bool write = false;
  bool add = false;      // element-wise atomic add: adds commute with each other
  // Rows moved by index (store_rows), marked as adds since they commute: 1 stores, 2 adds them.
  // A scatter into a 2-D tensor writes columns [colLo, colHi) of its rows (padding columns
  // included); where its index tile was loaded from a tensor, rowsFrom names it and rowsLo /
  // rowsHi the load's box: two scatters whose index tiles share elements write the same rows.
  // Rows numbered from the tile's origin (cast<i32>(row_index(m)) + s) are rowsFrom ==
  // kNumberedRows, rowsLo / rowsHi the first row (the one surely moved).
  static constexpr int kNumberedRows = 1 << 30;
  int rows = 0;
  int64_t colLo = 0, colHi = 0;
  int rowsFrom = -1;
  llvm::SmallVector<int64_t, 2> rowsLo, rowsHi;
  bool tma = false;      // goes through the async (TMA) proxy
  llvm::SmallVector<int64_t, 2> lo, hi;  // half-open box per dimension
  // A tile store: how many leading rows of the tile came from inside the tensor it was loaded
  // from (-1: all, or not known). Only explains a race; the store writes the padding rows too.
  int64_t validRows = -1;
  // The tile of the block's dealt (outermost) tile loop that made the access (-1: none). Tiles
  // with different numbers may run on different blocks at some grid size, whatever the model's.
  int64_t tile = -1;
};

enum class EventKind { Signal, Wait, Access, BulkWait, ProxyFence };

struct Event {
  EventKind kind;
  Operation *op;
  int peer = -1;          // Signal: the rank whose flag grows
  int64_t slot = 0;       // Signal / Wait: flag slot as written in the IR
  int64_t shift = 0;      // Signal / Wait: how far pkc moved a spec flag's slot (pk.spec_shift)
  int64_t blockKey = -1;  // Signal / Wait: block index for <block> flags, -1 for <grid>
  int64_t count = 0;      // Wait: signals expected per launch
  bool equal = false;     // Wait: compares with ==
  int flag = -1;          // Signal / Wait: the flag's number (numberFlags)
  Access access;          // Access
};

// One block of one worker on one rank, running its events in program order.
struct Process {
  int rank = 0;
  int block = 0;  // global block index across the kernel's workers
  std::vector<Event> events;  // out of line: a kernel may have thousands of blocks
};

// Interprets `kernel` for `config`. On IR it cannot evaluate it returns false and sets
// `where` and `why`; the kernel is then not verified. An integer read from memory is a value the
// model does not know: ops that compute from it stay unknown, and the first op that needs one
// (a bound, a peer, an index, a branch) fails with a `why` that starts with kFromMemory.
inline constexpr const char *kFromMemory = "a value read from memory";
// A configuration whose sizes fail one of the kernel's launch checks (pk.check): no launch runs
// it, so the checker skips it; buildProcesses fails with a `why` that starts with this.
inline constexpr const char *kRefusedAtLaunch = "refused at launch";
bool buildProcesses(KernelOp kernel, const Config &config,
                    llvm::SmallVectorImpl<Process> &processes, Operation *&where,
                    std::string &why);

// Numbers the flags that signals and waits use densely from 0 (a flag is a slot of the
// rank that holds it, and of one block for <block> flags), so the checks index arrays
// rather than hash keys per event. Returns how many flags there are.
int numberFlags(llvm::MutableArrayRef<Process> processes);

// How many tiles apart a run-time flag slot that follows a tile loop's index may repeat, 0 for
// kernels with no such slot: a constant modulus c (`prim::flag(1 + (i / 256) % 4)`), or every
// slot a launch can have (kMaxModelledSlots) where the repeat is not a constant `%` (`t - t / 4
// * 4`, `% (world_size() + 3)`). The checker then runs one block with more tiles than that, so
// a wait that passes on another tile's signal shows.
int64_t slotRepeatTiles(KernelOp kernel);

// The largest tile step of the kernel's loops (used to pick sizes with partial tiles); the
// element-run loops of collectives count only in kernels with no other tile loop.
int64_t largestStep(KernelOp kernel);

} // namespace mlir::pk::protocol

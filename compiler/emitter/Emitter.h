// The CUDA emitter's state and its pattern table; patterns live in one file per op family.
#pragma once

#include "pk/Dialect/Pk.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace mlir::pk::cuda {

class Emitter;
using Pattern = std::function<LogicalResult(Emitter &, Operation *)>;
using PatternTable = llvm::StringMap<Pattern>;

class Emitter {
public:
  Emitter(llvm::raw_ostream &os, const PatternTable &patterns) : os(os), patterns(patterns) {}

  /// A new line at the current indentation.
  llvm::raw_ostream &line();
  void indent() { depth += 2; }
  void dedent() { depth -= 2; }

  /// The C++ name of a value; values get names when their defining op is emitted.
  std::string name(Value v);
  std::string bind(Value v, StringRef prefix);
  void bindTo(Value v, StringRef expr) { names[v] = expr.str(); }
  /// Every value's name, to emit one region several times over (batched tile loops).
  using Names = llvm::DenseMap<Value, std::string>;
  Names savedNames() const { return names; }
  void restoreNames(const Names &saved) { names = saved; }
  /// A fresh, deterministic C++ identifier.
  std::string fresh(StringRef prefix) { return (prefix + Twine(counter++)).str(); }

  LogicalResult emitOp(Operation *op);
  LogicalResult emitBlock(Block &block);
  /// Marks an op as emitted by another op's pattern (fusions), so it is skipped.
  void markEmitted(Operation *op) { emitted.insert(op); }

  /// Per-kernel facts patterns share.
  int threads = 512;
  int blocks = 0;
  int blocksPerSm = 1;  // blocks resident per SM the grid is sized for
  int checks = 0;  // launch-time argument checks numbered so far
  int64_t partialsHalf = 0;  // floats per half of pk_partials (block-wide row reductions)
  /// Loads of the loop being emitted that read their tile from the prefetch ring: the slot,
  /// and whether the copy was made (a bool expression; empty: test the origin again).
  struct RingSlot {
    std::string slot, made;
  };
  llvm::DenseMap<Operation *, RingSlot> prefetched;
  // Row vectors (pk::tile::RowValues) declared for a tile, by the block that declares them and
  // the register tile whose rows they hold: later users in that block reuse the declaration.
  std::map<std::tuple<void *, Block *, std::string>, std::string> rowVectors;
  // Column loads a loop's trip makes at its top (rowLoadsOfTrip), with the tile whose rows
  // they hold: the RowValues that hold them.
  std::map<std::pair<Operation *, std::string>, std::string> tripRows;
  // Row reductions kept in registers (pk/tile/row_stats.cuh): the RowValues they are declared
  // as, and the tile whose rows it holds; columns computed from them are never declared but
  // rebuilt where they are used (lazyColumns: the tile whose rows they follow).
  struct RowStats {
    std::string name;
    TileType layout;
  };
  std::map<Operation *, RowStats> rowStats;
  std::map<void *, TileType> lazyColumns;
  // Integer scalars that int tiles are divided by (pk::tile::Divisor, declared beside them).
  llvm::DenseMap<Value, std::string> divisors;
  llvm::DenseMap<Operation *, int> checkIds;  // pk.check -> its `// pk-check <id>`
  /// Loop-carried accumulators kept in mma fragments (pk::tile::mma_carry): the mma that
  /// updates one each trip, and the carry object's name.
  llvm::DenseMap<Operation *, std::string> fragmentAccumulators;
  /// The launch count waits multiply (`flag >= epoch * count`): ctx.epoch, or inside a worker
  /// with a pk.comm.push_small the launches that took its direct path (set by that pattern).
  std::string epoch = "ctx.epoch";
  llvm::raw_ostream &os;

private:
  const PatternTable &patterns;
  llvm::DenseMap<Value, std::string> names;
  llvm::DenseSet<Operation *> emitted;
  int depth = 0;
  int counter = 0;
};

/// The C++ type of a pk element type (pk::bf16, float, ...), or "" if unsupported.
std::string elementTypeName(Type type);
/// The C++ type of a kernel argument, or "" if unsupported.
std::string argumentTypeName(Type type);

/// A CUDA float expression of `value` rounded to float: a literal with 9 significant digits
/// (it round-trips), always with a point or an exponent so that `2` prints as `2.0f`, never
/// `2f`; infinities and NaN as bit patterns (CUDA has no literal for them).
std::string floatLiteral(double value);

/// The fp32 C++ expression of map `kind` applied to the expressions `x` (and `y`). `fast`: the
/// SFU's tanh and fast division where the result is rounded to bf16 / f16 anyway (GEMM
/// epilogues; needs pk/templates/gemm_tile.cuh).
std::string mapExpression(MapKind kind, StringRef x, StringRef y = "", bool fast = false);

/// The lambda of a map kind for the tile library's map (fp32 values for float tiles, the
/// operands' own type for integer ones).
std::string mapLambda(MapKind kind, Type operand);
/// Declares a pk::tile::Divisor for `scalar` (pk/tile/divisor.cuh) where it is defined, when an
/// int tile map divides by a splat of it; maps then divide by multiplying (TilePatterns.cpp).
void declareDivisor(Emitter &e, Value scalar);
/// `d.div(x)` or `d.rem(x)` when `map` divides int values by a scalar with a declared Divisor,
/// else empty.
std::string divisorExpression(Emitter &e, Operation *map, const std::string &x);
/// A local pointer to this rank's copy of a tensor argument.
std::string dataOf(Emitter &e, Value tensor);
/// A rows x 1 vector `v` that `user` reads as row indices or broadcasts against the register
/// tile type `full`, as pk::tile::RowValues every thread computes for its own rows of `full`
/// (RowVectors.cpp): the declared name, or empty when `v` is not made of ops it rebuilds.
/// `reciprocal` takes 1 / element.
std::string rowVector(Emitter &e, Operation *user, Value v, TileType full, bool reciprocal = false);
/// The lines that open each trip of scf.for `loop` (its induction variable named): the column
/// loads in its body that row vectors read, made into registers (RowVectors.cpp). Call
/// forgetRowLoads after the loop.
std::vector<std::string> rowLoadsOfTrip(Emitter &e, Operation *loop);
/// A row reduction kept in registers (pk/tile/row_stats.cuh) when its rows lie in warps and
/// every use of it, through column maps, selects and casts, is a broadcast over tiles of its
/// rows or a store: declares it and returns its name (empty: the reduction is not kept).
std::string rowStatsOf(Emitter &e, Operation *reduction);
/// The tile whose rows a column computed from row statistics in registers follows, if it is one.
std::optional<TileType> rowStatsLayout(Emitter &e, Value column);
void forgetRowLoads(Emitter &e, Operation *loop);

/// The general tile path's register tile type for `t` in blocks of `threads`.
// `tmpl`: the tile library template, rt (fp32 registers) or pt (held packed, pk/tile/packed.cuh).
std::string tileTypeName(TileType t, int threads, StringRef tmpl = "rt");
/// Issues `load`'s copy into the prefetch ring slot at `slot` (a `T*` expression) for the tile
/// origins bound now (pk/tile/prefetch.cuh), only if `when` (a condition that may read the
/// origin `o`) holds when one is given; with `fits` (an unsigned variable), whether the copy was
/// made goes to its bit `bit` (an expression).
void emitPrefetch(Emitter &e, TileLoadOp load, StringRef slot, StringRef when = "",
                  StringRef fits = "", StringRef bit = "");
/// Numbers the kernel's pk.check ops and writes a `// pk-host-check` line (into e.os) for each
/// one the host can evaluate before a launch (HostChecks.cpp).
void emitHostChecks(Emitter &e, KernelOp kernel);

void addStructurePatterns(PatternTable &table);
void addArithPatterns(PatternTable &table);
void addSyncPatterns(PatternTable &table);
void addCommPatterns(PatternTable &table);
void addTilePatterns(PatternTable &table);
/// Overrides pk.kernel for kernels lowered to a GEMM template; call after the others.
void addGemmPatterns(PatternTable &table);
/// Overrides pk.kernel for kernels lowered to the attention template; call after the others.
void addAttentionPatterns(PatternTable &table);

} // namespace mlir::pk::cuda

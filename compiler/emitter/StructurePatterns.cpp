// Emission patterns for structure ops: kernels, workers, tile loops, rank and sizes.
#include "Emitter.h"
#include "pk/Passes/TileShared.h"
#include "llvm/ADT/StringExtras.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>
#include <map>

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

namespace {

int64_t countFlagSlots(KernelOp kernel) {
  int64_t slots = 0;
  kernel.walk([&](FlagOp f) { slots = std::max<int64_t>(slots, int64_t(f.getSlot()) + 1); });
  // The one-round path owns a run of slots from its `lanes` flag on.
  kernel.walk([&](PushSmallOp p) {
    if (auto lanes = p.getLanes().getDefiningOp<FlagOp>())
      slots = std::max<int64_t>(slots, int64_t(lanes.getSlot()) + pushSmallSlotUnits(p));
    if (auto count = p.getCount().getDefiningOp<FlagOp>())
      slots = std::max<int64_t>(slots, int64_t(count.getSlot()) + 1);
  });
  return slots;
}

// Whether `count` (a wait's) may differ between launches of the kernel with other argument sizes
// or integer arguments: anything in its slice but constants, the rank, the world size and the
// grid does (a loop variable or a value read from memory too, conservatively). A wait's target
// is epoch x count, right only while every launch counts the same (user_specs12's
// halo_exchange_prim waited for 48 of 28 signals after a launch at other sizes).
bool countFollowsSizes(Value count, llvm::SmallPtrSetImpl<Operation *> &seen) {
  Operation *def = count.getDefiningOp();
  if (!def) return true;  // a kernel argument or a loop variable
  if (!seen.insert(def).second) return false;
  if (isa<RankOp, WorldSizeOp, GridBlocksOp>(def) || def->hasTrait<OpTrait::ConstantLike>())
    return false;
  if (isa<DimOp>(def) || def->getNumRegions() || !isPure(def)) return true;
  return llvm::any_of(def->getOperands(), [&](Value in) { return countFollowsSizes(in, seen); });
}

// Also a flag slot computed at run time (a flag per tile): which slots a launch signals then
// follows the sizes, and a slot another size left out would fall behind in launch numbers.
bool waitsFollowSizes(KernelOp kernel) {
  llvm::SmallPtrSet<Operation *, 16> seen;
  bool follows = false;
  kernel.walk([&](WaitOp w) { follows |= countFollowsSizes(w.getCount(), seen); });
  kernel.walk([&](FlagOp f) {
    if (Value offset = f.getOffset()) follows |= countFollowsSizes(offset, seen);
  });
  return follows;
}

// A kernel pk-split-launches made several launches: no code of its own, only the line that
// names its parts in order, with its arguments (every part takes them all).
// A host loop of launches is `loop=<first>:<count>:<lb>;<ub>;<step>`: parts first..first+count-1
// run for each trip, given the induction variable as a trailing argument. Host loops nest: an
// inner loop's parts lie inside its outer loop's, its field follows the outer one's, and its
// parts take the outer trip's variable, then the inner one's.
LogicalResult emitSequence(Emitter &e, KernelOp kernel, ArrayAttr launches) {
  std::string parts;
  std::vector<std::string> loops;
  int n = 0;
  std::function<void(ArrayAttr)> add = [&](ArrayAttr entries) {
    for (Attribute entry : entries) {
      auto loop = dyn_cast<DictionaryAttr>(entry);
      if (!loop) {
        parts += (n++ ? "," : "") + cast<FlatSymbolRefAttr>(entry).getValue().str();
        continue;
      }
      const int first = n;
      const size_t at = loops.size();
      loops.emplace_back();
      add(loop.getAs<ArrayAttr>("parts"));
      loops[at] = " loop=" + std::to_string(first) + ":" + std::to_string(n - first) + ":" +
                  loop.getAs<StringAttr>("lb").str() + ";" + loop.getAs<StringAttr>("ub").str() +
                  ";" + loop.getAs<StringAttr>("step").str();
    }
  };
  add(launches);
  e.os << "\n// pk-sequence " << kernel.getSymName() << " parts=" << parts;
  for (const std::string &l : loops) e.os << l;
  e.os << " args=";
  for (auto [i, arg] : llvm::enumerate(kernel.getBody().front().getArguments()))
    e.os << (i ? "," : "") << arg.getType();
  e.os << "\n";
  return success();
}

LogicalResult emitKernel(Emitter &e, Operation *op) {
  auto kernel = cast<KernelOp>(op);
  auto level = kernel->getAttrOfType<StringAttr>("pk.level");
  if (!level || level.getValue() != "device")
    return kernel.emitError("kernel '") << kernel.getSymName()
           << "' is still at the spec level; run the lowering passes before emitting CUDA";
  if (auto launches = kernel->getAttrOfType<ArrayAttr>("pk.launches"))
    return emitSequence(e, kernel, launches);
  // Every worker runs in all blocks of the grid, one after another (communicator-only
  // kernels); the grid is fixed per kernel so per-block flags pair up across launches.
  int64_t blocks = 0;
  for (auto worker : kernel.getBody().getOps<WorkerOp>()) {
    if (worker.getRole() != Role::communicator)
      return worker.emitError("no CUDA emission pattern for worker role '")
             << stringifyRole(worker.getRole()) << "' yet";
    blocks = std::max<int64_t>(blocks, worker.getBlocks());
  }
  e.blocks = int(blocks > 0 ? blocks : kGeneralPathBlocks);
  if (auto threads = kernel->getAttrOfType<IntegerAttr>("pk.threads"))  // pk-batch-tile-loads
    e.threads = int(threads.getInt());
  e.blocksPerSm = 1;
  if (auto perSm = kernel->getAttrOfType<IntegerAttr>("pk.blocks_per_sm")) {
    e.blocksPerSm = int(perSm.getInt());
    e.blocks *= e.blocksPerSm;
  }
  // Each flag slot takes one word per block of the kernel's flag region (2048 words,
  // pk/runtime/context.h's kKernelFlagRegion; the next kernel's region follows it): a kernel
  // with many slots (phases, collectives, the spec's own flags) runs on fewer blocks rather
  // than write into another kernel's flags.
  const int64_t flagSlots = countFlagSlots(kernel);
  constexpr int64_t kFlagRegionWords = 2048;
  std::string fewerBlocks;
  if (flagSlots * e.blocks > kFlagRegionWords) {
    const int64_t fit = kFlagRegionWords / flagSlots;
    if (fit < 1)
      return kernel.emitError("the kernel uses ")
             << flagSlots << " flag slots, more than a kernel's " << kFlagRegionWords << " flag words hold";
    fewerBlocks = "  // " + std::to_string(flagSlots) + " flag slots x " + std::to_string(fit) +
                  " blocks fill the kernel's 2048 flag words (it would take " +
                  std::to_string(e.blocks) + " blocks)";
    e.blocks = int(fit);
  }
  std::string name = kernel.getSymName().str();
  e.os << "\nnamespace pk_" << name << " {\n";
  e.os << "constexpr int kThreads = " << e.threads << ";      // threads per block\n";
  e.os << "constexpr int kBlocks = " << e.blocks
       << ";       // fixed grid: block b pairs with block b of every peer" << fewerBlocks << "\n";
  e.os << "constexpr int kBlocksPerSm = " << e.blocksPerSm
       << ";  // resident blocks per SM the grid is sized for (pk::rank_grid)\n";
  e.os << "constexpr int kFlagSlots = " << flagSlots << ";     // flag slots per block\n";
  const int64_t ringBytes = kernelRingBytes(kernel);
  e.os << "constexpr unsigned kSharedBytes = " << ringBytes
       << ";  // dynamic shared memory a block takes (prefetch rings)\n";
  // Refers to each constant, so an nvcc build of a kernel no launcher uses stays free of
  // "declared but never referenced" warnings.
  e.os << "static_assert(kThreads > 0 && kBlocks > 0 && kBlocksPerSm > 0 && kFlagSlots >= 0 && kSharedBytes <= "
          "232448u, \"launch constants\");\n";
  e.os << "}  // namespace pk_" << name << "\n";
  e.os << "\n// pk-launch " << name << " threads=" << e.threads << " blocks=" << e.blocks
       << " flag_slots=" << flagSlots;
  if (e.blocksPerSm > 1) e.os << " blocks_per_sm=" << e.blocksPerSm;
  // Launches key the kernel's flag region and epoch by their sizes (pk/runtime/flag_key.h).
  if (waitsFollowSizes(kernel)) e.os << " flags_by_size=1";
  // The host-driven route the launchers take above a message size (pk/runtime/copy_engine.h).
  if (ringBytes > 0) e.os << " smem=" << ringBytes;
  if (auto route = kernel->getAttrOfType<StringAttr>("pk.copy_engine"))
    e.os << " copy_engine=" << route.getValue();
  e.os << " args=";
  Block &entry = kernel.getBody().front();
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    if (argumentTypeName(arg.getType()).empty())
      return kernel.emitError("no CUDA type for kernel argument #") << i << " of type "
             << arg.getType();
    e.os << (i ? "," : "") << arg.getType();
  }
  emitHostChecks(e, kernel);
  // The blocks per SM always: with 1024 threads and none given, ptxas held a kernel to 32
  // registers (aiming at two blocks an SM) and spilled; one block may take 64.
  e.os << "\nextern \"C\" __global__ void __launch_bounds__(" << e.threads << ", " << e.blocksPerSm
       << ") " << name
       << "(pk::LaunchContext ctx";
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    std::string argName = "arg" + std::to_string(i);
    e.os << ", " << argumentTypeName(arg.getType()) << " " << argName;
    e.bindTo(arg, argName);
  }
  e.os << ") {";
  e.indent();
  bool waits = false;
  kernel.walk([&](Operation *op) { waits |= isa<WaitOp, BarrierOp>(op); });
  if (waits) e.line() << "__shared__ int pk_abort;  // set when a bounded wait gave up";
  TileSharedUse shared = tileSharedUse(kernel, e.threads);
  if (shared.stage) {
    e.line() << "// Row reductions, broadcasts and mma pass tiles through these (pk/tile/rows.cuh).";
    // 16-byte aligned: gathers and integer broadcasts keep 8-byte values in it.
    // Row reductions kept in registers may leave them unused, which nvcc would warn about.
    e.line() << "__shared__ __align__(16) float pk_stage[pk::tile::kStageFloats]; pk::tile::declared(pk_stage);";
    if (shared.rows) e.line() << "__shared__ float pk_rows[pk::tile::kMaxRows]; pk::tile::declared(pk_rows);";
  }
  e.partialsHalf = shared.partials;
  if (shared.partials > 0) {
    e.line() << "// Block-wide row reductions alternate between the halves (pk/tile/rows.cuh).";
    e.line() << "__shared__ float pk_partials[2 * " << shared.partials << "];";
    e.line() << "int pk_parity = 0;";
  }
  if (ringBytes > 0) {
    e.line() << "// Tile loops copy their next tiles' loads ahead into this ring (pk/tile/prefetch.cuh).";
    e.line() << "extern __shared__ __align__(16) unsigned char pk_ring[];";
  }
  for (Value arg : entry.getArguments()) declareDivisor(e, arg);
  if (failed(e.emitBlock(entry))) return failure();
  e.dedent();
  e.line() << "}\n";
  return success();
}

LogicalResult emitWorker(Emitter &e, Operation *op) {
  auto worker = cast<WorkerOp>(op);
  e.line() << "{  // worker <" << stringifyRole(worker.getRole()) << ">";
  e.indent();
  if (failed(e.emitBlock(worker.getBody().front()))) return failure();
  e.epoch = "ctx.epoch";  // a push_small's direct-launch count ends with its worker
  e.dedent();
  e.line() << "}";
  return success();
}

// Declares a pk::tile::TileWalk named `walk` over the loop's tile counts, at tile `t`, that
// advances by `stride` tiles (pk/tile/walk.cuh). A count past 2^31 - 1 after the first dimension
// is reported as the launch's error and the kernel leaves (every thread alike: counts are uniform).
void declareWalk(Emitter &e, const std::string &walk, const std::vector<std::string> &counts,
                 const std::string &t, const std::string &stride) {
  if (counts.size() > 1)
    e.line() << "if (!pk::tile::walk_counts_fit(ctx, {" << llvm::join(counts, ", ") << "})) return;";
  e.line() << "pk::tile::TileWalk<" << counts.size() << "> " << walk << "(" << t << ", " << stride
           << ", {" << llvm::join(counts, ", ") << "});";
}

// Binds the loop's tile origins to the coordinates `walk` is at.
void bindTileOrigins(Emitter &e, TileForeachOp loop, const std::string &walk) {
  auto steps = loop.getSteps();
  for (size_t d = 0; d < steps.size(); ++d) {
    std::string ivName = e.bind(loop.getBody().front().getArgument(d), "i");
    e.line() << "const long long " << ivName << " = " << walk << ".at(" << d << ") * " << steps[d]
             << ";";
  }
}

// Ops of a batched body emitted ahead, for every tile of the batch: the hoisted loads
// (pk-batch-tile-loads) and the scalar arithmetic their origins need.
bool emittedAhead(Operation &op) {
  return op.hasAttr("pk.hoist") || isa<DimOp>(op) ||
         (op.getDialect() && op.getDialect()->getNamespace() == "arith");
}

// A loop with `pk.prefetch = S` (pk-batch-tile-loads) reads its marked loads through a ring of
// S stages in shared memory: each trip first copies the loads of the block's tile S - 1 trips
// ahead into the next stage (cp.async, each thread its own runs), then waits for its own copies
// of this trip's stage and computes from there. The loads of the first S - 1 trips start before
// the loop.
LogicalResult emitPrefetchedForeach(Emitter &e, TileForeachOp loop, int64_t stages,
                                    const std::vector<std::string> &counts, const std::string &total) {
  Block &body = loop.getBody().front();
  int64_t stageBytes = 0;
  SmallVector<TileLoadOp> loads = prefetchedLoads(loop, &stageBytes);
  SmallVector<Operation *> slice;
  originSlice(body, loads, slice);  // pk-batch-tile-loads checked that it is all scalar
  llvm::DenseMap<Operation *, std::string> reuse;  // a load's pk::tile::RingReuse
  // Whether each stage's copy of each load was made (its tile's runs fit: pk::tile::runs_fit),
  // one bit per stage and load, so the trip that reads it need not test the origin again.
  const std::string fits = e.fresh("pk_fits");
  const bool fitBits = stages * static_cast<int64_t>(loads.size()) <= 32;
  auto fitBit = [&](TileLoadOp load, StringRef stage) {
    int64_t j = llvm::find(loads, load) - loads.begin();
    return "(" + stage.str() + ") * " + std::to_string(loads.size()) + " + " + std::to_string(j);
  };
  auto slotOf = [&](TileLoadOp load, StringRef stage, bool readOnly) {
    int64_t offset = 0;
    for (TileLoadOp l : loads) {
      if (l == load) break;
      offset += prefetchSlotBytes(cast<TileType>(l.getType()));
    }
    auto tile = cast<TileType>(load.getType());
    return "reinterpret_cast<" + std::string(readOnly ? "const " : "") +
           elementTypeName(tile.getElementType()) + "*>(pk_ring + (" + stage.str() + ") * " +
           std::to_string(stageBytes) + " + " + std::to_string(offset) + ")";
  };
  // Copies the loads of tile number `tile`, which `walk` (an expression) is at, into ring stage
  // `stage`, if the block has that tile.
  auto ahead = [&](const std::string &tile, const std::string &walk,
                   const std::string &stage) -> LogicalResult {
    Emitter::Names saved = e.savedNames();
    e.line() << "if (" << tile << " < " << total << ") {";
    e.indent();
    std::string at = e.fresh("pk_walk");
    e.line() << "const auto " << at << " = " << walk << ";";
    bindTileOrigins(e, loop, at);
    for (Operation *op : slice)
      if (failed(e.emitOp(op))) return failure();
    std::map<std::string, std::string> moved;  // a RingReuse's verdict for this tile
    for (TileLoadOp load : loads) {
      auto it = reuse.find(load);
      if (it == reuse.end()) {
        emitPrefetch(e, load, slotOf(load, stage, false), "", fitBits ? fits : "", fitBit(load, stage));
        continue;
      }
      std::string &verdict = moved[it->second];
      if (verdict.empty()) {
        verdict = e.fresh("pk_moved");
        e.line() << "const bool " << verdict << " = " << it->second << ".moved({";
        for (auto [i, v] : llvm::enumerate(load.getIndices())) e.os << (i ? ", " : "") << e.name(v);
        e.os << "}, " << stage << ");";
      }
      emitPrefetch(e, load, slotOf(load, it->second + ".latest", false), verdict,
                   fitBits ? fits : "", fitBit(load, it->second + ".latest"));
    }
    e.dedent();
    e.line() << "}";
    e.line() << "pk::tile::prefetch_commit();";
    e.restoreNames(saved);
    return success();
  };
  std::string t = e.fresh("pk_tile"), stage = e.fresh("pk_slot"), walk = e.fresh("pk_walk");
  declareWalk(e, walk, counts, "blockIdx.x", "gridDim.x");
  // Loads whose origin stays put while the loop walks rows (pk-batch-tile-loads) are copied
  // only when it moved (pk::tile::RingReuse); loads at the same origin share one.
  for (TileLoadOp load : loads) {
    if (!load->hasAttr("pk.reuse")) continue;
    for (auto &[other, name] : reuse)
      if (llvm::equal(cast<TileLoadOp>(other).getIndices(), load.getIndices())) reuse[load] = name;
    if (reuse.count(load)) continue;
    reuse[load] = e.fresh("pk_reuse");
    e.line() << "pk::tile::RingReuse<" << load.getIndices().size() << ", " << stages << "> "
             << reuse[load] << ";  // tiles that stay put as the rows go by are copied when they move";
  }
  if (fitBits) e.line() << "unsigned " << fits << " = 0;  // bit stage * loads + load: its copy was made";
  for (int64_t k = 0; k + 1 < stages; ++k)
    if (failed(ahead("blockIdx.x + " + std::to_string(k) + "LL * gridDim.x",
                     walk + ".ahead(" + std::to_string(k) + ")", std::to_string(k))))
      return failure();
  e.line() << "for (long long " << t << " = blockIdx.x, " << stage << " = 0; " << t << " < "
           << total << "; " << t << " += gridDim.x, " << stage << " = " << stage << " + 1 == "
           << stages << " ? 0 : " << stage << " + 1, " << walk << ".advance()) {";
  e.indent();
  if (failed(ahead(t + " + " + std::to_string(stages - 1) + "LL * gridDim.x",
                   walk + ".ahead(" + std::to_string(stages - 1) + ")",
                   "(" + stage + " + " + std::to_string(stages - 1) + ") % " + std::to_string(stages))))
    return failure();
  e.line() << "pk::tile::prefetch_wait<" << stages - 1 << ">();  // this trip's stage is here";
  bindTileOrigins(e, loop, walk);
  for (TileLoadOp load : loads) {
    std::string at = reuse.count(load) ? reuse[load] + ".of(" + stage + ")" : stage;
    e.prefetched[load] = {slotOf(load, at, true),
                          fitBits ? "(" + fits + " >> (" + fitBit(load, at) + ")) & 1u" : ""};
  }
  LogicalResult emitted = e.emitBlock(body);
  e.prefetched.clear();
  if (failed(emitted)) return failure();
  e.dedent();
  e.line() << "}";
  e.line() << "pk::tile::prefetch_wait<0>();  // nothing of this loop's ring is left in flight";
  return success();
}

// Tiles are numbered row-major over the iteration space and dealt to blocks round-robin. A
// loop with `pk.batch = K` takes K of a block's tiles per trip: first the hoisted loads of all
// K, then the rest of the body tile by tile, so K tiles' loads are in flight at once.
LogicalResult emitTileForeach(Emitter &e, Operation *op) {
  auto loop = cast<TileForeachOp>(op);
  auto steps = loop.getSteps();
  size_t n = steps.size();
  std::vector<std::string> counts;
  for (size_t d = 0; d < n; ++d) {
    std::string c = e.fresh("pk_tiles");
    e.line() << "const long long " << c << " = (" << e.name(loop.getUpperBounds()[d]) << " + "
             << steps[d] - 1 << ") / " << steps[d] << ";";
    counts.push_back(c);
  }
  std::string total = "1LL";
  for (auto &c : counts) total += " * " + c;
  if (auto stages = loop->getAttrOfType<IntegerAttr>("pk.prefetch"))
    return emitPrefetchedForeach(e, loop, stages.getInt(), counts, total);
  auto batchAttr = loop->getAttrOfType<IntegerAttr>("pk.batch");
  int64_t batch = batchAttr ? batchAttr.getInt() : 1;
  std::string t = e.fresh("pk_tile");
  Block &body = loop.getBody().front();
  if (batch <= 1) {
    // A tile loop inside another one's body (directly or through a range loop) belongs to the
    // block that runs the outer tile, which walks all of its tiles in order (pk-batch-tile-loads
    // gives it no batch and no ring); dealing them to the blocks again would run tile (i, j)
    // only where i and j meet the same block.
    const bool nested = bool(loop->getParentOfType<TileForeachOp>());
    const std::string first = nested ? "0" : "blockIdx.x", stride = nested ? "1" : "gridDim.x";
    std::string walk = e.fresh("pk_walk");
    declareWalk(e, walk, counts, first, stride);
    const std::string next = nested ? "++" + t : t + " += " + stride;
    e.line() << "for (long long " << t << " = " << first << "; " << t << " < " << total << "; " << next
             << ", " << walk << ".advance()) {";
    e.indent();
    bindTileOrigins(e, loop, walk);
    if (failed(e.emitBlock(body))) return failure();
  } else {
    e.line() << "for (long long " << t << " = blockIdx.x; " << t << " < " << total << "; " << t
             << " += " << batch << "LL * gridDim.x) {";
    e.indent();
    std::vector<Emitter::Names> ahead;
    for (int64_t j = 0; j < batch; ++j) {
      // Past the block's last tile the loads re-read the loop's last tile (from L2); its
      // compute and stores are skipped below.
      std::string tj = e.fresh("pk_tile");
      e.line() << "const long long " << tj << " = min(" << t << " + " << j << "LL * gridDim.x, "
               << total << " - 1);";
      std::string walk = e.fresh("pk_walk");
      declareWalk(e, walk, counts, tj, "0");
      bindTileOrigins(e, loop, walk);
      for (Operation &inner : body)
        if (emittedAhead(inner) && failed(e.emitOp(&inner))) return failure();
      ahead.push_back(e.savedNames());
    }
    for (int64_t j = 0; j < batch; ++j) {
      e.restoreNames(ahead[j]);
      e.rowVectors.clear();  // the previous tile's are declared in its own scope, of its origins
      e.line() << "if (" << t << " + " << j << "LL * gridDim.x < " << total << ") {";
      e.indent();
      for (Operation &inner : body)
        if (!emittedAhead(inner) && failed(e.emitOp(&inner))) return failure();
      e.dedent();
      e.line() << "}";
    }
  }
  e.dedent();
  e.line() << "}";
  return success();
}

// The C++ type of a value a loop carries: an index, a float or integer scalar (a local the loop
// updates, `w = w * 0.5f`), or a register tile.
std::string carriedType(Emitter &e, Type t) {
  if (isa<IndexType>(t)) return "long long";
  if (t.isF32()) return "float";
  if (isa<IntegerType>(t)) return elementTypeName(t);  // i8, i32, i64 as tiles name them
  if (auto tile = dyn_cast<TileType>(t)) return tileTypeName(tile, e.threads);
  return "";
}

// The mma that is the only use of carried value i inside the loop, and whose product is the
// only use of its result, yielded back as value i: `acc = mma(a, b, acc)`, the accumulator of
// a K loop. Such an accumulator can stay in mma fragments for the whole loop.
TileMmaOp fragmentAccumulator(scf::ForOp loop, unsigned i) {
  Value arg = loop.getRegionIterArgs()[i];
  if (!arg.hasOneUse()) return {};
  auto mma = dyn_cast<TileMmaOp>(*arg.getUsers().begin());
  if (!mma || mma.getAcc() != arg || mma->getBlock() != loop.getBody() ||
      !mma.getResult().hasOneUse())
    return {};
  OpOperand &use = *mma.getResult().getUses().begin();
  if (use.getOwner() != loop.getBody()->getTerminator() || use.getOperandNumber() != i) return {};
  return mma;
}

// A sequential loop; the values it carries are variables assigned from the yield each trip
// (through temporaries, since one yielded value may read another carried one). An accumulator
// that only mma updates is a pk::tile::mma_carry instead, updated in place, and becomes a
// register tile after the loop.
LogicalResult emitFor(Emitter &e, Operation *op) {
  auto loop = cast<scf::ForOp>(op);
  std::vector<std::string> vars;
  std::vector<bool> fragments;
  for (auto [i, init, result] : llvm::enumerate(loop.getInitArgs(), loop.getResults())) {
    std::string type = carriedType(e, init.getType());
    if (type.empty())
      return op->emitError("no CUDA emission pattern for a loop carrying ") << init.getType();
    if (TileMmaOp mma = fragmentAccumulator(loop, unsigned(i))) {
      std::string v = e.fresh("acc_carry");
      e.line() << "pk::tile::mma_carry<" << (mma.getTransposeB() ? "true" : "false") << ", " << type
               << ", " << tileTypeName(mma.getA().getType(), e.threads) << ", "
               << tileTypeName(mma.getB().getType(), e.threads) << "> " << v << "(" << e.name(init)
               << ", pk_stage);";
      e.fragmentAccumulators[mma] = v;
      vars.push_back(v);
      fragments.push_back(true);
      continue;
    }
    std::string v = e.bind(result, "carried");
    e.line() << type << " " << v << " = " << e.name(init) << ";";
    vars.push_back(v);
    fragments.push_back(false);
  }
  for (auto [arg, v] : llvm::zip(loop.getRegionIterArgs(), vars)) e.bindTo(arg, v);
  std::string iv = e.bind(loop.getInductionVar(), "k");
  std::vector<std::string> opening = rowLoadsOfTrip(e, op);
  // A run-time step <= 0 would never end: the loop is skipped and the launch reports it
  // (pk/device/check.cuh). The step is a scalar, the same in every thread of a block.
  // Its trips advance by pk::range_next, which stops at the bound where k += step would wrap.
  std::string guard, advance = iv + " += " + e.name(loop.getStep());
  if (!getConstantIntValue(loop.getStep())) {
    guard = "if (pk::range_step_ok(ctx, " + e.name(loop.getStep()) + ")) ";
    advance = iv + " = pk::range_next(" + iv + ", " + e.name(loop.getStep()) + ", " +
           e.name(loop.getUpperBound()) + ")";
  }
  e.line() << guard << "for (long long " << iv << " = " << e.name(loop.getLowerBound()) << "; " << iv
           << " < " << e.name(loop.getUpperBound()) << "; " << advance << ") {";
  e.indent();
  for (const std::string &l : opening) e.line() << l;
  for (Operation &inner : loop.getBody()->without_terminator())
    if (failed(e.emitOp(&inner))) return failure();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  std::vector<std::string> next;
  for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
    if (fragments[i]) {  // updated in place by its mma
      next.push_back("");
      continue;
    }
    std::string n = e.fresh("next");
    e.line() << carriedType(e, v.getType()) << " " << n << " = " << e.name(v) << ";";
    next.push_back(n);
  }
  for (auto [v, n] : llvm::zip(vars, next))
    if (!n.empty()) e.line() << v << " = " << n << ";";
  e.dedent();
  e.line() << "}";
  for (auto [i, result] : llvm::enumerate(loop.getResults())) {
    if (!fragments[i]) continue;
    std::string v = e.bind(result, "acc");
    e.line() << carriedType(e, result.getType()) << " " << v << " = " << vars[i] << ".result(pk_stage);";
  }
  forgetRowLoads(e, op);
  return success();
}

// A uniform branch (every block and rank takes the same side: the condition depends only on
// sizes, rank and world), so flags inside pair up across ranks.
LogicalResult emitIf(Emitter &e, Operation *op) {
  auto branch = cast<scf::IfOp>(op);
  if (branch.getNumResults() != 0)
    return op->emitError("no CUDA emission pattern for scf.if with results");
  e.line() << "if (" << e.name(branch.getCondition()) << ") {";
  e.indent();
  if (failed(e.emitBlock(*branch.thenBlock()))) return failure();
  e.dedent();
  if (branch.elseBlock() && !branch.elseBlock()->without_terminator().empty()) {
    e.line() << "} else {";
    e.indent();
    if (failed(e.emitBlock(*branch.elseBlock()))) return failure();
    e.dedent();
  }
  e.line() << "}";
  return success();
}

// A failed argument check is reported once (block 0) and every block leaves before it
// signals anyone, so no rank waits on another.
LogicalResult emitCheck(Emitter &e, Operation *op) {
  auto check = cast<CheckOp>(op);
  auto numbered = e.checkIds.find(op);  // numbered with the kernel's pk-host-check lines
  int id = numbered != e.checkIds.end() ? numbered->second : e.checks++;
  e.line() << "// pk-check " << id << ": " << check.getMessage();
  e.line() << "if (!(" << e.name(check.getCondition()) << ")) {";
  e.indent();
  e.line() << "if (blockIdx.x == 0 && threadIdx.x == 0) pk::report_check_failure(ctx, " << id
           << ", " << e.name(check.getExpected()) << ", " << e.name(check.getActual()) << ");";
  e.line() << "return;";
  e.dedent();
  e.line() << "}";
  return success();
}

LogicalResult emitNothing(Emitter &, Operation *) { return success(); }

LogicalResult emitReturn(Emitter &e, Operation *) {
  e.line() << "return;";
  return success();
}

} // namespace

void mlir::pk::cuda::addStructurePatterns(PatternTable &table) {
  table["pk.kernel"] = emitKernel;
  table["pk.worker"] = emitWorker;
  table["pk.tile.foreach"] = emitTileForeach;
  table["pk.yield"] = emitNothing;
  table["pk.check"] = emitCheck;
  table["scf.if"] = emitIf;
  table["scf.for"] = emitFor;
  table["scf.yield"] = emitNothing;
  table["pk.return"] = emitReturn;
  table["pk.rank"] = [](Emitter &e, Operation *op) {
    e.line() << "const long long " << e.bind(op->getResult(0), "rank") << " = ctx.rank;";
    return success();
  };
  table["pk.world_size"] = [](Emitter &e, Operation *op) {
    e.line() << "const long long " << e.bind(op->getResult(0), "world") << " = ctx.world;";
    return success();
  };
  table["pk.grid_blocks"] = [](Emitter &e, Operation *op) {
    e.line() << "const long long " << e.bind(op->getResult(0), "blocks") << " = gridDim.x;";
    return success();
  };
  table["pk.dim"] = [](Emitter &e, Operation *op) {
    auto dim = cast<DimOp>(op);
    e.line() << "const long long " << e.bind(dim.getResult(), "n") << " = "
             << e.name(dim.getTensor()) << ".shape[" << dim.getDim() << "];";
    return success();
  };
  // A scalar read from a tensor (pk/tile/rt.cuh read_scalar: zero outside the tensor).
  table["pk.load_scalar"] = [](Emitter &e, Operation *op) {
    auto load = cast<LoadScalarOp>(op);
    const bool integer = isa<IndexType>(load.getResult().getType());
    e.line() << "const " << (integer ? "long long " : "float ") << e.bind(load.getResult(), "s")
             << " = pk::tile::read_scalar(" << e.name(load.getSource()) << ".data, "
             << e.name(load.getSource()) << ".shape";
    for (Value i : load.getIndices()) e.os << ", " << e.name(i);
    e.os << ");";
    return success();
  };
}

// Recognises a GEMM tile loop (with an all-gather ahead of it, a reduce-add of its tiles
// into their owners, or an all-reduce after it) and lowers the kernel to an instance of the
// Hopper GEMM / LCSC templates (templates/include/pk/templates), recording the job, the
// overlap scheme and the tile order as decisions.
#include "ProfileOption.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/EffectLedger.h"
#include "pk/Passes/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKLOWERGEMMPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

// The template's tile: 128 x 256 outputs, K steps of 64, bf16 operands, both K-major.
constexpr int64_t kBM = 128, kBN = 256, kBK = 64;

struct GemmLoop {
  TileForeachOp loop;
  TileLoadOp loadA, loadB;
  Operation *sink = nullptr;  // pk.tile.store or pk.coll.add_tile of the bf16 tile
};

bool isTile(Type t, int64_t rows, int64_t cols, bool bf16) {
  auto tile = dyn_cast<TileType>(t);
  if (!tile || tile.getShape().size() != 2) return false;
  return tile.getShape()[0] == rows && tile.getShape()[1] == cols &&
         (bf16 ? tile.getElementType().isBF16() : tile.getElementType().isF32());
}

// The same value, or equal constants.
bool sameIndex(Value x, Value y) {
  if (x == y) return true;
  std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  return cx && cy && *cx == *cy;
}

// Index of a kernel argument, or -1 when `v` is not one.
int argIndex(KernelOp kernel, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &kernel.getBody().front()) return -1;
  return int(arg.getArgNumber());
}

// Matches: foreach (m, n) step [128, 256] { acc = scf.for k step 64 (zeros) { a = load A[m, k];
// b = load B[n, k]; mma a, b, acc {transpose_b} }; store/add cast<bf16>(acc) }.
FailureOr<GemmLoop> matchGemmLoop(TileForeachOp loop) {
  GemmLoop g;
  g.loop = loop;
  if (loop.getSteps().size() != 2 || loop.getSteps()[0] != kBM || loop.getSteps()[1] != kBN)
    return loop.emitError("GEMM tile loop: steps must be [128, 256] (the Hopper template's tile)");
  Block &body = loop.getBody().front();
  Value m = body.getArgument(0), n = body.getArgument(1);
  scf::ForOp kloop;
  for (Operation &op : body)
    if (auto f = dyn_cast<scf::ForOp>(op)) {
      if (kloop) return loop.emitError("GEMM tile loop: more than one K loop");
      kloop = f;
    }
  if (!kloop || kloop.getNumRegionIterArgs() != 1 || !kloop.getInitArgs()[0].getDefiningOp<TileZerosOp>())
    return loop.emitError("GEMM tile loop: expected one scf.for over K carrying a zero-initialised accumulator");
  if (getConstantIntValue(kloop.getStep()) != kBK || getConstantIntValue(kloop.getLowerBound()) != 0)
    return kloop.emitError("GEMM K loop: must run from 0 in steps of 64");
  auto yield = cast<scf::YieldOp>(kloop.getBody()->getTerminator());
  auto mma = yield.getOperand(0).getDefiningOp<TileMmaOp>();
  if (!mma || mma.getAcc() != kloop.getRegionIterArgs()[0] || !mma.getTransposeB())
    return kloop.emitError("GEMM K loop: must yield pk.tile.mma {transpose_b} of its accumulator "
                           "(B is [N, K], K-major, as the template loads it)");
  g.loadA = mma.getA().getDefiningOp<TileLoadOp>();
  g.loadB = mma.getB().getDefiningOp<TileLoadOp>();
  Value k = kloop.getInductionVar();
  if (!g.loadA || !g.loadB || g.loadA.getIndices().size() != 2 || g.loadB.getIndices().size() != 2 ||
      g.loadA.getIndices()[0] != m || g.loadA.getIndices()[1] != k ||
      g.loadB.getIndices()[0] != n || g.loadB.getIndices()[1] != k)
    return mma.emitError("GEMM: operands must be pk.tile.load A[m, k] and B[n, k]");
  if (!isTile(g.loadA.getType(), kBM, kBK, true) || !isTile(g.loadB.getType(), kBN, kBK, true) ||
      !isTile(mma.getType(), kBM, kBN, false))
    return mma.emitError("GEMM: tiles must be A 128x64 bf16, B 256x64 bf16, accumulator 128x256 f32");
  if (!kloop.getResult(0).hasOneUse())
    return kloop.emitError("GEMM: the accumulator must only be cast to bf16");
  auto cast = dyn_cast<TileCastOp>(*kloop.getResult(0).getUsers().begin());
  if (!cast)
    return kloop.emitError("GEMM: the accumulator must be cast to one 128x256 bf16 tile");
  if (!isTile(cast.getType(), kBM, kBN, true))
    return cast.emitError("GEMM: the template's output is bf16; this cast makes ")
           << cast.getType();
  if (!cast.getResult().hasOneUse())
    return cast.emitError("GEMM: the bf16 tile must have one use (its store or reduce-add)");
  g.sink = *cast.getResult().getUsers().begin();
  if (auto st = dyn_cast<TileStoreOp>(g.sink)) {
    if (st.getIndices().size() != 2 || st.getIndices()[0] != m || st.getIndices()[1] != n)
      return st.emitError("GEMM: the tile must be stored at [m, n]");
  } else if (auto add = dyn_cast<AddTileOp>(g.sink)) {
    // Reduce-scatter by rows: the owner is m / rows_per_owner, the row inside it m % that.
    // Indices are non-negative, so signed and unsigned division agree (C++ specs give signed).
    Operation *owner = add.getPeer().getDefiningOp();
    Operation *row = add.getIndices()[0].getDefiningOp();
    if (!owner || !row || !isa<arith::DivUIOp, arith::DivSIOp>(owner) ||
        !isa<arith::RemUIOp, arith::RemSIOp>(row) || owner->getOperand(0) != m ||
        row->getOperand(0) != m || !sameIndex(owner->getOperand(1), row->getOperand(1)) ||
        add.getIndices()[1] != n)
      return add.emitError("GEMM + reduce-scatter: add the tile at [m % R, n] on peer m / R "
                           "(R: rows per owner)");
  } else {
    return g.sink->emitError("GEMM: the bf16 tile must be stored (pk.tile.store) or added "
                             "into its owner (pk.coll.add_tile)");
  }
  return g;
}

// Whether `v` is `pk.dim %tensor, d`.
bool isDimOf(Value v, Value tensor, int64_t d) {
  auto dim = v.getDefiningOp<DimOp>();
  return dim && dim.getTensor() == tensor && dim.getDimAttr().getInt() == d;
}

// Whether `v` is rows(A) / world_size: the rows each rank owns in the reduce-scatter template.
bool isRowsPerRank(Value v, Value a) {
  Operation *div = v.getDefiningOp();
  return div && isa<arith::DivUIOp, arith::DivSIOp>(div) && isDimOf(div->getOperand(0), a, 0) &&
         div->getOperand(1).getDefiningOp<WorldSizeOp>();
}

// The template computes the whole product: the loops must cover A's rows, B's rows and K.
LogicalResult checkBounds(GemmLoop &g) {
  Value a = g.loadA.getSource(), b = g.loadB.getSource();
  if (!isDimOf(g.loop.getUpperBounds()[0], a, 0) || !isDimOf(g.loop.getUpperBounds()[1], b, 0))
    return g.loop.emitError("GEMM tile loop: must cover the rows of A and the rows of B "
                            "(tiles(a.rows(), b.rows(), {128, 256})): the template computes the "
                            "whole product");
  auto kloop = g.loadA->getParentOfType<scf::ForOp>();
  if (!isDimOf(kloop.getUpperBound(), a, 1) && !isDimOf(kloop.getUpperBound(), b, 1))
    return kloop.emitError("GEMM K loop: must run to the columns of A (range(0, a.cols(), 64)): "
                           "the template reduces over all of K");
  return success();
}

bool before(Operation *x, Operation *y) { return x->getBlock() == y->getBlock() && x->isBeforeInBlock(y); }

struct LowerGemm : mlir::pk::impl::PkLowerGemmPassBase<LowerGemm> {
  using PkLowerGemmPassBase::PkLowerGemmPassBase;

  // The template replaces the kernel's whole body: every op with an effect must be one it
  // implements (`consumed`); anything else would vanish, so it is an error at that op.
  static LogicalResult accountForEffects(KernelOp kernel, GemmLoop &g,
                                         ArrayRef<Operation *> consumed, StringRef job) {
    bool ok = true;
    kernel.walk([&](Operation *op) {
      if (!hasSpecEffect(op) || llvm::is_contained(consumed, op)) return;
      auto diag = op->emitError("'") << op->getName() << "' cannot be part of a kernel whose "
                  "GEMM loop becomes the " << job << " template (the template replaces the "
                  "kernel's body and implements only the loop and its fused communication)";
      if (isa<ReduceScatterOp>(op))
        diag << "; to fuse a reduce-scatter of the product, add each tile into its owner: "
                "store_add(c.on(m / rows), tile, m % rows, n) with rows = a.rows() / world_size()";
      else if (isa<AllReduceOp>(op))
        diag << "; a fused all-reduce must take the tensor the loop stores, after the loop";
      else if (isa<AllGatherOp>(op))
        diag << "; a fused all-gather must come before the loop and produce the A operand it "
                "loads";
      else
        diag << "; put it in a separate kernel";
      diag.attachNote(g.loop.getLoc()) << "the GEMM loop";
      ok = false;
    });
    return success(ok);
  }

  LogicalResult lower(KernelOp kernel, TileForeachOp loop, const ::pk::MachineProfile &profile) {
    FailureOr<GemmLoop> g = matchGemmLoop(loop);
    if (failed(g) || failed(checkBounds(*g))) return failure();
    Value a = g->loadA.getSource(), b = g->loadB.getSource();
    auto store = dyn_cast<TileStoreOp>(g->sink);
    // Fusion candidates by data flow: an all-gather ahead of the loop that produces A, an
    // all-reduce after it whose input is what the loop stores.
    AllGatherOp gather;
    AllReduceOp reduce;
    for (Operation &op : kernel.getBody().front()) {
      if (auto ag = dyn_cast<AllGatherOp>(op); ag && ag.getOutput() == a && before(ag, loop))
        gather = ag;
      if (auto ar = dyn_cast<AllReduceOp>(op);
          ar && store && ar.getInput() == store.getDest() && before(loop, ar))
        reduce = ar;
    }
    if (b == a || (store && (store.getDest() == a || store.getDest() == b)))
      return g->sink->emitError("GEMM: the operands and the output must be distinct tensors "
                                "(the template reads A and B while it writes C)");
    if (gather && (gather.getInput() == b || gather.getOutput() == b))
      return gather.emitError("AG + GEMM: the all-gather must feed only the A operand");
    MLIRContext *ctx = kernel.getContext();
    SmallVector<NamedAttribute> facts;
    auto fact = [&](StringRef k, Attribute v) { facts.push_back(NamedAttribute(StringAttr::get(ctx, k), v)); };
    auto index = [&](StringRef k, Value v) -> LogicalResult {
      int i = argIndex(kernel, v);
      if (i < 0) return kernel.emitError("GEMM: '") << k << "' must be a kernel argument";
      fact(k, IntegerAttr::get(IntegerType::get(ctx, 64), i));
      return success();
    };
    if (failed(index("b", b))) return failure();
    std::string job;
    SmallVector<Operation *> consumed{g->sink};
    if (gather) {
      if (!store) return g->sink->emitError("AG + GEMM: store the tile locally");
      if (!isScratchArgument(a))
        return gather.emitError("AG + GEMM: the fused template leaves this rank's own rows of "
                                "the all-gather's output unwritten (the GEMM reads them from the "
                                "input); declare the output Scratch<T, Rank> (`{pk.scratch}`) "
                                "to allow that, or gather in a separate kernel");
      job = "ag_gemm";
      if (failed(index("a", gather.getInput())) || failed(index("landing", a)) ||
          failed(index("c", store.getDest())))
        return failure();
      int sms = ::pk::smsFor90Percent(profile, ::pk::Mechanism::tma, 2ll << 20);
      dropDecisions(gather);
      recordDecision(gather, "rule 2 (overlap)",
                     "inter_sm, fused with the GEMM: the shard is gathered ahead of the tile loop at "
                     "a coarser granularity (128-row blocks of K columns) than the 128x64 tiles the "
                     "loop loads, so communicator blocks push each row block into every peer with "
                     "TMA bulk copies and one flag per row block; compute blocks do the local shard "
                     "first and wait per row block; this rank's own rows of the scratch output are "
                     "not written. Communicator SMs: chosen at launch from the "
                     "shapes, 1 to 16, by a cost model of compute waves against the gather's time "
                     "at the profile's TMA bandwidth for that many SMs (the TMA path needs " +
                         Twine(sms) + " SMs for 90% of its bandwidth on 2 MiB row blocks)");
      consumed.push_back(gather);
    } else if (auto add = dyn_cast<AddTileOp>(g->sink)) {
      if (add.getOverlap() != Overlap::intra_sm)
        return add.emitError("GEMM + reduce-scatter: only the intra-SM lowering has a template "
                             "(overlap is '") << stringifyOverlap(add.getOverlap()) << "'); run pk-select-overlap first";
      if (add.getTransport() != Transport::tma)
        return add.emitError("GEMM + reduce-scatter: the template reduce-adds by TMA; transport is '")
               << stringifyTransport(add.getTransport()) << "'";
      Value rows = add.getPeer().getDefiningOp()->getOperand(1);
      if (!isRowsPerRank(rows, a))
        return add.emitError("GEMM + reduce-scatter: each rank must own a.rows() / world_size() "
                             "rows (the template's split); add the tile at [m % rows, n] on peer "
                             "m / rows with rows = a.rows() / world_size()");
      job = "gemm_rs";
      if (failed(index("a", a)) || failed(index("c", add.getDest()))) return failure();
      recordDecision(add, "rule 2 (overlap)",
                     "gemm_rs template: the storer warp reduce-adds each finished 64x64 bf16 box into "
                     "its owner by cp.reduce.async.bulk.tensor after an mbarrier hand-off from the "
                     "consumers; tiles alternate between owners starting at rank + 1, so ranks start "
                     "on different owners; one ready and one done signal per block (one-way)");
    } else if (reduce) {
      if (reduce.getKind() != ReduceKind::sum)
        return reduce.emitError("GEMM + all-reduce: the fused template reduce-adds every tile "
                                "into the ranks' outputs, which implements <sum> only, not <")
               << stringifyReduceKind(reduce.getKind())
               << ">; all-reduce the product in a separate kernel";
      if (!isScratchArgument(store.getDest()))
        return store.emitError("GEMM + all-reduce: the fused template never writes the product "
                               "that feeds the all-reduce, but this store's tensor is a plain "
                               "argument the caller may read; declare it Scratch<T, Rank> "
                               "(`{pk.scratch}`) to allow that, or all-reduce in a separate "
                               "kernel");
      job = "gemm_ar";
      if (failed(index("a", a)) || failed(index("c", reduce.getOutput()))) return failure();
      dropDecisions(reduce);
      recordDecision(reduce, "rule 2 (overlap)",
                     "intra_sm, fused with the GEMM: the all-reduce's input is produced tile by tile "
                     "by the loop, so the storer reduce-adds each finished box into every rank's "
                     "output by TMA (one-shot push; the scratch product is never written) and "
                     "ranks start their walks at different tiles");
      consumed.push_back(reduce);
    } else {
      job = "gemm";
      if (failed(index("a", a)) || failed(index("c", store.getDest()))) return failure();
    }
    if (failed(accountForEffects(kernel, *g, consumed, job))) return failure();
    fact("job", StringAttr::get(ctx, job));
    recordDecision(loop, "template",
                   job + ": persistent LCSC kernel, 128x256x64 tiles, 4-stage TMA ring, 2 consumer "
                   "warpgroups (wgmma m64n256k16, fp32 accumulators, 232 registers) and a loader/"
                   "storer warpgroup (40 registers), L2 groups of 8 row tiles");
    for (Operation *op : consumed) markLowered(op);
    // The template replaces the spec's body: erase it (users before producers).
    Block &entry = kernel.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : entry.without_terminator()) ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      op->dropAllUses();
      op->erase();
    }
    kernel->setAttr("pk.gemm", DictionaryAttr::get(ctx, facts));
    kernel->setAttr("pk.level", StringAttr::get(ctx, "device"));
    return success();
  }

  // A kernel whose only effects are this rank's tile stores can take the general tile path
  // when its loop does not fit the template; one that communicates cannot yet (its phases
  // would need ordering), so there a mismatch stays an error.
  static bool computesLocally(KernelOp kernel) {
    bool local = true;
    kernel.walk([&](Operation *op) {
      if (hasSpecEffect(op) && !isa<TileStoreOp>(op)) local = false;
    });
    return local;
  }

  void runOnOperation() override {
    auto profile = loadProfileOption(getOperation(), profilePath);
    if (!profile) return signalPassFailure();
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) {
      TileForeachOp gemmLoop;
      kernel.walk([&](TileForeachOp loop) {
        bool hasMma = false;
        loop.walk([&](TileMmaOp) { hasMma = true; });
        if (hasMma) gemmLoop = loop;
      });
      if (!gemmLoop) return;
      if (!computesLocally(kernel)) {
        failed |= mlir::failed(lower(kernel, gemmLoop, *profile));
        return;
      }
      // Try the template quietly; on a mismatch keep the loop for the general path and say why.
      std::string why;
      LogicalResult lowered = failure();
      {
        ScopedDiagnosticHandler capture(kernel.getContext(), [&](Diagnostic &d) {
          if (why.empty()) why = d.str();
          return success();
        });
        lowered = lower(kernel, gemmLoop, *profile);
      }
      if (mlir::failed(lowered))
        recordDecision(gemmLoop, "template",
                       "general tile path (register tiles, pk/tile/mma.cuh): the loop does not "
                       "take the Hopper GEMM template: " + why);
    });
    if (failed) signalPassFailure();
  }
};

} // namespace

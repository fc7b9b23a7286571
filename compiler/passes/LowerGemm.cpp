// Recognises a GEMM tile loop (with an all-gather ahead of it, a reduce-add of its tiles
// into their owners, or an all-reduce after it) and lowers the kernel to an instance of the
// Hopper GEMM / LCSC templates (templates/include/pk/templates), recording the job, the
// overlap scheme and the tile order as decisions.
#include "ProfileOption.h"
#include "pk/Passes/Decisions.h"
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
  if (!cast || !isTile(cast.getType(), kBM, kBN, true) || !cast.getResult().hasOneUse())
    return kloop.emitError("GEMM: the accumulator must be cast to one 128x256 bf16 tile");
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
        row->getOperand(0) != m || owner->getOperand(1) != row->getOperand(1) ||
        add.getIndices()[1] != n)
      return add.emitError("GEMM + reduce-scatter: add the tile at [m % R, n] on peer m / R "
                           "(R: rows per owner)");
  } else {
    return g.sink->emitError("GEMM: the bf16 tile must be stored (pk.tile.store) or added "
                             "into its owner (pk.coll.add_tile)");
  }
  return g;
}

struct LowerGemm : mlir::pk::impl::PkLowerGemmPassBase<LowerGemm> {
  using PkLowerGemmPassBase::PkLowerGemmPassBase;

  LogicalResult lower(KernelOp kernel, TileForeachOp loop, const ::pk::MachineProfile &profile) {
    FailureOr<GemmLoop> g = matchGemmLoop(loop);
    if (failed(g)) return failure();
    AllGatherOp gather;
    AllReduceOp reduce;
    for (Operation &op : kernel.getBody().front()) {
      if (auto ag = dyn_cast<AllGatherOp>(op)) gather = ag;
      if (auto ar = dyn_cast<AllReduceOp>(op)) reduce = ar;
    }
    MLIRContext *ctx = kernel.getContext();
    SmallVector<NamedAttribute> facts;
    auto fact = [&](StringRef k, Attribute v) { facts.push_back(NamedAttribute(StringAttr::get(ctx, k), v)); };
    auto index = [&](StringRef k, Value v) -> LogicalResult {
      int i = argIndex(kernel, v);
      if (i < 0) return kernel.emitError("GEMM: '") << k << "' must be a kernel argument";
      fact(k, IntegerAttr::get(IntegerType::get(ctx, 64), i));
      return success();
    };
    Value a = g->loadA.getSource();
    if (failed(index("b", g->loadB.getSource()))) return failure();
    std::string job;
    if (gather && gather.getOutput() == a) {
      if (!isa<TileStoreOp>(g->sink)) return g->sink->emitError("AG + GEMM: store the tile locally");
      job = "ag_gemm";
      if (failed(index("a", gather.getInput())) || failed(index("landing", a)) ||
          failed(index("c", cast<TileStoreOp>(g->sink).getDest())))
        return failure();
      int sms = ::pk::smsFor90Percent(profile, ::pk::Mechanism::tma, 2ll << 20);
      recordDecision(gather, "rule 2 (overlap)",
                     "inter_sm, fused with the GEMM: the shard is gathered ahead of the tile loop at "
                     "a coarser granularity (128-row blocks of K columns) than the 128x64 tiles the "
                     "loop loads, so communicator blocks push each row block into every peer with "
                     "TMA bulk copies and one flag per row block; compute blocks do the local shard "
                     "first and wait per row block. Communicator SMs: chosen at launch from the "
                     "shapes, 1 to 16, by a cost model of compute waves against the gather's time "
                     "at the profile's TMA bandwidth for that many SMs (the TMA path needs " +
                         Twine(sms) + " SMs for 90% of its bandwidth on 2 MiB row blocks)");
      gather.erase();
    } else if (auto add = dyn_cast<AddTileOp>(g->sink)) {
      if (add.getOverlap() != Overlap::intra_sm)
        return add.emitError("GEMM + reduce-scatter: only the intra-SM lowering has a template "
                             "(overlap is '") << stringifyOverlap(add.getOverlap()) << "'); run pk-select-overlap first";
      if (add.getTransport() != Transport::tma)
        return add.emitError("GEMM + reduce-scatter: the template reduce-adds by TMA; transport is '")
               << stringifyTransport(add.getTransport()) << "'";
      job = "gemm_rs";
      if (failed(index("a", a)) || failed(index("c", add.getDest()))) return failure();
      recordDecision(add, "rule 2 (overlap)",
                     "gemm_rs template: the storer warp reduce-adds each finished 64x64 bf16 box into "
                     "its owner by cp.reduce.async.bulk.tensor after an mbarrier hand-off from the "
                     "consumers; tiles alternate between owners starting at rank + 1, so ranks start "
                     "on different owners; one ready and one done signal per block (one-way)");
    } else if (reduce && reduce.getInput() == cast<TileStoreOp>(g->sink).getDest()) {
      job = "gemm_ar";
      if (failed(index("a", a)) || failed(index("c", reduce.getOutput()))) return failure();
      recordDecision(reduce, "rule 2 (overlap)",
                     "intra_sm, fused with the GEMM: the all-reduce's input is produced tile by tile "
                     "by the loop, so the storer reduce-adds each finished box into every rank's "
                     "output by TMA (one-shot push; the intermediate product is never written) and "
                     "ranks start their walks at different tiles");
      reduce.erase();
    } else {
      job = "gemm";
      if (failed(index("a", a)) || failed(index("c", cast<TileStoreOp>(g->sink).getDest())))
        return failure();
    }
    fact("job", StringAttr::get(ctx, job));
    recordDecision(loop, "template",
                   job + ": persistent LCSC kernel, 128x256x64 tiles, 4-stage TMA ring, 2 consumer "
                   "warpgroups (wgmma m64n256k16, fp32 accumulators, 232 registers) and a loader/"
                   "storer warpgroup (40 registers), L2 groups of 8 row tiles");
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
      if (gemmLoop) failed |= mlir::failed(lower(kernel, gemmLoop, *profile));
    });
    if (failed) signalPassFailure();
  }
};

} // namespace

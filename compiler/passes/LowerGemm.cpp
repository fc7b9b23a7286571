// Recognises a GEMM tile loop (with an all-gather ahead of it, a reduce-add of its tiles
// into their owners, or an all-reduce after it) and lowers the kernel to an instance of the
// Hopper GEMM / LCSC templates (templates/include/pk/templates), recording the job, the
// overlap scheme and the tile order as decisions.
#include "ElementProgram.h"
#include "ProfileOption.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/EffectLedger.h"
#include "pk/Passes/Passes.h"
#include "pk/Passes/TemplateInstance.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"

#include <numeric>

namespace mlir::pk {
#define GEN_PASS_DEF_PKLOWERGEMMPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

// The template's tile: 128 x 256 outputs, K steps of 64.
constexpr int64_t kBM = 128, kBN = 256, kBK = 64;

struct GemmLoop {
  TileForeachOp loop;
  TileLoadOp loadA, loadB;
  bool bNMajor = false;       // B stored [K, N] (mma) rather than [N, K] (mma_t)
  bool aMMajor = false;       // A stored [K, M], read as transpose(load(A, k, m)) (dW = dY^T X)
  Type in, inB, out;          // A's, B's and the output's element types (bf16 / f16 / f32 out; fp8 in;
                              // i8 in with an i32 accumulator: W8A8, i32 out too)
  int64_t bm = 0, bn = 0, bk = 0;  // the spec's tile
  ArrayAttr epilogue;         // null when the accumulator is stored as it is
  Operation *sink = nullptr;  // pk.tile.store or pk.coll.add_tile of the (narrowed) tile
  // The reduce-scatter's owner loop form: foreach (o, m, n) over (world_size, rows, N) adding
  // A[o * rows + m, k] products into owner o's rows [m, n] (o is the owner, null otherwise).
  Value owner, rowsPerOwner;
  // The batched form: foreach (b, m, n) over (B, M, N) with A [B, M, K], B [B, N, K] or
  // [B, K, N] and C [B, M, N] addressed at batch b (b, null otherwise). loadA and loadB are then
  // the 3-D loads the operands are 2-D views of. sharedB: B is one 2-D [N, K] or [K, N] weight
  // that every batch multiplies by (loadB a plain 2-D load).
  Value batch;
  bool swapped = false;  // the loop is written (n, m): its first dimension runs over N
  bool sharedB = false;
  bool widenB = false;  // B is cast<A's type>(an fp8 load): a weight-only quantised GEMM
  // A second product after the K loop into the same accumulator (LoRA): its operands' loads and
  // their K extent in the spec (the tiles' R columns).
  TileLoadOp trailA, trailB;
  int64_t trailCols = 0;
  // The fused templates take bf16 A * B^T or A * B with no epilogue, retiled to their 128x256x64
  // tiles as the plain one is (exact: each output element depends only on its row of A and
  // column of B; a reduce-scatter's tiles inside one owner are a launch check with a twin).
  bool fusable() const {
    return !aMMajor && in.isBF16() && inB.isBF16() && out.isBF16() && !epilogue && !trailA;
  }
};

bool isTile(Type t, int64_t rows, int64_t cols, Type element) {
  auto tile = dyn_cast<TileType>(t);
  if (!tile || tile.getShape().size() != 2) return false;
  return tile.getShape()[0] == rows && tile.getShape()[1] == cols && tile.getElementType() == element;
}

// A tile type in the spec's words: "a 1 x 64 x 64 bf16 tile".
std::string tileWords(Type t) {
  auto tile = dyn_cast<TileType>(t);
  if (!tile) return "a value that is not a tile";
  std::string s, elem;
  for (int64_t d : tile.getShape()) s += (s.empty() ? "" : " x ") + std::to_string(d);
  llvm::raw_string_ostream os(elem);
  os << tile.getElementType();
  return "a " + s + " " + elem + " tile";
}

// The fp8 or i8 load under casts through bf16, f16, f32 or (from i8) i32 and i64 (cast<bf16>(load),
// cast<bf16>(cast<f32>(load)), ...): exact, as each of them holds every fp8 or i8 value; or null.
TileLoadOp widenedLoad(Value operand) {
  Value in = operand;
  bool integers = false;  // an integer type in the chain: only an i8 load keeps it exact
  while (auto widen = in.getDefiningOp<TileCastOp>()) {
    in = widen.getInput();
    Type t = cast<TileType>(in.getType()).getElementType();
    integers |= t.isSignlessInteger(32) || t.isSignlessInteger(64);
    if (!t.isBF16() && !t.isF16() && !t.isF32() && !t.isSignlessInteger(32) && !t.isSignlessInteger(64)) break;
  }
  auto load = in.getDefiningOp<TileLoadOp>();
  if (!load || in == operand || load.getIndices().size() != 2) return TileLoadOp();
  Type raw = cast<TileType>(load.getType()).getElementType();
  return (isFp8(raw) && !integers) || raw.isSignlessInteger(8) ? load : TileLoadOp();
}

// The same value, or equal constants.
bool sameIndex(Value x, Value y) {
  if (x == y) return true;
  std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  return cx && cy && *cx == *cy;
}

// Matches: foreach (m, n) step [BM, BN] { acc = scf.for k step BK (zeros) { a = load A[m, k];
// b = load B[n, k] (mma {transpose_b}) or B[k, n] (mma); mma a, b, acc };
// store/add cast<bf16|f16>(epilogue(acc)), or epilogue(acc) as f32 }. Any tile shape: the template retiles, which is
// exact because every output element depends only on its own row of A and column of B.
FailureOr<GemmLoop> matchGemmLoop(KernelOp kernel, TileForeachOp loop) {
  GemmLoop g;
  g.loop = loop;
  Block &body = loop.getBody().front();
  // Or foreach (o, m, n) step [1, BM, BN]: tiles of each owner o's rows (a reduce-scatter), or
  // tiles of each batch b of 3-D operands (a batched GEMM).
  const bool threeD = loop.getSteps().size() == 3 && loop.getSteps()[0] == 1;
  if (loop.getSteps().size() != 2 && !threeD)
    return loop.emitError("GEMM tile loop: the template takes a loop over 2-D output tiles (m, n) "
                          "(or over owners or batches and their tiles: (o, m, n) step [1, BM, BN]); "
                          "this one steps over ") << loop.getSteps().size() << "-D tiles";
  const unsigned first = threeD ? 1 : 0;
  g.bm = loop.getSteps()[first];
  g.bn = loop.getSteps()[first + 1];
  Value m = body.getArgument(first), n = body.getArgument(first + 1);
  scf::ForOp kloop;
  for (Operation &op : body)
    if (auto f = dyn_cast<scf::ForOp>(op)) {
      if (kloop)
        return f.emitError("GEMM tile loop: a second range loop; the template's tile loop has one "
                           "(over K) and then stores or adds its tile once");
      kloop = f;
    }
  if (!kloop || kloop.getNumRegionIterArgs() != 1 || !kloop.getInitArgs()[0].getDefiningOp<TileZerosOp>())
    return loop.emitError("GEMM tile loop: the template's loop holds one range loop over K whose "
                          "only carried value is one accumulator started at zeros<f32>(); "
                          "this one has ")
           << (!kloop ? std::string("no range loop")
                      : kloop.getNumRegionIterArgs() != 1
                            ? std::to_string(kloop.getNumRegionIterArgs()) + " carried values"
                            : std::string("an accumulator not started at zeros"));
  std::optional<int64_t> step = getConstantIntValue(kloop.getStep());
  if (!step || *step < 1 || getConstantIntValue(kloop.getLowerBound()) != 0)
    return kloop.emitError("GEMM K loop: must run from 0 in constant steps");
  g.bk = *step;
  auto yield = cast<scf::YieldOp>(kloop.getBody()->getTerminator());
  auto mma = yield.getOperand(0).getDefiningOp<TileMmaOp>();
  if (!mma || mma.getAcc() != kloop.getRegionIterArgs()[0])
    return kloop.emitError("GEMM K loop: must yield pk.tile.mma of its accumulator");
  g.bNMajor = !mma.getTransposeB();
  // A read transposed: transpose(load<BK, BM>(a, k, m)), A stored [K, M].
  Value aOperand = mma.getA();
  if (auto t = aOperand.getDefiningOp<TileTransposeOp>()) {
    g.aMMajor = true;
    aOperand = t.getInput();
  }
  // A batched GEMM's operands are 2-D views (pk.tile.reshape) of 3-D loads of one batch
  // (a 1 x rows x cols tile).
  auto view3d = [](Value operand) {
    auto view = operand.getDefiningOp<TileReshapeOp>();
    auto load = view ? view.getInput().getDefiningOp<TileLoadOp>() : TileLoadOp();
    auto tile = load ? dyn_cast<TileType>(load.getType()) : TileType();
    return tile && load.getIndices().size() == 3 && tile.getRank() == 3 && tile.getShape()[0] == 1 ? load
                                                                                                   : TileLoadOp();
  };
  // B may also be one 2-D weight shared by every batch (A [B, M, K] times W [N, K] or [K, N]).
  auto load2d = [](Value operand) {
    auto load = operand.getDefiningOp<TileLoadOp>();
    return load && load.getIndices().size() == 2 ? load : TileLoadOp();
  };
  const bool batchedForm = threeD && view3d(mma.getA()) && (view3d(mma.getB()) || load2d(mma.getB()));
  const bool ownerForm = threeD && !batchedForm;
  if (g.aMMajor && threeD)
    return mma.emitError("GEMM: A read transposed (A stored [K, M]) takes the plain GEMM form, a loop over "
                         "(m, n) tiles; not the batched or owner forms");
  if (ownerForm) {
    g.owner = body.getArgument(0);
    g.rowsPerOwner = loop.getUpperBounds()[1];
  }
  if (batchedForm) {
    g.batch = body.getArgument(0);
    g.loadA = view3d(mma.getA());
    g.sharedB = !view3d(mma.getB());
    g.loadB = g.sharedB ? load2d(mma.getB()) : view3d(mma.getB());
  } else {
    g.loadA = aOperand.getDefiningOp<TileLoadOp>();
    g.loadB = mma.getB().getDefiningOp<TileLoadOp>();
    if (!g.loadB && (g.loadB = widenedLoad(mma.getB()))) g.widenB = true;
  }
  // A loop written (n, m), over (B's N extent, A's rows): the same tiles, the roles swapped.
  if (!threeD && g.loadA && g.loadA.getIndices().size() == 2 &&
      g.loadA.getIndices()[g.aMMajor ? 1 : 0] == body.getArgument(1) && g.loadA.getIndices()[g.aMMajor ? 0 : 1] != m) {
    std::swap(m, n);
    std::swap(g.bm, g.bn);
    g.swapped = true;
  }
  Value k = kloop.getInductionVar();
  Value bRow = g.bNMajor ? k : n, bCol = g.bNMajor ? n : k;
  // A's row: m, or o * rows + m in the owner form.
  auto isARow = [&](Value v) {
    if (!ownerForm) return v == m;
    auto add = v.getDefiningOp<arith::AddIOp>();
    if (!add) return false;
    Value base = add.getLhs() == m ? add.getRhs() : add.getRhs() == m ? add.getLhs() : Value();
    auto mul = base ? base.getDefiningOp<arith::MulIOp>() : arith::MulIOp();
    return mul && ((mul.getLhs() == g.owner && sameIndex(mul.getRhs(), g.rowsPerOwner)) ||
                   (mul.getRhs() == g.owner && sameIndex(mul.getLhs(), g.rowsPerOwner)));
  };
  // Where an operand's load must be: [row, col], or [b, row, col] in the batched form (a shared
  // B: [row, col]).
  auto at = [&](TileLoadOp load, Value row, Value col, bool plain = false) {
    ValueRange ix = load.getIndices();
    return batchedForm && !plain ? ix.size() == 3 && ix[0] == g.batch && ix[1] == row && ix[2] == col
                                 : ix.size() == 2 && ix[1] == col && (row ? ix[0] == row : isARow(ix[0]));
  };
  // B computed from a load by anything but casts of fp8 or i8 (int4 or packed weights decoded in the
  // loop): say so.
  if (g.loadA && !g.loadB && !batchedForm && mma.getB().getDefiningOp() &&
      !isa<TileLoadOp, TileReshapeOp>(mma.getB().getDefiningOp()))
    return mma.emitError("GEMM: B is computed in the K loop (")
           << mma.getB().getDefiningOp()->getName()
           << "); the template takes B as a load, or as fp8 or i8 weights cast to A's type (widened in its "
              "ring); weights decoded in the loop (int4, packed in wider integers) take the general path (store "
              "them as i8 or fp8, or dequantise them to bf16 in a kernel of their own)";
  // A computed from a load (quantised activations cast in the loop): say so.
  if (!g.loadA && !batchedForm && aOperand.getDefiningOp() && !isa<TileLoadOp, TileReshapeOp>(aOperand.getDefiningOp()))
    return mma.emitError("GEMM: A is computed in the K loop (")
           << aOperand.getDefiningOp()->getName()
           << "); the template takes A as a load (or a transposed load); only B may be cast from fp8 or i8 "
              "weights in the loop";
  // K counted in blocks (range(0, a.cols() / 64), loads at kb * 64): say how the template wants it.
  auto blockK = [&](TileLoadOp load) {
    if (!load) return false;
    for (Value ix : load.getIndices())
      if (auto mul = ix.getDefiningOp<arith::MulIOp>(); mul && (mul.getLhs() == k || mul.getRhs() == k)) return true;
    return false;
  };
  if (blockK(g.loadA) || blockK(g.loadB))
    return mma.emitError("GEMM: the K loop counts blocks (loads at k * BK); the template takes K itself as the "
                         "loop variable: for (auto k : range(0, a.cols(), BK)) with loads at k");
  if (!g.loadA || !g.loadB || !(g.aMMajor ? at(g.loadA, k, m) : at(g.loadA, batchedForm ? m : Value(), k)) ||
      !at(g.loadB, bRow, bCol, g.sharedB))
    return mma.emitError(batchedForm ? (g.sharedB ? (g.bNMajor ? "batched GEMM with a shared B: operands must be "
                                                                 "loads A[b, m, k] and B[k, n]"
                                                               : "batched GEMM with a shared B: operands must be "
                                                                 "loads A[b, m, k] and B[n, k]")
                                        : g.bNMajor ? "batched GEMM: operands must be 3-D loads A[b, m, k] and "
                                                      "B[b, k, n] (b the loop's batch index)"
                                                    : "batched GEMM: operands must be 3-D loads A[b, m, k] and "
                                                      "B[b, n, k] (b the loop's batch index)")
                         : threeD && (view3d(mma.getA()) || view3d(mma.getB()))
                             ? "batched GEMM: A must be a 3-D load at the loop's batch index, and B one "
                               "too (B[b, n, k] or B[b, k, n]) or a 2-D weight every batch shares "
                               "(B[n, k] or B[k, n]); a 2-D A beside a 3-D B is not a template form"
                         : ownerForm ? "GEMM over owners: operands must be pk.tile.load A[o * rows + m, k] "
                                     "and B[n, k]"
                         : g.aMMajor ? (g.bNMajor ? "GEMM: operands must be transpose(load(A, k, m)) and "
                                                    "load(B, k, n)"
                                                  : "GEMM: operands must be transpose(load(A, k, m)) and "
                                                    "load(B, n, k)")
                         : g.bNMajor ? "GEMM: operands must be loads of A at [m, k] and B at [k, n]"
                                     : "GEMM: operands must be loads of A at [m, k] and B at [n, k]");
  g.in = cast<TileType>(mma.getA().getType()).getElementType();
  g.inB = cast<TileType>(mma.getB().getType()).getElementType();
  // A weight-only quantised B: the fp8 or i8 load, cast to A's type (widened in the template's ring).
  if (g.widenB) {
    g.inB = cast<TileType>(g.loadB.getType()).getElementType();
    if (!(g.in.isBF16() || g.in.isF16()) || cast<TileType>(mma.getB().getType()).getElementType() != g.in)
      return mma.emitError("GEMM: an fp8 or i8 B cast before the product must be cast to A's type (bf16 or f16)");
    if (g.bNMajor || g.aMMajor || g.batch)
      return mma.emitError("GEMM: an fp8 or i8 B widened to A's type takes the plain form A[m, k] times B[n, k] "
                           "(mma_t), not batched; this loop has ")
             << (g.bNMajor ? "B stored [K, N] (mma)" : g.aMMajor ? "A read transposed" : "a batch dimension");
  }
  const bool int8 = g.in.isSignlessInteger(8);  // W8A8: s8 wgmma into s32 accumulators
  const bool eightBit = isFp8(g.in) || int8;
  if (!g.in.isBF16() && !g.in.isF16() && !eightBit)
    return mma.emitError("GEMM: the template multiplies bf16, f16, fp8 or i8 tiles, not ") << g.in;
  // 8-bit wgmma (fp8, s8) reads both operands K-major.
  if (eightBit && g.aMMajor)
    return mma.emitError("GEMM: the template multiplies fp8 and i8 tiles with A stored [M, K] only, as 8-bit "
                         "wgmma has no transpose; this A is read transposed");
  if (eightBit && g.bNMajor)
    return mma.emitError("GEMM: the template multiplies fp8 and i8 tiles with B stored [N, K] (mma_t) "
                         "only, as 8-bit wgmma has no transpose; this is mma with B stored [K, N]");
  if (int8 && g.batch)
    return mma.emitError("GEMM: the template multiplies i8 tiles in the plain form, not batched");
  const Type bElement = g.widenB ? g.in : g.inB;  // what the product reads: the widened B
  if (!isTile(mma.getA().getType(), g.bm, g.bk, g.in) ||
      !(g.bNMajor ? isTile(mma.getB().getType(), g.bk, g.bn, bElement)
                  : isTile(mma.getB().getType(), g.bn, g.bk, bElement)) ||
      !(g.in == g.inB || (isFp8(g.in) && isFp8(g.inB)) || g.widenB) ||
      !isTile(mma.getType(), g.bm, g.bn,
              int8 ? Type(IntegerType::get(loop.getContext(), 32)) : Type(Float32Type::get(loop.getContext()))))
    return mma.emitError("GEMM: tiles must be A ") << g.bm << "x" << g.bk << ", B "
           << (g.bNMajor ? g.bk : g.bn) << "x" << (g.bNMajor ? g.bn : g.bk)
           << " of one type (bf16 or f16), both fp8, both i8, or a 16-bit A beside cast<A's type>(an fp8 or i8 B), "
              "accumulator "
           << g.bm << "x" << g.bn << (int8 ? " i32" : " f32");
  // A trailing product after the K loop, added into the same accumulator (LoRA's u lb^T beside
  // x w^T): mma_t(load(a2, m, 0), load(b2, n, 0), acc), or mma(.., load(b2, 0, n), acc) when the
  // main product is mma; the template streams it as further K steps.
  Value accOut = kloop.getResult(0);
  if (Operation *user = accOut.hasOneUse() ? *accOut.getUsers().begin() : nullptr) {
    auto t2 = dyn_cast<TileMmaOp>(user);
    if (t2 && t2.getAcc() == accOut) {
      auto la = t2.getA().getDefiningOp<TileLoadOp>(), lb = t2.getB().getDefiningOp<TileLoadOp>();
      auto zero = [](Value v) { return getConstantIntValue(v) == std::optional<int64_t>(0); };
      auto ta = la ? cast<TileType>(la.getType()) : TileType(), tb = lb ? cast<TileType>(lb.getType()) : TileType();
      const int64_t r = ta ? ta.getShape().back() : 0;
      if (!la || !lb || la.getIndices().size() != 2 || lb.getIndices().size() != 2 || la.getIndices()[0] != m ||
          !zero(la.getIndices()[1]) || t2.getTransposeB() == g.bNMajor ||
          (g.bNMajor ? !zero(lb.getIndices()[0]) || lb.getIndices()[1] != n
                     : lb.getIndices()[0] != n || !zero(lb.getIndices()[1])) ||
          !isTile(ta, g.bm, r, g.in) || !(g.bNMajor ? isTile(tb, r, g.bn, g.inB) : isTile(tb, g.bn, r, g.inB)))
        return t2.emitError("GEMM: a product after the K loop takes the template as mma_t(load<BM, R>(a2, m, 0), "
                            "load<BN, R>(b2, n, 0), acc) (mma with load<R, BN>(b2, 0, n) when the loop's is mma), "
                            "of the loop's operand types, added into the loop's accumulator");
      if (g.widenB || g.aMMajor || g.batch || eightBit)
        return t2.emitError("GEMM: a product after the K loop takes the plain 16-bit form of the template");
      g.trailA = la;
      g.trailB = lb;
      g.trailCols = r;
      accOut = t2.getResult();
    }
  }
  // The sink: the tile loop's one store (or reduce-add into an owner) of the output tile.
  for (Operation &op : body)
    if (isa<TileStoreOp, AddTileOp>(op)) {
      if (g.sink) return op.emitError("GEMM: the tile loop must store one tile");
      g.sink = &op;
    }
  if (!g.sink) {
    for (Operation &op : body)
      if (isa<StoreTileOp>(op))
        return op.emitError("GEMM: the template stores the product into this rank's C or adds it into the "
                            "owner's rows (store_add(c.on(owner), ...)); a plain store into a peer's copy "
                            "takes the general path");
    return loop.emitError("GEMM: the tile must be stored (pk.tile.store) or added into its owner "
                          "(pk.coll.add_tile)");
  }
  // The stored tile: a bf16 or f16 cast of the fp32 epilogue, or the f32 epilogue itself (or a
  // cast of it to f32, which changes nothing).
  Value stored = g.sink->getOperand(0);
  // Batched: the tile goes into C [B, M, N] through a 3-D view of it.
  TileReshapeOp storeView = batchedForm ? stored.getDefiningOp<TileReshapeOp>() : TileReshapeOp();
  if (batchedForm) {
    auto whole = storeView ? cast<TileType>(storeView.getType()) : TileType();
    if (!storeView || cast<TileType>(storeView.getInput().getType()).getRank() != 2 || whole.getRank() != 3 ||
        whole.getShape()[0] != 1)
      return g.sink->emitError("batched GEMM: store the 2-D tile into C [B, M, N] at [b, m, n]");
    stored = storeView.getInput();
  }
  auto narrow = stored.getDefiningOp<TileCastOp>();
  auto f32 = Float32Type::get(loop.getContext());
  // The storer rounds f32 to a bf16 / f16 (or keeps f32) output; a cast from another type, or to
  // an integer one (an i32 output stores the epilogue's bits), is part of the epilogue.
  if (narrow && (!isa<Float32Type>(cast<TileType>(narrow.getInput().getType()).getElementType()) ||
                 !isa<FloatType>(cast<TileType>(narrow.getType()).getElementType())))
    narrow = nullptr;
  Value result = narrow ? narrow.getInput() : stored;
  auto storedTile = dyn_cast<TileType>(stored.getType());
  if (!storedTile || !isTile(storedTile, g.bm, g.bn, storedTile.getElementType()))
    return g.sink->emitError("GEMM: the template stores the loop's ") << g.bm << " x " << g.bn
           << " tile of the accumulator's epilogue at [m, n]; this store writes " << tileWords(stored.getType());
  g.out = storedTile.getElementType();
  // W8A8 may also store i32 (the accumulators, or integer arithmetic on them).
  const bool i32Out = int8 && g.out.isSignlessInteger(32);
  if (!g.out.isBF16() && !g.out.isF16() && g.out != f32 && !i32Out)
    return g.sink->emitError("GEMM: the template's output is bf16, f16 or f32 (or i32 from i8 operands); this store "
                             "writes ")
           << tileWords(stored.getType());
  // An i32 accumulator's epilogue may end in the output's own type (cast<bf16>(acc), i32 sums).
  if (!isa<Float32Type>(cast<TileType>(result.getType()).getElementType()) &&
      !(int8 && cast<TileType>(result.getType()).getElementType() == g.out))
    return g.sink->emitError("GEMM: the stored tile must be computed from the ")
           << (int8 ? "i32" : "f32") << " accumulator";
  // Between the K loop and the stored tile (or its cast): an element-wise epilogue, captured whole.
  llvm::SmallPtrSet<Operation *, 16> epilogueOps;
  if (result != accOut) {
    std::string why;
    g.epilogue = captureGemmEpilogue(kernel, result, accOut, m, n, g.bm, g.bn, epilogueOps, why, g.batch);
    if (!g.epilogue) return g.sink->emitError("GEMM epilogue: ") << why;
  }
  // Nothing else in the loop may compute a tile the template would drop (index arithmetic for
  // the store's position is fine).
  for (Operation &op : body) {
    bool tiles = llvm::any_of(op.getResultTypes(), [](Type t) { return isa<TileType>(t); });
    const bool trailing = g.trailA && (&op == g.trailA.getOperation() || &op == g.trailB.getOperation() ||
                                       &op == accOut.getDefiningOp());
    if (!tiles || &op == kloop.getOperation() || (narrow && &op == narrow.getOperation()) ||
        (storeView && &op == storeView.getOperation()) || epilogueOps.contains(&op) || op.use_empty() || trailing)
      continue;
    bool feedsLoop = llvm::all_of(op.getUsers(), [&](Operation *u) { return kloop->isAncestor(u); });
    if (!feedsLoop)
      return op.emitError("GEMM: this tile is used outside the K loop and the epilogue");
  }
  for (Value r : ValueRange(accOut))
    for (Operation *u : r.getUsers())
      if (u != (narrow ? narrow.getOperation() : storeView ? storeView.getOperation() : g.sink) &&
          !epilogueOps.contains(u))
        return u->emitError("GEMM: the accumulator may only feed the epilogue and the store");
  if (ownerForm) {
    auto add = dyn_cast<AddTileOp>(g.sink);
    if (!add || add.getPeer() != g.owner || add.getIndices().size() != 2 || add.getIndices()[0] != m ||
        add.getIndices()[1] != n)
      return g.sink->emitError("GEMM over owners: add the tile into owner o's rows: "
                               "store_add(c.on(o), tile, m, n)");
  } else if (auto st = dyn_cast<TileStoreOp>(g.sink)) {
    ValueRange ix = st.getIndices();
    if (batchedForm ? ix.size() != 3 || ix[0] != g.batch || ix[1] != m || ix[2] != n
                    : ix.size() != 2 || ix[0] != m || ix[1] != n)
      return st.emitError(batchedForm ? "batched GEMM: the tile must be stored at [b, m, n]"
                                      : "GEMM: the tile must be stored at [m, n]");
  } else if (batchedForm) {
    return g.sink->emitError("batched GEMM: the template stores each tile into this rank's C [B, M, N]");
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
  }
  return g;
}

// Whether `v` is rows(A) / world_size: the rows each rank owns in the reduce-scatter template.
bool isRowsPerRank(Value v, Value a) {
  Operation *div = v.getDefiningOp();
  return div && isa<arith::DivUIOp, arith::DivSIOp>(div) && isDimOf(div->getOperand(0), a, 0) &&
         div->getOperand(1).getDefiningOp<WorldSizeOp>();
}

// The template computes the whole product: the loops must cover A's rows, B's N extent (its
// rows when stored [N, K], its columns when [K, N]) and K.
LogicalResult checkBounds(GemmLoop &g) {
  Value a = g.loadA.getSource(), b = g.loadB.getSource();
  const int64_t bN = g.bNMajor ? 1 : 0, bK = g.bNMajor ? 0 : 1;
  // A loop over the stored C's extents (tiles(c.rows(), c.cols())) covers the same tiles: the
  // template's launch checks that C has A's rows and B's N extent, and runs the general-path
  // twin where it does not (a C padded past the product).
  auto store = dyn_cast<TileStoreOp>(g.sink);
  Value c = store ? store.getDest() : Value();
  auto dimOf = [&](Value v, Value operand, int64_t d, int64_t cDim) {
    return isDimOf(v, operand, d) || (c && isDimOf(v, c, cDim));
  };
  // A gathered by rows from a shard x (all_gather(x, a)): its rows written x.rows() * world_size(),
  // its columns x.cols().
  Value shard;
  for (Operation *user : a.getUsers())
    if (auto ag = dyn_cast<AllGatherOp>(user); ag && ag.getOutput() == a && ag.getDim() == 0) shard = ag.getInput();
  auto gatheredRows = [&](Value v) {
    auto mul = v.getDefiningOp<arith::MulIOp>();
    if (!mul || !shard) return false;
    Value rows = mul.getLhs().getDefiningOp<WorldSizeOp>() ? mul.getRhs()
                 : mul.getRhs().getDefiningOp<WorldSizeOp>() ? mul.getLhs() : Value();
    return rows && isDimOf(rows, shard, 0);
  };
  if (g.owner) {  // (o, m, n) over (world_size, a.rows() / world_size, b.rows())
    ValueRange ub = g.loop.getUpperBounds();
    if (!ub[0].getDefiningOp<WorldSizeOp>() || !isRowsPerRank(ub[1], a) || !isDimOf(ub[2], b, bN))
      return g.loop.emitError("GEMM over owners: the loop must cover the owners, their rows and B's "
                              "rows: tiles(world_size(), rows, b.rows(), {1, BM, BN}) with rows = "
                              "a.rows() / world_size()");
    auto kloop = g.loadA->getParentOfType<scf::ForOp>();
    if (!isDimOf(kloop.getUpperBound(), a, 1) && !isDimOf(kloop.getUpperBound(), b, bK))
      return kloop.emitError("GEMM K loop: must run to the columns of A (range(0, a.cols(), ...)): "
                             "the template reduces over all of K");
    return success();
  }
  if (g.batch) {  // (b, m, n) over (A's batches, A's rows, B's N extent), K over A's columns
    ValueRange ub = g.loop.getUpperBounds();
    const int64_t bx = g.sharedB ? 0 : 1;  // B's dimensions one further in unless shared
    if (!dimOf(ub[0], a, 0, 0) || !dimOf(ub[1], a, 1, 1) || !dimOf(ub[2], b, bN + bx, 2))
      return g.loop.emitError(g.sharedB ? (g.bNMajor ? "batched GEMM: the loop must cover A's batches and rows "
                                                       "and the shared B's columns: tiles(a.dim(0), a.dim(1), "
                                                       "b.cols(), {1, BM, BN})"
                                                     : "batched GEMM: the loop must cover A's batches and rows "
                                                       "and the shared B's rows: tiles(a.dim(0), a.dim(1), "
                                                       "b.rows(), {1, BM, BN})")
                              : g.bNMajor ? "batched GEMM: the loop must cover A's batches and rows and B's "
                                            "columns: tiles(a.dim(0), a.dim(1), b.dim(2), {1, BM, BN})"
                                          : "batched GEMM: the loop must cover A's batches and rows and B's "
                                            "rows: tiles(a.dim(0), a.dim(1), b.dim(1), {1, BM, BN})");
    auto kloop = g.loadA->getParentOfType<scf::ForOp>();
    if (!isDimOf(kloop.getUpperBound(), a, 2) && !isDimOf(kloop.getUpperBound(), b, bK + bx))
      return kloop.emitError("batched GEMM K loop: must run to the columns of A (range(0, a.dim(2), "
                             "...)): the template reduces over all of K");
    return success();
  }
  const int64_t aM = g.aMMajor ? 1 : 0, aK = g.aMMajor ? 0 : 1;  // A's M and K dimensions
  const Value ubM = g.loop.getUpperBounds()[g.swapped ? 1 : 0], ubN = g.loop.getUpperBounds()[g.swapped ? 0 : 1];
  if (g.aMMajor && (!dimOf(ubM, a, aM, 0) || !dimOf(ubN, b, bN, 1)))
    return g.loop.emitError("GEMM tile loop: must cover the columns of A, stored [K, M], and B's N extent "
                            "(tiles(a.cols(), ...)): the template computes the whole product");
  if (!(dimOf(ubM, a, aM, 0) || (!g.aMMajor && gatheredRows(ubM))) || !dimOf(ubN, b, bN, 1))
    return g.loop.emitError(g.bNMajor ? "GEMM tile loop: must cover the rows of A and the columns "
                                        "of B (tiles(a.rows(), b.cols(), ...)): the template "
                                        "computes the whole product"
                                      : "GEMM tile loop: must cover the rows of A and the rows of B "
                                        "(tiles(a.rows(), b.rows(), ...)): the template computes "
                                        "the whole product");
  auto kloop = g.loadA->getParentOfType<scf::ForOp>();
  if (!isDimOf(kloop.getUpperBound(), a, aK) && !isDimOf(kloop.getUpperBound(), b, bK) &&
      !(shard && !g.aMMajor && isDimOf(kloop.getUpperBound(), shard, 1)))
    return kloop.emitError(g.aMMajor ? "GEMM K loop: must run to the rows of A, stored [K, M] (range(0, "
                                       "a.rows(), ...)): the template reduces over all of K"
                                     : "GEMM K loop: must run to the columns of A (range(0, a.cols(), ...)): "
                                       "the template reduces over all of K");
  return success();
}

// Marks a GEMM kernel's general-path twin (its value: the template kernel's name).
constexpr llvm::StringLiteral kGeneralFor = "pk.general_for";

bool before(Operation *x, Operation *y) { return x->getBlock() == y->getBlock() && x->isBeforeInBlock(y); }

// What the fused templates implement, or why not: a row gather (dimension 0) of a separate
// input into A, and an all-reduce into a distinct symmetric output (the storer adds into every
// rank's copy). Empty when the op fits.
std::string unfusableGather(AllGatherOp ag) {
  if (ag.getDim() != 0)
    return "the fused all-gather gathers whole rows (dimension 0) into A; this one gathers along "
           "dimension " + std::to_string(ag.getDim());
  if (ag.getInput() == ag.getOutput()) return "the fused all-gather reads a separate shard; this one is in place";
  return "";
}
// A reduce-scatter of the product the loop stores: gemm_rs adds each tile into its owner's rows.
std::string unfusableScatter(ReduceScatterOp rs) {
  if (rs.getDim() != 0)
    return "the fused reduce-scatter (gemm_rs) scatters whole rows to their owners; this one scatters "
           "along dimension " + std::to_string(rs.getDim());
  if (rs.getInput() == rs.getOutput()) return "the fused reduce-scatter adds into a separate output; this one is in place";
  if (!isa<SymTensorType>(rs.getOutput().getType()))
    return "the fused reduce-scatter adds each tile into its owner's copy of the output, which must be "
           "symmetric (Sym), not a local Tensor";
  return "";
}
std::string unfusableReduce(AllReduceOp ar) {
  if (ar.getInput() == ar.getOutput())
    return "the fused all-reduce adds into every rank's output while peers still add, so it cannot be in place";
  if (!isa<SymTensorType>(ar.getOutput().getType()))
    return "the fused all-reduce adds into every rank's copy of its output, which must be symmetric "
           "(Sym), not a local Tensor";
  return "";
}

// Whether `v` is a zero tile: zeros<T, ...>(), or a splat of a constant 0.
bool isZeroTile(Value v) {
  if (v.getDefiningOp<TileZerosOp>()) return true;
  auto splat = v.getDefiningOp<TileSplatOp>();
  if (!splat) return false;
  Attribute c;
  if (!matchPattern(splat.getScalar(), m_Constant(&c))) return false;
  if (auto f = dyn_cast<FloatAttr>(c)) return f.getValue().isZero();
  if (auto i = dyn_cast<IntegerAttr>(c)) return i.getValue().isZero();
  return false;
}

// The loop before `gemm` in the kernel's body that zeroes all of the 2-D `dest` (this rank's
// copy): tiles(dest.rows(), dest.cols(), ...) storing a zero tile at [m, n] and doing nothing
// else. A reduce-scatter template takes it as its launch's memset of the output.
TileForeachOp findZeroFill(TileForeachOp gemm, Value dest) {
  for (Operation *op = gemm->getPrevNode(); op; op = op->getPrevNode()) {
    auto loop = dyn_cast<TileForeachOp>(op);
    if (!loop) continue;
    if (loop.getUpperBounds().size() != 2 || !isDimOf(loop.getUpperBounds()[0], dest, 0) ||
        !isDimOf(loop.getUpperBounds()[1], dest, 1))
      continue;
    TileStoreOp store;
    int effects = 0;
    loop.walk([&](Operation *inner) {
      if (!hasSpecEffect(inner)) return;
      ++effects;
      store = dyn_cast<TileStoreOp>(inner);
    });
    Block &body = loop.getBody().front();
    if (effects != 1 || !store || store.getDest() != dest || !isZeroTile(store.getValue()) ||
        store.getIndices().size() != 2 || store.getIndices()[0] != body.getArgument(0) ||
        store.getIndices()[1] != body.getArgument(1))
      continue;
    // A memset only if the zero tiles cover the tensor: each at least the loop's step in both
    // dimensions (a 64 x 128 tile at 64 x 256 steps leaves gaps the spec does not zero).
    auto zeros = cast<TileType>(store.getValue().getType());
    if (zeros.getRank() != 2 || zeros.getShape()[0] < loop.getSteps()[0] || zeros.getShape()[1] < loop.getSteps()[1])
      continue;
    return loop;
  }
  return {};
}

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
      if (auto rs = dyn_cast<ReduceScatterOp>(op); rs && !unfusableScatter(rs).empty())
        diag << "; " << unfusableScatter(rs);
      else if (isa<ReduceScatterOp>(op))
        diag << "; a fused reduce-scatter must take the tensor the loop stores, after the loop (or add "
                "each tile into its owner: store_add(c.on(m / rows), tile, m % rows, n) with rows = "
                "a.rows() / world_size())";
      else if (auto ar = dyn_cast<AllReduceOp>(op))
        diag << "; " << (unfusableReduce(ar).empty() ? "a fused all-reduce must take the tensor the loop "
                                                       "stores, after the loop"
                                                     : unfusableReduce(ar));
      else if (auto ag = dyn_cast<AllGatherOp>(op))
        diag << "; " << (unfusableGather(ag).empty() ? "a fused all-gather must come before the loop and "
                                                       "produce the A operand it loads"
                                                     : unfusableGather(ag));
      else
        diag << "; put it in a separate kernel";
      diag.attachNote(g.loop.getLoc()) << "the GEMM loop";
      ok = false;
    });
    return success(ok);
  }

  // splitK: a plain GEMM's launch may split K over blocks (the pass's split-k option).
  static LogicalResult lower(KernelOp kernel, TileForeachOp loop, const ::pk::MachineProfile &profile, bool splitK) {
    FailureOr<GemmLoop> g = matchGemmLoop(kernel, loop);
    if (failed(g) || failed(checkBounds(*g))) return failure();
    // The kernel as the spec wrote it, before this match records its decisions: the
    // general-path twin's body (kept only when the template takes the kernel).
    auto pristine = cast<KernelOp>(kernel->clone());
    auto dropPristine = llvm::make_scope_exit([&] {
      if (pristine) pristine->erase();
    });
    Value a = g->loadA.getSource(), b = g->loadB.getSource();
    auto store = dyn_cast<TileStoreOp>(g->sink);
    // Fusion candidates by data flow: an all-gather ahead of the loop that produces A, an
    // all-reduce after it whose input is what the loop stores, each of a form the templates
    // implement; any other form stays a phase of its own, launched apart from the GEMM.
    AllGatherOp gather;
    AllReduceOp reduce;
    ReduceScatterOp scatter;
    for (Operation &op : kernel.getBody().front()) {
      if (auto ag = dyn_cast<AllGatherOp>(op);
          ag && ag.getOutput() == a && before(ag, loop) && unfusableGather(ag).empty())
        gather = ag;
      if (auto ar = dyn_cast<AllReduceOp>(op); ar && store && ar.getInput() == store.getDest() &&
                                                before(loop, ar) && unfusableReduce(ar).empty())
        reduce = ar;
      if (auto rs = dyn_cast<ReduceScatterOp>(op); rs && !reduce && store && rs.getInput() == store.getDest() &&
                                                    before(loop, rs) && unfusableScatter(rs).empty())
        scatter = rs;
    }
    // A and B may be one tensor (X Xᵀ: both only read); neither may be the output.
    if (store && (store.getDest() == a || store.getDest() == b))
      return g->sink->emitError("GEMM: the output must not be an operand (the template reads A and B "
                                "while it writes C): store the product into another tensor");
    if (gather && (gather.getInput() == b || gather.getOutput() == b))
      return gather.emitError("AG + GEMM: the all-gather must feed only the A operand");
    const bool fused = gather || reduce || scatter || isa<AddTileOp>(g->sink);
    if (fused && g->batch)
      return loop.emitError("batched GEMM: the fused templates take 2-D operands; compute the batched "
                            "product in a kernel of its own");
    if (fused && !g->fusable())
      return loop.emitError("GEMM with fused communication: the fused templates take bf16 A[m, k] "
                            "times B[n, k] (mma_t) or B[k, n] (mma), any tile shape, stored as "
                            "cast<bf16>(acc) with no epilogue; this loop has ")
             << g->in << " operands" << (g->aMMajor ? ", A read transposed" : "") << ", B "
             << (g->bNMajor ? "[k, n]" : "[n, k]") << ", " << g->out << " output"
             << (g->epilogue ? " and an epilogue" : "") << (g->trailA ? " and a product after the K loop" : "");
    if (g->out.isF32() && !kernel->getBlock())
      return loop.emitError("GEMM: the fused templates store a bf16 product; this GEMM stores "
                            "f32 (it takes the plain GEMM template in a launch of its own)");
    MLIRContext *ctx = kernel.getContext();
    SmallVector<NamedAttribute> facts;
    auto fact = [&](StringRef k, Attribute v) { facts.push_back(NamedAttribute(StringAttr::get(ctx, k), v)); };
    auto index = [&](StringRef k, Value v) -> LogicalResult {
      int i = kernelArgIndex(kernel, v);
      if (i < 0) return kernel.emitError("GEMM: '") << k << "' must be a kernel argument";
      fact(k, IntegerAttr::get(IntegerType::get(ctx, 64), i));
      return success();
    };
    if (failed(index("b", b))) return failure();
    fact("b_layout", StringAttr::get(ctx, g->bNMajor ? "kn" : "nk"));
    std::string job;
    bool ownerTiles = false;  // gemm_rs over the spec's tiles of A's rows: none may cross owners
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
      if (!g->owner && !isRowsPerRank(add.getPeer().getDefiningOp()->getOperand(1), a))
        return add.emitError("GEMM + reduce-scatter: each rank must own a.rows() / world_size() "
                             "rows (the template's split); add the tile at [m % rows, n] on peer "
                             "m / rows with rows = a.rows() / world_size()");
      job = "gemm_rs";
      if (failed(index("a", a)) || failed(index("c", add.getDest()))) return failure();
      // store_add adds into what y holds, on every path; a spec that wants the sum alone zeroes
      // y first, and that loop becomes the launch's memset (ordered before any peer's add by
      // the ready signals).
      TileForeachOp zeroFill = findZeroFill(loop, add.getDest());
      if (zeroFill) {
        consumed.push_back(zeroFill);
        zeroFill.walk([&](Operation *op) {
          if (hasSpecEffect(op)) consumed.push_back(op);
        });
        fact("zero_out", UnitAttr::get(ctx));
      }
      // Over the rows of A, a 128-row tile that crosses into the next owner is added to the
      // first one only (its other rows clipped away), which the template's per-owner tiles do
      // not reproduce: the launch checks that no tile crosses (rows a multiple of 128) and
      // otherwise runs the general-path twin, which computes what the spec says.
      ownerTiles = !g->owner;
      // Neither the spec's tiles nor the template's may cross owners: M / world_size a multiple of both.
      if (ownerTiles) fact("owner_tiles", IntegerAttr::get(IntegerType::get(ctx, 64), std::lcm(kBM, g->bm)));
      recordDecision(add, "rule 2 (overlap)",
                     Twine("gemm_rs template: the storer warp reduce-adds each finished 64x64 bf16 box "
                           "into its owner by cp.reduce.async.bulk.tensor after an mbarrier hand-off "
                           "from the consumers; tiles alternate between owners starting at rank + 1, "
                           "so ranks start on different owners; one ready and one done signal per "
                           "block (one-way); ") +
                         (g->owner ? "each owner's rows in 128-row tiles (any rows per owner); "
                                   : "the spec's 128-row tiles go to the owner of their first row, so "
                                     "the template runs when a.rows() / world_size() is a multiple of "
                                     "128 (no tile crosses owners) and the general-path twin "
                                     "otherwise, which adds a crossing tile to its first owner only, "
                                     "as written; the owner loop form, tiles(world_size(), rows, "
                                     "b.rows(), {1, 128, 256}) over A[o * rows + m, k], reduce-"
                                     "scatters any rows on the template (templates/specs/gemm_rs.pk.cpp); ") +
                         (zeroFill ? "the spec's zero fill of the output before the loop becomes a "
                                     "memset on the rank's stream ahead of the launch, which the "
                                     "ready signals order before every peer's first add"
                                   : "the tiles are added into the output's contents, as store_add "
                                     "is everywhere (a loop storing zeros into all of it before "
                                     "this one gives the sum alone, as a memset)"));
    } else if (scatter) {
      if (scatter.getKind() != ReduceKind::sum)
        return scatter.emitError("GEMM + reduce-scatter: the fused template reduce-adds every tile into "
                                 "its owner, which implements <sum> only, not <")
               << stringifyReduceKind(scatter.getKind()) << ">; reduce-scatter the product in a separate kernel";
      if (!isScratchArgument(store.getDest()))
        return store.emitError("GEMM + reduce-scatter: the fused template never writes the product that "
                               "feeds the reduce-scatter, but this store's tensor is a plain argument the "
                               "caller may read; declare it Scratch<T, Rank> (`{pk.scratch}`) to allow "
                               "that, or reduce-scatter in a separate kernel");
      job = "gemm_rs";
      if (failed(index("a", a)) || failed(index("c", scatter.getOutput()))) return failure();
      fact("zero_out", UnitAttr::get(ctx));  // the output is the sum alone
      fact("scatter", UnitAttr::get(ctx));
      dropDecisions(scatter);
      recordDecision(scatter, "rule 2 (overlap)",
                     "intra_sm, fused with the GEMM (gemm_rs template): the reduce-scatter's input is "
                     "produced tile by tile by the loop, so the storer reduce-adds each finished 64x64 "
                     "bf16 box into its owner's rows by cp.reduce.async.bulk.tensor (the scratch product "
                     "is never written); each owner's rows in 128-row tiles, alternating owners from "
                     "rank + 1; the output is zeroed by a memset on the rank's stream ahead of the "
                     "launch, which the ready signals order before every peer's first add");
      consumed.push_back(scatter);
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
      auto typeName = [](Type t) {
        return t.isF16()                  ? "f16"
               : t.isF32()                ? "f32"
               : isa<Float8E4M3FNType>(t) ? "e4m3"
               : isa<Float8E5M2Type>(t)   ? "e5m2"
               : t.isSignlessInteger(8)   ? "i8"
               : t.isSignlessInteger(32)  ? "i32"
                                          : "bf16";
      };
      fact("in", StringAttr::get(ctx, typeName(g->in)));
      if (g->inB != g->in) fact("in_b", StringAttr::get(ctx, typeName(g->inB)));  // fp8 may mix
      fact("out", StringAttr::get(ctx, typeName(g->out)));
      if (g->aMMajor) fact("a_layout", StringAttr::get(ctx, "km"));
      if (g->epilogue) fact("epilogue", g->epilogue);
      if (g->batch) fact("batched", UnitAttr::get(ctx));
      if (g->sharedB) fact("shared_b", UnitAttr::get(ctx));
      if (g->trailA) {
        if (failed(index("a2", g->trailA.getSource())) || failed(index("b2", g->trailB.getSource())))
          return failure();
        fact("trail_cols", IntegerAttr::get(IntegerType::get(ctx, 64), g->trailCols));
      }
    }
    if (failed(accountForEffects(kernel, *g, consumed, job))) return failure();
    fact("job", StringAttr::get(ctx, job));
    std::string variant;
    if (job != "gemm" && g->bNMajor) variant = ", B stored [K, N] (C = A * B: 64x64 N-major TMA boxes, four per stage)";
    if (job == "gemm") {
      llvm::raw_string_ostream os(variant);
      os << ", " << g->in;
      if (g->in != g->inB) os << " and " << g->inB;
      os << " operands, " << (g->aMMajor ? "A stored [K, M] (read transposed), " : "") << "B stored "
         << (g->bNMajor ? "[K, N] (C = A * B)" : "[N, K] (C = A * B^T)")
         << ", " << g->out << " output";
      if (g->batch)
        os << ", batched: one product per index of the operands' first dimension (the tile order "
              "walks each batch's tiles in turn; 3-D TMA maps, so a tile clips at its batch's last "
              "row and column)"
           << (g->sharedB ? "; B is one 2-D weight that every batch multiplies by (a 2-D TMA map)" : "");
      if (g->epilogue)
        os << ", an element-wise epilogue of " << g->epilogue.size() << " steps applied to the "
           << (g->in.isSignlessInteger(8) ? "s32" : "fp32") << " accumulators in the consumers' registers";
      if (g->trailA)
        os << "; the product after the K loop (" << g->trailCols << " more K columns of its own operands) "
              "streams through the ring as further K steps into the same accumulators";
      if (g->widenB)
        os << "; the " << (isFp8(g->inB) ? "fp8" : "i8") << " B is widened to " << g->in << " in the ring (its 256x64 box lands in the stage's B "
              "slot and the consumer warpgroups rewrite it as wgmma's operand while the previous K step's "
              "wgmma runs; exact)";
      const bool fp8 = isFp8(g->in), int8 = g->in.isSignlessInteger(8);
      const int64_t step = fp8 || int8 ? 2 * kBK : kBK;  // 128 bytes of each row
      if (fp8)
        os << "; fp8 wgmma (m64n256k32), stepping K by 128 fp8 elements (the same 128 bytes a "
              "row as bf16's 64; TMA moves the operands as 2-byte units)";
      if (int8)
        os << "; int8 wgmma (m64n256k32 s8, exact s32 accumulators), stepping K by 128 i8 elements (the same "
              "128 bytes a row as bf16's 64; TMA moves the operands as 2-byte units)";
      if (g->bm != kBM || g->bn != kBN || g->bk != step)
        os << "; the spec's " << g->bm << "x" << g->bn << " tiles stepping K by " << g->bk
           << " are retiled to the template's 128x256x" << step << " (exact: every output element depends only "
              "on its row of A and column of B, the epilogue works element by element, and only "
              "the order of the fp32 additions over K changes)";
    } else if (g->bm != kBM || g->bn != kBN || g->bk != kBK) {
      variant += "; the spec's " + std::to_string(g->bm) + "x" + std::to_string(g->bn) + " tiles stepping K by " +
                 std::to_string(g->bk) + " are retiled to the template's 128x256x64 (exact: every output element "
                 "depends only on its row of A and column of B; only the order of the fp32 additions over K changes)";
    }
    // A GEMM kernel (plain or fused, or one launch of a split kernel) keeps a general-path twin
    // for sizes the template's TMA cannot take (K or N not whole 16-byte rows, a misaligned
    // base): launches choose it at run time.
    std::string fallback;
    if (kernel->getBlock()) {
      fallback = (kernel.getSymName() + "__general").str();
      if (Operation *taken = SymbolTable::lookupNearestSymbolFrom(kernel, StringAttr::get(ctx, fallback))) {
        // The spec's own kernel of that name would silently take the twin's place (and the
        // template launch would lose its fallback): refused, as the launches' names are.
        if (!taken->hasAttr(kGeneralFor))
          return taken->emitError("pkc names the general-path twin of GEMM kernel '")
                 << kernel.getSymName() << "' '" << fallback << "', but the spec already has a kernel of that "
                 << "name; rename it";
        fallback.clear();
      } else {
        auto twin = pristine;
        pristine = nullptr;
        twin.setSymName(fallback);
        twin->setAttr(kGeneralFor, StringAttr::get(ctx, kernel.getSymName()));
        twin.walk([&](TileForeachOp l) {
          bool hasMma = false;
          l.walk([&](TileMmaOp) { hasMma = true; });
          if (hasMma)
            recordDecision(l, "template",
                           "general tile path (register tiles, pk/tile/mma.cuh): the twin of " +
                               kernel.getSymName() + " that its launches take when the sizes break the "
                               "template's own rules (TMA rows and bases; tiles inside one owner)");
        });
        kernel->getBlock()->getOperations().insertAfter(kernel->getIterator(), twin);
        fact("fallback", StringAttr::get(ctx, fallback));
        variant += "; sizes the template cannot take (K or N not whole 16-byte rows, a base not "
                   "16-byte aligned" + std::string(ownerTiles ? ", a tile crossing owners" : "") +
                   ") launch the general-path twin " + fallback + " instead";
      }
    }
    if (job == "gemm" && !splitK) {
      fact("no_split_k", UnitAttr::get(ctx));
      variant += "; every tile on one block (--split-k=false)";
    } else if (job == "gemm")
      variant += "; an output of fewer tiles than the SMs (few rows: decoding) is split over K at launch, up to 16 "
                 "pieces of at least 4 K steps per tile, whose partial sums the last piece to finish adds in piece "
                 "order (the same bits every run) before the epilogue";
    const std::string mmaForm = g->in.isSignlessInteger(8) ? "wgmma m64n256k32 s8, s32 accumulators"
                                                          : "wgmma m64n256k16, fp32 accumulators";
    recordDecision(loop, "template",
                   job + ": persistent LCSC kernel, 128x256x64 tiles, 4-stage TMA ring, 2 consumer "
                   "warpgroups (" + mmaForm + ", 232 registers) and a loader/"
                   "storer warpgroup (40 registers), L2 groups of 8 row tiles" + variant);
    for (Operation *op : consumed) markLowered(op);
    becomeTemplateInstance(kernel, "pk.gemm", DictionaryAttr::get(ctx, facts));
    return success();
  }

  // Whether the kernel's only effects are this rank's tile stores (the plain GEMM template's
  // case; any other effect is one a fused template must implement).
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
    SmallVector<KernelOp> kernels;
    getOperation().walk([&](KernelOp kernel) { kernels.push_back(kernel); });
    for (KernelOp kernel : kernels) {
      TileForeachOp gemmLoop;
      kernel.walk([&](TileForeachOp loop) {
        bool hasMma = false;
        loop.walk([&](TileMmaOp) { hasMma = true; });
        if (hasMma) gemmLoop = loop;
      });
      if (!gemmLoop) continue;
      if (!localTemplates) {
        recordDecision(gemmLoop, "template",
                       "general tile path (register tiles, pk/tile/mma.cuh): templates are off "
                       "(--templates=false)");
        continue;
      }
      if (auto of = kernel->getAttrOfType<StringAttr>(kGeneralFor)) {
        recordDecision(gemmLoop, "template",
                       "general tile path (register tiles, pk/tile/mma.cuh): the twin of " +
                           of.getValue() + " that its launches take when the sizes break the "
                           "template's own rules (TMA rows and bases; tiles inside one owner)");
        continue;
      }
      // A GEMM-like loop (an mma in a range loop carrying one accumulator) keeps its GEMM reason
      // beside an attention one whatever its shape (looked at before lowering, which replaces
      // the loop).
      bool gemmLike = false;
      gemmLoop.walk([&](TileMmaOp mma) {
        auto k = mma->getParentOfType<scf::ForOp>();
        gemmLike |= k && k.getNumRegionIterArgs() == 1;
      });
      // Try the template quietly; on a mismatch keep the loop for the general path and say why.
      std::string why;
      LogicalResult lowered = failure();
      {
        ScopedDiagnosticHandler capture(kernel.getContext(), [&](Diagnostic &d) {
          if (why.empty()) why = d.str();
          return success();
        });
        lowered = lower(kernel, gemmLoop, *profile, splitK);
      }
      // A kernel that communicates keeps its phases in order on the general path too (grid-wide
      // barriers, or pk-split-launches' launches when a template takes a phase on its own).
      // One reason per loop: a loop that is not GEMM-shaped (the tile loop's structure failed)
      // which pk-lower-attention already explained keeps that reason alone; a GEMM-shaped one
      // keeps the GEMM reason alone.
      bool explainedAsAttention = false;
      for (const std::string &d : getDecisions(kernel))
        explainedAsAttention |= d.find("not the attention template") != std::string::npos &&
                                d.find(formatLocation(gemmLoop.getLoc())) != std::string::npos;
      const bool gemmShaped = !StringRef(why).starts_with("GEMM tile loop:");
      if (mlir::failed(lowered) && explainedAsAttention && gemmShaped) dropDecisions(gemmLoop, "template");
      if (mlir::failed(lowered) && (!explainedAsAttention || gemmShaped || gemmLike))
        recordDecision(gemmLoop, "template",
                       Twine("general tile path (register tiles, pk/tile/mma.cuh): the loop does not "
                             "take ") + (computesLocally(kernel) ? "the Hopper GEMM template: " : "a fused GEMM template: ") + why);
    }
  }
};

} // namespace

bool mlir::pk::isLocalGemmKernel(KernelOp kernel) {
  TileForeachOp gemmLoop;
  int loops = 0;
  kernel.walk([&](TileForeachOp loop) {
    bool hasMma = false;
    loop.walk([&](TileMmaOp) { hasMma = true; });
    if (hasMma) gemmLoop = loop, ++loops;
  });
  if (loops != 1 || !LowerGemm::computesLocally(kernel)) return false;
  ScopedDiagnosticHandler quiet(kernel.getContext(), [](Diagnostic &) { return success(); });
  FailureOr<GemmLoop> g = matchGemmLoop(kernel, gemmLoop);
  return succeeded(g) && succeeded(checkBounds(*g));
}

std::string mlir::pk::whyNotFusedGemm(KernelOp kernel) {
  auto copy = cast<KernelOp>(kernel->clone());
  TileForeachOp gemmLoop;
  copy.walk([&](TileForeachOp loop) {
    bool hasMma = false;
    loop.walk([&](TileMmaOp) { hasMma = true; });
    if (hasMma) gemmLoop = loop;
  });
  std::string why, error;
  auto profile = ::pk::loadProfileOrBuiltin("", error);
  {
    ScopedDiagnosticHandler capture(kernel.getContext(), [&](Diagnostic &d) {
      if (why.empty()) why = d.str();
      return success();
    });
    if (!gemmLoop) why = "no GEMM loop";
    else if (profile && succeeded(LowerGemm::lower(copy, gemmLoop, *profile, true))) why.clear();
    else if (why.empty()) why = error.empty() ? "the loop is not a GEMM loop" : error;
  }
  copy->erase();
  return why;
}

// Recognises a forward-attention tile loop (online softmax over key/value tiles, optionally
// causal) by its data flow and lowers the kernel to the Hopper attention template
// (templates/include/pk/templates/attention.cuh), recording why; a loop that differs in any
// step stays on the general tile path, and --explain says which step did not match.
#include "pk/Passes/Decisions.h"
#include "pk/Passes/EffectLedger.h"
#include "pk/Passes/Passes.h"
#include "pk/Passes/TemplateInstance.h"
#include "ElementProgram.h"
#include "pk/Passes/HostExpr.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKLOWERATTENTIONPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

// What the matcher found; `why` names the first step that did not match.
struct AttentionLoop {
  TileForeachOp loop;
  TileLoadOp loadQ, loadK, loadV;
  TileStoreOp storeO, storeLse;  // storeLse may be null
  int64_t d = 0;
  Type elem;           // q, k, v, p and o: bf16 or f16
  bool heads = false;  // [H, S, D] tensors, one head per tile (else [S, D])
  // With heads: q, k, v and o token-major, [S, H, D] (flash-attn's and Ulysses' layout), loaded at
  // [m, h, 0] as [rows, 1, D] tiles and stored there.
  bool tokenMajor = false;
  bool causal = false;
  // Grouped-query attention: K and V are read at head h / G, G a host expression (groupExpr;
  // "" when at head h). groupRatio: G is q's heads / k's (or v's) heads exactly, so the launch
  // checks that q's heads are G times theirs.
  std::string groupExpr;
  bool groupRatio = false;
  // K and V stacked among other heads (a ring's two slots, [2H, S, D]): read at head
  // kvHead0 + h (or + h / G), kvHead0 a host expression; "0" when not.
  std::string kvHead0 = "0";
  // V's own offset where it differs from K's (packed q / k / v heads: k at H + h, v at 2H + h).
  std::string vHead0 = "0";
  Value scale;  // a kernel argument, or null with scaleValue
  double scaleValue = 0;
  // Scores that are not q k^T * scale under the standard masks: the program mapping each raw
  // score to the softmax's input (the scale, ALiBi, soft-capping, extra mask factors), or null.
  ArrayAttr scoreMap;
  // A scale computed from scalars alone (rsqrt(float(q.cols())), 0.125f / temp): its program,
  // evaluated once per launch; the scores stay scale * q k^T, with no per-element map.
  ArrayAttr scaleMap;
  // A mask factor col > row - W (or row - col < W) with W an integer the host knows: the host
  // expression of W, so the template skips key steps before a block's window.
  std::string keyWindow;
  // A causal mask against a KV cache, col <= row + E (E an integer the host knows, k.rows() -
  // q.rows() for new queries after past keys): E's host expression ("0": the plain causal mask).
  // Its factor stays in the score map, which masks as the spec does; the template skips the
  // key steps after a block's last row's reach (none at run time where E < 0).
  std::string causalOffset = "0";
};

struct Mismatch {
  std::string why;
};

bool isMap(Value v, MapKind kind, Value &x, Value &y) {
  auto map = v.getDefiningOp<TileMapOp>();
  if (!map || map.getKind() != kind || map.getInputs().size() != 2) return false;
  x = map.getInputs()[0];
  y = map.getInputs()[1];
  return true;
}
bool isUnary(Value v, MapKind kind, Value &x) {
  auto map = v.getDefiningOp<TileMapOp>();
  if (!map || map.getKind() != kind || map.getInputs().size() != 1) return false;
  x = map.getInputs()[0];
  return true;
}
// A commutative map of `a` and something: returns the other operand, or null.
Value otherOf(Value v, MapKind kind, Value a) {
  Value x, y;
  if (!isMap(v, kind, x, y)) return {};
  return x == a ? y : y == a ? x : Value();
}
// The larger of x and y, written max(x, y) or where(x > y, x, y) (>=, or < / <= with the sides
// swapped): its two sides, or false. The template takes either as its fmaxf (they differ only
// where a side is NaN, where the attention's output is NaN anyway).
bool isMaxOf(Value v, Value &x, Value &y) {
  if (isMap(v, MapKind::max, x, y)) return true;
  auto select = v.getDefiningOp<TileSelectOp>();
  auto cmp = select ? select.getCond().getDefiningOp<TileMapOp>() : TileMapOp();
  if (!cmp || cmp.getInputs().size() != 2) return false;
  Value a = cmp.getInputs()[0], b = cmp.getInputs()[1];
  const MapKind k = cmp.getKind();
  if (k == MapKind::lt || k == MapKind::le) std::swap(a, b);
  else if (k != MapKind::gt && k != MapKind::ge) return false;
  if (select.getOnTrue() != a || select.getOnFalse() != b) return false;
  x = a;
  y = b;
  return true;
}
// The side of the running max v that is not `a`.
Value otherOfMax(Value v, Value a) {
  Value x, y;
  if (!isMaxOf(v, x, y)) return {};
  return x == a ? y : y == a ? x : Value();
}
std::optional<double> splatConstant(Value v) {
  auto splat = v.getDefiningOp<TileSplatOp>();
  if (!splat) return std::nullopt;
  APFloat value(0.0);
  if (matchPattern(splat.getScalar(), m_ConstantFloat(&value))) return value.convertToDouble();
  return std::nullopt;
}
// v is acc / l, or acc * (1 / l) (either order): the template's own form, a reciprocal per row
// and a product per element.
bool isNormalised(Value v, Value acc, Value l) {
  Value x, y;
  if (isMap(v, MapKind::div, x, y)) return x == acc && y == l;
  if (!isMap(v, MapKind::mul, x, y)) return false;
  if (y == acc) std::swap(x, y);
  Value one, den;
  return x == acc && isMap(y, MapKind::div, one, den) && den == l && splatConstant(one) == 1.0;
}
bool isZeros(Value v) { return v.getDefiningOp<TileZerosOp>() != nullptr; }
// A very negative start for the running maximum or a mask fill: -10000 and below (HF's -1e4,
// -1e9, -1e30, the lowest float, -inf) act as -inf, since exp of it less any score above -9900
// underflows to 0 in fp32.
constexpr double kHugeFill = 1e4;
std::optional<double> minusHuge(Value v) {
  if (std::optional<double> c = splatConstant(v)) return *c <= -kHugeFill ? c : std::nullopt;
  Value x, y;  // zeros - huge, as `zeros<f32, R, 1>() - 1e30f` writes it
  if (isMap(v, MapKind::sub, x, y) && isZeros(x))
    if (std::optional<double> c = splatConstant(y); c && *c >= kHugeFill) return -*c;
  return std::nullopt;
}
bool isMinusHuge(Value v) { return minusHuge(v).has_value(); }
// Whether `v` is 0 or 1 everywhere: a comparison, or a product or min of such.
bool isMask(Value v) {
  auto map = v.getDefiningOp<TileMapOp>();
  if (!map) return false;
  switch (map.getKind()) {
  case MapKind::lt: case MapKind::le: case MapKind::gt: case MapKind::ge: case MapKind::eq: case MapKind::ne:
    return true;
  case MapKind::mul: case MapKind::min:
    return isMask(map.getInputs()[0]) && isMask(map.getInputs()[1]);
  default:
    return false;
  }
}
// The factors of a product of masks, m1 * m2 * ... in any grouping (a min of masks is their
// product).
void maskFactors(Value v, SmallVectorImpl<Value> &out) {
  Value x, y;
  if (isMap(v, MapKind::mul, x, y) || (isMap(v, MapKind::min, x, y) && isMask(x) && isMask(y))) {
    maskFactors(x, out);
    maskFactors(y, out);
  } else {
    out.push_back(v);
  }
}
// The mma_t ops the scores are computed from, inside `region`.
void scoreProducts(Value v, Region &region, SmallVectorImpl<TileMmaOp> &out, llvm::SmallPtrSetImpl<Operation *> &seen) {
  Operation *op = v.getDefiningOp();
  if (!op || !region.isAncestor(op->getParentRegion()) || !seen.insert(op).second) return;
  if (auto mma = dyn_cast<TileMmaOp>(op)) {
    out.push_back(mma);
    return;
  }
  for (Value operand : op->getOperands()) scoreProducts(operand, region, out, seen);
}
bool isZeroIndex(Value v) { return getConstantIntValue(v) == 0; }
bool isKernelArg(KernelOp kernel, Value v) { return kernelArgIndex(kernel, v) >= 0; }
// A 2-D tile of rows x cols of `elem` (f32 when null).
bool isTile(Type t, int64_t rows, int64_t cols, Type elem = Type()) {
  auto tile = dyn_cast<TileType>(t);
  return tile && tile.getRank() == 2 && tile.getShape()[0] == rows && tile.getShape()[1] == cols &&
         (elem ? tile.getElementType() == elem : tile.getElementType().isF32());
}
// iota along `dim` from `origin`: col_index<..>(n) is dim 1, row_index<..>(m) dim 0, spanning the
// tile along it (one of extent 1 is the tile's origin broadcast, not each element's index).
bool isIota(Value v, Value origin, int64_t dim) {
  auto iota = v.getDefiningOp<TileIotaOp>();
  return iota && iota.getOrigin() == origin && int64_t(iota.getDim()) == dim &&
         cast<TileType>(iota.getType()).getShape()[dim] > 1;
}
// splat(float(k.rows())): the key count as the mask compares it.
bool isKeyCount(Value v, Value k, int64_t rowsDim) {
  auto splat = v.getDefiningOp<TileSplatOp>();
  if (!splat) return false;
  Value s = splat.getScalar();
  if (auto f = s.getDefiningOp<arith::SIToFPOp>()) s = f.getIn();
  else if (auto f = s.getDefiningOp<arith::UIToFPOp>()) s = f.getIn();
  else return false;
  if (auto c = s.getDefiningOp<arith::IndexCastOp>()) s = c.getIn();
  return isDimOf(s, k, rowsDim);
}

// Where a 3-D tensor's head index sits: [H, S, D] (0) or token-major [S, H, D] (1).
unsigned headPos(bool tokenMajor) { return tokenMajor ? 1 : 0; }

// A register tile loaded at [head, row, 0] (3-D, through a reshape that drops the head's 1),
// [row, head, 0] (token-major), or [row, 0] (2-D, head null); null otherwise.
TileLoadOp rowsLoad(Value tile, Value head, Value row, bool tokenMajor = false) {
  if (head) {
    auto reshape = tile.getDefiningOp<TileReshapeOp>();
    if (!reshape) return {};
    tile = reshape.getInput();
  }
  auto load = tile.getDefiningOp<TileLoadOp>();
  if (!load) return {};
  ValueRange at = load.getIndices();
  const unsigned hp = headPos(tokenMajor);
  const bool ok = head ? at.size() == 3 && at[hp] == head && at[1 - hp] == row && isZeroIndex(at[2]) &&
                             load.getType().getShape()[hp] == 1
                       : at.size() == 2 && at[0] == row && isZeroIndex(at[1]);
  return ok ? load : TileLoadOp();
}
// The load a tile comes from, through the reshape a 3-D tensor's load takes; or null.
TileLoadOp loadOf(Value tile) {
  if (auto reshape = tile.getDefiningOp<TileReshapeOp>()) tile = reshape.getInput();
  return tile.getDefiningOp<TileLoadOp>();
}
// The head index of a 3-D load (through its reshape), or null.
Value loadHead(Value tile, bool tokenMajor = false) {
  if (!tile.getDefiningOp<TileReshapeOp>()) return {};
  TileLoadOp load = loadOf(tile);
  return load && load.getIndices().size() == 3 ? load.getIndices()[headPos(tokenMajor)] : Value();
}
// h / G, with G anything the host knows (an integer argument, q.dim(0) / k.dim(0), a ring's
// q.dim(0) / (k.dim(0) / 2)): the K/V head of query head h in grouped-query attention. Sets
// `group` to G's host expression and `ratio` where G is exactly q's heads / x's heads (x a
// kernel tensor), whose launch check can be the exact one.
bool isGroupHead(KernelOp kernel, Value v, Value h, Value q, std::string &group, bool &ratio, unsigned hd) {
  Operation *div = v.getDefiningOp();
  if (!div || !isa<arith::DivSIOp, arith::DivUIOp>(div) || div->getOperand(0) != h) return false;
  Value g = div->getOperand(1);
  std::optional<::pk::HostExpr> e = hostExprOf(g, kernel.getBody().front());
  if (!e) return false;
  group = ::pk::print_host_expr(*e);
  ratio = false;
  if (Operation *r = g.getDefiningOp(); r && isa<arith::DivSIOp, arith::DivUIOp>(r) && isDimOf(r->getOperand(0), q, hd))
    if (auto dim = r->getOperand(1).getDefiningOp<DimOp>())
      ratio = dim.getDimAttr().getInt() == int64_t(hd) && kernelArgIndex(kernel, dim.getTensor()) >= 0;
  return true;
}

// G in words for --explain: the heads' ratio, an argument, else its host expression.
std::string describeGroup(const AttentionLoop &a) {
  if (a.groupRatio) return "q's heads / k's heads";
  const std::string &g = a.groupExpr;
  if (g.rfind("arg(", 0) == 0 && g.find(',') == std::string::npos)
    return "argument #" + g.substr(4, g.size() - 5);
  return g;
}

// The K/V head of query head h: h, h / G (grouped-query attention, setting `group` to G's host
// expression and `ratio`), or either plus an offset the host knows (`offset`, its host expression).
bool isKvHead(KernelOp kernel, Value v, Value h, Value q, std::string &group, bool &ratio, std::string &offset,
              unsigned hd = 0) {
  auto base = [&](Value b) { return b == h || isGroupHead(kernel, b, h, q, group, ratio, hd); };
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    for (int i : {0, 1}) {
      std::optional<::pk::HostExpr> off =
          hostExprOf(add->getOperand(1 - i), kernel.getBody().front(), /*withRank=*/true);
      if (off && base(add->getOperand(i))) {
        offset = ::pk::print_host_expr(*off);
        return true;
      }
    }
  offset = "0";
  return base(v);
}

// The 2-D tile a load gives (after its reshape for 3-D tensors: the head's dimension dropped).
TileType rowsTile(TileLoadOp load, bool tokenMajor = false) {
  TileType t = load.getType();
  if (t.getRank() != 3) return t;
  SmallVector<int64_t> shape(t.getShape());
  shape.erase(shape.begin() + headPos(tokenMajor));
  return TileType::get(t.getContext(), shape, t.getElementType(), t.getMemorySpace());
}

// The whole match; fails with the step that differs.
FailureOr<AttentionLoop> match(KernelOp kernel, TileForeachOp loop, Mismatch &mm) {
  auto fail = [&](const Twine &why) {
    mm.why = why.str();
    return failure();
  };
  AttentionLoop a;
  a.loop = loop;
  // (m) over [S, D] tensors, or (h, m) stepping one head at a time over [H, S, D] ones.
  a.heads = loop.getSteps().size() == 2 && loop.getSteps()[0] == 1;
  if (loop.getSteps().size() != 1 && !a.heads)
    return fail("the loop does not step over query rows, or over heads one at a time and their rows");
  const int64_t bm = loop.getSteps().back();
  Block &body = loop.getBody().front();
  Value h = a.heads ? body.getArgument(0) : Value(), m = body.getArguments().back();
  int64_t rowsDim = a.heads ? 1 : 0;
  scf::ForOp kv;
  for (Operation &op : body)
    if (auto f = dyn_cast<scf::ForOp>(op)) {
      if (kv) return fail("more than one key/value loop");
      kv = f;
    }
  if (!kv || kv.getNumRegionIterArgs() != 3) return fail("no key/value loop carrying three tiles (max, sum, output)");
  std::optional<int64_t> bn = getConstantIntValue(kv.getStep());
  if (!bn || !isZeroIndex(kv.getLowerBound())) return fail("the key loop must run from 0 in constant steps");
  Value n = kv.getInductionVar();
  auto yield = cast<scf::YieldOp>(kv.getBody()->getTerminator());
  // Roles of the carried tiles, from what the loop yields for them.
  int accI = -1, mxI = -1, lI = -1;
  for (int i = 0; i < 3; ++i) {
    Value y = yield.getOperand(i);
    if (y.getDefiningOp<TileMmaOp>()) accI = i;
    else if (Value x0, x1; isMaxOf(y, x0, x1)) mxI = i;
    else lI = i;
  }
  if (accI < 0 || mxI < 0 || lI < 0) return fail("the key loop must yield an mma, a running max and a running sum");
  Value accIn = kv.getRegionIterArgs()[accI], mxIn = kv.getRegionIterArgs()[mxI], lIn = kv.getRegionIterArgs()[lI];
  // The running max: max(mx, row_max(s)).
  Value mxNew = yield.getOperand(mxI);
  Value rowMax = otherOfMax(mxNew, mxIn);
  auto reduceMax = rowMax ? rowMax.getDefiningOp<TileReduceRowsOp>() : TileReduceRowsOp();
  if (!reduceMax || reduceMax.getKind() != ReduceKind::max) return fail("the running max is not max(m, row_max(s))");
  Value s = reduceMax.getInput();
  // The masked scores: where(mask, scores, -huge), scores = scale * (q k^T) or any element-wise
  // map of q k^T (a score map).
  auto select = s.getDefiningOp<TileSelectOp>();
  if (Value x, y; !select && isMap(s, MapKind::mul, x, y))
    for (Value side : {x, y})
      if (auto masked = side.getDefiningOp<TileSelectOp>(); masked && isMinusHuge(masked.getOnFalse()))
        return fail("the scores are masked before they are scaled by a value pkc cannot fold (a constant "
                    "scale is folded): row_max must read where(mask, scores, -huge); write where(mask, s * "
                    "scale, -huge)");
  if (!select || !isMinusHuge(select.getOnFalse()))
    return fail("the scores are not masked to a very negative value, -10000 or below (keys past the end would count)");
  const double maskedValue = *minusHuge(select.getOnFalse());
  Value scaled = select.getOnTrue();
  // The masks may also be nested selects, where(m1, where(m2, s, -huge), -huge), which is one
  // select of their product (with different huge fills too: every fill gives a masked key the
  // weight 0 in a row that has a visible key, and a row with none has no defined softmax).
  SmallVector<Value> factors;
  maskFactors(select.getCond(), factors);
  while (auto inner = scaled.getDefiningOp<TileSelectOp>()) {
    if (!isMinusHuge(inner.getOnFalse())) break;  // a select inside the score map
    maskFactors(inner.getCond(), factors);
    scaled = inner.getOnTrue();
  }
  Value x, y;
  SmallVector<TileMmaOp> products;
  llvm::SmallPtrSet<Operation *, 16> seen;
  scoreProducts(scaled, kv.getRegion(), products, seen);
  if (products.size() != 1) return fail("the scores are not computed from one mma_t(q, k, zeros)");
  TileMmaOp qk = products.front();
  if (!qk.getTransposeB() || !isZeros(qk.getAcc())) return fail("the scores are not mma_t(q, k, zeros)");
  // Token-major [S, H, D]: q loaded at [m, h, 0] (then k, v and o are too).
  if (TileLoadOp ql = loadOf(qk.getA()); a.heads && ql && ql.getIndices().size() == 3 &&
                                         ql.getIndices()[0] == m && ql.getIndices()[1] == h) {
    a.tokenMajor = true;
    rowsDim = 0;
  }
  const bool tm = a.tokenMajor;
  a.loadQ = rowsLoad(qk.getA(), h, m, tm);
  // K and V at head h, or both at h / G (grouped-query attention), either plus an offset the
  // host knows (heads stacked in a larger tensor).
  Value kvHead = h;
  if (TileLoadOp kl = loadOf(qk.getB()); tm && kl && kl.getIndices().size() == 3 && kl.getIndices()[1] == n)
    return fail("q is token-major [S, H, D] (loaded at [m, h, 0]) but k is loaded at [h, n, 0]: the template "
                "takes q, k, v and o in one layout");
  if (a.heads && a.loadQ)
    if (Value at = loadHead(qk.getB(), tm); at && at != h) {
      if (!isKvHead(kernel, at, h, a.loadQ.getSource(), a.groupExpr, a.groupRatio, a.kvHead0, headPos(tm)))
        return fail("k must be loaded at head h, or at h / G for grouped-query attention (G an "
                    "integer the host knows: an argument, q.dim(0) / k.dim(0)), or either plus an "
                    "offset the host knows (c + h: heads stacked in a larger tensor)");
      kvHead = at;
    }
  a.loadK = rowsLoad(qk.getB(), kvHead, n, tm);
  // Name the load that differs: q (its rows, or inside the key loop), then k.
  if (!a.loadQ || a.loadQ->getParentOp() != loop.getOperation()) {
    TileLoadOp load = loadOf(qk.getA());
    if (load && a.heads && load.getIndices().size() != 3)
      return fail("q is a " + Twine(load.getIndices().size()) + "-D tensor loaded one row block per "
                  "head while k is [H, S, D]: the template takes q as [H, S, D] loaded at [h, m, 0] "
                  "(a decode step is q [H, 1, D])");
    // q computed from a load (scaled, cast): the template multiplies q as it is loaded, and a map on
    // the scores cannot repeat the rounding of q's own arithmetic.
    if (!load && qk.getA().getDefiningOp() &&
        isa<TileMapOp, TileCastOp>(qk.getA().getDefiningOp()))
      return fail("q is used after arithmetic on it (" + qk.getA().getDefiningOp()->getName().getStringRef() +
                  "): the template multiplies q as loaded; apply a scale to the scores instead "
                  "(mma_t(q, k, 0) * scale)");
    return fail(a.heads ? "q must be loaded whole rows of the head at [h, m, 0] (or [m, h, 0] for token-major "
                          "[S, H, D] tensors, a [rows, 1, D] tile), outside the key loop"
                        : "q must be loaded whole rows at [m, 0], outside the key loop");
  }
  if (!a.loadK) {
    TileLoadOp load = loadOf(qk.getB());
    if (load && !a.heads && load.getIndices().size() == 3)
      return fail("k is [H, S, D] while the loop steps over rows of a 2-D q: the template's loop over "
                  "heads is tiles(q.dim(0), q.dim(1), {1, BM}) with q [H, S, D] loaded at [h, m, 0] "
                  "(a decode step is q [H, 1, D])");
    return fail(a.heads ? tm ? "k must be loaded whole rows of the head at [n, h, 0] like q (token-major [S, H, D], "
                               "n the key loop's index)"
                             : "k must be loaded whole rows of the head at [h, n, 0] (n the key loop's index)"
                        : "k must be loaded whole rows at [n, 0] (n the key loop's index)");
  }
  a.d = rowsTile(a.loadQ, tm).getShape()[1];
  if (a.d != 64 && a.d != 128) return fail("the head dim is " + Twine(a.d) + "; the template takes 64 and 128");
  // The operands' 16-bit type: bf16 or f16, the same for q, k, v, p and o.
  a.elem = rowsTile(a.loadQ, tm).getElementType();
  if (!a.elem.isBF16() && !a.elem.isF16())
    return fail("q must be a bf16 or f16 tile (the template's wgmma takes 16-bit operands)");
  // The loops' steps are the tiles' rows: a step of other length counts keys twice or leaves
  // query rows unwritten.
  if (rowsTile(a.loadQ, tm).getShape()[0] != bm)
    return fail("the query loop's step (" + Twine(bm) + ") must be q's tile rows (" +
                Twine(rowsTile(a.loadQ, tm).getShape()[0]) + ")");
  if (rowsTile(a.loadK, tm).getShape()[0] != *bn)
    return fail("the key loop's step (" + Twine(*bn) + ") must be k's tile rows (" +
                Twine(rowsTile(a.loadK, tm).getShape()[0]) + ")");
  if (!isTile(rowsTile(a.loadQ, tm), bm, a.d, a.elem) || !isTile(rowsTile(a.loadK, tm), *bn, a.d, a.elem))
    return fail("q, k must be tiles of one type (bf16 or f16) of the loops' rows by the head dim");
  Value k = a.loadK.getSource();
  // The mask: keys before the end, and (causal) keys up to the query.
  auto keysInRange = [&](Value v) {
    Value c, l;
    return isMap(v, MapKind::lt, c, l) && isIota(c, n, 1) && isKeyCount(l, k, rowsDim);
  };
  // A coordinate compared as an integer (cast<i32>(col_index)): the same coordinate.
  auto coord = [](Value v) {
    auto widen = v.getDefiningOp<TileCastOp>();
    Type t = widen ? cast<TileType>(widen.getType()).getElementType() : Type();
    return t && (t.isSignlessInteger(32) || t.isSignlessInteger(64)) ? widen.getInput() : v;
  };
  // An integer comparison's 0 / 1 cast to the mask's type: the comparison itself.
  auto uncastMask = [](Value v) -> Value {
    if (auto mask = v.getDefiningOp<TileCastOp>(); mask && isa<IntegerType>(cast<TileType>(mask.getInput().getType()).getElementType()))
      return mask.getInput();
    return v;
  };
  auto causalMask = [&](Value v) {  // col <= row, or row >= col (an integer comparison's 0 / 1 cast too)
    v = uncastMask(v);
    Value c, r;
    return (isMap(v, MapKind::le, c, r) && isIota(coord(c), n, 1) && isIota(coord(r), m, 0)) ||
           (isMap(v, MapKind::ge, r, c) && isIota(coord(c), n, 1) && isIota(coord(r), m, 0));
  };
  // The template's own masks: keys before the end (required) and, causal, keys up to the query.
  // Any other factor, and scores that are not q k^T * scale, make a score map.
  SmallVector<Value> extra;
  bool keys = false;
  for (Value f : factors) {
    if (!keys && keysInRange(f)) keys = true;
    else if (!a.causal && causalMask(f)) a.causal = true;
    else extra.push_back(f);
  }
  if (!keys)
    return fail("the mask has no factor col < " + std::string(a.heads && !tm ? "k.dim(1)" : "k.rows()") +
                " (keys past the end would count)");
  // A sliding window among the extra factors (it stays in the score map as well): keys j > i - W
  // for a W the host knows, however the comparison is written.
  auto hostInt = [&](Value tile) -> std::string {  // splat(float(integer the host knows)), or a whole constant
    auto splat = tile.getDefiningOp<TileSplatOp>();
    if (!splat) return "";
    if (std::optional<double> c = splatConstant(tile))
      return *c >= 0 && *c == double(int64_t(*c)) && *c < 1e9 ? std::to_string(int64_t(*c)) : "";
    Operation *conv = splat.getScalar().getDefiningOp();
    if (!conv || !isa<arith::SIToFPOp>(conv)) return "";
    std::optional<::pk::HostExpr> e = hostExprOf(conv->getOperand(0), kernel.getBody().front());
    return e ? ::pk::print_host_expr(*e) : "";
  };
  auto plus = [](const std::string &d, const std::string &e) { return d == "0" ? e : "add(" + d + "," + e + ")"; };
  // `v` as row - D (row_index from m, then integers the host knows added or taken away): D.
  std::function<std::string(Value)> rowMinus = [&](Value v) -> std::string {
    if (isIota(v, m, 0)) return "0";
    Value x, y;
    const bool sub = isMap(v, MapKind::sub, x, y);
    if (!sub && !isMap(v, MapKind::add, x, y)) return "";
    if (!sub && rowMinus(x).empty()) std::swap(x, y);  // an integer + row
    std::string d = rowMinus(x), e = hostInt(y);
    if (d.empty() || e.empty()) return "";
    return sub ? plus(d, e) : "sub(" + d + "," + e + ")";
  };
  auto isRowMinusCol = [&](Value v) {
    Value i, j;
    return isMap(v, MapKind::sub, i, j) && isIota(i, m, 0) && isIota(j, n, 1);
  };
  auto windowOf = [&](Value f) -> std::string {
    Value x, y;
    auto kind = f.getDefiningOp<TileMapOp>() ? f.getDefiningOp<TileMapOp>().getKind() : MapKind::add;
    if (!isMap(f, kind, x, y)) return "";
    // Written with the key on the right: the same comparison mirrored.
    if (isIota(y, n, 1) || isRowMinusCol(y)) {
      std::swap(x, y);
      kind = swappedComparison(kind);
    }
    if (isIota(x, n, 1)) {  // col > row - D (W = D) or col >= row - D (W = D + 1)
      std::string d = rowMinus(y);
      if (d.empty() || d == "0" || (kind != MapKind::gt && kind != MapKind::ge)) return "";
      return kind == MapKind::gt ? d : plus(d, "1");
    }
    if (isRowMinusCol(x)) {  // row - col < W, or row - col <= W - 1
      std::string w = hostInt(y);
      if (w.empty() || (kind != MapKind::lt && kind != MapKind::le)) return "";
      return kind == MapKind::lt ? w : plus(w, "1");
    }
    return "";
  };
  // A causal mask shifted by past keys, col <= row + E (or col < row + E + 1, mirrored alike):
  // E's host expression. It stays among the extra factors, so the score map applies it exactly.
  auto causalOffsetOf = [&](Value f) -> std::string {
    f = uncastMask(f);
    Value x, y;
    auto map = f.getDefiningOp<TileMapOp>();
    MapKind kind = map ? map.getKind() : MapKind::add;
    if (!isMap(f, kind, x, y)) return "";
    if (isIota(coord(y), n, 1)) {
      std::swap(x, y);
      kind = swappedComparison(kind);
    }
    if (!isIota(coord(x), n, 1) || (kind != MapKind::le && kind != MapKind::lt)) return "";
    std::string d = rowMinus(coord(y));  // y = row - D
    if (d.empty() || d == "0") return "";
    std::string e = d.rfind("sub(0,", 0) == 0 && d.back() == ')' ? d.substr(6, d.size() - 7) : "sub(0," + d + ")";
    return kind == MapKind::le ? e : "sub(" + e + ",1)";
  };
  if (!a.causal)
    for (Value f : extra)
      if (std::string e = causalOffsetOf(f); !e.empty()) {
        a.causal = true;
        a.causalOffset = e;
        break;
      }
  // A bound above the query (col > row + 5: D negative whatever the arguments) is no window.
  for (Value f : extra)
    if (std::string w = windowOf(f); a.keyWindow.empty() && w.rfind("sub(0,", 0) != 0) a.keyWindow = w;
  auto scaleOf = [&](Value v) -> Value {
    if (!isMap(v, MapKind::mul, x, y)) return {};
    return x == qk.getResult() ? y : y == qk.getResult() ? x : Value();
  };
  Value scaleTile = scaleOf(scaled);
  auto scaleSplat = scaleTile ? scaleTile.getDefiningOp<TileSplatOp>() : TileSplatOp();
  const bool plainScale = scaleSplat && (splatConstant(scaleTile) ||
                                         (isKernelArg(kernel, scaleSplat.getScalar()) && scaleSplat.getScalar().getType().isF32()));
  // A computed scale: the program of the scalar alone, if it reads no element, row, column or
  // head (else it is part of the score map below).
  auto scaleProgram = [&]() -> ArrayAttr {
    if (!extra.empty() || !scaleSplat || plainScale || !scaleSplat.getScalar().getType().isF32()) return {};
    llvm::SmallPtrSet<Operation *, 16> ops;
    std::string why;
    ElementProgram program({kernel, qk.getResult(), m, n, bm, *bn, h, "scale"}, ops, why);
    if (program.value(scaleTile) < 0) return {};
    ArrayAttr steps = program.steps();
    for (Attribute step : steps) {
      StringRef op = cast<StringAttr>(cast<DictionaryAttr>(step).get("op")).getValue();
      if (llvm::is_contained({"acc", "iota", "load", "head"}, op)) return {};
    }
    return steps;
  };
  if (extra.empty() && plainScale) {
    if (std::optional<double> c = splatConstant(scaleTile)) a.scaleValue = *c;
    else a.scale = scaleSplat.getScalar();
  } else if (ArrayAttr steps = scaleProgram()) {
    a.scaleMap = steps;
    a.scaleValue = 1.0;
  } else {
    // The score map: where(extra factors, scores, -huge) per element, the template's masks after it.
    llvm::SmallPtrSet<Operation *, 16> ops;
    std::string why;
    ElementProgram program({kernel, qk.getResult(), m, n, bm, *bn, h, "score map"}, ops, why);
    int64_t score = program.value(scaled);
    if (!extra.empty()) {
      int64_t cond = program.value(extra.front());
      for (Value f : ArrayRef<Value>(extra).drop_front()) cond = program.map(MapKind::mul, cond, program.value(f));
      // In log2 units (x log2(e)) the lowest floats would overflow to -inf, and a row masked
      // wholly would give NaN where the spec gives its average: a fill below -FLT_MAX / log2(e)
      // takes that bound, which masks alike.
      score = program.select(cond, score, program.constant(std::max(maskedValue, -3.4028234663852886e38 / 1.4426950408889634)));
    }
    if (score < 0) return fail("the scores are not scale * q k^T, and not a score map the template can apply: " + why);
    a.scoreMap = program.steps();
    a.scaleValue = 1.0;
  }
  // The loop covers every key (or, causal, at least those up to the tile's last query).
  Value ub = kv.getUpperBound();
  bool covers = isDimOf(ub, k, rowsDim);
  // Causal: m + c for c at least the query tile's rows, or the smaller of that and the key count.
  auto pastQueries = [&](Value v) {
    auto add = v.getDefiningOp<arith::AddIOp>();
    Value other = !add ? Value() : add.getLhs() == m ? add.getRhs() : add.getRhs() == m ? add.getLhs() : Value();
    std::optional<int64_t> c = other ? getConstantIntValue(other) : std::nullopt;
    return c && *c >= bm;
  };
  if (!covers && a.causal && a.causalOffset == "0") {
    covers = pastQueries(ub);
    if (auto least = ub.getDefiningOp<arith::MinSIOp>())
      covers = (pastQueries(least.getLhs()) && isDimOf(least.getRhs(), k, rowsDim)) ||
               (pastQueries(least.getRhs()) && isDimOf(least.getLhs(), k, rowsDim));
  }
  const std::string keyRows = a.heads && !tm ? "k.dim(1)" : "k.rows()";
  if (!covers)
    return fail(a.causal ? "the key loop must run to " + keyRows + " or to m + the query tile's rows"
                         : "the key loop must run to " + keyRows +
                               " (a loop that stops at the query needs the causal factor col <= row in the mask)");
  // p = exp(s - m_new), corr = exp(m - m_new).
  Value p, corr;
  Value acc = yield.getOperand(accI);
  auto pv = acc.getDefiningOp<TileMmaOp>();
  if (pv.getTransposeB()) return fail("the output update must be mma(p, v, acc * corr)");
  auto pCast = pv.getA().getDefiningOp<TileCastOp>();
  if (!pCast || !isTile(pCast.getType(), bm, *bn, a.elem))
    return fail("p must be cast to q's type (bf16 or f16) for p v");
  p = pCast.getInput();
  if (!isUnary(p, MapKind::exp, x) || !isMap(x, MapKind::sub, x, y) || x != s || y != mxNew)
    return fail("the operand p of mma(p, v, ...) (cast to q's type) is not exp(s - m_new) itself (the template "
                "takes no map between the probabilities and p v: dropout or another mask there runs on the "
                "general path)");
  Value scaledAcc = pv.getAcc();
  corr = otherOf(scaledAcc, MapKind::mul, accIn);
  if (!corr || !isUnary(corr, MapKind::exp, x) || !isMap(x, MapKind::sub, x, y) || x != mxIn || y != mxNew)
    return fail("the output is not rescaled by exp(m - m_new)");
  // V at K's head: the same value, or the same division of h, plus its own offset.
  a.vHead0 = a.kvHead0;
  Value vHead = a.heads ? loadHead(pv.getB(), tm) : Value();
  if (vHead && vHead != kvHead) {
    std::string g, off;
    bool ratio = false;
    const bool same = isKvHead(kernel, vHead, h, a.loadQ.getSource(), g, ratio, off, headPos(tm)) && g == a.groupExpr;
    if (!same) return fail("v must be loaded at k's head (h, or h / G with k's G), plus an offset the host knows");
    a.vHead0 = off;
  }
  a.loadV = rowsLoad(pv.getB(), vHead ? vHead : h, n, tm);
  if (!a.loadV || !isTile(rowsTile(a.loadV, tm), *bn, a.d, a.elem))
    return fail("v must be loaded as tiles of q's type at [n, 0] (or [h, n, 0]) of the head dim's width");
  // l_new = l * corr + row_sum(p).
  Value lNew = yield.getOperand(lI);
  Value sum;
  if (!isMap(lNew, MapKind::add, x, y)) return fail("the running sum is not l * corr + row_sum(p)");
  auto isRowSum = [&](Value v) {
    auto r = v.getDefiningOp<TileReduceRowsOp>();
    return r && r.getKind() == ReduceKind::sum && r.getInput() == p;
  };
  Value scaledL = isRowSum(y) ? x : isRowSum(x) ? y : Value();
  if (!scaledL || otherOf(scaledL, MapKind::mul, lIn) != corr)
    return fail("the running sum is not l * corr + row_sum(p)");
  // Starting values: max -huge, sum and output zero.
  if (!isMinusHuge(kv.getInitArgs()[mxI]) || !isZeros(kv.getInitArgs()[lI]) || !isZeros(kv.getInitArgs()[accI]))
    return fail("the loop must start from max = -huge, sum = 0, output = 0");
  if (!isTile(accIn.getType(), bm, a.d) || !isTile(lIn.getType(), bm, 1) || !isTile(mxIn.getType(), bm, 1))
    return fail("the carried tiles must be f32: output rows x head dim, max and sum rows x 1");
  // Nothing else in the key loop.
  for (Operation &op : kv.getBody()->without_terminator())
    if (hasSpecEffect(&op)) return fail("the key loop computes something the template would drop");
  // After the loop: o = cast<T>(acc / l) at [m, 0], and optionally lse = m + log(l) at [m, 0].
  for (Operation &op : body) {
    auto store = dyn_cast<TileStoreOp>(op);
    if (!store) {
      if (hasSpecEffect(&op)) return fail("the loop has an effect besides its two stores");
      continue;
    }
    ValueRange at = store.getIndices();
    // A rows x 1 column stored at [m] into a 1-D [S] tensor (through a reshape) has [S, 1]'s
    // memory: the log-sum-exp may take that form too.
    const bool column1d = !a.heads && at.size() == 1 && at[0] == m && store.getValue().getDefiningOp<TileReshapeOp>();
    const unsigned hp = headPos(tm);
    if (!column1d && (a.heads ? at.size() != 3 || at[hp] != h || at[1 - hp] != m || !isZeroIndex(at[2])
                              : at.size() != 2 || at[0] != m || !isZeroIndex(at[1])))
      return fail(a.heads ? tm ? "the results must be stored at [m, h, 0], as q is loaded (token-major)"
                               : "the results must be stored at [h, m, 0]"
                          : "the results must be stored at [m, 0]");
    Value v = store.getValue();
    if (column1d) {
      v = v.getDefiningOp<TileReshapeOp>().getInput();
      if (!isTile(v.getType(), bm, 1)) return fail("only the log-sum-exp column may be stored into a 1-D tensor");
    } else if (a.heads) {
      auto reshape = v.getDefiningOp<TileReshapeOp>();
      if (!reshape || cast<TileType>(reshape.getType()).getShape()[hp] != 1)
        return fail("the results must be stored as 2-D tiles into their head");
      v = reshape.getInput();
    }
    if (auto c = v.getDefiningOp<TileCastOp>()) {
      Value lg;
      if (isMap(c.getInput(), MapKind::add, x, y) && (isUnary(x, MapKind::log, lg) || isUnary(y, MapKind::log, lg)))
        return fail("the log-sum-exp must be stored as f32 (m + log(l) into an f32 tensor), not cast");
      if (a.storeO || !isTile(c.getType(), bm, a.d, a.elem) || !isNormalised(c.getInput(), kv.getResult(accI), kv.getResult(lI)))
        return fail("the output must be stored once as cast<T>(acc / l) or cast<T>(acc * (1 / l)), T q's type");
      a.storeO = store;
    } else if (isMap(v, MapKind::add, x, y)) {
      Value lg = x == kv.getResult(mxI) ? y : y == kv.getResult(mxI) ? x : Value();
      Value lArg;
      if (a.storeLse || !lg || !isUnary(lg, MapKind::log, lArg) || lArg != kv.getResult(lI))
        return fail("the log-sum-exp must be stored once as m + log(l)");
      a.storeLse = store;
    } else {
      return fail("a store that is neither the output nor the log-sum-exp");
    }
  }
  if (!a.storeO) return fail("the output is not stored");
  for (Value t : {a.loadQ.getSource(), a.loadK.getSource(), a.loadV.getSource(), a.storeO.getDest()})
    if (!isKernelArg(kernel, t)) return fail("q, k, v and o must be kernel arguments");
  if (a.storeLse && !isKernelArg(kernel, a.storeLse.getDest())) return fail("lse must be a kernel argument");
  if (!isDimOf(loop.getUpperBounds().back(), a.loadQ.getSource(), rowsDim) ||
      (a.heads && !isDimOf(loop.getUpperBounds()[0], a.loadQ.getSource(), headPos(tm))))
    return fail(a.heads ? "the loop must cover q's heads and rows" : "the loop must cover q's rows");
  return a;
}

// The attention loop when it is the kernel's one tile loop and nothing else has an effect (the
// template replaces the whole body). `looked`: the loop had mma and a row max, so a mismatch is
// worth explaining (GEMM loops also carry mma).
FailureOr<AttentionLoop> matchKernel(KernelOp kernel, TileForeachOp &loop, bool &looked, Mismatch &mm) {
  looked = false;
  int loops = 0;
  for (Operation &op : kernel.getBody().front())
    if (auto l = dyn_cast<TileForeachOp>(op)) loop = l, ++loops;
  if (loops != 1) return failure();
  bool hasMma = false;
  loop.walk([&](TileMmaOp) { hasMma = true; });
  if (!hasMma) return failure();
  bool other = false;
  kernel.walk([&](Operation *op) {
    if (hasSpecEffect(op) && !loop->isAncestor(op)) other = true;
  });
  if (other) return failure();
  loop.walk([&](TileReduceRowsOp r) { looked |= r.getKind() == ReduceKind::max; });
  return match(kernel, loop, mm);
}

struct LowerAttention : mlir::pk::impl::PkLowerAttentionPassBase<LowerAttention> {
  using PkLowerAttentionPassBase::PkLowerAttentionPassBase;

  static int64_t argNumber(Value v) { return cast<BlockArgument>(v).getArgNumber(); }

  void lower(KernelOp kernel, AttentionLoop &a) {
    MLIRContext *ctx = kernel.getContext();
    SmallVector<NamedAttribute> facts;
    auto fact = [&](StringRef k, Attribute v) { facts.push_back(NamedAttribute(StringAttr::get(ctx, k), v)); };
    auto i64 = [&](int64_t v) { return IntegerAttr::get(IntegerType::get(ctx, 64), v); };
    fact("q", i64(argNumber(a.loadQ.getSource())));
    fact("k", i64(argNumber(a.loadK.getSource())));
    fact("v", i64(argNumber(a.loadV.getSource())));
    fact("o", i64(argNumber(a.storeO.getDest())));
    fact("lse", i64(a.storeLse ? argNumber(a.storeLse.getDest()) : -1));
    fact("d", i64(a.d));
    fact("heads", BoolAttr::get(ctx, a.heads));
    if (a.tokenMajor) fact("token_major", UnitAttr::get(ctx));
    fact("causal", BoolAttr::get(ctx, a.causal));
    // Grouped-query attention: G as a host expression over the launch's arguments.
    fact("kv_group", StringAttr::get(ctx, a.groupExpr.empty() ? "1" : a.groupExpr));
    if (a.groupRatio) fact("kv_group_ratio", BoolAttr::get(ctx, true));
    if (a.kvHead0 != "0") fact("kv_head0", StringAttr::get(ctx, a.kvHead0));
    if (a.vHead0 != a.kvHead0) fact("v_head0", StringAttr::get(ctx, a.vHead0));
    if (a.scale) fact("scale", i64(argNumber(a.scale)));
    else fact("scale_value", FloatAttr::get(Float64Type::get(ctx), a.scaleValue));
    if (a.scoreMap) fact("score_map", a.scoreMap);
    if (a.scaleMap) fact("scale_map", a.scaleMap);
    if (!a.keyWindow.empty()) fact("key_window", StringAttr::get(ctx, a.keyWindow));
    if (a.causalOffset != "0") fact("causal_offset", StringAttr::get(ctx, a.causalOffset));
    recordDecision(a.loop, "template",
                   "attention: the loop is an online-softmax attention" +
                       Twine(!a.causal ? ""
                             : a.causalOffset == "0"
                                 ? " with a causal mask"
                                 : " with a causal mask shifted by " + a.causalOffset +
                                       " past keys (row i sees keys up to i + that; each block skips the key "
                                       "steps past its last row's reach, none where it is negative at launch)") +
                       ", head dim " + Twine(a.d) + (a.elem.isF16() ? ", f16 operands" : "") +
                       (a.tokenMajor ? ", token-major [S, H, D] tensors (TMA boxes of one head's rows)" : "") +
                       Twine(!a.groupExpr.empty()
                                 ? ", grouped-query (K and V at head h / G, G = " + describeGroup(a) +
                                       (a.groupRatio && a.kvHead0 == "0" && a.vHead0 == "0"
                                            ? ", checked at launch: q's heads = G x k's heads)"
                                                     : ", checked at launch: G >= 1 and k and v hold the heads read)")
                                 : "") +
                       Twine(a.kvHead0 != "0" && a.vHead0 == a.kvHead0
                                 ? ", K and V " + Twine(!a.groupExpr.empty() ? "" : "at head h ") + "offset by " +
                                       a.kvHead0 + " heads (computed at launch; checked to lie inside k and v)"
                                 : "") +
                       Twine(a.vHead0 != a.kvHead0
                                 ? ", K offset by " + a.kvHead0 + " heads and V by " + a.vHead0 +
                                       " (packed heads; computed at launch, checked to lie inside k and v)"
                                 : "") +
                       Twine(a.scaleMap ? ", the scale computed once per launch (" +
                                              std::to_string(a.scaleMap.size()) + " steps of scalars)"
                                        : "") +
                       Twine(a.scoreMap ? ", with a score map of " + std::to_string(a.scoreMap.size()) +
                                              " steps (the spec's scores from q k^T: its scale, terms "
                                              "and extra mask factors) applied to every score in the "
                                              "consumers before the softmax"
                                        : "") +
                       Twine(a.keyWindow.empty() ? ""
                                                 : "; a sliding window of " + a.keyWindow +
                                                       " keys: each block skips the key steps before its "
                                                       "first row's window" +
                                                       (a.causal ? " (the launch checks the window >= 1)"
                                                                 : " (none where the window is at most 0)")) +
                       "; Hopper attention template: " + Twine(a.d == 64 && !a.scoreMap ? "192" : "128") +
                       " query rows per block (" + Twine(a.d == 64 && !a.scoreMap ? "3" : "2") +
                       " consumer warpgroups taking turns, "
                       "wgmma for q k^T from shared memory and for p v with p in registers), K and V "
                       "by TMA in 128-key tiles through separate rings, exp2 softmax in fp32; " +
                       "a persistent grid of one block per SM, the next tile's Q and K/V loaded under "
                       "the last one's products; " +
                       Twine(a.causal ? "each block takes the next unclaimed tile from a counter (causal "
                                        "tiles cost 1 to S / 128 key steps, so fixed shares would drift "
                                        "apart)"
                                      : "each block walks a fixed share of tiles of equal cost") +
                       "; the spec's tile sizes only set the order of fp32 additions, so retiling is "
                       "exact up to rounding");
    markLowered(a.storeO);
    if (a.storeLse) markLowered(a.storeLse);
    becomeTemplateInstance(kernel, "pk.attention", DictionaryAttr::get(ctx, facts));
  }

  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      TileForeachOp loop;
      bool looked = false;
      Mismatch mm;
      FailureOr<AttentionLoop> a = matchKernel(kernel, loop, looked, mm);
      if (failed(a)) {
        if (looked) recordDecision(loop, "template", "not the attention template: " + mm.why);
        return;
      }
      lower(kernel, *a);
    });
  }
};

} // namespace

bool mlir::pk::isAttentionKernel(KernelOp kernel) {
  TileForeachOp loop;
  bool looked = false;
  Mismatch mm;
  return succeeded(matchKernel(kernel, loop, looked, mm));
}

// Captures a GEMM tile loop's element-wise epilogue as a flat program (GemmEpilogue.h).
#include "GemmEpilogue.h"
#include "pk/Passes/HostExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::pk;

namespace {

struct Capture {
  KernelOp kernel;
  Value acc, m, n;
  int64_t bm, bn;
  llvm::SmallPtrSetImpl<Operation *> &ops;
  std::string &why;
  SmallVector<Attribute> steps;
  llvm::DenseMap<Value, int64_t> index;
  llvm::DenseMap<int64_t, StringRef> views;  // a 1-D tensor argument: read as a "row" or a "col"

  MLIRContext *ctx() { return kernel.getContext(); }
  NamedAttribute named(StringRef k, Attribute v) { return NamedAttribute(StringAttr::get(ctx(), k), v); }
  Attribute i64(int64_t v) { return IntegerAttr::get(IntegerType::get(ctx(), 64), v); }
  Attribute str(StringRef s) { return StringAttr::get(ctx(), s); }

  int64_t add(Value v, SmallVector<NamedAttribute> fields) {
    steps.push_back(DictionaryAttr::get(ctx(), fields));
    return index[v] = int64_t(steps.size()) - 1;
  }
  int64_t fail(Operation *op, const Twine &what) {
    if (why.empty()) why = (op ? "'" + op->getName().getStringRef().str() + "': " : std::string()) + what.str();
    return -1;
  }
  static const char *narrowName(Type t) { return t.isBF16() ? "bf16" : t.isF16() ? "f16" : nullptr; }

  // Broadcast rule: every value is a tile whose dims are the loop tile's or 1.
  bool fits(Type t) {
    auto tile = dyn_cast<TileType>(t);
    if (!tile) return false;
    ArrayRef<int64_t> s = tile.getShape();
    return s.size() == 2 && (s[0] == bm || s[0] == 1) && (s[1] == bn || s[1] == 1);
  }

  int argIndex(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &kernel.getBody().front()) return -1;
    return int(arg.getArgNumber());
  }

  // -1: follows the output's coordinate (index `along`, tile extent `full`); >= 0: fixed.
  std::optional<int64_t> coordinate(Value index, Value along, int64_t extent, int64_t full) {
    if (index == along && extent == full) return -1;
    std::optional<int64_t> c = getConstantIntValue(index);
    if (c && *c >= 0 && extent == 1) return *c;
    return std::nullopt;
  }

  int64_t load(TileLoadOp op) {
    int a = argIndex(op.getSource());
    auto tile = cast<TileType>(op.getType());
    if (a < 0 || op.getIndices().size() != 2)
      return fail(op, "an epilogue load must read a 2-D tensor argument");
    Type e = tile.getElementType();
    if (!e.isBF16() && !e.isF16() && !e.isF32()) return fail(op, "an epilogue load must be bf16, f16 or f32");
    auto row = coordinate(op.getIndices()[0], m, tile.getShape()[0], bm);
    auto col = coordinate(op.getIndices()[1], n, tile.getShape()[1], bn);
    if (!row || !col)
      return fail(op, "an epilogue load must be at the output tile ([m, n], the loop's tile shape), "
                      "a row vector ([constant, n], 1 x N) or a column ([m, constant], M x 1)");
    return add(op, {named("op", str("load")), named("arg", i64(a)), named("row", i64(*row)),
                    named("col", i64(*col))});
  }

  // A 1-D tensor read as a row vector (load<1, N>(bias, n): N elements from n, a 1 x N tile) or
  // a column (load<M, 1>(scale, m)): the load of its N (M) elements, reshaped. It is read as a
  // 1 x N (M x 1) tensor, so the epilogue indexes it as the 2-D loads do.
  int64_t vectorLoad(TileReshapeOp op, TileLoadOp l) {
    int a = argIndex(l.getSource());
    auto in = cast<TileType>(l.getType());
    ArrayRef<int64_t> out = cast<TileType>(op.getType()).getShape();
    if (a < 0 || l.getIndices().size() != 1 || in.getRank() != 1)
      return fail(op, "an epilogue reshape must be of a load of a 1-D tensor argument");
    Type e = in.getElementType();
    if (!e.isBF16() && !e.isF16() && !e.isF32()) return fail(l, "an epilogue load must be bf16, f16 or f32");
    const bool row = out[0] == 1 && out[1] == bn && l.getIndices()[0] == n;
    const bool col = out[1] == 1 && out[0] == bm && l.getIndices()[0] == m;
    if (!row && !col)
      return fail(l, "a 1-D tensor in an epilogue must be read as a row vector (load<1, N>(v, n)) "
                     "or a column (load<M, 1>(v, m)) of the output tile");
    StringRef view = row ? "row" : "col";
    if (auto [it, fresh] = views.try_emplace(a, view); !fresh && it->second != view)
      return fail(l, "a 1-D tensor read both as a row vector and as a column in one epilogue");
    ops.insert(l);
    return add(op, {named("op", str("load")), named("arg", i64(a)), named("row", i64(row ? 0 : -1)),
                    named("col", i64(row ? -1 : 0)), named("view", str(view))});
  }

  // A splat rounds its scalar to the tile's element type.
  int64_t splat(TileSplatOp op) {
    int64_t x = scalar(op);
    const char *t = narrowName(cast<TileType>(op.getType()).getElementType());
    if (x < 0 || !t) return x;
    return add(op, {named("op", str("round")), named("x", i64(x)), named("type", str(t))});
  }

  // An integer the host knows at launch (arguments, extents, world size and arithmetic on
  // them) converted to float, as `col_index<..>(n) < vocab` compares it: its host expression,
  // or empty.
  std::string indexExpression(Value s) {
    Operation *conv = s.getDefiningOp();
    if (!conv || !isa<arith::SIToFPOp, arith::UIToFPOp>(conv)) return "";
    std::optional<::pk::HostExpr> e = hostExprOf(conv->getOperand(0), kernel.getBody().front());
    return e ? ::pk::print_host_expr(*e) : "";
  }

  int64_t scalar(TileSplatOp op) {
    Value s = op->getOperand(0);
    if (std::string e = indexExpression(s); !e.empty())
      return add(op, {named("op", str("index")), named("expr", str(e))});
    if (int a = argIndex(s); a >= 0) {
      if (!s.getType().isF32()) return fail(op, "an epilogue scalar argument must be a float");
      return add(op, {named("op", str("scalar")), named("arg", i64(a))});
    }
    Attribute c;
    if (matchPattern(s, m_Constant(&c))) {
      double v;
      if (auto f = dyn_cast<FloatAttr>(c)) v = f.getValueAsDouble();
      else if (auto i = dyn_cast<IntegerAttr>(c)) v = double(i.getInt());
      else return fail(op, "unsupported constant");
      return add(op, {named("op", str("const")), named("value", FloatAttr::get(Float64Type::get(ctx()), v))});
    }
    return fail(op, "an epilogue splat must be of a float argument, a constant, or an integer "
                    "the host knows at launch (arguments, extents) converted to float");
  }

  int64_t value(Value v) {
    if (auto it = index.find(v); it != index.end()) return it->second;
    if (v == acc) return add(v, {named("op", str("acc"))});
    Operation *op = v.getDefiningOp();
    if (!op) return fail(nullptr, "the epilogue reads a value from outside the tile loop");
    if (!fits(v.getType()))
      return fail(op, "epilogue tiles must have the loop's tile shape, or 1 in a dimension");
    ops.insert(op);
    if (auto l = dyn_cast<TileLoadOp>(op)) return load(l);
    if (auto s = dyn_cast<TileSplatOp>(op)) return splat(s);
    if (auto r = dyn_cast<TileReshapeOp>(op))
      if (auto l = r.getInput().getDefiningOp<TileLoadOp>()) return vectorLoad(r, l);
    // The element's row or column in the output (a mask's coordinates).
    if (auto iota = dyn_cast<TileIotaOp>(op)) {
      const int64_t d = int64_t(iota.getDim());
      Type e = cast<TileType>(iota.getType()).getElementType();
      if (!e.isF32()) return fail(op, "an epilogue row or column index must be an f32 tile");
      if (!(d == 0 && iota.getOrigin() == m) && !(d == 1 && iota.getOrigin() == n))
        return fail(op, "an epilogue row (column) index must start at the output tile's row m "
                        "(column n)");
      return add(v, {named("op", str("iota")), named("dim", i64(d))});
    }
    if (auto sel = dyn_cast<TileSelectOp>(op)) {
      int64_t c = value(sel.getCond()), x = c < 0 ? -1 : value(sel.getOnTrue()),
              y = x < 0 ? -1 : value(sel.getOnFalse());
      if (y < 0) return -1;
      int64_t r = add(v, {named("op", str("select")), named("c", i64(c)), named("x", i64(x)), named("y", i64(y))});
      if (const char *t = narrowName(cast<TileType>(v.getType()).getElementType()))
        return add(v, {named("op", str("round")), named("x", i64(r)), named("type", str(t))});
      return r;
    }
    if (auto c = dyn_cast<TileCastOp>(op)) {
      int64_t x = value(c.getInput());
      if (x < 0) return -1;
      Type to = cast<TileType>(c.getType()).getElementType();
      if (to.isF32()) return index[v] = x;  // widening: the value is already exact in f32
      if (const char *t = narrowName(to))
        return add(v, {named("op", str("round")), named("x", i64(x)), named("type", str(t))});
      return fail(op, "an epilogue cast must be to f32, bf16 or f16");
    }
    if (auto map = dyn_cast<TileMapOp>(op)) {
      SmallVector<NamedAttribute> f{named("op", str("map")),
                                    named("kind", str(stringifyMapKind(map.getKind())))};
      for (auto [i, operand] : llvm::enumerate(map->getOperands())) {
        int64_t x = value(operand);
        if (x < 0) return -1;
        f.push_back(named(i == 0 ? "x" : "y", i64(x)));
      }
      int64_t r = add(v, f);
      // A map on bf16 / f16 tiles rounds each result to that type, as the tile library does.
      if (const char *t = narrowName(cast<TileType>(v.getType()).getElementType()))
        return add(v, {named("op", str("round")), named("x", i64(r)), named("type", str(t))});
      return r;
    }
    return fail(op, "not an element-wise epilogue operation (map, cast, splat, where, a row or "
                    "column index, or a load at the output tile, a row vector or a column)");
  }
};

}  // namespace

ArrayAttr mlir::pk::captureGemmEpilogue(KernelOp kernel, Value result, Value acc, Value m, Value n,
                                        int64_t bm, int64_t bn,
                                        llvm::SmallPtrSetImpl<Operation *> &ops, std::string &why) {
  Capture c{kernel, acc, m, n, bm, bn, ops, why, {}, {}};
  if (c.value(result) < 0) return nullptr;
  if (auto tile = dyn_cast<TileType>(result.getType());
      !tile || tile.getShape() != ArrayRef<int64_t>{bm, bn}) {
    why = "the stored tile must have the loop's tile shape";
    return nullptr;
  }
  return ArrayAttr::get(kernel.getContext(), c.steps);
}

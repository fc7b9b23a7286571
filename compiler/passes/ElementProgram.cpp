// Captures a tile loop's element-wise computation (a GEMM epilogue, an attention score map) as a
// flat program (ElementProgram.h).
#include "ElementProgram.h"
#include "pk/Passes/HostExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::pk;

struct ElementProgram::Capture {
  KernelOp kernel;
  Value acc, m, n;
  int64_t bm, bn;
  Value head;
  StringRef noun;  // "epilogue", "score map": what the messages call the program
  llvm::SmallPtrSetImpl<Operation *> &ops;
  std::string &why;
  SmallVector<Attribute> steps;
  llvm::DenseMap<Value, int64_t> index;
  llvm::DenseMap<int64_t, StringRef> views;  // a 1-D tensor argument: read as a "row" or a "col"

  MLIRContext *ctx() { return kernel.getContext(); }
  // "an epilogue", "a score map".
  const char *an() const { return StringRef("aeiou").contains(noun.front()) ? "an " : "a "; }
  NamedAttribute named(StringRef k, Attribute v) { return NamedAttribute(StringAttr::get(ctx(), k), v); }
  Attribute i64(int64_t v) { return IntegerAttr::get(IntegerType::get(ctx(), 64), v); }
  Attribute str(StringRef s) { return StringAttr::get(ctx(), s); }

  int64_t push(ArrayRef<NamedAttribute> fields) {
    steps.push_back(DictionaryAttr::get(ctx(), fields));
    return int64_t(steps.size()) - 1;
  }
  int64_t add(Value v, ArrayRef<NamedAttribute> fields) { return index[v] = push(fields); }
  int64_t fail(Operation *op, const Twine &what) {
    if (why.empty()) why = (op ? "'" + op->getName().getStringRef().str() + "': " : std::string()) + what.str();
    return -1;
  }
  static bool isInt(Type t) {
    if (auto tile = dyn_cast<TileType>(t)) t = tile.getElementType();
    return isa<IntegerType>(t);
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

  // A load's coordinate in one dimension: `follows` the output element's (index `along` over the
  // loop's full tile extent), or fixed for the whole tile: a constant, or an integer step (the
  // head, host values and arithmetic on them).
  struct Coord {
    bool follows = false;
    int64_t fixed = 0;
    int64_t step = -1;
  };
  std::optional<Coord> coordinate(Value index, Value along, int64_t extent, int64_t full) {
    if (along && index == along && extent == full) return Coord{true};
    if (extent != 1) return std::nullopt;
    if (std::optional<int64_t> c = getConstantIntValue(index); c && *c >= 0) return Coord{false, *c};
    // Any other integer fixed per tile; if it is not one, the load's message says what is allowed.
    const std::string before = why;
    int64_t s = integer(index);
    if (s < 0) {
      why = before;
      return std::nullopt;
    }
    return Coord{false, 0, s};
  }

  // Element types a program reads: floats as f32; i32 and i8 as int (an integer tile's element).
  bool readable(Type e) {
    return e.isBF16() || e.isF16() || e.isF32() || e.isSignlessInteger(32) || e.isSignlessInteger(8);
  }
  int64_t unreadable(Operation *op) {
    return fail(op, Twine(an()) + Twine(noun) + " load must be bf16, f16, f32, i32 or i8");
  }

  // The load step of tensor argument `a` at plane / row / col (a 3-D tensor [planes, rows, cols];
  // plane is absent for 2-D and 1-D ones).
  int64_t loadStep(Value result, int a, std::optional<Coord> plane, Coord row, Coord col, Type element,
                   StringRef view = "", bool swapped = false) {
    SmallVector<NamedAttribute> f{named("op", str("load")), named("arg", i64(a)),
                                  named("row", i64(row.follows ? -1 : row.fixed)),
                                  named("col", i64(col.follows ? -1 : col.fixed))};
    if (swapped) f.push_back(named("swapped", UnitAttr::get(ctx())));
    if (row.step >= 0) f.push_back(named("rowv", i64(row.step)));
    if (col.step >= 0) f.push_back(named("colv", i64(col.step)));
    if (plane) {
      f.push_back(named("plane", i64(plane->fixed)));
      if (plane->step >= 0) f.push_back(named("planev", i64(plane->step)));
    }
    if (!view.empty()) f.push_back(named("view", str(view)));
    if (isa<IntegerType>(element)) f.push_back(named("int", UnitAttr::get(ctx())));
    return result ? add(result, f) : push(f);
  }

  static constexpr const char *kWhere =
      " load must be at the output tile ([m, n], the loop's tile shape), a row vector ([r, n], 1 x N) "
      "or a column ([m, c], M x 1), with r and c constants or integers fixed for the tile (the head, "
      "values the host knows)";

  int64_t load(TileLoadOp op) {
    int a = argIndex(op.getSource());
    auto tile = cast<TileType>(op.getType());
    if (a < 0 || op.getIndices().size() != 2)
      return fail(op, Twine(an()) + Twine(noun) + " load must read a 2-D tensor argument");
    if (!readable(tile.getElementType())) return unreadable(op);
    auto row = coordinate(op.getIndices()[0], m, tile.getShape()[0], bm);
    auto col = coordinate(op.getIndices()[1], n, tile.getShape()[1], bn);
    if (!row || !col) return fail(op, Twine(an()) + Twine(noun) + kWhere);
    return loadStep(op, a, std::nullopt, *row, *col, tile.getElementType());
  }

  // transpose(load<N, 1>(scale, n, c)): a column of a 2-D tensor read as a row vector (its row
  // follows the output's column), or transpose(load<N, M>(t, n, m)) the output tile of a tensor
  // stored transposed; the load's coordinates swapped.
  int64_t transposedLoad(TileTransposeOp op, TileLoadOp l) {
    int a = argIndex(l.getSource());
    auto tile = cast<TileType>(l.getType());
    if (a < 0 || l.getIndices().size() != 2 || tile.getRank() != 2)
      return fail(op, Twine(an()) + Twine(noun) + " transpose must be of a load of a 2-D tensor argument");
    if (!readable(tile.getElementType())) return unreadable(l);
    auto row = coordinate(l.getIndices()[0], n, tile.getShape()[0], bn);
    auto col = coordinate(l.getIndices()[1], m, tile.getShape()[1], bm);
    if (!row || !col)
      return fail(l, Twine(an()) + Twine(noun) + " transposed load must be at [n, m] (the output tile of a "
                     "tensor stored transposed), [n, c] (a column read as a row vector) or [r, m], with r "
                     "and c fixed for the tile");
    ops.insert(l);
    return loadStep(op, a, std::nullopt, *row, *col, tile.getElementType(), "", /*swapped=*/true);
  }

  // A 1-D tensor read as a row vector (load<1, N>(bias, n): N elements from n, a 1 x N tile) or
  // a column (load<M, 1>(scale, m)): the load of its N (M) elements, reshaped. It is read as a
  // 1 x N (M x 1) tensor, so the program indexes it as the 2-D loads do. A 3-D tensor read at a
  // fixed plane (load<M, N>(bias, h, m, n) of a per-head bias [H, S, S]) is the load of a
  // 1 x M x N tile, reshaped.
  int64_t vectorLoad(TileReshapeOp op, TileLoadOp l) {
    int a = argIndex(l.getSource());
    auto in = cast<TileType>(l.getType());
    ArrayRef<int64_t> out = cast<TileType>(op.getType()).getShape();
    if (a >= 0 && l.getIndices().size() == 3) {
      if (in.getRank() != 3 || in.getShape()[0] != 1)
        return fail(l, "a 3-D tensor in " + Twine(an()) + Twine(noun) + " must be read one plane at a time "
                       "(load<M, N>(t, p, m, n) with p fixed for the tile, such as the head)");
      if (!readable(in.getElementType())) return unreadable(l);
      auto plane = coordinate(l.getIndices()[0], Value(), 1, 1);
      auto row = coordinate(l.getIndices()[1], m, in.getShape()[1], bm);
      auto col = coordinate(l.getIndices()[2], n, in.getShape()[2], bn);
      if (!plane || !row || !col)
        return fail(l, "a 3-D tensor in " + Twine(an()) + Twine(noun) + " must be read at [p, m, n] (or a fixed "
                       "row or column), p fixed for the tile: a constant, the head or an integer the host knows");
      ops.insert(l);
      return loadStep(op, a, plane, *row, *col, in.getElementType());
    }
    if (a < 0 || l.getIndices().size() != 1 || in.getRank() != 1)
      return fail(op, Twine(an()) + Twine(noun) + " reshape must be of a load of a 1-D or 3-D tensor argument");
    if (!readable(in.getElementType())) return unreadable(l);
    const bool row = out[0] == 1 && out[1] == bn && l.getIndices()[0] == n;
    const bool col = out[1] == 1 && out[0] == bm && l.getIndices()[0] == m;
    if (!row && !col)
      return fail(l, "a 1-D tensor in " + Twine(an()) + Twine(noun) + " must be read as a row vector (load<1, N>(v, n)) "
                     "or a column (load<M, 1>(v, m)) of the output tile");
    StringRef view = row ? "row" : "col";
    if (!setView(l, a, view)) return -1;
    ops.insert(l);
    return loadStep(op, a, std::nullopt, row ? Coord{false, 0} : Coord{true}, row ? Coord{true} : Coord{false, 0},
                    in.getElementType(), view);
  }

  // A 1-D tensor may be read as a row vector and as a column in one program (one segment-id
  // tensor for the queries and the keys): each load then indexes it by its own coordinate.
  bool setView(Operation *, int a, StringRef view) {
    views.try_emplace(a, view);
    return true;
  }

  // x.at(i...) of a tensor argument with indices fixed for the tile (ALiBi slopes.at(h)): one
  // element, read once per tile. A 1-D tensor is read in whichever view the program gives it.
  int64_t scalarLoad(Value result, LoadScalarOp op) {
    int a = argIndex(op.getSource());
    auto type = cast<LocalTensorType>(op.getSource().getType());
    ValueRange at = op.getIndices();
    if (a < 0 || at.empty() || at.size() > 3)
      return fail(op, Twine(an()) + Twine(noun) + " reads scalars of 1-D, 2-D or 3-D tensor arguments");
    if (!readable(type.getElementType())) return unreadable(op);
    SmallVector<Coord> c;
    for (Value i : at) {
      auto k = coordinate(i, Value(), 1, 1);
      if (!k)
        return fail(op, Twine(an()) + Twine(noun) + " reads a tensor's scalar at indices fixed for the tile: "
                        "constants, the head, integers the host knows and arithmetic on them");
      c.push_back(*k);
    }
    ops.insert(op);
    if (at.size() == 1) {  // [N] as 1 x N or N x 1
      auto it = views.find(a);
      StringRef view = it == views.end() ? "col" : it->second;
      if (!setView(op, a, view)) return -1;
      return view == "row" ? loadStep(result, a, std::nullopt, Coord{false, 0}, c[0], type.getElementType(), view)
                           : loadStep(result, a, std::nullopt, c[0], Coord{false, 0}, type.getElementType(), view);
    }
    if (at.size() == 2) return loadStep(result, a, std::nullopt, c[0], c[1], type.getElementType());
    return loadStep(result, a, c[0], c[1], c[2], type.getElementType());
  }

  // An integer the host knows at launch (arguments, extents, world size and arithmetic on
  // them), as `col_index<..>(n) < vocab` compares it: its host expression, or empty.
  std::string hostExpression(Value i) {
    std::optional<::pk::HostExpr> e = hostExprOf(i, kernel.getBody().front(), /*withRank=*/true);
    return e ? ::pk::print_host_expr(*e) : "";
  }

  // An integer scalar: the head, constants, host expressions and integer arithmetic on them.
  int64_t integer(Value i) {
    if (auto it = index.find(i); it != index.end()) return it->second;
    if (head && i == head) return add(i, {named("op", str("head"))});
    if (std::optional<int64_t> c = getConstantIntValue(i)) return add(i, {named("op", str("iconst")), named("value", i64(*c))});
    if (std::string e = hostExpression(i); !e.empty()) return add(i, {named("op", str("ihost")), named("expr", str(e))});
    Operation *op = i.getDefiningOp();
    if (auto l = dyn_cast_or_null<LoadScalarOp>(op)) return scalarLoad(i, l);
    if (op && isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(op)) {
      int64_t x = integer(op->getOperand(0));
      return x < 0 ? -1 : index[i] = x;
    }
    const char *kind = !op                           ? nullptr
                       : isa<arith::AddIOp>(op)      ? "add"
                       : isa<arith::SubIOp>(op)      ? "sub"
                       : isa<arith::MulIOp>(op)      ? "mul"
                       : isa<arith::DivSIOp>(op)     ? "div"
                       : isa<arith::RemSIOp>(op)     ? "rem"
                       : isa<arith::MinSIOp>(op)     ? "min"
                       : isa<arith::MaxSIOp>(op)     ? "max"
                                                     : nullptr;
    if (!kind)
      return fail(op, "an integer in an element-wise program must be a constant, a value the host "
                      "knows at launch (arguments, extents, the rank)" +
                          Twine(head ? ", the loop's head index" : "") + " or integer arithmetic on them");
    ops.insert(op);
    int64_t x = integer(op->getOperand(0)), y = x < 0 ? -1 : integer(op->getOperand(1));
    if (y < 0) return -1;
    return add(i, {named("op", str("iop")), named("kind", str(kind)), named("x", i64(x)), named("y", i64(y))});
  }

  // A float scalar: arguments, constants, integers converted, and float arithmetic on them
  // (arith's ops and pk.scalar_map), as `scale / cap` or ALiBi's 2^(-8 (h + 1) / H) computes it.
  int64_t scalarValue(Value s) {
    if (auto it = index.find(s); it != index.end()) return it->second;
    if (int a = argIndex(s); a >= 0) {
      if (!s.getType().isF32()) return fail(nullptr, "an element-wise program's scalar argument must be a float");
      return add(s, {named("op", str("scalar")), named("arg", i64(a))});
    }
    Attribute c;
    if (matchPattern(s, m_Constant(&c))) {
      double v;
      if (auto f = dyn_cast<FloatAttr>(c)) v = f.getValueAsDouble();
      else if (auto i = dyn_cast<IntegerAttr>(c)) v = double(i.getInt());
      else return fail(s.getDefiningOp(), "unsupported constant");
      return add(s, {named("op", str("const")), named("value", FloatAttr::get(Float64Type::get(ctx()), v))});
    }
    Operation *op = s.getDefiningOp();
    if (!op) return fail(nullptr, "the program reads a value from outside the kernel");
    if (auto l = dyn_cast<LoadScalarOp>(op)) return scalarLoad(s, l);
    ops.insert(op);
    if (isa<arith::SIToFPOp, arith::UIToFPOp>(op)) {
      Value i = op->getOperand(0);
      if (std::string e = hostExpression(i); !e.empty())
        return add(s, {named("op", str("index")), named("expr", str(e))});
      int64_t x = integer(i);
      return x < 0 ? -1 : add(s, {named("op", str("tofloat")), named("x", i64(x))});
    }
    std::optional<MapKind> kind;
    if (isa<arith::AddFOp>(op)) kind = MapKind::add;
    else if (isa<arith::SubFOp>(op)) kind = MapKind::sub;
    else if (isa<arith::MulFOp>(op)) kind = MapKind::mul;
    else if (isa<arith::DivFOp>(op)) kind = MapKind::div;
    else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) kind = MapKind::max;
    else if (isa<arith::MinimumFOp, arith::MinNumFOp>(op)) kind = MapKind::min;
    else if (isa<arith::NegFOp>(op)) kind = MapKind::neg;
    else if (auto m = dyn_cast<ScalarMapOp>(op)) kind = m.getKind();
    if (!kind)
      return fail(op, "a scalar in an element-wise program must be a float argument, a constant, an "
                      "integer the host knows at launch converted to float, an element of a tensor at indices "
                      "fixed for the tile, or float arithmetic on them");
    int64_t x = scalarValue(op->getOperand(0)), y = op->getNumOperands() > 1 && x >= 0 ? scalarValue(op->getOperand(1)) : -2;
    if (x < 0 || y == -1) return -1;
    SmallVector<NamedAttribute> f{named("op", str("map")), named("kind", str(stringifyMapKind(*kind))), named("x", i64(x))};
    if (y >= 0) f.push_back(named("y", i64(y)));
    return add(s, f);
  }

  // A splat rounds its scalar to the tile's element type.
  int64_t splat(TileSplatOp op) {
    Value s = op->getOperand(0);
    int64_t x;
    if (s.getType().isF32()) {
      x = scalarValue(s);
    } else if (isa<IndexType, IntegerType>(s.getType())) {
      x = integer(s);
      // An integer tile's element: the scalar's low 32 bits (scalars are 64-bit, as index
      // values are; a splat wraps, as the general path's does).
      if (isInt(op.getType())) {
        if (x < 0) return x;
        SmallVector<NamedAttribute> f{named("op", str("toi32")), named("x", i64(x)), named("int", UnitAttr::get(ctx()))};
        if (cast<TileType>(op.getType()).getElementType().isSignlessInteger(8)) f.push_back(named("i8", UnitAttr::get(ctx())));
        return add(op, f);
      }
      if (x >= 0) x = push({named("op", str("tofloat")), named("x", i64(x))});
    } else {
      return fail(op, "a splat in an element-wise program must be of an f32 or integer scalar");
    }
    if (x < 0) return x;
    const char *t = narrowName(cast<TileType>(op.getType()).getElementType());
    return t ? add(op, {named("op", str("round")), named("x", i64(x)), named("type", str(t))}) : (index[op] = x);
  }

  // An i8 tile the program may hold in its 32-bit integers: loads, splats (wrapped to 8 bits) and
  // the ops that keep every value in range (comparisons, min / max, where, products of masks);
  // its arithmetic would need wrapping at 8 bits.
  static bool exactAsInt(Operation *op, Type e) {
    if (!e.isSignlessInteger(8)) return false;
    // (A splat keeps the scalar's low 8 bits, as the general path's does.)
    if (isa<TileLoadOp, TileReshapeOp, TileTransposeOp, TileSelectOp, TileSplatOp>(op)) return true;
    if (auto map = dyn_cast<TileMapOp>(op)) {
      const MapKind k = map.getKind();
      // && of masks is the product of two 0 / 1 tiles: still 0 or 1.
      if (k == MapKind::mul)
        return llvm::all_of(map->getOperands(), [&](Value x) {
          auto m = x.getDefiningOp<TileMapOp>();
          return m && isComparison(m.getKind());
        });
      return isComparison(k) || k == MapKind::min || k == MapKind::max;
    }
    return false;
  }

  int64_t value(Value v) {
    if (auto it = index.find(v); it != index.end()) return it->second;
    if (v == acc) {  // an i32 accumulator (i8 operands) reaches the program as its bits
      if (isInt(v.getType())) return add(v, {named("op", str("acc")), named("int", UnitAttr::get(ctx()))});
      return add(v, {named("op", str("acc"))});
    }
    Operation *op = v.getDefiningOp();
    if (!op) return fail(nullptr, "the " + Twine(noun) + " reads a value from outside the tile loop");
    if (!fits(v.getType()))
      return fail(op, Twine(noun) + " tiles must have the loop's tile shape, or 1 in a dimension");
    if (Type e = cast<TileType>(v.getType()).getElementType(); isa<IntegerType>(e) && !e.isSignlessInteger(32) &&
                                                                !exactAsInt(op, e))
      return fail(op, "integer tiles in " + Twine(an()) + Twine(noun) + " must be i32" +
                          Twine(e.isSignlessInteger(8) ? " (an i8 tile may be loaded, compared, selected, min / max-ed "
                                                         "and cast: its arithmetic wraps at 8 bits)"
                                                       : ""));
    ops.insert(op);
    if (auto l = dyn_cast<TileLoadOp>(op)) return load(l);
    if (auto s = dyn_cast<TileSplatOp>(op)) return splat(s);
    if (auto r = dyn_cast<TileReshapeOp>(op))
      if (auto l = r.getInput().getDefiningOp<TileLoadOp>()) return vectorLoad(r, l);
    if (auto t = dyn_cast<TileTransposeOp>(op))
      if (auto l = t.getInput().getDefiningOp<TileLoadOp>()) return transposedLoad(t, l);
    // The element's row or column in the output (a mask's coordinates).
    if (auto iota = dyn_cast<TileIotaOp>(op)) {
      const int64_t d = int64_t(iota.getDim());
      Type e = cast<TileType>(iota.getType()).getElementType();
      if (!e.isF32() && !e.isSignlessInteger(32))
        return fail(op, Twine(an()) + Twine(noun) + " row or column index must be an f32 or i32 tile");
      if (!(d == 0 && iota.getOrigin() == m) && !(d == 1 && iota.getOrigin() == n))
        return fail(op, Twine(an()) + Twine(noun) + " row (column) index must start at the output tile's row m "
                        "(column n)");
      // One row of row indices is the tile's first row broadcast, which retiling would change.
      if (cast<TileType>(iota.getType()).getShape()[d] != (d == 0 ? bm : bn))
        return fail(op, Twine(an()) + Twine(noun) + " row (column) index must span the output tile's rows "
                        "(columns): one of extent 1 is the tile's origin, which the template's own "
                        "tiling changes");
      SmallVector<NamedAttribute> f{named("op", str("iota")), named("dim", i64(d))};
      if (isInt(v.getType())) f.push_back(named("int", UnitAttr::get(ctx())));
      return add(v, f);
    }
    if (auto sel = dyn_cast<TileSelectOp>(op)) {
      int64_t c = value(sel.getCond()), x = c < 0 ? -1 : value(sel.getOnTrue()),
              y = x < 0 ? -1 : value(sel.getOnFalse());
      if (y < 0) return -1;
      SmallVector<NamedAttribute> f{named("op", str("select")), named("c", i64(c)), named("x", i64(x)), named("y", i64(y))};
      if (isInt(v.getType())) f.push_back(named("int", UnitAttr::get(ctx())));
      int64_t r = add(v, f);
      if (const char *t = narrowName(cast<TileType>(v.getType()).getElementType()))
        return add(v, {named("op", str("round")), named("x", i64(r)), named("type", str(t))});
      return r;
    }
    if (auto c = dyn_cast<TileCastOp>(op)) {
      int64_t x = value(c.getInput());
      if (x < 0) return -1;
      Type to = cast<TileType>(c.getType()).getElementType();
      const bool fromInt = isInt(c.getInput().getType());
      if (isInt(c.getType()))  // i32 to i32 is the value; a float rounds toward zero, saturating
        return fromInt ? index[v] = x : add(v, {named("op", str("toint")), named("x", i64(x))});
      // To bf16 / f16 an integer rounds once, as the general path's casts do: through f32 rounded
      // to odd (an i32 sum past 2^24 would otherwise round twice).
      if (fromInt) {
        SmallVector<NamedAttribute> f{named("op", str("tofloat")), named("x", i64(x))};
        if (narrowName(to)) f.push_back(named("odd", UnitAttr::get(ctx())));
        x = push(f);
      }
      if (to.isF32()) return index[v] = x;  // widening: the value is already exact in f32
      if (const char *t = narrowName(to))
        return add(v, {named("op", str("round")), named("x", i64(x)), named("type", str(t))});
      return fail(op, Twine(an()) + Twine(noun) + " cast must be to f32, bf16, f16 or i32");
    }
    if (auto map = dyn_cast<TileMapOp>(op); map && isInt(map.getOperand(0).getType())) {
      // Integer maps (a document mask's row / L == col / L): wrapping arithmetic and 0 / 1 compares.
      static const llvm::StringSet<> kinds = {"add", "sub", "mul", "div", "rem",  "min",     "max",
                                              "neg", "abs", "lt",  "le",  "gt",   "ge",      "eq",
                                              "ne",  "hash", "shl", "shr", "bit_and", "bit_or", "bit_xor"};
      StringRef kind = stringifyMapKind(map.getKind());
      if (!kinds.contains(kind))
        return fail(op, "an integer map in " + Twine(an()) + Twine(noun) + " must be arithmetic, min, max, abs, a "
                        "comparison, a shift or a bit operation");
      int64_t x = value(map->getOperand(0)), y = map->getNumOperands() > 1 && x >= 0 ? value(map->getOperand(1)) : -2;
      if (x < 0 || y == -1) return -1;
      SmallVector<NamedAttribute> f{named("op", str("iop")), named("kind", str(kind)), named("x", i64(x)),
                                    named("int", UnitAttr::get(ctx()))};
      if (y >= 0) f.push_back(named("y", i64(y)));
      return add(v, f);
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
    return fail(op, "not an element-wise " + Twine(noun) + " operation (map, cast, splat, where, a row or "
                    "column index, or a load at the output tile, a row vector or a column)");
  }
};

ElementProgram::ElementProgram(ElementScope scope, llvm::SmallPtrSetImpl<Operation *> &ops, std::string &why)
    : c(new Capture{scope.kernel, scope.acc, scope.m, scope.n, scope.bm, scope.bn, scope.head,
                    scope.noun, ops, why, {}, {}, {}}) {}
ElementProgram::~ElementProgram() = default;

int64_t ElementProgram::value(Value v) { return c->why.empty() ? c->value(v) : -1; }
int64_t ElementProgram::constant(double v) {
  if (!c->why.empty()) return -1;
  return c->push({c->named("op", c->str("const")), c->named("value", FloatAttr::get(Float64Type::get(c->ctx()), v))});
}
int64_t ElementProgram::map(MapKind kind, int64_t x, int64_t y) {
  if (!c->why.empty() || x < 0) return -1;
  SmallVector<NamedAttribute> f{c->named("op", c->str("map")), c->named("kind", c->str(stringifyMapKind(kind))),
                                c->named("x", c->i64(x))};
  if (y >= 0) f.push_back(c->named("y", c->i64(y)));
  return c->push(f);
}
int64_t ElementProgram::select(int64_t cond, int64_t x, int64_t y) {
  if (!c->why.empty() || cond < 0 || x < 0 || y < 0) return -1;
  return c->push({c->named("op", c->str("select")), c->named("c", c->i64(cond)), c->named("x", c->i64(x)),
                  c->named("y", c->i64(y))});
}
ArrayAttr ElementProgram::steps() const { return ArrayAttr::get(c->ctx(), c->steps); }

ArrayAttr mlir::pk::captureGemmEpilogue(KernelOp kernel, Value result, Value acc, Value m, Value n,
                                        int64_t bm, int64_t bn,
                                        llvm::SmallPtrSetImpl<Operation *> &ops, std::string &why,
                                        Value batch) {
  ElementProgram program({kernel, acc, m, n, bm, bn, batch, "epilogue"}, ops, why);
  if (program.value(result) < 0) return nullptr;
  if (auto tile = dyn_cast<TileType>(result.getType());
      !tile || tile.getShape() != ArrayRef<int64_t>{bm, bn}) {
    why = "the stored tile must have the loop's tile shape";
    return nullptr;
  }
  return program.steps();
}

// Row vectors of the general tile path: rows x 1 index or weight tiles that every thread
// computes for its own rows (pk::tile::RowValues), and the column loads a loop's trip makes for
// them at its top, so a gather or scatter by index waits on its index loads once a trip.
#include "Emitter.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

namespace {

// Whether `load` reads the same when it is made again at `user`: both lie in one tile loop (or,
// outside tile loops, one kernel) in which nothing but loads and dims uses its tensor.
bool onlyReadAround(Operation *user, TileLoadOp load) {
  Operation *scope = user->getParentOfType<TileForeachOp>();
  if (scope && !scope->isAncestor(load)) return false;
  if (!scope) scope = user->getParentOfType<KernelOp>();
  if (!scope || !scope->isAncestor(load)) return false;
  for (Operation *other : load.getSource().getUsers())
    if (scope && scope->isAncestor(other) && !isa<TileLoadOp, DimOp>(other)) return false;
  return true;
}

// Whether a tile of `t` holds one column of `rows` elements (rows x 1, or 1-D) in registers.
bool isColumn(Type t, int64_t rows) {
  auto tile = dyn_cast<TileType>(t);
  if (!tile || tile.getMemorySpace() != MemorySpace::reg || tile.getNumElements() != rows)
    return false;
  ArrayRef<int64_t> shape = tile.getShape();
  return shape.size() == 1 || (shape.size() == 2 && shape[1] == 1);
}

// The C++ type a register tile of `t`'s elements holds its values in (pk/tile/rt.cuh).
std::string valueType(Type t) { return isa<IntegerType>(t) ? elementTypeName(t) : "float"; }

// x, of C++ type `type` (a tile value type), as a value of a tile of `elemType`: converted
// unless it is one already (bf16, f16 and fp8 values are fp32 rounded to them).
std::string asValueOf(Type elemType, const std::string &x, const std::string &type) {
  if (type == valueType(elemType) &&
      (!isa<FloatType>(elemType) || elemType.getIntOrFloatBitWidth() >= 32))
    return x;
  return "pk::tile::convert<" + elementTypeName(elemType) + ">(" + x + ")";
}

// Element r (a `long long r` in scope) of the column `load` reads, and in `valid` its valid rows
// (rt::valid0).
std::string columnRead(Emitter &e, TileLoadOp load, int64_t rows, std::string &valid) {
  Value src = load.getSource();
  std::string origin, at;
  for (auto [d, index] : llvm::enumerate(load.getIndices())) {
    origin += (d ? ", " : "") + e.name(index);
    at += (d ? ", " : "") + e.name(index) + (d == 0 ? " + r" : "");
  }
  valid = "pk::tile::valid_rows(" + std::to_string(rows) + "LL, " + e.name(src) + ".shape, {" +
          origin + "})";
  // read_scalar gives integers as long long and floats as fp32 (a bf16 value exactly);
  // read_column reads the same from a 2-D tensor, with the address arithmetic every thread
  // shares (the tile's row and the column) kept apart from the thread's own rows.
  Type elemType = cast<TileType>(load.getType()).getElementType();
  auto indices = load.getIndices();
  std::string read =
      indices.size() == 2
          ? "pk::tile::read_column(" + dataOf(e, src) + ", " + e.name(src) + ".shape, " +
                e.name(indices[0]) + ", r, " + e.name(indices[1]) + ")"
          : "pk::tile::read_scalar(" + dataOf(e, src) + ", " + e.name(src) + ".shape, " + at + ")";
  return isa<IntegerType>(elemType) ? asValueOf(elemType, read, "long long") : read;
}

// Whether `load` reads a column a row vector can rebuild for `user`.
bool rebuildableColumn(Operation *user, TileLoadOp load, int64_t rows) {
  return isColumn(load.getType(), rows) && isa<LocalTensorType>(load.getSource().getType()) &&
         load.getIndices().size() == cast<TileType>(load.getType()).getShape().size() &&
         onlyReadAround(user, load);
}

// The tile type row vectors for `full`'s rows are made for: its shape in f32, since the rows a
// thread holds do not depend on the element type (pk/tile/rt.cuh), so a gather of bf16 rows and
// a broadcast over their f32 sum share one vector.
std::string rowsTypeName(Emitter &e, TileType full) {
  return tileTypeName(TileType::get(full.getContext(), full.getShape(),
                                    Float32Type::get(full.getContext()), MemorySpace::reg),
                      e.threads);
}

// The C++ expression of the element in slot s, row r (`int s`, `long long r` in scope) of `v`,
// a register column of `rows` elements, rebuilt from the ops that made it: loads of a local
// tensor's column that nothing around `user` writes (or their values the loop's trip loaded
// for the tile `full`), splats, element-wise maps, selects and casts. The leaf loads' valid rows
// are appended to `valid`. Empty when the tile is made any other way.
std::string rowElement(Emitter &e, Operation *user, Value v, int64_t rows, const std::string &full,
                       SmallVectorImpl<std::string> &valid, int depth = 0) {
  if (depth > 16 || !isColumn(v.getType(), rows)) return "";
  Operation *def = v.getDefiningOp();
  if (!def) return "";
  Type elemType = cast<TileType>(v.getType()).getElementType();
  auto sub = [&](Value x) { return rowElement(e, user, x, rows, full, valid, depth + 1); };
  if (auto load = dyn_cast<TileLoadOp>(def)) {
    auto ahead = e.tripRows.find({def, full});
    if (ahead != e.tripRows.end()) {
      valid.push_back(ahead->second + ".valid0");
      return ahead->second + ".at(s, r)";
    }
    if (!rebuildableColumn(user, load, rows)) return "";
    std::string leafValid;
    std::string x = columnRead(e, load, rows, leafValid);
    valid.push_back(leafValid);
    return x;
  }
  if (auto stats = e.rowStats.find(def); stats != e.rowStats.end()) {
    if (rowsTypeName(e, stats->second.layout) != full) return "";
    valid.push_back(stats->second.name + ".valid0");
    return stats->second.name + ".at(s, r)";
  }
  if (auto splat = dyn_cast<TileSplatOp>(def)) {
    std::string x = e.name(splat.getScalar());
    return asValueOf(elemType, x, isa<FloatType>(splat.getScalar().getType()) ? "float" : "long long");
  }
  if (auto map = dyn_cast<TileMapOp>(def)) {
    if (!divisorExpression(e, map, "x").empty()) {  // by a scalar's pk::tile::Divisor
      std::string x = sub(map.getInputs()[0]);
      return x.empty() ? "" : divisorExpression(e, map, x);
    }
    std::string args;
    for (auto [i, in] : llvm::enumerate(map.getInputs())) {
      std::string x = sub(in);
      if (x.empty()) return "";
      args += (i ? ", " : "") + x;
    }
    Type operand = cast<TileType>(map.getInputs()[0].getType()).getElementType();
    return asValueOf(elemType, mapLambda(map.getKind(), operand) + "(" + args + ")", valueType(operand));
  }
  if (auto select = dyn_cast<TileSelectOp>(def)) {
    std::string c = sub(select->getOperand(0)), a = sub(select->getOperand(1)),
                b = sub(select->getOperand(2));
    if (c.empty() || a.empty() || b.empty()) return "";
    return "(" + c + " != 0 ? " + a + " : " + b + ")";
  }
  if (auto c = dyn_cast<TileCastOp>(def)) {
    std::string x = sub(c.getInput());
    return x.empty() ? "" : asValueOf(elemType, x, valueType(cast<TileType>(c.getInput().getType()).getElementType()));
  }
  return "";
}

// The register tiles whose rows a column `v` ends up indexing or broadcast against, through
// element-wise maps, selects and casts of columns: gathered and scattered tiles, and the full
// tiles of row broadcasts.
void rowConsumers(Emitter &e, Value v, int64_t rows, SmallVectorImpl<TileType> &out,
                  int depth = 0) {
  if (depth > 16) return;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto load = dyn_cast<TileLoadRowsOp>(user)) {
      if (load.getRows() == v) out.push_back(load.getResult().getType());
    } else if (auto store = dyn_cast<TileStoreRowsOp>(user)) {
      if (store.getRows() != v) continue;
      std::optional<TileType> stats = rowStatsLayout(e, store.getValue());
      out.push_back(stats ? *stats : cast<TileType>(store.getValue().getType()));
    } else if (isa<TileMapOp, TileSelectOp, TileCastOp>(user)) {
      Type result = user->getResult(0).getType();
      if (isColumn(result, rows)) rowConsumers(e, user->getResult(0), rows, out, depth + 1);
      else if (isa<TileMapOp>(user) && cast<TileType>(result).getShape().size() == 2)
        out.push_back(cast<TileType>(result));  // a broadcast against the full tile
    }
  }
}

// Whether column `v` is one rowElement rebuilds at `user` for the rows of `layout`: `self` is
// the reduction being decided, taken as kept in registers.
bool rebuildable(Emitter &e, Operation *user, Value v, int64_t rows, const std::string &layout,
                 Operation *self, int depth = 0) {
  if (depth > 16 || !isColumn(v.getType(), rows)) return false;
  Operation *def = v.getDefiningOp();
  if (!def) return false;
  if (def == self) return true;
  if (auto load = dyn_cast<TileLoadOp>(def)) return rebuildableColumn(user, load, rows);
  if (isa<TileSplatOp>(def)) return true;
  if (isa<TileMapOp, TileSelectOp, TileCastOp>(def))
    return llvm::all_of(def->getOperands(), [&](Value x) {
      return rebuildable(e, user, x, rows, layout, self, depth + 1);
    });
  auto stats = e.rowStats.find(def);
  return stats != e.rowStats.end() && rowsTypeName(e, stats->second.layout) == layout;
}

// Whether every use of column `v`, computed from row statistics in registers for the rows of
// `layout`, can take it per row: column maps, selects and casts (whose other operands rebuild
// too; their results go to `made`), broadcasts over tiles of those rows, stores of it and
// scatters of it by a rebuildable index.
bool servedByRows(Emitter &e, Value v, int64_t rows, const std::string &layout, Operation *self,
                  SmallVectorImpl<Value> &made, int depth = 0) {
  if (depth > 16) return false;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<TileMapOp, TileSelectOp, TileCastOp>(user)) {
      Value result = user->getResult(0);
      if (isColumn(result.getType(), rows)) {
        for (Value x : user->getOperands())
          if (x != v && !rebuildable(e, user, x, rows, layout, self)) return false;
        made.push_back(result);
        if (!servedByRows(e, result, rows, layout, self, made, depth + 1)) return false;
        continue;
      }
      // A broadcast against a full tile of those rows (not an outer one, [M, 1] x [1, N],
      // which broadcasts the column to the full shape through the stage first).
      auto full = dyn_cast<TileType>(result.getType());
      if (isa<TileMapOp>(user) && full && full.getShape().size() == 2 &&
          rowsTypeName(e, full) == layout &&
          llvm::any_of(user->getOperands(), [&](Value x) { return x.getType() == result.getType(); }))
        continue;
      return false;
    }
    if (auto store = dyn_cast<TileStoreOp>(user)) {
      if (store.getValue() == v && store.getIndices().size() == 2) continue;
      return false;
    }
    if (auto store = dyn_cast<TileStoreRowsOp>(user)) {
      if (store.getValue() == v && store.getRows() != v &&
          rebuildable(e, user, store.getRows(), rows, layout, self))
        continue;
      return false;
    }
    return false;
  }
  return true;
}

} // namespace

std::string mlir::pk::cuda::rowStatsOf(Emitter &e, Operation *op) {
  auto reduction = cast<TileReduceRowsOp>(op);
  TileType in = reduction.getInput().getType();
  ArrayRef<int64_t> shape = in.getShape();
  if (in.getMemorySpace() != MemorySpace::reg || shape.size() != 2 || shape[0] < 2 ||
      !isa<FloatType>(in.getElementType()))
    return "";
  // pk::tile::rows_in_warps_v: whole runs of 8, each row in an aligned group of <= 32 threads.
  const int64_t group = shape[1] / 8;
  if (shape[1] % 8 != 0 || group > 32 || 32 % group != 0) return "";
  const std::string layout = rowsTypeName(e, in);
  SmallVector<Value> made;
  if (!servedByRows(e, reduction.getResult(), shape[0], layout, op, made)) return "";
  std::string n = e.fresh("stats");
  e.rowStats[op] = {n, in};
  for (Value column : made) e.lazyColumns[column.getAsOpaquePointer()] = in;
  e.line() << "const auto " << n << " = pk::tile::reduce_rows_in_warps<"
           << elementTypeName(reduction.getResult().getType().getElementType()) << ">("
           << e.name(reduction.getInput()) << ", pk::tile::RowOp::"
           << stringifyReduceKind(reduction.getKind()) << ");";
  return n;
}

std::optional<TileType> mlir::pk::cuda::rowStatsLayout(Emitter &e, Value column) {
  if (auto lazy = e.lazyColumns.find(column.getAsOpaquePointer()); lazy != e.lazyColumns.end())
    return lazy->second;
  if (Operation *def = column.getDefiningOp())
    if (auto stats = e.rowStats.find(def); stats != e.rowStats.end()) return stats->second.layout;
  return std::nullopt;
}

std::string mlir::pk::cuda::rowVector(Emitter &e, Operation *user, Value v, TileType full,
                                      bool reciprocal) {
  const std::string fullName = rowsTypeName(e, full);
  auto known = e.rowVectors.find({v.getAsOpaquePointer(), user->getBlock(), fullName});
  if (!reciprocal && known != e.rowVectors.end()) return known->second;
  int64_t rows = cast<TileType>(v.getType()).getNumElements();
  SmallVector<std::string> valid;
  std::string x = rowElement(e, user, v, rows, fullName, valid);
  if (x.empty()) return "";
  std::string valid0 = std::to_string(rows) + "LL";
  for (const std::string &leaf : valid) valid0 = "min(" + valid0 + ", " + leaf + ")";
  std::string n = e.fresh("rowvec");
  e.line() << "const auto " << n << " = pk::tile::row_values<" << fullName
           << ">([&](int s, long long r) { return " << (reciprocal ? "1.f / (" + x + ")" : x)
           << "; }, " << valid0 << ");";
  if (!reciprocal) e.rowVectors[{v.getAsOpaquePointer(), user->getBlock(), fullName}] = n;
  return n;
}

// The column loads directly in a loop's body, at indices the loop's induction variable and
// values from outside the loop give, of a tensor nothing in its tile loop writes, that row
// vectors read: made once at the top of each trip, for each shape of tile they index, so all
// of a trip's index loads are in flight together and none waits behind the trip's stores (the
// MoE routing reads; loading them one trip ahead measured slower: docs/benchmarks/
// moe-1xH200.md, run 8).
std::vector<std::string> mlir::pk::cuda::rowLoadsOfTrip(Emitter &e, Operation *op) {
  auto loop = cast<scf::ForOp>(op);
  std::vector<std::string> opening;
  for (Operation &inner : loop.getBody()->without_terminator()) {
    auto load = dyn_cast<TileLoadOp>(&inner);
    if (!load) continue;
    int64_t rows = cast<TileType>(load.getType()).getNumElements();
    if (rows < 2 || !rebuildableColumn(load, load, rows) || !load->getParentOfType<TileForeachOp>())
      continue;
    bool outside = true;
    for (Value index : load.getIndices())
      outside &= index == loop.getInductionVar() || !loop.getRegion().isAncestor(index.getParentRegion());
    if (!outside) continue;
    SmallVector<TileType> consumers;
    rowConsumers(e, load.getResult(), rows, consumers);
    std::string valid;
    std::string x = columnRead(e, load, rows, valid);
    for (TileType consumer : consumers) {  // one RowValues per shape of tile the column indexes
      const std::string full = rowsTypeName(e, consumer);
      if (e.tripRows.count({load.getOperation(), full})) continue;
      std::string now = e.fresh("rows");
      opening.push_back("const auto " + now + " = pk::tile::row_values<" + full +
                        ">([&](int, long long r) { return " + x + "; }, " + valid + ");");
      e.tripRows[{load.getOperation(), full}] = now;
    }
  }
  return opening;
}

void mlir::pk::cuda::forgetRowLoads(Emitter &e, Operation *op) {
  auto loop = cast<scf::ForOp>(op);
  for (Operation &inner : loop.getBody()->without_terminator())
    for (auto it = e.tripRows.begin(); it != e.tripRows.end();)
      it = it->first.first == &inner ? e.tripRows.erase(it) : std::next(it);
}

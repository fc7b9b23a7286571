// pk-check-tile-races: a tile loop's iterations run in parallel and in no order, so a loop that
// writes a tensor may read it only at the very tile it writes (an element-wise update in
// place) or inside a cell of the tensor that only its own iteration touches (ownCell); any
// other read (a scalar `x.at(i)` too), and any read of rows a loop scatters by
// index or of counters it claims slots from, races with another iteration's write and is an
// error at the read. Peers' copies are the protocol checker's (pk-verify-protocol). A store
// whose place does not depend on one of the loop's dimensions is written by every tile along
// it: the kernel checks at launch that the loop has one tile along that dimension. Two
// iterations' stores (the same store or two) whose boxes overlap, a tile wider than the step or
// a second store a few columns on, write the same elements in no order: an error at the store;
// so does a scatter whose tile is wider than the column step at the same rows.
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <string>

namespace mlir::pk {
#define GEN_PASS_DEF_PKCHECKTILERACESPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

// Whether two index values are computed alike: the same value, or the same pure op (constant,
// arithmetic) of operands computed alike (`64 + n` written twice).
bool sameIndex(Value a, Value b, int depth = 0) {
  if (a == b) return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || depth > 8 || x->getName() != y->getName() || !isPure(x) ||
      x->getNumRegions() || x->getAttrDictionary() != y->getAttrDictionary() ||
      x->getNumOperands() != y->getNumOperands() || x->getNumResults() != 1)
    return false;
  for (auto [p, q] : llvm::zip(x->getOperands(), y->getOperands()))
    if (!sameIndex(p, q, depth + 1)) return false;
  return true;
}

// Whether a read and a write of one tensor touch exactly the same tile (an element-wise
// update in place); rows moved by index never provably do.
bool sameTile(Operation *read, Operation *write) {
  auto load = dyn_cast<TileLoadOp>(read);
  auto store = dyn_cast<TileStoreOp>(write);
  if (!load || !store || load.getIndices().size() != store.getIndices().size() ||
      cast<TileType>(load.getType()).getShape() != store.getValue().getType().getShape())
    return false;
  for (auto [p, q] : llvm::zip(load.getIndices(), store.getIndices()))
    if (!sameIndex(p, q)) return false;
  return true;
}

// The extent of a tile along dimension j of a tensor of rank `rank` (a tile of lower rank covers
// the last dimensions, one element along the leading ones).
int64_t extentAlong(ArrayRef<int64_t> shape, size_t rank, size_t j) {
  const size_t lead = rank - shape.size();
  return j < lead ? 1 : shape[j - lead];
}

// An index as a base value plus a constant (base null for a constant).
std::pair<Value, int64_t> baseAndOffset(Value v) {
  if (auto c = getConstantIntValue(v)) return {Value(), *c};
  if (auto add = v.getDefiningOp<arith::AddIOp>()) {
    if (auto c = getConstantIntValue(add.getRhs())) return {add.getLhs(), *c};
    if (auto c = getConstantIntValue(add.getLhs())) return {add.getRhs(), *c};
  }
  return {v, 0};
}

// Whether a register-tile read and a store of one tensor at different places of one iteration
// still cannot race (an in-place rotary embedding reading both halves of a row before writing
// them; a norm whose first range loop reads the row blocks the second rewrites):
// - other iterations: along every dimension of the loop that may have more than one tile,
//   both index one tensor dimension by that loop variable plus a constant, inside the step
//   (v + c with 0 <= c and c + extent <= step), so each iteration stays inside a cell of the
//   tensor that no other iteration touches;
// - this iteration: the two boxes are apart (the same base plus constants whose ranges do not
//   meet), or the tiles have one shape, so one thread holds each element in both and program
//   order orders them (as for a read at the very tile written).
// The box a write covers, as a store's indices and its tile's shape: a store, or a local
// store_add (rows added at their own places: store_rows {add, all_rows} by an iota of the rows).
struct WriteBox {
  SmallVector<Value> indices;
  ArrayRef<int64_t> shape;
};
std::optional<WriteBox> writeBox(Operation *write) {
  if (auto store = dyn_cast<TileStoreOp>(write))
    return WriteBox{SmallVector<Value>(store.getIndices()), store.getValue().getType().getShape()};
  if (auto add = dyn_cast<TileStoreRowsOp>(write); add && add.getAllRows() && !add.getPeer())
    if (auto rows = add.getRows().getDefiningOp<TileIotaOp>(); rows && rows.getDim() == 0)
      return WriteBox{{rows.getOrigin(), add.getCol()}, add.getValue().getType().getShape()};
  return std::nullopt;
}

bool ownCell(Operation *read, Operation *write, TileForeachOp loop) {
  auto load = dyn_cast<TileLoadOp>(read);
  std::optional<WriteBox> store = writeBox(write);
  if (!load || !store) return false;
  auto loaded = cast<TileType>(load.getType());
  ArrayRef<int64_t> ls = loaded.getShape(), ss = store->shape;
  const size_t rank = load.getIndices().size();
  if (store->indices.size() != rank || ls.size() > rank || ss.size() > rank) return false;
  Block &body = loop.getBody().front();
  for (auto [d, step] : llvm::enumerate(loop.getSteps())) {
    if (auto c = getConstantIntValue(loop.getUpperBounds()[d]); c && *c <= step) continue;
    // Inside the cell [s v, s (v + step)): the loop variable itself, or times a constant s > 0,
    // plus a constant c, 0 <= c and c + extent <= s step (packed heads [T, H * D] rotated in
    // place read at n + 64, or at h * 128 + 64 stepping h by 1).
    auto inCell = [&](Value index, int64_t extent) {
      auto [base, offset] = baseAndOffset(index);
      Value v = body.getArgument(d);
      int64_t scale = 1;
      if (auto mul = base ? base.getDefiningOp<arith::MulIOp>() : arith::MulIOp())
        for (auto [x, y] : {std::pair{mul.getLhs(), mul.getRhs()}, std::pair{mul.getRhs(), mul.getLhs()}})
          if (auto c = getConstantIntValue(y); x == v && c && *c > 0) {
            base = v;
            scale = *c;
            break;
          }
      return base == v && offset >= 0 && offset + extent <= scale * step;
    };
    bool cell = false;
    for (size_t j = 0; j < rank && !cell; ++j)
      cell = inCell(load.getIndices()[j], extentAlong(ls, rank, j)) &&
             inCell(store->indices[j], extentAlong(ss, rank, j));
    if (!cell) return false;
  }
  for (size_t j = 0; j < rank; ++j) {
    auto [lb, lo] = baseAndOffset(load.getIndices()[j]);
    auto [sb, so] = baseAndOffset(store->indices[j]);
    if ((lb == sb || (lb && sb && sameIndex(lb, sb))) &&
        (lo + extentAlong(ls, rank, j) <= so || so + extentAlong(ss, rank, j) <= lo))
      return true;
  }
  return ls == ss && loaded.getMemorySpace() == MemorySpace::reg;
}

Value readTensor(Operation *op) {
  if (auto l = dyn_cast<TileLoadOp>(op)) return l.getSource();
  if (auto l = dyn_cast<TileLoadRowsOp>(op); l && !l.getPeer()) return l.getSource();
  if (auto l = dyn_cast<LoadScalarOp>(op)) return l.getSource();  // x.at(i): any element
  return {};
}

Value writtenTensor(Operation *op) {
  if (auto s = dyn_cast<TileStoreOp>(op)) return s.getDest();
  if (auto s = dyn_cast<TileStoreRowsOp>(op); s && !s.getPeer()) return s.getDest();
  // Claims are atomic among themselves, but any other read of the counter races with them.
  if (auto c = dyn_cast<TileClaimOp>(op)) return c.getCounter();
  return {};
}

// The dimensions of `loop` whose variables reach `v` through the ops that compute it.
void dimensionsReaching(Value v, TileForeachOp loop, llvm::SmallPtrSetImpl<Value> &seen,
                        SmallVectorImpl<bool> &reached) {
  if (!seen.insert(v).second) return;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() == &loop.getBody().front()) reached[arg.getArgNumber()] = true;
    return;
  }
  for (Value in : v.getDefiningOp()->getOperands()) dimensionsReaching(in, loop, seen, reached);
}

// Whether `v` can be computed at the kernel's entry: sizes, the world, constants and
// arithmetic on them (not loads, ranks or loop variables).
bool atEntry(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) return isa<KernelOp>(arg.getOwner()->getParentOp());
  Operation *def = v.getDefiningOp();
  if (!isa<arith::ConstantOp, arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
           arith::CeilDivSIOp, arith::MinSIOp, arith::MaxSIOp, DimOp, WorldSizeOp>(def))
    return false;
  return llvm::all_of(def->getOperands(), atEntry);
}

// A store (or a tile sent to a peer) inside the outermost tile loop whose indices ignore one of
// the loop's dimensions: every tile along it writes the same place, in no order. The kernel
// checks at launch that the loop has at most one tile along each such dimension (an error that
// names the store otherwise); where the extent is not known at entry, an error now.
bool guardRepeatedStores(TileForeachOp loop) {
  const unsigned dims = loop.getBody().front().getNumArguments();
  bool ok = true;
  loop.walk([&](Operation *op) {
    // The place: the indices, and for a tile sent to a peer the rank too.
    SmallVector<Value> place;
    if (auto s = dyn_cast<TileStoreOp>(op)) llvm::append_range(place, s.getIndices());
    else if (auto s = dyn_cast<StoreTileOp>(op)) {
      llvm::append_range(place, s.getIndices());
      place.push_back(s.getPeer());
    } else {
      return;
    }
    SmallVector<bool> reached(dims, false);
    llvm::SmallPtrSet<Value, 16> seen;
    for (Value i : place) dimensionsReaching(i, loop, seen, reached);
    for (unsigned d = 0; d < dims; ++d) {
      if (reached[d]) continue;
      Value extent = loop.getUpperBounds()[d];
      const int64_t step = loop.getSteps()[d];
      const std::string message =
          "the store at " + formatLocation(op->getLoc()) + " does not depend on the tile loop's dimension " +
          std::to_string(d) + ", so every tile along it writes the same place in no order: that "
          "dimension must have one tile (its extent at most the step shown)";
      if (auto c = getConstantIntValue(extent)) {
        if (*c <= step) continue;
        op->emitError("every tile along dimension ")
            << d << " of the tile loop (" << *c << " / " << step
            << " tiles) writes the same place here, in no order: make the store's indices use that "
               "dimension's variable";
        ok = false;
        continue;
      }
      if (!atEntry(extent)) {
        op->emitError("every tile along dimension ")
            << d << " of the tile loop writes the same place here, in no order: make the store's "
               "indices use that dimension's variable";
        ok = false;
        continue;
      }
      auto kernel = loop->getParentOfType<KernelOp>();
      OpBuilder b(kernel.getContext());
      b.setInsertionPointToStart(&kernel.getBody().front());
      IRMapping map;
      std::function<Value(Value)> clone = [&](Value v) -> Value {
        if (isa<BlockArgument>(v) || map.contains(v)) return map.lookupOrDefault(v);
        Operation *def = v.getDefiningOp();
        for (Value in : def->getOperands()) clone(in);
        return b.clone(*def, map)->getResult(0);
      };
      Value n = clone(extent);
      Value limit = arith::ConstantIndexOp::create(b, loop.getLoc(), step);
      Value fits = arith::CmpIOp::create(b, loop.getLoc(), arith::CmpIPredicate::sle, n, limit);
      CheckOp::create(b, op->getLoc(), fits, limit, n, b.getStringAttr(message));
    }
  });
  return ok;
}

// An index of a store at the tile whose loop variables are `origin`: constants, the loop's
// variables and integer arithmetic on them (+ - * / %, min, max); nullopt for anything else
// (then no overlap is claimed).
std::optional<int64_t> indexAt(Value v, TileForeachOp loop, ArrayRef<int64_t> origin, int depth = 0) {
  if (auto c = getConstantIntValue(v)) return *c;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &loop.getBody().front() ? std::optional<int64_t>(origin[arg.getArgNumber()])
                                                     : std::nullopt;
  Operation *op = v.getDefiningOp();
  if (depth > 16 || !op) return std::nullopt;
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) return indexAt(op->getOperand(0), loop, origin, depth + 1);
  if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp, arith::RemSIOp, arith::MinSIOp,
           arith::MaxSIOp>(op))
    return std::nullopt;
  auto x = indexAt(op->getOperand(0), loop, origin, depth + 1), y = indexAt(op->getOperand(1), loop, origin, depth + 1);
  if (!x || !y) return std::nullopt;
  if (isa<arith::AddIOp>(op)) return *x + *y;
  if (isa<arith::SubIOp>(op)) return *x - *y;
  if (isa<arith::MulIOp>(op)) return *x * *y;
  if (isa<arith::MinSIOp>(op)) return std::min(*x, *y);
  if (isa<arith::MaxSIOp>(op)) return std::max(*x, *y);
  if (*y == 0) return std::nullopt;
  return isa<arith::DivSIOp>(op) ? *x / *y : *x % *y;
}

// Whether `v` is computed from slots claimed from counters: different at every tile.
bool fromClaim(Value v, int depth = 0) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > 32) return false;
  if (isa<TileClaimOp>(op)) return true;
  return llvm::any_of(op->getOperands(), [&](Value x) { return fromClaim(x, depth + 1); });
}

// A store of a whole tile into a tensor (this rank's, or a peer's: then `peer`), its indices and
// its extents. A scatter (store_rows, not an add) has only its column for an index and its index
// tile as `rows`: two of its tiles write the same rows where they agree on the loop variables
// that reach that tile (the same indices, computed or loaded alike).
struct StoreBox {
  Operation *op = nullptr;
  Value dest, peer, rows;
  SmallVector<Value> indices;
  SmallVector<int64_t> shape;
};
std::optional<StoreBox> boxOf(Operation *op) {
  StoreBox b;
  b.op = op;
  if (auto s = dyn_cast<TileStoreOp>(op)) {
    b.dest = s.getDest(), b.indices = llvm::to_vector(s.getIndices());
    b.shape = llvm::to_vector(cast<TileType>(s.getValue().getType()).getShape());
  } else if (auto s = dyn_cast<StoreTileOp>(op)) {
    b.dest = s.getDest(), b.peer = s.getPeer(), b.indices = llvm::to_vector(s.getIndices());
    b.shape = llvm::to_vector(cast<TileType>(s.getValue().getType()).getShape());
  } else if (auto s = dyn_cast<TileStoreRowsOp>(op); s && !s.getAdd() && !fromClaim(s.getRows())) {
    ArrayRef<int64_t> shape = cast<TileType>(s.getValue().getType()).getShape();
    if (shape.size() != 2) return std::nullopt;
    b.dest = s.getDest(), b.peer = s.getPeer(), b.rows = s.getRows(), b.indices = {s.getCol()};
    b.shape = {shape[1]};
  } else {
    return std::nullopt;
  }
  if (b.shape.size() != b.indices.size()) return std::nullopt;
  return b;
}

// Two tiles of `loop` (each up to a few steps from the start along the dimensions the stores'
// indices use, within a constant extent) where stores `a` and `b` write overlapping boxes: the
// tiles' step counts, or empty when none is found.
std::pair<SmallVector<int64_t>, SmallVector<int64_t>> overlapping(const StoreBox &a, const StoreBox &b,
                                                                  TileForeachOp loop) {
  const unsigned dims = loop.getSteps().size();
  SmallVector<bool> used(dims, false);
  llvm::SmallPtrSet<Value, 16> seen;
  for (Value i : llvm::concat<const Value>(a.indices, b.indices)) dimensionsReaching(i, loop, seen, used);
  // A scatter's rows are the same at two tiles that agree on the dimensions reaching its index tile.
  SmallVector<bool> rowDims(dims, false);
  llvm::SmallPtrSet<Value, 16> rowSeen;
  if (a.rows) dimensionsReaching(a.rows, loop, rowSeen, rowDims);
  for (unsigned d = 0; d < dims; ++d) used[d] = used[d] || rowDims[d];
  SmallVector<bool> peerDims(dims, false);
  llvm::SmallPtrSet<Value, 16> peerSeen;
  if (a.peer) dimensionsReaching(a.peer, loop, peerSeen, peerDims);
  if (b.peer) dimensionsReaching(b.peer, loop, peerSeen, peerDims);
  const bool peerFollows = llvm::is_contained(peerDims, true);
  for (unsigned d = 0; d < dims; ++d) used[d] = used[d] || peerDims[d];
  const unsigned moved = llvm::count(used, true);
  const int64_t most = moved <= 2 ? 8 : moved == 3 ? 5 : 3;  // keeps the pairs below ~10^5
  SmallVector<int64_t> limit(dims, 0);
  for (unsigned d = 0; d < dims; ++d) {
    if (!used[d]) continue;
    limit[d] = most;
    if (auto c = getConstantIntValue(loop.getUpperBounds()[d]))
      limit[d] = std::min(limit[d], (*c + loop.getSteps()[d] - 1) / loop.getSteps()[d] - 1);
  }
  // Every tile's boxes, then every pair of different tiles.
  struct Tile {
    SmallVector<int64_t> k, at, bt;
    int64_t pa = 0, pb = 0;  // the peers, where they follow the tile
  };
  std::vector<Tile> tiles;
  SmallVector<int64_t> k(dims, 0);
  std::function<bool(unsigned)> enumerate = [&](unsigned d) -> bool {
    if (d == dims) {
      SmallVector<int64_t> origin(dims);
      for (unsigned i = 0; i < dims; ++i) origin[i] = k[i] * loop.getSteps()[i];
      Tile t{k, {}, {}};
      for (Value i : a.indices)
        if (auto x = indexAt(i, loop, origin)) t.at.push_back(*x);
        else return false;
      for (Value i : b.indices)
        if (auto x = indexAt(i, loop, origin)) t.bt.push_back(*x);
        else return false;
      if (peerFollows) {  // stores to a peer chosen per tile race only on the same peer
        auto x = indexAt(a.peer, loop, origin), y = indexAt(b.peer, loop, origin);
        if (!x || !y) return false;
        t.pa = *x, t.pb = *y;
      }
      tiles.push_back(std::move(t));
      return true;
    }
    for (int64_t x = 0; x <= limit[d]; ++x) {
      k[d] = x;
      if (!enumerate(d + 1)) return false;
    }
    return true;
  };
  if (!enumerate(0)) return {};
  for (const Tile &s : tiles)
    for (const Tile &t : tiles) {
      if (s.k == t.k || s.pa != t.pb) continue;
      bool overlap = true;
      for (unsigned d = 0; d < dims && overlap; ++d) overlap = !rowDims[d] || s.k[d] == t.k[d];
      for (unsigned i = 0; i < a.shape.size() && overlap; ++i)
        overlap = s.at[i] < t.bt[i] + b.shape[i] && t.bt[i] < s.at[i] + a.shape[i];
      if (overlap) return {s.k, t.k};
    }
  return {};
}

// Stores of the loop (outside nested loops, whose trips would add places) that two tiles both
// make to the same elements: an error at the second, naming the tiles.
bool checkWriteOverlaps(TileForeachOp loop) {
  SmallVector<StoreBox> boxes;
  for (Operation &op : loop.getBody().front())
    if (auto b = boxOf(&op)) boxes.push_back(*b);
  auto tileName = [&](ArrayRef<int64_t> k) {
    std::string s;
    for (auto [d, x] : llvm::enumerate(k))
      s += (s.empty() ? "" : ", ") + std::to_string(x * loop.getSteps()[d]);
    return "(" + s + ")";
  };
  for (unsigned i = 0; i < boxes.size(); ++i)
    for (unsigned j = i; j < boxes.size(); ++j) {
      const StoreBox &a = boxes[i], &b = boxes[j];
      if (a.dest != b.dest || bool(a.peer) != bool(b.peer) || (a.peer && !sameIndex(a.peer, b.peer))) continue;
      // Two different scatters' rows, or a scatter's and a box's, are the protocol checker's.
      if ((a.rows || b.rows) && i != j) continue;
      auto [ka, kb] = overlapping(a, b, loop);
      if (ka.empty()) continue;
      if (a.rows) {
        b.op->emitError("this store_rows writes the same rows (its index tile is the same at both tiles) and "
                        "overlapping columns at two tiles of the loop (the tiles at ")
            << tileName(ka) << " and " << tileName(kb) << ", its tile " << a.shape[0]
            << " columns wide): tiles run in parallel and in no order, so the values race; make the tile no "
               "wider than the loop's column step";
        return false;
      }
      b.op->emitError("this store writes elements that ")
          << (i == j ? "the same store" : "the store at " + formatLocation(a.op->getLoc()))
          << " writes at another tile of the loop (the tiles at " << tileName(ka) << " and " << tileName(kb)
          << "): tiles run in parallel and in no order, so the values race; make each tile's stores "
             "cover only its own elements (a tile no larger than the step)";
      return false;
    }
  return true;
}

// Whether integer `v` is computed from a value read from memory (`offsets.at(b)`).
bool fromMemory(Value v, int depth = 0) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > 16) return false;
  if (isa<LoadScalarOp>(op)) return true;
  if (!isPure(op) || op->getNumRegions()) return false;
  return llvm::any_of(op->getOperands(), [&](Value x) { return fromMemory(x, depth + 1); });
}

// The loads whose elements reach `v` along its dimension `fromEnd` (counted from the last) with
// more than one element there, through casts, element-wise maps and selects, and reshapes that
// keep that dimension and the ones after it: the loads whose clipped padding may sit in `v`.
void rowSources(Value v, int64_t fromEnd, SmallVectorImpl<TileLoadOp> &out, int depth = 0) {
  auto tile = dyn_cast<TileType>(v.getType());
  if (!tile || fromEnd >= tile.getRank() || tile.getShape()[tile.getRank() - 1 - fromEnd] <= 1 || depth > 32)
    return;
  Operation *op = v.getDefiningOp();
  if (!op) return;
  if (auto l = dyn_cast<TileLoadOp>(op)) {
    out.push_back(l);
  } else if (isa<TileCastOp, TileMapOp, TileSelectOp>(op)) {
    for (Value x : op->getOperands()) rowSources(x, fromEnd, out, depth + 1);
  } else if (auto r = dyn_cast<TileReshapeOp>(op)) {
    ArrayRef<int64_t> in = cast<TileType>(r.getInput().getType()).getShape(), o = tile.getShape();
    for (int64_t d = 0; d <= fromEnd; ++d)
      if (d >= int64_t(in.size()) || in[in.size() - 1 - d] != o[o.size() - 1 - d]) return;
    rowSources(r.getInput(), fromEnd, out, depth + 1);
  }
}

// A tile stored at a place read from memory (a jagged row offset) along a dimension in which it
// holds rows of a load whose own place is not: where that load is clipped at its tensor's end,
// its padding (zeros, or what is computed from them) lands in the destination past the valid
// rows, on rows that belong to the next segment. Indices from memory are taken on trust, so the
// race checkers cannot see it; a warning names the fix.
void warnPaddingAtMemoryOffsets(TileForeachOp loop) {
  loop.walk([&](TileStoreOp st) {
    auto tile = cast<TileType>(st.getValue().getType());
    const int64_t rank = st.getIndices().size(), r = tile.getRank();
    for (int64_t i = 0; i < r; ++i) {
      const int64_t j = rank - r + i;
      if (j < 0 || tile.getShape()[i] <= 1 || !fromMemory(st.getIndices()[j])) continue;
      SmallVector<TileLoadOp> sources;
      rowSources(st.getValue(), r - 1 - i, sources);
      for (TileLoadOp l : sources) {
        const int64_t lj = int64_t(l.getIndices().size()) - 1 - (r - 1 - i);  // the load's tensor dimension
        if (lj < 0 || fromMemory(l.getIndices()[lj])) continue;
        auto diag = st.emitWarning()
                    << "this store's place along dimension " << j << " is read from memory, but its tile's "
                    << tile.getShape()[i] << " elements along it come from a load that clips at its own "
                       "tensor's end (dimension " << lj << "): where that load is partial, its padding (zeros, "
                       "or what is computed from them) lands here past the valid elements, on elements another "
                       "tile may write, in no order. Move rows by index instead: store_rows(dst, tile, "
                       "rows, ...) with the rows past the valid length masked to -1 (store_rows skips a "
                       "clipped load's padding)";
        diag.attachNote(l.getLoc()) << "the load";
        return;
      }
    }
  });
}

// Whether the loop has one tile: every extent a constant no larger than its step.
bool hasOneTile(TileForeachOp loop) {
  for (auto [d, step] : llvm::enumerate(loop.getSteps())) {
    auto c = getConstantIntValue(loop.getUpperBounds()[d]);
    if (!c || *c > step) return false;
  }
  return true;
}

// In a loop of one tile the block alone runs the body, so a read and a later write of one
// tensor at different places race only among the block's threads: a block barrier before the
// write orders them, when the read comes first in the body and the two sit in different ops of
// it (not both inside one nested loop, whose next trip would read after the write). A read
// after the write stays refused: the loop's loads may be fetched ahead of the body.
bool readsBeforeWriteInOneTile(Operation *read, Operation *write, TileForeachOp loop) {
  Block &body = loop.getBody().front();
  Operation *r = body.findAncestorOpInBlock(*read), *w = body.findAncestorOpInBlock(*write);
  return r && w && r != w && r->isBeforeInBlock(w);
}

struct CheckTileRaces : mlir::pk::impl::PkCheckTileRacesPassBase<CheckTileRaces> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](TileForeachOp loop) {
      if (loop->getParentOfType<WorkerOp>()) return;  // device-level loops come from pkc
      if (!loop->getParentOfType<TileForeachOp>()) warnPaddingAtMemoryOffsets(loop);
      if (!loop->getParentOfType<TileForeachOp>() && (!guardRepeatedStores(loop) || !checkWriteOverlaps(loop))) {
        failed = true;
        return;
      }
      SmallVector<Operation *> writes;
      loop.walk([&](Operation *op) {
        if (writtenTensor(op)) writes.push_back(op);
      });
      const bool oneTile = hasOneTile(loop);
      loop.walk([&](Operation *read) {
        Value source = readTensor(read);
        if (!source) return WalkResult::advance();
        for (Operation *write : writes) {
          if (writtenTensor(write) != source || sameTile(read, write) || ownCell(read, write, loop)) continue;
          if (oneTile && readsBeforeWriteInOneTile(read, write, loop)) {
            if (!write->hasAttr(kBarrierBeforeAttr))
              recordDecision(write, "tile races",
                             "a block barrier before it: the loop has one tile, so only one block's threads "
                             "read and write this tensor, and the barrier keeps the body's order among them");
            write->setAttr(kBarrierBeforeAttr, UnitAttr::get(write->getContext()));
            continue;
          }
          // An add (partial sums from every tile) is complete only after the loop: the fix is
          // a later loop, not another tensor.
          auto rowsWrite = dyn_cast<TileStoreRowsOp>(write);
          const bool adds = rowsWrite && rowsWrite.getAdd();
          auto diag =
              oneTile ? read->emitError("this one-tile loop reads a tensor after writing it (or inside a nested "
                                        "loop that also writes it); its loads may be fetched ahead of the body, so "
                                        "read it in a later tile loop (pkc orders the loops)")
                      : read->emitError(
              Twine("this tile loop reads a tensor at other tiles than it writes; its iterations run "
                    "in parallel and in no order, so the read races with another iteration's write: ") +
              (adds ? "the sum is complete only once every tile has added, so read it in a later tile "
                      "loop (pkc orders the loops)"
                    : "write the result into another tensor"));
          diag.attachNote(write->getLoc()) << "the write";
          failed = true;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
    });
    if (failed) signalPassFailure();
  }
};

} // namespace

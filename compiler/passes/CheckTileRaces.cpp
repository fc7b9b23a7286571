// pk-check-tile-races: a tile loop's iterations run in parallel and in no order, so a loop that
// writes a tensor may read it only at the very tile it writes (an element-wise update in
// place); any other read (a scalar `x.at(i)` too), and any read of rows a loop scatters by
// index or of counters it claims slots from, races with another iteration's write and is an
// error at the read. Peers' copies are the protocol checker's (pk-verify-protocol). A store
// whose place does not depend on one of the loop's dimensions is written by every tile along
// it: the kernel checks at launch that the loop has one tile along that dimension. Two
// iterations' stores (the same store or two) whose boxes overlap, a tile wider than the step or
// a second store a few columns on, write the same elements in no order: an error at the store.
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

// One index of a store as the loop sees it: loop variable `dim` plus `offset` (dim -1: the
// constant `offset`); nullopt when it is anything else (then no overlap is claimed).
struct Place {
  int dim;
  int64_t offset;
};
std::optional<Place> placeOf(Value v, TileForeachOp loop) {
  Block &body = loop.getBody().front();
  if (auto c = getConstantIntValue(v)) return Place{-1, *c};
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() == &body) return Place{int(arg.getArgNumber()), 0};
    return std::nullopt;
  }
  Operation *op = v.getDefiningOp();
  if (!isa<arith::AddIOp, arith::SubIOp>(op)) return std::nullopt;
  auto x = placeOf(op->getOperand(0), loop), y = placeOf(op->getOperand(1), loop);
  if (!x || !y || (x->dim >= 0 && y->dim >= 0)) return std::nullopt;  // two variables: not claimed
  if (isa<arith::SubIOp>(op))
    return y->dim >= 0 ? std::nullopt : std::optional<Place>(Place{x->dim, x->offset - y->offset});
  return Place{x->dim >= 0 ? x->dim : y->dim, x->offset + y->offset};
}

// A store of a whole tile into a tensor (this rank's, or a peer's: then `peer`), its places
// and its extents; null `dest` when the store's place is not of the form above.
struct StoreBox {
  Operation *op = nullptr;
  Value dest, peer;
  SmallVector<Place> at;
  ArrayRef<int64_t> shape;
};
std::optional<StoreBox> boxOf(Operation *op, TileForeachOp loop) {
  StoreBox b;
  b.op = op;
  ValueRange indices;
  if (auto s = dyn_cast<TileStoreOp>(op)) {
    b.dest = s.getDest(), indices = s.getIndices(), b.shape = cast<TileType>(s.getValue().getType()).getShape();
  } else if (auto s = dyn_cast<StoreTileOp>(op)) {
    b.dest = s.getDest(), b.peer = s.getPeer(), indices = s.getIndices();
    b.shape = cast<TileType>(s.getValue().getType()).getShape();
  } else {
    return std::nullopt;
  }
  if (b.shape.size() != indices.size()) return std::nullopt;
  for (Value i : indices) {
    std::optional<Place> p = placeOf(i, loop);
    if (!p) return std::nullopt;
    b.at.push_back(*p);
  }
  return b;
}

// Two iterations of `loop` k steps apart (k a vector over its dimensions, not all 0) whose
// stores `a` and `b` overlap in every dimension, searched over small k; empty when none. Only
// dimensions whose extent may hold more than |k| + 1 tiles are moved.
SmallVector<int64_t> overlapping(const StoreBox &a, const StoreBox &b, TileForeachOp loop) {
  const unsigned dims = loop.getSteps().size();
  SmallVector<int64_t> reach(dims, 0);  // how many steps apart an overlap can lie, per dimension
  for (unsigned i = 0; i < a.at.size(); ++i) {
    int d = a.at[i].dim;
    if (d < 0 || d != b.at[i].dim) continue;
    const int64_t step = loop.getSteps()[d];
    const int64_t span = std::abs(a.at[i].offset - b.at[i].offset) + std::max(a.shape[i], b.shape[i]);
    int64_t r = span / step + 1;
    if (auto c = getConstantIntValue(loop.getUpperBounds()[d])) r = std::min(r, (*c + step - 1) / step - 1);
    reach[d] = std::min<int64_t>(r, 8);
  }
  SmallVector<int64_t> k(dims, 0);
  std::function<bool(unsigned)> search = [&](unsigned d) -> bool {
    if (d == dims) {
      if (llvm::all_of(k, [](int64_t x) { return x == 0; })) return false;
      for (unsigned i = 0; i < a.at.size(); ++i) {
        // a's box minus b's box (b at the iteration k steps on) along index i.
        const Place &pa = a.at[i], &pb = b.at[i];
        if ((pa.dim < 0) != (pb.dim < 0) || (pa.dim >= 0 && pa.dim != pb.dim)) return false;  // not claimed
        const int64_t shift = pa.dim >= 0 ? k[pa.dim] * loop.getSteps()[pa.dim] : 0;
        const int64_t x = pa.offset - (pb.offset + shift);
        if (x <= -a.shape[i] || x >= b.shape[i]) return false;
      }
      return true;
    }
    for (int64_t x = -reach[d]; x <= reach[d]; ++x) {
      k[d] = x;
      if (search(d + 1)) return true;
    }
    k[d] = 0;
    return false;
  };
  return search(0) ? k : SmallVector<int64_t>();
}

// Stores of the loop (outside nested loops, whose trips would add places) that two iterations
// both make to the same elements: an error at the first, naming the iterations.
bool checkWriteOverlaps(TileForeachOp loop) {
  SmallVector<StoreBox> boxes;
  for (Operation &op : loop.getBody().front())
    if (auto b = boxOf(&op, loop)) boxes.push_back(*b);
  for (unsigned i = 0; i < boxes.size(); ++i)
    for (unsigned j = i; j < boxes.size(); ++j) {
      const StoreBox &a = boxes[i], &b = boxes[j];
      if (a.dest != b.dest || bool(a.peer) != bool(b.peer) || (a.peer && !sameIndex(a.peer, b.peer))) continue;
      SmallVector<int64_t> k = overlapping(a, b, loop);
      if (k.empty()) continue;
      std::string apart;
      for (unsigned d = 0; d < k.size(); ++d)
        if (k[d])
          apart += (apart.empty() ? "" : ", ") + std::to_string(std::abs(k[d])) + " step(s) along dimension " +
                   std::to_string(d);
      b.op->emitError("this store writes elements that ")
          << (i == j ? "the same store" : "the store at " + formatLocation(a.op->getLoc()))
          << " writes in another iteration of the tile loop (" << apart
          << " away): iterations run in parallel and in no order, so the values race; make "
             "each iteration's stores cover only its own tile (a tile no larger than the step)";
      return false;
    }
  return true;
}

struct CheckTileRaces : mlir::pk::impl::PkCheckTileRacesPassBase<CheckTileRaces> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](TileForeachOp loop) {
      if (loop->getParentOfType<WorkerOp>()) return;  // device-level loops come from pkc
      if (!loop->getParentOfType<TileForeachOp>() && (!guardRepeatedStores(loop) || !checkWriteOverlaps(loop))) {
        failed = true;
        return;
      }
      SmallVector<Operation *> writes;
      loop.walk([&](Operation *op) {
        if (writtenTensor(op)) writes.push_back(op);
      });
      loop.walk([&](Operation *read) {
        Value source = readTensor(read);
        if (!source) return WalkResult::advance();
        for (Operation *write : writes) {
          if (writtenTensor(write) != source || sameTile(read, write)) continue;
          auto diag = read->emitError(
              "this tile loop reads a tensor at other tiles than it writes; its iterations run "
              "in parallel and in no order, so the read races with another iteration's write: "
              "write the result into another tensor");
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

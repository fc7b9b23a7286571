// pk-exact-index-tiles: element coordinates (row_index, col_index, dim_index) are f32 tiles,
// exact only below 2^24. Where the general path uses them as integers, compute them as integers.
#include "pk/Passes/Passes.h"
#include "pk/Dialect/Pk.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKEXACTINDEXTILESPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

TileType withElement(TileType t, Type elem) {
  return TileType::get(t.getContext(), t.getShape(), elem, t.getMemorySpace());
}

// An f32 iota (the coordinates as the spec wrote them), or a reshape or transpose of one
// (which only move its elements: a 1-D row of positions, a transposed column): the same
// coordinates built in `elem`; null, with nothing built, for anything else (each level is
// checked before the one below it builds).
Value exactCoords(OpBuilder &b, Location loc, Value v, Type elem, int depth = 0) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > 8) return {};
  auto type = withElement(cast<TileType>(v.getType()), elem);
  if (auto iota = dyn_cast<TileIotaOp>(op)) {
    if (!cast<TileType>(iota.getType()).getElementType().isF32()) return {};
    return TileIotaOp::create(b, loc, type, iota.getOrigin(), iota.getDim());
  }
  if (!isa<TileReshapeOp, TileTransposeOp>(op)) return {};
  Value in = exactCoords(b, loc, op->getOperand(0), elem, depth + 1);
  if (!in) return {};
  if (isa<TileReshapeOp>(op)) return TileReshapeOp::create(b, loc, type, in);
  return TileTransposeOp::create(b, loc, type, in);
}

// splat(float(i)) of an integer scalar i (an index, a size, an integer argument or count): the
// i64 it was converted from; null otherwise.
Value integerSplat(Value v) {
  auto splat = v.getDefiningOp<TileSplatOp>();
  if (!splat) return {};
  auto conv = splat.getScalar().getDefiningOp<arith::SIToFPOp>();
  if (!conv || !conv.getIn().getType().isSignlessInteger(64)) return {};
  return conv.getIn();
}

struct ExactIndexTiles : mlir::pk::impl::PkExactIndexTilesPassBase<ExactIndexTiles> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Type i64 = IntegerType::get(ctx, 64);
    SmallVector<Operation *> dead;
    // Only tile loops the templates did not take (the general path, fallbacks included): the
    // templates' epilogues and score maps were read from the f32 forms already.
    getOperation().walk([&](Operation *op) {
      if (!op->getParentOfType<TileForeachOp>()) return;
      {
        // cast<i32>(row_index(m)) -> an i32 iota: the row itself, not its nearest float.
        if (auto c = dyn_cast<TileCastOp>(op)) {
          auto out = cast<TileType>(c.getType());
          if (!isa<IntegerType>(out.getElementType())) return;
          OpBuilder b(c);
          Value exact = exactCoords(b, c.getLoc(), c.getInput(), out.getElementType());
          if (!exact) return;
          c.getResult().replaceAllUsesWith(exact);
          dead.push_back(c);
          return;
        }
        // row_index(j) < hi, hi an integer: compared as i64, the mask cast back to f32 (0 and 1
        // are exact), so rows past 2^24 are neither merged nor dropped.
        auto map = dyn_cast<TileMapOp>(op);
        if (!map || !isComparison(map.getKind()) || map.getInputs().size() != 2) return;
        auto result = cast<TileType>(map.getType());
        if (!result.getElementType().isF32()) return;
        for (int side : {0, 1}) {
          Value bound = integerSplat(map.getInputs()[1 - side]);
          if (!bound) continue;
          OpBuilder b(map);
          Location loc = map.getLoc();
          Value coords = exactCoords(b, loc, map.getInputs()[side], i64);
          if (!coords) continue;
          auto splatType = withElement(cast<TileType>(map.getInputs()[1 - side].getType()), i64);
          Value limit = TileSplatOp::create(b, loc, splatType, bound);
          MapKind kind = side == 0 ? map.getKind() : swappedComparison(map.getKind());
          Value mask = TileMapOp::create(b, loc, withElement(result, i64), MapKindAttr::get(ctx, kind),
                                         ValueRange{coords, limit});
          Value asFloat = TileCastOp::create(b, loc, result, mask);
          map.getResult().replaceAllUsesWith(asFloat);
          dead.push_back(map);
          return;
        }
      }
    });
    for (Operation *op : dead) op->erase();
    // The f32 iotas and splats nothing reads any more (users first).
    SmallVector<Operation *> unused;
    getOperation().walk([&](Operation *op) {
      if (isa<TileIotaOp, TileSplatOp, arith::SIToFPOp, TileReshapeOp, TileTransposeOp>(op)) unused.push_back(op);
    });
    for (Operation *op : llvm::reverse(unused))
      if (op->use_empty()) op->erase();
  }
};

} // namespace

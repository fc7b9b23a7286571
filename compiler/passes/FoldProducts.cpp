// pk-fold-products: products written in equivalent forms become the one form the GEMM and
// attention templates recognise (and the general path runs with fewer steps):
//   mma(a, transpose(x), acc)          -> mma_t(a, x, acc)        (and mma_t of a transpose -> mma)
//   mma(a, b, zeros) + x               -> mma(a, b, x)            (x of the product's type)
//   a K loop whose accumulator starts at x (not zeros): it starts at zeros, and x is added to
//   its result after the loop (x + zeros as the start: x alone, broadcast as the spec wrote it).
//   where(c, t, F) * C                 -> where(c, t * C, F * C)  (F, C constants: the masked fill
//                                                                  scaled once; exact)
// The middle two change only the order of an f32 sum (a GEMM's K order is the template's anyway);
// integer sums are exact.
#include "pk/Passes/Passes.h"
#include "pk/Dialect/Pk.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKFOLDPRODUCTSPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

bool isZeros(Value v) { return v && v.getDefiningOp<TileZerosOp>(); }

// mma(a, transpose(x)) as mma_t(a, x), and mma_t(a, transpose(x)) as mma(a, x).
void foldTransposedB(TileMmaOp mma) {
  auto t = mma.getB().getDefiningOp<TileTransposeOp>();
  if (!t || cast<TileType>(t.getInput().getType()).getRank() != 2) return;
  OpBuilder b(mma);
  auto folded = TileMmaOp::create(b, mma.getLoc(), mma.getType(), mma.getA(), t.getInput(), mma.getAcc(),
                                  !mma.getTransposeB());
  mma.replaceAllUsesWith(folded.getResult());
  mma.erase();
  if (t->use_empty()) t.erase();
}

// x + mma(a, b, zeros) (either order) as mma(a, b, x): the product added into x.
void foldAddedProduct(TileMapOp add) {
  if (add.getKind() != MapKind::add || add.getInputs().size() != 2) return;
  for (int i = 0; i < 2; ++i) {
    auto mma = add.getInputs()[i].getDefiningOp<TileMmaOp>();
    Value x = add.getInputs()[1 - i];
    if (!mma || !mma->hasOneUse() || !isZeros(mma.getAcc()) || x.getType() != mma.getType()) continue;
    OpBuilder b(add);
    auto folded = TileMmaOp::create(b, add.getLoc(), mma.getType(), mma.getA(), mma.getB(), x, mma.getTransposeB());
    add.replaceAllUsesWith(folded.getResult());
    add.erase();
    mma.erase();
    return;
  }
}

// The constant every element of a splat holds, if it is one.
std::optional<double> splatConstant(Value v) {
  auto splat = v.getDefiningOp<TileSplatOp>();
  APFloat c(0.0);
  if (!splat || !matchPattern(splat.getScalar(), m_ConstantFloat(&c))) return std::nullopt;
  return c.convertToDouble();
}

// where(c, t, F) * C (either order; F and C constant splats) as where(c, t * C, F * C): scores
// masked before their scale are the attention template's form, scale then mask (set 36, k44).
void foldScaledSelect(TileMapOp mul) {
  if (mul.getKind() != MapKind::mul || mul.getInputs().size() != 2) return;
  for (int i = 0; i < 2; ++i) {
    auto select = mul.getInputs()[i].getDefiningOp<TileSelectOp>();
    Value scale = mul.getInputs()[1 - i];
    std::optional<double> f = select ? splatConstant(select.getOnFalse()) : std::nullopt;
    std::optional<double> c = splatConstant(scale);
    if (!f || !c || scale.getType() != mul.getType() || select.getType() != mul.getType()) continue;
    auto type = cast<TileType>(mul.getType());
    auto elem = dyn_cast<FloatType>(type.getElementType());
    if (!elem || !elem.isF32()) return;  // F * C as an f32 constant
    OpBuilder b(mul);
    Location loc = mul.getLoc();
    auto scaled = TileMapOp::create(b, loc, type, MapKindAttr::get(mul.getContext(), MapKind::mul),
                                    ValueRange{select.getOnTrue(), scale});
    // F * C rounded as f32 computes it.
    Value fillScalar = arith::ConstantFloatOp::create(b, loc, elem, APFloat(float(*f) * float(*c)));
    Value fill = TileSplatOp::create(b, loc, type, fillScalar);
    auto folded = TileSelectOp::create(b, loc, type, select.getCond(), scaled, fill);
    mul.replaceAllUsesWith(folded.getResult());
    mul.erase();
    if (select->use_empty()) select.erase();
    return;
  }
}

// A range loop whose one carried tile is an accumulator of products (the loop yields
// mma(.., acc) and reads acc nowhere else) started at x: started at zeros, x added after it.
void foldStartedAccumulator(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1) return;
  Value init = loop.getInitArgs()[0];
  auto type = dyn_cast<TileType>(init.getType());
  if (!type || isZeros(init)) return;
  BlockArgument acc = loop.getRegionIterArgs()[0];
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  // The running sum used nowhere else in the loop (a partial sum stored each trip would lose x).
  auto mma = yield.getOperand(0).getDefiningOp<TileMmaOp>();
  if (!mma || mma.getAcc() != acc || !acc.hasOneUse() || !mma->hasOneUse()) return;
  // What to add after the loop: x, or y where the spec started at zeros + y (y broadcast).
  Value addend = init;
  if (auto start = init.getDefiningOp<TileMapOp>();
      start && start.getKind() == MapKind::add && start.getInputs().size() == 2) {
    if (isZeros(start.getInputs()[0]) && start.getInputs()[0].getType() == type) addend = start.getInputs()[1];
    else if (isZeros(start.getInputs()[1]) && start.getInputs()[1].getType() == type) addend = start.getInputs()[0];
  }
  OpBuilder b(loop);
  Value zeros = TileZerosOp::create(b, loop.getLoc(), type);
  loop.getInitArgsMutable()[0].assign(zeros);
  b.setInsertionPointAfter(loop);
  Value result = loop.getResult(0);
  auto sum = TileMapOp::create(b, loop.getLoc(), type, MapKindAttr::get(loop.getContext(), MapKind::add),
                               ValueRange{result, addend});
  result.replaceAllUsesExcept(sum.getResult(), sum.getOperation());
  if (Operation *start = init.getDefiningOp(); start && addend != init && start->use_empty()) start->erase();
}

struct FoldProducts : mlir::pk::impl::PkFoldProductsPassBase<FoldProducts> {
  void runOnOperation() override {
    SmallVector<TileMmaOp> products;
    getOperation().walk([&](TileMmaOp mma) { products.push_back(mma); });
    for (TileMmaOp mma : products) foldTransposedB(mma);
    SmallVector<TileMapOp> adds;
    getOperation().walk([&](TileMapOp map) { adds.push_back(map); });
    for (TileMapOp add : adds) foldAddedProduct(add);
    SmallVector<TileMapOp> muls;
    getOperation().walk([&](TileMapOp map) { muls.push_back(map); });
    for (TileMapOp mul : muls) foldScaledSelect(mul);
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) foldStartedAccumulator(loop);
  }
};

} // namespace

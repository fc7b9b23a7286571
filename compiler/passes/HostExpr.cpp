// Values the host knows before a launch, as host expressions (pk/runtime/host_check.h).
#include "pk/Passes/HostExpr.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::pk;

std::optional<::pk::HostExpr> mlir::pk::hostExprOf(Value v, Block &entry, bool withRank) {
  using K = ::pk::HostExpr::Kind;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != &entry || !arg.getType().isIntOrIndex()) return std::nullopt;
    return ::pk::HostExpr::scalar(int(arg.getArgNumber()));
  }
  Operation *op = v.getDefiningOp();
  if (auto dim = dyn_cast<DimOp>(op)) {
    auto arg = dyn_cast<BlockArgument>(dim.getTensor());
    if (!arg || arg.getOwner() != &entry || dim.getDim() > 3) return std::nullopt;
    return ::pk::HostExpr::extent(int(arg.getArgNumber()), int(dim.getDim()));
  }
  if (isa<WorldSizeOp>(op)) return ::pk::HostExpr::world();
  if (withRank && isa<RankOp>(op)) return ::pk::HostExpr::leaf(::pk::HostExpr::Kind::rank);
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto i = dyn_cast<IntegerAttr>(c.getValue());
    if (!i || !c.getType().isIndex()) return std::nullopt;
    return ::pk::HostExpr::constant(i.getValue().getSExtValue());
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) return hostExprOf(op->getOperand(0), entry, withRank);
  K kind;
  if (isa<arith::AddIOp>(op)) kind = K::add;
  else if (isa<arith::SubIOp>(op)) kind = K::sub;
  else if (isa<arith::MulIOp>(op)) kind = K::mul;
  else if (isa<arith::DivSIOp>(op)) kind = K::div;
  else if (isa<arith::RemSIOp>(op)) kind = K::rem;
  else if (isa<arith::MinSIOp>(op)) kind = K::min;
  else if (isa<arith::MaxSIOp>(op)) kind = K::max;
  else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    if (!::pk::host_op_kind(arith::stringifyCmpIPredicate(cmp.getPredicate()).str(), &kind))
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  auto a = hostExprOf(op->getOperand(0), entry, withRank), b = hostExprOf(op->getOperand(1), entry, withRank);
  if (!a || !b) return std::nullopt;
  return ::pk::HostExpr::op(kind, std::move(*a), std::move(*b));
}


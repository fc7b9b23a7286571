// The `// pk-host-check` lines (pk/runtime/host_check.h): each pk.check whose values the host
// knows before a launch (argument extents, integer scalar arguments, the world size) is
// written once more as an expression the typed launchers and the JIT evaluate on the host.
#include "Emitter.h"

#include <pk/runtime/host_check.h>

using namespace mlir;
using namespace mlir::pk;

namespace {

// The value as a host expression, or nullopt when the host cannot know it (the rank, data
// loaded on the device, anything this does not recognise).
std::optional<::pk::HostExpr> hostExpr(Value v, Block &entry) {
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
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto i = dyn_cast<IntegerAttr>(c.getValue());
    if (!i || !c.getType().isIndex()) return std::nullopt;
    return ::pk::HostExpr::constant(i.getValue().getSExtValue());
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) return hostExpr(op->getOperand(0), entry);
  K kind;
  if (isa<arith::AddIOp>(op)) kind = K::add;
  else if (isa<arith::SubIOp>(op)) kind = K::sub;
  else if (isa<arith::MulIOp>(op)) kind = K::mul;
  else if (isa<arith::DivSIOp>(op)) kind = K::div;
  else if (isa<arith::RemSIOp>(op)) kind = K::rem;
  else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    if (!::pk::host_op_kind(arith::stringifyCmpIPredicate(cmp.getPredicate()).str(), &kind))
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  auto a = hostExpr(op->getOperand(0), entry), b = hostExpr(op->getOperand(1), entry);
  if (!a || !b) return std::nullopt;
  return ::pk::HostExpr::op(kind, std::move(*a), std::move(*b));
}

// Only checks every launch runs: not inside a branch or loop, whose condition the host
// would have to evaluate too.
bool unconditional(CheckOp check, KernelOp kernel) {
  for (Operation *p = check->getParentOp(); p != kernel; p = p->getParentOp())
    if (!isa<WorkerOp>(p)) return false;
  return true;
}

} // namespace

void mlir::pk::cuda::emitHostChecks(Emitter &e, KernelOp kernel) {
  std::string name = kernel.getSymName().str();
  Block &entry = kernel.getBody().front();
  kernel.walk([&](CheckOp check) {
    int id = e.checks++;
    e.checkIds[check.getOperation()] = id;
    if (!unconditional(check, kernel)) return;
    auto cond = hostExpr(check.getCondition(), entry);
    auto expected = hostExpr(check.getExpected(), entry);
    auto actual = hostExpr(check.getActual(), entry);
    if (!cond || !expected || !actual) return;  // the device check alone
    ::pk::HostCheck c{name, id, std::move(*cond), std::move(*expected), std::move(*actual),
                      check.getMessage().str()};
    e.os << "\n" << ::pk::print_host_check(c);
  });
}

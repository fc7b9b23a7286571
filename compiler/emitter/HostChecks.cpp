// The `// pk-host-check` lines (pk/runtime/host_check.h): each pk.check whose values the host
// knows before a launch (argument extents, integer scalar arguments, the world size) is
// written once more as an expression the typed launchers and the JIT evaluate on the host.
#include "Emitter.h"
#include "pk/Passes/HostExpr.h"

#include <pk/runtime/host_check.h>

using namespace mlir;
using namespace mlir::pk;

namespace {

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
    auto cond = hostExprOf(check.getCondition(), entry);
    auto expected = hostExprOf(check.getExpected(), entry);
    auto actual = hostExprOf(check.getActual(), entry);
    if (!cond || !expected || !actual) return;  // the device check alone
    ::pk::HostCheck c{name, id, std::move(*cond), std::move(*expected), std::move(*actual),
                      check.getMessage().str()};
    e.os << "\n" << ::pk::print_host_check(c);
  });
}

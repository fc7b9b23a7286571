// Replacing a kernel's spec-level body by a template instance's facts, and the queries the
// template matchers share.
#include "pk/Passes/TemplateInstance.h"

using namespace mlir;

int mlir::pk::kernelArgIndex(KernelOp kernel, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &kernel.getBody().front()) return -1;
  return int(arg.getArgNumber());
}

bool mlir::pk::isDimOf(Value v, Value tensor, int64_t d) {
  auto dim = v.getDefiningOp<DimOp>();
  return dim && dim.getTensor() == tensor && dim.getDimAttr().getInt() == d;
}

void mlir::pk::becomeTemplateInstance(KernelOp kernel, StringRef attr, DictionaryAttr facts) {
  Block &entry = kernel.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : entry.without_terminator()) ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    op->dropAllUses();
    op->erase();
  }
  kernel->setAttr(attr, facts);
  kernel->setAttr("pk.level", StringAttr::get(kernel.getContext(), "device"));
}

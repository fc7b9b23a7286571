// Replacing a kernel's spec-level body by a template instance's facts.
#include "pk/Passes/TemplateInstance.h"

using namespace mlir;

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

// Records pass decisions on the kernel for --explain and the emitted header.
#include "pk/Passes/Decisions.h"
#include "pk/Dialect/Pk.h"
#include "mlir/IR/Location.h"

using namespace mlir;

std::string mlir::pk::formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().strref() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn())).str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string s = formatLocation(inner); s != "<unknown>") return s;
  if (auto named = dyn_cast<NameLoc>(loc)) return formatLocation(named.getChildLoc());
  if (auto callSite = dyn_cast<CallSiteLoc>(loc)) return formatLocation(callSite.getCallee());
  return "<unknown>";
}

void mlir::pk::recordDecision(Operation *op, StringRef rule, const Twine &decision) {
  Operation *kernel = isa<KernelOp>(op) ? op : op->getParentOfType<KernelOp>();
  if (!kernel) return;
  MLIRContext *ctx = op->getContext();
  SmallVector<Attribute> list;
  if (auto old = kernel->getAttrOfType<ArrayAttr>("pk.decisions"))
    list.append(old.begin(), old.end());
  std::string text = (rule + ": " + op->getName().getStringRef() + " at " +
                      formatLocation(op->getLoc()) + ": " + decision).str();
  list.push_back(StringAttr::get(ctx, text));
  kernel->setAttr("pk.decisions", ArrayAttr::get(ctx, list));
}

void mlir::pk::dropDecisions(Operation *op, StringRef rule) {
  Operation *kernel = op->getParentOfType<KernelOp>();
  auto list = kernel ? kernel->getAttrOfType<ArrayAttr>("pk.decisions") : ArrayAttr();
  if (!list) return;
  std::string about = (": " + op->getName().getStringRef() + " at " +
                       formatLocation(op->getLoc()) + ": ").str();
  SmallVector<Attribute> kept;
  for (Attribute a : list)
    if (auto s = dyn_cast<StringAttr>(a);
        !s || !s.getValue().contains(about) || !s.getValue().starts_with(rule))
      kept.push_back(a);
  kernel->setAttr("pk.decisions", ArrayAttr::get(op->getContext(), kept));
}

SmallVector<std::string> mlir::pk::getDecisions(Operation *kernel) {
  SmallVector<std::string> out;
  if (auto list = kernel->getAttrOfType<ArrayAttr>("pk.decisions"))
    for (Attribute a : list)
      if (auto s = dyn_cast<StringAttr>(a)) out.push_back(s.str());
  return out;
}

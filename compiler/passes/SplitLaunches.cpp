// pk-split-launches: a kernel with several phases, one of which a Hopper template takes on its
// own, runs as several launches issued by one host call (the several-launch fallback).
#include "Phases.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"
#include "pk/Passes/TemplateInstance.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSPLITLAUNCHESPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

SmallVector<Operation *> topLevelPhases(KernelOp kernel) {
  SmallVector<Operation *> phases;
  for (Operation &op : kernel.getBody().front())
    if (isPhase(&op)) phases.push_back(&op);
  return phases;
}

bool hasMma(Operation *op) {
  bool found = false;
  op->walk([&](TileMmaOp) { found = true; });
  return found;
}

// A copy of `kernel` named `name`, placed after `after`, that keeps of the top-level phases only
// those numbered in `keep` (and scalar reads a kept op uses), and none of the pure ops only the
// dropped phases used.
KernelOp partOf(KernelOp kernel, ArrayRef<unsigned> keep, StringRef name, Operation *after) {
  auto part = cast<KernelOp>(kernel->clone());
  part.setSymName(name);
  after->getBlock()->getOperations().insertAfter(after->getIterator(), part);
  Block &body = part.getBody().front();
  llvm::DenseMap<Operation *, unsigned> number;
  for (Operation &op : body)
    if (isPhase(&op)) number[&op] = unsigned(number.size());
  SmallVector<Operation *> ops;
  for (Operation &op : body) ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    if (op->hasTrait<OpTrait::IsTerminator>() || !op->use_empty()) continue;
    auto it = number.find(op);
    bool dropped = it != number.end() ? !llvm::is_contained(keep, it->second) : isMemoryEffectFree(op);
    if (dropped) op->erase();
  }
  return part;
}

std::string where(Operation *op) { return formatLocation(op->getLoc()); }

struct SplitLaunches : mlir::pk::impl::PkSplitLaunchesPassBase<SplitLaunches> {
  using PkSplitLaunchesPassBase::PkSplitLaunchesPassBase;

  // The phases a template takes on its own, by number, with the template's name; `unfused`
  // says why a fused GEMM template did not take the whole kernel instead.
  static SmallVector<StringRef> templatePhases(KernelOp kernel, ArrayRef<Operation *> phases,
                                               std::string &unfused) {
    SmallVector<StringRef> taken(phases.size());
    for (auto [i, phase] : llvm::enumerate(phases)) {
      if (!isa<TileForeachOp>(phase) || !hasMma(phase)) continue;
      KernelOp trial = partOf(kernel, {unsigned(i)}, (kernel.getSymName() + "_trial").str(), kernel);
      if (isAttentionKernel(trial)) {
        taken[i] = "attention";
      } else if (isLocalGemmKernel(trial)) {
        // With collectives beside it, a fused template may take the whole kernel, which beats
        // any split.
        bool collectives = llvm::any_of(phases, [](Operation *p) { return isCollectiveIntent(p); });
        std::string why = collectives ? whyNotFusedGemm(kernel) : "";
        if (!collectives || !why.empty()) taken[i] = "GEMM";
        if (!why.empty()) unfused = why;
      }
      trial.erase();
    }
    return taken;
  }

  LogicalResult split(KernelOp kernel, SymbolTable &symbols) {
    if (hasOwnProtocol(kernel)) return success();
    SmallVector<Operation *> phases = topLevelPhases(kernel);
    if (phases.size() < 2) return success();
    std::string unfused;
    SmallVector<StringRef> taken = templatePhases(kernel, phases, unfused);
    if (llvm::all_of(taken, [](StringRef t) { return t.empty(); })) return success();

    // Launches: each template phase alone; the phases between them together (ordered inside
    // their launch by grid-wide barriers, as in any kernel).
    SmallVector<SmallVector<unsigned>> launches;
    for (unsigned i = 0; i < phases.size(); ++i) {
      if (launches.empty() || !taken[i].empty() || !taken[launches.back().front()].empty())
        launches.emplace_back();
      launches.back().push_back(i);
    }
    std::string name = kernel.getSymName().str();
    std::string why = "the kernel runs as " + std::to_string(launches.size()) +
                      " launches, issued in order on the caller's stream by one host call:";
    SmallVector<Attribute> names;
    Operation *after = kernel;
    for (auto [n, group] : llvm::enumerate(launches)) {
      std::string partName = name + "_launch" + std::to_string(n);
      if (symbols.lookup(partName))
        return kernel.emitError("pkc runs this kernel as several launches and names them '")
               << name << "_launch<i>', but the spec already has a kernel '" << partName << "'";
      KernelOp part = partOf(kernel, group, partName, after);
      after = part;
      names.push_back(FlatSymbolRefAttr::get(kernel.getContext(), partName));
      StringRef job = taken[group.front()];
      why += " " + partName + " = ";
      if (!job.empty()) {
        why += "the tile loop at " + where(phases[group.front()]) + " (the " + job.str() + " template)";
      } else {
        why += group.size() == 1 ? "the phase at " : "the phases at ";
        for (auto [k, i] : llvm::enumerate(group)) why += (k ? ", " : "") + where(phases[i]);
      }
      why += ";";
      recordDecision(part, "launches", "launch " + Twine(n) + " of " + Twine(launches.size()) +
                                            " of kernel '" + name + "'");
    }
    why += " a template needs its own grid, block shape and shared memory and replaces its "
           "launch's whole body, so no grid-wide barrier can order it with the other phases; "
           "launches on one stream run in order, and each returns on a rank only once what it "
           "writes there (its collectives' and peers' writes included) has landed, so a later "
           "launch reads finished data";
    if (!unfused.empty()) why += "; no fused GEMM template takes the whole kernel: " + unfused;
    recordDecision(kernel, "launches", why);
    Block &body = kernel.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator()) ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      op->dropAllUses();
      op->erase();
    }
    kernel->setAttr("pk.launches", ArrayAttr::get(kernel.getContext(), names));
    kernel->setAttr("pk.level", StringAttr::get(kernel.getContext(), "device"));
    return success();
  }

  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    SmallVector<KernelOp> kernels(getOperation().getOps<KernelOp>());
    for (KernelOp kernel : kernels)
      if (failed(split(kernel, symbols))) return signalPassFailure();
  }
};

} // namespace

// pk-check-effects: every op pk-track-effects numbered is still in the IR or was marked
// lowered; anything else was dropped by a lowering, which is a compiler bug reported at the op.
#include "pk/Passes/EffectLedger.h"
#include "pk/Passes/Passes.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKCHECKEFFECTSPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

struct CheckEffects : mlir::pk::impl::PkCheckEffectsPassBase<CheckEffects> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) {
      auto entries = kernel->getAttrOfType<ArrayAttr>(kEffectListAttr);
      if (!entries) return;
      llvm::DenseSet<int64_t> accounted;
      kernel.walk([&](Operation *op) {
        if (auto id = op->getAttrOfType<IntegerAttr>(kEffectIdAttr)) {
          accounted.insert(id.getInt());
          op->removeAttr(kEffectIdAttr);
        }
      });
      if (auto lowered = kernel->getAttrOfType<DenseI64ArrayAttr>(kLoweredListAttr))
        accounted.insert(lowered.asArrayRef().begin(), lowered.asArrayRef().end());
      for (auto [i, entry] : llvm::enumerate(entries)) {
        if (accounted.contains(int64_t(i))) continue;
        auto pair = cast<ArrayAttr>(entry);
        emitError(cast<LocationAttr>(pair[1]))
            << "'" << cast<StringAttr>(pair[0]).getValue()
            << "' was dropped by a lowering without being lowered (a pkc bug: the kernel "
               "would not perform it); please report this spec";
        failed = true;
      }
      kernel->removeAttr(kEffectListAttr);
      kernel->removeAttr(kLoweredListAttr);
    });
    if (failed) signalPassFailure();
  }
};

} // namespace

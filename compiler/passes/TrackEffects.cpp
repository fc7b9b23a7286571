// pk-track-effects: numbers every spec-level op with an effect, for pk-check-effects.
#include "pk/Passes/EffectLedger.h"
#include "pk/Passes/Passes.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKTRACKEFFECTSPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

struct TrackEffects : mlir::pk::impl::PkTrackEffectsPassBase<TrackEffects> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      MLIRContext *ctx = kernel.getContext();
      SmallVector<Attribute> entries;
      kernel.walk([&](Operation *op) {
        if (!hasSpecEffect(op)) return;
        op->setAttr(kEffectIdAttr, IntegerAttr::get(IntegerType::get(ctx, 64), entries.size()));
        entries.push_back(ArrayAttr::get(
            ctx, {StringAttr::get(ctx, op->getName().getStringRef()), LocationAttr(op->getLoc())}));
      });
      kernel->setAttr(kEffectListAttr, ArrayAttr::get(ctx, entries));
    });
  }
};

} // namespace

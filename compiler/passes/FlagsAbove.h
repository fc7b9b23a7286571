// The flags a kernel already has when a lowering numbers its own from slot 0 (the spec's
// pk::prim flags, or an earlier lowering's): they keep their protocol, moved up past the
// lowering's slots, so no two protocols share a flag.
#pragma once

#include "pk/Dialect/Pk.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::pk {

class FlagsAbove {
public:
  explicit FlagsAbove(KernelOp kernel) {
    kernel.walk([&](FlagOp f) { flags.push_back(f); });
  }
  // Moves the flags found at construction up by `slots` (a run-time slot's base too).
  void shift(int64_t slots) {
    if (slots == 0) return;
    for (FlagOp f : flags) {
      f.setSlot(f.getSlot() + uint64_t(slots));
      // Messages name a spec flag by the slot its author wrote: the shift so far is kept.
      if (f->hasAttr("pk.spec")) {
        auto old = f->getAttrOfType<IntegerAttr>(kSpecShiftAttrName);
        int64_t total = (old ? old.getInt() : 0) + slots;
        f->setAttr(kSpecShiftAttrName, IntegerAttr::get(IntegerType::get(f.getContext(), 64), total));
      }
    }
  }

private:
  llvm::SmallVector<FlagOp> flags;
};

} // namespace mlir::pk

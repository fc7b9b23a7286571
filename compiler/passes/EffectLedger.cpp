// The effect ledger's shared pieces: which ops carry an effect, and marking one lowered.
#include "pk/Passes/EffectLedger.h"
#include "pk/Dialect/Pk.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::pk;

bool mlir::pk::hasSpecEffect(Operation *op) {
  return isa<TileStoreOp, TileStoreRowsOp, TileClaimOp, AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp, BroadcastOp,
             ReduceToRootOp, GatherOp, ScatterOp, StoreTileOp, AddTileOp, StoreAsyncOp,
             StoreAddAsyncOp, CommAllReduceOp, CopyOp, SwapOp, ReduceIntoOp, PushSmallOp, SignalOp,
             SignalAllOp, WaitOp, BarrierOp>(op);
}

void mlir::pk::markLowered(Operation *op) {
  auto id = op->getAttrOfType<IntegerAttr>(kEffectIdAttr);
  auto kernel = op->getParentOfType<KernelOp>();
  if (!id || !kernel) return;
  SmallVector<int64_t> lowered;
  if (auto old = kernel->getAttrOfType<DenseI64ArrayAttr>(kLoweredListAttr))
    lowered.append(old.asArrayRef().begin(), old.asArrayRef().end());
  lowered.push_back(id.getInt());
  kernel->setAttr(kLoweredListAttr, DenseI64ArrayAttr::get(op->getContext(), lowered));
}

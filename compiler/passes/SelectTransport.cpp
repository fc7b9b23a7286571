// Rule 1: choose each transfer's mechanism (ld/st, TMA, copy engine, multimem) by size.
#include "ProfileOption.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSELECTTRANSPORTPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

// Bytes of a statically shaped tensor or tile; nullopt when any dimension is dynamic.
std::optional<uint64_t> staticBytes(ArrayRef<int64_t> shape, Type element) {
  uint64_t n = element.getIntOrFloatBitWidth() / 8;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d)) return std::nullopt;
    n *= uint64_t(d);
  }
  return n;
}

struct SelectTransport : mlir::pk::impl::PkSelectTransportPassBase<SelectTransport> {
  using PkSelectTransportPassBase::PkSelectTransportPassBase;

  void runOnOperation() override {
    auto profile = loadProfileOption(getOperation(), profilePath);
    if (!profile) return signalPassFailure();
    getOperation().walk([&](Operation *op) {
      auto attr = op->getAttrOfType<TransportAttr>("transport");
      auto toLdst = [&](StringRef reason) {
        op->setAttr("transport", TransportAttr::get(op->getContext(), Transport::ldst));
        recordDecision(op, "rule 1 (transport)", reason);
      };
      // A register tile the spec asked to move by Tma (the front end already made it ld/st).
      if (op->hasAttr(kTmaFromRegistersAttrName)) {
        op->removeAttr(kTmaFromRegistersAttrName);
        return toLdst("ldst: the spec asks for Tma, but TMA moves a tile through shared memory "
                      "and this tile is in registers; its threads move it by ld/st instead");
      }
      // A spec's own Tma primitive on a shared-memory tile: no template takes explicit
      // primitives, and the general tile path holds such tiles in registers (as load_smem's).
      if (isa<StoreAsyncOp, StoreAddAsyncOp, LoadPeerOp>(op) && attr &&
          attr.getValue() == Transport::tma)
        return toLdst("ldst: the spec asks for Tma, but primitives run on the general tile "
                      "path, which holds shared-memory tiles in registers; its threads move "
                      "the tile by ld/st instead");
      // A spec's own Multimem reduction: multimem.ld_reduce needs the tensors' multicast
      // addresses, which pkc's runtime never maps (the machines it is tested on must not use
      // multicast), so the reduction reads every rank's copy by ld/st, as collectives do.
      if (isa<ReduceOp, CommAllReduceOp>(op) && attr && attr.getValue() == Transport::multimem)
        return toLdst("ldst: the spec asks for Multimem, but pkc's runtime maps no multicast "
                      "addresses; the threads read every rank's copy by ld/st and reduce in "
                      "registers instead");
      if (!attr || attr.getValue() != Transport::automatic) return;
      ::pk::TransferQuery q;
      q.multicastAllowed = allowMulticast;
      if (isa<AllReduceOp, ReduceScatterOp, AllGatherOp, AllToAllOp, BroadcastOp, ReduceToRootOp,
              GatherOp, ScatterOp>(op)) {
        Type in = op->getOperand(0).getType();
        q.bytes = staticBytes(getTensorShape(in), getTensorElementType(in));
        q.reducesOnRead = isa<AllReduceOp, ReduceScatterOp, ReduceToRootOp>(op);
      } else if (isa<StoreTileOp, AddTileOp>(op)) {
        auto tile = cast<TileType>(op->getOperand(0).getType());
        q.bytes = staticBytes(tile.getShape(), tile.getElementType());
        // A tile produced by tensor-core compute in this loop leaves from the compute block
        // itself: ld/st would need the consumers' threads and registers, TMA needs one storer
        // thread and adds (cp.reduce.async.bulk) without registers. Per-message bandwidth is
        // the wrong measure here: every compute block has a tile in flight.
        auto loop = op->getParentOfType<TileForeachOp>();
        bool computed = false;
        if (loop) loop.walk([&](TileMmaOp) { computed = true; });
        if (computed && q.bytes && *q.bytes >= 2048 && *q.bytes % 16 == 0) {
          op->setAttr("transport", TransportAttr::get(op->getContext(), Transport::tma));
          recordDecision(op, "rule 1 (transport)",
                         "tma: " + ::pk::formatBytes(*q.bytes) +
                             " tile computed by tensor cores in this loop: one storer thread "
                             "moves it by TMA while the consumer warps keep computing (ld/st "
                             "would take their threads and registers)");
          return;
        }
      } else {
        return;
      }
      ::pk::TransportChoice choice = ::pk::chooseTransport(*profile, q);
      op->setAttr("transport",
                  TransportAttr::get(op->getContext(), *symbolizeTransport(choice.mechanism)));
      recordDecision(op, "rule 1 (transport)", choice.mechanism + ": " + choice.reason);
    });
  }
};

} // namespace

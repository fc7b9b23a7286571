// Rule 2: choose intra-SM (storer warp) or inter-SM (communicator blocks) overlap.
#include "ProfileOption.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSELECTOVERLAPPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

struct SelectOverlap : mlir::pk::impl::PkSelectOverlapPassBase<SelectOverlap> {
  using PkSelectOverlapPassBase::PkSelectOverlapPassBase;

  void runOnOperation() override {
    auto profile = loadProfileOption(getOperation(), profilePath);
    if (!profile) return signalPassFailure();
    std::string intra = std::to_string(int(profile->intra_sm_ns)) + " ns";
    std::string inter = std::to_string(int(profile->inter_sm_ns)) + " ns";

    getOperation().walk([&](Operation *op) {
      if (isa<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp, BroadcastOp, ReduceToRootOp,
              GatherOp, ScatterOp>(op)) {
        recordDecision(op, "rule 2 (overlap)",
                       "inter_sm: a whole-tensor collective with no compute tile to ride "
                       "on; communicator blocks run it");
        return;
      }
      if (!isa<StoreTileOp, AddTileOp>(op)) return;
      auto attr = op->getAttrOfType<OverlapAttr>("overlap");
      if (!attr || attr.getValue() != Overlap::automatic) return;
      auto loop = op->getParentOfType<TileForeachOp>();
      Operation *producer = op->getOperand(0).getDefiningOp();
      bool producedInLoop = loop && producer && loop->isProperAncestor(producer);
      auto transport = op->getAttrOfType<TransportAttr>("transport");
      bool manyThreads = isa<AddTileOp>(op) && transport &&
                         transport.getValue() == Transport::ldst;
      Overlap choice = Overlap::inter_sm;
      std::string why;
      if (!producedInLoop) {
        why = "inter_sm: the tile is not computed in this tile loop, so the transfer's "
              "granularity differs from the compute tile";
      } else if (manyThreads) {
        why = "inter_sm: a register reduce-add needs many threads; communicator blocks "
              "take them from compute (hand-off " + inter + ")";
      } else {
        choice = Overlap::intra_sm;
        why = "intra_sm: the transfer has the compute tile's granularity, so the block's "
              "storer issues it after an mbarrier hand-off (" + intra + " vs " + inter +
              " through a global flag)";
      }
      op->setAttr("overlap", OverlapAttr::get(op->getContext(), choice));
      recordDecision(op, "rule 2 (overlap)", why);
    });
  }
};

} // namespace

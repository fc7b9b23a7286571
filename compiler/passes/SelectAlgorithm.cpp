// Rule 1 at the collective level: algorithm (one-shot / two-shot), tile size, block count.
#include "ProfileOption.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSELECTALGORITHMPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

// Bytes one 512-thread block moves per tile: four 16-byte vectors per thread, so a block has
// enough loads in flight to cover a link round trip without starving other blocks of tiles
// (2 x H200, 1 GiB: 32 KiB tiles took all-to-all from 1902 to 1849 us and gather from 1753 to
// 1694 us against 16 KiB; all-reduce unchanged).
constexpr int64_t kTileBytes = 32 << 10;
// Default copy-engine thresholds per message (see selectCopyEngine).
constexpr int64_t kCopyEngineMinBytes = 20ll << 20;
constexpr int64_t kCopyEngineRootSendsMinBytes = 96ll << 20;
// The size at which the profile's large-message ld/st bandwidth is read.
constexpr long long kLargeBytes = 256ll << 20;

struct SelectAlgorithm : mlir::pk::impl::PkSelectAlgorithmPassBase<SelectAlgorithm> {
  using PkSelectAlgorithmPassBase::PkSelectAlgorithmPassBase;

  // The profiled SM count with the best large-message ld/st bandwidth (the fewest of equals):
  // collectives have no compute to share SMs with, and in a collective every GPU sends and
  // receives at once, where the profile's one-way figure understates what more SMs buy
  // (2 x H200, 1 GiB all-to-all: 259 GB/s with 66 blocks, 281 with 132).
  static int largeBlocks(const ::pk::MachineProfile &p, double &gbps, double &best) {
    // SM counts measured at the profile's largest ld/st size of at least kLargeBytes (a
    // calibration's sizes need not include kLargeBytes itself); bandwidth is read there.
    long long large = 0;
    for (const auto &pt : p.points)
      if (pt.mechanism == ::pk::Mechanism::ldst && pt.bytes >= kLargeBytes)
        large = large ? std::min(large, pt.bytes) : pt.bytes;
    if (!large)
      for (const auto &pt : p.points)
        if (pt.mechanism == ::pk::Mechanism::ldst) large = std::max(large, pt.bytes);
    std::vector<int> counts;
    for (const auto &pt : p.points)
      if (pt.mechanism == ::pk::Mechanism::ldst && pt.bytes == large) counts.push_back(pt.sms);
    std::sort(counts.begin(), counts.end());
    best = 0;
    for (int s : counts) best = std::max(best, p.bandwidth(::pk::Mechanism::ldst, large, s));
    for (int s : counts) {
      gbps = p.bandwidth(::pk::Mechanism::ldst, large, s);
      if (gbps >= best) return s;
    }
    return counts.empty() ? 132 : counts.back();
  }

  // Bytes of a tensor type, when its shape is static.
  static std::optional<int64_t> staticBytes(Type t) {
    int64_t n = getTensorElementType(t).getIntOrFloatBitWidth() / 8;
    for (int64_t d : getTensorShape(t)) {
      if (ShapedType::isDynamic(d)) return std::nullopt;
      n *= d;
    }
    return n;
  }

  // Bytes of the per-rank work that is split into tiles, when static.
  static std::optional<int64_t> workBytes(Operation *op) {
    // The smaller side is the per-rank shard that tile loops cover (all-gather: the input;
    // reduce-scatter: the output); the tile loops of all-to-all cover 1/W of it per peer,
    // but W is not known here, so the whole tensor is the conservative bound.
    auto a = staticBytes(op->getOperand(0).getType()), b = staticBytes(op->getOperand(1).getType());
    if (!a || !b) return std::nullopt;
    return std::min(*a, *b);
  }

  // The one-round push path for small messages: one flag round instead of two, bought with a
  // local copy out of the landing buffer. On 2 x H200 (tools/calibrate/latency_probe.cu) push
  // + one round took 8.1-11.9 us per call from 4 KiB to 1 MiB against 12.5-14.8 us for two
  // rounds + pull, so the cut-off is an option (default 1 MiB) and the landing slot size
  // caps it at run time.
  void selectPush(Operation *op) {
    MLIRContext *ctx = op->getContext();
    // The smallest per-peer message a static size allows (all-to-all: a 1/W block, W <= 16).
    std::optional<int64_t> msg;
    bool perOutput = isa<ReduceScatterOp, ScatterOp>(op);
    msg = staticBytes(op->getOperand(perOutput ? 1 : 0).getType());
    if (msg && isa<AllToAllOp>(op)) *msg /= (worldSize > 0 ? worldSize : 16);
    int64_t limit = pushMaxBytes;
    std::string why;
    if (int64_t dim = getCollectiveDim(op)) {
      why = "off: along dimension " + std::to_string(dim) + " a peer's part is strided, and the "
            "landing buffers hold contiguous blocks";
      limit = 0;
    } else if (limit <= 0) {
      why = "off (push-max-bytes=0): every size takes the direct path";
    } else if (msg && *msg > limit) {
      why = "off: " + ::pk::formatBytes(*msg) + " per peer is above " +
            ::pk::formatBytes(limit);
      limit = 0;
    } else {
      why = "one round when a peer's message is at most " + ::pk::formatBytes(limit) +
            " and fits the kernel's landing buffer (checked at run time): pushing into "
            "the peers' landing buffers saves a flag round trip, worth more than the local "
            "copy out of them at these sizes";
    }
    op->setAttr("pk.push_max_bytes", IntegerAttr::get(IntegerType::get(ctx, 64), limit));
    recordDecision(op, "rule 1 (small messages)", why);

    // Its LL variant: payload and launch tag share each 8-byte store, so the receiver polls
    // the data itself and no fence or flag round is needed, at twice the bytes on the link.
    // The latency probe measured 6.5 / 7.0 / 8.7 us per call at 4 / 64 / 256 KiB against
    // 8.1 / 8.3 / 9.0 us for the push + flag round, hence the default cut-off of 256 KiB.
    int64_t ll = limit > 0 ? llMaxBytes : 0;
    if (limit <= 0) {
      why = "off: the one-round path is off";
    } else if (ll <= 0) {
      why = "off (ll-max-bytes=0): small messages take the flag round";
    } else if (msg && *msg > ll) {
      why = "off: " + ::pk::formatBytes(*msg) + " per peer is above " + ::pk::formatBytes(ll);
      ll = 0;
    } else {
      why = "LL words when a peer's message is at most " + ::pk::formatBytes(ll) +
            " and fits the kernel's LL slots (checked at run time): each 8-byte store carries "
            "4 payload bytes and the launch tag, so the receiver polls the data itself and "
            "no fence or flag round trip is needed, worth more than the doubled bytes at "
            "these sizes";
    }
    op->setAttr("pk.ll_max_bytes", IntegerAttr::get(IntegerType::get(ctx, 64), ll));
    recordDecision(op, "rule 1 (LL)", why);
  }

  // The copy-engine route (runtime/include/pk/runtime/copy_engine.h): a copy-only collective
  // that is its kernel's whole body, on kernel arguments, can be run by the host as copy-engine
  // pulls between two one-way flag rounds. It moves bytes without SMs and runs both
  // directions of the link at the copy engine's rate, but costs two extra kernel launches, so
  // it pays only for large messages; the launchers branch on the message size at run time.
  void selectCopyEngine(Operation *op) {
    const char *kind = isa<AllGatherOp>(op)   ? "all_gather"
                       : isa<AllToAllOp>(op)  ? "all_to_all"
                       : isa<BroadcastOp>(op) ? "broadcast"
                       : isa<GatherOp>(op)    ? "gather"
                       : isa<ScatterOp>(op)   ? "scatter"
                                              : nullptr;
    if (!kind) return;
    auto transport = op->getAttrOfType<TransportAttr>("transport");
    const bool forced = transport && transport.getValue() == Transport::copy_engine;
    // Measured crossovers against pkc's own kernels on 2 x H200 (the route forced at every
    // size; docs/benchmarks/collectives-tuning-2xH200.md): about 18-20 MiB per message when
    // every rank receives (all-gather, all-to-all) or the root receives from all (gather),
    // where SM copies lose bandwidth; about 90-100 MiB when only the root sends (broadcast,
    // scatter), where SM copies already run one link direction near its peak.
    const bool rootSends = isa<BroadcastOp, ScatterOp>(op);
    int64_t min = copyEngineMinBytes >= 0 ? copyEngineMinBytes
                  : rootSends             ? kCopyEngineRootSendsMinBytes
                                          : kCopyEngineMinBytes;
    if (forced) min = 1;
    auto kernel = dyn_cast<KernelOp>(op->getParentOp());
    auto argIndex = [&](Value v) -> int64_t {
      auto arg = dyn_cast<BlockArgument>(v);
      return arg && arg.getOwner()->getParentOp() == kernel ? int64_t(arg.getArgNumber()) : -1;
    };
    auto off = [&](const Twine &why) {
      recordDecision(op, "rule 1 (mechanism)", "SM copies only: " + why);
    };
    if (min <= 0) return off("the copy-engine route is off (copy-engine-min-bytes=0)");
    if (getCollectiveDim(op) != 0)
      return off("along a dimension other than the first, a rank's part is strided, not one copy");
    auto alone = [&] {
      for (Operation &other : kernel.getBody().front())
        if (&other != op && !isa<ReturnOp, CheckOp>(other)) return false;
      return true;
    };
    int64_t x = argIndex(op->getOperand(0)), y = argIndex(op->getOperand(1));
    int64_t root = op->getNumOperands() > 2 ? argIndex(op->getOperand(2)) : -1;
    if (x < 0 || y < 0 || (op->getNumOperands() > 2 && root < 0))
      return off("the copy-engine route needs the input, output and root as kernel arguments");
    if (x == y) return off("in place: the SM path skips the copies that would overlap");
    if (!kernel || !llvm::hasSingleElement(kernel.getBody()) || !alone())
      return off("the copy-engine route replaces a whole launch, and this kernel does more than "
                 "this collective");
    bool perOutput = isa<ScatterOp>(op);
    std::optional<int64_t> msg = staticBytes(op->getOperand(perOutput ? 1 : 0).getType());
    if (msg && isa<AllToAllOp>(op) && worldSize > 0) *msg /= worldSize;
    if (msg && *msg < min && !forced)
      return off(::pk::formatBytes(*msg) + " per message is below the copy engine's " +
                 ::pk::formatBytes(min));
    op->getParentOp()->setAttr(
        "pk.copy_engine",
        StringAttr::get(op->getContext(), Twine(kind) + ":" + Twine(min) + ":" + Twine(x) + ":" +
                                              Twine(y) + ":" + Twine(root)));
    recordDecision(op, "rule 1 (mechanism)",
                   forced ? Twine("copy engine at every size (transport = copy_engine)")
                          : "copy engine for messages of at least " + ::pk::formatBytes(min) +
                                " (checked at launch; smaller ones launch the kernel): host-issued "
                                "pulls between two one-way flag rounds, no SMs spent, and the "
                                "copy engine keeps its rate with both link directions busy; "
                                "below that, its two extra launches cost more than it saves");
  }

  void runOnOperation() override {
    auto profile = loadProfileOption(getOperation(), profilePath);
    if (!profile) return signalPassFailure();
    double bigGbps = 0, bestGbps = 0;
    int maxBlocks = largeBlocks(*profile, bigGbps, bestGbps);
    // One more link hop (two-shot's stores after its loads) costs about a global-flag
    // hand-off; it pays off once the inbound bytes it saves take longer than that.
    int64_t hopBytes = int64_t(profile->inter_sm_ns * bestGbps);

    getOperation().walk([&](Operation *op) {
      if (!isa<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp, BroadcastOp,
               ReduceToRootOp, GatherOp, ScatterOp>(op))
        return;
      MLIRContext *ctx = op->getContext();
      Type element = getTensorElementType(op->getOperand(0).getType());
      int64_t elemBytes = element.getIntOrFloatBitWidth() / 8;
      int64_t tile = kTileBytes / elemBytes;
      auto bytes = workBytes(op);

      int64_t blocks = maxBlocks;
      std::string why = Twine(maxBlocks).str() + " blocks: the profiled SM count with the best "
                        "large-message ld/st bandwidth (" +
                        std::to_string(std::lround(bigGbps)) + " of " +
                        std::to_string(std::lround(bestGbps)) + " GB/s)";
      if (bytes) {
        int64_t tiles = std::max<int64_t>(1, (*bytes + kTileBytes - 1) / kTileBytes);
        if (tiles < maxBlocks) {
          blocks = tiles;
          why = Twine(blocks).str() + " blocks: " + ::pk::formatBytes(*bytes) + " is " +
                Twine(tiles).str() + " tile(s) of " + ::pk::formatBytes(kTileBytes) +
                "; more blocks would only add flag traffic";
        }
      } else {
        why += "; the size is a run-time value, and the grid is fixed per kernel";
      }
      op->setAttr("pk.blocks", IntegerAttr::get(IntegerType::get(ctx, 64), blocks));
      op->setAttr("pk.tile", IntegerAttr::get(IntegerType::get(ctx, 64), tile));
      recordDecision(op, "rule 1 (blocks)", why + "; tiles of " + Twine(tile).str() +
                                                " elements (" + ::pk::formatBytes(kTileBytes) + ")");
      selectPush(op);
      selectCopyEngine(op);

      auto ar = dyn_cast<AllReduceOp>(op);
      if (!ar) {
        recordDecision(op, "rule 1 (algorithm)",
                       "direct: every rank reads the peers' data straight from their symmetric "
                       "inputs into its output, so each byte crosses a link once");
        return;
      }
      if (ar.getAlgorithm() != Algorithm::automatic) {
        if (ar.getAlgorithm() == Algorithm::two_shot && !isa<SymTensorType>(ar.getOutput().getType())) {
          op->emitOpError("two-shot writes into the peers' outputs: the output must be symmetric");
          return signalPassFailure();
        }
        return;
      }
      auto setAlgorithm = [&](Algorithm a, const Twine &reason) {
        ar.setAlgorithmAttr(AlgorithmAttr::get(ctx, a));
        recordDecision(op, "rule 1 (algorithm)", reason);
      };
      if (!isa<SymTensorType>(ar.getOutput().getType()))
        return setAlgorithm(Algorithm::one_shot,
                            "one_shot: two-shot writes into the peers' outputs, and this output "
                            "is not symmetric");
      // Inbound link bytes per GPU: one-shot reads (W-1)N, two-shot reads and receives
      // 2(W-1)N/W. Two-shot wins when (W-1)(W-2)/W * N >= hopBytes.
      std::string rule = "two-shot saves (W-1)(W-2)/W x size inbound bytes per GPU and costs one "
                         "more hop (" + std::to_string(int(profile->inter_sm_ns)) + " ns x " +
                         std::to_string(std::lround(bestGbps)) + " GB/s = " +
                         ::pk::formatBytes(hopBytes) + ")";
      int64_t w = worldSize;
      if (bytes && w > 0) {
        int64_t saved = (w - 1) * (w - 2) * *bytes / w;
        if (saved >= hopBytes)
          return setAlgorithm(Algorithm::two_shot,
                              "two_shot: world " + Twine(w) + ", " + ::pk::formatBytes(*bytes) +
                                  " saves " + ::pk::formatBytes(saved) + " >= the hop; " + rule);
        return setAlgorithm(Algorithm::one_shot,
                            "one_shot: world " + Twine(w) + ", " + ::pk::formatBytes(*bytes) +
                                " saves only " + ::pk::formatBytes(saved) + " < the hop; " + rule);
      }
      op->setAttr("pk.two_shot_min_bytes", IntegerAttr::get(IntegerType::get(ctx, 64), hopBytes));
      recordDecision(op, "rule 1 (algorithm)",
                     "both, chosen at run time: two_shot when (W-1)(W-2)/W x bytes >= " +
                         Twine(hopBytes) + ", else one_shot; " + rule +
                         "; the size or world size is a run-time value");
    });
  }
};

} // namespace

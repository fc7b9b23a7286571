// pk-split-launches: the several-launch fallback. A kernel with several phases, one of which a
// Hopper template takes on its own, runs as several launches issued by one host call; so does a
// range loop whose phases a launch cannot order (a collective, or phases that depend on each
// other), as a host loop of launches.
#include "Phases.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/HostExpr.h"
#include "pk/Passes/Passes.h"
#include "pk/Passes/TemplateInstance.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include <functional>

namespace mlir::pk {
#define GEN_PASS_DEF_PKSPLITLAUNCHESPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

SmallVector<Operation *> phasesOf(Block &block) {
  SmallVector<Operation *> phases;
  for (Operation &op : block)
    if (isPhase(&op)) phases.push_back(&op);
  return phases;
}

bool hasMma(Operation *op) {
  bool found = false;
  op->walk([&](TileMmaOp) { found = true; });
  return found;
}

// A range loop (at the top level, or in a host loop's body) that no launch can run whole: its
// flags and barriers count once per launch.
scf::ForOp hostLoop(Operation *op) {
  auto loop = dyn_cast<scf::ForOp>(op);
  return loop && isPhase(op) && unorderedInLoop(*loop.getBody()) ? loop : scf::ForOp();
}

// Erases, last to first, the top-level ops of `body` that `drop` says go (when nothing uses
// them) and the pure ops nothing uses any more.
void prune(Block &body, llvm::function_ref<bool(Operation *)> drop) {
  SmallVector<Operation *> ops;
  for (Operation &op : body) ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    if (op->hasTrait<OpTrait::IsTerminator>() || !op->use_empty()) continue;
    if (isPhase(op) ? drop(op) : isMemoryEffectFree(op)) op->erase();
  }
}

// A copy of `kernel` named `name`, placed after `after`. With an empty `path`: it keeps of the
// top-level phases only those numbered in `keep` (and scalar reads a kept op uses). With a
// path of loops (a top-level phase number, then a phase number in that loop's body, and so on
// for nested host loops): the innermost loop's body becomes the kernel's top level, each
// loop's induction variable a trailing index argument (outermost first), and `keep` numbers
// the innermost body's phases.
KernelOp partOf(KernelOp kernel, ArrayRef<unsigned> keep, StringRef name, Operation *after,
                ArrayRef<unsigned> path = {}) {
  auto part = cast<KernelOp>(kernel->clone());
  part.setSymName(name);
  after->getBlock()->getOperations().insertAfter(after->getIterator(), part);
  Block &body = part.getBody().front();
  llvm::DenseMap<Operation *, unsigned> number;  // the phases `keep` numbers
  SmallVector<Operation *> level = phasesOf(body);
  SmallVector<Attribute> trips;
  for (unsigned at : path) {
    auto forOp = cast<scf::ForOp>(level[at]);
    // The trip's range as the host computes it, for the protocol checker: the launch it models
    // takes trips the host loop makes (pk.trips, outermost first).
    MLIRContext *ctx = kernel.getContext();
    auto bound = [&](Value v) -> Attribute {
      auto e = hostExprOf(v, body);
      return e ? StringAttr::get(ctx, ::pk::print_host_expr(*e)) : Attribute();
    };
    Attribute lb = bound(forOp.getLowerBound()), ub = bound(forOp.getUpperBound()), step = bound(forOp.getStep());
    if (lb && ub && step)
      trips.push_back(DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, "lb"), lb),
                                                NamedAttribute(StringAttr::get(ctx, "ub"), ub),
                                                NamedAttribute(StringAttr::get(ctx, "step"), step)}));
    part.insertArgument(body.getNumArguments(), IndexType::get(kernel.getContext()), {}, forOp.getLoc());
    forOp.getInductionVar().replaceAllUsesWith(body.getArguments().back());
    level.clear();
    for (Operation &op : llvm::make_early_inc_range(forOp.getBody()->without_terminator())) {
      op.moveBefore(forOp);
      if (isPhase(&op)) level.push_back(&op);
    }
    forOp.erase();
  }
  if (!path.empty() && trips.size() == path.size())
    part->setAttr(kTripsAttr, ArrayAttr::get(kernel.getContext(), trips));
  for (Operation *op : level) number[op] = unsigned(number.size());
  prune(body, [&](Operation *op) {
    auto it = number.find(op);
    return it == number.end() || !llvm::is_contained(keep, it->second);
  });
  return part;
}

std::string where(Operation *op) { return formatLocation(op->getLoc()); }

// The host loop a path of phase numbers leads to in `kernel` (see partOf).
scf::ForOp outerLoop(KernelOp kernel, ArrayRef<unsigned> path) {
  Block *block = &kernel.getBody().front();
  scf::ForOp loop;
  for (unsigned at : path) {
    loop = cast<scf::ForOp>(phasesOf(*block)[at]);
    block = loop.getBody();
  }
  return loop;
}

struct SplitLaunches : mlir::pk::impl::PkSplitLaunchesPassBase<SplitLaunches> {
  using PkSplitLaunchesPassBase::PkSplitLaunchesPassBase;

  // The template that takes phase `i` (of the top level, or of loop `loop`'s body) on its own,
  // or "". `unfused` says why a fused GEMM template did not take the whole kernel instead.
  StringRef templateOf(KernelOp kernel, ArrayRef<Operation *> phases, unsigned i,
                       ArrayRef<unsigned> path, std::string &unfused) {
    if (!templates || !isa<TileForeachOp>(phases[i]) || !hasMma(phases[i])) return "";
    const bool loop = !path.empty();
    KernelOp trial = partOf(kernel, {i}, (kernel.getSymName() + "_trial").str(), kernel, path);
    StringRef job;
    if (isAttentionKernel(trial)) {
      job = "attention";
    } else if (isLocalGemmKernel(trial)) {
      // With collectives beside it, a fused template may take the whole kernel, which beats
      // any split.
      bool collectives = llvm::any_of(phasesOf(kernel.getBody().front()), isCollectiveIntent);
      std::string why = collectives && !loop ? whyNotFusedGemm(kernel) : "";
      if (!collectives || loop || !why.empty()) job = "GEMM";
      if (!why.empty()) unfused = why;
    }
    trial.erase();
    return job;
  }

  // Phases i and i + 1 of the top level as one launch of a fused GEMM template: a GEMM loop and
  // the all-reduce or reduce-scatter of what it stores after it, or an all-gather of its A
  // before it, where the template takes the pair on its own (a kernel's other phases keep
  // their launches: a tensor-parallel MLP's row GEMM and its all-reduce become gemm_ar).
  bool fusedPair(KernelOp kernel, ArrayRef<Operation *> phases, unsigned i, ArrayRef<unsigned> path) {
    if (!templates || !path.empty() || i + 1 >= phases.size()) return false;
    Operation *a = phases[i], *b = phases[i + 1];
    const bool gemmThenCollective = isa<TileForeachOp>(a) && hasMma(a) && isa<AllReduceOp, ReduceScatterOp>(b);
    const bool gatherThenGemm = isa<AllGatherOp>(a) && isa<TileForeachOp>(b) && hasMma(b);
    if (!gemmThenCollective && !gatherThenGemm) return false;
    // The template never writes the pair's intermediate (a Scratch: the product an all-reduce or
    // reduce-scatter takes, the all-gather's output): no other phase may touch it.
    Value between = gemmThenCollective ? b->getOperand(0) : a->getOperand(1);
    for (auto [k, other] : llvm::enumerate(phases)) {
      if (k == i || k == i + 1) continue;
      llvm::SmallPtrSet<Value, 8> reads, writes;
      phaseTouches(other, reads, writes);
      if (reads.contains(between) || writes.contains(between)) return false;
    }
    // A kernel a fused template takes whole (the pair alone, or with a zero fill it absorbs)
    // is not split.
    if (whyNotFusedGemm(kernel).empty()) return false;
    KernelOp trial = partOf(kernel, {i, i + 1}, (kernel.getSymName() + "_trial").str(), kernel, path);
    const bool fused = whyNotFusedGemm(trial).empty();
    trial.erase();
    return fused;
  }

  // What runs as launches: a group of phases (one launch), or a host loop of launches.
  struct Item {
    SmallVector<unsigned> phases;  // a group's phase numbers in its block
    StringRef job;                 // the template a group of one phase takes, or ""
    scf::ForOp loop;               // a host loop, whose body's items are `body`
    SmallVector<unsigned> path;    // the loops around the block, then (a loop) its own number
    std::vector<Item> body;
  };

  // The items of the phases of one block (the kernel's top level, or a host loop's body at
  // `path`): every template phase alone, host loops on their own, the phases between them
  // together (ordered inside their launch by grid-wide barriers, as in any kernel).
  FailureOr<std::vector<Item>> itemsOf(KernelOp kernel, ArrayRef<Operation *> phases,
                                       ArrayRef<unsigned> path, bool &templated, std::string &unfused) {
    Block &entry = kernel.getBody().front();
    std::vector<Item> items;
    // A scalar read of a tensor no phase of the block writes needs no launch of its own: each
    // part that uses it keeps a copy (partOf), which reads the same value at its start.
    llvm::SmallPtrSet<Value, 8> read, written;
    for (Operation *phase : phases) phaseTouches(phase, read, written);
    for (unsigned i = 0; i < phases.size(); ++i) {
      if (auto scalar = dyn_cast<LoadScalarOp>(phases[i]); scalar && !written.contains(scalar.getSource()))
        continue;
      if (scf::ForOp loop = hostLoop(phases[i])) {
        if (loop.getNumResults() != 0)
          return loop.emitError("this range loop holds phases a launch cannot order (a collective, "
                                "or phases that depend on each other), so pkc runs it as a host "
                                "loop of launches; it must carry no values from trip to trip");
        // The host loop's trips are the launches the protocol was checked for.
        if (!getConstantIntValue(loop.getStep()))
          return loop.emitError("this range loop holds phases a launch cannot order (a "
                                "collective, or phases that depend on each other), so pkc runs it "
                                "as a host loop of launches; its step must be a positive integer "
                                "constant");
        for (Value bound : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
          if (!hostExprOf(bound, entry))
            return loop.emitError("this range loop holds phases a launch cannot order (a "
                                  "collective, or phases that depend on each other), so pkc runs it "
                                  "as a host loop of launches; its bounds must be known on the host "
                                  "and the same on every rank, which all make the same launches "
                                  "(constants, sizes, the world size, integer arguments and "
                                  "arithmetic, min and max of them; not the rank, not an enclosing "
                                  "loop's variable)");
        Item item;
        item.loop = loop;
        item.path.assign(path.begin(), path.end());
        item.path.push_back(i);
        FailureOr<std::vector<Item>> body =
            itemsOf(kernel, phasesOf(*loop.getBody()), item.path, templated, unfused);
        if (failed(body)) return failure();
        item.body = std::move(*body);
        items.push_back(std::move(item));
        continue;
      }
      if (fusedPair(kernel, phases, i, path)) {
        templated = true;
        items.emplace_back();
        items.back().job = "fused GEMM";
        items.back().path.assign(path.begin(), path.end());
        items.back().phases = {i, i + 1};
        ++i;
        continue;
      }
      StringRef job = templateOf(kernel, phases, i, path, unfused);
      templated |= !job.empty();
      if (items.empty() || items.back().loop || !job.empty() || !items.back().job.empty()) {
        items.emplace_back();
        items.back().job = job;
        items.back().path.assign(path.begin(), path.end());
      }
      items.back().phases.push_back(i);
    }
    return items;
  }

  // Each launch that uses a scalar read reads it again at its start (partOf keeps a copy): where
  // a phase after the read rewrites its tensor in an earlier launch than a user's, that launch
  // would see the new value, not what the spec read. An error, never that value.
  static LogicalResult checkScalarReads(Block &entry, ArrayRef<Operation *> phases,
                                        const std::vector<Item> &items) {
    llvm::DenseMap<Operation *, size_t> launchOf;
    for (auto [n, item] : llvm::enumerate(items)) {
      for (unsigned i : item.phases) launchOf[phases[i]] = n;
      if (item.loop) launchOf[item.loop] = n;
    }
    for (auto [i, phase] : llvm::enumerate(phases)) {
      auto scalar = dyn_cast<LoadScalarOp>(phase);
      if (!scalar) continue;
      // The first launch in which a later phase rewrites the tensor read.
      size_t rewritten = items.size();
      for (Operation *later : phases.drop_front(i + 1)) {
        llvm::SmallPtrSet<Value, 8> reads, writes;
        phaseTouches(later, reads, writes);
        if (writes.contains(scalar.getSource()) && launchOf.count(later))
          rewritten = std::min(rewritten, launchOf[later]);
      }
      if (rewritten == items.size()) continue;
      // The read's value and the top-level arithmetic computed from it.
      llvm::SmallPtrSet<Value, 8> derived{scalar.getResult()};
      for (Operation &op : entry)
        if (!isPhase(&op) && llvm::any_of(op.getOperands(), [&](Value v) { return derived.contains(v); }))
          derived.insert(op.result_begin(), op.result_end());
      for (Operation *user : phases.drop_front(i + 1)) {
        auto at = launchOf.find(user);
        if (at == launchOf.end() || at->second <= rewritten) continue;
        bool uses = false;
        user->walk([&](Operation *op) {
          uses |= llvm::any_of(op->getOperands(), [&](Value v) { return derived.contains(v); });
        });
        if (uses)
          return scalar.emitError("pkc runs this kernel as several launches (a template's loop needs "
                                  "one of its own); each launch that uses this value reads it again at "
                                  "its start, after an earlier launch rewrote the tensor it reads: pass "
                                  "the value as an argument, or read it from a tensor no later phase writes");
      }
    }
    return success();
  }

  LogicalResult split(KernelOp kernel, SymbolTable &symbols) {
    if (hasOwnProtocol(kernel)) return success();
    Block &entry = kernel.getBody().front();
    SmallVector<Operation *> phases = phasesOf(entry);
    bool loops = llvm::any_of(phases, [](Operation *op) { return bool(hostLoop(op)); });
    if (phases.size() < 2 && !loops) return success();
    std::string unfused;

    bool templated = false;
    FailureOr<std::vector<Item>> items = itemsOf(kernel, phases, {}, templated, unfused);
    if (failed(items)) return failure();
    if (!loops && !templated) return success();
    // One launch after all (the other phases were scalar reads it keeps): nothing to split.
    if (!loops && items->size() == 1 && items->front().job != "fused GEMM") return success();
    if (failed(checkScalarReads(entry, phases, *items))) return failure();

    std::string name = kernel.getSymName().str();
    SmallVector<KernelOp> parts;
    std::string why;
    Operation *after = kernel;
    MLIRContext *ctx = kernel.getContext();
    auto newPart = [&](ArrayRef<unsigned> keep, ArrayRef<unsigned> path) -> FailureOr<KernelOp> {
      std::string partName = name + "_launch" + std::to_string(parts.size());
      if (symbols.lookup(partName))
        return kernel.emitError("pkc runs this kernel as several launches and names them '")
               << name << "_launch<i>', but the spec already has a kernel '" << partName << "'";
      KernelOp part = partOf(kernel, keep, partName, after, path);
      after = part;
      parts.push_back(part);
      return part;
    };
    auto describe = [&](StringRef job, ArrayRef<Operation *> ops, ArrayRef<unsigned> group) {
      if (job == "fused GEMM")
        return "the phases at " + where(ops[group[0]]) + " and " + where(ops[group[1]]) +
               " (a fused GEMM template: the GEMM loop with its collective)";
      if (!job.empty()) return "the tile loop at " + where(ops[group.front()]) + " (the " + job.str() + " template)";
      std::string s = group.size() == 1 ? "the phase at " : "the phases at ";
      for (auto [k, i] : llvm::enumerate(group)) s += (k ? ", " : "") + where(ops[i]);
      return s;
    };
    // The entries of `items`: a part's symbol, or a host loop's bounds and its body's entries.
    std::function<FailureOr<SmallVector<Attribute>>(std::vector<Item> &)> entriesOf =
        [&](std::vector<Item> &items) -> FailureOr<SmallVector<Attribute>> {
      SmallVector<Attribute> out;
      for (Item &item : items) {
        Block &block = item.path.empty() ? entry : *outerLoop(kernel, item.path).getBody();
        SmallVector<Operation *> ops = phasesOf(block);
        if (!item.loop) {
          FailureOr<KernelOp> part = newPart(item.phases, item.path);
          if (failed(part)) return failure();
          out.push_back(FlatSymbolRefAttr::get(ctx, part->getSymName()));
          why += " " + part->getSymName().str() + " = " + describe(item.job, ops, item.phases) + ";";
          continue;
        }
        why += " for each trip of the range loop at " + where(item.loop) + ", a host loop:";
        FailureOr<SmallVector<Attribute>> body = entriesOf(item.body);
        if (failed(body)) return failure();
        why += " (end of the loop at " + where(item.loop) + ");";
        // A hand-written ring: one launch, and its flag rounds, per trip (set 37, finding 4).
        bool peerStores = false;
        item.loop->walk([&](Operation *op) { peerStores |= isa<StoreTileOp, AddTileOp>(op); });
        if (peerStores)
          why += " each trip of that loop is a launch with its own flag rounds, so a ring written this "
                 "way moves one block per launch; where it forwards every rank's block to every rank, "
                 "all_gather, reduce_scatter or all_to_all move them all in one launch;";
        auto bound = [&](Value v) { return StringAttr::get(ctx, ::pk::print_host_expr(*hostExprOf(v, entry))); };
        out.push_back(DictionaryAttr::get(
            ctx, {NamedAttribute(StringAttr::get(ctx, "lb"), bound(item.loop.getLowerBound())),
                  NamedAttribute(StringAttr::get(ctx, "ub"), bound(item.loop.getUpperBound())),
                  NamedAttribute(StringAttr::get(ctx, "step"), bound(item.loop.getStep())),
                  NamedAttribute(StringAttr::get(ctx, "parts"), ArrayAttr::get(ctx, *body))}));
      }
      return out;
    };
    FailureOr<SmallVector<Attribute>> entries = entriesOf(*items);
    if (failed(entries)) return failure();
    for (auto [n, part] : llvm::enumerate(parts))
      recordDecision(part, "launches", "launch " + Twine(n) + " of " + Twine(parts.size()) +
                                           " of kernel '" + name + "'" +
                                           (part.getNumArguments() > kernel.getNumArguments()
                                                ? " (in a host loop: its last arguments are the trips' "
                                                  "induction variables, outermost first)"
                                                : ""));
    std::string reason;
    if (templated)
      reason += " a template needs its own grid, block shape and shared memory and replaces its "
                "launch's whole body, so no grid-wide barrier can order it with the other phases;";
    if (loops)
      reason += " a launch's flags and barriers count once per launch, so a range loop whose "
                "phases need ordering (a collective, or phases that depend on each other) runs as "
                "a host loop of launches;";
    std::string head = "the kernel runs as " + std::to_string(parts.size());
    head += loops ? (parts.size() == 1 ? " kernel" : " kernels") +
                        std::string(", launched in order on the caller's stream by one host call (a "
                                    "host loop repeats some):")
                  : " launches, issued in order on the caller's stream by one host call:";
    recordDecision(kernel, "launches",
                   head + why + reason +
                       " launches on one stream run in order, and each returns on a rank only once "
                       "what it writes there (its collectives' and peers' writes included) has "
                       "landed, so a later launch reads finished data" +
                       (unfused.empty() ? "" : "; no fused GEMM template takes the whole kernel: " + unfused));
    SmallVector<Operation *> ops;
    for (Operation &op : entry.without_terminator()) ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      op->dropAllUses();
      op->erase();
    }
    kernel->setAttr("pk.launches", ArrayAttr::get(ctx, *entries));
    kernel->setAttr("pk.level", StringAttr::get(ctx, "device"));
    return success();
  }

  void runOnOperation() override {
    // A collective moves whole tensors once per launch; inside a tile loop it would run once per
    // tile, from every block at once.
    WalkResult nested = getOperation().walk([&](Operation *op) {
      if (!isCollectiveIntent(op) || !op->getParentOfType<TileForeachOp>()) return WalkResult::advance();
      op->emitError("a collective moves whole tensors once per launch, so it cannot sit inside a "
                    "tiles() loop (which runs its body once per tile, in every block); call it "
                    "before or after the loop");
      return WalkResult::interrupt();
    });
    if (nested.wasInterrupted()) return signalPassFailure();
    SymbolTable symbols(getOperation());
    SmallVector<KernelOp> kernels(getOperation().getOps<KernelOp>());
    for (KernelOp kernel : kernels)
      if (failed(split(kernel, symbols))) return signalPassFailure();
  }
};

} // namespace

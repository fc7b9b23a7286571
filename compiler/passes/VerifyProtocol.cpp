// Proves that a device-level kernel's signals and waits cannot hang, be overtaken or race,
// by running the protocol model for every world size and checking the cross-rank events.
#include "ProtocolModel.h"
#include "Phases.h"
#include "ProtocolOrder.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"
#include <deque>
#include <limits>
#include <vector>

namespace mlir::pk {
#define GEN_PASS_DEF_PKVERIFYPROTOCOLPASS
#include "pk/Passes/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::protocol;

namespace {

// Two launches are enough to see what one launch leaves behind for the next.
constexpr int kLaunches = 2;

enum class Check { Range, TooFew, TooMany, Equal, BulkWait, ProxyFence, Deadlock, Race };

std::string where(Operation *op) { return formatLocation(op->getLoc()); }

// A flag slot as the spec wrote it: pkc moves a spec's slots up past its own flags
// (FlagsAbove.h), and a message that named the moved slot would name one the spec lacks.
std::string slotName(int64_t slot, int64_t shift) {
  if (shift == 0) return std::to_string(slot);
  return std::to_string(slot - shift) + " (slot " + std::to_string(slot) +
         " after pkc's own flags)";
}
std::string slotName(const Event &e) { return slotName(e.slot, e.shift); }

constexpr int64_t kWholeLo = std::numeric_limits<int64_t>::min();
constexpr int64_t kWholeHi = std::numeric_limits<int64_t>::max();

// One access as it happened in the simulation, when and what its block knew then, and the
// facts the race check sweeps over, copied from the event while it is at hand.
struct Recorded : Stamp {
  Recorded(const Stamp &at, const Access *access, Operation *op)
      : Stamp(at), access(access), op(op), write(access->write), add(access->add) {}
  bool whole() const { return access->lo.empty(); }
  // The box along dimension d (every index for a whole-tensor access).
  int64_t lo(size_t d) const { return whole() ? kWholeLo : access->lo[d]; }
  int64_t hi(size_t d) const { return whole() ? kWholeHi : access->hi[d]; }

  const Access *access;
  Operation *op;  // null for the host's use of the buffer between launches
  bool write, add;
};

// The accesses to each rank's copy of each kernel argument, in the order they happened.
using Buffers = llvm::DenseMap<std::pair<int, unsigned>, std::vector<Recorded>>;

bool overlaps(const Access &a, const Access &b) {
  if (a.lo.empty() || b.lo.empty()) return true;  // a whole-tensor access
  for (size_t d = 0; d < std::min(a.lo.size(), b.lo.size()); ++d)
    if (a.hi[d] <= b.lo[d] || b.hi[d] <= a.lo[d]) return false;
  return true;
}

// The dimension whose boxes tell the accesses of one buffer apart best: the one along which
// the boxes spread furthest, counted in widths of the widest box (a buffer of [3, N, D]
// tiles is swept along N, not along the 3 rows every tile shares). Accesses of one tensor
// have boxes of its rank (ProtocolModel), so any box's dimensions serve.
size_t sweepDimension(ArrayRef<Recorded> members) {
  size_t rank = 0;
  for (const Recorded &a : members)
    if (!a.whole()) rank = std::max(rank, a.access->lo.size());
  size_t best = 0;
  double bestSpread = -1;
  for (size_t d = 0; d < rank; ++d) {
    int64_t lo = kWholeHi, hi = kWholeLo, widest = 1;
    for (const Recorded &a : members) {
      if (a.whole() || a.access->lo.size() <= d) continue;
      lo = std::min(lo, a.lo(d));
      hi = std::max(hi, a.hi(d));
      widest = std::max(widest, a.hi(d) - a.lo(d));
    }
    double spread = hi > lo ? double(hi - lo) / double(widest) : 0;
    if (spread > bestSpread) best = d, bestSpread = spread;
  }
  return best;
}

// Calls `visit(x, y)` once for each pair of `members` that overlaps along the sweep
// dimension where at least one writes, not both add, and at least one is `open` (adds commute:
// rows scattered by index are whole-tensor adds, and pairing them all would be quadratic in
// the tiles that scatter). Each open access is
// compared only with the accesses whose start along it lies within the widest box of it (a
// sweep over the accesses sorted by start), so the cost follows the overlapping pairs.
// With `boxesOnly`, a whole-tensor access meets only other whole-tensor ones here (the caller
// pairs it with the boxes by happens-before, checkRaces).
void forEachOverlap(ArrayRef<Recorded> members, ArrayRef<bool> open,
                    llvm::function_ref<void(unsigned, unsigned)> visit, bool boxesOnly = false) {
  struct Span {
    int64_t lo, hi;
    unsigned at;
    bool operator<(const Span &o) const { return lo < o.lo; }
  };
  const size_t dim = sweepDimension(members);
  std::vector<Span> writes, adds, reads;
  std::vector<unsigned> wholes;  // with boxesOnly, the whole-tensor accesses, paired below
  int64_t widest = 0;
  for (unsigned x = 0; x < members.size(); ++x) {
    const Recorded &a = members[x];
    if (boxesOnly && a.whole()) {
      wholes.push_back(x);
      continue;
    }
    bool whole = a.whole() || a.access->lo.size() <= dim;
    int64_t lo = whole ? kWholeLo : a.lo(dim), hi = whole ? kWholeHi : a.hi(dim);
    (a.add ? adds : a.write ? writes : reads).push_back({lo, hi, x});
    if (!whole) widest = std::max(widest, hi - lo);
  }
  llvm::sort(writes);
  llvm::sort(adds);
  llvm::sort(reads);
  auto scan = [&](const Span &e, ArrayRef<Span> others) {
    auto pair = [&](const Span &f) {
      if (f.at != e.at && !(open[f.at] && f.at < e.at)) visit(e.at, f.at);  // else f's turn
    };
    // Whole-tensor accesses sort first and overlap everything.
    auto whole = llvm::partition_point(others, [](const Span &f) { return f.lo == kWholeLo; });
    for (auto it = others.begin(); it != whole; ++it) pair(*it);
    int64_t from = e.lo == kWholeLo ? kWholeLo : e.lo - widest;
    for (auto it = std::lower_bound(whole, others.end(), Span{from, 0, 0});
         it != others.end() && it->lo < e.hi; ++it)
      if (it->hi > e.lo) pair(*it);
  };
  // Each kind scans the kinds it pairs with, so a pair is seen from both ends (the `open`
  // rule above then visits it once).
  for (const Span &e : writes) {
    if (!open[e.at]) continue;
    scan(e, writes);
    scan(e, adds);
    scan(e, reads);
  }
  for (const Span &e : adds) {
    if (!open[e.at]) continue;
    scan(e, writes);
    scan(e, reads);
  }
  for (const Span &e : reads) {
    if (!open[e.at]) continue;
    scan(e, writes);
    scan(e, adds);
  }
  // Whole-tensor accesses among themselves (one writes, not both add), each pair once. Split
  // by kind first: thousands of gathers or scatters by index (reads, adds) meet only the plain
  // writes, and pairing every two of them cost minutes.
  std::vector<unsigned> plain, added, readOnly;
  for (unsigned x : wholes)
    (members[x].add ? added : members[x].write ? plain : readOnly).push_back(x);
  auto once = [&](unsigned x, unsigned y) {
    if (open[x] || open[y]) visit(std::min(x, y), std::max(x, y));
  };
  for (size_t i = 0; i < plain.size(); ++i) {
    for (size_t j = i + 1; j < plain.size(); ++j) once(plain[i], plain[j]);
    for (unsigned y : added) once(plain[i], y);
    for (unsigned y : readOnly) once(plain[i], y);
  }
  for (unsigned x : added)
    for (unsigned y : readOnly) once(x, y);
}

const char *verb(const Access &a) {
  if (!a.write) return "reads";
  if (a.rows) return a.rows == 2 ? "adds rows into" : "scatters rows into";
  return a.add ? "adds into" : "writes";
}

class KernelChecker {
public:
  // `localOnly`: a kernel that does not communicate, checked at world size 1 for blocks that
  // write what other blocks touch, where the model can follow it.
  KernelChecker(KernelOp kernel, int maxWorld, bool localOnly = false)
      : kernel(kernel), maxWorld(maxWorld), localOnly(localOnly) {}

  bool run() {
    // Flags and counted trips are a communicating kernel's; a local one is modelled where it can.
    if (!localOnly) {
      checkEqualCompares();
      if (!checkRuntimeSteps()) return false;
    }
    int64_t tail = 3 * largestStep(kernel) + 1;  // four tiles, the last one partial
    bool hasOpenBlocks = false;
    kernel.walk([&](WorkerOp w) { hasOpenBlocks |= w.getBlocks() == 0; });
    // Sizes: partial tiles along the first dimension, one element, and (for a spec's own
    // flags, where tile loops step over several dimensions) partial tiles along every
    // dimension. pkc's own protocols pair blocks and phases, whatever the tiles along other
    // dimensions; a spec's flags may count tiles along any of them (a flag per row of tiles).
    bool spec = false;
    kernel.walk([&](FlagOp f) { spec |= f->hasAttr("pk.spec"); });
    specFlags = spec;
    // The extra configurations (arguments at 0, two stand-ins) run at the small world sizes
    // where the races they expose show (a root or shift meets another rank at W = 2 or 3),
    // which keeps the checker's time near what it was.
    constexpr int kExtraWorlds = 3;
    // A kernel whose only cross-rank operations are pkc's phase barriers (no peer data, no
    // flags of the spec's) runs alike on every rank: world sizes 1-3 show what its index
    // arithmetic does with rank() and world_size(), and more ranks only repeat the barrier.
    // Modelling them up to 16 took most of a minute for some such kernels.
    const int worlds = spec || communicates(kernel) ? maxWorld : std::min(maxWorld, kExtraWorlds);
    // A kernel that does not communicate also gets partial tiles along every dimension (where
    // the model can follow them): tiles of one loop that store into the same elements along a
    // later dimension (a tile wider than its step, an index such as n / 2) race there.
    const std::vector<int64_t> spread = spec || localOnly ? spreadExtents(kernel) : std::vector<int64_t>{};
    SmallVector<std::pair<int64_t, bool>> dims = {{tail, false}, {1, false}};
    if (!spread.empty()) dims.push_back({tail, true});
    // Blocks: one, and two and three (tiles t and t + 2, t + 3 on other blocks: a shift by
    // two or three tiles races somewhere).
    SmallVector<int64_t> blocks = hasOpenBlocks ? SmallVector<int64_t>{1, 2, 3}
                                                : SmallVector<int64_t>{1};
    // Integer arguments take the extent's value, and 0 (a root or peer 0, no offset) in
    // configurations of their own, which are skipped where the model cannot follow them.
    bool intArgs = false;
    for (BlockArgument arg : kernel.getBody().getArguments()) intArgs |= arg.getType().isIntOrIndex();
    SmallVector<std::optional<int64_t>> argValues = {std::nullopt};
    if (intArgs) argValues.push_back(0);
    for (int w = 1; w <= (localOnly ? 1 : worlds); ++w)
      for (auto [n, spreadOut] : dims)
        for (int64_t b : blocks)
          for (std::optional<int64_t> argValue : argValues) {
            if (argValue && w > kExtraWorlds) continue;
            Config config{w, n, b, {}, spreadOut ? spread : std::vector<int64_t>{}, argValue};
            if (!check(config, /*optional=*/localOnly || argValue.has_value(), spec)) return result;
            // Workers of many blocks, modelled by three stand-ins, by two too (a tile loop's
            // tiles t and t + 3 then run on different blocks).
            if (b == 1 && !argValue && w <= kExtraWorlds) {
              Config two{w, n, b, {}, spreadOut ? spread : std::vector<int64_t>{}, argValue, 2};
              if (!check(two, /*optional=*/true, spec)) return result;
            }
          }
    // A launch of a host loop: the configurations above model its first trip; its second
    // (a trip-chosen peer or block one step on) at the small world sizes too. A size where the
    // loop makes no second trip is no launch.
    if (kernel->hasAttr(kTripsAttr))
      for (int w = 1; w <= std::min(worlds, kExtraWorlds); ++w)
        for (auto [n, spreadOut] : dims) {
          Config config{w, n, blocks.back(), {}, spreadOut ? spread : std::vector<int64_t>{}, std::nullopt};
          config.trip = 1;
          if (!check(config, /*optional=*/true, spec)) return result;
          noteTripClobbers(config);
        }
    reportTripClobbers();
    // A spec's own flags (pk::prim) order what the spec's loops touch, over whatever shapes
    // the tensors have: model tensors of different shapes too (skewExtents), later or earlier
    // arguments larger, at world sizes 1 and 2 (a gathered buffer larger than its source, a
    // consumer tiled over another tensor's shape, a block-level barrier between loops over two
    // shapes). pkc's own protocols come with launch checks on the shapes they need; a kernel
    // with no flags has no protocol the shapes could break, only the results its sizes give.
    constexpr int kSkewWorlds = 2;
    for (int w = 1; w <= std::min(spec ? worlds : 0, kSkewWorlds); ++w)
      for (int skew : {1, -1})
        for (std::optional<int64_t> argValue : argValues) {
          Config config{w, tail, blocks.back(), {}, spread, argValue};
          config.skew = skew;
          if (!check(config, /*optional=*/true, spec)) return result;
        }
    // Flag slots that follow the tile index and may repeat every c tiles: one block (one
    // stand-in for a worker of many) with more than c tiles along each dimension in turn, so
    // two of its tiles share a slot, as tiles t and t + k B of B blocks do once k B is a
    // multiple of c. (A slot that never repeats leaves the flag region there: skipped.)
    if (int64_t c = slotRepeatTiles(kernel)) {
      const int64_t many = c * largestStep(kernel) + 1;
      std::vector<int64_t> wide(spread.size(), 0);
      for (size_t d = 1; d < spread.size(); ++d) wide[d] = many;
      for (int w = 1; w <= std::min(worlds, kSkewWorlds); ++w) {
        Config rows{w, many, 1, {}, {}, std::nullopt, /*standIns=*/1};
        if (!check(rows, /*optional=*/true, spec)) return result;
        if (wide.empty()) continue;
        Config cols{w, 1, 1, {}, wide, std::nullopt, /*standIns=*/1};
        if (!check(cols, /*optional=*/true, spec)) return result;
      }
    }
    if (modelled == 0 && !localOnly)
      kernel.emitWarning("protocol not verified: every size the checker models fails one of the "
                         "kernel's launch checks");
    return !failed;
  }

private:
  // Models one configuration; false stops the checker, which then returns `result`. An
  // optional configuration the model cannot follow is skipped.
  bool check(Config &config, bool optional, bool spec) {
    modelDims(kernel, config);
    skewExtents(kernel, config);
    modelledProcs.clear();
    SmallVector<Process, 0> procs;
    Operation *at = nullptr;
    std::string why;
    if (!buildProcesses(kernel, config, procs, at, why)) {
      if (optional || StringRef(why).starts_with(kRefusedAtLaunch)) return true;
      // pkc's own protocols are correct by construction and tested, so a model that
      // cannot finish (sizes past its bounds) leaves a warning. But which peer a tile goes
      // to, and how many tiles, come from the spec: an integer read from memory deciding
      // them could make any rank race with any other, so that is an error.
      if (!spec && StringRef(why).starts_with(kFromMemory) && communicates(at)) {
        at->emitError("a kernel that communicates cannot use an integer read from memory "
                      "to choose a peer, bound a loop, index a tile or take a branch: ")
            << why << "; so its peer accesses cannot be proved race-free; compute the value "
               "from arguments, extents and rank(), or read it in a kernel of its own and "
               "pass it as an argument";
        result = false;
        return false;
      }
      if (!spec) {
        at->emitWarning("protocol not verified: ") << why << " ('" << at->getName() << "')";
        result = !failed;
        return false;
      }
      at->emitError("the kernel's own protocol (pk::prim flags) cannot be verified: ")
          << why << "; pkc compiles a spec's signals and waits only once it has proved them";
      result = false;
      return false;
    }
    world = int(config.world);
    current = &config;
    checkInOrder(procs);
    std::vector<int64_t> arrivals(numberFlags(procs));  // signals per flag and launch
    if (checkCounts(procs, arrivals)) simulate(procs, arrivals);
    current = nullptr;
    ++modelled;
    modelledProcs = std::move(procs);
    return true;
  }
  SmallVector<Process, 0> modelledProcs;  // the last configuration check() simulated, if it did

  KernelOp kernel;
  int maxWorld;
  bool localOnly;
  bool result = false;  // what run() returns when check() stops it
  int modelled = 0;      // configurations simulated
  const Config *current = nullptr;  // the configuration being simulated

  // Whether `root` (an op, with what it holds) touches other ranks' memory (peer tiles and
  // rows, collectives, the primitives they lower to); grid-wide barriers stay inside a rank.
  static bool communicates(Operation *root) {
    bool peers = false;
    root->walk([&](Operation *op) {
      if (auto rows = dyn_cast<TileLoadRowsOp>(op)) peers |= bool(rows.getPeer());
      else if (auto rows = dyn_cast<TileStoreRowsOp>(op)) peers |= bool(rows.getPeer());
      else peers |= isCollectiveIntent(op) ||
                    isa<StoreTileOp, AddTileOp, LoadPeerOp, StoreAsyncOp, StoreAddAsyncOp, CommAllReduceOp,
                        CopyOp, SwapOp, ReduceIntoOp, PushSmallOp>(op);
    });
    return peers;
  }
  int world = 1;
  bool failed = false;
  bool specFlags = false;  // the kernel has its own flags (pk::prim), so no phase barriers of pkc's
  llvm::DenseSet<std::pair<Operation *, int>> reported;
  std::deque<Access> hostAccesses;

  // "argument 1 (y)": the kernel argument, by the spec's parameter name where it has one.
  std::string tensorName(unsigned n) {
    std::string s = "argument " + std::to_string(n);
    auto args = kernel.getBody().front().getArguments();
    if (n < args.size())
      if (auto named = dyn_cast<NameLoc>(args[n].getLoc()))
        s += " (" + named.getName().str() + ")";
    return s;
  }

  void report(Operation *op, Check check, const Twine &message) {
    failed = true;
    if (reported.insert({op, int(check)}).second) op->emitError(message + skewNote());
  }

  // In a configuration whose tensors differ in shape, names the shapes: nothing in the spec
  // ties them, so a launch with them runs the race.
  std::string skewNote() {
    if (!current || current->skew == 0) return "";
    std::string s = " (with tensors of different shapes, which nothing in the kernel rules out:";
    auto args = kernel.getBody().front().getArguments();
    const char *sep = " ";
    for (BlockArgument arg : args) {
      if (!isa<LocalTensorType, SymTensorType>(arg.getType())) continue;
      s += sep + tensorName(arg.getArgNumber()) + " [";
      for (size_t d = 0; d < getTensorShape(arg.getType()).size(); ++d)
        s += (d ? ", " : "") + std::to_string(modelledExtent(*current, arg.getArgNumber(), d));
      s += "]";
      sep = ", ";
    }
    return s + ")";
  }

  // The model runs a loop with a run-time step over every value in [lo, hi), which covers the
  // accesses of any positive step but not its signal counts or carried indices: those loops
  // need a constant step.
  bool checkRuntimeSteps() {
    bool ok = true;
    kernel.walk([&](scf::ForOp loop) {
      if (getConstantIntValue(loop.getStep())) return;
      bool carriesIndex = llvm::any_of(loop.getResultTypes(),
                                       [](Type t) { return t.isIntOrIndex(); });
      Operation *sync = nullptr;
      loop.getBody()->walk([&](Operation *op) {
        StringRef name = op->getName().getStringRef();
        if (!sync && (name.starts_with("pk.sync.") || name.starts_with("pk.comm.") ||
                      name.starts_with("pk.coll.")))
          sync = op;
      });
      if (!sync && !carriesIndex) return;
      ok = false;
      std::string what = sync ? "signals, waits or communicates (" +
                                    sync->getName().getStringRef().str() + " at " +
                                    where(sync) + ")"
                              : "carries an index value from trip to trip";
      report(loop, Check::Range,
             "this range() loop " + what + " with a run-time step, so the protocol checker "
             "cannot count its trips: give it a positive integer constant step (a run-time step "
             "is fine in loops that only load, compute and store)");
    });
    return ok;
  }

  // A run-time slot taken modulo a constant repeats on one block's tiles (t and t + k B of
  // B blocks); says so, since the repeat needs more tiles than small tests have.
  // A wait whose count is not a constant: the count the model gave it, said as such.
  static std::string modelledCount(const Event &e) {
    auto wait = dyn_cast<WaitOp>(e.op);
    if (!wait || getConstantIntValue(wait.getCount())) return "";
    return " (its count is computed at run time, here from the sizes and arguments the checker "
           "modelled, which made it " + std::to_string(e.count) + ")";
  }

  std::string recycledSlotHint(const Event &e) {
    auto wait = dyn_cast<WaitOp>(e.op);
    auto flag = wait ? wait.getFlag().getDefiningOp<FlagOp>() : FlagOp();
    if (!flag || !flag.getOffset() || !slotRepeatTiles(kernel) || !flag->getParentOfType<TileForeachOp>())
      return "";
    return "; the slot follows the tile index and repeats, so one block's tiles t and t + k B "
           "(B blocks) can share it: give every tile its own slot, or count a slot's signals "
           "over the tiles that share it";
  }

  // Flags are never reset: a wait compared with == misses its value once a later launch
  // (or a later iteration) has added to the flag.
  void checkEqualCompares() {
    kernel.walk([&](WaitOp wait) {
      if (wait.getCompare() != Compare::eq) return;
      auto flag = wait.getFlag().getDefiningOp<FlagOp>();
      auto shift = flag ? flag->getAttrOfType<IntegerAttr>(kSpecShiftAttrName) : IntegerAttr();
      std::string slot =
          flag ? slotName(int64_t(flag.getSlot()), shift ? shift.getInt() : 0) : "?";
      bool inLoop = wait->getParentOfType<TileForeachOp>() != nullptr;
      report(wait, Check::Equal,
             "wait on flag slot " + slot + " compares for equality, but the flag is reused " +
                 (inLoop ? "by every iteration of the tile loop and every launch"
                         : "by every launch") +
                 " without a reset: flags are monotone epochs, compare with <ge>");
    });
  }

  // Program-order rules of one block: TMA stores complete before a release, and TMA reads
  // of acquired data come after a proxy fence.
  void checkInOrder(ArrayRef<Process> procs) {
    for (const Process &p : procs) {
      Operation *pendingStore = nullptr, *acquired = nullptr;
      for (const Event &e : p.events) {
        switch (e.kind) {
        case EventKind::Access:
          if (e.access.tma && e.access.write) pendingStore = e.op;
          if (e.access.tma && !e.access.write && acquired)
            report(e.op, Check::ProxyFence,
                   "TMA read after the wait at " + where(acquired) + " for world size " +
                       Twine(world) + ": rank " + Twine(p.rank) +
                       " needs pk.sync.proxy_fence between the wait and the read");
          break;
        case EventKind::BulkWait: pendingStore = nullptr; break;
        case EventKind::ProxyFence: acquired = nullptr; break;
        case EventKind::Wait: acquired = e.op; break;
        case EventKind::Signal:
          if (pendingStore)
            report(e.op, Check::BulkWait,
                   "release signal on flag slot " + slotName(e) + " for world size " +
                       Twine(world) + ": rank " + Twine(p.rank) + "'s TMA store at " +
                       where(pendingStore) +
                       " may still be in flight; add pk.comm.bulk_wait before the signal");
          break;
        }
      }
    }
  }

  // Each wait needs exactly as many signals per launch as it expects: fewer and it hangs,
  // more and the next launch's wait (expecting epoch * count) passes early.
  bool checkCounts(ArrayRef<Process> procs, MutableArrayRef<int64_t> arrivals) {
    bool ok = true;
    for (const Process &p : procs)
      for (const Event &e : p.events) {
        if (e.kind != EventKind::Signal) continue;
        if (e.peer < 0 || e.peer >= world) {
          report(e.op, Check::Range,
                 "signal on flag slot " + slotName(e) + " targets rank " + Twine(e.peer) +
                     ", outside [0, " + Twine(world) + ") for world size " + Twine(world) +
                     " (sent by rank " + Twine(p.rank) + ")");
          ok = false;
          continue;
        }
        ++arrivals[e.flag];
      }
    if (!ok) return false;  // lost signals would only repeat as count errors
    for (const Process &p : procs)
      for (const Event &e : p.events) {
        if (e.kind != EventKind::Wait) continue;
        int64_t seen = arrivals[e.flag];
        if (seen < e.count) {
          report(e.op, Check::TooFew,
                 "wait on flag slot " + slotName(e) + " can never complete for world size " +
                     Twine(world) + ": rank " + Twine(p.rank) + " expects " + Twine(e.count) +
                     " signals per launch but at most " + Twine(seen) + " arrive" + modelledCount(e));
          ok = false;
        } else if (seen > e.count) {
          report(e.op, Check::TooMany,
                 "wait on flag slot " + slotName(e) + " can be overtaken for world size " +
                     Twine(world) + ": rank " + Twine(p.rank) + " expects " + Twine(e.count) +
                     " signals per launch but " + Twine(seen) +
                     " arrive, so a later wait on it can pass before its own signals" + modelledCount(e) +
                     recycledSlotHint(e));
          ok = false;
        }
      }
    return ok;
  }

  // Runs every block of every rank for two launches; a wait passes once the flag holds
  // launch * count. Vector clocks (ProtocolOrder.h) give the happens-before order for the
  // race check.
  void simulate(ArrayRef<Process> procs, ArrayRef<int64_t> arrivals) {
    struct State {
      size_t pc = 0;
      int launch = 0;
      bool ended = false;  // at the end of its launch, counted in `ended` of its rank
      Clock clock;
      const uint32_t *shared = nullptr;  // copy of `clock` since its last join, once taken
      SmallVector<std::pair<int, int64_t>, 2> joined;  // per flag: signals already joined
    };
    int numProcs = int(procs.size());
    Order order(procs, int(arrivals.size()), world);
    std::vector<State> states(numProcs);
    for (int i = 0; i < numProcs; ++i) states[i].clock = order.start(i);
    std::vector<SmallVector<int, 8>> procsOfRank(world);
    for (int i = 0; i < numProcs; ++i) procsOfRank[procs[i].rank].push_back(i);
    std::vector<size_t> ended(world);
    std::vector<std::vector<Stamp>> flags(arrivals.size());  // signals in arrival order
    for (size_t f = 0; f < flags.size(); ++f) flags[f].reserve(kLaunches * arrivals[f]);
    Buffers buffers;
    // Each buffer's accesses, counted first: growing the lists access by access cost a third of
    // the checker's time on moe_dispatch (reallocations and fresh pages).
    {
      llvm::DenseMap<std::pair<int, unsigned>, size_t> counts;
      for (const Process &p : procs)
        for (const Event &e : p.events)
          if (e.kind == EventKind::Access) counts[{e.access.memRank, e.access.tensor}] += kLaunches;
      for (auto &[key, n] : counts) buffers[key].reserve(n + kLaunches * world);
    }
    auto record = [&](const Stamp &at, const Access *a, Operation *op) {
      buffers[{a->memRank, a->tensor}].emplace_back(at, a, op);
    };
    std::deque<Clock> copies;
    auto stamp = [&](int i, uint32_t self) {
      State &s = states[i];
      if (!s.shared) s.shared = copies.emplace_back(s.clock).data();
      return Stamp{i, procs[i].rank, s.launch, self, s.shared};
    };

    // When every block of a rank has finished a launch, the host may reuse the rank's
    // buffers before the next launch starts on the same stream.
    auto finishLaunch = [&](int rank) {
      int launch = states[procsOfRank[rank].front()].launch;
      order.endLaunch(rank, procsOfRank[rank], [&](int i) -> Clock & { return states[i].clock; });
      for (BlockArgument arg : kernel.getBody().getArguments()) {
        if (!isa<SymTensorType>(arg.getType())) continue;
        Access a;
        a.tensor = arg.getArgNumber();
        a.memRank = rank;
        a.write = true;
        hostAccesses.push_back(a);
        record({numProcs + rank, rank, launch}, &hostAccesses.back(), nullptr);
      }
      for (int i : procsOfRank[rank]) {
        states[i].launch++;
        states[i].pc = 0;
        states[i].ended = false;
        states[i].shared = nullptr;
      }
      ended[rank] = 0;
    };

    bool progress = true;
    while (progress) {
      progress = false;
      for (int i = 0; i < numProcs; ++i) {
        State &s = states[i];
        const Process &p = procs[i];
        while (s.launch < kLaunches) {
          if (s.pc == p.events.size()) {
            if (!s.ended) {
              s.ended = true;
              ++ended[p.rank];
            }
            if (ended[p.rank] < procsOfRank[p.rank].size()) break;
            finishLaunch(p.rank);
            progress = true;
            continue;
          }
          const Event &e = p.events[s.pc];
          if (e.kind == EventKind::Wait) {
            // The wait is owed only the signals that reach launch * count; joining later
            // ones (a peer's next launch) would hide reuse hazards.
            const std::vector<Stamp> &arrived = flags[e.flag];
            int64_t need = int64_t(s.launch + 1) * e.count;
            if (int64_t(arrived.size()) < need) break;
            auto seen = llvm::find_if(s.joined, [&](auto &j) { return j.first == e.flag; });
            if (seen == s.joined.end()) seen = &s.joined.emplace_back(e.flag, 0);
            for (int64_t k = seen->second; k < need; ++k) order.receive(i, s.clock, arrived[k]);
            seen->second = std::max(seen->second, need);  // clocks only grow: no need again
            s.shared = nullptr;
          }
          uint32_t self = order.tick(i, s.clock);
          if (e.kind == EventKind::Signal) {
            flags[e.flag].push_back(stamp(i, self));
          } else if (e.kind == EventKind::Access) {
            record(stamp(i, self), &e.access, e.op);
          }
          s.pc++;
          progress = true;
        }
      }
    }
    if (reportDeadlock(procs, states, flags)) return;
    checkRaces(buffers, order, procs);
    checkScatterColumns(buffers, order, procs);
    reportClobbers();
  }

  template <typename States, typename Flags>
  bool reportDeadlock(ArrayRef<Process> procs, const States &states, const Flags &flags) {
    std::string cycle;
    Operation *first = nullptr;
    int listed = 0, launch = 0;
    auto stuck = [&](size_t i) {
      return states[i].launch < kLaunches && states[i].pc != procs[i].events.size();
    };
    // Blocks are named once two stuck blocks share a rank ("rank 0 ..., rank 0 ..." says
    // nothing about who waits).
    llvm::SmallDenseSet<int> ranks;
    bool blocksApart = false;
    for (size_t i = 0; i < procs.size(); ++i)
      if (stuck(i)) blocksApart |= !ranks.insert(procs[i].rank).second;
    for (size_t i = 0; i < procs.size(); ++i) {
      if (!stuck(i)) continue;
      const auto &s = states[i];
      const Event &e = procs[i].events[s.pc];
      int64_t value = int64_t(flags[e.flag].size());
      if (!first) { first = e.op; launch = s.launch; }
      std::string who = (blocksApart ? "block " + std::to_string(procs[i].block) + " of " : "") +
                        std::string("rank ") + std::to_string(procs[i].rank);
      if (listed++ < 4)
        cycle += (cycle.empty() ? "" : ", ") + (who + " waits on flag slot " + slotName(e) +
                 " (" + Twine(value) + " of " + Twine(int64_t(s.launch + 1) * e.count) + ")").str();
    }
    if (!first) return false;
    if (listed > 4) cycle += ", and " + std::to_string(listed - 4) + " more";
    report(first, Check::Deadlock,
           "deadlock for world size " + Twine(world) + " in launch " + Twine(launch + 1) +
               ": " + cycle + "; every rank waits for a signal another waiting rank sends "
               "later");
    return true;
  }

  // Two accesses of one rank's copy of a buffer conflict when they overlap, at least one
  // writes (adds commute with adds), and neither happens before the other. Pairs go in
  // recording order, as the first report at an op is the one kept; pairs that cannot
  // overlap or whose ops both have a race report already are left out (they change nothing).
  void checkRaces(const Buffers &buffers, const Order &order, ArrayRef<Process> procs) {
    for (const auto &buffer : buffers) {
      ArrayRef<Recorded> members = buffer.second;
      SmallVector<bool> open;
      for (const Recorded &a : members)
        open.push_back(a.op && !reported.contains({a.op, int(Check::Race)}));
      std::vector<std::pair<unsigned, unsigned>> races;
      auto consider = [&](unsigned x, unsigned y) {
        const Recorded &a = members[x], &b = members[y];
        noteClobber(a, b, order);
        if (a.add && b.add) return;
        const bool tilesApart = apartTiles(a, b);
        if (a.proc == b.proc && !tilesApart) return;
        if (!a.whole() && !b.whole() && !overlaps(*a.access, *b.access)) return;
        if (!tilesApart && (order.happensBefore(a, b) || order.happensBefore(b, a))) return;
        races.push_back({std::min(x, y), std::max(x, y)});
      };
      // A whole-tensor access (rows by index, a claim, a scalar read) overlaps every box, and a
      // counter read element by element meets each of its claims: pairing them one by one cost
      // seconds on moe_dispatch. Each block's accesses run in program order, so those before a
      // whole access w form a prefix of its list and those after it a suffix: only the middle
      // can race with w, found by two binary searches per block. (A kernel that does not
      // communicate takes its tiles as unordered whatever block ran them: paired one by one.)
      forEachOverlap(members, open, consider, /*boxesOnly=*/!localOnly);
      if (!localOnly) {
        llvm::DenseMap<int, SmallVector<unsigned, 0>> boxesOf;  // per block, in program order
        SmallVector<unsigned> wholes;
        for (unsigned x = 0; x < members.size(); ++x)
          (members[x].whole() ? wholes.push_back(x) : boxesOf[members[x].proc].push_back(x));
        for (unsigned w : wholes) {
          const Recorded &a = members[w];
          for (auto &[proc, list] : boxesOf) {
            if (proc == a.proc) continue;  // one block's accesses are ordered
            auto before = llvm::partition_point(list, [&](unsigned x) { return order.happensBefore(members[x], a); });
            auto after = std::partition_point(before, list.end(),
                                              [&](unsigned x) { return !order.happensBefore(a, members[x]); });
            for (auto it = before; it != after; ++it) {
              const Recorded &b = members[*it];
              if ((!a.write && !b.write) || (!open[w] && !open[*it])) continue;
              consider(w, *it);
            }
          }
        }
      }
      llvm::sort(races);
      for (auto [x, y] : races) reportRace(members[x], members[y], procs);
    }
  }

  // Scatters commute in the race check (which of several writes to one row lands is the
  // construct's choice), but two whose index tiles share elements write the same rows: where
  // their columns overlap too (a padding column of one tile on a column of another, or tiles
  // wider than their step), unordered, the values race as two stores' would.
  void checkScatterColumns(const Buffers &buffers, const Order &order, ArrayRef<Process> procs) {
    for (const auto &buffer : buffers) {
      SmallVector<unsigned> scatters;
      ArrayRef<Recorded> members = buffer.second;
      for (unsigned x = 0; x < members.size(); ++x) {
        const Access &a = *members[x].access;
        if (members[x].op && a.rows == 1 && a.rowsFrom >= 0 && a.colHi > a.colLo &&
            !reported.contains({members[x].op, int(Check::Race)}))
          scatters.push_back(x);
      }
      for (unsigned i = 0; i < scatters.size(); ++i)
        for (unsigned j = i + 1; j < scatters.size(); ++j) {
          const Recorded &a = members[scatters[i]], &b = members[scatters[j]];
          const Access &p = *a.access, &q = *b.access;
          if (p.rowsFrom != q.rowsFrom || p.rowsLo.size() != q.rowsLo.size() || a.launch != b.launch) continue;
          if (p.colHi <= q.colLo || q.colHi <= p.colLo) continue;
          bool sameRows = true;
          for (size_t d = 0; d < p.rowsLo.size() && sameRows; ++d)
            sameRows = p.rowsLo[d] < q.rowsHi[d] && q.rowsLo[d] < p.rowsHi[d];
          if (!sameRows) continue;
          const bool tilesApart = apartTiles(a, b);
          if (a.proc == b.proc && !tilesApart) continue;
          if (!tilesApart && (order.happensBefore(a, b) || order.happensBefore(b, a))) continue;
          const Recorded &here = a.self > b.self && a.proc == b.proc ? a : b, &other = &here == &a ? b : a;
          report(here.op, Check::Race,
                 "race for world size " + Twine(world) + ": this scatter writes rows of " +
                     tensorName(p.tensor) + " at columns [" + Twine(here.access->colLo) + ", " +
                     Twine(here.access->colHi) + ") while the scatter at " + where(other.op) +
                     " writes the same rows (" +
                     (p.rowsFrom == Access::kNumberedRows
                          ? Twine("both number the rows from their tiles' origins")
                          : "its row indices come from the same elements of " + tensorName(p.rowsFrom)) +
                     ") at columns [" + Twine(other.access->colLo) + ", " +
                     Twine(other.access->colHi) + "), in another tile of the loop and in no order; "
                     "store_rows writes every column of its tile inside the tensor, a clipped load's "
                     "padding columns too (only padding rows stay behind), so start the column blocks a "
                     "whole number of tiles apart or keep each tile inside its own block (a view with "
                     "the blocks as a dimension)");
          (void)procs;
        }
    }
  }

  // A store whose tile came from a clipped load writes the load's padding too (zeros, or what is
  // computed from them) up to the end of the tensor it writes. Where that padding lands on what
  // another store wrote earlier in the launch (a phase before, or earlier in the block), the
  // earlier data is lost although no race orders them wrongly: warned once per pair of stores.
  void noteClobber(const Recorded &a, const Recorded &b, const Order &order) {
    // Two tile stores of the spec's loops (a collective or a primitive rewrites whole blocks by
    // its own rules), the later one partly valid: a tile of padding only is a loop over a
    // larger tensor than it loads, which configurations of other shapes produce on purpose.
    // The cheap tests first: this runs for every overlapping pair the race check visits.
    if (!a.op || !b.op || a.op == b.op || !isa<TileStoreOp>(a.op) || !isa<TileStoreOp>(b.op) ||
        a.whole() || b.whole() || a.launch != b.launch || a.access->lo.size() != b.access->lo.size() ||
        (a.access->validRows <= 0 && b.access->validRows <= 0))
      return;
    const bool aFirst = a.proc == b.proc ? a.self < b.self : order.happensBefore(a, b);
    if (!aFirst && !(a.proc == b.proc ? b.self < a.self : order.happensBefore(b, a))) return;
    const Recorded &early = aFirst ? a : b, &late = aFirst ? b : a;
    if (paddingOver(*early.access, *late.access)) clobbers.insert({late.op, early.op});
  }

  // Whether the late tile store's padding rows land on the early one's valid rows (and every
  // other dimension overlaps as the boxes do). Not clipped at the tensor's end: the model's
  // sizes tie tensors the kernel leaves free (a bucket as long as one gradient), and the
  // destination is meant to reach wherever the earlier store's valid rows lie.
  static bool paddingOver(const Access &e, const Access &l) {
    if (l.validRows <= 0 || e.lo.empty() || e.lo.size() != l.lo.size()) return false;
    // The same box rewritten (a zero fill, then an accumulate into it): the late tile covers the
    // very rows the early one did, not another block's, so its padding rows are the rows a store
    // of that tile writes by definition (past the destination's end, clipped away).
    if (e.lo == l.lo && e.hi == l.hi) return false;
    const int64_t padLo = l.lo[0] + l.validRows, padHi = l.hi[0];
    const int64_t validHi = e.validRows < 0 ? e.hi[0] : e.lo[0] + e.validRows;
    if (padLo >= padHi || padLo >= validHi || e.lo[0] >= padHi) return false;
    for (size_t d = 1; d < l.lo.size(); ++d)
      if (l.hi[d] <= e.lo[d] || e.hi[d] <= l.lo[d]) return false;
    return true;
  }

  // The same clobber between a host loop's trips: the tile stores of its second trip (the
  // configuration check() just simulated) against the first trip's, buffer by buffer (a store at
  // trip-dependent rows, slot 1 - s at trip s, pads over the slot the trip before wrote). Trips
  // run one after the other.
  void noteTripClobbers(Config config) {
    if (modelledProcs.empty()) return;
    SmallVector<Process, 0> trips[2];
    trips[1] = std::move(modelledProcs);
    config.trip = 0;
    modelDims(kernel, config);
    skewExtents(kernel, config);
    Operation *at = nullptr;
    std::string why;
    if (!buildProcesses(kernel, config, trips[0], at, why)) return;
    auto tileStore = [](const Event &e) {
      return e.kind == EventKind::Access && e.access.write && e.op && isa<TileStoreOp>(e.op) && !e.access.lo.empty();
    };
    llvm::DenseMap<std::pair<int, unsigned>, SmallVector<const Event *, 8>> first;
    for (const Process &p : trips[0])
      for (const Event &e : p.events)
        if (tileStore(e)) first[{e.access.memRank, e.access.tensor}].push_back(&e);
    constexpr size_t kPairs = 1 << 22;  // past this many comparisons, a model too large to pair
    size_t pairs = 0;
    for (const Process &p : trips[1])
      for (const Event &e : p.events) {
        if (!tileStore(e) || e.access.validRows <= 0) continue;
        auto it = first.find({e.access.memRank, e.access.tensor});
        if (it == first.end()) continue;
        for (const Event *early : it->second) {
          if (++pairs > kPairs) return;
          if (paddingOver(early->access, e.access)) tripClobbers.insert({e.op, early->op});
        }
      }
  }
  llvm::SetVector<std::pair<Operation *, Operation *>> clobbers, tripClobbers;
  llvm::DenseSet<std::pair<Operation *, Operation *>> warned;

  void reportClobbers() {
    if (failed) return;  // the errors say more
    for (auto [late, early] : clobbers)
      if (warned.insert({late, early}).second)
        late->emitWarning(clobberMessage(late, early, "earlier in the launch"));
  }
  void reportTripClobbers() {
    if (failed) return;
    for (auto [late, early] : tripClobbers)
      if (warned.insert({late, early}).second)
        late->emitWarning(clobberMessage(late, early, "in the host loop's trip before"));
  }
  std::string clobberMessage(Operation *late, Operation *early, StringRef when) const {
    const std::string whose = early == late ? "what it" : "what the store at " + where(early);
    return ("this store writes its tile's padding (the part of a clipped load past its tensor's end: "
            "zeros, or what is computed from them) over " + whose + " wrote " + when + " (a store clips only at the end of the tensor it writes); start the blocks a whole "
            "number of tiles apart (an offset of (n + T - 1) / T * T for T-wide tiles)").str();
  }

  // In a kernel with no signals or barriers, two different tiles of dealt tile loops run on
  // different blocks at some grid size, unordered, even where the model put both on one block
  // (tiles t and t + 6 share a block of 2 and of 3).
  bool apartTiles(const Recorded &a, const Recorded &b) const {
    return localOnly && a.launch == b.launch && a.access->tile >= 0 && b.access->tile >= 0 &&
           a.access->tile != b.access->tile;
  }

  // Where two stores' boxes overlap only through a partial tile's padding rows, says so:
  // a store clips at the end of the tensor it writes, not of the one the tile came from, so
  // row blocks that are disjoint for the valid rows still overlap at their tails.
  std::string paddingOverlap(const Recorded &a, const Recorded &b) {
    const Access &x = *a.access, &y = *b.access;
    if (!x.write || !y.write || x.lo.empty() || y.lo.empty()) return "";
    auto validHi = [](const Access &s) {
      return s.validRows < 0 ? s.hi[0] : s.lo[0] + s.validRows;
    };
    if (validHi(x) > y.lo[0] && validHi(y) > x.lo[0]) return "";  // the valid rows overlap
    // The lower box's padding reaches into the higher one.
    const Recorded &pad = x.lo[0] <= y.lo[0] ? a : b;
    const Access &p = *pad.access, &q = pad.access == &x ? y : x;
    // A block's tail has valid rows before its padding; a tile of padding only is not one.
    if (p.validRows <= 0 || q.validRows == 0) return "";
    int64_t rows = p.hi[0] - p.lo[0];
    if (p.lo.size() == 1)  // a 1-D tensor: elements, and no row scatter to offer
      return (": rank " + Twine(pad.rank) + " stores a tile of " + Twine(rows) + " elements at [" +
              Twine(p.lo[0]) + ", " + Twine(p.hi[0]) + ") whose last " + Twine(rows - p.validRows) +
              " are padding of a clipped load (a store writes them too: it clips only at the end of the "
              "tensor it writes), and they overlap [" + Twine(q.lo[0]) + ", " + Twine(q.hi[0]) +
              ") that rank " + Twine(pad.rank == a.rank ? b.rank : a.rank) + " stores; start each block a "
              "whole number of tiles apart (an offset of r * ((n + " + Twine(rows - 1) + ") / " + Twine(rows) +
              " * " + Twine(rows) + ") rather than r * n)").str();
    return (": rank " + Twine(pad.rank) + " stores a tile of " + Twine(rows) +
            " rows at rows [" + Twine(p.lo[0]) + ", " + Twine(p.hi[0]) + ") whose last " +
            Twine(rows - p.validRows) + " are padding of a clipped load (a store writes them "
            "too: it clips only at the end of the tensor it writes), and they overlap rows [" +
            Twine(q.lo[0]) + ", " + Twine(q.hi[0]) + ") that rank " +
            Twine(pad.rank == a.rank ? b.rank : a.rank) + " stores; start each block of rows a "
            "whole number of tiles apart (an offset of r * ((rows + " + Twine(rows - 1) + ") / " +
            Twine(rows) + " * " + Twine(rows) + ") rather than r * rows), store into a view with the "
            "blocks as a dimension ([B, R, C] for B blocks of R rows) so that each tile clips at its "
            "own block, or, where the blocks' layout is fixed, scatter the rows: store_rows(y, t, cast<i32>(row_index<" + Twine(rows) +
            ", 1>(m)) + offset, n) moves none of a clipped load's padding rows").str();
  }

  // Where two stores start at different columns and the first reaches past the second's start
  // (rank blocks of a gather along columns stored with tiles wider than a block).
  std::string columnOverlap(const Recorded &a, const Recorded &b) {
    const Access &x = *a.access, &y = *b.access;
    if (!x.write || !y.write || x.lo.size() < 2 || x.lo.size() != y.lo.size()) return "";
    const size_t c = x.lo.size() - 1;
    if (x.lo[c] == y.lo[c]) return "";
    const Access &left = x.lo[c] < y.lo[c] ? x : y, &right = &left == &x ? y : x;
    if (left.hi[c] <= right.lo[c]) return "";
    return (": the tile stored at columns [" + Twine(left.lo[c]) + ", " + Twine(left.hi[c]) +
            ") reaches into the one at columns [" + Twine(right.lo[c]) + ", " + Twine(right.hi[c]) +
            ") (a store clips only at the end of the tensor it writes, so a tile's columns past its "
            "own block land in the next); start the column blocks a whole number of tiles apart, or "
            "store into a view with the blocks as a dimension ([R, W, C] for W blocks of C columns) "
            "so each tile clips at its own block").str();
  }

  // Where two stores start at different rows and the first, all data, reaches past the second's
  // start (a block of R rows stored with tiles taller than what is left of it: its last tile
  // carries the next block's rows, read from a tensor that does not end there).
  std::string rowReach(const Recorded &a, const Recorded &b) {
    const Access &x = *a.access, &y = *b.access;
    if (!x.write || !y.write || x.lo.empty() || x.lo.size() != y.lo.size() || x.lo[0] == y.lo[0]) return "";
    const bool xFirst = x.lo[0] < y.lo[0];
    const Recorded &upper = xFirst ? a : b, &lower = xFirst ? b : a;
    const Access &u = *upper.access, &l = *lower.access;
    if (u.hi[0] <= l.lo[0] || (u.validRows >= 0 && u.lo[0] + u.validRows <= l.lo[0])) return "";
    // The same tile of two ranks overlapping: blocks closer than a tile, not a block's last tile.
    if (u.tile >= 0 && u.tile == l.tile) return "";
    return (": rank " + Twine(upper.rank) + " stores a tile at rows [" + Twine(u.lo[0]) + ", " + Twine(u.hi[0]) +
            ") that reaches into rows [" + Twine(l.lo[0]) + ", " + Twine(l.hi[0]) + ") rank " + Twine(lower.rank) +
            " stores (a load clips only at the end of the tensor it reads, so the last tile of a block of rows "
            "carries the next block's rows, and a store writes every row of its tile); start each block of rows "
            "a whole number of tiles apart, or keep the blocks in a dimension of their own ([B, R, C] for B "
            "blocks of R rows) so that each tile clips at its own block").str();
  }

  // Where a tile read starts above another rank's stored rows and reaches into them (a ring
  // pass reading its block at b * rows + m, whose last tile runs into block b + 1).
  std::string readReach(const Recorded &a, const Recorded &b) {
    const Recorded &r = a.access->write ? b : a, &w = a.access->write ? a : b;
    const Access &x = *r.access, &y = *w.access;
    if (x.write || !y.write || a.rank == b.rank || x.lo.empty() || x.lo.size() != y.lo.size() ||
        !(x.lo[0] < y.lo[0] && y.lo[0] < x.hi[0]))
      return "";
    return (": rank " + Twine(r.rank) + " reads a tile at rows [" + Twine(x.lo[0]) + ", " + Twine(x.hi[0]) +
            ") that reaches into rows [" + Twine(y.lo[0]) + ", " + Twine(y.hi[0]) + ") rank " + Twine(w.rank) +
            " stores (a load clips only at the end of the tensor it reads, so the last tile of a block of rows "
            "reads the next block's rows, and stores them where it stores); start each block of rows a whole "
            "number of tiles apart, or keep the blocks in a dimension of their own ([B, R, C] for B blocks of "
            "R rows) so that each tile clips at its own block").str();
  }

  std::string overlapReason(const Recorded &a, const Recorded &b) {
    std::string rows = paddingOverlap(a, b);
    if (rows.empty()) rows = columnOverlap(a, b);
    if (rows.empty()) rows = rowReach(a, b);
    return rows.empty() ? readReach(a, b) : rows;
  }

  void reportRace(const Recorded &a, const Recorded &b, ArrayRef<Process> procs) {
    int owner = a.access->memRank;
    if (owner < 0 || owner >= world) {
      // No such copy: the access addresses a rank outside the world (`.on(p + 1)` at the last
      // p); at run time it would be skipped and reported.
      const Recorded &k = a.op ? a : b;
      report(k.op, Check::Race,
             "for world size " + Twine(world) + ", rank " + Twine(k.rank) + " addresses rank " +
                 Twine(owner) + "'s copy of " + tensorName(a.access->tensor) +
                 " here, outside ranks 0.." + Twine(world - 1) + " (`.on(p)` needs 0 <= p < world_size())");
      return;
    }
    if (!a.op || !b.op) {
      const Recorded &k = a.op ? a : b;
      const Recorded &h = a.op ? b : a;
      if (k.launch > h.launch) {
        // The access comes in a later launch than the owner's reuse: it lacks the wait
        // that would order it after what the owner wrote before this launch.
        report(k.op, Check::Race,
               "race for world size " + Twine(world) + ": rank " + Twine(k.rank) + " " +
                   verb(*k.access) + " rank " + Twine(owner) + "'s copy of " +
                   tensorName(a.access->tensor) + " here with no wait ordering it after rank " +
                   Twine(owner) + " made the buffer ready for this launch");
        return;
      }
      report(k.op, Check::Race,
             "reuse hazard for world size " + Twine(world) + ": rank " + Twine(k.rank) + " " +
                 verb(*k.access) + " rank " + Twine(owner) + "'s copy of " +
                 tensorName(a.access->tensor) + " here, but rank " + Twine(owner) +
                 " can finish the kernel (and the host or the next launch reuse the buffer) "
                 "before any wait tells it this access is done");
      return;
    }
    if (a.launch != b.launch) {
      const Recorded &later = a.launch > b.launch ? a : b;
      const Recorded &earlier = a.launch > b.launch ? b : a;
      report(later.op, Check::Race,
             "reuse hazard for world size " + Twine(world) + ": rank " + Twine(later.rank) +
                 "'s next launch " + verb(*later.access) + " rank " + Twine(owner) +
                 "'s copy of " + tensorName(a.access->tensor) + " here before rank " +
                 Twine(earlier.rank) + "'s access at " + where(earlier.op) +
                 " in the previous launch is known to be done");
      return;
    }
    // Report where the owner reads (the data it consumes unordered), else where it writes.
    auto score = [&](const Recorded &r) {
      return (r.rank == owner ? 2 : 0) + (r.access->write ? 0 : 1);
    };
    const Recorded &here = score(a) > score(b) ? a : b;
    const Recorded &other = &here == &a ? b : a;
    // Two blocks of one rank: "rank 0 ... while rank 0 ..." would not say who races.
    bool sameRank = here.rank == other.rank;
    // One modelled block running both tiles: name the tiles, which real grids may split.
    const bool byTile = here.proc == other.proc;
    auto who = [&](const Recorded &r) {
      if (byTile) return "tile " + std::to_string(r.access->tile) + " of rank " + std::to_string(r.rank);
      return (sameRank ? "block " + std::to_string(procs[r.proc].block) + " of rank "
                       : std::string("rank ")) + std::to_string(r.rank);
    };
    std::string hint;
    if (!byTile && sameRank && !specFlags && (here.access->tile < 0 || other.access->tile < 0))
      hint = "; a statement outside every tiles() loop runs in every block of the grid: put a "
             "once-only one in a one-tile loop (for (auto z : tiles(1, {1})) store(y, t, z, 0))";
    else if (byTile)
      hint = "; a loop's tiles run on the grid's blocks in no set order (two tiles share a "
             "block only at some grid sizes)";
    else if (sameRank && specFlags)
      hint = "; blocks of one rank are ordered only by a grid-wide barrier "
             "(prim::barrier(prim::flag(slot, Grid)) between the two phases)";
    report(here.op, Check::Race,
           "race for world size " + Twine(world) + ": " + who(here) + " " +
               verb(*here.access) + " rank " + Twine(owner) + "'s copy of " +
               tensorName(a.access->tensor) + " here while " + who(other) + " " +
               verb(*other.access) + " it at " + where(other.op) +
               ", with no wait ordering the two" + overlapReason(here, other) + hint);
  }
};

struct VerifyProtocol : mlir::pk::impl::PkVerifyProtocolPassBase<VerifyProtocol> {
  using PkVerifyProtocolPassBase::PkVerifyProtocolPassBase;

  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](KernelOp kernel) {
      // Spec-level kernels still hold intent; their protocol exists only after lowering.
      auto level = kernel->getAttrOfType<StringAttr>("pk.level");
      if (level && level.getValue() != "device") return;
      bool communicates = false;
      kernel.walk([&](Operation *op) {
        communicates |= op->getDialect() == kernel->getDialect() &&
                        (op->getName().getStringRef().starts_with("pk.sync.") ||
                         op->getName().getStringRef().starts_with("pk.comm.") ||
                         op->getName().getStringRef().starts_with("pk.coll.") || isa<WorkerOp>(op));
      });
      // A kernel that does not communicate still runs on many blocks: tiles of different blocks
      // must not write what another block touches (checked where the model can follow it).
      ok &= KernelChecker(kernel, maxWorldSize, /*localOnly=*/!communicates).run();
    });
    if (!ok) signalPassFailure();
  }
};

} // namespace

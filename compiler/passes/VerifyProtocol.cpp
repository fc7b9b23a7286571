// Proves that a device-level kernel's signals and waits cannot hang, be overtaken or race,
// by running the protocol model for every world size and checking the cross-rank events.
#include "ProtocolModel.h"
#include "pk/Passes/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"
#include <deque>
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

using Clock = std::vector<uint32_t>;

void join(Clock &into, const Clock &from) {
  for (size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], from[i]);
}

int64_t flagKey(int rank, int64_t slot, int64_t blockKey) {
  return (int64_t(rank) * 1024 + slot) * 65536 + (blockKey + 1);
}

std::string where(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->getLoc().print(os);
  return s;
}

// One access as it happened in the simulation, with the vector clock of its process.
struct Recorded {
  const Access *access;
  Operation *op;  // null for the host's use of the buffer between launches
  int proc;
  int rank;
  int launch;
  Clock clock;
};

bool overlaps(const Access &a, const Access &b) {
  if (a.lo.empty() || b.lo.empty()) return true;  // a whole-tensor access
  for (size_t d = 0; d < std::min(a.lo.size(), b.lo.size()); ++d)
    if (a.hi[d] <= b.lo[d] || b.hi[d] <= a.lo[d]) return false;
  return true;
}

const char *verb(const Access &a) { return a.write ? (a.add ? "adds into" : "writes") : "reads"; }

class KernelChecker {
public:
  KernelChecker(KernelOp kernel, int maxWorld) : kernel(kernel), maxWorld(maxWorld) {}

  bool run() {
    checkEqualCompares();
    int64_t tail = 3 * largestStep(kernel) + 1;  // four tiles, the last one partial
    bool hasOpenBlocks = false;
    kernel.walk([&](WorkerOp w) { hasOpenBlocks |= w.getBlocks() == 0; });
    SmallVector<int64_t> dims = {tail, 1};
    SmallVector<int64_t> blocks = hasOpenBlocks ? SmallVector<int64_t>{1, 3}
                                                : SmallVector<int64_t>{1};
    for (int w = 1; w <= maxWorld; ++w)
      for (int64_t n : dims)
        for (int64_t b : blocks) {
          Config config{w, n, b};
          SmallVector<Process, 0> procs;
          Operation *at = nullptr;
          std::string why;
          if (!buildProcesses(kernel, config, procs, at, why)) {
            at->emitWarning("protocol not verified: ") << why;
            return !failed;
          }
          world = w;
          checkInOrder(procs);
          if (checkCounts(procs)) simulate(procs);
        }
    return !failed;
  }

private:
  KernelOp kernel;
  int maxWorld;
  int world = 1;
  bool failed = false;
  llvm::DenseSet<std::pair<Operation *, int>> reported;
  std::deque<Access> hostAccesses;

  void report(Operation *op, Check check, const Twine &message) {
    failed = true;
    if (reported.insert({op, int(check)}).second) op->emitError(message);
  }

  // Flags are never reset: a wait compared with == misses its value once a later launch
  // (or a later iteration) has added to the flag.
  void checkEqualCompares() {
    kernel.walk([&](WaitOp wait) {
      if (wait.getCompare() != Compare::eq) return;
      auto flag = wait.getFlag().getDefiningOp<FlagOp>();
      std::string slot = flag ? std::to_string(flag.getSlot()) : "?";
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
                   "release signal on flag slot " + Twine(e.slot) + " for world size " +
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
  bool checkCounts(ArrayRef<Process> procs) {
    bool ok = true;
    llvm::DenseMap<int64_t, int64_t> arrivals;
    for (const Process &p : procs)
      for (const Event &e : p.events) {
        if (e.kind != EventKind::Signal) continue;
        if (e.peer < 0 || e.peer >= world) {
          report(e.op, Check::Range,
                 "signal on flag slot " + Twine(e.slot) + " targets rank " + Twine(e.peer) +
                     ", outside [0, " + Twine(world) + ") for world size " + Twine(world) +
                     " (sent by rank " + Twine(p.rank) + ")");
          ok = false;
          continue;
        }
        ++arrivals[flagKey(e.peer, e.slot, e.blockKey)];
      }
    if (!ok) return false;  // lost signals would only repeat as count errors
    for (const Process &p : procs)
      for (const Event &e : p.events) {
        if (e.kind != EventKind::Wait) continue;
        int64_t seen = arrivals.lookup(flagKey(p.rank, e.slot, e.blockKey));
        if (seen < e.count) {
          report(e.op, Check::TooFew,
                 "wait on flag slot " + Twine(e.slot) + " can never complete for world size " +
                     Twine(world) + ": rank " + Twine(p.rank) + " expects " + Twine(e.count) +
                     " signals per launch but at most " + Twine(seen) + " arrive");
          ok = false;
        } else if (seen > e.count) {
          report(e.op, Check::TooMany,
                 "wait on flag slot " + Twine(e.slot) + " can be overtaken for world size " +
                     Twine(world) + ": rank " + Twine(p.rank) + " expects " + Twine(e.count) +
                     " signals per launch but " + Twine(seen) +
                     " arrive, so a later wait on it can pass before its own signals");
          ok = false;
        }
      }
    return ok;
  }

  // Runs every block of every rank for two launches; a wait passes once the flag holds
  // launch * count. Vector clocks give the happens-before order for the race check.
  void simulate(ArrayRef<Process> procs) {
    struct State {
      size_t pc = 0;
      int launch = 0;
      Clock clock;
    };
    int numProcs = int(procs.size());
    int dims = numProcs + world;  // one clock entry per block, one per rank's host
    std::vector<State> states(numProcs);
    for (State &s : states) s.clock.assign(dims, 0);
    std::vector<SmallVector<int, 8>> procsOfRank(world);
    for (int i = 0; i < numProcs; ++i) procsOfRank[procs[i].rank].push_back(i);
    llvm::DenseMap<int64_t, std::vector<Clock>> flags;  // signals in arrival order
    std::vector<Recorded> accesses;

    // When every block of a rank has finished a launch, the host may reuse the rank's
    // buffers before the next launch starts on the same stream.
    auto finishLaunch = [&](int rank) {
      int launch = states[procsOfRank[rank].front()].launch;
      Clock host(dims, 0);
      for (int i : procsOfRank[rank]) {
        if (states[i].launch != launch || states[i].pc != procs[i].events.size()) return false;
        join(host, states[i].clock);
      }
      host[numProcs + rank] = launch + 1;
      for (BlockArgument arg : kernel.getBody().getArguments()) {
        if (!isa<SymTensorType>(arg.getType())) continue;
        Access a;
        a.tensor = arg.getArgNumber();
        a.memRank = rank;
        a.write = true;
        hostAccesses.push_back(a);
        accesses.push_back({&hostAccesses.back(), nullptr, numProcs + rank, rank, launch, host});
      }
      for (int i : procsOfRank[rank]) {
        join(states[i].clock, host);
        states[i].launch++;
        states[i].pc = 0;
      }
      return true;
    };

    bool progress = true;
    while (progress) {
      progress = false;
      for (int i = 0; i < numProcs; ++i) {
        State &s = states[i];
        const Process &p = procs[i];
        while (s.launch < kLaunches) {
          if (s.pc == p.events.size()) {
            if (!finishLaunch(p.rank)) break;
            progress = true;
            continue;
          }
          const Event &e = p.events[s.pc];
          if (e.kind == EventKind::Wait) {
            // The wait is owed only the signals that reach launch * count; joining later
            // ones (a peer's next launch) would hide reuse hazards.
            auto it = flags.find(flagKey(p.rank, e.slot, e.blockKey));
            int64_t need = int64_t(s.launch + 1) * e.count;
            if (it == flags.end() ? need > 0 : int64_t(it->second.size()) < need) break;
            for (int64_t k = 0; k < need; ++k) join(s.clock, it->second[k]);
          }
          s.clock[i]++;
          if (e.kind == EventKind::Signal) {
            flags[flagKey(e.peer, e.slot, e.blockKey)].push_back(s.clock);
          } else if (e.kind == EventKind::Access) {
            accesses.push_back({&e.access, e.op, i, p.rank, s.launch, s.clock});
          }
          s.pc++;
          progress = true;
        }
      }
    }
    if (reportDeadlock(procs, states, flags)) return;
    checkRaces(accesses);
  }

  template <typename States, typename Flags>
  bool reportDeadlock(ArrayRef<Process> procs, const States &states, const Flags &flags) {
    std::string cycle;
    Operation *first = nullptr;
    int listed = 0, launch = 0;
    for (size_t i = 0; i < procs.size(); ++i) {
      const auto &s = states[i];
      if (s.launch >= kLaunches || s.pc == procs[i].events.size()) continue;
      const Event &e = procs[i].events[s.pc];
      auto it = flags.find(flagKey(procs[i].rank, e.slot, e.blockKey));
      int64_t value = it == flags.end() ? 0 : int64_t(it->second.size());
      if (!first) { first = e.op; launch = s.launch; }
      if (listed++ < 4)
        cycle += (cycle.empty() ? "" : ", ") + ("rank " + Twine(procs[i].rank) +
                 " waits on flag slot " + Twine(e.slot) + " (" + Twine(value) + " of " +
                 Twine(int64_t(s.launch + 1) * e.count) + ")").str();
    }
    if (!first) return false;
    if (listed > 4) cycle += ", ...";
    report(first, Check::Deadlock,
           "deadlock for world size " + Twine(world) + " in launch " + Twine(launch + 1) +
               ": " + cycle + "; every rank waits for a signal another waiting rank sends "
               "later");
    return true;
  }

  // Two accesses of one rank's copy of a buffer conflict when they overlap, at least one
  // writes (adds commute with adds), and neither happens before the other.
  void checkRaces(const std::vector<Recorded> &accesses) {
    llvm::DenseMap<std::pair<int, unsigned>, SmallVector<unsigned, 16>> groups;
    for (unsigned i = 0; i < accesses.size(); ++i)
      groups[{accesses[i].access->memRank, accesses[i].access->tensor}].push_back(i);
    for (auto &group : groups) {
      ArrayRef<unsigned> members = group.second;
      for (size_t x = 0; x < members.size(); ++x) {
        const Recorded &a = accesses[members[x]];
        for (size_t y = x + 1; y < members.size(); ++y) {
          const Recorded &b = accesses[members[y]];
          if (!a.access->write && !b.access->write) continue;
          if (a.access->add && b.access->add) continue;
          if (a.proc == b.proc || !overlaps(*a.access, *b.access)) continue;
          if (b.clock[a.proc] >= a.clock[a.proc] || a.clock[b.proc] >= b.clock[b.proc])
            continue;
          reportRace(a, b);
        }
      }
    }
  }

  void reportRace(const Recorded &a, const Recorded &b) {
    int owner = a.access->memRank;
    if (!a.op || !b.op) {
      const Recorded &k = a.op ? a : b;
      const Recorded &h = a.op ? b : a;
      if (k.launch > h.launch) {
        // The access comes in a later launch than the owner's reuse: it lacks the wait
        // that would order it after what the owner wrote before this launch.
        report(k.op, Check::Race,
               "race for world size " + Twine(world) + ": rank " + Twine(k.rank) + " " +
                   verb(*k.access) + " rank " + Twine(owner) + "'s copy of argument " +
                   Twine(a.access->tensor) + " here with no wait ordering it after rank " +
                   Twine(owner) + " made the buffer ready for this launch");
        return;
      }
      report(k.op, Check::Race,
             "reuse hazard for world size " + Twine(world) + ": rank " + Twine(k.rank) + " " +
                 verb(*k.access) + " rank " + Twine(owner) + "'s copy of argument " +
                 Twine(a.access->tensor) + " here, but rank " + Twine(owner) +
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
                 "'s copy of argument " + Twine(a.access->tensor) + " here before rank " +
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
    report(here.op, Check::Race,
           "race for world size " + Twine(world) + ": rank " + Twine(here.rank) + " " +
               verb(*here.access) + " rank " + Twine(owner) + "'s copy of argument " +
               Twine(a.access->tensor) + " here while rank " + Twine(other.rank) + " " +
               verb(*other.access) + " it at " + where(other.op) +
               ", with no wait ordering the two");
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
      ok &= KernelChecker(kernel, maxWorldSize).run();
    });
    if (!ok) signalPassFailure();
  }
};

} // namespace

// Happens-before for the protocol simulation: vector clocks kept per group of blocks that
// share flags, with each rank's host between launches carrying order across groups.
#pragma once

#include "ProtocolModel.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <cstdint>
#include <vector>

namespace mlir::pk::protocol {

using Clock = std::vector<uint32_t>;

// One event of the simulation. `proc` numbers the blocks 0..procs-1 and the ranks' hosts
// procs + rank. A block's clock holds a counter per block of its group (in group order),
// then per rank the number of that rank's launches whose end the block has seen. Events
// between two joins of a block share one copy of its clock: only its own counter moves.
struct Stamp {
  int proc;
  int rank;
  int launch;
  uint32_t self = 0;                // a block's own counter at the event
  const uint32_t *clock = nullptr;  // a block's clock as of its last join (null for a host)
};

// Blocks order each other only through signals and waits on a shared flag, or through a
// host, which runs after every block of its rank ends a launch and before any starts the
// next. So a clock needs entries only for the blocks of its own flag-connected group (the
// blocks of a kernel with many collectives fall into many small groups), and what one
// group learns of another passes through a host: each host event keeps, per group, the
// latest counters it knows, including those known to every earlier host it has seen end.
// This gives exactly the order of one clock entry per block (within a group the entries are
// the same; across groups every path runs through a host), at a cost that grows with the
// number of blocks instead of its square.
class Order {
public:
  Order(llvm::ArrayRef<Process> procs, int numFlags, int world);

  Clock start(int proc) const { return Clock(groupSize[group[proc]] + world, 0); }
  // Counts an event of the block; returns the block's own counter.
  uint32_t tick(int proc, Clock &clock) const { return ++clock[local[proc]]; }
  // A wait of block `proc` consumes `signal` (sent by a block of the same group).
  void receive(int proc, Clock &clock, const Stamp &signal) const;

  // The host of `rank` runs after the listed blocks (all of the rank's) end their current
  // launch; their clocks then start the next launch after it.
  void endLaunch(int rank, llvm::ArrayRef<int> blocks,
                 llvm::function_ref<Clock &(int proc)> clockOf);

  bool happensBefore(const Stamp &a, const Stamp &b) const;

private:
  struct Host {
    Clock hosts;                // launches of each rank whose end this host has seen
    std::vector<Clock> groups;  // per group, the block counters it knows
  };
  int world, numProcs;
  std::vector<int> group, local;  // per block: its group and its entry in the group's clocks
  std::vector<unsigned> groupSize;
  std::vector<std::vector<Host>> hostsOf;  // per rank, per launch

  uint32_t hostsSeen(const Stamp &s, int rank) const;
};

} // namespace mlir::pk::protocol

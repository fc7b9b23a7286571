// Happens-before for the protocol simulation (see ProtocolOrder.h).
#include "ProtocolOrder.h"
#include <algorithm>
#include <numeric>

using namespace mlir::pk::protocol;

static void join(uint32_t *into, const uint32_t *from, size_t n) {
  for (size_t i = 0; i < n; ++i) into[i] = std::max(into[i], from[i]);
}

Order::Order(llvm::ArrayRef<Process> procs, int numFlags, int world)
    : world(world), numProcs(int(procs.size())), hostsOf(world) {
  // Union the blocks that signal or wait on the same flag.
  std::vector<int> parent(numProcs);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<int> firstUser(numFlags, -1);
  for (int i = 0; i < numProcs; ++i)
    for (const Event &e : procs[i].events) {
      if (e.flag < 0) continue;
      if (firstUser[e.flag] < 0) firstUser[e.flag] = i;
      else parent[find(i)] = find(firstUser[e.flag]);
    }
  group.assign(numProcs, -1);
  local.assign(numProcs, 0);
  std::vector<int> groupOfRoot(numProcs, -1);
  for (int i = 0; i < numProcs; ++i) {
    int &g = groupOfRoot[find(i)];
    if (g < 0) {
      g = int(groupSize.size());
      groupSize.push_back(0);
    }
    group[i] = g;
    local[i] = int(groupSize[g]++);
  }
}

void Order::endLaunch(int rank, llvm::ArrayRef<int> blocks,
                      llvm::function_ref<Clock &(int proc)> clockOf) {
  Host h;
  h.hosts.assign(world, 0);
  h.groups.resize(groupSize.size());
  for (size_t g = 0; g < groupSize.size(); ++g) h.groups[g].assign(groupSize[g], 0);
  for (int i : blocks) {
    const Clock &c = clockOf(i);
    unsigned n = groupSize[group[i]];
    join(h.groups[group[i]].data(), c.data(), n);
    join(h.hosts.data(), c.data() + n, world);
  }
  // A block that has seen an earlier host end (of any rank, through its own group's flags)
  // passes on what that host knew of every group.
  for (int k = 0; k < world; ++k) {
    if (h.hosts[k] == 0) continue;
    const Host &seen = hostsOf[k][h.hosts[k] - 1];
    for (size_t g = 0; g < groupSize.size(); ++g)
      join(h.groups[g].data(), seen.groups[g].data(), groupSize[g]);
  }
  h.hosts[rank] = uint32_t(hostsOf[rank].size() + 1);
  for (int i : blocks) {
    Clock &c = clockOf(i);
    unsigned n = groupSize[group[i]];
    join(c.data(), h.groups[group[i]].data(), n);
    join(c.data() + n, h.hosts.data(), world);
  }
  hostsOf[rank].push_back(std::move(h));
}

void Order::receive(int proc, Clock &clock, const Stamp &signal) const {
  join(clock.data(), signal.clock, groupSize[group[proc]] + world);
  uint32_t &sender = clock[local[signal.proc]];
  sender = std::max(sender, signal.self);
}

uint32_t Order::hostsSeen(const Stamp &s, int rank) const {
  if (s.proc >= numProcs) return hostsOf[s.rank][s.launch].hosts[rank];
  return s.clock[groupSize[group[s.proc]] + rank];
}

bool Order::happensBefore(const Stamp &a, const Stamp &b) const {
  if (a.proc >= numProcs) return hostsSeen(b, a.rank) > uint32_t(a.launch);
  int g = group[a.proc], j = local[a.proc];
  if (b.proc >= numProcs) return hostsOf[b.rank][b.launch].groups[g][j] >= a.self;
  if (b.proc == a.proc) return b.self >= a.self;
  if (group[b.proc] == g && b.clock[j] >= a.self) return true;
  // Otherwise only a host that `a` happens before and `b` has seen end can order them.
  for (int k = 0; k < world; ++k)
    if (uint32_t seen = hostsSeen(b, k))
      if (hostsOf[k][seen - 1].groups[g][j] >= a.self) return true;
  return false;
}

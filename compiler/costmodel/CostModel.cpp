// Rule 1's cost model: mechanism choice from the machine profile's bandwidth curves.
#include "pk/CostModel/CostModel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>

namespace pk {

const MachineProfile &builtinProfile() { return builtin_profile(); }

std::optional<MachineProfile> loadProfileOrBuiltin(const std::string &path, std::string &error) {
  if (path.empty()) return builtinProfile();
  auto loaded = MachineProfile::load(path);
  if (!loaded.is_ok()) {
    error = loaded.status().message();
    return std::nullopt;
  }
  return loaded.value();
}

double effectiveBandwidth(const MachineProfile &profile, Mechanism m, long long bytes) {
  // Best over the profiled SM counts. Below a curve's smallest measured size the transfer
  // is latency-bound: time stays at that size's time, so bandwidth falls with the size.
  double best = 0;
  std::set<int> counts;
  for (const BandwidthPoint &p : profile.points)
    if (p.mechanism == m) counts.insert(p.sms);
  for (int sms : counts) {
    long long smallest = -1;
    for (const BandwidthPoint &p : profile.points)
      if (p.mechanism == m && p.sms == sms && (smallest < 0 || p.bytes < smallest))
        smallest = p.bytes;
    double g = profile.bandwidth(m, std::max(bytes, smallest), sms);
    if (bytes < smallest) g *= double(bytes) / double(smallest);
    best = std::max(best, g);
  }
  return best;
}

int smsFor90Percent(const MachineProfile &profile, Mechanism m, long long bytes) {
  std::set<int> counts;
  for (const BandwidthPoint &p : profile.points)
    if (p.mechanism == m) counts.insert(p.sms);
  if (counts.empty()) return 0;
  double best = 0;
  for (int sms : counts) best = std::max(best, profile.bandwidth(m, bytes, sms));
  for (int sms : counts)
    if (profile.bandwidth(m, bytes, sms) >= 0.9 * best) return sms;
  return *counts.rbegin();
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  std::ostringstream out;
  out << v << " " << units[u];
  return out.str();
}

TransportChoice chooseTransport(const MachineProfile &profile, const TransferQuery &q) {
  if (q.reducesOnRead) {
    if (q.multicastAllowed)
      return {"multimem", "reduces on read and multicast is allowed: multimem.ld_reduce "
                          "reduces in the switch"};
    return {"ldst", "reduces on read: only register loads can reduce (TMA and the copy "
                    "engine cannot), and multicast is not allowed"};
  }
  if (!q.bytes)
    return {"ldst", "size known only at run time: ld/st is efficient from 128 B and needs "
                    "no 16-byte size or alignment guarantees"};
  long long bytes = static_cast<long long>(*q.bytes);
  std::vector<Mechanism> candidates = {Mechanism::ldst, Mechanism::tma};
  if (!q.deviceInitiated) candidates.push_back(Mechanism::copy_engine);
  Mechanism best = Mechanism::ldst;
  double bestGbps = -1;
  for (Mechanism m : candidates) {
    double g = effectiveBandwidth(profile, m, bytes);
    if (g > bestGbps) bestGbps = g, best = m;
  }
  std::string size = formatBytes(*q.bytes);
  if (best == Mechanism::tma && bytes % 16 != 0)
    return {"ldst", size + ": TMA would be faster but moves multiples of 16 bytes only"};
  std::ostringstream why;
  why << size << ": " << mechanism_name(best) << " has the highest profiled bandwidth ("
      << std::lround(bestGbps) << " GB/s; " << smsFor90Percent(profile, best, bytes)
      << " SMs reach 90% of it)";
  return {mechanism_name(best), why.str()};
}

} // namespace pk

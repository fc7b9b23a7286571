// Machine profile: parsing, built-in defaults and bandwidth interpolation.
#include "pk/CostModel/MachineProfile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace pk {

MachineProfile MachineProfile::builtinH200() {
  MachineProfile p;
  p.name_ = "h200 (built in, from shared/HARDWARE.md)";
  const uint64_t KiB = 1024, MiB = KiB * KiB, GiB = MiB * KiB;
  p.samples_["copy_engine"] = {{1 * KiB, 0, 0.4},    {64 * KiB, 0, 22},   {256 * KiB, 0, 93},
                               {1 * MiB, 0, 225},    {4 * MiB, 0, 310},   {16 * MiB, 0, 367},
                               {64 * MiB, 0, 389},   {256 * MiB, 0, 395}, {1 * GiB, 0, 397}};
  // All SMs by size; by SM count at 256 MiB. Small sizes are latency-bound: a ~2 us
  // floor per transfer gives 128 B -> 0.06 GB/s and 64 KiB -> 30 GB/s.
  p.samples_["ldst"] = {{128, 132, 0.06},       {64 * KiB, 132, 30},  {1 * MiB, 132, 193},
                        {4 * MiB, 132, 300},    {16 * MiB, 132, 351}, {256 * MiB, 1, 39},
                        {256 * MiB, 2, 76},     {256 * MiB, 4, 151},  {256 * MiB, 8, 301},
                        {256 * MiB, 16, 327},   {256 * MiB, 32, 353}, {256 * MiB, 66, 361},
                        {256 * MiB, 132, 369}};
  // ParallelKittens: TMA reaches about 74% of link peak from about 2 KB per message with
  // about 15 SMs; not yet measured here (tools/calibrate replaces these).
  p.samples_["tma"] = {{2 * KiB, 15, 0.9},      {64 * KiB, 15, 28},  {1 * MiB, 15, 200},
                       {16 * MiB, 15, 340},     {256 * MiB, 15, 354}, {256 * MiB, 132, 360}};
  return p;
}

std::optional<MachineProfile> MachineProfile::load(const std::string &path, std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot open machine profile";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path, error);
}

std::optional<MachineProfile> MachineProfile::parse(const std::string &text,
                                                    const std::string &name, std::string &error) {
  MachineProfile p;
  p.name_ = name;
  std::istringstream lines(text);
  std::string line;
  for (int lineNo = 1; std::getline(lines, line); ++lineNo) {
    auto where = [&] { return name + ":" + std::to_string(lineNo) + ": "; };
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string kind;
    if (!(words >> kind)) continue;
    if (kind == "name") {
      std::getline(words >> std::ws, p.name_);
    } else if (kind == "bandwidth") {
      std::string mech;
      BandwidthSample s{};
      if (!(words >> mech >> s.bytes >> s.sms >> s.gbps) || s.bytes == 0 || s.gbps < 0 ||
          s.sms < 0) {
        error = where() + "expected 'bandwidth <mechanism> <bytes> <sms> <GB/s>'";
        return std::nullopt;
      }
      p.samples_[mech].push_back(s);
    } else if (kind == "handoff") {
      std::string which;
      double ns = 0;
      if (!(words >> which >> ns) || ns <= 0 || (which != "intra_sm" && which != "inter_sm")) {
        error = where() + "expected 'handoff intra_sm|inter_sm <ns>'";
        return std::nullopt;
      }
      (which == "intra_sm" ? p.intraSmNs_ : p.interSmNs_) = ns;
    } else {
      error = where() + "unknown entry '" + kind + "' (expected name, bandwidth or handoff)";
      return std::nullopt;
    }
  }
  if (p.samples_.empty()) {
    error = name + ": machine profile has no bandwidth samples";
    return std::nullopt;
  }
  return p;
}

double MachineProfile::bandwidthGBps(const std::string &mechanism, uint64_t bytes,
                                     int maxSms) const {
  auto it = samples_.find(mechanism);
  if (it == samples_.end() || bytes == 0) return 0;
  // Best sample per size among those using at most maxSms SMs.
  std::map<uint64_t, double> curve;
  for (const BandwidthSample &s : it->second)
    if (s.sms <= maxSms) curve[s.bytes] = std::max(curve[s.bytes], s.gbps);
  if (curve.empty()) return 0;
  if (bytes <= curve.begin()->first)  // below the smallest sample: latency-bound, scale down
    return curve.begin()->second * double(bytes) / double(curve.begin()->first);
  if (bytes >= curve.rbegin()->first) return curve.rbegin()->second;
  auto hi = curve.lower_bound(bytes);
  auto lo = std::prev(hi);
  double t = (std::log2(double(bytes)) - std::log2(double(lo->first))) /
             (std::log2(double(hi->first)) - std::log2(double(lo->first)));
  return lo->second + t * (hi->second - lo->second);
}

int MachineProfile::smsFor90Percent(const std::string &mechanism, uint64_t bytes) const {
  auto it = samples_.find(mechanism);
  if (it == samples_.end()) return 0;
  double best = bandwidthGBps(mechanism, bytes);
  std::vector<int> counts;
  for (const BandwidthSample &s : it->second) counts.push_back(s.sms);
  std::sort(counts.begin(), counts.end());
  for (int sms : counts)
    if (bandwidthGBps(mechanism, bytes, sms) >= 0.9 * best) return sms;
  return counts.empty() ? 0 : counts.back();
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  std::ostringstream out;
  out << (v == std::floor(v) ? std::to_string(uint64_t(v)) : std::to_string(v).substr(0, 4))
      << " " << units[u];
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
  uint64_t bytes = *q.bytes;
  std::string size = formatBytes(bytes);
  std::vector<std::string> candidates = {"ldst", "tma"};
  if (!q.deviceInitiated) candidates.push_back("copy_engine");
  std::string best;
  double bestGbps = -1;
  for (const std::string &m : candidates) {
    double g = profile.bandwidthGBps(m, bytes);
    if (g > bestGbps) bestGbps = g, best = m;
  }
  if (best == "tma" && bytes % 16 != 0)
    return {"ldst", size + ": TMA would be faster but needs a multiple of 16 bytes"};
  std::ostringstream why;
  why << size << ": " << best << " has the highest profiled bandwidth ("
      << std::lround(bestGbps) << " GB/s with " << profile.smsFor90Percent(best, bytes)
      << " SMs for 90% of it)";
  return {best, why.str()};
}

} // namespace pk

// Machine profile text format: parse, serialize, and bandwidth lookup.
#include <pk/runtime/profile.h>

#include <pk/EmbeddedFiles.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace pk_builtin_profiles {
pk::EmbeddedFileList embeddedFiles();  // generated from runtime/profiles (CMakeLists.txt)
}

namespace pk {

const char* mechanism_name(Mechanism m) {
  switch (m) {
    case Mechanism::copy_engine: return "copy_engine";
    case Mechanism::tma: return "tma";
    case Mechanism::ldst: return "ldst";
  }
  return "?";
}

Result<MachineProfile> MachineProfile::parse(const std::string& text) {
  MachineProfile p;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  bool version_seen = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    std::istringstream ls(line);
    std::string word;
    if (!(ls >> word)) continue;
    auto bad = [&](const std::string& why) {
      return Status::error("profile line " + std::to_string(lineno) + ": " + why);
    };
    if (word == "version") {
      int v = 0;
      if (!(ls >> v) || v != 1) return bad("unsupported version (expected 1)");
      version_seen = true;
    } else if (word == "device") {
      std::getline(ls >> std::ws, p.device);
    } else if (word == "handoff") {
      std::string which;
      double ns = 0;
      if (!(ls >> which >> ns) || ns < 0) return bad("expected 'handoff <kind> <ns>'");
      if (which == "intra_sm_ns") p.intra_sm_ns = ns;
      else if (which == "inter_sm_ns") p.inter_sm_ns = ns;
      else return bad("unknown hand-off '" + which + "'");
    } else if (word == "peak") {
      std::string which;
      double v = 0;
      if (!(ls >> which >> v) || v <= 0) return bad("expected 'peak <what> <positive value>'");
      if (which == "tensor_bf16_tflops") p.tensor_bf16_tflops = v;
      else if (which == "tensor_f16_tflops") p.tensor_f16_tflops = v;
      else if (which == "tensor_fp8_tflops") p.tensor_fp8_tflops = v;
      else if (which == "hbm_gbs") p.hbm_gbs = v;
      else if (which == "link_gbs") p.link_gbs = v;
      else return bad("unknown peak '" + which + "'");
    } else if (word == "fixed") {
      std::string which;
      double v = 0;
      if (!(ls >> which >> v) || v <= 0) return bad("expected 'fixed <what> <positive us>'");
      if (which == "launch_us") p.launch_us = v;
      else if (which == "link_hop_us") p.link_hop_us = v;
      else return bad("unknown fixed cost '" + which + "'");
    } else if (word == "copy_engine" || word == "tma" || word == "ldst") {
      BandwidthPoint b;
      b.mechanism = word == "copy_engine" ? Mechanism::copy_engine
                    : word == "tma"       ? Mechanism::tma
                                          : Mechanism::ldst;
      std::string extra;
      if (!(ls >> b.bytes >> b.sms >> b.gbps) || b.bytes <= 0 || b.sms < 0 || b.gbps < 0)
        return bad("expected '<mechanism> <size_bytes> <sms> <GB/s>'");
      if (ls >> extra) return bad("trailing text '" + extra + "'");
      p.points.push_back(b);
    } else {
      return bad("unknown record '" + word + "'");
    }
  }
  if (!version_seen) return Status::error("profile has no 'version 1' line");
  return p;
}

Result<MachineProfile> MachineProfile::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::error("cannot read profile " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto p = parse(ss.str());
  if (!p.is_ok()) return p.status().with_context(path);
  return p;
}

std::string MachineProfile::serialize() const {
  std::ostringstream o;
  o << "version 1\n";
  if (!device.empty()) o << "device " << device << "\n";
  o << "handoff intra_sm_ns " << intra_sm_ns << "\n";
  o << "handoff inter_sm_ns " << inter_sm_ns << "\n";
  const std::pair<const char*, double> peaks[] = {{"tensor_bf16_tflops", tensor_bf16_tflops},
                                                  {"tensor_f16_tflops", tensor_f16_tflops},
                                                  {"tensor_fp8_tflops", tensor_fp8_tflops},
                                                  {"hbm_gbs", hbm_gbs},
                                                  {"link_gbs", link_gbs}};
  for (const auto& [name, v] : peaks)
    if (v > 0) o << "peak " << name << " " << v << "\n";
  if (launch_us > 0) o << "fixed launch_us " << launch_us << "\n";
  if (link_hop_us > 0) o << "fixed link_hop_us " << link_hop_us << "\n";
  for (const auto& b : points)
    o << mechanism_name(b.mechanism) << " " << b.bytes << " " << b.sms << " " << b.gbps << "\n";
  return o.str();
}

double MachineProfile::bandwidth(Mechanism m, long long bytes, int sms) const {
  std::vector<const BandwidthPoint*> pts;
  for (const auto& b : points)
    if (b.mechanism == m) pts.push_back(&b);
  if (pts.empty()) return 0;
  // The SM-count curve: the largest measured count <= sms, else the smallest.
  int best = -1, smallest = pts.front()->sms;
  for (auto* b : pts) {
    smallest = std::min(smallest, b->sms);
    if (b->sms <= sms) best = std::max(best, b->sms);
  }
  if (best < 0) best = smallest;
  std::vector<const BandwidthPoint*> curve;
  for (auto* b : pts)
    if (b->sms == best) curve.push_back(b);
  std::sort(curve.begin(), curve.end(), [](auto* a, auto* b) { return a->bytes < b->bytes; });
  if (bytes <= curve.front()->bytes) return curve.front()->gbps;
  if (bytes >= curve.back()->bytes) return curve.back()->gbps;
  for (std::size_t i = 1; i < curve.size(); ++i) {
    if (bytes <= curve[i]->bytes) {
      const double x0 = std::log2(static_cast<double>(curve[i - 1]->bytes));
      const double x1 = std::log2(static_cast<double>(curve[i]->bytes));
      const double t = x1 > x0 ? (std::log2(static_cast<double>(bytes)) - x0) / (x1 - x0) : 1.0;
      return curve[i - 1]->gbps + t * (curve[i]->gbps - curve[i - 1]->gbps);
    }
  }
  return curve.back()->gbps;
}

const MachineProfile& builtin_profile() {
  static const MachineProfile profile = [] {
    EmbeddedFileList files = pk_builtin_profiles::embeddedFiles();
    for (std::size_t i = 0; i < files.count; ++i)
      if (std::strcmp(files.files[i].name, "h200.profile") == 0) {
        auto parsed = MachineProfile::parse(std::string(files.files[i].text, files.files[i].size));
        if (parsed.is_ok()) return parsed.value();
      }
    return MachineProfile{};  // unreachable when the build embedded a valid file (tested)
  }();
  return profile;
}

}  // namespace pk

// The machine profile: measured transfer bandwidth per mechanism by message size and SM
// count, and the two hand-off latencies. Plain C++ (no MLIR) so tools and tests share it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pk {

struct BandwidthSample {
  uint64_t bytes;
  int sms;        // SMs driving the transfer; 0 for the copy engine
  double gbps;
};

class MachineProfile {
public:
  /// Defaults for two H200s linked by NVLink (../shared/HARDWARE.md).
  static MachineProfile builtinH200();
  /// Parses a profile file; on failure returns nullopt and sets `error` ("path:line: ...").
  static std::optional<MachineProfile> load(const std::string &path, std::string &error);
  static std::optional<MachineProfile> parse(const std::string &text, const std::string &name,
                                             std::string &error);

  const std::string &name() const { return name_; }
  bool has(const std::string &mechanism) const { return samples_.count(mechanism) != 0; }
  /// Best bandwidth of `mechanism` for a message of `bytes` with at most `maxSms` SMs,
  /// interpolated in log(bytes); 0 when the mechanism is unknown.
  double bandwidthGBps(const std::string &mechanism, uint64_t bytes, int maxSms = 1 << 20) const;
  /// Fewest SMs reaching 90% of the best bandwidth for this size.
  int smsFor90Percent(const std::string &mechanism, uint64_t bytes) const;
  double intraSmHandoffNs() const { return intraSmNs_; }
  double interSmHandoffNs() const { return interSmNs_; }

private:
  std::string name_;
  std::map<std::string, std::vector<BandwidthSample>> samples_;
  double intraSmNs_ = 64;
  double interSmNs_ = 832;
};

/// Rule 1's choice for one transfer, with the reason in words.
struct TransportChoice {
  std::string mechanism;  // "ldst", "tma", "copy_engine" or "multimem"
  std::string reason;
};

struct TransferQuery {
  std::optional<uint64_t> bytes;  // unknown when the size is only known at run time
  bool reducesOnRead = false;     // needs the data in registers to reduce it
  bool deviceInitiated = true;    // issued by a kernel (the copy engine is host-driven)
  bool multicastAllowed = false;  // user opt-in and machine support
};

TransportChoice chooseTransport(const MachineProfile &profile, const TransferQuery &query);

/// "4 KiB", "1 MiB", "1.5 GiB".
std::string formatBytes(uint64_t bytes);

} // namespace pk

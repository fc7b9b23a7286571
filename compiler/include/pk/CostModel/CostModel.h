// Rule 1's cost model over the runtime's machine profile (pk/runtime/profile.h): which
// mechanism moves a message fastest, and how many SMs it needs. Plain C++, no MLIR.
#pragma once

#include <pk/runtime/profile.h>
#include <cstdint>
#include <optional>
#include <string>

namespace pk {

/// The shipped H200 profile (runtime/profiles/h200.profile), compiled into pkc.
const MachineProfile &builtinProfile();
/// The profile at `path`, or the built-in one for an empty path; nullopt and `error` set
/// when the file is unreadable or malformed.
std::optional<MachineProfile> loadProfileOrBuiltin(const std::string &path, std::string &error);

/// Fewest profiled SMs that reach 90% of the mechanism's best bandwidth at this size.
int smsFor90Percent(const MachineProfile &profile, Mechanism m, long long bytes);

struct TransferQuery {
  std::optional<uint64_t> bytes;  // unknown when the size is only known at run time
  bool reducesOnRead = false;     // needs the data in registers to reduce it
  bool deviceInitiated = true;    // issued by a kernel (the copy engine is host-driven)
  bool multicastAllowed = false;  // user opt-in and machine support
};

/// Rule 1's choice for one transfer, with the reason in words.
struct TransportChoice {
  std::string mechanism;  // "ldst", "tma", "copy_engine" or "multimem"
  std::string reason;
};

TransportChoice chooseTransport(const MachineProfile &profile, const TransferQuery &query);

/// "4 KiB", "1 MiB", "1.5 GiB".
std::string formatBytes(uint64_t bytes);

} // namespace pk

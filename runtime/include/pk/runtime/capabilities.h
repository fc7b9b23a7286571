// What the GPUs in hand can do: architecture, SM count, peer access, multicast (reported only).
#pragma once
#include <string>
#include <vector>

#include <pk/runtime/status.h>

namespace pk {

struct DeviceCaps {
  int device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  unsigned long long total_memory = 0;
  // CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED; false when the driver could not be asked.
  bool multicast_supported = false;
};

struct Capabilities {
  std::vector<DeviceCaps> devices;
  std::vector<std::vector<bool>> peer_access;  // [from][to]; true on the diagonal
  // Multicast is used only when the device supports it AND the user opted in with
  // PK_ALLOW_MULTICAST=1. Off by default: on the shared test machines it must never run.
  bool multicast_allowed = false;

  bool all_peers_accessible() const;
  std::string to_string() const;
};

// Probes the local devices through the CUDA runtime (and the driver, for multicast).
Result<Capabilities> probe_capabilities();

// NVRTC/nvcc architecture name for a compute capability: "sm_90a" for 9.0 and 10.0 (wgmma,
// setmaxnreg and TMA multicast need the arch-specific target), "sm_XY" otherwise.
std::string arch_for(int cc_major, int cc_minor);

}  // namespace pk

// Capability probe: per-device facts, the peer-access matrix, multicast support (reported only).
#include <pk/runtime/capabilities.h>

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

#include <pk/runtime/cuda_check.h>
#include <pk/runtime/driver.h>

namespace pk {

std::string arch_for(int cc_major, int cc_minor) {
  const std::string base = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  if ((cc_major == 9 && cc_minor == 0) || (cc_major == 10 && cc_minor == 0)) return base + "a";
  return base;
}

bool Capabilities::all_peers_accessible() const {
  for (const auto& row : peer_access)
    for (bool b : row)
      if (!b) return false;
  return true;
}

std::string Capabilities::to_string() const {
  std::string s;
  for (const auto& d : devices) {
    s += "device " + std::to_string(d.device) + ": " + d.name + ", " +
         arch_for(d.cc_major, d.cc_minor) + ", " + std::to_string(d.sm_count) + " SMs, " +
         std::to_string(d.total_memory >> 20) + " MiB, multicast " +
         (d.multicast_supported ? "supported" : "not supported") + "\n";
  }
  for (std::size_t i = 0; i < peer_access.size(); ++i) {
    s += "peer access from " + std::to_string(i) + ":";
    for (bool b : peer_access[i]) s += b ? " y" : " n";
    s += "\n";
  }
  s += std::string("multicast use: ") + (multicast_allowed ? "allowed (PK_ALLOW_MULTICAST=1)" : "off") + "\n";
  return s;
}

Result<Capabilities> probe_capabilities() {
  Capabilities caps;
  int count = 0;
  PK_CUDA_TRY(cudaGetDeviceCount(&count));
  // The driver is optional here: without it multicast is simply reported unsupported.
  auto drv = driver();
  for (int d = 0; d < count; ++d) {
    DeviceCaps dc;
    dc.device = d;
    cudaDeviceProp prop;
    PK_CUDA_TRY(cudaGetDeviceProperties(&prop, d));
    dc.name = prop.name;
    dc.cc_major = prop.major;
    dc.cc_minor = prop.minor;
    dc.sm_count = prop.multiProcessorCount;
    dc.total_memory = prop.totalGlobalMem;
    if (drv.is_ok()) {
      CUdevice dev;
      int v = 0;
      if ((*drv)->device_get(&dev, d) == CUDA_SUCCESS &&
          (*drv)->device_get_attribute(&v, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev) ==
              CUDA_SUCCESS)
        dc.multicast_supported = v != 0;
    }
    caps.devices.push_back(dc);
  }
  caps.peer_access.assign(count, std::vector<bool>(count, true));
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      int can = 0;
      PK_CUDA_TRY(cudaDeviceCanAccessPeer(&can, a, b));
      caps.peer_access[a][b] = can != 0;
    }
  const char* opt = std::getenv("PK_ALLOW_MULTICAST");
  caps.multicast_allowed = opt && std::strcmp(opt, "1") == 0;
  return caps;
}

}  // namespace pk

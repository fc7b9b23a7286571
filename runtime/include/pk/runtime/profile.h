// Machine profiles: measured bandwidth per transfer mechanism and the two hand-off latencies.
//
// File format (text, one record per line, '#' starts a comment):
//   version 1
//   device <free text>
//   <mechanism> <size_bytes> <sms> <GB/s>   mechanism: copy_engine | tma | ldst; sms 0 = n/a
//   handoff intra_sm_ns <ns>                 mbarrier hand-off inside an SM
//   handoff inter_sm_ns <ns>                 global-flag hand-off between SMs
//   peak <what> <value>                      ceilings for roofline bounds: tensor_bf16_tflops,
//                                            tensor_f16_tflops, tensor_fp8_tflops, hbm_gbs,
//                                            link_gbs (per direction)
//   fixed <what> <us>                        fixed costs for roofline bounds: launch_us (a kernel
//                                            launched back to back, empty), link_hop_us (a flag
//                                            set on one GPU seen on the other, one way)
#pragma once
#include <string>
#include <vector>

#include <pk/runtime/status.h>

namespace pk {

enum class Mechanism { copy_engine, tma, ldst };

const char* mechanism_name(Mechanism m);

struct BandwidthPoint {
  Mechanism mechanism;
  long long bytes;
  int sms;
  double gbps;
};

struct MachineProfile {
  std::string device;
  std::vector<BandwidthPoint> points;
  double intra_sm_ns = 0;
  double inter_sm_ns = 0;
  // Ceilings no kernel can beat (0: unknown): dense tensor-core TFLOP/s per input type, HBM
  // GB/s (read + write), GPU-to-GPU link GB/s per direction.
  double tensor_bf16_tflops = 0, tensor_f16_tflops = 0, tensor_fp8_tflops = 0, hbm_gbs = 0, link_gbs = 0;
  // Times no kernel can beat (0: unknown), in microseconds: an empty kernel's launch in a
  // back-to-back loop, and one flag hop from one GPU to another.
  double launch_us = 0, link_hop_us = 0;

  static Result<MachineProfile> parse(const std::string& text);
  static Result<MachineProfile> load(const std::string& path);
  std::string serialize() const;

  // Bandwidth for `bytes` with `sms` SMs: the curve of the largest measured SM count <= sms
  // (the smallest if none), interpolated linearly in log2(bytes) and clamped at its ends.
  // Returns 0 when the mechanism has no points.
  double bandwidth(Mechanism m, long long bytes, int sms) const;
};

// The shipped H200 profile (runtime/profiles/h200.profile, compiled in).
const MachineProfile& builtin_profile();

}  // namespace pk

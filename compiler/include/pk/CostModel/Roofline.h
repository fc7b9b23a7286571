// Lower bounds on a kernel's time from what it must do (tensor-core FLOPs, compulsory HBM
// traffic, bytes each rank must send over its links) and the machine's ceilings (the profile's
// `peak` records), and from the fixed costs it measured (`fixed`: a launch, a flag hop between
// GPUs), for `pkc --roofline`. Counted on the spec-level IR for given tensor shapes
// and world size; docs/roofline.md says how.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include <pk/runtime/profile.h>
#include <map>
#include <string>
#include <vector>

namespace mlir::pk {

struct RooflineInputs {
  std::map<int, std::vector<int64_t>> shapes;  // kernel argument index -> extents
  int64_t world = 1;
};

struct KernelRoofline {
  std::string kernel;
  double flops = 0;          // tensor-core multiply-adds x 2
  std::string flopType;      // "bf16", "f16" or "fp8" (the peak used), empty without MMAs
  double hbmBytes = 0;       // every tensor argument read or written once
  double linkBytes = 0;      // bytes this rank must send (= receive) over its links
  double computeUs = 0, hbmUs = 0, linkUs = 0;
  double fixedUs = 0;        // a launch, and a flag hop between GPUs if the kernel communicates
  double overlapUs = 0;      // perfect overlap: the largest bound
  double serialUs = 0;       // communication after compute: max(compute, HBM) + link (or fixed)
  std::string binds;         // "compute", "HBM", "link" or "fixed costs"
  std::vector<std::string> notes;
};

// One entry per kernel; fails (with a diagnostic at the op) when a size it needs is not given.
FailureOr<std::vector<KernelRoofline>> computeRoofline(ModuleOp module, const RooflineInputs &in,
                                                       const ::pk::MachineProfile &profile);

std::string formatRooflineText(const std::vector<KernelRoofline> &kernels, int64_t world);
std::string formatRooflineJson(const std::vector<KernelRoofline> &kernels, int64_t world);

}  // namespace mlir::pk

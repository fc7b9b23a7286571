// The pass pipeline from spec-level to device-level pk, shared by pkc, pkc-opt and the JIT.
#pragma once

#include "mlir/Pass/PassManager.h"
#include <string>

namespace pk {

struct PipelineOptions {
  std::string profilePath;     // machine profile file; empty: built-in H200 profile
  bool allowMulticast = false; // NVLink multicast only on explicit opt-in
  int64_t worldSize = 0;       // known world size; 0: a run-time value (the default)
};

/// Adds the passes that take a spec-level module to device level.
void buildDevicePipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Registers the pipeline as `pk-to-device` for pkc-opt.
void registerPipelines();

} // namespace pk

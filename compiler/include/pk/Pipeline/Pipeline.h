// The pass pipeline from spec-level to device-level pk, shared by pkc, pkc-opt and the JIT.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include <string>

namespace pk {

struct PipelineOptions {
  std::string profilePath;     // machine profile file; empty: built-in H200 profile
  bool allowMulticast = false; // NVLink multicast only on explicit opt-in
  int64_t worldSize = 0;       // known world size; 0: a run-time value (the default)
  int64_t pushMaxBytes = 1 << 20;   // largest per-peer message of the one-round push path
  int64_t llMaxBytes = 256 << 10;   // largest per-peer message of its flag-free LL variant
  int64_t copyEngineMinBytes = -1;  // copy-engine route from; -1: measured defaults, 0: off
  int64_t tileBatch = 0;            // general-path tiles per batch; 0: by register budget, 1: off
  int64_t tileThreads = 0;          // block of independent-block kernels; 0: chosen, 256/512/1024
  int64_t tileStages = 2;           // stages of the general path's prefetch ring, 2-4
  bool templates = true;            // local loops that match a template take it; off: general path
  bool splitK = true;               // GEMM template launches of few tiles may split K over blocks
};

/// Adds the passes that take a spec-level module to device level.
void buildDevicePipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Registers the pipeline as `pk-to-device` for pkc-opt.
void registerPipelines();

/// Erases every kernel of `module` but `name` (pkc --kernel, the JIT's Options::kernel): one
/// kernel of a spec set compiles alone. False, with `error` naming the kernels there are, when
/// the module has no such kernel.
bool keepOnlyKernel(mlir::ModuleOp module, const std::string &name, std::string &error);

} // namespace pk

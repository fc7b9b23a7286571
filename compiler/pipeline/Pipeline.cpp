// The pass pipeline from spec-level to device-level pk.
#include "pk/Pipeline/Pipeline.h"
#include "pk/Passes/Passes.h"
#include "pk/Dialect/Pk.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace pk {

void buildDevicePipeline(mlir::OpPassManager &pm, const PipelineOptions &options) {
  // First: each launch it makes is then an ordinary kernel for every pass below.
  mlir::pk::PkSplitLaunchesPassOptions split;
  split.templates = options.templates;
  pm.addPass(mlir::pk::createPkSplitLaunchesPass(split));
  pm.addPass(mlir::pk::createPkTrackEffectsPass());
  pm.addPass(mlir::pk::createPkCheckTileRacesPass());
  mlir::pk::PkSelectTransportPassOptions transport;
  transport.profilePath = options.profilePath;
  transport.allowMulticast = options.allowMulticast;
  pm.addPass(mlir::pk::createPkSelectTransportPass(transport));
  mlir::pk::PkSelectOverlapPassOptions overlap;
  overlap.profilePath = options.profilePath;
  pm.addPass(mlir::pk::createPkSelectOverlapPass(overlap));
  mlir::pk::PkSelectAlgorithmPassOptions algorithm;
  algorithm.profilePath = options.profilePath;
  algorithm.worldSize = options.worldSize;
  algorithm.pushMaxBytes = options.pushMaxBytes;
  algorithm.llMaxBytes = options.llMaxBytes;
  algorithm.copyEngineMinBytes = options.copyEngineMinBytes;
  pm.addPass(mlir::pk::createPkSelectAlgorithmPass(algorithm));
  pm.addPass(mlir::pk::createPkFoldProductsPass());
  if (options.templates) pm.addPass(mlir::pk::createPkLowerAttentionPass());
  mlir::pk::PkLowerGemmPassOptions gemm;
  gemm.profilePath = options.profilePath;
  gemm.localTemplates = options.templates;
  gemm.splitK = options.splitK;
  pm.addPass(mlir::pk::createPkLowerGemmPass(gemm));
  pm.addPass(mlir::pk::createPkExactIndexTilesPass());
  pm.addPass(mlir::pk::createPkLowerPeerTilesPass());
  mlir::pk::PkLowerCollectivesPassOptions lower;
  lower.profilePath = options.profilePath;
  pm.addPass(mlir::pk::createPkLowerCollectivesPass(lower));
  pm.addPass(mlir::pk::createPkCheckEffectsPass());
  pm.addPass(mlir::pk::createPkVerifyProtocolPass());
  // The lowerings re-read sizes and constants where they need them; merge the copies and drop
  // what no op uses, so the emitted CUDA names each value once.
  pm.addPass(mlir::createCSEPass());
  mlir::pk::PkBatchTileLoadsPassOptions batch;
  batch.batch = options.tileBatch;
  batch.blockThreads = options.tileThreads;
  batch.ringStages = options.tileStages;
  pm.addPass(mlir::pk::createPkBatchTileLoadsPass(batch));
}

void registerPipelines() {
  mlir::PassPipelineRegistration<>(
      "pk-to-device", "Lower spec-level pk kernels to the device level",
      [](mlir::OpPassManager &pm) { buildDevicePipeline(pm, PipelineOptions{}); });
}

bool keepOnlyKernel(mlir::ModuleOp module, const std::string &name, std::string &error) {
  std::string names;
  bool found = false;
  for (auto kernel : module.getOps<mlir::pk::KernelOp>()) {
    names += " " + kernel.getSymName().str();
    found |= kernel.getSymName() == name;
  }
  if (!found) {
    error = "the spec has no kernel '" + name + "'; it has:" + names;
    return false;
  }
  for (auto kernel : llvm::make_early_inc_range(module.getOps<mlir::pk::KernelOp>()))
    if (kernel.getSymName() != name) kernel.erase();
  return true;
}

} // namespace pk

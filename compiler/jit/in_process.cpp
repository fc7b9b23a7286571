// The in-process front end: the same parser, device pipeline and CUDA emitter as pkc.
#include <pk/jit/jit.h>

#include "pk/Driver/Frontend.h"
#include "pk/Emitter/CudaEmitter.h"
#include "pk/Pipeline/Pipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "pk/Dialect/Pk.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#ifndef PKC_VERSION
#define PKC_VERSION "0.0.0"
#endif

namespace pk::jit {

Result<std::string> emit_cuda_in_process(const std::string& name, const std::string& text,
                                         const Options& options) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::pk::PkDialect, mlir::arith::ArithDialect, mlir::scf::SCFDialect>();
  // One context per compile keeps concurrent compiles independent; no thread pool for a
  // pipeline this small.
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics point at the spec's source; an IR dump of the op would only be noise.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  // Diagnostics as `name:line:col: error: ...`, returned in the Status.
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagStream);
  auto fail = [&]() { return Status::error(diagnostics.empty() ? name + ": failed" : diagnostics); };

  // C++ specs go through the Clang front end, the text served from memory under `name`; a
  // runaway parse becomes an error here instead of ending the host process.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (isCppSpecPath(name)) {
    FrontendOptions fe;
    fe.text = text;
    fe.exitOnTimeout = false;
    std::string clangText;
    fe.clangDiagnostics = &clangText;
    module = parseCppSpec(name, fe, context, nullptr);
    diagStream << clangText;
  } else {
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  }
  if (!module) return fail();
  // One kernel of a spec set compiles alone (an unknown name: all, for the caller's listing).
  if (std::string unknown; !options.kernel.empty()) keepOnlyKernel(*module, options.kernel, unknown);
  mlir::PassManager pm(&context);
  PipelineOptions po;
  po.profilePath = options.profile_path;
  po.allowMulticast = options.allow_multicast;
  po.tileBatch = options.tile_batch;
  po.tileThreads = options.tile_threads;
  buildDevicePipeline(pm, po);
  if (mlir::failed(pm.run(*module))) return fail();
  std::string cuda;
  llvm::raw_string_ostream os(cuda);
  mlir::pk::CudaEmitOptions eo;
  eo.sourceName = name.substr(name.find_last_of('/') + 1);
  eo.pkcVersion = PKC_VERSION;
  if (mlir::failed(mlir::pk::emitCuda(*module, os, eo))) return fail();
  return cuda;
}

Result<Kernel> compile_string(const std::string& spec, const Options& options,
                              const std::string& name) {
  return compile_spec(name, spec, options, Frontend(emit_cuda_in_process, file_identity("/proc/self/exe")));
}

Result<Kernel> compile_file(const std::string& path, const Options& options) {
  PK_ASSIGN_OR_RETURN(std::string text, read_spec(path));
  return compile_spec(path, text, options, Frontend(emit_cuda_in_process, file_identity("/proc/self/exe")));
}

}  // namespace pk::jit

// The in-process front end: the same parser, device pipeline and CUDA emitter as pkc.
#include <pk/jit/jit.h>

#include "pk/CostModel/CostModel.h"
#include "pk/CostModel/Roofline.h"
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

namespace {

// One compile's context, source buffer and diagnostics (as `name:line:col: error: ...`).
struct Session {
  Session(const std::string& name, const std::string& text)
      : context(registry(), mlir::MLIRContext::Threading::DISABLED), diag(diagnostics),
        handler(sourceMgr, &context, diag), name(name), text(text) {
    sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
    context.loadAllAvailableDialects();
    // Diagnostics point at the spec's source; an IR dump of the op would only be noise.
    context.printOpOnDiagnostic(false);
  }
  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry r;
    r.insert<mlir::pk::PkDialect, mlir::arith::ArithDialect, mlir::scf::SCFDialect>();
    return r;
  }
  Status fail() const { return Status::error(diagnostics.empty() ? name + ": failed" : diagnostics); }

  // The spec-level module with only `kernel` (all when empty or unknown); null on errors.
  mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string& kernel) {
    // C++ specs go through the Clang front end, the text served from memory under `name`; a
    // runaway parse becomes an error here instead of ending the host process.
    mlir::OwningOpRef<mlir::ModuleOp> module;
    if (isCppSpecPath(name)) {
      FrontendOptions fe;
      fe.text = text;
      fe.exitOnTimeout = false;
      std::string clangText;
      fe.clangDiagnostics = &clangText;
      fe.onlyKernel = kernel;
      module = parseCppSpec(name, fe, context, nullptr);
      diag << clangText;
    } else {
      module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
    }
    if (module && !kernel.empty()) {
      std::string unknown;
      keepOnlyKernel(*module, kernel, unknown);
    }
    return module;
  }

  // One context per compile keeps concurrent compiles independent; no thread pool for a
  // pipeline this small.
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream diag;
  mlir::SourceMgrDiagnosticHandler handler;
  std::string name, text;
};

}  // namespace

Result<std::string> emit_cuda_in_process(const std::string& name, const std::string& text,
                                         const Options& options) {
  Session session(name, text);
  mlir::OwningOpRef<mlir::ModuleOp> module = session.parse(options.kernel);
  if (!module) return session.fail();
  mlir::PassManager pm(&session.context);
  PipelineOptions po;
  po.profilePath = options.profile_path;
  po.allowMulticast = options.allow_multicast;
  po.tileBatch = options.tile_batch;
  po.tileThreads = options.tile_threads;
  po.tileStages = options.tile_stages;
  po.templates = options.templates;
  po.splitK = options.split_k;
  buildDevicePipeline(pm, po);
  if (mlir::failed(pm.run(*module))) return session.fail();
  std::string cuda;
  llvm::raw_string_ostream os(cuda);
  mlir::pk::CudaEmitOptions eo;
  eo.sourceName = name.substr(name.find_last_of('/') + 1);
  eo.pkcVersion = PKC_VERSION;
  if (mlir::failed(mlir::pk::emitCuda(*module, os, eo))) return session.fail();
  return cuda;
}

Result<std::string> roofline_in_process(const std::string& name, const std::string& text,
                                        const Options& options, const Shapes& shapes, int world,
                                        bool json) {
  Session session(name, text);
  mlir::OwningOpRef<mlir::ModuleOp> module = session.parse(options.kernel);
  if (!module) return session.fail();
  mlir::pk::RooflineInputs in;
  in.world = world > 0 ? world : 1;
  for (const auto& [arg, extents] : shapes) in.shapes[arg].assign(extents.begin(), extents.end());
  std::string error;
  auto profile = loadProfileOrBuiltin(options.profile_path, error);
  if (!profile) return Status::error(error);
  auto kernels = mlir::pk::computeRoofline(*module, in, *profile);
  if (mlir::failed(kernels)) return session.fail();
  return json ? mlir::pk::formatRooflineJson(*kernels, in.world)
              : mlir::pk::formatRooflineText(*kernels, in.world);
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

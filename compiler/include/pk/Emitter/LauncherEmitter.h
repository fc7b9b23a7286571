// Typed C++ launchers for pk kernels: a header declaring one function per kernel, and a source
// that embeds pkc's CUDA and loads it through the runtime on first use.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace mlir::pk {

/// One kernel argument as the launcher declares it.
struct LauncherArg {
  std::string name;            // as written in the spec (`%x` -> x), made a C++ identifier
  std::string cppType;         // pk::SymTensor<pk::bf16>, pk::Tensor<float>, long long, ...
  std::string specType;        // !pk.sym<?xbf16>, for the comment
  bool isTensor = false;
  bool isSymmetric = false;
  std::vector<int64_t> shape;  // ShapedType::kDynamic for `?`
};

/// A host-side condition checked before launch, with the error it reports.
struct LauncherCheck {
  std::string condition;  // C++ over the argument names and `world`
  std::string message;
};

struct KernelSignature {
  std::string name;
  std::vector<LauncherArg> args;
  std::vector<LauncherCheck> checks;  // from the spec's collectives (shape, world size)
};

/// Reads every kernel's signature from a spec-level module (before the passes lower the
/// collectives the checks come from). Argument names come from the spec text at each
/// argument's location in `sourceMgr` (non-const: it indexes lines lazily).
FailureOr<std::vector<KernelSignature>> collectKernelSignatures(ModuleOp module,
                                                                llvm::SourceMgr &sourceMgr);

struct LauncherOptions {
  std::string sourceName;               // named in the banner
  std::string pkcVersion;
  std::string headerInclude;            // how the source includes the header: "pk_kernels/x.h"
  std::string cppNamespace = "pk_kernels";
};

/// The header: one `pk::Status <kernel>(pk::Context&, args..., cudaStream_t)` per kernel.
void emitLauncherHeader(const std::vector<KernelSignature> &kernels, llvm::raw_ostream &os,
                        const LauncherOptions &options);

/// The source: `cuda` embedded, host checks, per-device module loading, the launch.
/// `cuda` must be pkc's CUDA for the same module (its pk-launch lines give the launch facts).
LogicalResult emitLauncherSource(const std::vector<KernelSignature> &kernels,
                                 llvm::StringRef cuda, llvm::raw_ostream &os,
                                 const LauncherOptions &options, Location loc);

} // namespace mlir::pk

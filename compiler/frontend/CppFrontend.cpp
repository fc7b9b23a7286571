// pk::parseCppSpec: Clang parse -> model -> pk IR, verified; spec-language errors are
// reported through the MLIR context at the spec's file:line:col.
#include "ModelToMlir.h"
#include "SpecParser.h"
#include "SpecWords.h"

#include "pk/Driver/Frontend.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

namespace pk {

bool haveCppFrontend() { return true; }

mlir::OwningOpRef<mlir::ModuleOp> parseCppSpec(const std::string &path,
                                               const FrontendOptions &options,
                                               mlir::MLIRContext &context,
                                               std::vector<std::string> *dependencies) {
  auto here = mlir::FileLineColLoc::get(&context, path, 0, 0);
  if (options.text) {
    // Clang would only warn about NUL bytes and read on; a spec is text.
    if (llvm::StringRef(*options.text).contains('\0')) {
      mlir::emitError(here) << "'" << path << "' is binary, not a spec (it has NUL bytes)";
      return nullptr;
    }
  } else {
    if (llvm::sys::fs::is_directory(path)) {
      mlir::emitError(here) << "'" << path << "' is a directory, not a spec file";
      return nullptr;
    }
    if (!llvm::sys::fs::exists(path)) {
      mlir::emitError(here) << "no such file: '" << path << "'";
      return nullptr;
    }
    if (auto buffer = llvm::MemoryBuffer::getFile(path)) {
      if ((*buffer)->getBuffer().contains('\0')) {
        mlir::emitError(here) << "'" << path << "' is a binary file, not a spec (it has NUL bytes)";
        return nullptr;
      }
    }
  }
  fe::ParseRequest request{path, options.includeDirs, options.defines, options.standard,
                           options.text, options.exitOnTimeout,
                           options.clangDiagnostics != nullptr, options.onlyKernel};
  request.parseSeconds = options.parseSeconds;
  fe::ParseResult parsed = fe::parseSpec(request);
  if (options.clangDiagnostics) *options.clangDiagnostics += parsed.clangDiagnostics;
  if (parsed.clangFailed) {
    if (parsed.errors.empty()) return nullptr;  // Clang already printed why
  }
  for (const fe::Diagnostic &d : parsed.errors)
    mlir::emitError(mlir::FileLineColLoc::get(&context, d.loc.file, d.loc.line, d.loc.col))
        << d.message;
  if (!parsed.errors.empty() || parsed.clangFailed) return nullptr;

  if (dependencies)
    for (const std::string &d : parsed.dependencies)
      if (std::find(dependencies->begin(), dependencies->end(), d) == dependencies->end())
        dependencies->push_back(d);

  mlir::OwningOpRef<mlir::ModuleOp> module = fe::buildModule(parsed.module, context);
  // The dialect's verifiers check what C++ types cannot (mma shapes, transports, ...);
  // their errors carry the spec's locations, and are re-worded for the spec's writer, who
  // wrote `store(...)`, not 'pk.tile.store'.
  bool reworded = false;
  mlir::ScopedDiagnosticHandler specWords(&context, [&](mlir::Diagnostic &d) {
    if (reworded) return mlir::failure();  // our own re-emission: on to the outer handler
    reworded = true;
    {
      mlir::InFlightDiagnostic again =
          context.getDiagEngine().emit(d.getLocation(), d.getSeverity());
      again << fe::specWords(d.str());
      for (mlir::Diagnostic &note : d.getNotes())
        again.attachNote(note.getLocation()) << fe::specWords(note.str());
    }
    reworded = false;
    return mlir::success();
  });
  if (mlir::failed(mlir::verify(*module))) return nullptr;
  return module;
}

} // namespace pk

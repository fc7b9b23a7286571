// Runs Clang on a spec: no compile database, the spec header and Clang's freestanding
// builtin headers served from memory (so pkc works from any directory and without an
// installed Clang), -I/-D/-std passed through. Clang prints its own diagnostics unchanged.
#include "SpecParser.h"
#include "SpecWalker.h"

#include "pk/EmbeddedFiles.h"
#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Basic/Stack.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Basic/FileManager.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/thread.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

namespace pk_spec_headers {
pk::EmbeddedFileList embeddedFiles();
}
namespace pk_builtin_headers {
pk::EmbeddedFileList embeddedFiles();
}

namespace pk::fe {
namespace {

// Virtual directories: never on disk, so user files cannot collide with them.
constexpr const char *kSpecDir = "/__pkc__/spec";
constexpr const char *kBuiltinDir = "/__pkc__/builtin";

class WalkConsumer : public clang::ASTConsumer {
public:
  WalkConsumer(clang::CompilerInstance &ci, const std::string &onlyKernel, ParseResult &result)
      : ci(ci), onlyKernel(onlyKernel), result(result) {}
  void HandleTranslationUnit(clang::ASTContext &context) override {
    // After a Clang error the AST is incomplete; its diagnostics already say why.
    if (ci.getDiagnostics().hasErrorOccurred()) return;
    walkKernels(context, kSpecDir, onlyKernel, result);
    const clang::SourceManager &sm = context.getSourceManager();
    auto main = sm.getFileEntryRefForID(sm.getMainFileID());
    for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) {
      llvm::StringRef name = it->first.getName();
      if (name.starts_with("/__pkc__/") || (main && it->first == *main)) continue;
      result.dependencies.push_back(name.str());
    }
  }

private:
  clang::CompilerInstance &ci;
  const std::string &onlyKernel;
  ParseResult &result;
};

class WalkAction : public clang::ASTFrontendAction {
public:
  WalkAction(const std::string &onlyKernel, ParseResult &result) : onlyKernel(onlyKernel), result(result) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &ci,
                                                        llvm::StringRef) override {
    return std::make_unique<WalkConsumer>(ci, onlyKernel, result);
  }

private:
  const std::string &onlyKernel;
  ParseResult &result;
};

} // namespace

namespace {
struct Shared {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  ParseResult result;
};

ParseResult parseOnThisThread(const ParseRequest &request) {
  clang::noteBottomOfStack();
  ParseResult result;
  std::vector<std::string> args = {
      "-std=" + request.standard, "-fsyntax-only",
      // Only the embedded headers: the host's C/C++ library is not part of the language,
      // and parsing stays fast and the same on every machine.
      "-nostdinc", "-nostdinc++", "-ffreestanding",
      "-Xclang", "-internal-isystem", "-Xclang", kBuiltinDir,
      "-fno-color-diagnostics", "-Wno-unused-value", "-ferror-limit=20",
      // A constant that changes value on its way into spec.h (`x.dim(4294967296)` is
      // dimension 0, `1 << 40` in an int) would compile another kernel than the one written.
      "-Werror=constant-conversion", "-Werror=integer-overflow", "-Werror=shift-count-overflow",
      "-ftemplate-depth=128", "-fconstexpr-depth=128", "-fbracket-depth=256",
      "-fmacro-backtrace-limit=4"};
  // The embedded spec.h comes first, so `-I` to a checked-out or installed copy of it still
  // gets the header this pkc understands (the include guard skips the other copy).
  args.push_back(std::string("-I") + kSpecDir);
  for (const std::string &d : request.includeDirs) args.push_back("-I" + d);
  for (const std::string &d : request.defines) args.push_back("-D" + d);
  // ToolInvocation rather than ClangTool: it keeps the spec's path as the user wrote it, so
  // Clang's diagnostics and the ops' locations name the file the way `pkc` was given it.
  args.insert(args.begin(), "pkc");
  args.push_back(request.path);

  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  auto map = [&](const char *dir, pk::EmbeddedFileList files) {
    for (size_t i = 0; i < files.count; ++i) {
      std::string name = std::string(dir) + "/" + files.files[i].name;
      memory->addFile(name, 0,
                      llvm::MemoryBuffer::getMemBuffer(
                          llvm::StringRef(files.files[i].text, files.files[i].size), name,
                          /*RequiresNullTerminator=*/false));
    }
  };
  if (request.text) {
    // The overlay gives the in-memory layer the real working directory, so a relative spec
    // path resolves to the same absolute name here.
    llvm::SmallString<256> at(request.path);
    llvm::sys::fs::make_absolute(at);
    memory->addFile(at, 0, llvm::MemoryBuffer::getMemBufferCopy(*request.text, request.path));
  }
  map(kSpecDir, pk_spec_headers::embeddedFiles());
  map(kBuiltinDir, pk_builtin_headers::embeddedFiles());
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      llvm::vfs::getRealFileSystem());
  overlay->pushOverlay(memory);
  auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions(), overlay);

  clang::tooling::ToolInvocation invocation(args, std::make_unique<WalkAction>(request.onlyKernel, result),
                                            files.get());
  std::string clangText;
  llvm::raw_string_ostream clangStream(clangText);
  clang::DiagnosticOptions printerOptions;
  clang::TextDiagnosticPrinter printer(clangStream, printerOptions);
  if (request.captureClangDiagnostics) invocation.setDiagnosticConsumer(&printer);
  result.clangFailed = !invocation.run();
  result.clangDiagnostics = std::move(clangText);
  return result;
}
} // namespace

ParseResult parseSpec(const ParseRequest &request) {
  // Hostile specs nest deeply; Clang and the walker recurse on the AST. A large stack
  // (reserved, not committed) turns what would be a crash into Clang's own limits.
  //
  // Clang has no limit on macro expansion or type growth, so a hostile spec could parse
  // for hours. Past the deadline pkc ends the process with a diagnostic (nothing has been
  // written yet: pkc writes its output only after a successful run); a host process gets an
  // error instead and the parse finishes on a detached thread (Clang cannot be cancelled).
  auto shared = std::make_shared<Shared>();
  llvm::thread worker(std::optional<unsigned>(512u << 20), [shared, request] {
    ParseResult r = parseOnThisThread(request);
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->result = std::move(r);
    shared->done = true;
    shared->cv.notify_one();
  });
  {
    std::unique_lock<std::mutex> lock(shared->mutex);
    if (!shared->cv.wait_for(lock, std::chrono::seconds(request.parseSeconds),
                             [&] { return shared->done; })) {
      std::string why = "parsing took longer than " + std::to_string(request.parseSeconds) +
                        " s (runaway macro expansion or template growth?); specs parse in "
                        "milliseconds, simplify the macros or templates";
      if (request.exitOnTimeout) {
        llvm::errs() << request.path << ": error: " << why << "\n";
        llvm::errs().flush();
        std::_Exit(1);
      }
      lock.unlock();
      worker.detach();
      ParseResult timedOut;
      timedOut.clangFailed = true;
      timedOut.errors.push_back({{request.path, 1, 1}, why});
      return timedOut;
    }
  }
  worker.join();
  return std::move(shared->result);
}

} // namespace pk::fe

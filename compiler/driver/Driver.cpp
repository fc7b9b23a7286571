// The pkc command line: parses flags, runs the phases, writes the output atomically.
#include "pk/Driver/Driver.h"
#include "pk/CostModel/CostModel.h"
#include "pk/CostModel/Roofline.h"
#include "pk/Driver/Frontend.h"
#include "pk/Emitter/CudaEmitter.h"
#include "pk/Emitter/LauncherEmitter.h"
#include "pk/Nvrtc/NvrtcCompiler.h"
#include "pk/Passes/Decisions.h"
#include "pk/Passes/Passes.h"
#include "pk/Pipeline/Pipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "pk/Dialect/Pk.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <cstdlib>

#ifndef PKC_VERSION
#define PKC_VERSION "0.0.0"
#endif

namespace cl = llvm::cl;

namespace pk {
namespace {

enum class Phase { Mlir, DeviceMlir, Cuda, Ptx, Cubin, Launcher, LauncherImpl };

cl::OptionCategory category("pkc options");
cl::opt<std::string> inputPath(cl::Positional,
                               cl::desc("<spec.mlir | spec.pk.cpp | - (standard input)>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> inputLanguage(
    "x", cl::desc("Language of a spec read from standard input: c++ or mlir (default: c++ when "
                  "the text has an #include line, else mlir)"),
    cl::value_desc("language"), cl::cat(category));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(category));
cl::opt<Phase> emit(
    "emit", cl::desc("Phase to stop after"), cl::init(Phase::Cuda), cl::cat(category),
    cl::values(clEnumValN(Phase::Mlir, "mlir", "spec-level pk dialect"),
               clEnumValN(Phase::DeviceMlir, "device-mlir", "device-level pk after the passes"),
               clEnumValN(Phase::Cuda, "cuda", "CUDA C++ (default)"),
               clEnumValN(Phase::Ptx, "ptx", "PTX through NVRTC"),
               clEnumValN(Phase::Cubin, "cubin", "a cubin through NVRTC"),
               clEnumValN(Phase::Launcher, "launcher", "typed C++ launcher header"),
               clEnumValN(Phase::LauncherImpl, "launcher-impl",
                          "C++ source of the launchers, with the CUDA embedded")));
cl::opt<std::string> arch("arch", cl::desc("GPU architecture (default: sm_90a)"), cl::init("sm_90a"),
                          cl::cat(category));
cl::list<std::string> includeDirs("I", cl::desc("Include directory for C++ specs"),
                                  cl::Prefix, cl::cat(category));
cl::list<std::string> defines("D", cl::desc("Macro definition for C++ specs"), cl::Prefix,
                              cl::cat(category));
cl::opt<std::string> standard("std", cl::desc("C++ standard for C++ specs"),
                              cl::init("c++20"), cl::cat(category));
cl::opt<bool> explain("explain", cl::desc("Print each decision the passes took and why"),
                      cl::cat(category));
cl::opt<std::string> profilePath("profile", cl::desc("Machine profile (default: built-in H200)"),
                                 cl::cat(category));
cl::opt<bool> allowMulticast("allow-multicast",
                             cl::desc("Allow NVLink multicast lowerings (off by default)"),
                             cl::cat(category));
cl::opt<int64_t> worldSize("world-size",
                           cl::desc("World size for --roofline and for algorithm choices made at compile "
                                    "time (the kernel still runs at any world size; default: chosen "
                                    "at run time)"),
                           cl::init(0), cl::cat(category));
cl::opt<std::string> roofline(
    "roofline", cl::ValueOptional,
    cl::desc("Print each kernel's lower time bounds (tensor-core FLOPs, HBM, links) for the "
             "sizes of --shape and --world-size instead of compiling ('=json' for JSON)"),
    cl::cat(category));
cl::list<std::string> shapes("shape", cl::CommaSeparated,
                             cl::desc("With --roofline: argument sizes, <index>:<d0>x<d1>... "
                                      "(e.g. --shape=0:8192x8192,1:8192x8192)"),
                             cl::cat(category));
cl::opt<std::string> onlyKernel("kernel",
                                cl::desc("Only this kernel of the spec (code, launchers, "
                                         "--roofline); the JIT compiles one kernel this way"),
                                cl::cat(category));
cl::opt<int64_t> pushMaxBytes("push-max-bytes",
                             cl::desc("Largest per-peer message of the collectives' one-round "
                                      "push path (default 1 MiB; 0: never)"),
                             cl::init(1 << 20), cl::cat(category));
cl::opt<int64_t> llMaxBytes("ll-max-bytes",
                           cl::desc("Largest per-peer message of the push path's flag-free LL "
                                    "variant (default 256 KiB; 0: never)"),
                           cl::init(256 << 10), cl::cat(category));
cl::opt<int64_t> copyEngineMinBytes(
    "copy-engine-min-bytes",
    cl::desc("Smallest message of the copy-only collectives' copy-engine route (default: the "
             "measured 20 MiB, 96 MiB for broadcast and scatter; 0: never)"),
    cl::init(-1), cl::cat(category));
cl::opt<int64_t> tileBatch(
    "tile-batch",
    cl::desc("Tiles a block of a general-path tile loop takes at a time, loading all before "
             "computing any (default 0: chosen by a register budget; 1: off)"),
    cl::init(0), cl::cat(category));
cl::opt<int64_t> tileThreads(
    "tile-threads",
    cl::desc("Threads per block of general-path kernels whose blocks never wait on each other: "
             "256, 512 or 1024, with 1024 / threads blocks per SM (default 0: the smallest "
             "block whose live tiles fit 48 registers a thread)"),
    cl::init(0), cl::cat(category));
cl::opt<int64_t> tileStages(
    "tile-stages",
    cl::desc("Stages of the shared-memory ring through which general-path kernels whose blocks "
             "never wait prefetch their next tiles: 2 (default), 3 or 4"),
    cl::init(2), cl::cat(category));
cl::opt<bool> templates(
    "templates",
    cl::desc("Lower local loops that match a Hopper main-loop template (GEMM, attention) to it "
             "(default); --templates=false keeps them on the general tile path, to compare"),
    cl::init(true), cl::cat(category));
cl::opt<bool> splitK(
    "split-k",
    cl::desc("Let a GEMM template launch whose output has fewer tiles than the SMs split each tile's K "
             "steps over several blocks (default); --split-k=false keeps every tile on one block (no "
             "workspace, no partial sums)"),
    cl::init(true), cl::cat(category));
// Lit sets PKC_FAST_COMPILE=1: its hundreds of cubins only have to compile, not run fast.
cl::opt<bool> fastCompile(
    "fast-compile",
    cl::desc("--emit=ptx/cubin with most device optimisations off (NVRTC --Ofast-compile=max): "
             "four to five times faster to build, to check that kernels compile, never to run "
             "for speed; ptxas's performance notes are not passed on. Default: on when the "
             "environment sets PKC_FAST_COMPILE=1"),
    cl::init([] {
      const char *v = std::getenv("PKC_FAST_COMPILE");
      return v && std::string(v) == "1";
    }()),
    cl::cat(category));
cl::opt<std::string> launcherInclude(
    "launcher-include", cl::desc("How the launcher source includes its header "
                                 "(default: pk_kernels/<spec name>.h)"),
    cl::cat(category));
cl::opt<std::string> launcherNamespace("launcher-namespace",
                                       cl::desc("C++ namespace of the launchers"),
                                       cl::init("pk_kernels"), cl::cat(category));
cl::opt<int> parseSeconds(
    "parse-seconds",
    cl::desc("Time limit of a C++ spec's parse, against runaway macros or templates (default 20)"),
    cl::init(20), cl::Hidden, cl::cat(category));
cl::opt<std::string> depfile("MF", cl::desc("Write a Make-style depfile"), cl::cat(category));
cl::opt<bool> writeDeps("MD", cl::desc("Write dependencies (with -MF)"), cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "pkc") << message << "\n";
  return 1;
}

// "dir/all_reduce.mlir" -> "all_reduce"; "dir/gemm.pk.cpp" -> "gemm".
std::string specStem(llvm::StringRef path) {
  llvm::StringRef name = llvm::sys::path::filename(path);
  for (llvm::StringRef ext : {".mlir", ".pk.cpp", ".cpp", ".cc", ".cxx"})
    if (name.ends_with(ext)) return name.drop_back(ext.size()).str();
  return name.str();
}

// Writes through a temporary file in the destination's directory and renames it into place,
// so a failed or interrupted run never leaves a partial output behind.
bool writeAtomically(const std::string &path, llvm::StringRef bytes, std::string &error) {
  if (path == "-") {
    llvm::outs() << bytes;
    llvm::outs().flush();
    return true;
  }
  // Devices, pipes and other non-regular outputs (-o /dev/null) are written in place: renaming
  // a temporary file over one would replace it (as root, /dev/null itself).
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) && llvm::sys::fs::exists(status) &&
      status.type() != llvm::sys::fs::file_type::regular_file) {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (!ec) {
      out << bytes;
      out.close();
      if (!out.has_error()) return true;
      ec = out.error();
      out.clear_error();
    }
    error = "cannot write '" + path + "': " + ec.message();
    return false;
  }
  llvm::SmallString<256> tmp;
  int fd = -1;
  llvm::SmallString<256> model(path);
  model += ".pkc-tmp-%%%%%%";
  if (auto ec = llvm::sys::fs::createUniqueFile(model, fd, tmp)) {
    error = "cannot write '" + path + "': " + ec.message();
    return false;
  }
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << bytes;
    out.close();
    if (out.has_error()) {
      error = "cannot write '" + path + "': " + out.error().message();
      out.clear_error();
      llvm::sys::fs::remove(tmp);
      return false;
    }
  }
  if (auto ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    error = "cannot write '" + path + "': " + ec.message();
    return false;
  }
  return true;
}

std::string escapeForMake(llvm::StringRef path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

} // namespace

int runPkcDriver(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  // Passes first: the IR-printing options list the pass names registered when they are made.
  mlir::pk::registerPkPasses();
  mlir::registerPassManagerCLOptions();
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << "pkc " << PKC_VERSION << "\n"; });
  cl::HideUnrelatedOptions({&category, &cl::getGeneralCategory()});
  // The statically linked LLVM libraries register options of their own (CFG printing, profile
  // data) in the general category: still accepted, but --help lists only pkc's and MLIR's.
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (llvm::is_contained(option->Categories, &cl::getGeneralCategory()) &&
        !name.starts_with("mlir-") && name != "help" && name != "help-list" && name != "version")
      option->setHiddenFlag(cl::Hidden);
  cl::ParseCommandLineOptions(argc, argv, "pkc: a compiler for multi-GPU kernels\n");

  if (emit == Phase::Cubin && outputPath == "-")
    return fail("--emit=cubin writes binary data: give an output file with -o");
  if (pushMaxBytes < 0)
    return fail("--push-max-bytes must be 0 (off) or a positive byte count");
  if (llMaxBytes < 0)
    return fail("--ll-max-bytes must be 0 (off) or a positive byte count");
  if (copyEngineMinBytes < -1)
    return fail("--copy-engine-min-bytes must be -1 (the defaults), 0 (off) or a positive byte count");
  if (tileBatch < 0 || tileBatch > 8)
    return fail("--tile-batch must be 0 (chosen by pkc) or a tile count from 1 to 8");
  if (tileThreads != 0 && tileThreads != 256 && tileThreads != 512 && tileThreads != 1024)
    return fail("--tile-threads must be 0 (chosen by pkc), 256, 512 or 1024");
  // Clang reports a bad -std value only as a note-level driver error and parses on with its
  // default, so check it here: C++ from 17 on (pk/spec.h uses fold expressions).
  static const llvm::Regex knownStandard("^(c|gnu)\\+\\+(17|20|23|26|1z|2a|2b|2c)$");
  if (!knownStandard.match(standard))
    return fail("-std=" + standard + ": C++ specs take c++17, c++20 (the default), c++23 or c++26 "
                "(or gnu++ of them); pk/spec.h needs C++17 or later");
  // A profile that cannot be read is the option's fault, not the spec's: said before parsing.
  if (!profilePath.empty()) {
    std::string error;
    if (!pk::loadProfileOrBuiltin(profilePath, error)) return fail("--profile: " + error);
  }
  if (tileStages < 2 || tileStages > 4)
    return fail("--tile-stages must be 2, 3 or 4");
  if (worldSize.getNumOccurrences() && (worldSize < 1 || worldSize > mlir::pk::kMaxRanks))
    return fail("--world-size=" + std::to_string(worldSize) + ": a launch has 1 to " +
                std::to_string(mlir::pk::kMaxRanks) + " ranks");
  if (shapes.getNumOccurrences() && !roofline.getNumOccurrences())
    return fail("--shape is read only with --roofline");
  // A spec from standard input ('-', as build tools pipe it) is read whole here; a C++ one is
  // then served to the front end from memory under the name diagnostics show.
  const bool fromStdin = inputPath == "-";
  std::optional<std::string> stdinText;
  bool cppSpec = isCppSpecPath(inputPath);
  if (!inputLanguage.empty() && !fromStdin)
    return fail("-x names the language of a spec read from standard input ('-'); a file's is "
                "its extension");
  if (!inputLanguage.empty() && inputLanguage != "c++" && inputLanguage != "mlir")
    return fail("-x takes c++ or mlir, not '" + inputLanguage + "'");
  if (fromStdin) {
    auto buffer = llvm::MemoryBuffer::getSTDIN();
    if (!buffer) return fail("cannot read the spec from standard input: " + buffer.getError().message());
    stdinText = (*buffer)->getBuffer().str();
    if (llvm::StringRef(*stdinText).contains('\0'))
      return fail("standard input holds binary data, not a spec");
    cppSpec = inputLanguage.empty() ? llvm::StringRef(*stdinText).contains("#include")
                                    : inputLanguage == "c++";
  } else if (llvm::sys::fs::is_directory(inputPath)) {
    return fail("'" + inputPath + "' is a directory, not a spec file");
  } else if (!llvm::sys::fs::exists(inputPath)) {
    return fail("no such file: '" + inputPath + "'");
  }
  // What diagnostics, the launcher and NVRTC call the spec.
  const std::string specPath = !fromStdin ? std::string(inputPath)
                               : cppSpec  ? std::string("<stdin>.pk.cpp")
                                          : std::string("<stdin>");

  mlir::DialectRegistry registry;
  registry.insert<mlir::pk::PkDialect, mlir::arith::ArithDialect, mlir::scf::SCFDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point at the spec's source; an IR dump of the op would only be noise.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // Refused before any work, so that no output is left behind without its depfile.
  if (writeDeps && depfile.empty()) return fail("-MD needs -MF <file>");
  // A spec from standard input is no file a build can depend on; its headers still are.
  std::vector<std::string> dependencies = {fromStdin ? std::string() : std::string(inputPath)};
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (cppSpec) {
    FrontendOptions fe;
    fe.includeDirs.assign(includeDirs.begin(), includeDirs.end());
    fe.defines.assign(defines.begin(), defines.end());
    fe.standard = standard;
    fe.onlyKernel = onlyKernel;
    fe.parseSeconds = std::max(1, int(parseSeconds));
    fe.text = stdinText;
    module = parseCppSpec(specPath, fe, context, &dependencies);
  } else {
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> file =
        stdinText ? llvm::MemoryBuffer::getMemBufferCopy(*stdinText, specPath)
                  : mlir::openInputFile(inputPath, &error);
    if (!file) return fail(error);
    if (llvm::StringRef(file->getBuffer()).contains('\0'))
      return fail("'" + inputPath + "' is a binary file, not a spec");
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  }
  if (!module) return 1;
  if (std::string error; !onlyKernel.empty() && !keepOnlyKernel(*module, onlyKernel, error))
    return fail("--kernel: " + error);

  // Launchers are typed from the spec-level signature, before the passes lower it.
  const bool launcher = emit == Phase::Launcher || emit == Phase::LauncherImpl;
  std::vector<mlir::pk::KernelSignature> signatures;
  mlir::pk::LauncherOptions lo;
  if (launcher) {
    auto sigs = mlir::pk::collectKernelSignatures(*module, sourceMgr);
    if (mlir::failed(sigs)) return 1;
    signatures = std::move(*sigs);
    lo.sourceName = llvm::sys::path::filename(specPath).str();
    lo.pkcVersion = PKC_VERSION;
    lo.cppNamespace = launcherNamespace;
    const std::string stem = fromStdin ? std::string("stdin") : specStem(inputPath);
    lo.headerInclude = launcherInclude.empty() ? "pk_kernels/" + stem + ".h"
                                               : std::string(launcherInclude);
  }

  std::string text;
  llvm::raw_string_ostream os(text);
  if (roofline.getNumOccurrences()) {
    if (roofline != "" && roofline != "json" && roofline != "text")
      return fail("--roofline takes no value, 'text' or 'json', not '" + roofline + "'");
    mlir::pk::RooflineInputs in;
    in.world = worldSize > 0 ? worldSize : 1;
    for (const std::string &spec : shapes) {
      llvm::StringRef arg, dims;
      std::tie(arg, dims) = llvm::StringRef(spec).split(':');
      int index = -1;
      std::vector<int64_t> extents;
      llvm::SmallVector<llvm::StringRef> parts;
      dims.split(parts, 'x');
      bool ok = !arg.getAsInteger(10, index) && index >= 0 && !dims.empty();
      for (llvm::StringRef d : parts) {
        int64_t v = 0;
        ok = ok && !d.getAsInteger(10, v) && v >= 0;
        extents.push_back(v);
      }
      if (!ok) return fail("--shape '" + spec + "': expected <argument index>:<d0>x<d1>...");
      in.shapes[index] = extents;
    }
    std::string error;
    auto profile = pk::loadProfileOrBuiltin(profilePath, error);
    if (!profile) return fail(error);
    auto kernels = mlir::pk::computeRoofline(*module, in, *profile);
    if (mlir::failed(kernels)) return 1;
    os << (roofline == "json" ? mlir::pk::formatRooflineJson(*kernels, in.world)
                              : mlir::pk::formatRooflineText(*kernels, in.world));
  } else if (emit == Phase::Mlir) {
    module->print(os);
  } else if (emit == Phase::Launcher) {
    mlir::pk::emitLauncherHeader(signatures, os, lo);
  } else {
    mlir::PassManager pm(&context);
    if (mlir::failed(mlir::applyPassManagerCLOptions(pm))) return 1;
    PipelineOptions options;
    options.profilePath = profilePath;
    options.allowMulticast = allowMulticast;
    options.worldSize = worldSize;
    options.pushMaxBytes = pushMaxBytes;
    options.llMaxBytes = llMaxBytes;
    options.copyEngineMinBytes = copyEngineMinBytes;
    options.tileBatch = tileBatch;
    options.tileThreads = tileThreads;
    options.tileStages = tileStages;
    options.templates = templates;
    options.splitK = splitK;
    buildDevicePipeline(pm, options);
    if (mlir::failed(pm.run(*module))) return 1;
    if (explain) {
      for (auto kernel : module->getOps<mlir::pk::KernelOp>()) {
        llvm::errs() << "pkc: decisions for kernel '" << kernel.getSymName() << "':\n";
        for (const std::string &d : mlir::pk::getDecisions(kernel))
          llvm::errs() << "  - " << d << "\n";
      }
    }
    if (emit == Phase::DeviceMlir) {
      module->print(os);
    } else {
      std::string cuda;
      llvm::raw_string_ostream cudaStream(cuda);
      mlir::pk::CudaEmitOptions eo;
      eo.sourceName = llvm::sys::path::filename(specPath).str();
      eo.pkcVersion = PKC_VERSION;
      if (mlir::failed(mlir::pk::emitCuda(*module, cudaStream, eo))) return 1;
      if (emit == Phase::Cuda) {
        os << cuda;
      } else if (emit == Phase::LauncherImpl) {
        if (mlir::failed(mlir::pk::emitLauncherSource(signatures, cuda, os, lo,
                                                      module->getLoc())))
          return 1;
      } else {
        NvrtcResult r = compileWithNvrtc(
            cuda, (fromStdin ? std::string("stdin") : llvm::sys::path::stem(inputPath).str()) + ".cu", arch,
            emit == Phase::Ptx ? NvrtcTarget::Ptx : NvrtcTarget::Cubin, fastCompile);
        if (!r.ok) {
          std::string opts;
          for (const std::string &o : r.options) opts += " " + o;
          return fail("NVRTC failed to compile the generated CUDA for " + arch + ":\n" + r.log +
                      "\n(reproduce: pkc " + inputPath + " --emit=cuda -o x.cu, then NVRTC "
                      "with" + opts + ")");
        }
        // ptxas's own performance warnings (a template's wgmmas serialised, say) reach the user;
        // a fast-compile build has notes of its own that say nothing of the real one.
        llvm::SmallVector<llvm::StringRef> logLines;
        llvm::StringRef(r.log).split(logLines, '\n');
        for (llvm::StringRef line : logLines)
          if (!fastCompile && line.contains("Potential Performance Loss"))
            llvm::errs() << "pkc: warning: " << line.trim() << "\n";
        os << r.output;
      }
    }
  }

  std::string error;
  // The depfile first: if it cannot be written, no output claims to be up to date without it.
  if (!depfile.empty()) {
    // The spec, then its headers in a fixed order (the front end's order varies from run to run).
    std::sort(dependencies.begin() + 1, dependencies.end());
    dependencies.erase(std::unique(dependencies.begin() + 1, dependencies.end()), dependencies.end());
    std::string deps = escapeForMake(outputPath) + ":";
    for (const std::string &d : dependencies)
      if (!d.empty()) deps += " \\\n  " + escapeForMake(d);
    deps += "\n";
    if (!writeAtomically(depfile, deps, error)) return fail(error);
  }
  if (!writeAtomically(outputPath, text, error)) return fail(error);
  if (outputPath != "-")
    llvm::errs() << "pkc: wrote " << outputPath << " (" << text.size() << " bytes)\n";
  return 0;
}

} // namespace pk

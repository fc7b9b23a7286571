// Typed C++ launchers: signatures read from the spec, host checks, the embedded CUDA.
#include "pk/Emitter/LauncherEmitter.h"
#include "Emitter.h"
#include <functional>
#include <set>

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/xxhash.h"

#include <pk/runtime/host_check.h>
#include <pk/runtime/template_params.h>

using namespace mlir;
using namespace mlir::pk;

namespace {

// `%x` at the argument's location in the spec text; empty when the text is not at hand.
std::string nameFromSource(Location loc, llvm::SourceMgr &sourceMgr) {
  // A C++ spec's parameter carries its name (the front end's NameLoc around its position).
  if (auto named = dyn_cast<NameLoc>(loc)) return named.getName().str();
  auto fileLoc = dyn_cast<FileLineColLoc>(loc);
  if (!fileLoc) return "";
  for (unsigned id = 1; id <= sourceMgr.getNumBuffers(); ++id) {
    const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(id);
    if (buffer->getBufferIdentifier() != fileLoc.getFilename().getValue()) continue;
    llvm::SMLoc at = sourceMgr.FindLocForLineAndColumn(id, fileLoc.getLine(),
                                                       fileLoc.getColumn());
    if (!at.isValid()) return "";
    llvm::StringRef rest(at.getPointer(), buffer->getBufferEnd() - at.getPointer());
    if (!rest.consume_front("%")) return "";
    return rest.take_while([](char c) { return llvm::isAlnum(c) || c == '_'; }).str();
  }
  return "";
}

// A C++ identifier that cannot clash with the launcher's own parameters or keywords.
std::string cppIdentifier(std::string name, unsigned index, llvm::StringSet<> &taken) {
  // C++ keywords and alternative tokens, and the names launchers declare themselves (a parameter
  // of such a name would be shadowed: an argument `step` passed the host loop's step).
  static const llvm::StringSet<> reserved = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // the launchers' own names
      "ctx", "stream", "world", "s", "args", "cfg", "kernel", "kernel_on", "region", "lc", "description", "lb",
      "ub", "step", "loaded", "lock", "message", "req", "all_peers_mapped", "kThreads", "kBlocks", "kFlagSlots",
      "kBlocksPerSm", "kSharedBytes", "kCuda", "pk", "std"};
  if (name.empty() || llvm::isDigit(name[0])) name = "arg" + std::to_string(index);
  // Names C++ reserves (a leading underscore and a capital) and the launchers' own pk_ prefix (host
  // loops' trip variables) get a suffix too.
  const bool reservedForm = (name.size() > 1 && name[0] == '_' && llvm::isUpper(name[1])) ||
                            llvm::StringRef(name).starts_with("pk_");
  if (reserved.contains(name) || reservedForm) name += "_";
  while (!taken.insert(name).second) name += "_";
  return name;
}

// A tag of the spec's code for the kernel's flag region (as the JIT tags its regions): two launcher
// libraries whose kernels share a name (other specs, other namespaces) must not share an epoch
// on one context, while launches of the same code may.
std::string codeTag(llvm::StringRef cuda) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(llvm::xxh3_64bits(cuda)));
  return std::string("#") + hex;
}

void addShapeChecks(const LauncherArg &a, std::vector<LauncherCheck> &checks) {
  std::string numel;
  for (size_t k = 0; k < a.shape.size(); ++k) {
    std::string dim = a.name + ".shape[" + std::to_string(k) + "]";
    if (a.shape[k] == ShapedType::kDynamic)
      checks.push_back({dim + " >= 0", dim + " must not be negative"});  // 0: empty
    else
      checks.push_back({dim + " == " + std::to_string(a.shape[k]),
                        dim + " must be " + std::to_string(a.shape[k]) + " (the spec's type)"});
    numel += (k ? " * " : "") + dim;
  }
  for (size_t k = a.shape.size(); k < 4; ++k)
    checks.push_back({a.name + ".shape[" + std::to_string(k) + "] == 1",
                      a.name + " must have rank " + std::to_string(a.shape.size())});
  checks.push_back({a.name + ".numel == " + numel,
                    a.name + ".numel must be the product of its shape"});
  if (a.isSymmetric) {
    checks.push_back({"all_peers_mapped(" + a.name + ".peer, world)",
                      a.name + " must be mapped on every rank (a SymmetricBuffer of ctx's world)"});
  } else {  // what would fault in the kernel (a sticky error): refused as the JIT refuses it
    checks.push_back({"(" + a.name + ".numel == 0 || " + a.name + ".data != nullptr)", a.name + ": null data"});
    checks.push_back({"reinterpret_cast<unsigned long long>(" + a.name + ".data) % sizeof(*" + a.name + ".data) == 0",
                      a.name + "'s data is not aligned to its elements"});
  }
}

// The shape relations the collectives' descriptions state, when both operands are arguments.
void addCollectiveChecks(Operation *op, const DenseMap<Value, std::string> &argNames,
                         std::vector<LauncherCheck> &checks) {
  if (!isa<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp>(op)) return;
  Value in = op->getOperand(0), out = op->getOperand(1);
  if (!argNames.count(in) || !argNames.count(out)) return;
  const std::string x = argNames.lookup(in), y = argNames.lookup(out);
  StringRef opName = op->getName().getStringRef();
  // `large`.shape[d] == world * `small`.shape[d]; the other dimensions but `except` agree.
  auto scaled = [&](const std::string &large, const std::string &small, int64_t d) {
    std::string at = ".shape[" + std::to_string(d) + "]";
    checks.push_back({large + at + " == world * " + small + at,
                      large + at + " must be the world size times " + small + at + " (" + opName.str() + ")"});
  };
  auto agreeBut = [&](int64_t a, int64_t b) {
    for (int k = 0; k < 4; ++k) {
      if (k == a || k == b) continue;
      std::string d = ".shape[" + std::to_string(k) + "]";
      checks.push_back({y + d + " == " + x + d, y + d + " must equal " + x + d + " (" + opName.str() + ")"});
    }
  };
  if (isa<AllReduceOp>(op)) {
    agreeBut(-1, -1);
  } else if (auto a2a = dyn_cast<AllToAllOp>(op)) {
    const int64_t s = a2a.getSplitDim(), c = a2a.getConcatDim();
    if (s == c) {
      agreeBut(-1, -1);
      const std::string at = ".shape[" + std::to_string(s) + "]";  // the dimension cut in blocks
      checks.push_back({x + at + " % world == 0",
                        x + at + " must be a multiple of the world size (" + opName.str() + ")"});
    } else {
      scaled(x, y, s);
      scaled(y, x, c);
      agreeBut(s, c);
    }
  } else {  // all_gather: y is large along its dimension; reduce_scatter: x
    const int64_t d = getCollectiveDim(op);
    if (in == out) return;  // in place: one tensor, chunks checked on the device
    if (isa<AllGatherOp>(op)) scaled(y, x, d);
    else scaled(x, y, d);
    agreeBut(d, -1);
  }
}

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

std::string parameterList(const KernelSignature &k) {
  std::string s = "pk::Context& ctx";
  for (const LauncherArg &a : k.args) s += ", " + a.cppType + " " + a.name;
  return s;
}

std::string cppString(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

struct LaunchFacts {
  int threads = 0, blocks = 0, flagSlots = 0, blocksPerSm = 1, sharedBytes = 0;
  bool flagsBySize = false;  // a flag region per size signature (pk/runtime/flag_key.h)
  std::string copyEngine;  // <collective>:<min bytes>:<x>:<y>:<root>, empty without a route
};

// The values of `// pk-launch <name> threads=.. blocks=.. flag_slots=..` in pkc's CUDA.
std::optional<LaunchFacts> launchFacts(llvm::StringRef cuda, llvm::StringRef kernel) {
  std::string marker = ("// pk-launch " + kernel + " ").str();
  size_t at = cuda.find(marker);
  if (at == StringRef::npos) return std::nullopt;
  llvm::StringRef line = cuda.substr(at + marker.size()).take_until([](char c) { return c == '\n'; });
  LaunchFacts f;
  llvm::SmallVector<llvm::StringRef> fields;
  line.split(fields, ' ', -1, false);
  for (llvm::StringRef field : fields) {
    auto [key, value] = field.split('=');
    int v = 0;
    if (value.getAsInteger(10, v)) continue;
    if (key == "threads") f.threads = v;
    if (key == "blocks") f.blocks = v;
    if (key == "flag_slots") f.flagSlots = v;
    if (key == "blocks_per_sm") f.blocksPerSm = v;
    if (key == "smem") f.sharedBytes = v;
    if (key == "flags_by_size") f.flagsBySize = v == 1;
  }
  for (llvm::StringRef field : fields)
    if (field.consume_front("copy_engine=")) f.copyEngine = field.str();
  if (f.threads <= 0 || f.blocks <= 0) return std::nullopt;
  return f;
}

// The launcher's branch to the copy-engine route (pk/runtime/copy_engine.h) for messages of
// at least the route's size; the kernel launch follows for smaller ones.
LogicalResult emitCopyEngineBranch(const KernelSignature &k, llvm::StringRef route,
                                   llvm::raw_ostream &os, Location loc) {
  if (route.empty()) return success();
  llvm::SmallVector<llvm::StringRef> parts;
  route.split(parts, ':');
  int64_t min = 0, x = -1, y = -1, root = -1;
  if (parts.size() != 5 || parts[1].getAsInteger(10, min) || parts[2].getAsInteger(10, x) ||
      parts[3].getAsInteger(10, y) || parts[4].getAsInteger(10, root) || x < 0 || y < 0 ||
      x >= int64_t(k.args.size()) || y >= int64_t(k.args.size()) ||
      root >= int64_t(k.args.size()) || !k.args[x].isSymmetric || !k.args[y].isTensor)
    return emitError(loc, "malformed copy_engine route '") << route << "' for " << k.name;
  const LauncherArg &in = k.args[x], &out = k.args[y];
  std::string outPtr = out.isSymmetric ? out.name + ".peer[ctx.rank()]" : out.name + ".data";
  os << "  {\n"
     << "    // pkc's copy-engine route (rule 1): large messages are host-issued copy-engine pulls.\n"
     << "    const pk::CopyEngineRoute route{pk::CopyCollective::" << parts[0] << ", " << min
     << "LL, " << x << ", " << y << ", " << root << "};\n"
     << "    const long long message = pk::copy_engine_message_bytes(route.kind, " << in.name
     << ".numel, " << out.name << ".numel, ctx.world(), int(sizeof(*" << in.name
     << ".peer[0])));\n"
     << "    if (pk::takes_copy_engine(ctx, route, message))\n"
     << "      return pk::copy_engine_collective(ctx, " << cppString(k.name)
     << ", route.kind, reinterpret_cast<void* const*>(" << in.name << ".peer), " << outPtr
     << ", message, " << (root >= 0 ? "static_cast<long long>(" + k.args[root].name + ")" : "-1")
     << ", stream);\n"
     << "  }\n";
  return success();
}

// The kernel's own argument checks as pkc wrote them beside its CUDA (`// pk-host-check`,
// shared with the JIT): the launcher refuses what the kernel would, at the call.
// `skipTwinRules`: a template part's own rules are left to its launcher, which runs its twin.
LogicalResult emitHostCheckConditions(const KernelSignature &k, llvm::StringRef cuda,
                             llvm::raw_ostream &os, Location loc, const std::string &orElse = "",
                             bool skipTwinRules = false) {
  ::pk::Result<std::vector<::pk::HostCheck>> checks = ::pk::host_checks_of(cuda.str(), k.name);
  if (!checks.is_ok()) return emitError(loc, checks.status().message());
  // Two passes where a twin runs: every rule that refuses the call first (as the JIT checks
  // them), then the template-only rules that send it to the twin.
  for (int pass = 0; pass < (orElse.empty() ? 1 : 2); ++pass)
    for (const ::pk::HostCheck &c : *checks) {
      if (!orElse.empty() && c.twin_rule != (pass == 1)) continue;
      bool ok = true;
      auto ref = [&](int a, bool extent) {
        ok = ok && a < int(k.args.size()) && k.args[a].isTensor == extent;
      };
      for (const ::pk::HostExpr *e : {&c.condition, &c.expected, &c.actual})
        ::pk::for_each_host_ref(*e, ref);
      if (!ok)
        return emitError(loc, "pk-host-check ") << c.id << " of " << k.name
               << " reads an argument the kernel does not have as such";
      auto name = [&](int a) { return k.args[a].name; };
      if (skipTwinRules && c.twin_rule) continue;
      os << "  // pk-check " << c.id << "\n";
      // A size that divides by zero refuses the call (the JIT's evaluation does) before C++ would;
      // a constant divisor other than 0 and -1 needs no guard, and each guard is made once.
      std::vector<std::string> guards;
      for (const ::pk::HostExpr *e : {&c.condition, &c.expected, &c.actual})
        ::pk::for_each_host_division(*e, [&](const ::pk::HostExpr &a, const ::pk::HostExpr &b) {
          if (b.kind == ::pk::HostExpr::Kind::constant && b.value != 0 && b.value != -1) return;
          std::string g = ::pk::host_expr_cpp(a, name) + ", " + ::pk::host_expr_cpp(b, name);
          if (!llvm::is_contained(guards, g)) guards.push_back(std::move(g));
        });
      for (const std::string &g : guards)
        os << "  if (pk::host_division_fails(" << g << "))\n"
           << "    return pk::Status::error(" << cppString(k.name + ": " + c.message + ": a size divides by zero")
           << ");\n";
      if (!orElse.empty() && c.twin_rule) {  // a template-only rule broken: the general-path twin runs
        os << "  if (!" << ::pk::host_expr_cpp(c.condition, name) << ")\n"
           << "    return " << orElse << ";\n";
        continue;
      }
      os << "  if (!" << ::pk::host_expr_cpp(c.condition, name) << ")\n"
         << "    return pk::Status::error(" << cppString(k.name + ": " + c.message + ": expected ")
         << " + std::to_string(" << ::pk::host_expr_cpp(c.expected, name) << ") + \", got \" + "
         << "std::to_string(" << ::pk::host_expr_cpp(c.actual, name) << "));\n";
    }
  return success();
}

// Every rank has the same sizes, so when all tensors are empty every rank returns alike
// (no launch, no epoch spent): a collective on nothing is a no-op.
void emitEmptySkip(const KernelSignature &k, llvm::raw_ostream &os) {
  std::string all;
  for (const LauncherArg &a : k.args)
    if (a.isTensor) all += (all.empty() ? "" : " && ") + a.name + ".numel == 0";
  if (all.empty()) return;
  os << "  if (" << all << ")\n"
     << "    return pk::Status::ok();  // empty tensors: nothing to move, on any rank\n";
}

// A launcher's signature, the world check and the shape checks of its signature.
void emitLauncherOpening(const KernelSignature &k, llvm::raw_ostream &os) {
  os << "\npk::Status " << k.name << "(" << parameterList(k) << ", cudaStream_t stream) {\n"
     << "  const long long world = ctx.world();\n"
     << "  PK_RETURN_IF_ERROR(pk::check_world(ctx.world()).with_context(\"" << k.name << "\"));\n";
  for (const LauncherCheck &c : k.checks)
    os << "  if (!(" << c.condition << "))\n"
       << "    return pk::Status::error(" << cppString(k.name + ": " + c.message) << ");\n";
}

// A kernel that instantiates a template (the GEMMs): the same checks, then the runtime fills
// its parameter block from the launch description in the embedded CUDA (read once).
LogicalResult emitTemplateLauncher(const KernelSignature &k, llvm::StringRef cuda,
                                   llvm::raw_ostream &os, Location loc) {
  ::pk::Result<::pk::TemplateLaunch> t = ::pk::template_launch_of(cuda.str(), k.name);
  if (!t.is_ok()) return emitError(loc, t.status().message());
  // A GEMM's general-path twin (a launcher of the same arguments) takes the sizes and addresses
  // the template's TMA cannot.
  std::string twinCall;
  if (!t->fallback.empty()) {
    KernelSignature twin = k;
    twin.name = t->fallback;
    os << "\npk::Status " << twin.name << "(" << parameterList(twin) << ", cudaStream_t stream);\n";
    twinCall = t->fallback + "(ctx";
    for (const LauncherArg &a : k.args) twinCall += ", " + a.name;
    twinCall += ", stream)";
  }
  emitLauncherOpening(k, os);
  if (failed(emitHostCheckConditions(k, cuda, os, loc, twinCall))) return failure();
  emitEmptySkip(k, os);
  os << "  (void)world;\n"
     << "  // The launch description pkc wrote above the kernel (pk/runtime/template_params.h).\n"
     << "  static const pk::Result<pk::TemplateLaunch> description =\n"
     << "      pk::template_launch_of(kCuda, " << cppString(k.name) << ");\n"
     << "  if (!description.is_ok()) return description.status();\n"
     << "  PK_ASSIGN_OR_RETURN(pk::Kernel kernel, kernel_on(ctx, " << cppString(k.name) << "));\n"
     << "  const std::vector<pk::TemplateArg> args = {";
  for (auto [i, a] : llvm::enumerate(k.args))
    os << (i ? ", " : "") << "pk::template_arg(" << a.name << ", ctx.rank())";
  os << "};\n";
  if (!twinCall.empty())
    os << "  if (!pk::check_template_fits(ctx, *description, args).is_ok()) return " << twinCall << ";\n";
  os << "  return pk::launch_template(ctx, kernel, *description, args, stream, " << cppString(codeTag(cuda)) << ");\n}\n";
  return success();
}

// The launcher of one kernel launch: checks, then the launch (or the copy-engine route).
LogicalResult emitKernelLauncher(const KernelSignature &k, llvm::StringRef cuda, llvm::raw_ostream &os,
                                 Location loc) {
  if (cuda.contains("// pk-template " + k.name + " ")) return emitTemplateLauncher(k, cuda, os, loc);
  std::optional<LaunchFacts> facts = launchFacts(cuda, k.name);
  if (!facts)
    return emitError(loc, "no '// pk-launch ") << k.name << "' line in the generated CUDA";
  os << "\npk::Status " << k.name << "(" << parameterList(k) << ", cudaStream_t stream) {\n"
     << "  constexpr int kThreads = " << facts->threads << ", kBlocks = " << facts->blocks
     << ", kFlagSlots = " << facts->flagSlots << ", kBlocksPerSm = " << facts->blocksPerSm
     << ";\n"
     << "  const long long world = ctx.world();\n"
     << "  PK_RETURN_IF_ERROR(pk::check_world(ctx.world()).with_context(\"" << k.name
     << "\"));\n"
     << "  if (ctx.flag_slots() < kBlocks * kFlagSlots)\n"
     << "    return pk::Status::error(\"" << k.name << ": the context has \" + "
     << "std::to_string(ctx.flag_slots()) + \" flag slots; the kernel needs \" + "
     << "std::to_string(kBlocks * kFlagSlots));\n";
  for (const LauncherCheck &c : k.checks)
    os << "  if (!(" << c.condition << "))\n"
       << "    return pk::Status::error(" << cppString(k.name + ": " + c.message) << ");\n";
  if (failed(emitHostCheckConditions(k, cuda, os, loc))) return failure();
  emitEmptySkip(k, os);
  if (failed(emitCopyEngineBranch(k, facts->copyEngine, os, loc))) return failure();
  os << "  (void)world;\n"
     << "  PK_ASSIGN_OR_RETURN(pk::Kernel kernel, kernel_on(ctx, " << cppString(k.name)
     << "));\n"
     << "  pk::LaunchConfig cfg;\n"
     << "  cfg.grid = dim3(pk::rank_grid(ctx, kBlocks, kBlocksPerSm));  // 1/W of it if W ranks share the GPU\n"
     << "  cfg.block = dim3(kThreads);\n"
     << "  cfg.shared_bytes = " << facts->sharedBytes << ";  // prefetch rings\n"
     << "  // The kernel's own flag region and next epoch: only once the checks passed.\n";
  if (facts->flagsBySize) {  // its waits count by its sizes: a region per size signature
    os << "  const std::string region = pk::flag_key_by_size(" << cppString(k.name + codeTag(cuda));
    for (const LauncherArg &a : k.args) os << ", " << a.name;
    os << ");\n";
  } else {
    os << "  const std::string region = " << cppString(k.name + codeTag(cuda)) << ";\n";
  }
  os << "  PK_ASSIGN_OR_RETURN(pk::LaunchContext lc, ctx.make_launch_context(region));\n"
     << "  pk::KernelArgs args;\n"
     << "  args.add(lc);\n";
  for (const LauncherArg &a : k.args) os << "  args.add(" << a.name << ");\n";
  os << "  pk::Status s = kernel.launch(cfg, stream, args);\n"
     << "  if (!s.is_ok()) ctx.retract_launch(region);  // nothing ran: keep the epochs in step\n"
     << "  return s;\n}\n";
  return success();
}

// A kernel pkc runs as several launches (`// pk-sequence <name> parts=a,b loop=...`): its parts
// in order and its host loops (parts first..first+count-1 once per trip, bounds as host
// expressions); no parts for a kernel of one launch.
struct Sequence {
  struct Loop {
    int first = 0, count = 0;
    std::string bounds[3];  // lb, ub, step
  };
  std::vector<std::string> parts;
  std::vector<Loop> loops;  // outermost first (nested loops follow the loop around them)
  // How many host loops run part i.
  int depthAt(size_t i) const {
    int d = 0;
    for (const Loop &l : loops) d += int(i) >= l.first && int(i) < l.first + l.count;
    return d;
  }
};

Sequence sequenceOf(llvm::StringRef cuda, llvm::StringRef kernel) {
  Sequence s;
  std::string marker = ("// pk-sequence " + kernel + " ").str();
  size_t at = cuda.find(marker);
  if (at == StringRef::npos) return s;
  llvm::StringRef line = cuda.substr(at + marker.size()).take_until([](char c) { return c == '\n'; });
  llvm::SmallVector<llvm::StringRef> fields;
  line.split(fields, ' ', -1, false);
  for (llvm::StringRef f : fields) {
    if (f.consume_front("parts=")) {
      llvm::SmallVector<llvm::StringRef> names;
      f.split(names, ',', -1, false);
      s.parts.assign(names.begin(), names.end());
    } else if (f.consume_front("loop=")) {
      Sequence::Loop l;
      auto [first, rest] = f.split(':');
      auto [count, bounds] = rest.split(':');
      llvm::SmallVector<llvm::StringRef> b;
      bounds.split(b, ';');
      if (first.getAsInteger(10, l.first) || count.getAsInteger(10, l.count) || b.size() != 3) continue;
      for (int k = 0; k < 3; ++k) l.bounds[k] = b[k].str();
      s.loops.push_back(l);
    }
  }
  return s;
}

// A kernel of several launches: each part's launcher (file-local; a host loop's parts take the
// trip last), then the kernel's, which runs the checks of every part outside a host loop before
// launching the parts in order on `stream`.
LogicalResult emitSequenceLauncher(const KernelSignature &k, const Sequence &seq, llvm::StringRef cuda,
                                   llvm::raw_ostream &os, Location loc) {
  std::vector<KernelSignature> partSigs;
  std::set<std::string> twinParts;  // parts with a general-path twin
  os << "\nnamespace {\n";
  for (auto [i, name] : llvm::enumerate(seq.parts)) {
    KernelSignature p = k;
    p.name = name;
    for (int d = 0; d < seq.depthAt(i); ++d) {  // the trips' variables, outermost first
      LauncherArg trip;
      trip.name = "pk_trip" + std::to_string(d);
      trip.cppType = "long long";
      trip.specType = "index";
      p.args.push_back(trip);
    }
    if (failed(emitKernelLauncher(p, cuda, os, loc))) return failure();
    // A template part's general-path twin, which its launcher calls for the sizes TMA cannot take.
    ::pk::Result<::pk::TemplateLaunch> t = ::pk::template_launch_of(cuda.str(), p.name);
    if (t.is_ok() && !t->fallback.empty()) {
      KernelSignature twin = p;
      twin.name = t->fallback;
      if (failed(emitKernelLauncher(twin, cuda, os, loc))) return failure();
      twinParts.insert(p.name);
    }
    partSigs.push_back(std::move(p));
  }
  os << "\n}  // namespace\n";
  emitLauncherOpening(k, os);
  os << "  // Every launch's checks first, so the call runs all of its launches or none (a host\n"
     << "  // loop's parts check theirs each trip).\n";
  for (auto [i, p] : llvm::enumerate(partSigs))
    if (!seq.depthAt(i) && failed(emitHostCheckConditions(p, cuda, os, loc, "", twinParts.count(p.name) > 0)))
      return failure();
  os << "  (void)world;\n";
  auto call = [&](const KernelSignature &p, const std::string &indent) {
    os << indent << "PK_RETURN_IF_ERROR(" << p.name << "(ctx";
    for (const LauncherArg &a : p.args) os << ", " << a.name;
    os << ", stream));\n";
  };
  auto name = [&](int a) { return k.args[a].name; };
  // Parts [begin, end) inside `entered` loops (in line order), at indentation `indent`.
  std::function<LogicalResult(int, int, size_t, const std::string &)> emitRange =
      [&](int begin, int end, size_t entered, const std::string &indent) -> LogicalResult {
    for (int i = begin; i < end;) {
      const Sequence::Loop *l = nullptr;
      for (size_t j = entered; j < seq.loops.size() && !l; ++j)
        if (seq.loops[j].first == i && seq.loops[j].first + seq.loops[j].count <= end) l = &seq.loops[j];
      if (!l) {
        call(partSigs[size_t(i++)], indent);
        continue;
      }
      std::string bounds[3];
      for (int b = 0; b < 3; ++b) {
        ::pk::Result<::pk::HostExpr> e = ::pk::parse_host_expr(l->bounds[b]);
        if (!e.is_ok()) return emitError(loc, "pk-sequence ") << k.name << ": " << e.status().message();
        bounds[b] = ::pk::host_expr_cpp(*e, name);
      }
      const int depth = [&] {  // loops around this one: those before it in line order holding it
        int d = 0;
        for (const Sequence::Loop *o = seq.loops.data(); o != l; ++o)
          d += o->first <= l->first && l->first + l->count <= o->first + o->count;
        return d;
      }();
      const std::string var = "pk_trip" + std::to_string(depth);
      os << indent << "{  // a host loop of launches\n"
         << indent << "  const long long lb = " << bounds[0] << ", ub = " << bounds[1] << ", step = " << bounds[2] << ";\n"
         << indent << "  if (step <= 0) return pk::Status::error(" << cppString(k.name + ": a host loop's step must be positive") << ");\n"
         << indent << "  for (long long " << var << " = lb; " << var << " < ub; " << var << " += step) {\n";
      if (failed(emitRange(l->first, l->first + l->count, size_t(l - seq.loops.data()) + 1, indent + "    ")))
        return failure();
      os << indent << "  }\n" << indent << "}\n";
      i = l->first + l->count;
    }
    return success();
  };
  if (failed(emitRange(0, int(partSigs.size()), 0, "  "))) return failure();
  os << "  return pk::Status::ok();\n}\n";
  return success();
}

} // namespace

FailureOr<std::vector<KernelSignature>>
mlir::pk::collectKernelSignatures(ModuleOp module, llvm::SourceMgr &sourceMgr) {
  std::vector<KernelSignature> out;
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    KernelSignature sig;
    sig.name = kernel.getSymName().str();
    llvm::StringSet<> taken;
    DenseMap<Value, std::string> argNames;
    for (auto [i, arg] : llvm::enumerate(kernel.getBody().front().getArguments())) {
      LauncherArg a;
      a.cppType = cuda::argumentTypeName(arg.getType());
      if (a.cppType.empty())
        return kernel.emitError("no C++ launcher type for argument #") << i << " of type "
               << arg.getType();
      a.name = cppIdentifier(nameFromSource(arg.getLoc(), sourceMgr), i, taken);
      a.specType = typeText(arg.getType());
      if (auto t = dyn_cast<SymTensorType>(arg.getType())) {
        a.isTensor = a.isSymmetric = true;
        a.shape.assign(t.getShape().begin(), t.getShape().end());
      } else if (auto t = dyn_cast<LocalTensorType>(arg.getType())) {
        a.isTensor = true;
        a.shape.assign(t.getShape().begin(), t.getShape().end());
      }
      if (a.shape.size() > 4)
        return kernel.emitError("argument '") << a.name << "' has rank " << a.shape.size()
               << "; pk tensors have at most 4 dimensions";
      if (a.isTensor) addShapeChecks(a, sig.checks);
      argNames[arg] = a.name;
      sig.args.push_back(std::move(a));
    }
    kernel.walk([&](Operation *op) { addCollectiveChecks(op, argNames, sig.checks); });
    out.push_back(std::move(sig));
  }
  return out;
}

void mlir::pk::emitLauncherHeader(const std::vector<KernelSignature> &kernels,
                                  llvm::raw_ostream &os, const LauncherOptions &options) {
  os << "// Generated by pkc " << options.pkcVersion << " from " << options.sourceName
     << ": typed launchers. Do not edit: change the spec and rebuild.\n"
     << "#pragma once\n"
     << "#include <cuda_runtime_api.h>\n\n"
     << "#include <pk/runtime/context.h>\n"
     << "#include <pk/runtime/dtype.h>\n"
     << "#include <pk/runtime/status.h>\n\n"
     << "namespace " << options.cppNamespace << " {\n";
  for (const KernelSignature &k : kernels) {
    os << "\n// " << k.name << "(";
    for (auto [i, a] : llvm::enumerate(k.args))
      os << (i ? ", " : "") << a.name << ": " << a.specType;
    os << ")\n"
       << "// Collective: every rank calls it, in the same order as its other pk launches on ctx.\n"
       << "// Checks shapes and the world size on the host first; launches on `stream`.\n"
       << "pk::Status " << k.name << "(" << parameterList(k) << ", cudaStream_t stream);\n"
       << "// The same on ctx.stream().\n"
       << "inline pk::Status " << k.name << "(" << parameterList(k) << ") {\n"
       << "  return " << k.name << "(ctx";
    for (const LauncherArg &a : k.args) os << ", " << a.name;
    os << ", ctx.stream());\n}\n";
  }
  os << "\n}  // namespace " << options.cppNamespace << "\n";
}

LogicalResult mlir::pk::emitLauncherSource(const std::vector<KernelSignature> &kernels,
                                           llvm::StringRef cuda, llvm::raw_ostream &os,
                                           const LauncherOptions &options, Location loc) {
  static constexpr llvm::StringLiteral delimiter = "pk_cuda";
  if (cuda.contains(")pk_cuda\""))
    return emitError(loc, "the generated CUDA contains the raw-string delimiter ')pk_cuda\"'");
  os << "// Generated by pkc " << options.pkcVersion << " from " << options.sourceName
     << ": the launchers declared in " << options.headerInclude
     << ". Do not edit: change the spec and rebuild.\n"
     << "#include \"" << options.headerInclude << "\"\n\n"
     << "#include <map>\n#include <memory>\n#include <mutex>\n\n"
     << "#include <pk/runtime/checks.h>\n"
     << "#include <pk/runtime/copy_engine.h>\n"
     << "#include <pk/runtime/cuda_check.h>\n"
     << "#include <pk/runtime/flag_key.h>\n"
     << "#include <pk/runtime/kernel_args.h>\n"
     << "#include <pk/runtime/module.h>\n"
     << "#include <pk/runtime/shared_gpu.h>\n"
     << "#include <pk/runtime/template_launch.h>\n\n"
     << "namespace " << options.cppNamespace << " {\n"
     << "namespace {\n\n"
     << "// pkc's CUDA for " << options.sourceName
     << ". NVRTC compiles it for the device in hand on first use;\n"
     << "// the runtime caches the binary on disk.\n"
     << "const char kCuda[] = R\"" << delimiter << "(" << cuda << ")" << delimiter << "\";\n\n"
     << "template <class T>\n"
     << "bool all_peers_mapped(T* const* peers, long long world) {\n"
     << "  for (long long r = 0; r < world; ++r)\n"
     << "    if (!peers[r]) return false;\n"
     << "  return true;\n"
     << "}\n\n"
     << "// Modules belong to a device's context: each rank loads its own, once.\n"
     << "pk::Result<pk::Kernel> kernel_on(pk::Context& ctx, const char* name) {\n"
     << "  static std::mutex mutex;\n"
     << "  static std::map<int, std::unique_ptr<pk::Module>> modules;\n"
     << "  std::lock_guard<std::mutex> lock(mutex);\n"
     << "  std::unique_ptr<pk::Module>& module = modules[ctx.device()];\n"
     << "  if (!module) {\n"
     << "    PK_CUDA_TRY(cudaSetDevice(ctx.device()));\n"
     << "    pk::CompileRequest req;\n"
     << "    req.source = kCuda;\n"
     << "    req.program_name = " << cppString(options.sourceName + ".cu") << ";\n"
     << "    auto loaded = pk::Module::compile_and_load(req);\n"
     << "    if (!loaded.is_ok()) return loaded.status();\n"
     << "    module = std::move(*loaded);\n"
     << "  }\n"
     << "  return module->kernel(name);\n"
     << "}\n\n"
     << "}  // namespace\n";
  for (const KernelSignature &k : kernels) {
    Sequence seq = sequenceOf(cuda, k.name);
    if (failed(seq.parts.empty() ? emitKernelLauncher(k, cuda, os, loc)
                                 : emitSequenceLauncher(k, seq, cuda, os, loc)))
      return failure();
    // A template kernel's general-path twin: the launcher above calls it for the sizes the
    // template cannot take, so it is defined here too (same arguments, not in the header).
    ::pk::Result<::pk::TemplateLaunch> t = ::pk::template_launch_of(cuda.str(), k.name);
    if (seq.parts.empty() && t.is_ok() && !t->fallback.empty()) {
      KernelSignature twin = k;
      twin.name = t->fallback;
      if (failed(emitKernelLauncher(twin, cuda, os, loc))) return failure();
    }
  }
  os << "\n}  // namespace " << options.cppNamespace << "\n";
  return success();
}

// Emission pattern for kernels pk-lower-gemm turned into GEMM template instances: the kernel
// is a thin extern "C" wrapper around pk::gemm::lcsc_run<Job>. Above it pkc writes how to
// launch it (pk/runtime/template_params.h): the Job's parameter block field by field, the grid,
// the shared memory, the outputs to zero and the host checks, so the JIT, pk_torch and the
// typed launchers launch it with no template-specific host code. static_asserts tie that
// description to the template's real layout. (The nvcc host plans in
// templates/include/pk/templates/host/fused_gemm.cuh fill the same block for the benchmarks.)
#include "Emitter.h"
#include "ElementProgram.h"
#include "TemplateDescriber.h"


using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

namespace {


struct JobInfo {
  const char *job, *header, *type;
};

const JobInfo *findJob(StringRef name) {
  static const JobInfo jobs[] = {
      {"gemm", "gemm.cuh", "GemmJob"},
      {"gemm_rs", "gemm_rs.cuh", "GemmRsJob"},
      {"gemm_ar", "gemm_ar.cuh", "GemmArJob"},
      {"ag_gemm", "ag_gemm.cuh", "AgGemmJob"},
  };
  for (const JobInfo &j : jobs)
    if (name == j.job) return &j;
  return nullptr;
}

// The template's constants the description relies on (static_asserted in the output).
constexpr int kBM = 128, kBN = 256, kBK = 64, kBoxRows = 64, kBoxCols = 64, kGroupM = 16;
constexpr int kBBox = 64;  // an N-major B's TMA box: 64 K-rows x 64 columns
// split_k.cuh: floats of a consumer's partial, pieces per tile, counter words ahead of the partials
constexpr int kSplitPartial = 64 * 256, kMaxSplits = 16, kSplitCounters = 1024;
constexpr unsigned kSharedBytes = 231424;
constexpr int kAgRowSlot = 128;
constexpr int kKernelFlagRegion = 2048;  // pk/runtime/context.h (host only)

// The tile order's fields (pk/templates/tile_order.cuh).
void order(TemplateDescriber &d, const std::string &segments, const std::string &tm, const std::string &tn,
           const std::string &first, int interleave, const std::string &rotate) {
  d.i32("order.segments", segments);
  d.i32("order.seg_tiles_m", tm);
  d.i32("order.tiles_n", tn);
  d.i32("order.group_m", std::to_string(kGroupM));
  d.i32("order.first_seg", first);
  d.i32("order.interleave", std::to_string(interleave));
  d.i32("order.rotate", rotate);
}

// A [rows, K] row-major operand of `bytes`-byte elements and the K every operand shares (K its
// dimension kDim, and A's kDimA: 2 in a batched GEMM's [B, rows, K]).
void operand(TemplateDescriber &d, int64_t arg, const std::string &what, int64_t kArg, int bytes = 2,
             int kDim = 1, int kDimA = 1) {
  const std::string per16 = std::to_string(16 / bytes);
  d.check("0", "rem(" + dim(arg, kDim) + "," + per16 + ")",
          what + "'s rows must be whole 16-byte TMA pitches: K % " + per16 + " (shown) must be 0", true);
  if (arg != kArg)
    d.check(dim(kArg, kDimA), dim(arg, kDim), what + " must have A's K columns", true);
}

// A 2-D B's tensor map: [N, K] in 256 x 64 boxes, or [K, N] in 64 x 64 boxes (N-major, four per stage).
void bMap(TemplateDescriber &d, int64_t b, const std::string &K, const std::string &N, bool bNMajor) {
  if (bNMajor) d.field(FK::tmap, "b", b, {N, K}, {kBBox, kBK});
  else d.field(FK::tmap, "b", b, {K, N}, {kBK, kBN});
}

// Split-K (templates/include/pk/templates/split_k.cuh): an output of fewer tiles than the SMs
// cuts each tile's K steps into pieces run by different blocks (at most 16, of at least 4 steps
// each, no more than fill the SMs in one wave), and the grid covers the pieces. Their partial sums
// go through a workspace of 4 KiB of counters and 128 KiB per piece, none when unsplit.
// (--split-k=false, `off`: one piece, no workspace.)
void splitK(TemplateDescriber &d, const std::string &tiles, const std::string &ksteps, bool off) {
  const std::string splits =
      off ? "1" : "max(1,min(min(div(sms," + tiles + "),div(" + ksteps + ",4))," + std::to_string(kMaxSplits) + "))";
  const std::string pieceBytes = std::to_string(2 * kSplitPartial * 4);  // two consumers' partials
  const std::string counterBytes = std::to_string(kSplitCounters * 4);
  d.i32("splits", splits);
  d.field(FK::workspace, "split_ws");
  d.t.fields.back().value = expr(off ? "0" : "mul(sgt(" + splits + ",1),add(" + counterBytes + ",mul(" + tiles +
                                                ",mul(" + splits + "," + pieceBytes + "))))");
  d.t.grid = expr("balanced(mul(" + tiles + "," + splits + "),sms)");
}

::pk::TemplateLaunch describe(StringRef job, DictionaryAttr facts, StringRef kernel,
                              const std::vector<EpilogueField> &epilogue,
                              std::vector<::pk::HostCheck> &checks) {
  TemplateDescriber d;
  d.t.kernel = kernel.str();
  d.t.threads = 384;
  d.t.shared_bytes = kSharedBytes;
  auto arg = [&](const char *role) { return facts.getAs<IntegerAttr>(role).getInt(); };
  const int64_t a = arg("a"), b = arg("b"), c = arg("c");
  auto layout = facts.getAs<StringAttr>("b_layout"), aLayout = facts.getAs<StringAttr>("a_layout");
  const bool bNMajor = layout && layout.getValue() == "kn";  // B stored [K, N]
  const bool aMMajor = aLayout && aLayout.getValue() == "km";  // A stored [K, M] (plain GEMM only)
  // 8-bit operands (fp8, i8) move as 2-byte units (pk/templates/gemm_tile.cuh): their K is
  // counted in them.
  auto in = facts.getAs<StringAttr>("in");
  const bool fp8 = in && (in.getValue() == "e4m3" || in.getValue() == "e5m2" || in.getValue() == "i8");
  // A weight-only quantised B: fp8 beside a bf16 / f16 A, its [N, K] box 256 rows of 64 fp8 (32
  // two-byte units), unswizzled, which the template widens in its ring (widen_b.cuh).
  auto inB = facts.getAs<StringAttr>("in_b");
  const bool widenB = !fp8 && inB && (inB.getValue() == "e4m3" || inB.getValue() == "e5m2" || inB.getValue() == "i8");
  // A batched GEMM's operands are [B, M, K], [B, N, K] or [B, K, N] and C [B, M, N]: every
  // dimension one further in, and B of them, each tile at its own batch (3-D TMA maps).
  // A shared B (one 2-D weight for every batch) keeps its 2-D dimensions: xb.
  const bool batched = bool(facts.get("batched")), sharedB = bool(facts.get("shared_b"));
  const bool noSplit = bool(facts.get("no_split_k"));
  const int x = batched ? 1 : 0, xb = batched && !sharedB ? 1 : 0;
  const std::string K = fp8 ? "div(" + dim(a, 1 + x) + ",2)" : aMMajor ? dim(a, 0) : dim(a, 1 + x),
                    N = dim(b, (bNMajor ? 1 : 0) + xb);
  const std::string tn = "cdiv(" + N + "," + std::to_string(kBN) + ")";
  if (aMMajor)
    d.check("0", "rem(" + dim(a, 1) + ",8)", "A's rows must be whole 16-byte TMA pitches: M % 8 (shown) must be 0",
            true);
  else
    operand(d, a, "A", a, fp8 ? 1 : 2, 1 + x);
  if (bNMajor) {
    d.check("0", "rem(" + N + ",8)", "B's rows must be whole 16-byte TMA pitches: N % 8 (shown) must be 0", true);
    d.check(K, dim(b, xb), aMMajor ? "B must have A's K rows (A stored [K, M])" : "B must have A's K rows", true);
  } else {
    operand(d, b, "B", a, fp8 || widenB ? 1 : 2, 1 + xb, aMMajor ? 0 : 1 + x);
  }
  // An f32 C moves as 2-byte units too: its rows are 2N of them, in boxes of 32 f32 columns.
  auto out = facts.getAs<StringAttr>("out");
  const bool f32Out = out && (out.getValue() == "f32" || out.getValue() == "i32");  // 4 bytes
  const std::string cPer16 = f32Out ? "4" : "8", cRow = f32Out ? "mul(" + N + ",2)" : N;
  d.check("0", "rem(" + N + "," + cPer16 + ")",
          "C's rows must be whole 16-byte TMA pitches: N % " + cPer16 + " (shown) must be 0", true);
  if (batched) {  // the plain GEMM per batch (LowerGemm fuses no communication with it)
    const std::string Bt = dim(a, 0), M = dim(a, 1), tm = "cdiv(" + M + "," + std::to_string(kBM) + ")";
    if (!sharedB) d.check(Bt, dim(b, 0), "B must have A's batches", true);
    d.check(Bt, dim(c, 0), "C must have A's batches", true);
    d.check(M, dim(c, 1), "C must have A's rows", true);
    d.check(N, dim(c, 2), bNMajor ? "C must have B's columns" : "C must have B's rows as columns", true);
    d.field(FK::tmap, "a", a, {K, M, Bt}, {kBK, kBM, 1});
    if (sharedB && bNMajor) d.field(FK::tmap, "b", b, {N, K}, {kBBox, kBK});
    else if (sharedB) d.field(FK::tmap, "b", b, {K, N}, {kBK, kBN});
    else if (bNMajor) d.field(FK::tmap, "b", b, {N, K, Bt}, {kBBox, kBK, 1});
    else d.field(FK::tmap, "b", b, {K, N, Bt}, {kBK, kBN, 1});
    d.field(FK::tmap, "c", c, {cRow, M, Bt}, {kBoxCols, kBoxRows, 1});
    order(d, Bt, tm, tn, "0", 0, "0");
    d.i32("k", K);
    d.i32("m", M);
    d.i32("n", N);
    d.i32("comm_blocks", "0");
    d.fields(epilogue);
    d.field(FK::ptr, "c_out", c);  // f32 C: stored from the consumers
    splitK(d, "mul(" + Bt + ",mul(" + tm + "," + tn + "))", "cdiv(" + K + "," + std::to_string(kBK) + ")", noSplit);
  } else if (job == "gemm" || job == "gemm_ar") {
    const std::string M = dim(a, aMMajor ? 1 : 0), tm = "cdiv(" + M + "," + std::to_string(kBM) + ")";
    // The spec's loop takes other shapes too (a padded C, a longer K in B: stores clip at C's
    // edges, loads stop at the loop's K): the template's exact shapes are twin rules.
    d.check(M, dim(c, 0), aMMajor ? "C must have A's columns as rows (M; A stored [K, M])" : "C must have A's rows", true);
    d.check(N, dim(c, 1), bNMajor ? "C must have B's columns" : "C must have B's rows as columns", true);
    // A stored [K, M]: 64 x 64 boxes of M-rows, two per stage, as an N-major B's.
    if (aMMajor) d.field(FK::tmap, "a", a, {M, K}, {kBBox, kBK});
    else d.field(FK::tmap, "a", a, {K, M}, {kBK, kBM});
    if (widenB) {
      d.field(FK::tmap, "b", b, {"div(" + K + ",2)", N}, {kBK / 2, kBN});
      d.t.fields.back().swizzle = false;
    } else {
      bMap(d, b, K, N, bNMajor);
    }
    const std::string blocks = "balanced(mul(" + tm + "," + tn + "),sms)";
    if (job == "gemm") {
      d.field(FK::tmap, "c", c, {cRow, M}, {kBoxCols, kBoxRows});
      order(d, "1", tm, tn, "0", 0, "0");
    } else {
      d.field(FK::tmaps, "c", c, {N, M}, {kBoxCols, kBoxRows});
      d.field(FK::ctx, "ctx");
      order(d, "1", tm, tn, "0", 0, "div(mul(mul(" + tm + "," + tn + "),rank),world)");
      d.t.zero_args.push_back(int(c));
    }
    d.i32("k", K);
    d.i32("m", M);
    d.i32("n", N);
    d.i32("comm_blocks", "0");
    if (job == "gemm_ar") d.i32("blocks", blocks);
    d.fields(epilogue);
    auto cols = facts.getAs<IntegerAttr>("trail_cols");
    if (job == "gemm") {
      d.field(FK::ptr, "c_out", c);  // f32 C: stored from the consumers
      // K steps: the main product's, then the trailing product's (K2 = a2's columns).
      std::string ksteps = "cdiv(" + K + "," + std::to_string(kBK) + ")";
      if (cols) ksteps = "add(" + ksteps + ",cdiv(" + dim(arg("a2"), 1) + "," + std::to_string(kBK) + "))";
      splitK(d, "mul(" + tm + "," + tn + ")", ksteps, noSplit);
    }
    if (cols) {
      // A product after the K loop (GemmJobT's TrailingParams): a2 [M, K2] and b2 as B, K2 =
      // a2's columns, which must not pass the spec's R (the tiles read R columns; TMA reads the
      // whole K2 in steps of 64, zeros past its end).
      const int64_t a2 = arg("a2"), b2 = arg("b2");
      const std::string K2 = dim(a2, 1), R = std::to_string(cols.getInt());
      d.check("1", "sle(" + K2 + "," + R + ")",
              "the product after the K loop reads " + R + " columns of its first operand: the template reads "
              "all of them, so their count must not be larger (1 = fits)", true);
      d.check("0", "rem(" + K2 + ",8)", "the trailing product's rows must be whole 16-byte TMA pitches: K2 % 8 "
              "(shown) must be 0", true);
      const std::string K2b = dim(b2, bNMajor ? 0 : 1), N2 = dim(b2, bNMajor ? 1 : 0);
      d.check("0", "rem(" + (bNMajor ? N2 : K2b) + ",8)",
              "the trailing B's rows must be whole 16-byte TMA pitches (shown: the remainder by 8)", true);
      d.field(FK::tmap, "a2", a2, {K2, M}, {kBK, kBM});
      if (bNMajor) d.field(FK::tmap, "b2", b2, {N2, K2b}, {kBBox, kBK});
      else d.field(FK::tmap, "b2", b2, {K2b, N2}, {kBK, kBN});
      d.i32("k2", K2);
    }
    if (job != "gemm") d.t.grid = expr(blocks);
  } else if (job == "gemm_rs") {
    const std::string M = dim(a, 0), own = "div(" + M + ",world)";
    const std::string tm = "cdiv(" + own + "," + std::to_string(kBM) + ")";
    // From a reduce-scatter of a Scratch product the spec may have written less than all of it (a
    // product wider or longer than the loop's tiles): such shapes take the general-path twin.
    const bool collective = bool(facts.get("scatter"));
    d.check("0", "rem(" + M + ",world)", "A's rows must split evenly over the ranks: M % world_size (shown) must be 0",
            collective);
    d.check(own, dim(c, 0), "C must hold this rank's M / world_size rows", collective);
    if (auto tiles = facts.getAs<IntegerAttr>("owner_tiles")) {  // the spec's tiles run over A's rows: none may cross owners
      const std::string rows = std::to_string(tiles.getInt());  // a multiple of the spec's and the template's tile rows
      d.check("0", "rem(" + own + "," + rows + ")",
              "each " + rows + "-row tile must lie inside one owner: M / world_size (shown) must be a multiple "
              "of " + rows, true);
    }
    d.check(N, dim(c, 1), bNMajor ? "C must have B's columns" : "C must have B's rows as columns", collective);
    d.field(FK::tmap, "a", a, {K, M}, {kBK, kBM});
    bMap(d, b, K, N, bNMajor);
    d.field(FK::tmaps, "c", c, {N, own}, {kBoxCols, kBoxRows});
    d.field(FK::ctx, "ctx");
    const std::string blocks = "balanced(mul(world,mul(" + tm + "," + tn + ")),sms)";
    order(d, "world", tm, tn, "rem(add(rank,1),world)", 1, "0");
    d.i32("k", K);
    d.i32("m_own", own);
    d.i32("n", N);
    d.i32("comm_blocks", "0");
    d.i32("blocks", blocks);
    d.t.grid = expr(blocks);
    if (facts.get("zero_out")) d.t.zero_args.push_back(int(c));  // the spec's zero fill
  } else {  // ag_gemm: a is this rank's shard [Ms, K], landing its gathered [W * Ms, K]
    const int64_t landing = arg("landing");
    const std::string Ms = dim(a, 0), tm = "cdiv(" + Ms + "," + std::to_string(kBM) + ")";
    const std::string tiles = "mul(world,mul(" + tm + "," + tn + "))";
    d.check("mul(world," + Ms + ")", dim(landing, 0), "the gathered A must hold world_size x the shard's rows");
    d.check(K, dim(landing, 1), "the gathered A must have the shard's K columns");
    d.check("mul(world," + Ms + ")", dim(c, 0), "C must have world_size x the shard's rows");
    d.check(N, dim(c, 1), bNMajor ? "C must have B's columns" : "C must have B's rows as columns");
    d.check("1", "sle(add(" + std::to_string(kAgRowSlot) + ",mul(world," + tm + "))," +
                     std::to_string(kKernelFlagRegion) + ")",
            "the row blocks of all shards need more flag slots than a kernel's region (1 = fits)");
    d.field(FK::tmap, "a_own", a, {K, Ms}, {kBK, kBM});
    d.field(FK::tmap, "a_full", landing, {K, Ms, "world"}, {kBK, kBM, 1});
    bMap(d, b, K, N, bNMajor);
    d.field(FK::tmap, "c", c, {N, Ms, "world"}, {kBoxCols, kBoxRows, 1});
    d.field(FK::ctx, "ctx");
    order(d, "world", tm, tn, "rank", 0, "0");
    d.field(FK::ptr, "a_own_ptr", a);
    d.field(FK::ptrs, "a_full_peer", landing);
    // Communicator blocks: the nvcc plan's cost model chose 16 at 2048^3 (128 tiles) and 4 from
    // 4096^3 up on 2 x H200 (docs/benchmarks/gemm-2xH200.md); none for one rank.
    const std::string comm = "mul(ne(world,1),add(4,mul(12,slt(" + tiles + ",256))))";
    const std::string blocks = "balanced(" + tiles + ",sub(sms," + comm + "))";
    d.i32("k", K);
    d.i32("m_shard", Ms);
    d.i32("n", N);
    d.i32("row_blocks", tm);
    d.i32("comm_blocks", comm);
    d.i32("blocks", blocks);
    d.t.grid = expr("add(" + comm + "," + blocks + ")");
  }
  if (auto fallback = facts.getAs<StringAttr>("fallback")) d.t.fallback = fallback.getValue().str();
  d.t.params_bytes = ::pk::lay_out_params(d.t.fields);
  checks = std::move(d.checks);
  return d.t;
}

LogicalResult emitGemmKernel(Emitter &e, KernelOp kernel, DictionaryAttr facts) {
  auto job = facts.getAs<StringAttr>("job");
  const JobInfo *info = job ? findJob(job.getValue()) : nullptr;
  if (!info)
    return kernel.emitError("no CUDA emission pattern for GEMM job '")
           << (job ? job.getValue() : StringRef("?")) << "'";
  std::string name = kernel.getSymName().str();
  std::string type = std::string("pk::gemm::") + info->type;
  // The plain GEMM's variants: element types, B's layout, a fused epilogue.
  ElementCode epilogue;
  if (auto program = facts.getAs<ArrayAttr>("epilogue")) {
    // A batched GEMM's epilogue may read per-batch values: prepare() takes the batch as its head.
    // An f32 output keeps tanh's every bit (tanhf), as the general path computes it.
    auto out = facts.getAs<StringAttr>("out");
    ElementCodeShape shape{"Epi", "epi", "GEMM epilogue",
                           "The spec's epilogue, per output element (row, col), on the fp32 accumulator.",
                           bool(facts.get("batched"))};
    shape.fastTanh = !(out && out.getValue() == "f32");
    shape.splitRowCol = true;
    FailureOr<ElementCode> code = emitElementProgram(kernel, program, shape);
    if (failed(code)) return failure();
    epilogue = std::move(*code);
  }
  auto fact = [&](StringRef k) {
    auto v = facts.getAs<StringAttr>(k);
    return v ? v.getValue() : StringRef();
  };
  auto operandType = [](StringRef t) {
    return t == "f16"    ? "pk::f16"
           : t == "e4m3" ? "pk::f8e4m3"
           : t == "e5m2" ? "pk::f8e5m2"
           : t == "i8"   ? "signed char"
                         : "pk::bf16";
  };
  const StringRef inB = fact("in_b").empty() ? fact("in") : fact("in_b");
  const bool batched = bool(facts.get("batched"));
  const bool bNMajor = fact("b_layout") == "kn";
  if (bNMajor && job.getValue() != "gemm")  // the fused jobs' A * B form
    type += std::string("T<true>");
  const bool trailing = bool(facts.get("trail_cols"));
  const bool variant = job.getValue() == "gemm" &&
                       ((!fact("in").empty() && fact("in") != "bf16") || (!inB.empty() && inB != "bf16") ||
                        fact("out") == "f16" || fact("out") == "f32" || fact("out") == "i32" || bNMajor ||
                        fact("a_layout") == "km" ||
                        !epilogue.code.empty() || batched || trailing);
  const std::string outType = fact("out") == "f16"   ? "pk::f16"
                              : fact("out") == "f32" ? "float"
                              : fact("out") == "i32" ? "int"
                                                     : "pk::bf16";
  if (variant) {
    // GemmJobT<In, Out, BNMajor, Epi, InB, Batched, SharedB, AMMajor, Trailing>: the first four
    // always, the rest up to the last that is not its default.
    std::vector<std::string> params = {operandType(fact("in")), outType, bNMajor ? "true" : "false",
                                       epilogue.code.empty() ? "pk::gemm::NoEpilogue" : "pk_" + name + "::Epi",
                                       operandType(inB), batched ? "true" : "false",
                                       facts.get("shared_b") ? "true" : "false",
                                       fact("a_layout") == "km" ? "true" : "false", trailing ? "true" : "false"};
    const bool nonDefault[] = {true, true, true, true, inB != fact("in"), batched, bool(facts.get("shared_b")),
                               fact("a_layout") == "km", trailing};
    size_t count = 0;
    for (size_t i = 0; i < params.size(); ++i)
      if (nonDefault[i]) count = i + 1;
    type = "pk::gemm::GemmJobT<";
    for (size_t i = 0; i < count; ++i) type += (i ? ", " : "") + params[i];
    type += ">";
  }
  std::vector<::pk::HostCheck> checks;
  ::pk::TemplateLaunch launch = describe(job.getValue(), facts, name, epilogue.fields, checks);

  e.os << "\n#include <pk/templates/" << info->header << ">\n";
  e.os << "#ifndef __CUDACC_RTC__\n#include <cstddef>\n#endif\n";
  e.os << "\nnamespace pk_" << name << " {\n";
  e.os << epilogue.code;
  e.os << "constexpr int kThreads = pk::gemm::kThreads;            // loader/storer + 2 consumer warpgroups\n";
  e.os << "constexpr unsigned kSharedBytes = pk::gemm::kSharedBytes;  // dynamic shared memory\n";
  e.os << "using Job = " << type << ";\n";
  e.os << "// The launch description below must match the template it instantiates.\n";
  e.os << "static_assert(kThreads == " << launch.threads << " && kSharedBytes == " << kSharedBytes
       << "u && pk::gemm::kBM == " << kBM << " && pk::gemm::kBN == " << kBN
       << " && pk::gemm::kBK == " << kBK
       << " && pk::gemm::kBoxRows == " << kBoxRows << " && pk::gemm::kBoxCols == " << kBoxCols
       << ", \"GEMM template constants changed: update pkc's GemmPatterns.cpp\");\n";
  if (job.getValue() == "gemm")
    e.os << "static_assert(pk::gemm::kSplitPartial == " << kSplitPartial << " && pk::gemm::kMaxSplits == "
         << kMaxSplits << " && pk::gemm::kSplitCounters == " << kSplitCounters
         << " && pk::gemm::kConsumers == 2, \"split-K workspace layout changed\");\n";
  if (job.getValue() == "ag_gemm")
    e.os << "static_assert(pk::gemm::kAgRowSlot == " << kAgRowSlot << ", \"flag slots changed\");\n";
  // Every nvcc build of this file (the GPU tests, typed launchers) checks each field's offset.
  emitParamsAsserts(e, "Job::Params", launch, name);
  emitLaunchLines(e, kernel, job.getValue(), launch, checks);
  e.os << "extern \"C\" __global__ void __launch_bounds__(pk::gemm::kThreads, 1) " << name
       << "(const __grid_constant__ " << type << "::Params p) {\n";
  e.os << "  pk::gemm::lcsc_run<" << type << ">(p);\n";
  e.os << "}\n";
  return success();
}

} // namespace

void mlir::pk::cuda::addGemmPatterns(PatternTable &table) {
  // Kernels lowered to a template take this path; every other kernel the structure pattern.
  Pattern structural = table["pk.kernel"];
  table["pk.kernel"] = [structural](Emitter &e, Operation *op) -> LogicalResult {
    auto kernel = cast<KernelOp>(op);
    if (auto facts = kernel->getAttrOfType<DictionaryAttr>("pk.gemm"))
      return emitGemmKernel(e, kernel, facts);
    return structural(e, op);
  };
}

// Emission pattern for kernels pk-lower-attention turned into attention template instances: a
// thin extern "C" wrapper around pk::attention::run<D, Causal>, with the launch description
// (parameter block, grid, shared memory) and host checks above it, so the JIT, pk_torch and the
// typed launchers launch it with no attention-specific host code.
#include "ElementProgram.h"
#include "TemplateDescriber.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

namespace {

// The template's constants the description relies on (static_asserted in the output): boxes of
// 64 columns x 128 rows, and per head dim the consumer warpgroups of 64 query rows each.
// Consumer warpgroups: three at head dim 64, two at 128; a score map at 64 takes two, since three
// consumers have no registers to spare for it (ptxas spills).
constexpr int kBox = 64, kBoxRows = 128;
int consumers(int64_t d, bool map) { return d == 64 && !map ? 3 : 2; }

// sizeof(SharedStorage<D, C>) + 1024, as attention.cuh lays it out: Q (whole boxes down its rows),
// the K and V rings, two rings' mbarriers and q_full, rounded up to the 1024-byte alignment.
unsigned sharedBytes(int64_t d, int c) {
  const unsigned boxes = unsigned(d / kBox), stages = d == 64 ? 4 : 3, box = kBoxRows * kBox * 2;
  const unsigned qLoads = unsigned((64 * c + kBoxRows - 1) / kBoxRows);
  unsigned bytes = boxes * box * (qLoads + 2 * stages) + 2 * 16 * stages + 8;
  return (bytes + 1023) / 1024 * 1024 + 1024;
}

LogicalResult emitAttentionKernel(Emitter &e, KernelOp kernel, DictionaryAttr facts) {
  auto arg = [&](StringRef role) { return facts.getAs<IntegerAttr>(role).getInt(); };
  const int64_t q = arg("q"), k = arg("k"), v = arg("v"), o = arg("o"), lse = arg("lse"), d = arg("d");
  const bool causal = facts.getAs<BoolAttr>("causal").getValue();
  // [S, D] tensors, or [H, S, D] with one head per tile, or token-major [S, H, D].
  const bool heads = facts.getAs<BoolAttr>("heads").getValue(), tokenMajor = bool(facts.get("token_major"));
  const int rowsDim = heads && !tokenMajor ? 1 : 0, colsDim = heads ? 2 : 1, hd = tokenMajor ? 1 : 0;
  auto rows = [&](int64_t a) { return dim(a, rowsDim); };
  auto cols = [&](int64_t a) { return dim(a, colsDim); };
  const std::string name = kernel.getSymName().str(), D = std::to_string(d);
  auto program = facts.getAs<ArrayAttr>("score_map");
  // A scale computed from scalars: a ScoreMap the template does not apply (kActive false), whose
  // apply() gives the scale once per launch; the consumers stay those of a plain scale.
  auto scaleProgram = facts.getAs<ArrayAttr>("scale_map");
  const int c = consumers(d, bool(program)), blockRows = 64 * c, threads = 128 * (1 + c);
  TemplateDescriber desc;
  desc.t.kernel = name;
  desc.t.threads = threads;
  desc.t.shared_bytes = sharedBytes(d, c);
  // The tensor maps read exactly D columns; o and lse rows are q's (the template stores each
  // query row once, the general path whole 64-row tiles).
  for (auto [a, what] : {std::pair{q, "q"}, std::pair{k, "k"}, std::pair{v, "v"}})
    desc.check(D, cols(a), std::string("attention template: ") + what + " must have the head dim's " + D +
                               " columns");
  desc.check(rows(q), rows(o), "attention template: o must have q's rows");
  if (lse >= 0) desc.check(rows(q), rows(lse), "attention template: lse must have q's rows");
  // Grouped-query attention reads K and V at head h / G (G from the heads: q's must be G x k's).
  auto groupFact = facts.getAs<StringAttr>("kv_group");
  const std::string group = groupFact ? groupFact.getValue().str() : "1";
  // K and V heads offset by kv_head0 (stacked among other heads), V by v_head0 where packed q / k /
  // v heads put it elsewhere: the heads read must exist.
  auto head0Fact = facts.getAs<StringAttr>("kv_head0");
  const std::string head0 = head0Fact ? head0Fact.getValue().str() : "0";
  auto vHead0Fact = facts.getAs<StringAttr>("v_head0");
  const std::string vHead0 = vHead0Fact ? vHead0Fact.getValue().str() : head0;
  if (heads) {
    for (auto [a, what] : {std::pair{o, "o"}, std::pair{lse, "lse"}})
      if (a >= 0) desc.check(dim(q, hd), dim(a, hd), std::string("attention template: ") + what + " must have q's heads");
    if (facts.get("kv_group_ratio") && head0 == "0" && vHead0 == "0") {  // G = q's heads / k's heads: exact
      desc.check(dim(q, hd), "mul(" + group + "," + dim(k, hd) + ")",
                 "attention template (grouped-query): q's heads must be G x k's heads, G = " + group);
      desc.check(dim(k, hd), dim(v, hd), "attention template (grouped-query): v must have k's heads");
    } else {
      // K and V hold the heads read, offset .. offset + (q's heads - 1) / G: they may hold more
      // (stacked slots, packed heads, or only some heads used).
      if (group != "1")
        desc.check("1", "sle(1," + group + ")",
                   "attention template (grouped-query): G = " + group + " must be >= 1 (1 = it is)");
      const std::string span = group == "1" ? "sub(" + dim(q, hd) + ",1)" : "div(sub(" + dim(q, hd) + ",1)," + group + ")";
      for (auto [a, what, offset] : {std::tuple{k, "k", head0}, std::tuple{v, "v", vHead0}}) {
        if (offset != "0")
          desc.check("1", "sle(0," + offset + ")",
                     std::string("attention template: ") + what + "'s head offset " + offset + " must be >= 0 (1 = it is)");
        const std::string last = offset == "0" ? span : "add(" + offset + "," + span + ")";
        desc.check("1", "slt(" + last + "," + dim(a, hd) + ")",
                   std::string("attention template: ") + what + " must hold the K/V heads read, up to " + last +
                       " (1 = it does)");
      }
    }
  }
  const std::string h = heads ? dim(q, hd) : "1";
  for (auto [a, member] : {std::pair{q, "q"}, std::pair{k, "k"}, std::pair{v, "v"}}) {
    if (tokenMajor)  // {D, heads, rows}: a box of one head's rows (the template swaps its coordinates)
      desc.field(FK::tmap, member, a, {cols(a), dim(a, 1), rows(a)}, {kBox, 1, kBoxRows});
    else
      desc.field(FK::tmap, member, a, {cols(a), rows(a), heads ? dim(a, 0) : "1"}, {kBox, kBoxRows, 1});
  }
  desc.field(FK::ptr, "o", o);
  // Always a field: the template's Params has the pointer; null when the spec stores no lse.
  desc.field(FK::ptr, "lse", lse);
  desc.i32("sq", rows(q));
  desc.i32("sk", rows(k));
  desc.i32("heads", h);
  desc.i32("kv_group", group);
  desc.i32("kv_head0", head0);
  desc.i32("v_head0", vHead0);
  // Row strides: a row of every head in token-major tensors.
  const std::string oPitch = tokenMajor ? "mul(" + dim(o, 1) + "," + cols(o) + ")" : cols(o);
  desc.i32("o_pitch", oPitch);
  desc.i32("o_cols", "min(" + cols(o) + "," + D + ")");
  // A 1-D [S] lse has the memory of an [S, 1] one.
  Type lseType = lse >= 0 ? kernel.getBody().front().getArgument(lse).getType() : Type();
  const bool lse1d = (isa_and_nonnull<LocalTensorType>(lseType) && cast<LocalTensorType>(lseType).getRank() == 1) ||
                     (isa_and_nonnull<SymTensorType>(lseType) && cast<SymTensorType>(lseType).getRank() == 1);
  const std::string lsePitch = lse < 0 ? "0" : lse1d ? "1" : tokenMajor ? "mul(" + dim(lse, 1) + "," + cols(lse) + ")" : cols(lse);
  desc.i32("lse_pitch", lsePitch);
  desc.i32("token_major", tokenMajor ? "1" : "0");
  desc.i64("o_head_stride", tokenMajor ? cols(o) : "mul(" + rows(q) + "," + oPitch + ")");
  desc.i64("lse_head_stride", lse < 0 ? "0" : tokenMajor ? cols(lse) : "mul(" + rows(q) + "," + lsePitch + ")");
  // A sliding window: steps before a block's window are skipped (only where key_window > 0).
  // Causal, each row must keep a key (its own) or the rows masked whole would average other keys
  // than the spec's loop visits: a window below 1 is refused. Without the causal bound every
  // block visits every key step, as the spec's loop does, so a window at or below 0 (a window
  // behind a query offset: col > row + past - w with past >= w) only turns the skipping off.
  // Causal against E past keys (col <= row + E): the steps past a block's reach are skipped where
  // E >= 0; a negative E skips no step at either end (the score map masks as the spec does). The
  // window the spec wrote is then key_window + E (key_window is relative to the row).
  auto window = facts.getAs<StringAttr>("key_window");
  auto offset = facts.getAs<StringAttr>("causal_offset");
  desc.i32("key_window", window ? window.getValue().str() : "0");
  if (window && causal) {
    const std::string w = offset ? "add(" + window.getValue().str() + "," + offset.getValue().str() + ")"
                                 : window.getValue().str();
    desc.check("1", "min(" + w + ",1)",
               "attention template: a sliding window must hold at least the query's own key (window >= 1)");
  }
  desc.i32("causal_offset", offset ? offset.getValue().str() : "0");
  // Always a field, so the ones after it keep their offsets: 0 when the scale is a constant or
  // the score map applies it.
  std::string scale;
  if (auto s = facts.getAs<IntegerAttr>("scale")) {
    desc.field(FK::f32, "scale", s.getInt());
    scale = "p.scale";
  } else {
    desc.field(FK::f32, "scale");
    scale = floatLiteral(facts.getAs<FloatAttr>("scale_value").getValueAsDouble());
  }
  // A score map (pkc's ScoreMap struct) and its arguments, after the fixed fields.
  ElementCode map;
  if (program || scaleProgram) {
    ElementCodeShape shape{"ScoreMap", "map", "attention score map",
                           "The spec's scores from the raw q.k of query row `row`, key `col`, query head `head`.",
                           true, true};
    if (scaleProgram) {
      shape.comment = "The spec's scale, from scalars alone: apply() gives it, once per launch.";
      shape.active = false;
    }
    FailureOr<ElementCode> code = emitElementProgram(kernel, program ? program : scaleProgram, shape);
    if (failed(code)) return failure();
    map = std::move(*code);
  }
  if (scaleProgram)
    scale = "pk_" + name + "::ScoreMap::apply(p.map, pk_" + name + "::ScoreMap::prepare(p.map, 0), 0.f, 0, 0, 0.f, 0.f)";
  // A persistent grid of at most one block per SM (1 / W of them for ranks sharing a GPU)
  // overlaps a tile's Q and first K/V loads with the last one's products
  // (pk/templates/attention.cuh's run()). Causal kernels take their tiles from the ticket.
  desc.field(FK::ticket, "ticket");
  desc.fields(map.fields);
  const std::string tiles = "mul(" + h + ",cdiv(" + rows(q) + "," + std::to_string(blockRows) + "))";
  desc.t.grid = expr("max(1,min(sms," + tiles + "))");
  desc.t.params_bytes = ::pk::lay_out_params(desc.t.fields);

  e.os << "\n#include <pk/templates/attention.cuh>\n";
  e.os << "#ifndef __CUDACC_RTC__\n#include <cstddef>\n#endif\n";
  e.os << "\nnamespace pk_" << name << " {\n";
  e.os << map.code;
  // q, k, v and o share one 16-bit type (pk-lower-attention checks it): f16 or bf16.
  const bool f16 = getTensorElementType(kernel.getBody().getArgument(q).getType()).isF16();
  const std::string mapType = map.code.empty() ? "pk::attention::NoScoreMap" : "pk_" + name + "::ScoreMap";
  std::string params = map.code.empty() && !f16 ? "pk::attention::Params"
                       : "pk::attention::ParamsOf<" + mapType + (f16 ? ", true>" : ">");
  if (f16) {  // named, as offsetof takes no type with a comma in it
    e.os << "using Params = " << params << ";\n";
    params = "pk_" + name + "::Params";
  }
  e.os << "constexpr int kHeadDim = " << d << ";\n";
  e.os << "constexpr int kConsumers = " << c << ";\n";
  e.os << "constexpr int kThreads = pk::attention::threads<kHeadDim, kConsumers>();  // producer + " << c
       << " consumer warpgroups\n";
  e.os << "constexpr bool kCausal = " << (causal ? "true" : "false") << ";\n";
  e.os << "constexpr unsigned kSharedBytes = pk::attention::shared_bytes<kHeadDim, kConsumers>();\n";
  e.os << "// The launch description below must match the template it instantiates.\n";
  e.os << "static_assert(kThreads == " << threads << " && kSharedBytes == " << desc.t.shared_bytes
       << "u && pk::attention::Layout<kHeadDim, kConsumers>::kBM == " << blockRows
       << " && pk::attention::kBoxRows == " << kBoxRows << " && pk::attention::kBox == " << kBox
       << ", \"attention template constants changed: update pkc's AttentionPatterns.cpp\");\n";
  emitParamsAsserts(e, params, desc.t, name);
  emitLaunchLines(e, kernel, "attention", desc.t, desc.checks);
  e.os << "extern \"C\" __global__ void __launch_bounds__(pk_" << name << "::kThreads, 1) " << name
       << "(const __grid_constant__ " << params << " p) {\n";
  e.os << "  pk::attention::run<pk_" << name << "::kHeadDim, pk_" << name << "::kCausal"
       << (map.code.empty() && !f16 ? "" : ", " + mapType + ", pk_" + name + "::kConsumers") << ">(p, "
       << scale << ");\n";
  e.os << "}\n";
  return success();
}

} // namespace

void mlir::pk::cuda::addAttentionPatterns(PatternTable &table) {
  Pattern previous = table["pk.kernel"];
  table["pk.kernel"] = [previous](Emitter &e, Operation *op) -> LogicalResult {
    auto kernel = cast<KernelOp>(op);
    if (auto facts = kernel->getAttrOfType<DictionaryAttr>("pk.attention"))
      return emitAttentionKernel(e, kernel, facts);
    return previous(e, op);
  };
}

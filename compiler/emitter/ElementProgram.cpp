// Emits a captured element-wise program (a GEMM's fused epilogue, an attention's score map) as a
// struct with `apply` (ElementProgram.h): one `const float` (or `const int`) per step of the
// program, evaluated per element in the consumers' registers.
#include "ElementProgram.h"

#include "Emitter.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

// The keys of a step that name other steps it reads.
static const char *const kOperands[] = {"x", "y", "c", "rowv", "colv", "planev"};

FailureOr<ElementCode> mlir::pk::cuda::emitElementProgram(KernelOp kernel, ArrayAttr program,
                                                         const ElementCodeShape &shape) {
  ElementCode out;
  const std::string prefix = shape.member + ".";
  Block &entry = kernel.getBody().front();
  std::set<int64_t> tensors, scalars;
  std::map<std::string, int64_t> indices;  // integer host expressions read as f32, numbered
  std::map<int64_t, std::string> views;  // 1-D tensors: read as a 1 x N "row", an M x 1 "col", or "both"
  for (Attribute a : program) {
    auto step = cast<DictionaryAttr>(a);
    StringRef op = step.getAs<StringAttr>("op").getValue();
    if (op == "load") tensors.insert(step.getAs<IntegerAttr>("arg").getInt());
    if (auto view = step.getAs<StringAttr>("view")) {
      auto [it, fresh] = views.try_emplace(step.getAs<IntegerAttr>("arg").getInt(), view.getValue().str());
      if (!fresh && it->second != view.getValue()) it->second = "both";
    }
    if (op == "scalar") scalars.insert(step.getAs<IntegerAttr>("arg").getInt());
    if (op == "index" || op == "ihost") indices.insert({step.getAs<StringAttr>("expr").getValue().str(), int64_t(indices.size())});
  }
  std::string args, body;
  llvm::raw_string_ostream as(args);
  auto t = [](int64_t a) { return "t" + std::to_string(a); };
  // Pointers, then extents, then floats: the description lays fields out in this order too.
  for (int64_t a : tensors) {
    Type argType = entry.getArgument(a).getType(), element;
    if (auto sym = dyn_cast<SymTensorType>(argType)) element = sym.getElementType();
    else if (auto local = dyn_cast<LocalTensorType>(argType)) element = local.getElementType();
    std::string type = elementTypeName(element);
    if (type.empty()) return kernel.emitError(shape.what + ": unsupported element type ") << element;
    as << "    const " << type << "* " << t(a) << ";  // argument #" << a << "\n";
    out.fields.push_back({EpilogueField::Kind::ptr, prefix + t(a), a, ""});
  }
  auto rankOf = [&](int64_t a) {
    Type argType = entry.getArgument(a).getType();
    if (auto sym = dyn_cast<SymTensorType>(argType)) return sym.getRank();
    return cast<LocalTensorType>(argType).getRank();
  };
  for (int64_t a : tensors) {
    // A 3-D tensor is [planes, rows, cols]; a 1-D one is indexed as its 1 x N row or N x 1 column.
    const int64_t rank = rankOf(a);
    as << "    int " << t(a) << "_rows, " << t(a) << "_cols" << (rank == 3 ? ", " + t(a) + "_planes" : "") << ";\n";
    auto dim = [&](int d) { return "dim(" + std::to_string(a) + "," + std::to_string(d) + ")"; };
    std::string rows = dim(rank - 2), cols = dim(rank - 1);
    if (rank == 1) {  // read in both views: each load bounds its own coordinate by the length
      auto view = views.find(a);
      const bool row = view != views.end() && view->second == "row", both = view != views.end() && view->second == "both";
      rows = row ? "1" : dim(0);
      cols = row || both ? dim(0) : "1";
    }
    out.fields.push_back({EpilogueField::Kind::i32, prefix + t(a) + "_rows", a, rows});
    out.fields.push_back({EpilogueField::Kind::i32, prefix + t(a) + "_cols", a, cols});
    if (rank == 3) out.fields.push_back({EpilogueField::Kind::i32, prefix + t(a) + "_planes", a, dim(0)});
  }
  // Integers the host computes are 64-bit, as index arithmetic is everywhere else (a seed past
  // 2^31, a bound of 2^40).
  for (auto &[expr, k] : indices) {
    as << "    long long i" << k << ";  // " << expr << "\n";
    out.fields.push_back({EpilogueField::Kind::i64, prefix + "i" + std::to_string(k), -1, expr});
  }
  for (int64_t a : scalars) {
    as << "    float s" << a << ";  // argument #" << a << "\n";
    out.fields.push_back({EpilogueField::Kind::f32, prefix + "s" + std::to_string(a), a, ""});
  }
  // Steps that do not depend on the element (scalars, the head, loads at fixed coordinates) are
  // computed once by prepare() into Pre; apply() reads them from there.
  const size_t n = program.size();
  // Constants and arguments read straight from the parameter block cost no register: apply()
  // writes them in place rather than keeping them in Pre.
  // wide: an integer scalar (the head, constants, host integers, arithmetic on them), 64-bit as
  // the language's index values are; integer tile elements are 32-bit (a splat wraps, "toi32").
  std::vector<bool> element(n), integer(n), wide(n), used(n), inPlace(n);
  std::vector<std::string> inlined(n);
  for (auto [i, a] : llvm::enumerate(program)) {
    auto step = cast<DictionaryAttr>(a);
    StringRef op = step.getAs<StringAttr>("op").getValue();
    integer[i] = op == "head" || op == "iconst" || op == "ihost" || op == "iop" || op == "toint" || op == "toi32" ||
                 step.get("int");
    wide[i] = op == "head" || op == "iconst" || op == "ihost" || (op == "iop" && !step.get("int"));
    if (op == "const") inlined[i] = floatLiteral(step.getAs<FloatAttr>("value").getValueAsDouble());
    if (op == "iconst") inlined[i] = std::to_string(step.getAs<IntegerAttr>("value").getInt()) + "ll";
    if (op == "scalar") inlined[i] = "e.s" + std::to_string(step.getAs<IntegerAttr>("arg").getInt());
    if (op == "ihost") inlined[i] = "e.i" + std::to_string(indices.at(step.getAs<StringAttr>("expr").getValue().str()));
    // A constant or host integer splat into an i32 tile is written in place (not kept in Pre).
    if (op == "toi32") {
      const int64_t x = step.getAs<IntegerAttr>("x").getInt();
      if (!inlined[x].empty())
        inlined[i] = step.get("i8") ? "static_cast<int>(static_cast<signed char>(" + inlined[x] + "))"
                                    : "static_cast<int>(" + inlined[x] + ")";
    }
    inPlace[i] = !inlined[i].empty();
    element[i] = op == "acc" || op == "iota" ||
                 (op == "load" && (step.getAs<IntegerAttr>("row").getInt() < 0 || step.getAs<IntegerAttr>("col").getInt() < 0));
    for (StringRef k : kOperands)
      if (auto operand = step.getAs<IntegerAttr>(k)) element[i] = element[i] || element[operand.getInt()];
  }
  // With shape.splitRowCol, an element step that follows only the row (or only the column) is
  // computed once per row (column) by prepare_row (prepare_col), not once per element: a
  // consumer thread of the GEMM holds 2 rows and 64 columns of its tile.
  enum Dep { kRow = 1, kCol = 2, kBoth = 3 };
  std::vector<int> dep(n, 0);
  for (auto [i, a] : llvm::enumerate(program)) {
    if (!element[i]) continue;
    auto step = cast<DictionaryAttr>(a);
    StringRef op = step.getAs<StringAttr>("op").getValue();
    int d = 0;
    if (op == "acc") d = kBoth;
    if (op == "iota") d = step.getAs<IntegerAttr>("dim").getInt() == 0 ? kRow : kCol;
    if (op == "load") {
      auto view = step.getAs<StringAttr>("view");
      const bool swapped = bool(step.get("swapped"));
      if ((!view || view.getValue() == "col") && !step.get("rowv") && step.getAs<IntegerAttr>("row").getInt() < 0)
        d |= swapped ? kCol : kRow;
      if ((!view || view.getValue() == "row") && !step.get("colv") && step.getAs<IntegerAttr>("col").getInt() < 0)
        d |= swapped ? kRow : kCol;
    }
    for (StringRef k : kOperands)
      if (auto operand = step.getAs<IntegerAttr>(k)) d |= dep[operand.getInt()];
    dep[i] = shape.splitRowCol && d ? d : kBoth;  // not split (or not known): per element
  }
  // Where a step lives: Pre (per tile), PreRow, PreCol, or apply's locals (per element).
  auto place = [&](size_t i) { return element[i] ? dep[i] : 0; };
  // used / usedRow / usedCol: step j is read from Pre / PreRow / PreCol by a step of another place
  // (or is the result).
  std::vector<bool> usedRow(n), usedCol(n);
  for (auto [i, a] : llvm::enumerate(program))
    for (StringRef k : kOperands)
      if (auto operand = cast<DictionaryAttr>(a).getAs<IntegerAttr>(k)) {
        const int64_t j = operand.getInt();
        if (!element[i] || place(j) == place(i)) continue;
        used[j] = used[j] || (place(j) == 0 && !inPlace[j]);
        usedRow[j] = usedRow[j] || place(j) == kRow;
        usedCol[j] = usedCol[j] || place(j) == kCol;
      }
  used[n - 1] = used[n - 1] || (!element[n - 1] && !inPlace[n - 1]);
  usedRow[n - 1] = usedRow[n - 1] || place(n - 1) == kRow;
  usedCol[n - 1] = usedCol[n - 1] || place(n - 1) == kCol;
  // The steps `seed` reads, directly or through others (no unused locals are written).
  auto readBy = [&](std::vector<bool> seed) {
    for (size_t i = n; i-- > 0;)
      if (seed[i])
        for (StringRef k : kOperands)
          if (auto operand = cast<DictionaryAttr>(program[i]).getAs<IntegerAttr>(k)) seed[operand.getInt()] = true;
    return seed;
  };
  // Row and column steps are computed where some later step (or the result) reads them;
  // prepare() computes only what Pre keeps and what that reads.
  std::vector<bool> result(n);
  result[n - 1] = true;
  const std::vector<bool> live = readBy(result), needed = readBy(used);
  std::string pre, prepare, preRow, rowBody, preCol, colBody;
  auto typeOf = [&](size_t i) { return wide[i] ? "long long " : integer[i] ? "int " : "float "; };
  for (size_t i = 0; i < n; ++i) {
    if (used[i]) pre += "    " + std::string(typeOf(i)) + "v" + std::to_string(i) + ";\n";
    if (usedRow[i]) preRow += "    " + std::string(typeOf(i)) + "v" + std::to_string(i) + ";\n";
    if (usedCol[i]) preCol += "    " + std::string(typeOf(i)) + "v" + std::to_string(i) + ";\n";
  }
  auto v = [&](int64_t i) { return "v" + std::to_string(i); };
  int64_t current = 0;  // the step being written: operands of other places come from their structs
  auto operand = [&](int64_t i) {
    if (!element[current] || place(i) == place(current)) return v(i);
    if (place(i) == kRow) return "r." + v(i);
    if (place(i) == kCol) return "c." + v(i);
    return inPlace[i] ? inlined[i] : "u." + v(i);
  };
  for (auto [i, a] : llvm::enumerate(program)) {
    auto step = cast<DictionaryAttr>(a);
    StringRef op = step.getAs<StringAttr>("op").getValue();
    auto num = [&](StringRef k) { return step.getAs<IntegerAttr>(k).getInt(); };
    current = int64_t(i);
    std::string code;
    llvm::raw_string_ostream bs(code);
    bs << "    const " << typeOf(i) << v(i) << " = ";
    if (inPlace[i]) {  // a constant or a parameter read
      bs << inlined[i];
    } else if (op == "acc") {  // an i32 accumulator's bits travel in the float register
      bs << (integer[i] ? "__float_as_int(acc)" : "acc");
    } else if (op == "index") {
      bs << "float(e.i" << indices.at(step.getAs<StringAttr>("expr").getValue().str()) << ")";
    } else if (op == "head") {
      bs << "head";
    } else if (op == "iop") {
      // The language's integer semantics: wrapping, x / 0 and x % 0 are 0 (pk/tile/int_math.cuh).
      StringRef kind = step.getAs<StringAttr>("kind").getValue();
      const std::string x = operand(num("x")), y = step.get("y") ? operand(num("y")) : "";
      static const std::map<std::string, std::string> compare = {
          {"lt", "<"}, {"le", "<="}, {"gt", ">"}, {"ge", ">="}, {"eq", "=="}, {"ne", "!="}};
      static const std::map<std::string, std::string> bits = {{"bit_and", "&"}, {"bit_or", "|"}, {"bit_xor", "^"}};
      if (auto c = compare.find(kind.str()); c != compare.end()) bs << "int(" << x << " " << c->second << " " << y << ")";
      else if (auto b = bits.find(kind.str()); b != bits.end()) bs << "(" << x << " " << b->second << " " << y << ")";
      else if (kind == "min" || kind == "max") bs << kind << "(" << x << ", " << y << ")";
      else if (kind == "neg" || kind == "abs") bs << "pk::tile::wrap_" << kind << "(" << x << ")";
      else bs << "pk::tile::wrap_" << kind << "(" << x << ", " << y << ")";
    } else if (op == "tofloat") {
      if (step.get("odd")) bs << "pk::tile::to_float_odd(" << operand(num("x")) << ")";
      else bs << "float(" << operand(num("x")) << ")";
    } else if (op == "toi32") {  // an integer scalar splat into an i32 (i8) tile: its low 32 (8) bits
      if (step.get("i8")) bs << "static_cast<int>(static_cast<signed char>(" << operand(num("x")) << "))";
      else bs << "static_cast<int>(" << operand(num("x")) << ")";
    } else if (op == "toint") {
      bs << "__float2int_rz(" << operand(num("x")) << ")";
    } else if (op == "iota") {
      if (integer[i]) bs << (num("dim") == 0 ? "row" : "col");
      else if (shape.floatIndices) bs << (num("dim") == 0 ? "rowf" : "colf");
      else bs << "float(" << (num("dim") == 0 ? "row" : "col") << ")";
    } else if (op == "select") {
      bs << operand(num("c")) << (integer[num("c")] ? " != 0 ? " : " != 0.f ? ") << operand(num("x")) << " : "
         << operand(num("y"));
    } else if (op == "load") {
      // Each coordinate follows the element's (row, col), is a constant, or is a step fixed for
      // the tile; those may be negative, so one unsigned compare bounds them.
      const std::string ta = "e." + t(num("arg"));
      std::string offset, inside;
      auto coordinate = [&](StringRef fixed, StringRef stepKey, const std::string &follows, StringRef extent) {
        std::string c, bound = ta + "_" + extent.str();
        if (auto s = step.getAs<IntegerAttr>(stepKey)) {
          c = operand(s.getInt());
          // A 64-bit step (a host integer, the head) is bounded in 64 bits: 2^32 + 1 is not row 1.
          const std::string u = wide[s.getInt()] ? "(unsigned long long)" : "(unsigned)";
          inside += (inside.empty() ? "" : " && ") + (u + c + " < " + u + bound);
        } else {
          c = num(fixed) < 0 ? follows : std::to_string(num(fixed));
          inside += (inside.empty() ? "" : " && ") + (c + " < " + bound);
        }
        // Row-major: (plane * rows + row) * cols + col, in 64 bits.
        if (offset.empty()) offset = "(long long)" + c;
        else offset = (offset.find(" + ") == std::string::npos ? offset : "(" + offset + ")") + " * " + bound + " + " + c;
      };
      if (step.get("plane")) coordinate("plane", "planev", "", "planes");
      auto view = step.getAs<StringAttr>("view");
      // A transposed load's row follows the element's column and its column the element's row.
      const bool swapped = bool(step.get("swapped"));
      if (!view || view.getValue() == "col") coordinate("row", "rowv", swapped ? "col" : "row", "rows");  // a 1-D column: rows only
      if (!view || view.getValue() == "row") coordinate("col", "colv", swapped ? "row" : "col", "cols");  // a 1-D row: columns only
      // A predicated load, not a branch: see pk/tile/guarded_load.cuh.
      bs << "pk::tile::load_or_zero(" << ta << " + " << offset << ", " << inside << ")";
    } else if (op == "round") {
      const std::string type = step.getAs<StringAttr>("type").getValue() == "f16" ? "pk::f16" : "pk::bf16";
      bs << "pk::to_float(pk::from_float<" << type << ">(" << operand(num("x")) << "))";
    } else if (op == "map") {
      auto kind = symbolizeMapKind(step.getAs<StringAttr>("kind").getValue());
      if (!kind) return kernel.emitError(shape.what + ": unknown map kind");
      bs << mapExpression(*kind, operand(num("x")), step.get("y") ? operand(num("y")) : "", shape.fastTanh);
    } else {
      return kernel.emitError(shape.what + ": unknown step '") << op << "'";
    }
    bs << ";\n";
    if (element[i] && place(i) == kRow) {
      if (live[i]) rowBody += code + (usedRow[i] ? "    r." + v(i) + " = " + v(i) + ";\n" : "");
    } else if (element[i] && place(i) == kCol) {
      if (live[i]) colBody += code + (usedCol[i] ? "    c." + v(i) + " = " + v(i) + ";\n" : "");
    } else if (element[i]) {
      body += code;
    } else if (needed[i]) {
      prepare += code;
      if (used[i]) prepare += "    u." + v(i) + " = " + v(i) + ";\n";
    }
  }
  llvm::raw_string_ostream os(out.code);
  os << "// " << shape.comment << "\n"
     << "struct " << shape.name << " {\n  static constexpr bool kActive = " << (shape.active ? "true" : "false")
     << ";\n  struct Args {\n"
     << args << "  };\n"
     << "  // The steps that do not depend on the element, once per tile.\n"
     << "  struct Pre {\n" << pre << "  };\n"
     << "  __device__ static Pre prepare(const Args& e" << (shape.head ? ", int head" : "") << ") {\n"
     << "    Pre u;\n" << prepare << "    return u;\n  }\n";
  if (shape.splitRowCol)
    os << "  // The steps that follow only the row, or only the column: once per row, once per column.\n"
       << "  struct PreRow {\n" << preRow << "  };\n"
       << "  __device__ static PreRow prepare_row(const Args& e, const Pre& u, int row) {\n"
       << "    PreRow r;\n" << rowBody << "    return r;\n  }\n"
       << "  struct PreCol {\n" << preCol << "  };\n"
       << "  __device__ static PreCol prepare_col(const Args& e, const Pre& u, int col) {\n"
       << "    PreCol c;\n" << colBody << "    return c;\n  }\n";
  current = int64_t(n - 1);
  os << "  __device__ static float apply(const Args& e, const Pre& u, "
     << (shape.splitRowCol ? "const PreRow& r, const PreCol& c, " : "") << "float acc, int row, int col"
     << (shape.floatIndices ? ", float rowf, float colf" : "") << ") {\n"
     << body << "    return " << (integer[n - 1] ? "__int_as_float(" : "")
     << (element[n - 1] ? (place(n - 1) == kRow ? "r." : place(n - 1) == kCol ? "c." : "") + v(n - 1)
                        : inPlace[n - 1] ? inlined[n - 1] : "u." + v(n - 1))
     << (integer[n - 1] ? ")" : "") << ";\n  }\n};\n";
  return out;
}

// Emission patterns for the arith ops that compute indices, counts and scalars.
#include "Emitter.h"

#include "mlir/IR/Matchers.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

std::string mlir::pk::cuda::floatLiteral(double value) {
  const float f = static_cast<float>(value);
  if (std::isnan(f)) return "__int_as_float(0x7fffffff)";
  if (std::isinf(f)) return f > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", f);
  std::string literal = text;
  if (literal.find_first_of(".e") == std::string::npos) literal += ".0";
  return literal + "f";
}

namespace {

std::string scalarType(Type t) {
  if (isa<IndexType>(t)) return "long long";
  if (t.isSignlessInteger(1)) return "bool";
  return elementTypeName(t);
}

cuda::Pattern binary(StringRef op) {
  std::string sym = op.str();
  return [sym](Emitter &e, Operation *o) -> LogicalResult {
    std::string type = scalarType(o->getResult(0).getType());
    if (type.empty()) return o->emitError("no CUDA emission pattern for this operand type");
    e.line() << "const " << type << " " << e.bind(o->getResult(0), "v") << " = "
             << e.name(o->getOperand(0)) << " " << sym << " " << e.name(o->getOperand(1)) << ";";
    return success();
  };
}

cuda::Pattern call(StringRef fn) {
  std::string f = fn.str();
  return [f](Emitter &e, Operation *o) -> LogicalResult {
    std::string type = scalarType(o->getResult(0).getType());
    e.line() << "const " << type << " " << e.bind(o->getResult(0), "v") << " = " << f << "("
             << e.name(o->getOperand(0)) << ", " << e.name(o->getOperand(1)) << ");";
    return success();
  };
}

// Signed division: plain `/` and `%` by a constant other than 0 and -1, else pk::scalar_div /
// scalar_rem (pk/device/scalar_div.cuh), which give 0 for a zero divisor and wrap the minimum
// divided by -1 (index arithmetic on run-time values, such as `m / rows_per`, must not be
// undefined behaviour on the GPU).
cuda::Pattern division(StringRef sym, StringRef checked) {
  cuda::Pattern plain = binary(sym);
  std::string fn = checked.str();
  return [plain, fn](Emitter &e, Operation *o) -> LogicalResult {
    llvm::APInt divisor;
    if (matchPattern(o->getOperand(1), m_ConstantInt(&divisor)) && !divisor.isZero() &&
        !divisor.isAllOnes())
      return plain(e, o);
    std::string type = scalarType(o->getResult(0).getType());
    if (type.empty()) return o->emitError("no CUDA emission pattern for this operand type");
    e.line() << "const " << type << " " << e.bind(o->getResult(0), "v") << " = " << fn << "<" << type
             << ">(" << e.name(o->getOperand(0)) << ", " << e.name(o->getOperand(1)) << ");";
    return success();
  };
}

// Math on f32 scalars: the same fp32 expression a tile map computes per element.
LogicalResult emitScalarMap(Emitter &e, Operation *op) {
  auto m = cast<ScalarMapOp>(op);
  const std::string x = e.name(m.getInputs()[0]);
  const std::string y = m.getInputs().size() > 1 ? e.name(m.getInputs()[1]) : "";
  e.line() << "const float " << e.bind(m.getResult(), "v") << " = " << mapExpression(m.getKind(), x, y)
           << ";";
  return success();
}

LogicalResult emitConstant(Emitter &e, Operation *op) {
  auto c = cast<arith::ConstantOp>(op);
  std::string type = scalarType(c.getType());
  if (type.empty()) return op->emitError("no CUDA emission pattern for a constant of type ")
                           << c.getType();
  std::string value;
  if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
    value = c.getType().isSignlessInteger(1) ? (i.getValue().isZero() ? "false" : "true")
                                              : std::to_string(i.getValue().getSExtValue()) + "LL";
  } else if (auto f = dyn_cast<FloatAttr>(c.getValue())) {
    value = floatLiteral(f.getValueAsDouble());
    if (type != "float") value = "pk::from_float<" + type + ">(" + value + ")";
  } else {
    return op->emitError("no CUDA emission pattern for this constant");
  }
  e.line() << "const " << type << " " << e.bind(c.getResult(), "c") << " = " << value << ";";
  return success();
}

LogicalResult emitCmpI(Emitter &e, Operation *op) {
  auto cmp = cast<arith::CmpIOp>(op);
  const char *sym = nullptr;
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::eq: sym = "=="; break;
  case arith::CmpIPredicate::ne: sym = "!="; break;
  case arith::CmpIPredicate::slt: case arith::CmpIPredicate::ult: sym = "<"; break;
  case arith::CmpIPredicate::sle: case arith::CmpIPredicate::ule: sym = "<="; break;
  case arith::CmpIPredicate::sgt: case arith::CmpIPredicate::ugt: sym = ">"; break;
  case arith::CmpIPredicate::sge: case arith::CmpIPredicate::uge: sym = ">="; break;
  }
  // Index values are signed in the emitted code; an unsigned predicate compares their bit
  // patterns as unsigned, so a negative value is large (`root ult world` rejects root = -1).
  std::string lhs = e.name(cmp.getLhs()), rhs = e.name(cmp.getRhs());
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  if (pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge) {
    unsigned width = cmp.getLhs().getType().isIndex()
                         ? 64
                         : cmp.getLhs().getType().getIntOrFloatBitWidth();
    std::string u = width > 32 ? "(unsigned long long)" : "(unsigned)";
    lhs = u + lhs;
    rhs = u + rhs;
  }
  e.line() << "const bool " << e.bind(cmp.getResult(), "p") << " = " << lhs << " " << sym << " "
           << rhs << ";";
  return success();
}

} // namespace

void mlir::pk::cuda::addArithPatterns(PatternTable &table) {
  table["arith.constant"] = emitConstant;
  table["arith.addi"] = binary("+");
  table["arith.subi"] = binary("-");
  table["arith.muli"] = binary("*");
  table["pk.scalar_map"] = emitScalarMap;
  table["arith.divsi"] = division("/", "pk::scalar_div");
  table["arith.divui"] = binary("/");
  table["arith.remsi"] = division("%", "pk::scalar_rem");
  table["arith.remui"] = binary("%");
  table["arith.addf"] = binary("+");  // f32 scalars: IEEE float arithmetic, as in C++
  table["arith.subf"] = binary("-");
  table["arith.mulf"] = binary("*");
  table["arith.divf"] = binary("/");
  table["arith.minsi"] = call("min");
  table["arith.maxsi"] = call("max");
  table["arith.cmpi"] = emitCmpI;
  table["arith.select"] = [](Emitter &e, Operation *op) -> LogicalResult {
    auto s = cast<arith::SelectOp>(op);
    e.line() << "const " << scalarType(s.getType()) << " " << e.bind(s.getResult(), "v")
             << " = " << e.name(s.getCondition()) << " ? " << e.name(s.getTrueValue()) << " : "
             << e.name(s.getFalseValue()) << ";";
    return success();
  };
  table["arith.sitofp"] = [](Emitter &e, Operation *op) -> LogicalResult {
    e.line() << "const " << scalarType(op->getResult(0).getType()) << " "
             << e.bind(op->getResult(0), "v") << " = static_cast<"
             << scalarType(op->getResult(0).getType()) << ">(" << e.name(op->getOperand(0)) << ");";
    return success();
  };
  table["arith.index_cast"] = [](Emitter &e, Operation *op) -> LogicalResult {
    e.line() << "const " << scalarType(op->getResult(0).getType()) << " "
             << e.bind(op->getResult(0), "v") << " = " << e.name(op->getOperand(0)) << ";";
    return success();
  };
}

// Structure ops: kernels, tile loops and workers.
#include "pk/Dialect/Pk.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::pk;

#define GET_OP_CLASSES
#include "pk/Dialect/PkStructureOps.cpp.inc"

//===- pk.kernel ------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildType = [](Builder &builder, ArrayRef<Type> args, ArrayRef<Type> results,
                      function_interface_impl::VariadicFlag, std::string &) {
    return builder.getFunctionType(args, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false, getFunctionTypeAttrName(result.name),
      buildType, getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void KernelOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(printer, *this, /*isVariadic=*/false,
                                           getFunctionTypeAttrName(), getArgAttrsAttrName(),
                                           getResAttrsAttrName());
}

LogicalResult KernelOp::verify() {
  // The emitted CUDA names the kernel (an extern "C" function) and its pk_<name> namespace
  // after it, next to the runtime's namespace pk.
  StringRef name = getSymName();
  const bool identifier = !name.empty() && !llvm::isDigit(name.front()) &&
                          llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
  static const llvm::StringSet<> keywords = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char",
      "class", "const", "constexpr", "continue", "decltype", "default", "delete", "do",
      "double", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "not",
      "nullptr", "operator", "or", "private", "protected", "public", "register", "return",
      "short", "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw",
      "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "while", "xor", "main", "std"};
  // Names the CUDA headers NVRTC and nvcc include already declare at global scope (built-in
  // variables, the math library, device libc): an extern "C" kernel of such a name fails to
  // compile only at NVRTC time, so refuse it here.
  static const llvm::StringSet<> cudaNames = {
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "clock", "clock64", "printf", "malloc",
      "free", "memcpy", "memset", "assert", "abs", "labs", "llabs", "min", "max", "umin", "umax", "llmin",
      "llmax", "fabs", "fabsf", "fmin", "fminf", "fmax", "fmaxf", "exp", "expf", "exp2", "exp2f", "exp10",
      "exp10f", "expm1", "expm1f", "log", "logf", "log2", "log2f", "log10", "log10f", "log1p", "log1pf", "sqrt",
      "sqrtf", "rsqrt", "rsqrtf", "cbrt", "cbrtf", "rcbrt", "rcbrtf", "pow", "powf", "sin", "sinf", "cos", "cosf",
      "tan", "tanf", "sincos", "sincosf", "sinpi", "sinpif", "cospi", "cospif", "asin", "asinf", "acos", "acosf",
      "atan", "atanf", "atan2", "atan2f", "sinh", "sinhf", "cosh", "coshf", "tanh", "tanhf", "asinh", "asinhf",
      "acosh", "acoshf", "atanh", "atanhf", "erf", "erff", "erfc", "erfcf", "erfinv", "erfinvf", "lgamma",
      "lgammaf", "tgamma", "tgammaf", "floor", "floorf", "ceil", "ceilf", "round", "roundf", "rint", "rintf",
      "lrint", "lround", "nearbyint", "nearbyintf", "trunc", "truncf", "fmod", "fmodf", "remainder",
      "remainderf", "modf", "modff", "frexp", "frexpf", "ldexp", "ldexpf", "scalbn", "scalbnf", "hypot",
      "hypotf", "fma", "fmaf", "fdim", "fdimf", "copysign", "copysignf", "nan", "nanf", "isnan", "isinf",
      "isfinite", "signbit", "saturate", "normcdf", "normcdff", "atomicAdd", "atomicSub", "atomicExch",
      "atomicMin", "atomicMax", "atomicCAS", "atomicAnd", "atomicOr", "atomicXor", "atomicInc", "atomicDec"};
  // The math API's C-linkage functions of CUDA 13's crt/math_functions.h and device_functions.h
  // (norm, rnorm3d, j0, ... : a kernel named `norm` failed only in NVRTC, found by the mutation
  // fuzzer), less those starting with "__".
  static const llvm::StringSet<> mathNames = {
      "_dsign", "_fdsign", "_ldsign", "abs", "acos", "acosf", "acosh", "acoshf", "asin", "asinf", "asinh",
      "asinhf", "atan", "atan2", "atan2f", "atanf", "atanh", "atanhf", "cbrt", "cbrtf", "ceil", "ceilf",
      "copysign", "copysignf", "cos", "cosf", "cosh", "coshf", "cospi", "cospif", "cyl_bessel_i0",
      "cyl_bessel_i0f", "cyl_bessel_i1", "cyl_bessel_i1f", "erf", "erfc", "erfcf", "erfcinv", "erfcinvf",
      "erfcx", "erfcxf", "erff", "erfinv", "erfinvf", "exp", "exp10", "exp10f", "exp2", "exp2f", "expf",
      "expm1", "expm1f", "fabs", "fabsf", "fdim", "fdimf", "fdivide", "fdividef", "floor", "floorf", "fma",
      "fmaf", "fmax", "fmaxf", "fmin", "fminf", "fmod", "fmodf", "frexp", "frexpf", "hypot", "hypotf", "ilogb",
      "ilogbf", "j0", "j0f", "j1", "j1f", "jn", "jnf", "labs", "ldexp", "ldexpf", "lgamma", "lgammaf", "llabs",
      "llmax", "llmin", "llrint", "llrintf", "llround", "llroundf", "log", "log10", "log10f", "log1p", "log1pf",
      "log2", "log2f", "logb", "logbf", "logf", "lrint", "lrintf", "lround", "lroundf", "max", "min", "modf",
      "modff", "nan", "nanf", "nearbyint", "nearbyintf", "nextafter", "nextafterf", "norm", "norm3d", "norm3df",
      "norm4d", "norm4df", "normcdf", "normcdff", "normcdfinv", "normcdfinvf", "normf", "pow", "powf", "rcbrt",
      "rcbrtf", "remainder", "remainderf", "remquo", "remquof", "rhypot", "rhypotf", "rint", "rintf", "rnorm",
      "rnorm3d", "rnorm3df", "rnorm4d", "rnorm4df", "rnormf", "round", "roundf", "rsqrt", "rsqrtf", "scalbln",
      "scalblnf", "scalbn", "scalbnf", "sin", "sincos", "sincosf", "sincospi", "sincospif", "sinf", "sinh",
      "sinhf", "sinpi", "sinpif", "sqrt", "sqrtf", "tan", "tanf", "tanh", "tanhf", "tgamma", "tgammaf", "trunc",
      "truncf", "ullmax", "ullmin", "umax", "umin", "y0", "y0f", "y1", "y1f", "yn", "ynf"};
  if (!identifier || name == "pk" || name.starts_with("__") || keywords.contains(name) || cudaNames.contains(name) ||
      mathNames.contains(name))
    return emitOpError("kernel name '") << name
           << "' is not usable as a CUDA function name: use letters, digits and '_', not "
              "starting with a digit or '__', and neither a C++ keyword, a name the CUDA headers declare "
              "(threadIdx, max, exp, printf, ...) nor 'pk'";
  if (!getFunctionType().getResults().empty())
    return emitOpError("must not return values; a kernel's effects are its stores");
  for (auto [i, type] : llvm::enumerate(getFunctionType().getInputs())) {
    if (!isa<LocalTensorType, SymTensorType, IndexType, IntegerType, FloatType>(type))
      return emitOpError("argument #") << i << " has type " << type
             << "; kernel arguments must be !pk.tensor, !pk.sym, index, integer or float";
    // A launch passes four extents a tensor (pk::Tensor's shape[4]).
    if (isa<LocalTensorType, SymTensorType>(type) && getTensorShape(type).size() > 4)
      return emitOpError("argument #") << i << " has " << getTensorShape(type).size()
             << " dimensions; a kernel's tensors have 1 to 4 (a launch passes four extents)";
    if (Attribute scratch = getArgAttr(i, kScratchAttrName)) {
      if (!isa<UnitAttr>(scratch))
        return emitOpError("argument #") << i << ": " << kScratchAttrName << " takes no value";
      if (!isa<SymTensorType>(type))
        return emitOpError("argument #") << i << " is marked " << kScratchAttrName
               << " but is not a symmetric tensor (!pk.sym)";
    }
  }
  return success();
}

bool mlir::pk::isScratchArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg) return false;
  auto kernel = dyn_cast_or_null<KernelOp>(arg.getOwner()->getParentOp());
  return kernel && arg.getOwner() == &kernel.getBody().front() &&
         kernel.getArgAttr(arg.getArgNumber(), kScratchAttrName);
}

//===- pk.dim ---------------------------------------------------------------===//

LogicalResult DimOp::verify() {
  int64_t rank = getTensorShape(getTensor().getType()).size();
  int64_t dim = getDimAttr().getInt();
  if (dim < 0 || dim >= rank)
    return emitOpError("dimension ") << dim << " is out of range for a tensor of rank "
                                     << rank;
  return success();
}

//===- pk.tile.foreach ------------------------------------------------------===//

void TileForeachOp::build(OpBuilder &builder, OperationState &state, ValueRange upperBounds,
                          ArrayRef<int64_t> steps) {
  state.addOperands(upperBounds);
  state.addAttribute(getStepsAttrName(state.name), builder.getDenseI64ArrayAttr(steps));
  Region *body = state.addRegion();
  Block *block = new Block();
  for (Value ub : upperBounds) block->addArgument(builder.getIndexType(), ub.getLoc());
  body->push_back(block);
  ensureTerminator(*body, builder, state.location);
}

// pk.tile.foreach (%i, %j) to (%M, %N) step [128, 256] attr-dict { body }
ParseResult TileForeachOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> ivs;
  SmallVector<OpAsmParser::UnresolvedOperand> ubs;
  Type indexType = parser.getBuilder().getIndexType();
  if (parser.parseArgumentList(ivs, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("to") ||
      parser.parseOperandList(ubs, OpAsmParser::Delimiter::Paren) ||
      parser.resolveOperands(ubs, indexType, result.operands) ||
      parser.parseKeyword("step"))
    return failure();
  DenseI64ArrayAttr steps = dyn_cast_or_null<DenseI64ArrayAttr>(
      DenseI64ArrayAttr::parse(parser, Type()));
  if (!steps)
    return failure();
  result.addAttribute(getStepsAttrName(result.name), steps);
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  for (auto &iv : ivs) iv.type = indexType;
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, ivs))
    return failure();
  TileForeachOp::ensureTerminator(*body, parser.getBuilder(), result.location);
  return success();
}

void TileForeachOp::print(OpAsmPrinter &p) {
  p << " (";
  llvm::interleaveComma(getBody().getArguments(), p, [&](BlockArgument a) { p << a; });
  p << ") to (" << getUpperBounds() << ") step ";
  getStepsAttr().print(p);
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), {getStepsAttrName()});
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/false);
}

LogicalResult TileForeachOp::verify() {
  size_t n = getUpperBounds().size();
  if (n == 0)
    return emitOpError("needs at least one dimension");
  if (getSteps().size() != n)
    return emitOpError("has ") << n << " upper bounds but " << getSteps().size() << " steps";
  if (getBody().front().getNumArguments() != n)
    return emitOpError("body must take one index argument per dimension");
  for (int64_t s : getSteps())
    if (s <= 0)
      return emitOpError("steps must be positive, got ") << s;
  return success();
}

//===- pk.worker ------------------------------------------------------------===//

LogicalResult WorkerOp::verify() {
  if (getBlocksAttr().getInt() < 0)
    return emitOpError("block count must be 0 (chosen at launch) or positive");
  return success();
}

//===- pk.check -------------------------------------------------------------===//

LogicalResult CheckOp::verify() {
  if (getMessage().empty())
    return emitOpError("needs a message saying what the check requires");
  return success();
}

LogicalResult LoadScalarOp::verify() {
  auto tensor = getSource().getType();
  if (getIndices().size() != tensor.getShape().size())
    return emitOpError("give one index per tensor dimension (") << tensor.getShape().size() << ")";
  const bool integer = isa<IntegerType>(tensor.getElementType());
  if (integer != isa<IndexType>(getResult().getType()))
    return emitOpError("reads an integer element as an index and a float one as f32; got ")
           << tensor.getElementType() << " -> " << getResult().getType();
  return success();
}

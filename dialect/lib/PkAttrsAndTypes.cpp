// Parsing, printing and verification of pk attributes and types.
#include "pk/Dialect/Pk.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pk;

#include "pk/Dialect/PkEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "pk/Dialect/PkAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "pk/Dialect/PkTypes.cpp.inc"

void PkDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "pk/Dialect/PkAttrs.cpp.inc"
      >();
}

void PkDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "pk/Dialect/PkTypes.cpp.inc"
      >();
}

bool mlir::pk::isFp8(Type type) { return isa<Float8E4M3FNType, Float8E5M2Type>(type); }
bool mlir::pk::isComparison(MapKind k) {
  return k == MapKind::lt || k == MapKind::le || k == MapKind::gt || k == MapKind::ge || k == MapKind::eq ||
         k == MapKind::ne;
}
MapKind mlir::pk::swappedComparison(MapKind k) {
  switch (k) {
  case MapKind::lt: return MapKind::gt;
  case MapKind::le: return MapKind::ge;
  case MapKind::gt: return MapKind::lt;
  case MapKind::ge: return MapKind::le;
  default: return k;
  }
}

bool mlir::pk::isSupportedElementType(Type type) {
  return type.isBF16() || type.isF16() || type.isF32() || type.isF64() ||
         isFp8(type) ||
         type.isSignlessInteger(8) || type.isSignlessInteger(32) || type.isSignlessInteger(64);
}

ArrayRef<int64_t> mlir::pk::getTensorShape(Type type) {
  if (auto t = dyn_cast<LocalTensorType>(type)) return t.getShape();
  return cast<SymTensorType>(type).getShape();
}

Type mlir::pk::getTensorElementType(Type type) {
  if (auto t = dyn_cast<LocalTensorType>(type)) return t.getElementType();
  return cast<SymTensorType>(type).getElementType();
}

// `<` dims `x` element-type `>` with dims that may be `?` when dynamic is allowed.
static ParseResult parseShapeAndType(AsmParser &parser, SmallVectorImpl<int64_t> &shape,
                                     Type &elementType, bool allowDynamic) {
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, allowDynamic, /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return failure();
  return success();
}

static void printShapeAndType(AsmPrinter &printer, ArrayRef<int64_t> shape, Type elementType) {
  printer << "<";
  for (int64_t d : shape)
    printer << (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d)) << "x";
  printer << elementType;
}

static LogicalResult verifyShapeAndType(function_ref<InFlightDiagnostic()> emitError,
                                        StringRef what, ArrayRef<int64_t> shape,
                                        Type elementType, bool allowDynamic) {
  if (shape.empty() || shape.size() > 4)
    return emitError() << what << " must have between 1 and 4 dimensions, got " << shape.size();
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d) ? !allowDynamic : d <= 0)
      return emitError() << what << " dimensions must be "
                         << (allowDynamic ? "positive or '?'" : "positive and static");
  }
  if (!isSupportedElementType(elementType))
    return emitError() << what << " element type must be bf16, f16, f32, f64, fp8 (f8E4M3FN, f8E5M2), i8, i32 or i64, got "
                       << elementType;
  return success();
}

Type TileType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parseShapeAndType(parser, shape, elementType, /*allowDynamic=*/false))
    return {};
  MemorySpace space = MemorySpace::reg;
  if (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return {};
    auto parsed = symbolizeMemorySpace(keyword);
    if (!parsed) {
      parser.emitError(loc, "expected memory space 'reg' or 'smem'");
      return {};
    }
    space = *parsed;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<TileType>(parser.getContext(), shape, elementType, space);
}

void TileType::print(AsmPrinter &printer) const {
  printShapeAndType(printer, getShape(), getElementType());
  if (getMemorySpace() != MemorySpace::reg)
    printer << ", " << stringifyMemorySpace(getMemorySpace());
  printer << ">";
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType, MemorySpace) {
  return verifyShapeAndType(emitError, "tile", shape, elementType, /*allowDynamic=*/false);
}

int64_t TileType::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : getShape()) n *= d;
  return n;
}

#define PK_TENSOR_TYPE_ASM(Class, what)                                                    \
  Type Class::parse(AsmParser &parser) {                                                  \
    SmallVector<int64_t> shape;                                                           \
    Type elementType;                                                                     \
    if (parseShapeAndType(parser, shape, elementType, true) || parser.parseGreater())     \
      return {};                                                                          \
    return parser.getChecked<Class>(parser.getContext(), shape, elementType);             \
  }                                                                                       \
  void Class::print(AsmPrinter &printer) const {                                          \
    printShapeAndType(printer, getShape(), getElementType());                             \
    printer << ">";                                                                       \
  }                                                                                       \
  LogicalResult Class::verify(function_ref<InFlightDiagnostic()> emitError,               \
                              ArrayRef<int64_t> shape, Type elementType) {                \
    return verifyShapeAndType(emitError, what, shape, elementType, true);                 \
  }

PK_TENSOR_TYPE_ASM(LocalTensorType, "tensor")
PK_TENSOR_TYPE_ASM(SymTensorType, "symmetric tensor")

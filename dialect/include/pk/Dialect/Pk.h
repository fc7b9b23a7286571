// The pk dialect: one header for its dialect class, attributes, types and ops.
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/SymbolTable.h"

#include "pk/Dialect/PkDialect.h.inc"
#include "pk/Dialect/PkEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "pk/Dialect/PkAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "pk/Dialect/PkTypes.h.inc"
#define GET_OP_CLASSES
#include "pk/Dialect/PkStructureOps.h.inc"
#define GET_OP_CLASSES
#include "pk/Dialect/PkTileOps.h.inc"
#define GET_OP_CLASSES
#include "pk/Dialect/PkCollectiveOps.h.inc"
#define GET_OP_CLASSES
#include "pk/Dialect/PkCommOps.h.inc"
#define GET_OP_CLASSES
#include "pk/Dialect/PkSyncOps.h.inc"

namespace mlir::pk {
/// Unit argument attribute of pk.kernel: the symmetric argument is workspace the caller lends;
/// its contents after the kernel are unspecified, so a fused lowering may skip writing it.
constexpr llvm::StringLiteral kScratchAttrName = "pk.scratch";
// On a spec's own flag (pk.spec): how far pkc moved its slot up past pkc's own flags, so a
// message can name the slot the spec wrote (the flag's slot minus this).
constexpr llvm::StringLiteral kSpecShiftAttrName = "pk.spec_shift";
// On a peer store or load the spec asked to move a register tile by TMA (which moves tiles
// through shared memory): it moves by ld/st, and pk-select-transport records why.
constexpr llvm::StringLiteral kTmaFromRegistersAttrName = "pk.tma_from_registers";
/// The grid of a kernel whose body is not split into workers (tile loops on the general path,
/// explicit primitives): its tile loops deal tiles to these blocks, and per-block flags pair
/// block b of every rank. The emitter, pk-lower-peer-tiles and the protocol model share it.
constexpr int64_t kGeneralPathBlocks = 132;
/// Whether `v` is a kernel argument marked pk.scratch.
bool isScratchArgument(Value v);
/// Element types tiles and tensors may hold.
bool isSupportedElementType(Type type);
/// fp8 (f8E4M3FN or f8E5M2): a storage type that moves and casts but does not reduce.
bool isFp8(Type type);
/// The map kinds that compare (lt, le, gt, ge, eq, ne): their results are 0 or 1.
bool isComparison(MapKind kind);
/// A comparison with its operands swapped (a < b is b > a); other kinds as they are.
MapKind swappedComparison(MapKind kind);
/// Shape and element type of a local or symmetric tensor type.
ArrayRef<int64_t> getTensorShape(Type tensorType);
Type getTensorElementType(Type tensorType);
/// The most ranks a launch can have: the runtime's PK_MAX_RANKS (pk/device/launch_context.cuh).
constexpr int64_t kMaxRanks = 16;
/// Flag slots pk.comm.push_small owns from its `lanes` slot on: PK_MAX_RANKS source ranks x
/// 32 lanes (pk/device/push_small.cuh), i.e. ceil(this / blocks) block-scope slot units.
constexpr int64_t kPushSmallSlots = kMaxRanks * 32;
int64_t pushSmallSlotUnits(PushSmallOp op);
/// The dimension an all-gather or reduce-scatter concatenates or splits along, the deeper of an
/// all-to-all's split and concat dimensions (0 for every other collective: they move blocks of
/// rows). Not 0: a rank's part is strided.
int64_t getCollectiveDim(Operation *op);
} // namespace mlir::pk

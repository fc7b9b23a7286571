// The pk dialect: declaration and shared enums.
#ifndef PK_BASE_TD
#define PK_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Pk_Dialect : Dialect {
  let name = "pk";
  let cppNamespace = "::mlir::pk";
  let summary = "Multi-GPU tile kernels: tiles, symmetric tensors, communication and sync";
  let description = [{
    The pk dialect describes a multi-GPU kernel at two levels. At the spec level a kernel
    states which tiles it loads, what it computes and what it communicates (collective
    intent such as `pk.coll.all_reduce`). Passes choose transfer mechanisms, overlap schemes
    and one-way synchronisation and rewrite the kernel to the device level, which uses only
    the device primitives (`pk.comm.*`, `pk.sync.*`) inside worker roles (`pk.worker`).
    See dialect/docs/Rationale.md.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class Pk_Op<string mnemonic, list<Trait> traits = []> : Op<Pk_Dialect, mnemonic, traits>;

#endif // PK_BASE_TD

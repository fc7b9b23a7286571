// Types of the pk dialect: tiles, local and symmetric tensors, flags.
#ifndef PK_TYPES_TD
#define PK_TYPES_TD

include "pk/Dialect/PkAttrs.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Pk_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Pk_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Pk_TileType : Pk_Type<"Tile", "tile"> {
  let summary = "A statically shaped tile in registers or shared memory";
  let description = [{
    A tile is the unit of compute and communication: a small, statically shaped block of
    elements that lives in registers (`reg`, the default) or shared memory (`smem`).
    Tiles taken at a tensor's edge are clipped to the tensor: elements outside it are not
    loaded and not stored.

    ```mlir
    !pk.tile<128x64xbf16, smem>
    !pk.tile<128x256xf32>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
                        "::mlir::pk::MemorySpace":$memorySpace);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
  }];
}

def Pk_LocalTensorType : Pk_Type<"LocalTensor", "tensor"> {
  let summary = "A tensor in this rank's global memory";
  let description = [{
    A contiguous, row-major tensor that only this rank addresses. Dimensions may be
    dynamic (`?`); their sizes come from the kernel's arguments at launch.

    ```mlir
    !pk.tensor<?x4096xbf16>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{ int64_t getRank() const { return getShape().size(); } }];
}

def Pk_SymTensorType : Pk_Type<"SymTensor", "sym"> {
  let summary = "A symmetric tensor: the same shape on every rank, peer-addressable";
  let description = [{
    Every rank allocates a tensor of this shape at the same time; every rank can read and
    write every other rank's copy (through NVLink peer mappings). Plain tile ops on a
    symmetric tensor touch this rank's own copy; `pk.comm.*` ops address peers.

    ```mlir
    !pk.sym<?xbf16>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{ int64_t getRank() const { return getShape().size(); } }];
}

def Pk_FlagType : Pk_Type<"Flag", "flag"> {
  let summary = "A monotone epoch counter in symmetric memory";
  let description = [{
    A 64-bit counter slot in the runtime's symmetric flag array. Signals add to a peer's
    slot with release semantics; waits read the local slot with acquire semantics and
    compare it with `>=` against the launch epoch times the signals expected per launch,
    so flags are never reset.

    ```mlir
    !pk.flag
    ```
  }];
}

def Pk_AnyTensor : AnyTypeOf<[Pk_LocalTensorType, Pk_SymTensorType], "local or symmetric tensor">;

#endif // PK_TYPES_TD

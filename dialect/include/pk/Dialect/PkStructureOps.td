// Structure ops: kernels, rank and world size, tile loops, worker roles.
#ifndef PK_STRUCTURE_OPS_TD
#define PK_STRUCTURE_OPS_TD

include "pk/Dialect/PkTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

def Pk_KernelOp : Pk_Op<"kernel", [IsolatedFromAbove, FunctionOpInterface,
                                   AutomaticAllocationScope]> {
  let summary = "A multi-GPU kernel, launched on every rank";
  let description = [{
    The kernel every rank runs. Arguments are local tensors (`!pk.tensor`), symmetric
    tensors (`!pk.sym`) and scalars (`index`, integers, floats). A kernel returns nothing;
    its effects are its stores. The attribute `pk.level` is `"spec"` until the passes have
    lowered all communication intent, then `"device"`.

    Every store a kernel's body makes is performed, including stores into symmetric
    arguments that only feed a later collective, because the caller may read them. A
    symmetric argument marked `{pk.scratch}` is workspace instead: its contents after the
    kernel are unspecified, and a fused lowering may skip writing it (the C++ spelling is
    `Scratch<T, Rank>`).

    Ordering: every rank launches the kernel on its own stream; work the stream did before
    the launch is complete and visible on that rank when the kernel starts.

    ```mlir
    pk.kernel @all_reduce(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
      pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
      pk.return
    }
    pk.kernel @gemm_ar(%a: !pk.tensor<?x?xbf16>, %b: !pk.tensor<?x?xbf16>,
                       %p: !pk.sym<?x?xbf16> {pk.scratch}, %c: !pk.sym<?x?xbf16>) { ... }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() { return getFunctionType().getResults(); }
  }];
}

def Pk_ReturnOp : Pk_Op<"return", [Pure, Terminator, HasParent<"KernelOp">]> {
  let summary = "Ends a kernel";
  let description = [{
    Terminates the body of a `pk.kernel`. It has no operands: kernels return nothing.

    ```mlir
    pk.return
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Pk_YieldOp : Pk_Op<"yield", [Pure, Terminator,
                                 ParentOneOf<["TileForeachOp", "WorkerOp"]>]> {
  let summary = "Ends the body of a tile loop or a worker";
  let description = [{
    The implicit terminator of `pk.tile.foreach` and `pk.worker` regions.

    ```mlir
    pk.yield
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Pk_RankOp : Pk_Op<"rank", [Pure]> {
  let summary = "This GPU's rank, in [0, world size)";
  let description = [{
    The rank is a run-time value: kernels are never specialised to a rank.

    ```mlir
    %r = pk.rank
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def Pk_WorldSizeOp : Pk_Op<"world_size", [Pure]> {
  let summary = "The number of ranks the kernel runs on";
  let description = [{
    The world size is a run-time value, at least 1. Protocols that depend on it are
    checked for every world size from 1 to 16.

    ```mlir
    %w = pk.world_size
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def Pk_GridBlocksOp : Pk_Op<"grid_blocks", [Pure]> {
  let summary = "The number of blocks the kernel was launched with";
  let description = [{
    A run-time value (`gridDim.x`), the same on every rank: the runtime sizes one grid for all
    of them (smaller where ranks share a GPU). A grid-wide barrier waits for `world_size *
    grid_blocks` signals per launch. The protocol checker evaluates it as the number of blocks
    it models, so such a barrier is checked with a few blocks standing for many.

    ```mlir
    %b = pk.grid_blocks
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def Pk_DimOp : Pk_Op<"dim", [Pure]> {
  let summary = "The size of one dimension of a tensor";
  let description = [{
    Returns dimension `dim` of a local or symmetric tensor (the same on every rank for a
    symmetric one).

    ```mlir
    %n = pk.dim %x, 0 : !pk.sym<?xbf16>
    ```
  }];
  let arguments = (ins Pk_AnyTensor:$tensor, I64Attr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$tensor `,` $dim attr-dict `:` qualified(type($tensor))";
  let hasVerifier = 1;
}

def Pk_LoadScalarOp : Pk_Op<"load_scalar"> {
  let summary = "Reads one element of this rank's local tensor as a scalar";
  let description = [{
    A count or an offset written by an earlier kernel (tokens per expert): an integer element
    as an index, a float element as f32, read by every thread alike. An element outside the
    tensor reads as zero, so a bad index is never an out-of-bounds access. The result may bound
    a tile loop (`tiles(x.at(e), {128})`). The protocol checker has no model of a value read
    from memory, so kernels that communicate cannot branch or loop on it.

    ```mlir
    %n = pk.load_scalar %counts[%e] : !pk.tensor<?xi32> -> index
    ```
  }];
  let arguments = (ins Arg<Pk_LocalTensorType, "", [MemRead]>:$source, Variadic<Index>:$indices);
  let results = (outs AnyTypeOf<[Index, F32]>:$result);
  let assemblyFormat = "$source `[` $indices `]` attr-dict `:` qualified(type($source)) `->` type($result)";
  let hasVerifier = 1;
}

def Pk_TileForeachOp : Pk_Op<"tile.foreach", [
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "A parallel loop over tile origins";
  let description = [{
    Runs its body once for every tile origin of the iteration space `[0, ub)` with the
    given static tile steps, in no particular order and possibly in parallel; the passes
    distribute iterations over blocks. The last tile along a dimension may be partial:
    tile ops clip it to the tensor. The region's arguments are the tile origins.

    ```mlir
    pk.tile.foreach (%m, %n) to (%M, %N) step [128, 256] {
      ...
    }
    ```
  }];
  let arguments = (ins Variadic<Index>:$upperBounds, DenseI64ArrayAttr:$steps);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::ValueRange":$upperBounds,
                                 "::llvm::ArrayRef<int64_t>":$steps)>];
}

def Pk_WorkerOp : Pk_Op<"worker", [SingleBlockImplicitTerminator<"YieldOp">,
                                   RecursiveMemoryEffects, HasParent<"KernelOp">]> {
  let summary = "Code run by one worker role of the kernel";
  let description = [{
    Device-level structure: the body runs in the blocks (or warps) of one role. `loader`
    brings tiles into shared memory, `consumer` computes, `storer` writes finished tiles
    and issues tile-granular transfers (intra-SM overlap), `communicator` runs in
    dedicated blocks (inter-SM overlap). `blocks` is the number of blocks given to the
    role; 0 lets the launch pick it from the device's SM count.

    Ordering: roles of one kernel hand data to each other only through shared-memory
    mbarriers (inside a block) or flags (between blocks); nothing else orders them.

    ```mlir
    pk.worker <communicator> blocks 0 {
      ...
    }
    ```
  }];
  let arguments = (ins Pk_RoleAttr:$role, I64Attr:$blocks);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$role `blocks` $blocks attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Pk_CheckOp : Pk_Op<"check"> {
  let summary = "A launch-time check of the kernel's arguments";
  let description = [{
    Sizes are run-time values, so shape rules that the verifiers cannot decide (an
    all-gather's output holding world-size times its input, say) are checked when the
    kernel starts. If `condition` is false the kernel records the check, `expected` and
    `actual` in the launch's error slot, prints `message`, and every block leaves before
    any signal, so no rank waits on another and the host call returns an error. Symmetric
    shapes make every rank take the same branch.

    ```mlir
    pk.check %ok, "all_gather: the output must hold world_size x the input" expected %want got %n
    ```
  }];
  let arguments = (ins I1:$condition, Index:$expected, Index:$actual, StrAttr:$message);
  let assemblyFormat = "$condition `,` $message `expected` $expected `got` $actual attr-dict";
  let hasVerifier = 1;
}

#endif // PK_STRUCTURE_OPS_TD

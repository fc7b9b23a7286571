// Communication intent: what must move between ranks, before any mechanism is chosen.
#ifndef PK_COLLECTIVE_OPS_TD
#define PK_COLLECTIVE_OPS_TD

include "pk/Dialect/PkTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Pk_CollectiveOp<string mnemonic, bit reduces>
    : Pk_Op<"coll." # mnemonic> {
  let arguments = !if(reduces,
      (ins Pk_ReduceKindAttr:$kind, Pk_SymTensorType:$input, Pk_AnyTensor:$output,
           DefaultValuedAttr<Pk_TransportAttr, "::mlir::pk::Transport::automatic">:$transport,
           DefaultValuedAttr<Pk_AlgorithmAttr, "::mlir::pk::Algorithm::automatic">:$algorithm),
      (ins Pk_SymTensorType:$input, Pk_AnyTensor:$output,
           DefaultValuedAttr<Pk_TransportAttr, "::mlir::pk::Transport::automatic">:$transport));
  let assemblyFormat = !if(reduces,
      "$kind $input `into` $output attr-dict `:` qualified(type($input)) `,` qualified(type($output))",
      "$input `into` $output attr-dict `:` qualified(type($input)) `,` qualified(type($output))");
  let hasVerifier = 1;
}

def Pk_AllReduceOp : Pk_CollectiveOp<"all_reduce", 1> {
  let summary = "Reduces a symmetric tensor over all ranks into every rank's output";
  let description = [{
    After the op, `output` on every rank holds the element-wise reduction of `input` over
    all ranks. `input` must be symmetric (peers read it); `output` has the same shape and
    element type. The passes choose the algorithm (one-shot: every rank reads every peer;
    two-shot: reduce-scatter then all-gather) and the transport unless they are given.

    Ordering: the op reads every rank's `input` as it was when that rank reached the op,
    and no rank's later writes to `input` can overtake a peer's reads of it.

    ```mlir
    pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
    ```
  }];
}

def Pk_AllGatherOp : Pk_CollectiveOp<"all_gather", 0> {
  let summary = "Concatenates every rank's input, by rank, into every rank's output";
  let description = [{
    Along dimension `dim` (default 0), `output` is the world size times `input`; the other
    dimensions and the element type match. Rank r's input lands at indices [r*n, (r+1)*n)
    of that dimension (rows for dim 0; column shards, as tensor-parallel layers gather
    them, for dim 1 of a matrix). Every rank pulls the peers' symmetric inputs into its own
    output, so the output may be a plain local tensor.

    ```mlir
    pk.coll.all_gather %x into %y : !pk.sym<?x4096xbf16>, !pk.sym<?x4096xbf16>
    pk.coll.all_gather %x into %y {dim = 1 : i64} : !pk.sym<?x1024xbf16>, !pk.sym<?x?xbf16>
    ```
  }];
  let arguments = (ins Pk_SymTensorType:$input, Pk_AnyTensor:$output,
      DefaultValuedAttr<Pk_TransportAttr, "::mlir::pk::Transport::automatic">:$transport,
      DefaultValuedAttr<I64Attr, "0">:$dim);
}

def Pk_ReduceScatterOp : Pk_CollectiveOp<"reduce_scatter", 1> {
  let summary = "Reduces over ranks and leaves rank r with the r-th block along a dimension";
  let description = [{
    Along dimension `dim` (default 0), `input` is the world size times `output`. Rank r
    receives the reduction over ranks of input indices [r*n, (r+1)*n) of that dimension.

    ```mlir
    pk.coll.reduce_scatter <sum> %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
    pk.coll.reduce_scatter <sum> %x into %y {dim = 1 : i64} : !pk.sym<?x?xf32>, !pk.tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Pk_ReduceKindAttr:$kind, Pk_SymTensorType:$input, Pk_AnyTensor:$output,
      DefaultValuedAttr<Pk_TransportAttr, "::mlir::pk::Transport::automatic">:$transport,
      DefaultValuedAttr<Pk_AlgorithmAttr, "::mlir::pk::Algorithm::automatic">:$algorithm,
      DefaultValuedAttr<I64Attr, "0">:$dim);
}

def Pk_AllToAllOp : Pk_CollectiveOp<"all_to_all", 0> {
  let summary = "Rank r sends its j-th block to rank j, which stores it as block r";
  let description = [{
    By default `input` and `output` have the same shape and the first dimension splits into
    world-size equal blocks. With `split_dim` s and `concat_dim` c (s != c), the input's
    dimension s splits into world-size blocks and rank r's block j lands on rank j as block r
    of the output's dimension c: the input's dimension s is world_size times the output's,
    the output's dimension c world_size times the input's, and the others agree (sequence
    parallelism to head parallelism: [H, S/W, D] to [H/W, S, D] with s = 0, c = 1). Every
    rank pulls its blocks out of the peers' symmetric inputs, so the output may be local.

    ```mlir
    pk.coll.all_to_all %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
    pk.coll.all_to_all %x into %y {split_dim = 0 : i64, concat_dim = 1 : i64} : !pk.sym<?x?x128xbf16>, !pk.sym<?x?x128xbf16>
    ```
  }];
  let arguments = (ins Pk_SymTensorType:$input, Pk_AnyTensor:$output,
      DefaultValuedAttr<Pk_TransportAttr, "::mlir::pk::Transport::automatic">:$transport,
      DefaultValuedAttr<I64Attr, "0">:$split_dim, DefaultValuedAttr<I64Attr, "0">:$concat_dim);
}

class Pk_RootedCollectiveOp<string mnemonic, bit reduces>
    : Pk_Op<"coll." # mnemonic> {
  let arguments = !if(reduces,
      (ins Pk_ReduceKindAttr:$kind, Pk_SymTensorType:$input, Pk_AnyTensor:$output, Index:$root,
           DefaultValuedAttr<Pk_TransportAttr, "::mlir::pk::Transport::automatic">:$transport),
      (ins Pk_SymTensorType:$input, Pk_AnyTensor:$output, Index:$root,
           DefaultValuedAttr<Pk_TransportAttr, "::mlir::pk::Transport::automatic">:$transport));
  let assemblyFormat = !if(reduces,
      "$kind $input `into` $output `root` $root attr-dict `:` qualified(type($input)) `,` qualified(type($output))",
      "$input `into` $output `root` $root attr-dict `:` qualified(type($input)) `,` qualified(type($output))");
  let hasVerifier = 1;
}

def Pk_BroadcastOp : Pk_RootedCollectiveOp<"broadcast", 0> {
  let summary = "Copies the root rank's input into every rank's output";
  let description = [{
    After the op, `output` on every rank equals `input` on rank `root`. Input and output
    have the same shape and element type. `root` is a run-time value and must be the same
    on every rank.

    Ordering: every rank reads the root's `input` as it was when the root reached the op;
    the root's later writes to `input` cannot overtake those reads.

    ```mlir
    pk.coll.broadcast %x into %y root %r : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
    ```
  }];
}

def Pk_ReduceToRootOp : Pk_RootedCollectiveOp<"reduce", 1> {
  let summary = "Reduces a symmetric tensor over all ranks into the root rank's output";
  let description = [{
    After the op, `output` on rank `root` holds the element-wise reduction of `input` over
    all ranks; the other ranks' `output` is not written. Same shape and element type.

    ```mlir
    pk.coll.reduce <sum> %x into %y root %r : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
    ```
  }];
}

def Pk_GatherOp : Pk_RootedCollectiveOp<"gather", 0> {
  let summary = "Concatenates every rank's input, by rank, into the root rank's output";
  let description = [{
    `output`'s first dimension is the world size times `input`'s; rank r's input lands at
    rows [r*n, (r+1)*n) of the root's output. Other ranks' `output` is not written.

    ```mlir
    pk.coll.gather %x into %y root %r : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
    ```
  }];
}

def Pk_ScatterOp : Pk_RootedCollectiveOp<"scatter", 0> {
  let summary = "Gives rank r the r-th block of rows of the root rank's input";
  let description = [{
    `input`'s first dimension is the world size times `output`'s; rank r's output receives
    rows [r*n, (r+1)*n) of the root's input.

    ```mlir
    pk.coll.scatter %x into %y root %r : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
    ```
  }];
}

class Pk_TileToPeerOp<string mnemonic> : Pk_Op<"coll." # mnemonic> {
  let arguments = (ins Pk_TileType:$value, Pk_SymTensorType:$dest, Index:$peer,
                       Variadic<Index>:$indices,
                       DefaultValuedAttr<Pk_TransportAttr, "::mlir::pk::Transport::automatic">:$transport,
                       DefaultValuedAttr<Pk_OverlapAttr, "::mlir::pk::Overlap::automatic">:$overlap);
  let assemblyFormat = "$value `,` $dest `[` $indices `]` `on` $peer attr-dict `:` qualified(type($value)) `,` qualified(type($dest))";
  let hasVerifier = 1;
}

def Pk_StoreTileOp : Pk_TileToPeerOp<"store_tile"> {
  let summary = "Intent: a tile stored into a peer's symmetric tensor";
  let description = [{
    The tile must end up in `peer`'s copy of `dest` at the given origin before the kernel
    ends on `peer`. The passes pick the mechanism, the overlap scheme and the signal.

    ```mlir
    pk.coll.store_tile %t, %c[%m, %n] on %p : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
    ```
  }];
}

def Pk_AddTileOp : Pk_TileToPeerOp<"add_tile"> {
  let summary = "Intent: a tile added into a peer's symmetric tensor";
  let description = [{
    Like `pk.coll.store_tile`, but adds element-wise; concurrent adds from several ranks
    into the same elements are all applied.

    ```mlir
    pk.coll.add_tile %t, %c[%m, %n] on %p : !pk.tile<128x256xbf16>, !pk.sym<?x?xbf16>
    ```
  }];
}

#endif // PK_COLLECTIVE_OPS_TD

// Tile ops: loads, stores and compute on tiles of this rank.
#ifndef PK_TILE_OPS_TD
#define PK_TILE_OPS_TD

include "pk/Dialect/PkTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

def Pk_TileLoadOp : Pk_Op<"tile.load"> {
  let summary = "Loads a tile of this rank's tensor";
  let description = [{
    Loads the tile whose origin is given by the indices (one per tensor dimension) from
    this rank's tensor (its own copy, for a symmetric tensor). Elements outside the tensor
    read as zero. The tile's rank must equal the tensor's and its element type must match.

    ```mlir
    %t = pk.tile.load %a[%m, %k] : !pk.tensor<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
    ```
  }];
  let arguments = (ins Arg<Pk_AnyTensor, "", [MemRead]>:$source, Variadic<Index>:$indices);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$source `[` $indices `]` attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileStoreOp : Pk_Op<"tile.store"> {
  let summary = "Stores a tile into this rank's tensor";
  let description = [{
    Writes the tile at the origin given by the indices into this rank's tensor; elements
    outside the tensor are dropped. Ordering: a plain store; a later signal publishes it.

    ```mlir
    pk.tile.store %t, %c[%m, %n] : !pk.tile<128x256xbf16>, !pk.tensor<?x?xbf16>
    ```
  }];
  let arguments = (ins Pk_TileType:$value, Arg<Pk_AnyTensor, "", [MemWrite]>:$dest,
                       Variadic<Index>:$indices);
  let assemblyFormat = "$value `,` $dest `[` $indices `]` attr-dict `:` qualified(type($value)) `,` qualified(type($dest))";
  let hasVerifier = 1;
}

def Pk_TileZerosOp : Pk_Op<"tile.zeros", [Pure]> {
  let summary = "A register tile of zeros";
  let description = [{
    Typically the initial accumulator of a matrix multiply.

    ```mlir
    %acc = pk.tile.zeros : !pk.tile<128x256xf32>
    ```
  }];
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileMmaOp : Pk_Op<"tile.mma", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "Tile matrix multiply-accumulate: acc + a @ b";
  let description = [{
    `a` is M x K, `b` is K x N, `acc` and the result are M x N register tiles of f32.
    `a` and `b` have the same element type (bf16 or f16). Lowers to wgmma on Hopper.
    With `transpose_b`, `b` is N x K and the op computes acc + a @ b^T: both operands are
    then K-major, the layout of a linear layer's weight and the one Hopper's GEMM template
    loads (see templates/include/pk/templates/gemm_tile.cuh).

    ```mlir
    %r = pk.tile.mma %a, %b, %acc : !pk.tile<128x64xbf16, smem>, !pk.tile<64x256xbf16, smem>, !pk.tile<128x256xf32>
    %s = pk.tile.mma %a, %w, %acc {transpose_b} : !pk.tile<128x64xbf16, smem>, !pk.tile<256x64xbf16, smem>, !pk.tile<128x256xf32>
    ```
  }];
  let arguments = (ins Pk_TileType:$a, Pk_TileType:$b, Pk_TileType:$acc, UnitAttr:$transpose_b);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$a `,` $b `,` $acc attr-dict `:` qualified(type($a)) `,` qualified(type($b)) `,` qualified(type($acc))";
  let hasVerifier = 1;
}

def Pk_TileMapOp : Pk_Op<"tile.map", [Pure]> {
  let summary = "An element-wise operation on tiles";
  let description = [{
    Applies `kind` element by element: unary kinds (`exp`, `neg`, `sqrt`, `rsqrt`, `log`,
    `tanh`, `sigmoid`, `silu`, `gelu_tanh`, `gelu_erf`, `erf`, `sin`, `cos`, `abs`) take one tile,
    binary kinds (`add`, `sub`, `mul`, `div`, `max`, `min`, `pow`, `rem` and the comparisons) two tiles of the same shape and type,
    or a 2-D tile and a rows x 1 (or 1 x cols) register tile of its element type, broadcast
    along the missing dimension (`x - row_max(x)`). The result has the full operand's type.
    Arithmetic on float tiles is fp32, rounded to the element type after the op; on integer
    tiles (i32, i64) it is integer arithmetic in the element type (wrapping; `div` truncates
    toward zero, and `div` and `rem` by zero give 0). The transcendental kinds take float
    tiles only, `rem` integer tiles only.

    ```mlir
    %s = pk.tile.map <add> %a, %b : !pk.tile<128x256xf32>, !pk.tile<128x256xf32> -> !pk.tile<128x256xf32>
    ```
  }];
  let arguments = (ins Pk_MapKindAttr:$kind, Variadic<Pk_TileType>:$inputs);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$kind $inputs attr-dict `:` qualified(type($inputs)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_ScalarMapOp : Pk_Op<"scalar_map", [Pure]> {
  let summary = "An element-wise math kind applied to f32 scalars";
  let description = [{
    The scalar form of `pk.tile.map` for float kernel arguments, constants and sizes
    (`rsqrt(float(x.cols()))`, `sqrt(eps)`, `max(scale, 1e-6f)`): the unary math kinds and
    `add`, `sub`, `mul`, `div`, `max`, `min`, `pow` in fp32, computed by every thread alike.
    Comparisons and `rem` are not scalar kinds.

    ```mlir
    %r = pk.scalar_map <rsqrt> %n
    %m = pk.scalar_map <max> %a, %b
    ```
  }];
  let arguments = (ins Pk_MapKindAttr:$kind, Variadic<F32>:$inputs);
  let results = (outs F32:$result);
  let assemblyFormat = "$kind $inputs attr-dict";
  let hasVerifier = 1;
}

def Pk_TileSplatOp : Pk_Op<"tile.splat", [Pure]> {
  let summary = "A register tile with every element set to a scalar";
  let description = [{
    How a scalar (a kernel argument such as `eps`, or a constant) enters tile arithmetic: the
    front end splats it to the other operand's tile type. The value is rounded to the tile's
    element type. Float scalars fill float tiles; integers and indices (a rank, an offset)
    fill integer tiles, or float ones as the nearest float.

    ```mlir
    %e = pk.tile.splat %eps : f32 -> !pk.tile<64x1xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnyFloat, Index, AnySignlessInteger]>:$scalar);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$scalar attr-dict `:` type($scalar) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileSelectOp : Pk_Op<"tile.select", [Pure, AllTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "Picks elements of one of two tiles by a mask tile";
  let description = [{
    Element i of the result is `on_true[i]` where `cond[i]` is not zero and `on_false[i]`
    elsewhere (a true select: the other operand is never combined, so a `-inf` fill stays
    `-inf`). Masks come from comparisons (`pk.tile.map <lt>` and friends, 1 or 0). `cond` has
    the result's shape; its element type may differ.

    ```mlir
    %r = pk.tile.select %mask, %s, %fill : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
    ```
  }];
  let arguments = (ins Pk_TileType:$cond, Pk_TileType:$on_true, Pk_TileType:$on_false);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$cond `,` $on_true `,` $on_false attr-dict `:` qualified(type($cond)) `,` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileIotaOp : Pk_Op<"tile.iota", [Pure]> {
  let summary = "A register tile of element coordinates along one dimension, plus an origin";
  let description = [{
    Element (i0, i1, ...) is `origin + i<dim>`, as the tile's element type: with the tile
    loop's row origin and `dim = 0` it holds each element's row in the tensor, with the column
    origin and `dim = 1` its column, which is what a causal mask compares.

    ```mlir
    %rows = pk.tile.iota %m dim 0 : !pk.tile<64x64xf32>
    ```
  }];
  let arguments = (ins Index:$origin, I64Attr:$dim);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$origin `dim` $dim attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileCastOp : Pk_Op<"tile.cast", [Pure]> {
  let summary = "Converts a tile's element type";
  let description = [{
    Converts every element: between float types rounding to nearest even; float to integer
    rounding toward zero and saturating (NaN gives 0); integer to float to the nearest float;
    between integer types wrapping. Shapes must match.

    ```mlir
    %o = pk.tile.cast %acc : !pk.tile<128x256xf32> to !pk.tile<128x256xbf16>
    ```
  }];
  let arguments = (ins Pk_TileType:$input);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `to` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileReduceRowsOp : Pk_Op<"tile.reduce_rows", [Pure]> {
  let summary = "Reduces each row of a 2-D tile to one element";
  let description = [{
    For an M x N tile returns the M x 1 tile of row sums, maxima or minima (the pieces of
    a softmax).

    ```mlir
    %m = pk.tile.reduce_rows <max> %s : !pk.tile<64x128xf32> -> !pk.tile<64x1xf32>
    ```
  }];
  let arguments = (ins Pk_ReduceKindAttr:$kind, Pk_TileType:$input);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$kind $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileTransposeOp : Pk_Op<"tile.transpose", [Pure]> {
  let summary = "Transposes a 2-D register tile";
  let description = [{
    Element (j, i) of the N x M result is element (i, j) of the M x N input (a tile of K
    before an A·B whose B is stored [N, K], the K^T of attention's backward pass). Lowers
    through the block's shared-memory stage.

    ```mlir
    %t = pk.tile.transpose %x : !pk.tile<32x64xf32> -> !pk.tile<64x32xf32>
    ```
  }];
  let arguments = (ins Pk_TileType:$input);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileReshapeOp : Pk_Op<"tile.reshape", [Pure]> {
  let summary = "Adds or drops unit dimensions of a register tile";
  let description = [{
    The same elements in the same row-major order under another shape with the same extents
    apart from leading or inner 1s: a `load<64, 128>(q, h, m, 0)` of one head of a [H, S, D]
    tensor is a 1x64x128 load reshaped to 64x128, and a store of a 64x128 tile into it the
    reverse. Free on the general path (the register layout follows the row-major index).

    ```mlir
    %t = pk.tile.reshape %x : !pk.tile<1x64x128xbf16> -> !pk.tile<64x128xbf16>
    ```
  }];
  let arguments = (ins Pk_TileType:$input);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileCumsumOp : Pk_Op<"tile.cumsum", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Inclusive prefix sums of a register tile along its last dimension";
  let description = [{
    Element i of the result is the sum of input elements 0..i (of a tile of 2 or more
    dimensions, along the last: element (r, j) of a 2-D one the sum of row r's 0..j): exact for integer tiles (per-expert offsets of an MoE layout),
    fp32 then rounded for float ones. Elements of a clipped load's padding count as zero. Lowers
    through the block's shared-memory stage (a segmented scan).

    ```mlir
    %o = pk.tile.cumsum %counts : !pk.tile<64xi32>
    ```
  }];
  let arguments = (ins Pk_TileType:$input);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
}

def Pk_TileTopkOp : Pk_Op<"tile.topk", [Pure]> {
  let summary = "The K largest elements along the last dimension of a float tile, and their columns";
  let description = [{
    Row r of `values` (M x K, the input's element type) holds row r's K largest elements,
    largest first, and row r of `indices` (M x K, i32) their columns in the tile (0 .. N-1).
    A tile of rank 1, 3 or 4 has rows along its last dimension likewise: the results keep the
    leading dimensions and have K in the last (a [64] tile is one row).
    Ties go to the lower column first. NaN, and a clipped load's padding, are never chosen:
    past a row's last candidate the values are -inf and the indices -1. Lowers through the
    block's shared-memory stage, a warp per row (K passes over the row).

    ```mlir
    %v, %i = pk.tile.topk %logits : !pk.tile<64x128xf32> -> !pk.tile<64x8xf32>, !pk.tile<64x8xi32>
    ```
  }];
  let arguments = (ins Pk_TileType:$input);
  let results = (outs Pk_TileType:$values, Pk_TileType:$indices);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($values)) `,` qualified(type($indices))";
  let hasVerifier = 1;
}

def Pk_TileHistogramOp : Pk_Op<"tile.histogram", [Pure]> {
  let summary = "Counts the values 0..E-1 in an integer tile";
  let description = [{
    Element e of the 1-D i32 result (E elements) is how many elements of the integer tile
    `input` equal e (the tokens routed to each expert). Other values, and a clipped load's
    padding, are not counted. Lowers to shared-memory atomics in the block's stage.

    ```mlir
    %h = pk.tile.histogram %experts : !pk.tile<256x2xi32> -> !pk.tile<64xi32>
    ```
  }];
  let arguments = (ins Pk_TileType:$input);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileLoadRowsOp : Pk_Op<"tile.load_rows"> {
  let summary = "Gathers rows of a 2-D tensor (this rank's, or a peer's copy) by an index tile";
  let description = [{
    Row r of the R x C result is `source[rows[r], col .. col + C)`: `rows` is a register tile
    of R integers (i32 or i64, shaped R or R x 1), the same in every thread's view. A row index
    outside `[0, source rows)` reads a row of zeros, as do columns past the tensor's edge: the
    gather is checked, never an out-of-bounds access (a vocabulary-parallel embedding relies on
    it). With `on %peer` the rows come from rank `peer`'s copy of a symmetric tensor (a pull
    over NVLink: an MoE combine); the passes order it after the peers' earlier writes.

    ```mlir
    %e = pk.tile.load_rows %table[%ids, %n] : !pk.tensor<?x?xbf16>, !pk.tile<16xi32> -> !pk.tile<16x256xbf16>
    %y = pk.tile.load_rows %out[%slots, %n] on %p : !pk.sym<?x?xbf16>, !pk.tile<16x1xi32> -> !pk.tile<16x256xbf16>
    ```
  }];
  let arguments = (ins Arg<Pk_AnyTensor, "", [MemRead]>:$source, Pk_TileType:$rows, Index:$col,
                       Optional<Index>:$peer);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$source `[` $rows `,` $col `]` (`on` $peer^)? attr-dict `:` qualified(type($source)) `,` qualified(type($rows)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_TileStoreRowsOp : Pk_Op<"tile.store_rows"> {
  let summary = "Scatters (or adds) the rows of a tile into a 2-D tensor by an index tile";
  let description = [{
    Row r of the R x C tile `value` goes to `dest[rows[r], col .. col + C)`; rows whose index
    is outside `[0, dest rows)`, and columns past the edge, are dropped. With `add` the row is
    added element by element (`red.global.add`), so rows that several tiles or iterations send
    to one index all arrive (an MoE combine); without it, which of several writes to one row
    lands is unspecified. With `on %peer` the rows go into rank `peer`'s copy of a symmetric
    tensor (an MoE dispatch): register stores over NVLink, inside the computing block.
    Rows of `value` that are a clipped load's padding (or computed from it) move nowhere,
    unless `all_rows` says every row moves as a plain store writes it (a local `store_add`,
    whose indices are the tile's own rows: a padding row there holds the zeros of a load past
    its tensor's end beside data, `dy[t] w0 + dy[t + 1] w1`).

    ```mlir
    pk.tile.store_rows %t, %out[%slots, %n] {add} : !pk.tile<16x256xf32>, !pk.tensor<?x?xf32>, !pk.tile<16xi32>
    pk.tile.store_rows %x, %recv[%slots, %n] on %p : !pk.tile<16x256xbf16>, !pk.sym<?x?xbf16>, !pk.tile<16x1xi32>
    ```
  }];
  let arguments = (ins Pk_TileType:$value, Arg<Pk_AnyTensor, "", [MemWrite]>:$dest,
                       Pk_TileType:$rows, Index:$col, Optional<Index>:$peer, UnitAttr:$add,
                       UnitAttr:$all_rows);
  let assemblyFormat = "$value `,` $dest `[` $rows `,` $col `]` (`on` $peer^)? attr-dict `:` qualified(type($value)) `,` qualified(type($dest)) `,` qualified(type($rows))";
  let hasVerifier = 1;
}

def Pk_TileClaimOp : Pk_Op<"tile.claim"> {
  let summary = "Hands out slots from per-index counters, atomically";
  let description = [{
    For each element i of the integer tile `index`, returns the value `counter[index[i]]` had
    before and adds one to it (an atomic fetch-and-add per element, `atom.global.add`): the
    slots of one counter are handed out once each, across all tiles and blocks, in no fixed
    order. Each expert's rows in an MoE dispatch get distinct places this way. An index outside
    `[0, counter size)`, and a clipped load's padding, claims nothing and gives -1 (which
    `pk.tile.store_rows` drops). The counter is a 1-D i32 or i64 tensor of this rank.

    ```mlir
    %slot = pk.tile.claim %fill[%experts] : !pk.sym<?xi32>, !pk.tile<16x1xi32> -> !pk.tile<16x1xi32>
    ```
  }];
  let arguments = (ins Arg<Pk_AnyTensor, "", [MemRead, MemWrite]>:$counter, Pk_TileType:$index);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$counter `[` $index `]` attr-dict `:` qualified(type($counter)) `,` qualified(type($index)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

#endif // PK_TILE_OPS_TD

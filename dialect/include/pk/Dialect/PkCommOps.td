// The device communication primitives: tile-granular transfers started by the GPU.
#ifndef PK_COMM_OPS_TD
#define PK_COMM_OPS_TD

include "pk/Dialect/PkTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Pk_PeerStoreOp<string mnemonic> : Pk_Op<"comm." # mnemonic> {
  let arguments = (ins Pk_TileType:$value, Pk_SymTensorType:$dest, Index:$peer,
                       Variadic<Index>:$indices, Pk_TransportAttr:$transport);
  let assemblyFormat = "$transport $value `,` $dest `[` $indices `]` `on` $peer attr-dict `:` qualified(type($value)) `,` qualified(type($dest))";
  let hasVerifier = 1;
}

def Pk_StoreAsyncOp : Pk_PeerStoreOp<"store_async"> {
  let summary = "Writes a tile into a peer's symmetric tensor";
  let description = [{
    Starts the write; it is complete only once the issuing worker has waited for it (TMA:
    `cp.async.bulk.wait_group 0`). A signal that publishes the tile waits for completion
    first. Transports: `tma` (bulk tensor store from shared memory; the tile must be in
    `smem`), `ldst` (register stores).

    ```mlir
    pk.comm.store_async <tma> %t, %c[%m, %n] on %p : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    ```
  }];
}

def Pk_StoreAddAsyncOp : Pk_PeerStoreOp<"store_add_async"> {
  let summary = "Adds a tile into a peer's symmetric tensor";
  let description = [{
    As `pk.comm.store_async`, but adds element-wise (`cp.reduce.async.bulk.tensor .add`
    for `tma`; `red.global.add` for `ldst`). Element types: f32, bf16, f16.

    ```mlir
    pk.comm.store_add_async <tma> %t, %c[%m, %n] on %p : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    ```
  }];
}

def Pk_ReduceOp : Pk_Op<"comm.reduce"> {
  let summary = "Reads a tile from every rank and reduces it into a local tile";
  let description = [{
    Loads the tile at the given origin from every rank's copy of `source` (this rank's
    included), reduces in f32 and returns it in registers. Transport `ldst` (peer loads)
    or `multimem` (`multimem.ld_reduce`, only where multicast exists and is allowed).

    Ordering: the caller must have waited for every peer's signal that its tile is
    ready; the reads are plain loads after that acquire.

    ```mlir
    %t = pk.comm.reduce <sum> <ldst> %x[%i] : !pk.sym<?xbf16> -> !pk.tile<4096xbf16>
    ```
  }];
  let arguments = (ins Pk_ReduceKindAttr:$kind, Pk_TransportAttr:$transport,
                       Pk_SymTensorType:$source, Variadic<Index>:$indices);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$kind $transport $source `[` $indices `]` attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_CommAllReduceOp : Pk_Op<"comm.all_reduce"> {
  let summary = "Reduces a tile over all ranks and writes the result to every rank";
  let description = [{
    Reads the tile at the origin from every rank's `source`, reduces it and stores the
    result at the same origin in every rank's `dest` (the two-shot building block). The
    tile shape is given by `shape`.

    ```mlir
    pk.comm.all_reduce <sum> <ldst> %x[%i] into %y {shape = array<i64: 4096>} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
    ```
  }];
  let arguments = (ins Pk_ReduceKindAttr:$kind, Pk_TransportAttr:$transport,
                       Pk_SymTensorType:$source, Variadic<Index>:$indices,
                       Pk_SymTensorType:$dest, DenseI64ArrayAttr:$shape);
  let assemblyFormat = "$kind $transport $source `[` $indices `]` `into` $dest attr-dict `:` qualified(type($source)) `,` qualified(type($dest))";
  let hasVerifier = 1;
}

def Pk_LoadPeerOp : Pk_Op<"comm.load_peer"> {
  let summary = "Loads a tile from a peer's symmetric tensor (pull)";
  let description = [{
    Transport `tma` (bulk tensor load from the peer address into shared memory) or
    `ldst` (register loads). The caller must have waited for the peer's signal.

    ```mlir
    %t = pk.comm.load_peer <tma> %x[%i, %j] on %p : !pk.sym<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
    ```
  }];
  let arguments = (ins Pk_TransportAttr:$transport, Pk_SymTensorType:$source, Index:$peer,
                       Variadic<Index>:$indices);
  let results = (outs Pk_TileType:$result);
  let assemblyFormat = "$transport $source `[` $indices `]` `on` $peer attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Pk_BulkWaitOp : Pk_Op<"comm.bulk_wait"> {
  let summary = "Waits until this worker's TMA stores have completed";
  let description = [{
    `cp.async.bulk.wait_group 0` (not `.read`): every `store_async` / `store_add_async`
    with transport `tma` that the worker issued before it has been written to the peer's
    memory. A signal that publishes TMA stores must come after it; the protocol checker
    (`-pk-verify-protocol`) rejects a signal that follows a TMA store without one.

    ```mlir
    pk.comm.store_async <tma> %t, %c[%m, %n] on %p : !pk.tile<128x256xbf16, smem>, !pk.sym<?x?xbf16>
    pk.comm.bulk_wait
    pk.sync.signal %f on %p
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Pk_CopyOp : Pk_Op<"comm.copy", [AttrSizedOperandSegments]> {
  let summary = "Copies a run of elements from one rank's tensor to another's";
  let description = [{
    Copies `count` elements starting at `source[src_offset]` on rank `src_rank` to
    `dest[dst_offset]` on rank `dst_rank`; offsets count elements of the tensor as stored
    (contiguous, row-major), whatever its rank. A symmetric tensor names its rank with `on`; a
    local tensor has none (it is this rank's). With `ldst` the block moves 16-byte vectors
    through registers where both ends are 16-byte aligned, scalars otherwise (any count).
    Pulls (remote source) and pushes (remote destination) are both one-way: the caller
    waited for the source's publishing signal before and signals after.

    ```mlir
    pk.comm.copy <ldst> %x[%i] on %r into %y[%j] count %n : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
    ```
  }];
  let arguments = (ins Pk_TransportAttr:$transport,
                       Pk_AnyTensor:$source, Index:$src_offset, Optional<Index>:$src_rank,
                       Pk_AnyTensor:$dest, Index:$dst_offset, Optional<Index>:$dst_rank,
                       Index:$count);
  let assemblyFormat = "$transport $source `[` $src_offset `]` (`on` $src_rank^)? `into` $dest `[` $dst_offset `]` (`on` $dst_rank^)? `count` $count attr-dict `:` qualified(type($source)) `,` qualified(type($dest))";
  let hasVerifier = 1;
}

def Pk_SwapOp : Pk_Op<"comm.swap"> {
  let summary = "Exchanges two runs of elements of a symmetric tensor, on two ranks";
  let description = [{
    Swaps `count` elements at `tensor[a_offset]` on rank `a_rank` with as many at
    `tensor[b_offset]` on rank `b_rank`, each thread reading both of its elements before it
    writes either: an in-place all-to-all has the one rank of each pair swap both blocks, so
    no rank overwrites a block its peer has yet to read. Register loads and stores (ld/st).

    ```mlir
    pk.comm.swap %x[%i] on %r with [%j] on %p count %n : !pk.sym<?xbf16>
    ```
  }];
  let arguments = (ins Pk_SymTensorType:$tensor, Index:$a_offset, Index:$a_rank,
                       Index:$b_offset, Index:$b_rank, Index:$count);
  let assemblyFormat = "$tensor `[` $a_offset `]` `on` $a_rank `with` `[` $b_offset `]` `on` $b_rank `count` $count attr-dict `:` qualified(type($tensor))";
}

def Pk_ReduceIntoOp : Pk_Op<"comm.reduce_into"> {
  let summary = "Reduces a run of elements over all ranks into one or every rank's tensor";
  let description = [{
    Reads `count` elements at `source[src_offset]` from every rank (this one included),
    reduces them in fp32 and writes the result at `dest[dst_offset]`: on rank `dst_rank`
    when given, on every rank when `dest` is symmetric and no rank is given (the two-shot
    step), on this rank when `dest` is local. Transport `ldst` only (reduces in registers).

    ```mlir
    pk.comm.reduce_into <sum> <ldst> %x[%i] into %y[%j] count %n : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
    ```
  }];
  let arguments = (ins Pk_ReduceKindAttr:$kind, Pk_TransportAttr:$transport,
                       Pk_SymTensorType:$source, Index:$src_offset,
                       Pk_AnyTensor:$dest, Index:$dst_offset, Optional<Index>:$dst_rank,
                       Index:$count);
  let assemblyFormat = "$kind $transport $source `[` $src_offset `]` `into` $dest `[` $dst_offset `]` (`on` $dst_rank^)? `count` $count attr-dict `:` qualified(type($source)) `,` qualified(type($dest))";
  let hasVerifier = 1;
}

def Pk_PushSmallOp : Pk_Op<"comm.push_small"> {
  let summary = "Runs a small collective in one round through landing buffers, when it fits";
  let description = [{
    The one-round paths of a whole-tensor collective (`pk::push_small`). The result is true
    when one of them ran (the caller skips the direct path), false when the direct path must
    run.

    - LL path: when every per-peer message fits both `ll_max_bytes` and an LL slot of the
      kernel's landing buffer (the context's `ll_bytes / (2 W)`, payload counted twice), each
      rank stores what every peer needs into the peer's LL slot (parity `epoch & 1`) as 8-byte
      words of 4 payload bytes and a 4-byte launch tag, and polls its own slots until the words
      carry this launch's tag. No flags, no fence: an 8-byte store is single-copy atomic.
    - Flag path: otherwise, when every message fits both `max_bytes` and a raw landing slot
      (`landing_bytes / (2 W)`), each rank pushes what every peer needs into the peer's landing
      buffer, adds one to its per-source lane slot on every peer, waits for every peer's lane
      slot, and assembles its output locally.

    `count` and `ll_count` are per-block slots of this rank's own flags that count the
    launches that took the flag path and the LL path (every rank takes the same path, so the
    counts agree across ranks). The lane slots expect one add per flag-path launch, and the
    direct path's waits in the same worker count only the other launches
    (`epoch - count - ll_count`), since launches that took a one-round path never signal the
    direct path's flags. `lanes` is the first of `PK_MAX_RANKS x 32` per-(source, lane) slots
    (block-scope slot units, so the lowering reserves `ceil(512 / blocks)` units for it).

    The condition depends only on sizes, the world size and the context's landing sizes. The
    protocol checker models the op as not taken and checks the direct path; the one-round
    protocols are argued in `pk/device/push_small.cuh`, model-checked on the CPU
    (`push_protocol_model_test`) and run by the GPU tests.

    ```mlir
    %taken = pk.comm.push_small <all_reduce> reduce <sum> %x, %y flags(%c, %lc, %l) max 1048576 ll 262144 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
    ```
  }];
  let arguments = (ins Pk_CollectiveKindAttr:$collective, OptionalAttr<Pk_ReduceKindAttr>:$kind,
                       Pk_AnyTensor:$input, Pk_AnyTensor:$output, Optional<Index>:$root,
                       Pk_FlagType:$count, Pk_FlagType:$ll_count, Pk_FlagType:$lanes,
                       I64Attr:$max_bytes, I64Attr:$ll_max_bytes);
  let results = (outs I1:$taken);
  let assemblyFormat = "$collective (`reduce` $kind^)? $input `,` $output (`root` $root^)? `flags` `(` $count `,` $ll_count `,` $lanes `)` `max` $max_bytes `ll` $ll_max_bytes attr-dict `:` qualified(type($input)) `,` qualified(type($output))";
  let hasVerifier = 1;
}

#endif // PK_COMM_OPS_TD

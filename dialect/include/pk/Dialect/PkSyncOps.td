// Synchronisation primitives: flags, one-way signals, bounded waits, barriers.
#ifndef PK_SYNC_OPS_TD
#define PK_SYNC_OPS_TD

include "pk/Dialect/PkTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Pk_FlagOp : Pk_Op<"sync.flag", [Pure]> {
  let summary = "Names a slot of the symmetric flag array";
  let description = [{
    With `scope` `block`, every block of the worker has its own slot (slot index times
    the block count plus the block index), so signals and waits pair block b of one rank
    with block b of the others; with `grid` the whole kernel shares one slot.

    With an `offset` operand the slot is `slot + offset`, computed at run time (a flag per
    tile: `prim::flag(m / 16)`). The kernel's flag region holds 2048 / blocks slots; a launch
    whose slot falls outside them stops its block and reports the slot (error code 6).

    ```mlir
    %f = pk.sync.flag 0 <block> : !pk.flag
    %g = pk.sync.flag 0 + %tile <grid> : !pk.flag
    ```
  }];
  let arguments = (ins I64Attr:$slot, Optional<Index>:$offset, Pk_FlagScopeAttr:$scope);
  let results = (outs Pk_FlagType:$result);
  let assemblyFormat = "$slot (`+` $offset^)? $scope attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  // A constant slot, as the passes make them.
  let builders = [OpBuilder<(ins "::mlir::Type":$type, "int64_t":$slot,
                                 "::mlir::pk::FlagScope":$scope), [{
    build($_builder, $_state, type, slot, ::mlir::Value(), scope);
  }]>];
}

def Pk_SignalOp : Pk_Op<"sync.signal"> {
  let summary = "Adds one to a flag on one peer (release, system scope)";
  let description = [{
    `red.release.sys.global.add` on `peer`'s copy of the flag, after a block barrier, so
    every write the block made before it is visible to `peer` once it sees the new value.
    A signal that publishes TMA stores comes after `cp.async.bulk.wait_group 0`.

    ```mlir
    pk.sync.signal %f on %p
    ```
  }];
  let arguments = (ins Pk_FlagType:$flag, Index:$peer);
  let assemblyFormat = "$flag `on` $peer attr-dict";
}

def Pk_SignalAllOp : Pk_Op<"sync.signal_all"> {
  let summary = "Adds one to a flag on every other rank (release, system scope)";
  let description = [{
    One release-add per peer (this rank excluded); with multicast, one
    `multimem.red.release`. Each peer's flag grows by one per signal_all.

    ```mlir
    pk.sync.signal_all %f
    ```
  }];
  let arguments = (ins Pk_FlagType:$flag);
  let assemblyFormat = "$flag attr-dict";
}

def Pk_WaitOp : Pk_Op<"sync.wait"> {
  let summary = "Waits until this rank's flag has received `count` signals this launch";
  let description = [{
    Spins on this rank's flag with acquire loads at system scope until it reaches
    `epoch * count` (compare `ge`; flags are monotone epoch counters). Data published by
    the signals is readable after it with generic-proxy loads; a TMA read of it needs
    `pk.sync.proxy_fence` (`fence.proxy.async`) between the wait and the read. The wait
    is bounded: past the launch's timeout it records rank, flag, expected and seen values
    in the error slot and the kernel exits.
    Compare `eq` exists only so the protocol checker can reject it.

    ```mlir
    pk.sync.wait %f, %n
    pk.sync.wait %g, %n compare <eq>   // rejected by the protocol checker
    ```
  }];
  let arguments = (ins Pk_FlagType:$flag, Index:$count,
                       DefaultValuedAttr<Pk_CompareAttr, "::mlir::pk::Compare::ge">:$compare);
  let assemblyFormat = "$flag `,` $count (`compare` $compare^)? attr-dict";
}

def Pk_BarrierOp : Pk_Op<"sync.barrier"> {
  let summary = "All ranks meet";
  let description = [{
    `signal_all` on the flag, then a wait for world size minus one signals. Needs no reset
    between launches because waits compare against the epoch.

    ```mlir
    pk.sync.barrier %f
    ```
  }];
  let arguments = (ins Pk_FlagType:$flag);
  let assemblyFormat = "$flag attr-dict";
}

def Pk_ProxyFenceOp : Pk_Op<"sync.proxy_fence"> {
  let summary = "Orders acquired data before later TMA (async-proxy) reads";
  let description = [{
    `fence.proxy.async`: the acquire of a `pk.sync.wait` orders generic-proxy accesses
    only; a TMA load (`pk.comm.load_peer <tma>`) of data published by the signals it
    waited for must come after this fence. The protocol checker rejects a TMA read that
    follows a wait without one.

    ```mlir
    pk.sync.wait %f, %n <ge>
    pk.sync.proxy_fence
    %t = pk.comm.load_peer <tma> %x[%i, %j] on %p : !pk.sym<?x?xbf16> -> !pk.tile<128x64xbf16, smem>
    ```
  }];
  let assemblyFormat = "attr-dict";
}

#endif // PK_SYNC_OPS_TD

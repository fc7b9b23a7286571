// pkc's passes: the three design rules, lowering to the device level, verification.
#ifndef PK_PASSES_TD
#define PK_PASSES_TD

include "mlir/Pass/PassBase.td"

def PkTrackEffectsPass : Pass<"pk-track-effects", "::mlir::ModuleOp"> {
  let summary = "Number every spec-level op with an effect, for pk-check-effects";
  let description = [{
    First pass of the pipeline. Gives every tile store, collective, tile sent to a peer,
    device primitive and signal / wait / barrier a number (`pk.effect`) and lists their names
    and locations on the kernel (`pk.effects`). Lowerings that replace such an op mark its
    number lowered (`pk.lowered`) before erasing it; pk-check-effects, at the end of the
    pipeline, reports every number that is neither in the IR nor marked.

    Before: `pk.tile.store %t, %c[%m, %n] : ...`
    After:  `pk.tile.store %t, %c[%m, %n] {pk.effect = 0 : i64} : ...` and
            `pk.effects = [["pk.tile.store", loc(...)]]` on the kernel
  }];
  let dependentDialects = ["::mlir::pk::PkDialect"];
}

def PkCheckTileRacesPass : Pass<"pk-check-tile-races", "::mlir::ModuleOp"> {
  let summary = "Refuse tile loops that read a tensor at other tiles than they write it";
  let description = [{
    The iterations of a spec's `pk.tile.foreach` run in parallel and in no order. A loop that
    stores into a tensor may load from it only the tile it stores (same indices, same shape:
    an element-wise update in place); any other load of it races with another iteration's
    store, and is an error at the load with a note at the store.

    Before: `%t = pk.tile.load %a[%m, %k] ...` and `pk.tile.store %o, %a[%m, %n] ...` in one loop
    After:  error: this tile loop reads a tensor at other tiles than it writes
  }];
  let dependentDialects = ["::mlir::pk::PkDialect"];
}

def PkSelectTransportPass : Pass<"pk-select-transport", "::mlir::ModuleOp"> {
  let summary = "Rule 1: choose each transfer's mechanism by message size";
  let description = [{
    Resolves every `auto` transport on communication intent from the machine profile's
    bandwidth and latency curves: copy engine only for very large host-driven transfers,
    TMA from a few KiB with few SMs, ld/st for small messages and for anything that must
    reduce in registers. Records each decision and its reason in the kernel's
    `pk.decisions` attribute.

    Before: `pk.coll.all_reduce <sum> %x into %y : !pk.sym<1024xbf16>, ...`
    After:  `pk.coll.all_reduce <sum> %x into %y {transport = #pk.transport<ldst>} ...`
  }];
  let options = [
    Option<"profilePath", "profile", "std::string", "\"\"",
           "Machine profile file (default: the built-in H200 profile)">,
    Option<"allowMulticast", "allow-multicast", "bool", "false",
           "Allow NVLink multicast (multimem) where the machine has it">,
  ];
  let dependentDialects = ["::mlir::pk::PkDialect"];
}

def PkSelectOverlapPass : Pass<"pk-select-overlap", "::mlir::ModuleOp"> {
  let summary = "Rule 2: choose intra- or inter-SM overlap by granularity";
  let description = [{
    A tile sent to a peer from inside a tile loop whose compute produces it moves at the
    compute tile's granularity: the compute block's storer sends it (intra-SM, an
    mbarrier hand-off). Transfers that reduce in registers, whose granularity differs from
    the compute tile, or collectives without compute run on communicator blocks
    (inter-SM, a global-flag hand-off).
  }];
  let options = [
    Option<"profilePath", "profile", "std::string", "\"\"",
           "Machine profile file (default: the built-in H200 profile)">,
  ];
  let dependentDialects = ["::mlir::pk::PkDialect"];
}

def PkSelectAlgorithmPass : Pass<"pk-select-algorithm", "::mlir::ModuleOp"> {
  let summary = "Rule 1 at the collective level: algorithm, tile size and block count";
  let description = [{
    For every collective: one-shot or two-shot (all-reduce: two-shot when the bytes it
    saves on each GPU's inbound links outweigh one more link hop; it needs a symmetric
    output), the elements per tile and the number of communicator blocks (enough tiles for
    every block at large sizes, fewer blocks for small static sizes). When the size or the
    world size is known only at run time, the algorithm is `auto` with a
    `pk.two_shot_min_bytes` threshold that the lowering turns into a run-time branch.
    Small messages (per peer up to `push-max-bytes`, and within the kernel's landing
    buffer at run time) take a one-round push path instead: `pk.push_max_bytes`, 0 when a
    static size rules it out; the smallest (per peer up to `ll-max-bytes`) take its
    flag-free LL variant: `pk.ll_max_bytes`. A copy-only collective that is its kernel's
    whole body gets a copy-engine route for messages of at least `copy-engine-min-bytes` (the
    kernel's `pk.copy_engine` attribute, printed on its `// pk-launch` line for the
    launchers). Every decision is recorded with its reason.

    Before: `pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>`
    After:  `... {algorithm = #pk.algorithm<auto>, pk.blocks = 132, pk.tile = 8192,
            pk.ll_max_bytes = 262144, pk.push_max_bytes = 1048576,
            pk.two_shot_min_bytes = 307008}`
  }];
  let options = [
    Option<"profilePath", "profile", "std::string", "\"\"",
           "Machine profile file (default: the built-in H200 profile)">,
    Option<"worldSize", "world-size", "int64_t", "0",
           "World size when known at compile time (0: a run-time value)">,
    Option<"pushMaxBytes", "push-max-bytes", "int64_t", "1048576",
           "Largest per-peer message of the one-round push path (0: never)">,
    Option<"llMaxBytes", "ll-max-bytes", "int64_t", "262144",
           "Largest per-peer message of the push path's flag-free LL variant (0: never)">,
    Option<"copyEngineMinBytes", "copy-engine-min-bytes", "int64_t", "-1",
           "Smallest message of the copy-engine route of copy-only collectives (0: never; "
           "-1: the measured defaults, 20 MiB, or 96 MiB where only the root sends)">,
  ];
  let dependentDialects = ["::mlir::pk::PkDialect"];
}

def PkSplitLaunchesPass : Pass<"pk-split-launches", "::mlir::ModuleOp"> {
  let summary = "Run a kernel whose phases include a template's loop as several launches";
  let description = [{
    A kernel with several phases (collectives, tile loops, scalar reads) of which one tile
    loop is one a Hopper template takes on its own (attention, or a plain GEMM that no
    collective of the kernel fuses with) becomes one kernel per launch: each such loop alone,
    the phases between them together. The kernel keeps its name and arguments, an empty body
    and `pk.launches`, the parts in order; the launchers, the JIT and pk_torch issue them one
    after another on the caller's stream. Each part is an ordinary kernel: it is lowered,
    proved and emitted on its own.

    A top-level range loop whose body a launch cannot order (a collective, which runs once
    per launch on its flags, or phases that depend on each other) runs as a host loop of
    launches: its body's phases become parts (grouped by the same rule) that take the trip's
    induction variable as a trailing index argument, and `pk.launches` holds the loop as
    `{lb, ub, step, parts}` with the bounds as host expressions (pk/runtime/host_check.h). The
    bounds must be known on the host and the loop must carry no values.

    Before: `pk.kernel @k(...) { pk.coll.all_to_all ...; pk.tile.foreach ... (attention) }`
    After:  `pk.kernel @k(...) attributes {pk.launches = [@k_launch0, @k_launch1]}` and the
            two parts `@k_launch0`, `@k_launch1`
  }];
  let options = [
    Option<"templates", "templates", "bool", "true",
           "Split out the loops a Hopper template takes on its own (host loops are split "
           "either way)">,
  ];
  let dependentDialects = ["::mlir::pk::PkDialect", "::mlir::scf::SCFDialect"];
}

def PkLowerAttentionPass : Pass<"pk-lower-attention", "::mlir::ModuleOp"> {
  let summary = "Lower forward-attention tile loops to the Hopper attention template";
  let description = [{
    Recognises, by its data flow, a kernel whose one tile loop computes forward attention with
    the online softmax: per query tile, `s = scale * mma_t(q, k, 0)` masked to a very negative
    value past the keys' end (and, causal, after the query), a running max, `p = exp(s - m)`,
    a running sum rescaled by `exp(m_old - m)`, `acc = mma(cast<bf16>(p), v, acc * corr)`, then
    `o = cast<bf16>(acc / l)` and optionally `lse = m + log(l)`, head dim 64 or 128. The kernel
    becomes device-level with a `pk.attention` dictionary (argument positions, head dim, causal,
    scale) that the CUDA emitter instantiates. A loop that differs in any step keeps the general
    tile path; the reason is recorded as a decision.

    Before: `pk.tile.foreach (%m) ... { scf.for %n ... { pk.tile.mma {transpose_b} ...; pk.tile.reduce_rows <max> ... } ... }`
    After:  `pk.kernel @attention(...) attributes {pk.attention = {q = 0, k = 1, v = 2, o = 3, lse = 4, d = 128, causal = false, scale = 5}, pk.level = "device"}`
  }];
  let dependentDialects = ["::mlir::pk::PkDialect", "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def PkLowerGemmPass : Pass<"pk-lower-gemm", "::mlir::ModuleOp"> {
  let summary = "Lower GEMM tile loops (and their fused communication) to the Hopper templates";
  let description = [{
    Recognises a kernel whose tile loop computes C = A * B^T with 128x256 tiles and a K loop of
    64 (`pk.tile.mma {transpose_b}`), and lowers the whole kernel to an instance of the LCSC
    GEMM template: plain GEMM (the tile is stored), GEMM + reduce-scatter (the tile is added
    into its owner by `pk.coll.add_tile`, intra-SM as pk-select-overlap decided), AG + GEMM
    (A is the output of a `pk.coll.all_gather` ahead of the loop: communicator blocks,
    inter-SM) or GEMM + all-reduce (the stored tensor feeds a `pk.coll.all_reduce`: the
    storer pushes each tile into every rank). The kernel becomes device-level with a
    `pk.gemm` dictionary (job, argument positions) that the CUDA emitter instantiates.

    Before: `pk.tile.foreach (%m, %n) ... { scf.for %k ... pk.tile.mma ...; pk.coll.add_tile ... }`
    After:  `pk.kernel @gemm_rs(...) attributes {pk.gemm = {job = "gemm_rs", a = 0, b = 1, c = 2}, pk.level = "device"}`
  }];
  let options = [
    Option<"profilePath", "profile", "std::string", "\"\"",
           "Machine profile file (default: the built-in H200 profile)">,
    Option<"localTemplates", "local-templates", "bool", "true",
           "Lower GEMM loops of kernels that only compute locally to the template; false: "
           "keep them on the general tile path">,
    Option<"splitK", "split-k", "bool", "true",
           "Let a plain GEMM's launch split each tile's K steps over several blocks when the output "
           "has fewer tiles than the SMs; false: one block per tile">,
  ];
  let dependentDialects = ["::mlir::pk::PkDialect", "::mlir::scf::SCFDialect"];
}

def PkFoldProductsPass : Pass<"pk-fold-products", "::mlir::ModuleOp"> {
  let summary = "Products written in equivalent forms become the form the templates take";
  let description = [{
    Before the GEMM and attention templates look at a tile loop: `mma(a, transpose(x), acc)`
    becomes `mma_t(a, x, acc)` (and the reverse); `x + mma(a, b, zeros)` becomes `mma(a, b, x)`;
    a K loop whose accumulator starts at a tile x starts at zeros and adds x after the loop (a
    start of `zeros + y` adds y, broadcast). Only an f32 sum's order changes.

    Before: `%s = pk.tile.mma %a, %b, %z {transpose_b}`, `%r = pk.tile.map <add> %acc, %s`
    After:  `%r = pk.tile.mma %a, %b, %acc {transpose_b}`
  }];
  let dependentDialects = ["::mlir::pk::PkDialect", "::mlir::scf::SCFDialect"];
}

def PkExactIndexTilesPass : Pass<"pk-exact-index-tiles", "::mlir::ModuleOp"> {
  let summary = "General path: element coordinates used as integers are computed as integers";
  let description = [{
    `row_index`, `col_index` and `dim_index` are f32 tiles, exact only below 2^24. In the tile
    loops no template took, a cast of one to an integer tile becomes an integer iota, and a
    comparison of one with an integer scalar (an index, a size, a count) is made in i64, its
    0 / 1 mask cast back to f32; so rows past 2^24 are neither merged nor dropped.

    Before: `%r = pk.tile.iota %j dim 0 : !pk.tile<64x1xf32>`,
            `%p = pk.tile.cast %r : !pk.tile<64x1xf32> to !pk.tile<64x1xi32>`
    After:  `%p = pk.tile.iota %j dim 0 : !pk.tile<64x1xi32>`
  }];
  let dependentDialects = ["::mlir::pk::PkDialect", "::mlir::arith::ArithDialect"];
}

def PkLowerCollectivesPass : Pass<"pk-lower-collectives", "::mlir::ModuleOp"> {
  let summary = "Rule 3: lower communication intent to one-way device primitives";
  let description = [{
    Rewrites collective intent into device-level workers that use only the primitives:
    senders write one-way into pre-allocated landing buffers (or readers pull from
    symmetric inputs) and bump monotone flags; no handshakes, no staging copies. Sets
    `pk.level = "device"` on the kernel.

    Before: `pk.coll.all_reduce <sum> %x into %y {transport = #pk.transport<ldst>}`
    After:  a `pk.worker <communicator>` that signals arrival, waits for the peers,
            reduces each tile with `pk.comm.reduce`, stores it, then signals and waits
            for departure so no rank overwrites its input while a peer still reads it.
  }];
  let options = [
    Option<"tileElements", "tile-elements", "int64_t", "4096",
           "Elements per tile of a 1-D collective">,
    Option<"profilePath", "profile", "std::string", "\"\"",
           "Machine profile file (default: the built-in H200 profile)">,
  ];
  let dependentDialects = ["::mlir::pk::PkDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def PkLowerPeerTilesPass : Pass<"pk-lower-peer-tiles", "::mlir::ModuleOp"> {
  let summary = "Rule 3: tiles stored or added into peers from a general tile loop";
  let description = [{
    Lowers `pk.coll.store_tile` and `pk.coll.add_tile` left in a kernel after
    pk-lower-gemm (tile loops on the general path: a ring shift, tiles scattered to or added
    into their owners). The block that computes a tile writes it into rank `p`'s copy with
    register stores (`pk.comm.store_async <ldst>`) or register adds
    (`pk.comm.store_add_async <ldst>`, `red.global.add`): intra-SM, no staging. The kernel's
    body becomes one worker with one-way, per-block monotone flags around it: each block
    signals `arrive` to every peer and waits for the peers' arrivals before its first peer
    write (no rank writes into a buffer a peer's previous kernel may still read), and signals
    `depart` after its last one and waits for the peers' departures (a kernel ends only once
    every peer has finished writing into it).

    Before: `pk.tile.foreach ... { %t = ...; pk.coll.store_tile %t, %y[%m, %n] on %p }`
    After:  `pk.worker <communicator> { signal_all/wait arrive; pk.tile.foreach ... {
            pk.comm.store_async <ldst> %t, %y[%m, %n] on %p }; signal_all/wait depart }`
  }];
  let dependentDialects = ["::mlir::pk::PkDialect", "::mlir::arith::ArithDialect"];
}

def PkCheckEffectsPass : Pass<"pk-check-effects", "::mlir::ModuleOp"> {
  let summary = "Report spec-level effects that a lowering dropped without lowering them";
  let description = [{
    Runs after the lowerings. Every op pk-track-effects numbered must still be in the IR
    (it reaches the emitter, which lowers it or says it cannot) or have been marked lowered
    by the pass that replaced it. Any other op was thrown away: that is a compiler bug, and
    it is reported at the op's location instead of compiling to a kernel that silently
    skips it. Removes the ledger's attributes.

    Before: a kernel whose `pk.effects` lists an op that is gone and not in `pk.lowered`
    After:  error: 'pk.coll.reduce_scatter' was dropped by a lowering without being lowered
  }];
  let dependentDialects = ["::mlir::pk::PkDialect"];
}

def PkVerifyProtocolPass : Pass<"pk-verify-protocol", "::mlir::ModuleOp"> {
  let summary = "Prove that signals and waits cannot hang, be overtaken or race";
  let description = [{
    Interprets each device-level kernel for every world size from 1 to
    `max-world-size` (and for tensor sizes with and without a partial tile, and one or
    several blocks where the block count is open) into per-block event lists, runs all
    ranks together for two launches, and reports at the op:
    a wait that can never complete or can be overtaken (signals per launch differ from
    its count), a deadlock (every rank left waits on another), a race (a peer's access
    and a local access with no wait between them), a reuse hazard (a buffer peers still
    read or write when its owner finishes the kernel, or reused by the next launch), a
    release signal after a TMA store without `pk.comm.bulk_wait`, a TMA read after a wait
    without `pk.sync.proxy_fence`, and a wait that compares with `eq`.
    dialect/docs/ProtocolChecking.md says what it assumes and what it does not check.

    Before: `pk.sync.signal_all %f` ... `pk.sync.wait %f, %n` where %n = world - 2
    After:  error: wait on flag slot 0 can never complete for world size 2: rank 0
            expects 1 signals per launch but at most 0 arrive ... (the IR is unchanged)
  }];
  let options = [
    Option<"maxWorldSize", "max-world-size", "int", "16",
           "Check every world size from 1 to this">,
  ];
  let dependentDialects = ["::mlir::pk::PkDialect"];
}

def PkBatchTileLoadsPass : Pass<"pk-batch-tile-loads", "::mlir::ModuleOp"> {
  let summary = "General path: block size, and the loads of several tiles before their compute";
  let description = [{
    A kernel whose blocks never wait on each other (only local tile loops: no worker, flag or
    communication) gets 32 warps per SM instead of 16: `pk.threads` = 256, 512 or 1024 on the
    kernel, the smallest whose live register tiles fit 48 registers a thread, and
    `pk.blocks_per_sm` = 1024 / threads (the grid and `__launch_bounds__` follow). A
    general-path tile loop is memory-bound: one block per SM that loads a tile, waits, computes
    and stores keeps too few bytes in flight to reach HBM bandwidth, and several smaller blocks
    per SM overlap one block's barriers with another's loads.
    A loop with row reductions (the block meets at barriers for each tile) is marked
    `pk.batch = K`: each block takes K of its tiles at once,
    issues every loop-invariant-safe load of all K (`pk.hoist` on those loads) and only then
    computes and stores them one by one. K is the largest of 4 and 2 for which the K - 1 tiles
    loaded ahead, one trip's live tiles and 48 other registers fit the registers a thread has;
    a kernel with a collective is not batched, since the collective's state stays live through
    it (`batch` forces K; 1 turns batching off).

    A loop qualifies when its body holds only tile loads, stores, maps, casts, splats,
    selects, iotas, row reductions and scalar arithmetic (no communication, waits, mma or
    nested loops). A load is hoisted when no store in the loop writes its tensor argument;
    distinct tensor arguments are taken not to overlap in memory (docs/language.md).

    Before: `pk.tile.foreach ... { %a = pk.tile.load %x[..]; ...; pk.tile.store %r, %y[..] }`
    After:  the same loop with `{pk.batch = 4}` and `{pk.hoist}` on the load of %x
  }];
  let options = [
    Option<"batch", "batch", "int64_t", "0",
           "Tiles per batch; 0 chooses by the register budget, 1 turns batching off">,
    Option<"blockThreads", "block-threads", "int64_t", "0",
           "Threads per block of kernels whose blocks never wait on each other: 0 chooses, "
           "256, 512 or 1024 set it (1024 / threads blocks per SM)">,
    Option<"ringStages", "ring-stages", "int64_t", "2",
           "Stages of the shared-memory prefetch ring (2 to 4): tiles a block has in flight "
           "ahead of the one it computes, plus one">,
  ];
  let dependentDialects = ["::mlir::pk::PkDialect"];
}

#endif // PK_PASSES_TD

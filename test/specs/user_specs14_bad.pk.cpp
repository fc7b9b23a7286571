// The fourteenth user-written spec set, part (b): kernels that must be REFUSED (races, protocol
// errors, illegal uses), each with what is wrong, and the reproducers of the findings in
// test/specs/specs14_findings.md. First the kernels pkc ACCEPTS today (W1: a legal spec compiled to two
// different results; A1-A4: races), then kernels refused as they must be (R: races, hazards and wrong
// counts; I: illegal uses). Compile one kernel at a time (pkc FILE --kernel NAME): the file as a whole
// is refused. C++-level errors (overload failures) are left out: they would stop the whole file.
#include <pk/spec.h>
using namespace pk;

// ========================================================================================== ACCEPTED today (findings 1-3 of specs14_findings.md)

// W1. Was ACCEPTED and compiled to a result the spec does not say (finding 1; fixed: the general path). GEMM + reduce-scatter whose
// zero-fill loop zeroes only the first 128 of every 256 columns (a 64 x 128 zero tile at steps of 64 x 256):
// as written, columns 128-255 of each 256 keep what c held and the products are added to it. The gemm_rs
// template takes the loop as a memset of all of c (zero=2 on the pk-template line), so a template launch
// zeroes those columns too, while the general-path twin (sizes the template refuses) does not: two results
// for one spec, chosen by the launch's sizes. findZeroFill (LowerGemm.cpp) checks the loop's bounds, the
// store's indices and the zero value, but not that the zero tile covers the loop's steps.
PK_KERNEL void w1_gemm_rs_zero_fill_gaps(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256}))
    store(c, zeros<bf16, 64, 128>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, o * rows + m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}

// A1. Was ACCEPTED (finding 2; now refused by pk-check-tile-races). Two stores per tile, the second 128 columns on, with a 256-column step: tile
// (m, n)'s second store writes columns [n + 128, n + 384) of y, and tile (m, n + 256)'s first store writes
// [n + 256, n + 512) with other values (x at n + 256 against 2 x at n + 128). Different blocks, no order:
// which value lands in columns [n + 256, n + 384) depends on timing. Race at W = 1 (any x.cols() > 256). The
// checker models one tile along every dimension but the first for kernels without spec flags.
PK_KERNEL void a1_two_stores_overlap_cols(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    store(y, load<16, 256>(x, m, n), m, n);
    store(y, load<16, 256>(x, m, n) * 2.0f, m, n + 128);
  }
}

// A2. Was ACCEPTED (finding 2; now refused by pk-check-tile-races). A 256-column tile stored into the next rank with a 128-column step: tiles n and
// n + 128 (two blocks) both write columns [n + 128, n + 256) of next's y with different values (each scales
// by the element's offset from its own origin). The same tiling along the rows (R30) is refused.
PK_KERNEL void a2_peer_tile_wider_than_step(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y.on(next_rank()), load<16, 256>(x, m, n) * (col_index<16, 256>(n) - float(n)), m, n);
}

// A3. Was ACCEPTED (finding 2; now refused by pk-check-tile-races). The local form of A2 into this rank's Sym: a write-write race between blocks
// of one rank at W = 1.
PK_KERNEL void a3_local_tile_wider_than_step(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, load<16, 256>(x, m, n) * (col_index<16, 256>(n) - float(n)), m, n);
}

// A4. ACCEPTED (finding 3, low; the docs now say such a row may mix the rows sent). Every rank scatters its row r into row r of rank 0's y (store_rows by
// row_index): W writers of one row with plain stores. spec.h promises "which of several rows sent to one
// index lands is unspecified", but the rows are written as 16-byte pieces by many threads of several ranks,
// so the row that lands can be a mix of ranks' rows (not any one of them). The checker lets scatters
// "commute" with each other, which holds for adds (store_add_rows), not for plain stores.
PK_KERNEL void a4_rows_collide_on_root(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store_rows(y.on(0), load<16, 256>(x, m, n), cast<i32>(row_index<16, 1>(m)), n);
}

// ========================================================================================== Refused, as they must be: races, reuse hazards, wrong counts

// R1. The signal goes before the pushes: next may pass its wait and read buf before the tiles land (refused at W = 2).
PK_KERNEL void r1_signal_before_store(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  prim::signal(f, next_rank());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::store_async(Ldst, buf.on(next_rank()), load<16, 256>(x, m, n), m, n);
  prim::wait(f, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(out, load<16, 256>(buf, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R2. Tiles pushed to next, the signal sent to prev: at W >= 3 a rank's wait is satisfied by the wrong neighbour (refused at W = 3).
PK_KERNEL void r2_signal_wrong_peer(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::store_async(Ldst, buf.on(next_rank()), load<16, 256>(x, m, n), m, n);
  prim::signal(f, prev_rank());
  prim::wait(f, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(out, load<16, 256>(buf, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R3. No wait between the pushes and the reads of buf.
PK_KERNEL void r3_no_wait(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::store_async(Ldst, buf.on(next_rank()), load<16, 256>(x, m, n), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(out, load<16, 256>(buf, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R4. No opening barrier: in launch 2 prev pushes into buf while this rank may still read launch 1's data.
PK_KERNEL void r4_no_opening_barrier(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::store_async(Ldst, buf.on(next_rank()), load<16, 256>(x, m, n), m, n);
  prim::signal(f, next_rank());
  prim::wait(f, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(out, load<16, 256>(buf, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R5. Wait for 2 signals when one arrives per launch (never completes).
PK_KERNEL void r5_wait_too_many(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::store_async(Ldst, buf.on(next_rank()), load<16, 256>(x, m, n), m, n);
  prim::signal(f, next_rank());
  prim::wait(f, 2);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(out, load<16, 256>(buf, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R6. signal_all then a wait for world_size() signals: signal_all signals the other ranks, not the caller,
// so W - 1 arrive (never completes at W = 1; finding 4: the docs do not say so).
PK_KERNEL void r6_signal_all_counts_self(Sym<f32, 2> x, Sym<f32, 3> planes, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    for (auto p : range(0, world_size()))
      prim::store_async(Ldst, planes.on(p), load<16, 256>(x, m, n), rank(), m, n);
  prim::signal_all(f);
  prim::wait(f, world_size());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto s = zeros<f32, 16, 256>();
    for (auto p : range(0, world_size())) s = s + load<16, 256>(planes, p, m, n);
    store(out, s, m, n);
  }
  prim::barrier(prim::flag(2));
}

// R7. A local store and a store into the next rank, same tensor and tile, in one loop (W = 2: both write rank 0's tile).
PK_KERNEL void r7_local_and_peer_same_tile(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    store(y, load<16, 256>(x, m, n), m, n);
    store(y.on(next_rank()), load<16, 256>(x, m, n) * 2.0f, m, n);
  }
}

// R8. Every rank stores its tile into rank 0 at the same place.
PK_KERNEL void r8_all_ranks_to_root(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y.on(0), load<16, 256>(x, m, n), m, n);
}

// R9. A ring shift and a read of the own copy in the same loop: the previous rank's store races with the read.
PK_KERNEL void r9_shift_then_read_same_loop(Tensor<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    store(y.on(next_rank()), load<16, 256>(x, m, n), m, n);
    store(out, load<16, 256>(y, m, n), m, n);
  }
}

// R10. Row blocks of a gathered tensor at rank() * x.rows() + m with 16-row tiles: the padding rows of a
// partial last tile overlap the next rank's block.
PK_KERNEL void r10_rowblocks_overlap(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    for (auto p : range(0, world_size()))
      store(y.on(p), load<16, 256>(x, m, n), rank() * x.rows() + m, n);
}

// R11. A Block barrier between a push loop of 16-row tiles and a read loop of 32-row tiles: block b reads
// tiles other blocks pushed.
PK_KERNEL void r11_block_barrier_retile(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::store_async(Ldst, y.on(next_rank()), load<16, 256>(x, m, n), m, n);
  prim::barrier(prim::flag(1));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256}))
    store(out, load<32, 256>(y, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R12. store_add into the next rank and a plain local store of the same tensor in one phase.
PK_KERNEL void r12_add_and_store(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    store_add(y.on(next_rank()), load<16, 256>(x, m, n), m, n);
    store(y, load<16, 256>(x, m, n), m, n);
  }
}

// R13. A pull from prev while prev zeroes the same tensor in the same loop.
PK_KERNEL void r13_pull_while_zeroed(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    store(y, prim::load_peer<32, 128>(Ldst, x.on(prev_rank()), m, n), m, n);
    store(x, zeros<f32, 32, 128>(), m, n);
  }
  prim::barrier(prim::flag(1));
}

// R14. A Grid flag signalled outside a tile loop (bumped once per block): its waits cannot count signals.
PK_KERNEL void r14_grid_flag_signal(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  auto f = prim::flag(1, Grid);
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::store_async(Ldst, buf.on(next_rank()), load<16, 256>(x, m, n), m, n);
  prim::signal(f, next_rank());
  prim::wait(f, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(out, load<16, 256>(buf, m, n), m, n);
  prim::barrier(prim::flag(2, Grid));
}

// R15. Per-tile flags, but the consumer reads the mirrored tile (x.size() - 1024 - i), pushed by another
// block and signalled on another slot.
PK_KERNEL void r15_pertile_flag_other_tile(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> out) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {1024})) {
    prim::store_async(Ldst, y.on(next_rank()), load<1024>(x, i), i);
    prim::signal(prim::flag(2 + i / 1024), next_rank());
    prim::wait(prim::flag(2 + i / 1024), 1);
    store(out, load<1024>(y, x.size() - 1024 - i), i);
  }
  prim::barrier(prim::flag(1));
}

// R16. In-place all-reduce then a loop that writes x one tile on from where it reads.
PK_KERNEL void r16_inplace_shift(Sym<f32, 1> x) {
  all_reduce(Sum, x, x);
  for (auto i : tiles(x.size(), {1024}))
    store(x, load<1024>(x, i) * 0.5f, i + 1024);
}

// R17. prim::all_reduce of every tile from every rank into every rank's y (not partitioned by rank).
PK_KERNEL void r17_prim_allreduce_unpartitioned(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::all_reduce<16, 256>(Sum, Ldst, x, y, m, n);
  prim::barrier(prim::flag(1, Grid));
}

// R18. A wait on slot 3, which nobody signals (slot 1 is signalled).
PK_KERNEL void r18_wait_unsignalled(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::store_async(Ldst, buf.on(next_rank()), load<16, 256>(x, m, n), m, n);
  prim::signal(prim::flag(1), next_rank());
  prim::wait(prim::flag(3), 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(out, load<16, 256>(buf, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R19. Rows scattered into the next rank and the own copy read in the same loop.
PK_KERNEL void r19_rows_and_read(Tensor<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    store_rows(y.on(next_rank()), load<16, 256>(x, m, n), cast<i32>(row_index<16, 1>(m)), n);
    store(out, load<16, 256>(y, m, n), m, n);
  }
}

// R20. Pipelined double buffer whose producer waits on free slot 10 + s % 2 with growing counts: the
// consumer signals slots 12 + s, so slot 10 gets one signal a launch and the wait for 2 never completes.
PK_KERNEL void r20_free_wrong_slot(Sym<f32, 2> x, Sym<f32, 3> buf, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  prim::signal(prim::flag(10), prev_rank());
  prim::signal(prim::flag(11), prev_rank());
  for (auto s : range(0, 4, 1)) {
    prim::wait(prim::flag(10 + s % 2), 1 + s / 2);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      prim::store_async(Ldst, buf.on(next_rank()), load<16, 128>(x, m, n) * float(s + 1), s % 2, m, n);
    prim::signal(prim::flag(1 + s), next_rank());
    prim::wait(prim::flag(1 + s), 1);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      store(out, load<16, 128>(buf, s % 2, m, n) + load<16, 128>(out, m, n), m, n);
    prim::signal(prim::flag(12 + s), prev_rank());
  }
  prim::wait(prim::flag(14), 1);
  prim::wait(prim::flag(15), 1);
  prim::barrier(prim::flag(20));
}

// R21. A loop that reads 32-row tiles of x and writes 16-row ones in place: each read covers the next tile,
// which another block writes.
PK_KERNEL void r21_read_bigger_than_write(Tensor<f32, 2> x) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(x, load<32, 256>(x, m, n) * 2.0f, m, n);
}

// R22. x minus its row 0, in place: tile m = 0 rewrites row 0 while other tiles read it.
PK_KERNEL void r22_inplace_minus_row0(Tensor<f32, 2> x) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(x, load<16, 256>(x, m, n) - load<1, 256>(x, 0, n), m, n);
}

// R23. x scaled by x.at(0, 0), in place.
PK_KERNEL void r23_inplace_scalar_read(Tensor<f32, 2> x) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(x, load<16, 256>(x, m, n) * x.at(0, 0), m, n);
}

// R24. Rows gathered from x by index while x is written at the tile.
PK_KERNEL void r24_gather_from_written(Tensor<f32, 2> x, Tensor<i32, 1> ids) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(x, load_rows<16, 256>(x, load<16>(ids, m), n), m, n);
}

// R25. x divided by its column 0, in place (column 0 is rewritten by the tiles at n = 0).
PK_KERNEL void r25_divide_by_own_col0(Tensor<f32, 2> x) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(x, load<16, 256>(x, m, n) / load<16, 1>(x, m, 0), m, n);
}

// R26. Scatter of x's rows into x itself by index.
PK_KERNEL void r26_scatter_into_self(Tensor<f32, 2> x, Tensor<i32, 1> ids) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store_rows(x, load<16, 256>(x, m, n), load<16>(ids, m), n);
}

// R27. An in-place scan adding the previous tile's last element (another iteration's output).
PK_KERNEL void r27_scan_reads_prev_tile(Tensor<f32, 1> x) {
  for (auto i : tiles(x.size(), {1024}))
    store(x, cumsum(load<1024>(x, i)) + load<1>(x, i - 1), i);
}

// R28. A nested loop whose inner tiles add the first column tile of the same row block, which the inner
// loop rewrites.
PK_KERNEL void r28_nested_reads_first_tile(Tensor<f32, 2> x) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : tiles(x.cols(), {256}))
      store(x, load<16, 256>(x, m, n) + load<16, 256>(x, m, 0), m, n);
}

// R29. Slots claimed from fill while other tiles zero fill.
PK_KERNEL void r29_claim_while_zeroing(Tensor<i32, 1> fill, Tensor<i32, 1> ids, Tensor<i32, 1> slot) {
  for (auto t : tiles(ids.size(), {256})) {
    store(slot, claim(fill, load<256>(ids, t)), t);
    store(fill, zeros<i32, 256>(), t);
  }
}

// R30. A 16-row tile stored with an 8-row step (the row form of A2 / A3): refused, as it should be.
PK_KERNEL void r30_tile_taller_than_step(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 256}))
    store(y, load<16, 256>(x, m, n) * (row_index<16, 256>(m) - float(m)), m, n);
}

// R31. My first two-shot all-reduce by hand: rank r reduces rows rank() * (R / W) + m with 16-row tiles; when
// R / W is not a multiple of 16 the last tile's padding rows overlap the next rank's block (refused at
// W = 2). user_specs14.pk.cpp's x_prim_two_shot starts the blocks a whole number of tiles apart.
PK_KERNEL void r31_two_shot_overlapping_blocks(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows() / world_size(), x.cols(), {16, 256})) {
    auto r = prim::reduce<16, 256>(Sum, Ldst, x, rank() * (x.rows() / world_size()) + m, n);
    for (auto p : range(0, world_size()))
      prim::store_async(Ldst, y.on(p), r, rank() * (x.rows() / world_size()) + m, n);
  }
  prim::barrier(prim::flag(1, Grid));
}

// R32. My first per-tile-flag kernel: the opening and the closing barrier both on slot 0, so slot 0 gets two
// rounds of signals a launch and each barrier's wait (one round) can be overtaken.
PK_KERNEL void r32_barriers_share_slot(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> out) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {1024})) {
    auto f = prim::flag(1 + i / 1024);
    prim::store_async(Ldst, y.on(next_rank()), load<1024>(x, i) * 2.0f, i);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
    store(out, load<1024>(y, i), i);
  }
  prim::barrier(prim::flag(0));
}

// ========================================================================================== Refused, as they must be: illegal uses

// I1. An f32 tile stored into a bf16 tensor without a cast.
PK_KERNEL void i1_store_no_cast(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y, cast<f32>(load<16, 256>(x, m, n)) * 2.0f, m, n);
}

// I2. mma of f32 operands (bf16, f16 or fp8 only).
PK_KERNEL void i2_mma_f32(Tensor<f32, 2> a, Tensor<f32, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(c, acc, m, n);
  }
}

// I3. A tile step of 0.
PK_KERNEL void i3_step_zero(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {0})) store(y, load<256>(x, i), i);
}

// I4. A negative range step.
PK_KERNEL void i4_range_step_neg(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto n : range(0, x.cols(), -256)) acc = acc + row_sum(load<16, 256>(x, m, n));
    store(y, acc, m, 0);
  }
}

// I5. A flag slot past the constant range [0, 1024).
PK_KERNEL void i5_flag_1024(Sym<f32, 1> x) {
  prim::barrier(prim::flag(1024));
}

// I6. all_gather along dimension 2 of a 2-D tensor.
PK_KERNEL void i6_ag_dim_out_of_range(Sym<f32, 2> x, Sym<f32, 2> y) {
  all_gather(x, y, 2);
}

// I7. all_to_all concatenating along dimension 3 of a 3-D tensor.
PK_KERNEL void i7_a2a_dims_bad(Sym<f32, 3> x, Sym<f32, 3> y) {
  all_to_all(x, y, 0, 3);
}

// I8. A collective inside a tile loop.
PK_KERNEL void i8_collective_in_loop(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) all_reduce(Sum, x, y);
}

// I9. all_reduce of fp8 tensors.
PK_KERNEL void i9_reduce_fp8(Sym<f8e4m3, 1> x, Sym<f8e4m3, 1> y) {
  all_reduce(Sum, x, y);
}

// I10. load_rows of 4096 rows (at most 2048).
PK_KERNEL void i10_load_rows_too_many(Tensor<f32, 2> t, Tensor<i32, 1> ids, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {4096, 8}))
    store(y, load_rows<4096, 8>(t, load<4096>(ids, m), n), m, n);
}

// I11. A 5-D tile.
PK_KERNEL void i11_five_d(Tensor<f32, 4> x, Tensor<f32, 4> y) {
  for (auto i : tiles(x.size(), {1})) store(y, load<1, 1, 1, 1, 64>(x, i, 0, 0, 0, 0), i, 0, 0, 0, 0);
}

// I12. A peer chosen by a value read from memory in a kernel that communicates.
PK_KERNEL void i12_peer_of_tensor_scalar(Tensor<i32, 1> who, Tensor<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) store(y.on(who.at(0)), load<1024>(x, i), i);
}

// I13. A 2048 x 4096 accumulator on the general path (far past the registers a thread has).
PK_KERNEL void i13_mma_too_big(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {2048, 4096})) {
    auto acc = zeros<f32, 2048, 4096>();
    for (auto k : range(0, a.cols(), 16)) acc = mma_t(load<2048, 16>(a, m, k), load<4096, 16>(b, n, k), acc);
    store(c, row_sum(acc), m, 0);
  }
}

// I14. store_add of fp8 into a peer.
PK_KERNEL void i14_store_add_local_fp8(Tensor<f32, 2> x, Sym<f8e4m3, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store_add(y.on(next_rank()), cast<f8e4m3>(load<16, 256>(x, m, n)), m, n);
}

// I15. A host loop (a range loop around a collective) carrying a tile from trip to trip.
PK_KERNEL void i15_range_host_loop_carry(Sym<f32, 1> x, Sym<f32, 1> y, index steps) {
  auto c = zeros<f32, 1024>();
  for (auto s : range(0, steps, 1)) {
    all_reduce(Sum, x, y);
    c = c + 1.0f;
  }
  for (auto i : tiles(x.size(), {1024})) store(x, c, i);
}

// I16. reduce_scatter along dimension -1.
PK_KERNEL void i16_scatter_dim(Sym<f32, 2> x, Sym<f32, 2> y) {
  reduce_scatter(Sum, x, y, -1);
}

// I17. A wait count from an integer argument with one signal per launch (the checker models the argument at
// the extents' value; finding 5: the message says "expects 4 signals" without saying 4 is c's modelled value).
PK_KERNEL void i17_wait_runtime_count(Sym<f32, 1> x, index c) {
  prim::signal(prim::flag(1), next_rank());
  prim::wait(prim::flag(1), c);
}

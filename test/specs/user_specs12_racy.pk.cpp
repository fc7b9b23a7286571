// The twelfth user-written spec set, part (b): subtly WRONG multi-rank kernels that the
// protocol checker must refuse. Each comment says what the race or deadlock is and at which
// world size. The first group was ACCEPTED when the set was written (silent wrong results:
// findings 1-5 of test/specs/specs12_findings.md; all but A9 are refused now); the second, with
// the error test/Compile/user_specs12.test checks. Compile one kernel at a time (--kernel NAME):
// the file as a whole is refused.
#include <pk/spec.h>
using namespace pk;

// ================================================== accepted when written (findings 1-5)

// A1. ACCEPTED WHEN WRITTEN (finding 1). All-gather by pushes into y [W R, C] at rank() * x.rows() + m,
//    then a Block flag (signal_all / wait W - 1) and a consumer loop over y's own tiles. Block b's
//    wait only orders it after block b of every peer, but y's tile t (row p R + i) was pushed by
//    the block of x's tile (i, j), which is block b only for rank 0's rows: block b reads rows
//    other blocks of the peers are still pushing. Races at W >= 2 whenever y has W x.rows() rows
//    (its layout); the checker models y with x's rows, so the peers' rows fall outside y.
PK_KERNEL void ag_push_block_flag(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 128}))
    for (auto p : range(0, world_size()))
      prim::store_async(Ldst, y.on(p), load<1, 128>(x, m, n), rank() * x.rows() + m, n);
  prim::signal_all(f);
  prim::wait(f, world_size() - 1);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {1, 128}))
    store(out, load<1, 128>(y, m, n) * 2.0f, m, n);
  prim::barrier(prim::flag(2));
}

// A2. ACCEPTED WHEN WRITTEN (finding 1). The ring handoff of ring_shift_block_flag with the consumer loop
//    tiled over out's shape: when out.cols() != x.cols() the tile numbering differs, so block b
//    reads tiles of y that other blocks of prev_rank push (only a Block flag between). W >= 2.
PK_KERNEL void handoff_other_shape(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
  prim::signal(f, next_rank());
  prim::wait(f, 1);
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// A3. ACCEPTED WHEN WRITTEN (finding 1). Zero y over y's tiles, a Block barrier, then every rank adds x's
//    tiles into root's y. With x.cols() != y.cols() the add of x's tile t lands on rows the root
//    zeroes in another block, which the Block barrier does not order: the zeroing can erase an
//    add (a Grid barrier is needed). W >= 1 (the root's own adds too).
PK_KERNEL void zero_then_add_block_barrier(Tensor<f32, 2> x, Sym<f32, 2> y, index root) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128})) store(y, zeros<f32, 16, 128>(), m, n);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_add_async(Ldst, y.on(root), load<16, 128>(x, m, n), m, n);
  prim::barrier(prim::flag(1));
}

// A4. ACCEPTED WHEN WRITTEN (finding 1). Each rank stores a's rows into rank 0's y at rank() * rows + m,
//    with rows an argument: whenever rows < a.rows() the blocks of ranks r and r + 1 write the same
//    rows of rank 0's y. W >= 2. (Refused when the offset is a.cols(): only extents of one kind
//    vary independently in the model.)
PK_KERNEL void offset_by_rows_arg(Tensor<f32, 2> a, Sym<f32, 2> y, index rows) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {1, 128}))
    store(y.on(0), load<1, 128>(a, m, n), rank() * rows + m, n);
}

// A5. ACCEPTED WHEN WRITTEN (finding 2). Each rank stores into rank 0's y at its row block and into root's
//    y at the next rank's block: with root = 0 ranks r and r + 1 write the same rows of rank 0's y
//    (W >= 2). The checker models integer arguments at 1 and 3 * step + 1, never 0; the same kernel
//    with 1 % world_size() in place of 0 is refused (race_iff_root1 in the findings).
PK_KERNEL void race_iff_root0(Tensor<f32, 2> a, Sym<f32, 2> y, index root) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {1, 128})) {
    store(y.on(0), load<1, 128>(a, m, n), rank() * a.rows() + m, n);
    store(y.on(root), load<1, 128>(a, m, n) * 2.0f, (rank() + 1) % world_size() * a.rows() + m, n);
  }
}

// A6. ACCEPTED WHEN WRITTEN (finding 3). Two passes of a step loop store into row blocks s * x.rows() + m of
//    a local out with 16-row tiles: pass 0's last (partial) tile stores padding zeros over pass
//    1's first rows, from another block with no grid-wide barrier between the passes; the zeros
//    can land last. The model's 4 tiles on 1 or 3 blocks put tiles 0 and 3 on one block.
PK_KERNEL void two_passes_padding(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto s : range(0, 2, 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      store(out, load<16, 128>(x, m, n) * float(s + 1), s * x.rows() + m, n);
  prim::barrier(prim::flag(1));
}

// A7. ACCEPTED WHEN WRITTEN (finding 3). As two_passes_padding with a shift of exactly three tiles (48 rows):
//    pass 0's tile 3 and pass 1's tile 0 write the same rows from blocks 3 and 0 at run time.
PK_KERNEL void shift3_tiles(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto s : range(0, 2, 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      store(out, load<16, 128>(x, m, n) * float(s + 1), s * 48 + m, n);
  prim::barrier(prim::flag(1));
}

// A8. ACCEPTED WHEN WRITTEN (finding 4). Per-tile flags recycled modulo 4 (to save flag slots): a block whose
//    tiles t and t + 132 share a slot waits for flag >= epoch * 1 twice per launch, so the
//    second wait passes on the first tile's signal and reads y before prev_rank pushed it (also
//    % 64; any modulus >= 4). Races once there are more tiles than blocks, W >= 1.
PK_KERNEL void tile_slots_mod4(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> out) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {256})) {
    auto f = prim::flag(1 + (i / 256) % 4);
    prim::store_async(Ldst, y.on(next_rank()), load<256>(x, i), i);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
    store(out, load<256>(y, i), i);
  }
  prim::barrier(prim::flag(5));
}

// A9. ACCEPTED WHEN WRITTEN (finding 5). Every tile stores its row sums into rows 0..15 of rs: the blocks
//    write the same elements with different values (last writer wins). Single GPU: a kernel
//    that does not communicate is not race-checked between blocks at all.
PK_KERNEL void every_tile_same_row(Tensor<f32, 2> x, Tensor<f32, 2> rs) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(rs, row_sum(load<16, 64>(x, m, n)), 0, 0);
}

// A10. ACCEPTED WHEN WRITTEN (finding 5). Tiles stored at m / 2: tile m = 16 writes rows 8..23, overlapping
//    tile 0's rows 8..15 from another block (write-write race). Refused once the kernel
//    communicates (half_rows_local_comm in the findings).
PK_KERNEL void downsample_overlap(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n), m / 2, n);
}

// ================================================================ refused (as they must be)

// R1. Missing wait: the ring consumer reads y before its wait on prev_rank's signal (the wait comes after).
PK_KERNEL void ring_wait_after_read(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  auto ready = prim::flag(1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
  prim::signal(ready, next_rank());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n), m, n);
  prim::wait(ready, 1);
  prim::barrier(prim::flag(2));
}

// R2. Wait for too few signals: every tile of every rank signals each owner's Grid flag, the owner
//    waits for W - 1 signals (one per peer) instead of W x tiles.
PK_KERNEL void gather_wait_too_few(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  auto got = prim::flag(1, Grid);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    for (auto p : range(0, world_size())) {
      prim::store_async(Ldst, y.on(p), load<16, 128>(x, m, n), rank() * ((x.rows() + 15) / 16 * 16) + m, n);
      prim::signal(got, p);
    }
  }
  prim::wait(got, world_size() - 1);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R3. Signal before the data store: the flag says 'ready' before store_async writes the tile.
PK_KERNEL void signal_before_store(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto f = prim::flag(1 + m / 16 * ((x.cols() + 127) / 128) + n / 128);
    prim::signal(f, next_rank());
    prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
    prim::wait(f, 1);
    store(out, load<16, 128>(y, m, n), m, n);
  }
}

// R4. Buffer reused in the next launch without a wait: no barrier at the start, so launch e + 1's
//    push overwrites y while next_rank still reads launch e's data.
PK_KERNEL void push_no_start_barrier(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  auto ready = prim::flag(1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
  prim::signal(ready, next_rank());
  prim::wait(ready, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n), m, n);
}

// R5. Two ranks write the same rows of an owner through different index expressions: the row within
//    the owner is m % rows + rank() * 16 instead of m % rows.
PK_KERNEL void owner_rows_two_exprs(Tensor<f32, 2> x, Sym<f32, 2> y) {
  index rows = x.rows() / world_size();
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(m / rows), load<16, 64>(x, m, n), m - (m / rows) * rows + rank() * 16, n);
}

// R6. Pull of a peer's buffer before its producer signalled: s is written locally then pulled from
//    prev_rank with no barrier between.
PK_KERNEL void pull_before_producer(Sym<f32, 2> x, Sym<f32, 2> s, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(s, load<16, 128>(x, m, n) * 2.0f, m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, prim::load_peer<16, 128>(Ldst, s.on(prev_rank()), m, n), m, n);
  prim::barrier(prim::flag(1));
}

// R7. One flag slot reused by two phases with count 1 each: two signals arrive per launch, so the
//    second phase's wait (or the next launch's first) passes early.
PK_KERNEL void flag_reused_phases(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
  prim::signal(f, next_rank());
  prim::wait(f, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, z.on(prev_rank()), load<16, 128>(y, m, n), m, n);
  prim::signal(f, prev_rank());
  prim::wait(f, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(z, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R8. Deadlock only at world size 3: at W = 3 every rank waits before it signals next_rank
//    (w3 = (W / 3) * (3 / W) is 1 only there); at other sizes each signals first.
PK_KERNEL void relay_deadlock_only_w3(Sym<f32, 2> x) {
  auto go = prim::flag(1);
  prim::barrier(prim::flag(0));
  index w3 = (world_size() / 3) * (3 / world_size());
  for (auto k : range(0, w3, 1)) prim::wait(go, 1);
  prim::signal(go, next_rank());
  for (auto k : range(0, 1 - w3, 1)) prim::wait(go, 1);
  prim::barrier(prim::flag(2));
}

// R9. Deadlock at odd world sizes (W = 1 included): every rank waits before signalling when W is odd.
PK_KERNEL void deadlock_odd_world(Sym<f32, 2> x, Sym<f32, 2> y) {
  auto go = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto k : range(0, world_size() % 2, 1)) prim::wait(go, 1);
  prim::signal(go, next_rank());
  for (auto k : range(0, 1 - world_size() % 2, 1)) prim::wait(go, 1);
  prim::barrier(prim::flag(2));
}

// R10. Race only at odd world sizes: pairwise partner (r ^ 1 written with % W); at W = 3 ranks 1 and 2
//    both push into rank 0.
PK_KERNEL void pair_exchange_odd(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  index partner = (rank() + 1 - 2 * (rank() % 2) + world_size()) % world_size();
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, y.on(partner), load<16, 128>(x, m, n), m, n);
  prim::barrier(prim::flag(1));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n), m, n);
}

// R11. store_add mixed with a plain store on the same rows: peers add into rank 0's y while rank 0
//    stores zeros there in the same phase.
PK_KERNEL void add_and_store_same_rows(Tensor<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    prim::store_add_async(Ldst, y.on(0), load<16, 128>(x, m, n), m, n);
    store(y, zeros<f32, 16, 128>(), m, n);
  }
  prim::barrier(prim::flag(1));
}

// R12. Signals inside a data-dependent loop: the number of signals is read from memory (cnt.at(0)).
PK_KERNEL void signals_by_count(Tensor<i32, 1> cnt, Sym<f32, 2> x, Sym<f32, 2> y) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto k : range(0, cnt.at(0), 1)) prim::signal(f, next_rank());
  prim::wait(f, 1);
  prim::barrier(prim::flag(2));
}

// R13. A loop whose trip count differs per rank (rank() + 1 trips), each trip signalling and waiting.
PK_KERNEL void trips_per_rank(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto s : range(0, rank() + 1, 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n) + float(s), m, n);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
  }
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R14. Block flag between a producer tiled 16 x 128 and a consumer tiled 32 x 128: block b reads tiles
//    other blocks of prev_rank push.
PK_KERNEL void block_flag_other_tiling(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
  prim::signal(f, next_rank());
  prim::wait(f, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store(out, load<32, 128>(y, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// R15. Block flag waited for every tile's signal: a block only receives its own tiles' signals.
PK_KERNEL void block_flag_wait_all_tiles(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {256})) {
    prim::store_async(Ldst, y.on(next_rank()), load<256>(x, i), i);
    prim::signal(f, next_rank());
  }
  prim::wait(f, (x.size() + 255) / 256);
  for (auto i : tiles(x.size(), {256})) store(out, load<256>(y, i), i);
  prim::barrier(prim::flag(2));
}

// R16. Halo read in the same loop that pushes it: prev_rank's halo row may not have landed.
PK_KERNEL void halo_read_own_edge_early(Sym<f32, 2> x, Sym<f32, 2> halo, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto n : tiles(x.cols(), {128})) {
    prim::store_async(Ldst, halo.on(next_rank()), load<1, 128>(x, x.rows() - 1, n), 0, n);
    store(out, load<1, 128>(halo, 0, n) + load<1, 128>(x, 0, n), 0, n);
  }
  prim::barrier(prim::flag(1));
}

// R17. Two ring steps into one landing buffer: step 1's push overwrites buf while next_rank still
//    reads step 0's data (no 'free' flag).
PK_KERNEL void two_step_ring_same_buffer(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto s : range(0, 2, 1)) {
    auto f = prim::flag(1 + s);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      prim::store_async(Ldst, buf.on(next_rank()), load<16, 128>(x, m, n) * float(s + 1), m, n);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      store(out, load<16, 128>(buf, m, n), s * x.rows() + m, n);
  }
  prim::barrier(prim::flag(3));
}

// R18. prim::reduce over the ranks' s right after each rank stores its own s: no barrier between.
PK_KERNEL void prim_reduce_no_barrier_after_store(Tensor<f32, 2> x, Sym<f32, 2> s, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(s, load<16, 256>(x, m, n) * 2.0f, m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y, prim::reduce<16, 256>(Sum, Ldst, s, m, n), m, n);
  prim::barrier(prim::flag(1));
}

// A8b. As tile_slots_mod4 with slots modulo 64 (a user keeping inside the flag region): one block's
//    tiles t and t + k B share a slot once k B is a multiple of 64. W >= 1.
PK_KERNEL void tile_slots_mod64(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> out) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {256})) {
    auto f = prim::flag(1 + (i / 256) % 64);
    prim::store_async(Ldst, y.on(next_rank()), load<256>(x, i), i);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
    store(out, load<256>(y, i), i);
  }
  prim::barrier(prim::flag(70));
}

// The twelfth user-written spec set, part (a): CORRECT multi-rank kernels that the protocol
// checker (pk-verify-protocol, pk-check-tile-races) must accept. Written from docs/language.md,
// README.md ("What the compiler checks"), dialect/docs/ProtocolChecking.md, pk/spec.h and the
// test/Protocol tests: hand-written protocols with pk::prim (Block and Grid flags, per-tile and
// per-step slots, signal / signal_all / wait / barrier, store_async, store_add_async, load_peer,
// prim::reduce / prim::all_reduce), ring pipelines, double buffering with 'free' flags, pushes
// into owners read after a barrier, pulls after a signal, collectives mixed with peer tiles and
// with the spec's own flags, in-place collectives, rooted collectives with a run-time root,
// host loops, and a count read from memory used only as a value. Every kernel compiles (pkc
// accepts all 33). Part (b), kernels that must be refused, is user_specs12_racy.pk.cpp;
// test/specs/specs12_findings.md has the findings; test/Compile/user_specs12.test compiles both.
// Tile offsets of row blocks are whole numbers of tiles apart ((rows + 15) / 16 * 16) or use
// one-row tiles, so no partial tile's padding rows land in a neighbour's block.
#include <pk/spec.h>
using namespace pk;

// 1. Ring shift by hand: push x into next's y, one Block flag per block (the consumer loop tiles y
//    exactly as the producer loop did, so block b reads only what block b of prev_rank wrote), out = y + x.
PK_KERNEL void ring_shift_block_flag(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  auto ready = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
  prim::signal(ready, next_rank());
  prim::wait(ready, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n) + load<16, 128>(x, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// 2. A flag per tile (run-time slot): push the tile, signal it, wait for prev's, out = y * x.
PK_KERNEL void ring_per_tile_flags(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto f = prim::flag(1 + m / 16 * ((x.cols() + 127) / 128) + n / 128);
    auto t = load<16, 128>(x, m, n);
    prim::store_async(Ldst, y.on(next_rank()), t, m, n);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
    store(out, load<16, 128>(y, m, n) * t, m, n);
  }
}

// 3. Three ring steps, one Block flag per step, each step landing in its own row block of buf (blocks
//    a whole number of tiles apart), then acc = the three blocks summed.
PK_KERNEL void ring_pipeline_steps(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> acc) {
  index rp = (x.rows() + 15) / 16 * 16;
  prim::barrier(prim::flag(0));
  for (auto s : range(0, 3, 1)) {
    auto f = prim::flag(1 + s);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      prim::store_async(Ldst, buf.on(next_rank()), load<16, 128>(x, m, n) * float(s + 1), s * rp + m, n);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
  }
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(acc, load<16, 128>(buf, m, n) + load<16, 128>(buf, rp + m, n) + load<16, 128>(buf, 2 * rp + m, n), m, n);
  prim::barrier(prim::flag(4));
}

// 4. True double buffering within a launch: four steps over two landing slots; step s >= 2 first
//    waits for the consumer's 'free' signal of step s - 2; row blocks of out a whole number of tiles apart.
PK_KERNEL void double_buffer_free_flags(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  index rp = (x.rows() + 15) / 16 * 16;
  prim::barrier(prim::flag(0));
  for (auto s : range(0, 4, 1)) {
    for (auto k : range(0, s / 2, 1)) prim::wait(prim::flag(10 + s - 2), 1);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      prim::store_async(Ldst, buf.on(next_rank()), load<16, 128>(x, m, n) + float(s), s % 2 * rp + m, n);
    prim::signal(prim::flag(1 + s), next_rank());
    prim::wait(prim::flag(1 + s), 1);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      store(out, load<16, 128>(buf, s % 2 * rp + m, n), s * rp + m, n);
    for (auto k : range(0, 1 - s / 2, 1)) prim::signal(prim::flag(10 + s), prev_rank());
  }
  prim::barrier(prim::flag(20));
}

// 5. Nested loops: a flag per row of tiles (outer loop dealt to blocks), columns walked inside.
PK_KERNEL void per_row_block_flags(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto m : tiles(x.rows(), {16})) {
    auto f = prim::flag(1 + m / 16);
    for (auto n : tiles(x.cols(), {128}))
      prim::store_async(Ldst, y.on(next_rank()), load<16, 128>(x, m, n), m, n);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
    for (auto n : tiles(x.cols(), {128}))
      store(out, load<16, 128>(y, m, n), m, n);
  }
}

// 6. Producer computes s locally, signals next_rank (Block flag), which pulls it; a 'done' signal back
//    keeps s alive until the reader finished (no barriers at all).
PK_KERNEL void pull_after_signal(Sym<f32, 2> x, Sym<f32, 2> s, Tensor<f32, 2> out) {
  auto ready = prim::flag(1);
  auto done = prim::flag(2);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(s, load<16, 128>(x, m, n) * 3.0f, m, n);
  prim::signal(ready, next_rank());
  prim::wait(ready, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, prim::load_peer<16, 128>(Ldst, s.on(prev_rank()), m, n), m, n);
  prim::signal(done, prev_rank());
  prim::wait(done, 1);
}

// 7. Arrival by signal_all (no barrier), pulls from every rank, departure by signal_all.
PK_KERNEL void signal_all_gather_pull(Sym<f32, 2> x, Tensor<f32, 3> out) {
  auto ready = prim::flag(1);
  auto done = prim::flag(2);
  prim::signal_all(ready);
  prim::wait(ready, world_size() - 1);
  for (auto p : range(0, world_size()))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      store(out, prim::load_peer<16, 128>(Ldst, x.on(p), m, n), p, m, n);
  prim::signal_all(done);
  prim::wait(done, world_size() - 1);
}

// 8. All-gather by pushes into every owner's row block (tile-aligned offsets), Grid barriers, then read.
PK_KERNEL void owners_store_then_read(Tensor<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    for (auto p : range(0, world_size()))
      prim::store_async(Ldst, y.on(p), load<16, 128>(x, m, n), rank() * ((x.rows() + 15) / 16 * 16) + m, n);
  prim::barrier(prim::flag(1, Grid));
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n) * 0.5f, m, n);
  prim::barrier(prim::flag(2, Grid));
}

// 9. All-gather by pushes of one-row tiles at rank() * x.rows() + m, Grid barriers: any shapes.
PK_KERNEL void push_all_then_grid_barrier(Tensor<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 128}))
    for (auto p : range(0, world_size()))
      prim::store_async(Ldst, y.on(p), load<1, 128>(x, m, n), rank() * x.rows() + m, n);
  prim::barrier(prim::flag(1, Grid));
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n), m, n);
  prim::barrier(prim::flag(2, Grid));
}

// 10. Gather to a run-time root by pushes of one-row tiles, Block barriers.
PK_KERNEL void gather_to_root_prim(Tensor<f32, 2> x, Sym<f32, 2> y, index root) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 128}))
    prim::store_async(Ldst, y.on(root), load<1, 128>(x, m, n), rank() * x.rows() + m, n);
  prim::barrier(prim::flag(1));
}

// 11. Reduce to a run-time root by store_add_async, zeroing ordered by a Grid barrier (any shapes).
PK_KERNEL void prim_reduce_to_root(Tensor<f32, 2> x, Sym<f32, 2> y, index root) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128})) store(y, zeros<f32, 16, 128>(), m, n);
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128}))
    prim::store_add_async(Ldst, y.on(root), load<16, 128>(x, m, n), m, n);
  prim::barrier(prim::flag(1, Grid));
}

// 12. Two-shot all-reduce by hand: each rank reduces its ceil(R/W) rows into every rank's copy.
PK_KERNEL void two_shot_by_hand(Sym<f32, 2> x, Sym<f32, 2> y) {
  index rows = (x.rows() + world_size() - 1) / world_size();
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(rows, x.cols(), {1, 256}))
    prim::all_reduce<1, 256>(Sum, Ldst, x, y, rank() * rows + m, n);
  prim::barrier(prim::flag(1));
}

// 13. Hand-written all-reduce of column shares (16 x 1 tiles), Max.
PK_KERNEL void prim_all_reduce_cols(Sym<f32, 2> x, Sym<f32, 2> y) {
  index cols = x.cols() / world_size();
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), cols, {16, 1}))
    prim::all_reduce<16, 1>(Max, Ldst, x, y, m, rank() * cols + n);
  prim::barrier(prim::flag(1));
}

// 14. Halo exchange with a Grid flag counting every tile's two signals, Grid barriers around.
PK_KERNEL void halo_exchange_prim(Sym<f32, 2> x, Sym<f32, 2> halo, Tensor<f32, 2> out) {
  auto f = prim::flag(1, Grid);
  prim::barrier(prim::flag(0, Grid));
  for (auto n : tiles(x.cols(), {128})) {
    prim::store_async(Ldst, halo.on(next_rank()), load<1, 128>(x, x.rows() - 1, n), 0, n);
    prim::store_async(Ldst, halo.on(prev_rank()), load<1, 128>(x, 0, n), 1, n);
    prim::signal(f, next_rank());
    prim::signal(f, prev_rank());
  }
  prim::wait(f, 2 * ((x.cols() + 127) / 128));
  for (auto n : tiles(x.cols(), {128}))
    store(out, load<1, 128>(halo, 0, n) + load<1, 128>(halo, 1, n), 0, n);
  prim::barrier(prim::flag(2, Grid));
}

// 15. Grid flag counting all tiles' signals: the consumer may tile differently (512 vs 256).
PK_KERNEL void grid_flag_count_tiles(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> out) {
  auto f = prim::flag(1, Grid);
  prim::barrier(prim::flag(0, Grid));
  for (auto i : tiles(x.size(), {256})) {
    prim::store_async(Ldst, y.on(next_rank()), load<256>(x, i), i);
    prim::signal(f, next_rank());
  }
  prim::wait(f, (x.size() + 255) / 256);
  for (auto i : tiles(x.size(), {512})) store(out, load<512>(y, i) * 2.0f, i);
  prim::barrier(prim::flag(2, Grid));
}

// 16. One level of a tree reduction: odd ranks add into their even neighbour (rank() / 2 * 2).
PK_KERNEL void tree_reduce_level(Sym<f32, 2> x, Sym<f32, 2> acc) {
  auto f = prim::flag(1, Grid);
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(acc, load<16, 128>(x, m, n), m, n);
  prim::barrier(prim::flag(2, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_add_async(Ldst, acc.on(rank() / 2 * 2), load<16, 128>(x, m, n) * float(rank() % 2), m, n);
  prim::barrier(prim::flag(3, Grid));
}

// 17. A local loop whose trip count depends on the rank (no signal inside), then a ring push.
PK_KERNEL void rank_dependent_trips_local(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = load<16, 128>(x, m, n);
    for (auto k : range(0, rank() + 1, 1)) t = t * 0.5f;
    prim::store_async(Ldst, y.on(next_rank()), t, m, n);
  }
  prim::barrier(prim::flag(1));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n), m, n);
  prim::barrier(prim::flag(2));
}

// 18. Row blocks scattered with store_rows at the fixed offset (padding rows are not moved).
PK_KERNEL void scatter_rows_to_owners(Tensor<f32, 2> x, Tensor<i32, 1> dest, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    for (auto p : range(0, world_size()))
      store_rows(y.on(p), load<16, 128>(x, m, n), cast<i32>(row_index<16, 1>(m)) + rank() * x.rows(), n);
}

// 19. Reduce-scatter by adds into owners (gemm_rs's owner loop), zeroed first.
PK_KERNEL void rs_adds_into_owners(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128})) store(y, zeros<f32, 16, 128>(), m, n);
  for (auto [o, m, n] : tiles(world_size(), y.rows(), y.cols(), {1, 16, 128}))
    store_add(y.on(o), load<16, 128>(x, o * y.rows() + m, n), m, n);
}

// 20. All-reduce, ring push of the result (pkc's arrive/depart flags), then a local combine.
PK_KERNEL void ar_then_peer_tiles(Sym<f32, 2> x, Sym<f32, 2> s, Sym<f32, 2> y, Tensor<f32, 2> out) {
  all_reduce(Sum, x, s);
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 128}))
    store(y.on(next_rank()), load<16, 128>(s, m, n) * 0.5f, m, n);
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 128}))
    store(out, load<16, 128>(y, m, n) + load<16, 128>(s, m, n), m, n);
}

// 21. All-gather, a Grid barrier, pulls from prev_rank's gathered copy.
PK_KERNEL void ag_then_prim_pull(Sym<f32, 2> x, Sym<f32, 2> g, Tensor<f32, 2> out) {
  all_gather(x, g);
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 128}))
    store(out, prim::load_peer<16, 128>(Ldst, g.on(prev_rank()), m, n) - load<16, 128>(g, m, n), m, n);
  prim::barrier(prim::flag(1));
}

// 22. All-reduce then pulls of the peers' outputs after only a Block barrier: correct because pkc runs
//    the collective and the loop in one worker with grid-wide barriers between them.
PK_KERNEL void ar_then_pull_block_barrier(Sym<f32, 1> a, Sym<f32, 1> b, Tensor<f32, 1> out) {
  all_reduce(Sum, a, b);
  prim::barrier(prim::flag(0));
  for (auto i : tiles(b.size(), {256}))
    store(out, prim::load_peer<256>(Ldst, b.on(next_rank()), i), i);
  prim::barrier(prim::flag(1));
}

// 23. All-reduce, then the next input pushed into the peers' copies of the collective's input (pkc orders it).
PK_KERNEL void ar_input_refilled(Sym<f32, 1> a, Sym<f32, 1> b, Tensor<f32, 1> x) {
  all_reduce(Sum, a, b);
  prim::barrier(prim::flag(0));
  for (auto i : tiles(a.size(), {256}))
    prim::store_async(Ldst, a.on(next_rank()), load<256>(x, i), i);
  prim::barrier(prim::flag(1));
}

// 24. Read next_rank's x, then an in-place all-reduce of x (the read phase is ordered before the writes).
PK_KERNEL void peer_read_then_in_place_ar(Sym<f32, 2> x, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(x.on(next_rank()), m, n), m, n);
  all_reduce(Sum, x, x);
}

// 25. In-place all-gather (NCCL layout), then a local tile loop over the gathered tensor.
PK_KERNEL void ag_in_place_then_tiles(Sym<f32, 2> x, Tensor<f32, 2> out) {
  all_gather(x, x);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(out, load<16, 128>(x, m, n) * 2.0f, m, n);
}

// 26. In-place all-gather, then pushes into the peers' gathered x behind Block barriers (pkc orders the
//    gather before the pushes).
PK_KERNEL void ag_in_place_then_prim_push(Sym<f32, 2> x, Tensor<f32, 2> src) {
  all_gather(x, x);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    prim::store_async(Ldst, x.on(next_rank()), load<16, 128>(src, m, n), m, n);
  prim::barrier(prim::flag(1));
}

// 27. In-place update (same tile read and written), all-reduce, in-place update from the result.
PK_KERNEL void in_place_scale_then_ar(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(x, load<16, 128>(x, m, n) * 0.5f, m, n);
  all_reduce(Sum, x, y);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(x, load<16, 128>(y, m, n) - load<16, 128>(x, m, n), m, n);
}

// 28. Reduce-scatter, in-place scaling of the shard, all-gather.
PK_KERNEL void rs_then_ag_phases(Sym<f32, 2> x, Sym<f32, 2> part, Sym<f32, 2> full) {
  reduce_scatter(Sum, x, part);
  for (auto [m, n] : tiles(part.rows(), part.cols(), {16, 128}))
    store(part, load<16, 128>(part, m, n) * 0.5f, m, n);
  all_gather(part, full);
}

// 29. All-to-all then adds into prev_rank's y.
PK_KERNEL void a2a_then_ring(Sym<f32, 2> x, Sym<f32, 2> t, Sym<f32, 2> y) {
  all_to_all(x, t);
  for (auto [m, n] : tiles(t.rows(), t.cols(), {16, 128}))
    store_add(y.on(prev_rank()), load<16, 128>(t, m, n), m, n);
}

// 30. Reduce to a root, broadcast from it, then a local tile loop.
PK_KERNEL void rooted_then_tiles(Sym<f32, 2> x, Sym<f32, 2> r, Sym<f32, 2> b, Tensor<f32, 2> out, index root) {
  reduce(Sum, x, r, root);
  broadcast(r, b, root);
  for (auto [m, n] : tiles(b.rows(), b.cols(), {16, 128}))
    store(out, load<16, 128>(b, m, n) * 0.25f, m, n);
}

// 31. An integer count all-reduced and read with .at() used only as a value (a scale) in a ring push.
PK_KERNEL void count_as_value_then_ring(Sym<i32, 1> cnt, Tensor<i32, 1> tot, Sym<f32, 2> x, Sym<f32, 2> y) {
  all_reduce(Sum, cnt, tot);
  float scale = 1.0f / float(tot.at(0) + 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y.on(next_rank()), load<16, 128>(x, m, n) * scale, m, n);
}

// 32. A host loop of all-reduce + rescale launches.
PK_KERNEL void host_loop_ar_steps(Sym<f32, 1> x, Sym<f32, 1> y, index steps) {
  for (auto s : range(0, steps, 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.size(), {256})) store(x, load<256>(y, i) * 0.5f, i);
  }
}

// 33. Ring all-gather as a host loop of W - 1 launches (specs10 finding 4: now a host loop).
PK_KERNEL void host_loop_ring_gather(Sym<f32, 2> y, index chunk) {
  for (auto s : range(0, world_size() - 1, 1)) {
    for (auto [m, n] : tiles(chunk, y.cols(), {1, 128})) {
      index c = (rank() - s + world_size()) % world_size();
      store(y.on(next_rank()), load<1, 128>(y, c * chunk + m, n), c * chunk + m, n);
    }
  }
}

// ---------------------------------------------------------------- refused
// None: every correct kernel written for this set was accepted (no false refusal found).

// Multi-rank probe kernels (a demanding user's attempts to break pkc; see test/specs/probe_findings.md).
// Each compiles to an sm_90a cubin and its generated protocol was read and found right:
// dependent phases, in-place and rooted collectives with run-time roots, collectives along a
// dimension, tiles stored / added into and pulled from peers, hand-written pk::prim protocols,
// 3-D / 4-D tensors, f16 / bf16 / f32 / i32, odd tile shapes. test/Compile/probe_specs.test
// compiles them.
#include <pk/spec.h>
using namespace pk;

// 1. tile loop -> in-place all-reduce -> tile loop reading and writing x at one tile -> in-place
//    reduce-scatter (Max) -> tile loop on this rank's chunk -> all-gather: every phase depends on the
//    one before.
PK_KERNEL void four_phase(Tensor<f32, 2> a, Sym<f32, 2> x, Sym<f32, 2> z, Sym<f32, 2> g) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(x, load<16, 64>(a, m, n) * 2.0f, m, n);
  all_reduce(Sum, x, x);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(x, load<16, 64>(x, m, n) + float(rank()), m, n);
  reduce_scatter(Max, x, x);
  for (auto [m, n] : tiles(a.rows() / world_size(), a.cols(), {16, 64}))
    store(z, load<16, 64>(x, rank() * (a.rows() / world_size()) + m, n) - 1.0f, m, n);
  all_gather(z, g);
}

// 2. a loop writes x, a second pulls the previous rank's x, a third overwrites x: the cross-rank
//    write-after-read between the last two needs the grid-wide barrier (all ranks) pkc puts there.
PK_KERNEL void pull_then_overwrite(Tensor<f32, 2> a, Sym<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(x, load<16, 64>(a, m, n) + 1.0f, m, n);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(y, load<16, 64>(x.on(prev_rank()), m, n), m, n);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(x, load<16, 64>(a, m, n) * 3.0f, m, n);
}

// 3. a host loop of 3 launches, each a two-buffer ring step (a -> next's b, b -> next's a).
PK_KERNEL void ring_double_buffer(Sym<f32, 2> a, Sym<f32, 2> b) {
  for (auto s : range(0, 3, 1)) {
    for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64}))
      store(b.on(next_rank()), load<16, 64>(a, m, n) + 1.0f, m, n);
    for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64}))
      store(a.on(next_rank()), load<16, 64>(b, m, n) * 2.0f, m, n);
  }
}

// 4. an all-reduce reads x on every rank, then tiles are stored into the next rank's x: the store
//    phase must wait for every peer's all-reduce to finish reading.
PK_KERNEL void ar_then_store_input(Sym<f32, 2> x, Sym<f32, 2> y) {
  all_reduce(Sum, x, y);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(x.on(next_rank()), load<16, 64>(y, m, n) * 0.5f, m, n);
}

// 5. tiles pulled from the previous rank's x, then an in-place all-reduce of x (it overwrites what
//    the pulls read).
PK_KERNEL void pull_then_ar_in_place(Sym<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x.on(prev_rank()), m, n), m, n);
  all_reduce(Sum, x, x);
}

// 6. tiles added into a run-time owner's y, an all-reduce of y, then a pull of the owner's result.
PK_KERNEL void add_owner_ar_pull_owner(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z, Tensor<f32, 2> w, index root) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store_add(y.on(root), load<16, 64>(x, m, n), m, n);
  all_reduce(Sum, y, z);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(w, load<16, 64>(z.on(root), m, n), m, n);
}

// 7. the spec's own prim barriers around an all-reduce (pkc moves the collective's flags off the
//    spec's slots).
PK_KERNEL void prim_barriers_around_ar(Sym<f32, 1> x, Sym<f32, 1> y) {
  prim::barrier(prim::flag(0));
  all_reduce(Sum, x, y);
  prim::barrier(prim::flag(1));
}

// 8. prim::all_reduce of bf16 rows, rank r taking rows r, r + W, ... (disjoint writes).
PK_KERNEL void prim_all_reduce_strided_rows(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows() / world_size(), x.cols(), {1, 128}))
    prim::all_reduce<1, 128>(Sum, Ldst, x, y, m * world_size() + rank(), n);
  prim::barrier(prim::flag(1));
}

// 9. signal_all, wait for W - 1 arrivals, then an i32 sum of every rank's x through a range loop
//    over the peers.
PK_KERNEL void prim_signal_all_sum_i32(Sym<i32, 1> x, Tensor<i32, 1> y) {
  auto f = prim::flag(3);
  prim::signal_all(f);
  prim::wait(f, world_size() - 1);
  for (auto i : tiles(x.size(), {256})) {
    auto acc = load<256>(x, i);
    for (auto p : range(1, world_size(), 1)) acc = acc + load<256>(x.on((rank() + p) % world_size()), i);
    store(y, acc, i);
  }
  prim::barrier(prim::flag(4));
}

// 10. f16: a tile loop writes x, an in-place broadcast from a run-time root, then a pull of the
//    root's copy minus the own copy (zero), 24 x 40 tiles.
PK_KERNEL void bcast_in_place_pull_root_f16(Tensor<f16, 2> a, Sym<f16, 2> x, Tensor<f16, 2> y, index root) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {24, 40})) store(x, cast<f16>(cast<f32>(load<24, 40>(a, m, n)) * 2.0f), m, n);
  broadcast(x, x, root);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {24, 40}))
    store(y, cast<f16>(cast<f32>(load<24, 40>(x.on(root), m, n)) - cast<f32>(load<24, 40>(x, m, n))), m, n);
}

// 11. in-place reduce (Max) onto a run-time root, a tile loop of 96-element tiles, then an in-
//    place scatter from that root.
PK_KERNEL void reduce_in_place_then_scatter(Sym<f32, 1> x, index root) {
  reduce(Max, x, x, root);
  for (auto i : tiles(x.size(), {96})) store(x, load<96>(x, i) * 0.25f, i);
  scatter(x, x, root);
}

// 12. i32 tiles added into a run-time owner at whole-tile rank offsets, then an in-place gather
//    onto the owner.
PK_KERNEL void add_i32_then_gather_in_place(Tensor<i32, 1> c, Sym<i32, 1> acc, index root) {
  for (auto i : tiles(c.size(), {128})) store_add(acc.on(root), load<128>(c, i) * 2 + 1, rank() * ((c.size() + 127) / 128 * 128) + i);
  gather(acc, acc, root);
}

// 13. bf16: in-place reduce-scatter along columns, a tile loop on this rank's column block (the
//    column offset in a local: see finding 3.1), in-place all-gather along columns.
PK_KERNEL void rs_cols_tile_ag_cols_in_place(Sym<bf16, 2> x) {
  reduce_scatter(Sum, x, x, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols() / world_size(), {8, 48})) {
    auto c = rank() * (x.cols() / world_size()) + n;
    store(x, cast<bf16>(silu(cast<f32>(load<8, 48>(x, m, c)))), m, c);
  }
  all_gather(x, x, 1);
}

// 14. in-place all-to-all along dimension 2 of a 3-D tensor, then a pull of the next rank's
//    result.
PK_KERNEL void a2a_last_dim_in_place_then_pull(Sym<f32, 3> x, Tensor<f32, 3> y) {
  all_to_all(x, x, 2, 2);
  for (auto [h, m, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 8, 32}))
    store(y, load<1, 8, 32>(x.on(next_rank()), h, m, d) + load<1, 8, 32>(x, h, m, d), h, m, d);
}

// 15. 4-D bf16: all-gather along the last dimension, then a range loop over dimension 0 around a
//    3-D tile loop.
PK_KERNEL void ag_4d_last_dim_then_tiles(Sym<bf16, 4> x, Sym<bf16, 4> g, Tensor<f32, 4> y) {
  all_gather(x, g, 3);
  for (auto b : range(0, g.dim(0), 1))
    for (auto [h, m, d] : tiles(g.dim(1), g.dim(2), g.dim(3), {1, 16, 64}))
      store(y, cast<f32>(load<1, 1, 16, 64>(g, b, h, m, d)) * 3.0f, b, h, m, d);
}

// 16. 4-D f16 tiles added into the previous rank, a range loop inside the tile loop.
PK_KERNEL void add_4d_f16_into_prev(Sym<f16, 4> x, Sym<f16, 4> y) {
  for (auto [h, m, d] : tiles(x.dim(1), x.dim(2), x.dim(3), {2, 8, 32}))
    for (auto b : range(0, x.dim(0), 1))
      store_add(y.on(prev_rank()), load<1, 2, 8, 32>(x, b, h, m, d), b, h, m, d);
}

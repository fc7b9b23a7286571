// Set 33: multi-rank tile traffic, phases, collectives along dims (probe set).
#include <pk/spec.h>
using namespace pk;

// K01: local phase writes x (Sym), next phase pulls the neighbour's x. Needs a cross-rank
// barrier (not just a grid barrier) between phases.
PK_KERNEL void k01_write_then_pull(Tensor<f32, 2> a, Sym<f32, 2> x, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64}))
    store(x, load<16, 64>(a, m, n) * 2.0f, m, n);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64}))
    store(out, load<16, 64>(x.on(next_rank()), m, n), m, n);
}

// K02: push into the next rank's y, then read own y locally (peer writes must have landed).
PK_KERNEL void k02_push_then_read(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(next_rank()), load<16, 64>(x, m, n), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(out, load<16, 64>(y, m, n) + 1.0f, m, n);
}

// K03: all_gather reads x on every rank; then a tile loop overwrites the neighbour's x.
// A rank must not write x on r+1 while r+2 still pulls it.
PK_KERNEL void k03_gather_then_overwrite_peer(Sym<f32, 2> x, Sym<f32, 2> y) {
  all_gather(x, y);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(x.on(next_rank()), load<16, 64>(y, m, n), m, n);
}

// K04: hand all-gather along rows, rows not a multiple of the tile: store_rows into every peer.
PK_KERNEL void k04_hand_allgather_rows(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    for (auto p : range(0, world_size()))
      store_rows(y.on(p), load<16, 64>(x, m, n), cast<i32>(row_index<16, 1>(m)) + rank() * x.rows(), n);
}

// K05: hand reduce-scatter: rank r adds its block p into peer p's y.
PK_KERNEL void k05_hand_reduce_scatter(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(y, zeros<f32, 16, 64>(), m, n);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    for (auto p : range(0, world_size()))
      store_add(y.on(p), load<16, 64>(x, p * y.rows() + m, n), m, n);
}

// K06: pull from prev rank, then an all-reduce of the result.
PK_KERNEL void k06_pull_then_allreduce(Sym<f32, 2> x, Sym<f32, 2> t, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 32}))
    store(t, load<32, 32>(x.on(prev_rank()), m, n) - load<32, 32>(x, m, n), m, n);
  all_reduce(Sum, t, y);
}

// K07: collective along dim 1 of a 3-D tensor then a tile loop on the result.
PK_KERNEL void k07_ag_dim1_3d(Sym<bf16, 3> x, Sym<bf16, 3> y, Tensor<bf16, 3> out) {
  all_gather(x, y, 1);
  for (auto [h, m] : tiles(y.dim(0), y.dim(1), {1, 16}))
    store(out, load<16, 64>(y, h, m, 0) * 2.0f, h, m, 0);
}

// K08: reduce_scatter along dim 2 of a 3-D tensor.
PK_KERNEL void k08_rs_dim2(Sym<f32, 3> x, Sym<f32, 3> y) { reduce_scatter(Sum, x, y, 2); }

// K09: all_to_all 1 <-> 2 on a 4-D tensor.
PK_KERNEL void k09_a2a_4d(Sym<bf16, 4> x, Sym<bf16, 4> y) { all_to_all(x, y, 1, 2); }

// K10: broadcast from a root argument then a ring shift of the broadcast value.
PK_KERNEL void k10_bcast_then_ring(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z, index root) {
  broadcast(x, y, root);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128}))
    store(z.on(next_rank()), load<16, 128>(y, m, n), m, n);
}

// K11: ring all-gather by hand across a range loop (W-1 steps) with a pull per step.
PK_KERNEL void k11_ring_pull_steps(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    for (auto s : range(0, world_size()))
      store(y, load<16, 64>(x.on((rank() + s) % world_size()), m, n), ((rank() + s) % world_size()) * x.rows() + m, n);
}

// K12: store_add into peer p = rank-dependent owner with an offset in rows.
PK_KERNEL void k12_add_owner_offset(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store_add(y.on((rank() + 1) % world_size()), load<16, 64>(x, m, n), rank() * 16 + m, n);
}

// K13: in-place ring shift of one Sym: rank r reads y[r] and writes y on r+1, while r+1 reads
// its own y to send on. Cross-rank read/write race: must be refused or double-buffered.
PK_KERNEL void k13_inplace_ring(Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(y.on(next_rank()), load<16, 64>(y, m, n), m, n);
}

// K14: pull from the previous rank's y and overwrite own y at the same tile.
PK_KERNEL void k14_pull_overwrite(Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(y, load<16, 64>(y.on(prev_rank()), m, n) + 1.0f, m, n);
}

// K15: a ring pass by hand inside a tile loop: at step s, push the block received at s - 1.
PK_KERNEL void k15_ring_steps_push(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    store(y, load<16, 64>(x, m, n), rank() * x.rows() + m, n);
    for (auto s : range(0, world_size() - 1)) {
      auto b = (rank() + world_size() - s) % world_size();
      store(y.on(next_rank()), load<16, 64>(y, b * x.rows() + m, n), b * x.rows() + m, n);
    }
  }
}

// K16: pull the next rank's x, then overwrite own x (WAR across ranks).
PK_KERNEL void k16_pull_then_overwrite(Sym<f32, 2> x, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(out, load<16, 64>(x.on(next_rank()), m, n), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(x, zeros<f32, 16, 64>(), m, n);
}

// K17: store_add into the owner, then all_reduce of the owner's accumulator.
PK_KERNEL void k17_add_then_allreduce(Sym<f32, 2> x, Sym<f32, 2> acc, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store_add(acc.on(0), load<16, 64>(x, m, n), m, n);
  all_reduce(Sum, acc, y);
}

// K18: ranks store 16-row tiles into rank 0 at rank()*8 + m: overlapping between ranks.
PK_KERNEL void k18_overlap_into_root(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(0), load<16, 64>(x, m, n), rank() * 8 + m, n);
}

// K19: mirror peer (W-1-r) both directions: store into mirror's y, read own y afterwards.
PK_KERNEL void k19_mirror(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(world_size() - 1 - rank()), load<16, 64>(x, m, n), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(out, load<16, 64>(y, m, n) - load<16, 64>(x, m, n), m, n);
}

// K20: host loop of launches: each trip shifts x around the ring via y and copies back.
PK_KERNEL void k20_host_loop_ring(Sym<f32, 2> x, Sym<f32, 2> y, index steps) {
  for (auto s : range(0, steps, 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(y.on(next_rank()), load<16, 64>(x, m, n), m, n);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(x, load<16, 64>(y, m, n), m, n);
  }
}

// K21: two independent collectives, then a tile loop reading both outputs.
PK_KERNEL void k21_two_colls_then_loop(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z, Sym<f32, 2> w, Tensor<f32, 2> out) {
  all_gather(x, y);
  all_reduce(Sum, z, w);
  for (auto [m, n] : tiles(w.rows(), w.cols(), {16, 64}))
    store(out, load<16, 64>(y, m, n) + load<16, 64>(w, m, n), m, n);
}

// K22: an independent collective beside a tile loop that pushes into peers.
PK_KERNEL void k22_coll_beside_push(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> a, Sym<f32, 2> b) {
  all_gather(x, y);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64}))
    store(b.on(next_rank()), load<16, 64>(a, m, n), m, n);
}

// K23: an independent collective beside a tile loop that pulls from peers.
PK_KERNEL void k23_coll_beside_pull(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> a, Tensor<f32, 2> b) {
  reduce_scatter(Sum, x, y, 1);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64}))
    store(b, load<16, 64>(a.on(prev_rank()), m, n), m, n);
}

// K24: independent collective beside a local loop, then a peer push of the loop's result.
PK_KERNEL void k24_three_phase(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> a, Sym<f32, 2> t, Sym<f32, 2> u) {
  all_reduce(Max, x, y);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64}))
    store(t, load<16, 64>(a, m, n) * 3.0f, m, n);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64}))
    store_add(u.on(0), load<16, 64>(t, m, n), m, n);
}

// K25: in-place all_to_all within dim 1 of a 3-D tensor, then pull a peer's result.
PK_KERNEL void k25_a2a_inplace_then_pull(Sym<f32, 3> x, Tensor<f32, 3> out) {
  all_to_all(x, x, 1, 1);
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 8}))
    store(out, load<8, 32>(x.on(next_rank()), h, m, 0), h, m, 0);
}

// K26: load_rows from a peer's table with ids computed per rank, then scatter into owner.
PK_KERNEL void k26_rows_peer(Sym<f32, 2> table, Tensor<i32, 1> ids, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(ids.size(), table.cols(), {16, 64})) {
    auto id = load<16>(ids, m);
    auto owner = id / table.rows();
    auto r = load_rows<16, 64>(table.on(next_rank()), id % table.rows(), n);
    store_rows(y.on(prev_rank()), r, id, n);
  }
}

// K27: named peer once, used in two phases (store then pull back).
PK_KERNEL void k27_named_peer(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  auto ny = y.on(next_rank());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(ny, load<16, 64>(x, m, n), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(out, load<16, 64>(ny, m, n), m, n);
}

// K28: broadcast with the root from an argument, in place, then all_gather dim 1.
PK_KERNEL void k28_bcast_inplace_ag(Sym<bf16, 2> x, Sym<bf16, 2> y, index root) {
  broadcast(x, x, root);
  all_gather(x, y, 1);
}

// K29: pull the next rank's x and overwrite own x in the same loop (cross-rank WAR race).
PK_KERNEL void k29_pull_and_write_same_loop(Sym<f32, 2> x, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    store(out, load<16, 64>(x.on(next_rank()), m, n), m, n);
    store(x, zeros<f32, 16, 64>(), m, n);
  }
}

// K30: hand all-gather of column blocks into rank 0 at rank() * x.cols() + n: with x.cols()
// not a multiple of 64 a rank's clipped tile (zero columns) lands on the next rank's block.
PK_KERNEL void k30_col_blocks_into_root(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(0), load<16, 64>(x, m, n), m, rank() * x.cols() + n);
}

// K31: the same with store_rows (index tile from row_index): padding columns are written.
PK_KERNEL void k31_col_blocks_rows(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    for (auto p : range(0, world_size()))
      store_rows(y.on(p), load<16, 64>(x, m, n), cast<i32>(row_index<16, 1>(m)), rank() * x.cols() + n);
}

// K32: all ranks push into every peer at column offset rank()*x.cols(), into a 1-column-wider
// tensor from a local tensor (rows too).
PK_KERNEL void k32_col_blocks_all(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    for (auto p : range(0, world_size()))
      store(y.on(p), load<16, 64>(x, m, n), m, rank() * x.cols() + n);
}

// K33: packed K|V rows scattered by row_index: K's clipped last column tile writes zero
// padding columns over V's first columns (one rank, no peers).
PK_KERNEL void k33_packed_kv_iota(Tensor<f32, 2> k, Tensor<f32, 2> v, Tensor<f32, 2> kv) {
  for (auto [m, n] : tiles(k.rows(), k.cols(), {16, 64})) {
    auto rows = cast<i32>(row_index<16, 1>(m));
    store_rows(kv, load<16, 64>(k, m, n), rows, n);
    store_rows(kv, load<16, 64>(v, m, n), rows, k.cols() + n);
  }
}

// K34: the same with the row indices read from a tensor (the documented refused case).
PK_KERNEL void k34_packed_kv_ids(Tensor<f32, 2> k, Tensor<f32, 2> v, Tensor<i32, 1> slot, Tensor<f32, 2> kv) {
  for (auto [m, n] : tiles(k.rows(), k.cols(), {16, 64})) {
    auto rows = load<16>(slot, m);
    store_rows(kv, load<16, 64>(k, m, n), rows, n);
    store_rows(kv, load<16, 64>(v, m, n), rows, k.cols() + n);
  }
}

// K35: ranks scatter rows from a slot tensor into the root at column block rank()*x.cols().
PK_KERNEL void k35_col_blocks_ids_peer(Sym<f32, 2> x, Tensor<i32, 1> slot, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store_rows(y.on(0), load<16, 64>(x, m, n), load<16>(slot, m), rank() * x.cols() + n);
}

// K36: in-place all_gather along dim 1 of a 3-D tensor (chunk r of dim 1 is rank r's input).
PK_KERNEL void k36_ag_inplace_dim1(Sym<f32, 3> x) { all_gather(x, x, 1); }

// K37: in-place reduce_scatter along dim 2 of a 3-D tensor (chunk r of dim 2 is rank r's output).
PK_KERNEL void k37_rs_inplace_dim2(Sym<f32, 3> x) { reduce_scatter(Sum, x, x, 2); }

// K38: reduce_scatter along dim 1 into a local Tensor, then a peer push of the result.
PK_KERNEL void k38_rs_local_then_push(Sym<f32, 2> x, Tensor<f32, 2> y, Sym<f32, 2> z) {
  reduce_scatter(Max, x, y, 1);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(z.on(prev_rank()), load<16, 64>(y, m, n), m, n);
}

// K39: scatter in place from a root, i64.
PK_KERNEL void k39_scatter_inplace_i64(Sym<i64, 2> x, index root) { scatter(x, x, root); }

// K40: gather of 3-D blocks to the root into a local tensor.
PK_KERNEL void k40_gather_local(Sym<bf16, 3> x, Tensor<bf16, 3> y, index root) { gather(x, y, root); }

// K41: tiles wider than their step scattered into the next rank by row_index rows: the
// 64-wide tile at n overlaps the tile at n + 32 (another block), both writing the same rows.
PK_KERNEL void k41_wide_tile_rows(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
    { auto t = load<16, 64>(x, m, n); store_rows(y.on(next_rank()), t - row_max(t), cast<i32>(row_index<16, 1>(m)), n); }
}

// K42: the same with a plain store (expected: refused).
PK_KERNEL void k42_wide_tile_store(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
    store(y.on(next_rank()), load<16, 64>(x, m, n) * 2.0f, m, n);
}

// K43: host loop whose trip chooses the peer: step s sends x to rank r + s + 1 at block s.
PK_KERNEL void k43_host_loop_peer_by_step(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> out) {
  for (auto s : range(0, world_size(), 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(y.on((rank() + s) % world_size()), load<16, 64>(x, m, n), m, n);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(out, load<16, 64>(y, m, n), s * x.rows() + m, n);
  }
}

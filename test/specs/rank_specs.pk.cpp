// Multi-rank kernels a tensor / sequence parallel user writes: collectives on 2-D and 3-D
// tensors along dimensions, in-place collectives between tile loops, chains of dependent
// phases, ring shifts and pulls, adds into an owner, rooted collectives with a run-time root,
// tails everywhere (sizes not multiples of the tiles), f32 / bf16 / i32 and Max / Min over
// negative values. test/gpu/rank_specs_test.cu runs each at W = 1-4 ranks sharing one GPU
// against float64 references; test/Compile/rank_specs.test compiles them to a cubin.
#include <pk/spec.h>
using namespace pk;

// 1. Tensor-parallel RMSNorm of column shards whose width is not a multiple of the 128-column
//    tile: squared sums over a range loop of column tiles, their all-reduce, then the scale.
PK_KERNEL void tp_rms_norm_tail(Tensor<f32, 2> x, Tensor<f32, 2> w, Sym<f32, 2> ss, Sym<f32, 2> total,
                                Tensor<f32, 2> y, float inv_n, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto acc = zeros<f32, 8, 1>();
    for (auto k : range(0, x.cols(), 128)) {
      auto t = load<8, 128>(x, m, k);
      acc = acc + row_sum(t * t);
    }
    store(ss, acc, m, 0);
  }
  all_reduce(Sum, ss, total);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 128}))
    store(y, load<8, 128>(x, m, n) * rsqrt(load<8, 1>(total, m, 0) * inv_n + eps) * load<1, 128>(w, 0, n), m, n);
}

// 2. Reduce-scatter of rows, a tile loop on this rank's block, then the all-gather of it:
//    y = 2 (sum over ranks of x) + 1 on every rank.
PK_KERNEL void rs_tile_ag(Sym<f32, 2> x, Sym<f32, 2> s, Sym<f32, 2> s2, Sym<f32, 2> y) {
  reduce_scatter(Sum, x, s);
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 64}))
    store(s2, load<16, 64>(s, m, n) * 2.0f + 1.0f, m, n);
  all_gather(s2, y);
}

// 3. A tile loop produces a bf16 tensor that is all-reduced in place, then read by a second loop.
PK_KERNEL void silu_ar_in_place(Tensor<bf16, 2> x, Sym<bf16, 2> h, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64}))
    store(h, cast<bf16>(silu(cast<f32>(load<32, 64>(x, m, n)))), m, n);
  all_reduce(Sum, h, h);
  for (auto [m, n] : tiles(h.rows(), h.cols(), {32, 64}))
    store(y, cast<f32>(load<32, 64>(h, m, n)) * 0.5f, m, n);
}

// 4. All-gather of 3-D bf16 shards along the last dimension.
PK_KERNEL void ag_last_dim_3d(Sym<bf16, 3> x, Sym<bf16, 3> y) { all_gather(x, y, 2); }

// 5. Reduce-scatter (Max) of a 3-D f32 tensor along its middle dimension.
PK_KERNEL void rs_max_mid_3d(Sym<f32, 3> x, Sym<f32, 3> y) { reduce_scatter(Max, x, y, 1); }

// 6. All-reduce (Min) of a 3-D i32 tensor.
PK_KERNEL void ar_min_3d_i32(Sym<i32, 3> x, Sym<i32, 3> y) { all_reduce(Min, x, y); }

// 7. Reduce-scatter (Min) of i32 column blocks into a local tensor.
PK_KERNEL void rs_min_cols_i32(Sym<i32, 2> x, Tensor<i32, 2> y) { reduce_scatter(Min, x, y, 1); }

// 8. A 3-D tile pulled from the previous rank: y = 1 - x of rank r - 1, tails in all dimensions.
PK_KERNEL void pull_prev_3d(Sym<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [h, m, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 16, 32}))
    store(y, 1.0f - load<2, 16, 32>(x.on(prev_rank()), h, m, d), h, m, d);
}

// 9. An i32 ring shift: y on rank r + 1 takes 3 x + r of rank r.
PK_KERNEL void ring_shift_i32(Sym<i32, 2> x, Sym<i32, 2> y) {
  auto ny = y.on(next_rank());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(ny, load<16, 64>(x, m, n) * 3 + rank(), m, n);
}

// 10. A shift by two ranks (odd worlds keep it off the previous rank).
PK_KERNEL void shift_by_two(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {512}))
    store(y.on((rank() + 2) % world_size()), load<512>(x, i), i);
}

// 11. Squares added into the owner `root` (run time), then broadcast from it.
PK_KERNEL void add_owner_then_bcast(Sym<f32, 2> x, Sym<f32, 2> acc, Sym<f32, 2> y, index root) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = load<16, 128>(x, m, n);
    store_add(acc.on(root), t * t, m, n);
  }
  broadcast(acc, y, root);
}

// 12. Reduce (Max) onto a run-time root, 2-D f32 with negative values.
PK_KERNEL void reduce_max_root(Sym<f32, 2> x, Sym<f32, 2> y, index root) { reduce(Max, x, y, root); }

// 13. Gather of 2-D bf16 rows onto a run-time root.
PK_KERNEL void gather_root_2d(Sym<bf16, 2> x, Sym<bf16, 2> y, index root) { gather(x, y, root); }

// 14. Scatter from the root, a tile loop on each rank's chunk, then a gather back to the root.
PK_KERNEL void scatter_tile_gather(Sym<f32, 1> x, Sym<f32, 1> s, Sym<f32, 1> s2, Sym<f32, 1> y, index root) {
  scatter(x, s, root);
  for (auto i : tiles(s.size(), {256})) {
    auto t = load<256>(s, i);
    store(s2, t * t - 1.0f, i);
  }
  gather(s2, y, root);
}

// 15. Broadcast, then pull the next rank's copy: y = (r + 1) b.
PK_KERNEL void bcast_then_pull(Sym<f32, 2> x, Sym<f32, 2> b, Tensor<f32, 2> y, index root) {
  broadcast(x, b, root);
  for (auto [m, n] : tiles(b.rows(), b.cols(), {16, 64}))
    store(y, load<16, 64>(b.on(next_rank()), m, n) * float(rank() + 1), m, n);
}

// 16. A tile loop, an all-reduce (Max) of its output, then a pull of the previous rank's copy
//     added to the local input.
PK_KERNEL void tile_armax_pull(Sym<f32, 2> x, Sym<f32, 2> h, Sym<f32, 2> g, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(h, load<16, 64>(x, m, n) * -2.0f, m, n);
  all_reduce(Max, h, g);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(g.on(prev_rank()), m, n) + load<16, 64>(x, m, n), m, n);
}

// 17. Sequence parallel: all-gather the rows, then an RMS norm per row of 96 columns (a partial
//     128-column tile).
PK_KERNEL void ag_then_row_norm(Sym<f32, 2> x, Sym<f32, 2> g, Tensor<f32, 2> y, float eps) {
  all_gather(x, g);
  for (auto m : tiles(g.rows(), {16})) {
    auto t = load<16, 128>(g, m, 0);
    store(y, t * rsqrt(row_sum(t * t) * (1.0f / 96.0f) + eps), m, 0);
  }
}

// 18. In-place reduce-scatter, then a loop over this rank's chunk (its rows at rank() * rows / W).
PK_KERNEL void rs_in_place_then_chunk(Sym<f32, 2> x, Tensor<f32, 2> y) {
  reduce_scatter(Sum, x, x);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(y, load<16, 64>(x, rank() * (x.rows() / world_size()) + m, n) + 3.0f, m, n);
}

// 19. A tile loop writes this rank's column block of x, the in-place all-gather along the
//     columns fills the others, then row sums of the whole rows.
PK_KERNEL void fill_ag_cols_rowsum(Tensor<f32, 2> a, Sym<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 32}))
    store(x, load<16, 32>(a, m, n) * 2.0f, m, rank() * a.cols() + n);
  all_gather(x, x, 1);
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), 64)) acc = acc + row_sum(load<16, 64>(x, m, k));
    store(y, acc, m, 0);
  }
}

// 20. Vocab-parallel softmax of [R, V/W] shards (V/W not a multiple of 128): masked row maxima,
//     all-reduce Max, sums of exponentials, all-reduce Sum, then the probabilities.
PK_KERNEL void vocab_softmax(Tensor<f32, 2> x, Sym<f32, 2> lm, Sym<f32, 2> gm, Sym<f32, 2> ls,
                             Sym<f32, 2> gs, Tensor<f32, 2> p) {
  for (auto m : tiles(x.rows(), {8})) {
    auto mx = zeros<f32, 8, 1>() - 1e30f;
    for (auto k : range(0, x.cols(), 128))
      mx = max(mx, row_max(where(col_index<8, 128>(k) < x.cols(), load<8, 128>(x, m, k), -1e30f)));
    store(lm, mx, m, 0);
  }
  all_reduce(Max, lm, gm);
  for (auto m : tiles(x.rows(), {8})) {
    auto s = zeros<f32, 8, 1>();
    auto g = load<8, 1>(gm, m, 0);
    for (auto k : range(0, x.cols(), 128))
      s = s + row_sum(where(col_index<8, 128>(k) < x.cols(), exp(load<8, 128>(x, m, k) - g), 0.0f));
    store(ls, s, m, 0);
  }
  all_reduce(Sum, ls, gs);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 128}))
    store(p, exp(load<8, 128>(x, m, n) - load<8, 1>(gm, m, 0)) / load<8, 1>(gs, m, 0), m, n);
}

// 21. A hand-written all-reduce by adds into every rank, then a local loop reading the sums.
PK_KERNEL void add_all_then_scale(Sym<f32, 2> x, Sym<f32, 2> acc, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    for (auto p : range(0, world_size())) store_add(acc.on(p), t, m, n);
  }
  for (auto [m, n] : tiles(acc.rows(), acc.cols(), {16, 64}))
    store(y, load<16, 64>(acc, m, n) * 0.5f, m, n);
}

// 22. bf16 all-reduce (Min) of 2-D values with negatives, then an all-reduce (Max) in place.
PK_KERNEL void ar_min_then_max_in_place(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  all_reduce(Min, x, y);
  all_reduce(Max, x, x);
}

// 23. An all-to-all from rows to columns of 3-D tensors, a 3-D tile loop on the result, and the
//     all-to-all back (pkc once spent minutes verifying this protocol).
PK_KERNEL void a2a_tile_a2a(Sym<bf16, 3> x, Sym<bf16, 3> h, Sym<bf16, 3> h2, Sym<bf16, 3> y) {
  all_to_all(x, h, 0, 1);
  for (auto [a, m, d] : tiles(h.dim(0), h.dim(1), h.dim(2), {1, 16, 64}))
    store(h2, cast<bf16>(cast<f32>(load<1, 16, 64>(h, a, m, d)) * 2.0f - 1.0f), a, m, d);
  all_to_all(h2, y, 1, 0);
}

// Set 23 (user specs, training steps), kernels pkc must refuse: each comment says why and gives the error's key
// words. Kernels whose error is a Clang error sit behind #ifdef PK_CXX_<ID> (one Clang error fails the whole
// file). Findings in test/specs/specs23_findings.md.
#include <pk/spec.h>
using namespace pk;

// B1: SwiGLU backward into the packed [T, 2F] gradient, dgate at column n and dup at F + n: when F is not a
// multiple of 128 the last dgate tile's padding columns land on dup's first columns (a store clips only at the
// tensor's end). Key words: "race for world size 1", "reaches into", "[R, W, C]". (The correct form is the [T, 2, F]
// view of user_specs23.pk.cpp's swiglu_bwd_packed.)
PK_KERNEL void b1_swiglu_bwd_packed_2d(Tensor<bf16, 2> hp, Tensor<bf16, 2> dy, Tensor<bf16, 2> dhp) {
  index f = dy.cols();
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {16, 128})) {
    auto gt = cast<f32>(load<16, 128>(hp, t, n));
    auto ut = cast<f32>(load<16, 128>(hp, t, f + n));
    auto d = cast<f32>(load<16, 128>(dy, t, n));
    auto s = sigmoid(gt);
    store(dhp, cast<bf16>(d * ut * s * (1.0f + gt * (1.0f - s))), t, n);
    store(dhp, cast<bf16>(d * gt * s), t, f + n);
  }
}

// B2: a per-tile gradient norm all-reduced inside the tile loop. Key words: "collective", "tile loop".
PK_KERNEL void b2_allreduce_in_tile_loop(Tensor<f32, 1> g, Sym<f32, 2> ss) {
  for (auto i : tiles(g.size(), {1024})) {
    auto t = load<1, 1024>(g, i);
    store(ss, row_sum(t * t), 0, 0);
    all_reduce(Sum, ss, ss);
  }
}

// B3: an in-place update that reads the next tile (a look-ahead gradient smoothing g[i] = (g[i] + g[i + 1024]) / 2
// written in place). Key words: "reads a tensor at other tiles than it writes".
PK_KERNEL void b3_inplace_reads_next_tile(Tensor<f32, 1> g) {
  for (auto i : tiles(g.size(), {1024})) store(g, (load<1024>(g, i) + load<1024>(g, i + 1024)) * 0.5f, i);
}

// B4: the per-tile sum of squares stored (not added) at [0, 0] from every tile of a fixed-size gradient: every tile
// writes the same element. Key words: "every tile", "store_add".
PK_KERNEL void b4_norm_store_every_tile(Tensor<f32, 1> g, Tensor<f32, 2> ss) {
  for (auto i : tiles(8192, {1024})) {
    auto t = load<1, 1024>(g, i);
    store(ss, row_sum(t * t), 0, 0);
  }
}

// B5: the bf16 model copy stored into the f32 master weights (the cast forgotten). Key words: "tile element type
// 'bf16' does not match tensor element type 'f32'", "cast<f32>".
PK_KERNEL void b5_store_bf16_into_master(Tensor<bf16, 1> h, Tensor<f32, 1> master) {
  for (auto i : tiles(h.size(), {1024})) store(master, load<1024>(h, i), i);
}

// B6: ZeRO reduce-scatter of a gradient held in a local Tensor (peers cannot read it). Key words: "a collective's
// input must be symmetric".
#ifdef PK_CXX_B6
PK_KERNEL void b6_reduce_scatter_local_input(Tensor<f32, 1> grad, Sym<f32, 1> gsh) { reduce_scatter(Sum, grad, gsh); }
#endif

// B7: weight gradient from f32 activations (no cast to bf16 before the mma). Key words: "mma", "bf16".
PK_KERNEL void b7_mma_f32_operands(Tensor<f32, 2> dy, Tensor<f32, 2> x, Tensor<f32, 2> dw) {
  for (auto [m, n] : tiles(dy.cols(), x.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, dy.rows(), 32)) acc = mma(transpose(load<32, 64>(dy, k, m)), load<32, 64>(x, k, n), acc);
    store(dw, acc, m, n);
  }
}

// B8: gradient accumulation as a host loop whose trip count is the rank (ranks accumulate different numbers of
// micro-batches, each all-reduced): the bound must be the same on every rank. Key words: "host loop", "rank".
PK_KERNEL void b8_host_loop_bounded_by_rank(Sym<f32, 1> g, Tensor<f32, 1> acc) {
  for (auto s : range(0, rank() + 1, 1)) {
    all_reduce(Sum, g, g);
    for (auto i : tiles(g.size(), {1024})) store(acc, load<1024>(acc, i) + load<1024>(g, i), i);
  }
}

// B9: the bias gradient added into a 1-D [H] tensor. Key words: "1-D", "[1, N]".
PK_KERNEL void b9_store_add_1d_dbias(Tensor<f32, 2> dy, Tensor<f32, 1> db) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {32, 256}))
    store_add(db, transpose(row_sum(transpose(load<32, 256>(dy, m, n)))), n);
}

// B10: per-head gradient accumulation by store_add into a 3-D [H, S, D] tensor. Key words: "2-D".
PK_KERNEL void b10_store_add_3d(Tensor<f32, 3> g, Tensor<f32, 3> acc) {
  for (auto [h, s] : tiles(g.dim(0), g.dim(1), {1, 16})) store_add(acc, load<1, 16, 64>(g, h, s, 0), h, s, 0);
}

// B11: a hand-written ZeRO all-gather, each rank storing its updated shard into every peer at rank() * n + i with
// 1024-element tiles: a partial last tile reaches into the next rank's block. Key words: "race", "padding",
// "store_rows" (the advice).
PK_KERNEL void b11_allgather_by_stores_overlap(Tensor<bf16, 1> shard, Sym<bf16, 1> full) {
  for (auto [p, i] : tiles(world_size(), shard.size(), {1, 1024}))
    store(full.on(p), load<1024>(shard, i), rank() * shard.size() + i);
}

// B12: the all-reduced norm read as a scalar from its Sym. Key words: "a symmetric tensor has no .at()".
#ifdef PK_CXX_B12
PK_KERNEL void b12_sym_at_norm(Tensor<f32, 1> g, Sym<f32, 1> ss, float max_norm) {
  all_reduce(Sum, ss, ss);
  float coef = min(max_norm / sqrt(ss.at(0)), 1.0f);
  for (auto i : tiles(g.size(), {1024})) store(g, load<1024>(g, i) * coef, i);
}
#endif

// B13: the mask of a first-step flag combined with a tile by C++ && (index first). Key words: "a mask combines
// with tiles, not with a C++ bool".
#ifdef PK_CXX_B13
PK_KERNEL void b13_mask_with_cxx_bool(Tensor<f32, 1> buf, Tensor<f32, 1> g, index first) {
  for (auto i : tiles(g.size(), {1024})) {
    auto gt = load<1024>(g, i);
    store(buf, where((gt != 0.0f) && (first != 0), gt, load<1024>(buf, i)), i);
  }
}
#endif

// B14: the dropout mask seeded by a float argument (would truncate). Key words: "expected an index", "seeds are
// integers".
PK_KERNEL void b14_float_seed(Tensor<bf16, 2> x, Tensor<bf16, 2> y, float seed, float p) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, cast<bf16>(where(uniform<16, 128>(seed, t, n) >= p, cast<f32>(load<16, 128>(x, t, n)), 0.0f)), t, n);
}

// B15: the dropout mask with one origin for a 2-D tile. Key words: "one origin per dimension", "got 1".
PK_KERNEL void b15_uniform_missing_origin(Tensor<bf16, 2> dy, Tensor<bf16, 2> dx, index seed, float p) {
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {16, 128}))
    store(dx, cast<bf16>(where(uniform<16, 128>(seed, t) >= p, cast<f32>(load<16, 128>(dy, t, n)), 0.0f)), t, n);
}

// B16: clipping that reads the sum of squares back in the loop that adds it (the sum is not complete until every
// tile has added). Key words: "reads a tensor at other tiles than it writes".
PK_KERNEL void b16_read_norm_while_adding(Tensor<f32, 1> g, Tensor<f32, 1> out, Tensor<f32, 2> ss) {
  for (auto i : tiles(g.size(), {1024})) {
    auto t = load<1, 1024>(g, i);
    store_add(ss, row_sum(t * t), 0, 0);
    store(out, t * rsqrt(load<1, 1>(ss, 0, 0)), i);
  }
}

// B17: an all-reduce of a gradient held in a local Tensor. Key words: "a collective's input must be symmetric".
#ifdef PK_CXX_B17
PK_KERNEL void b17_allreduce_local(Tensor<f32, 1> g, Tensor<f32, 1> out) { all_reduce(Sum, g, out); }
#endif

// B18: Adam's bf16 gradient times an f32 moment without a cast. Key words: "different element types".
#ifdef PK_CXX_B18
PK_KERNEL void b18_bf16_times_f32(Tensor<bf16, 1> g, Tensor<f32, 1> m, float b1) {
  for (auto i : tiles(g.size(), {1024})) store(m, b1 * load<1024>(m, i) + (1.0f - b1) * load<1024>(g, i), i);
}
#endif

// B19: a range loop over micro-batches with step 0. Key words: "step".
PK_KERNEL void b19_range_step_zero(Tensor<f32, 2> g, Tensor<f32, 2> acc) {
  for (auto [r, c] : tiles(acc.rows(), acc.cols(), {16, 256})) {
    auto a = load<16, 256>(acc, r, c);
    for (auto s : range(0, g.rows() / acc.rows(), 0)) a = a + load<16, 256>(g, s * acc.rows() + r, c);
    store(acc, a, r, c);
  }
}

// F1 (finding 1: compiles, computes what the user did not mean): a DDP bucket packed with unpadded offsets, the
// second gradient packed before the first. g0's last 1024-element tile is partial, and its padding zeros are
// stored at bucket[N0 .. ceil(N0 / 1024) * 1024), over g1's first elements that the previous loop stored there; the
// two loops are ordered by a grid-wide barrier, so this is no race, and nothing warns. After the all-reduce, g1's
// first (1024 - N0 % 1024) % 1024 elements are 0. The same two stores in one loop are refused as a race
// (p_bucket_unpadded_one_loop in the findings); in the other order (g0 first) the result is right.
PK_KERNEL void f1_bucket_padding_clobbers_earlier_phase(Tensor<f32, 1> g0, Tensor<f32, 1> g1, Sym<f32, 1> bucket) {
  index o1 = g0.size();
  for (auto i : tiles(g1.size(), {1024})) store(bucket, load<1024>(g1, i), o1 + i);
  for (auto i : tiles(g0.size(), {1024})) store(bucket, load<1024>(g0, i), i);
  all_reduce(Sum, bucket, bucket);
  for (auto i : tiles(g0.size(), {1024})) store(g0, load<1024>(bucket, i), i);
  for (auto i : tiles(g1.size(), {1024})) store(g1, load<1024>(bucket, o1 + i), i);
}

// Set 26 (user specs: recommendation models, graph neural networks, quantised inference), kernels pkc must refuse:
// each comment says why and gives the error's key words. Kernels whose error is a Clang error sit behind
// #ifdef PK_CXX_B<n> (one Clang error fails the whole file). Findings in test/specs/specs26_findings.md.
#include <pk/spec.h>
using namespace pk;

// B1: the all-to-all of pooled embeddings written inside the pooling loop (a collective moves whole tensors once per
// launch; it goes after the loop). Key words: "collective", "tile loop".
PK_KERNEL void b1_all_to_all_in_tile_loop(Tensor<bf16, 2> table, Tensor<i32, 1> ids, Sym<bf16, 2> pooled,
                                          Sym<bf16, 2> out) {
  for (auto [t, n] : tiles(pooled.rows(), pooled.cols(), {16, 128})) {
    store(pooled, load_rows<16, 128>(table, load<16>(ids, t), n), t, n);
    all_to_all(pooled, out);
  }
}

// B2: node degrees summed with row_sum of an integer tile (row reductions take float tiles). A Clang static
// assertion. Key words: "row_sum / row_max / row_min reduce float tiles", "cast<f32>(t)".
#ifdef PK_CXX_B2
PK_KERNEL void b2_row_sum_of_int_degrees(Tensor<i32, 2> adj, Tensor<i32, 2> deg) {
  for (auto v : tiles(adj.rows(), {16})) store(deg, row_sum(load<16, 256>(adj, v, 0)), v, 0);
}
#endif

// B3: an embedding lookup whose ids come from a float tile (bucket ids computed in f32 and not cast). A Clang static
// assertion. Key words: "rows move by an integer index tile", "cast it first".
#ifdef PK_CXX_B3
PK_KERNEL void b3_lookup_by_float_ids(Tensor<f32, 2> x, Tensor<bf16, 2> table, Tensor<bf16, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 128}))
    store(out, load_rows<16, 128>(table, load<16, 1>(x, t, 0) * 100.0f, n), t, n);
}
#endif

// B4: EdgeConv messages into the flat [E, 2 D] tensor, the second half at column D + n: when D is not a multiple of
// the 128-column tile, the first half's last tile reaches into the second half's first columns (a store clips only
// at the tensor's end). Key words: "race for world size 1", "reaches into", "start the column blocks a whole
// number of tiles apart". (user_specs26.pk.cpp's edgeconv_messages stores into the [E, 2, D] view.)
PK_KERNEL void b4_edgeconv_flat_concat(Tensor<bf16, 2> x, Tensor<i32, 1> src, Tensor<i32, 1> dst, Tensor<bf16, 2> msg) {
  index d = x.cols();
  for (auto [e, n] : tiles(src.size(), x.cols(), {32, 128})) {
    auto xi = load_rows<32, 128>(x, load<32>(dst, e), n);
    store(msg, xi, e, n);
    store(msg, load_rows<32, 128>(x, load<32>(src, e), n) - xi, e, d + n);
  }
}

// B5: fp8 gradients reduced across ranks (fp8 tensors do not reduce: reduce in f32 or bf16). Key words: "fp8".
PK_KERNEL void b5_all_reduce_fp8(Sym<f8e4m3, 2> g, Sym<f8e4m3, 2> out) { all_reduce(Sum, g, out); }

// B6 (accepted since the thirty-seventh session: integer tiles take & | ^ << >>): int4 nibbles unpacked with a
// bit mask and a shift; it was a Clang error ("invalid operands to binary expression").
#ifdef PK_CXX_B6
PK_KERNEL void b6_int4_unpack_bitops(Tensor<i32, 2> qw, Tensor<i32, 2> q) {
  for (auto [k, n] : tiles(qw.rows(), qw.cols(), {16, 128})) store(q, (load<16, 128>(qw, k, n) >> 4) & 15, k, n);
}
#endif

// B7: int4 weights expanded from [N, K / 8] words to [N, K] by reshaping a [128, 8, 8] broadcast (reshape only adds
// or drops unit dimensions; gather the packed rows with load_rows instead). Key words: "reshape adds or drops
// dimensions of 1 only".
PK_KERNEL void b7_int4_expand_by_reshape(Tensor<i32, 2> qw, Tensor<i32, 2> q) {
  for (auto [n, kk] : tiles(qw.rows(), qw.cols(), {128, 8})) {
    auto words = reshape<128, 8, 1>(load<128, 8>(qw, n, kk));
    auto expanded = words + zeros<i32, 1, 1, 8>();
    store(q, reshape<128, 64>(expanded), n, kk * 8);
  }
}

// B8: a W8A16 GEMM multiplying the bf16 activations by the fp8 weights directly (mma takes bf16 / f16 pairs or fp8
// pairs: cast the weight tile to bf16 first). Key words: "mma", "element types".
PK_KERNEL void b8_mma_bf16_by_fp8(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<64, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// B9: an int8 quantisation stored without the cast to the tensor's type (the rounded f32 tile into the i32
// tensor). Key words: "the tile's type must be the tensor's", "cast".
PK_KERNEL void b9_quant_store_without_cast(Tensor<bf16, 2> x, Tensor<i32, 2> q, Tensor<f32, 2> s) {
  for (auto t : tiles(x.rows(), {4})) {
    auto v = cast<f32>(load<4, 1024>(x, t, 0));
    auto sc = max(row_max(abs(v)), 1e-8f) * (1.0f / 127.0f);
    store(q, v / sc, t, 0);
    store(s, sc, t, 0);
  }
}

// B10: a hashed bucket id computed on i32 ids with Knuth's 32-bit multiplier 2654435761 (a constant that does not
// fit a signed 32-bit tile: the product would wrap; make the ids i64 first). Key words: "does not fit the i32 tile",
// "cast<i64>(t)".
PK_KERNEL void b10_hash_i32_with_wide_constant(Tensor<i32, 1> ids, Tensor<bf16, 2> table, Tensor<bf16, 2> out) {
  index nb = table.rows();
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 128}))
    store(out, load_rows<32, 128>(table, (load<32>(ids, t) * 2654435761L) % nb, n), t, n);
}

// B11: an in-place rescale of jagged values whose tiles are taller than the loop's step (each 32-row tile is stored
// over rows that the next iteration, 16 rows on, also stores). Key words: "this store writes elements that the same
// store writes at another tile of the loop", "(0, 0) and (16, 0)".
PK_KERNEL void b11_jagged_rescale_in_place(Tensor<f32, 2> v) {
  for (auto [i, n] : tiles(v.rows(), v.cols(), {16, 128})) store(v, load<32, 128>(v, i, n) * 2.0f, i, n);
}

// B12: the owner of an embedding row chosen by an id read from memory in a kernel that talks to peers (the
// protocol checker cannot know the value on every rank). Key words: "an integer read", "peer".
PK_KERNEL void b12_peer_from_memory(Tensor<i32, 1> owner, Sym<bf16, 2> rows, Tensor<bf16, 2> x) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(rows.on(owner.at(0)), load<16, 128>(x, t, n), t, n);
}

// B13: every rank writes its local top-k candidates into rows 0 .. of rank 0's copy (the same rows from every
// rank: a race between ranks; offset by rank() * Q, or gather). Key words: "race for world size 2".
PK_KERNEL void b13_topk_candidates_same_rows_on_root(Tensor<f32, 2> lv, Sym<f32, 2> gv) {
  for (auto q : tiles(lv.rows(), {16})) store(gv.on(0), load<16, 8>(lv, q, 0), q, 0);
}

// B14: an all-gather of embedding shards along dimension 2 of a rank-2 tensor. Key words: "dimension 2 is out of
// range for a tensor of rank 2".
PK_KERNEL void b14_all_gather_dim_out_of_range(Sym<bf16, 2> x, Tensor<bf16, 2> y) { all_gather(x, y, 2); }

// B15: a scalar read of a symmetric tensor's element (an offset kept in a Sym). A Clang static assertion.
// Key words: "a symmetric tensor has no .at()".
#ifdef PK_CXX_B15
PK_KERNEL void b15_sym_at(Sym<i32, 1> offsets, Tensor<f32, 2> out) {
  for (auto b : tiles(out.rows(), {1})) store(out, zeros<f32, 1, 64>() + float(offsets.at(b)), b, 0);
}
#endif

// B16: a weighted embedding bag that multiplies the per-sample weights (f32) by the integer ids' mask without a
// cast (tiles of two element types). A Clang static assertion. Key words: "different element types".
#ifdef PK_CXX_B16
PK_KERNEL void b16_weights_times_int_mask(Tensor<f32, 1> w, Tensor<i32, 1> ids, Tensor<f32, 1> out) {
  for (auto j : tiles(w.size(), {256})) store(out, load<256>(w, j) * (load<256>(ids, j) >= 0), j);
}
#endif

// B17: top-16 of an 8-candidate row (K larger than the row). Key words: "row_topk", "K".
PK_KERNEL void b17_topk_k_larger_than_row(Tensor<f32, 2> s, Tensor<f32, 2> tv) {
  for (auto i : tiles(s.rows(), {16})) store(tv, row_topk<16>(load<16, 8>(s, i, 0)), i, 0);
}

// B18: a count-min sketch update with store_add into a 1-D counter tensor (adds into this rank's tensor take 2-D
// ones: declare [1, N] or use store_add_rows on [N, 1]). Key words: "1-D".
PK_KERNEL void b18_store_add_1d(Tensor<i32, 1> counts, Tensor<i32, 1> ids) {
  for (auto j : tiles(ids.size(), {1024})) store_add(counts, histogram<64>(load<1024>(ids, j)), 0);
}

// B19: a bag's ids masked with a [32, 1] position column against a [32] id tile (operands of different ranks: the
// broadcasting rule has no rank promotion; reshape one side). A Clang overload error whose cause is in a note.
// Key words: "no matching function for call to 'where'", "Broadcast<pk::Tile<pk::i32, 32, 1>, pk::Tile<pk::i32, 32>>".
#ifdef PK_CXX_B19
PK_KERNEL void b19_where_rank_mismatch(Tensor<bf16, 2> table, Tensor<i32, 1> ids, Tensor<f32, 2> out, index hi) {
  for (auto [j, n] : tiles(ids.size(), out.cols(), {32, 128})) {
    auto pos = cast<i32>(row_index<32, 1>(0)) + j;
    store(out, cast<f32>(load_rows<32, 128>(table, where(pos < hi, load<32>(ids, j), -1), n)), j, n);
  }
}
#endif

// B20: GNN "max" aggregation written as a scatter of plain rows into each destination (store_rows leaves an
// unspecified row where several edges meet; there is no atomic max of rows) followed, in the same loop, by a read
// of the aggregate. Key words: "reads a tensor at other tiles than it writes".
PK_KERNEL void b20_scatter_then_read_aggregate(Tensor<f32, 2> x, Tensor<i32, 1> src, Tensor<i32, 1> dst,
                                               Tensor<f32, 2> agg, Tensor<f32, 2> out) {
  for (auto [e, n] : tiles(src.size(), x.cols(), {64, 128})) {
    auto m = load_rows<64, 128>(x, load<64>(src, e), n);
    store_rows(agg, max(m, load_rows<64, 128>(agg, load<64>(dst, e), n)), load<64>(dst, e), n);
  }
}

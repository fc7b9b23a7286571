// Set 22 (user specs), kernels pkc must refuse, plus one that compiles to what the user did not mean (f1): each
// comment says why and gives the error's key words. Kernels whose error is a Clang error sit behind
// #ifdef PK_CXX_<ID> (one Clang error fails the whole file). Findings in test/specs/specs22_findings.md.
#include <pk/spec.h>
using namespace pk;

// B1: expert counts zeroed and their offsets computed by statements outside any tile loop: every block runs
// them, so every block writes the same elements. Key words: "race for world size 1", "block 1", "counts".
PK_KERNEL void b1_store_outside_tile_loop(Tensor<i32, 1> ids, Tensor<i32, 2> counts) {
  store(counts, zeros<i32, 1, 64>(), 0, 0);
  for (auto i : tiles(ids.size(), {1024})) store_add(counts, reshape<1, 64>(histogram<64>(load<1024>(ids, i))), 0, 0);
}

// B2: per-row sum of an integer tile (expert counts per token row). Key words: "reduce cast<f32>(t)".
#ifdef PK_CXX_B2
PK_KERNEL void b2_row_sum_int(Tensor<i32, 2> ids, Tensor<i32, 2> n) {
  for (auto t : tiles(ids.rows(), {16})) store(n, row_sum(load<16, 8>(ids, t, 0) >= 0), t, 0);
}
#endif

// B3: an all-reduce of fp8 partial sums. Key words: "fp8", "reduce".
PK_KERNEL void b3_allreduce_fp8(Sym<f8e4m3, 2> x, Sym<f8e4m3, 2> y) { all_reduce(Sum, x, y); }

// B4: an fp8 tile stored into a bf16 tensor without a cast (dequantised output forgot the scale and cast).
// Key words: "tile element type 'f8E4M3FN'", "cast<bf16>".
PK_KERNEL void b4_store_fp8_into_bf16(Tensor<f8e4m3, 2> q, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 128})) store(y, load<16, 128>(q, m, n), m, n);
}

// B5: a peer chosen by a value read from memory in a dispatch (the destination rank of each tile from a
// tensor). Key words: "integer read from memory to choose a peer".
PK_KERNEL void b5_peer_from_memory(Tensor<bf16, 2> x, Tensor<i32, 1> dest, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256}))
    store(y.on(dest.at(m / 32)), load<32, 256>(x, m, n), m, n);
}

// B6: expert offsets by a running sum across tiles, each tile reading the previous tile's offset: the tiles
// run in parallel. Key words: "reads a tensor at other tiles than it writes".
PK_KERNEL void b6_offsets_across_tiles(Tensor<i32, 1> counts, Tensor<i32, 1> off) {
  for (auto i : tiles(counts.size(), {256}))
    store(off, cumsum(load<256>(counts, i)) + load<1>(off, i - 1), i);
}

// B7: fp8 times bf16 in one mma (activations not quantised). Key words: "mma: a and b must both be bf16".
PK_KERNEL void b7_mma_fp8_bf16(Tensor<f8e4m3, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// B8: a top-8 of a 4-wide tile (the router's expert count smaller than k). Key words: "row_topk", "K".
PK_KERNEL void b8_topk_wider_than_row(Tensor<f32, 2> x, Tensor<i32, 2> ids) {
  for (auto t : tiles(x.rows(), {16})) store(ids, row_topk_index<8>(load<16, 4>(x, t, 0)), t, 0);
}

// B9: a tile loop bounded by a count read from memory that pushes rows to peers (each expert's received rows
// sent back): the protocol checker cannot know the count on every rank. Key words: "integer read from memory",
// "bound a loop".
PK_KERNEL void b9_count_bounds_peer_loop(Tensor<i32, 1> counts, Tensor<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(counts.at(0), x.cols(), {32, 256}))
    store(y.on(next_rank()), load<32, 256>(x, m, n), m, n);
}

// B10: fp8 tiles added into a peer's fp8 tensor (a reduce-scatter kept in fp8). Key words: "store_add", "fp8"
// or the element types store_add takes.
PK_KERNEL void b10_store_add_fp8_peer(Tensor<f8e4m3, 2> x, Sym<f8e4m3, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store_add(y.on(next_rank()), load<16, 128>(x, m, n), m, n);
}

// B11: dequantised column shards of an all-gather along dimension 1 stored at p C with 1024-wide tiles and C
// below 1024: each rank block's padding columns land in the next block. Key words: "race for world size 2",
// "argument 4 (y)". (Finding 4: the message blames 16 padding rows of a clipped load and advises row offsets
// and store_rows; the overlap is along columns, and y's rows are not the issue.)
PK_KERNEL void b11_column_block_overlap(Sym<bf16, 2> x, Sym<bf16, 2> gx, Sym<f32, 2> s, Sym<f32, 2> gs,
                                        Tensor<bf16, 2> y) {
  all_gather(x, gx, 1);
  all_gather(s, gs, 1);
  for (auto [m, p] : tiles(y.rows(), world_size(), {16, 1}))
    store(y, cast<bf16>(cast<f32>(load<16, 1024>(gx, m, p * x.cols())) * load<16, 1>(gs, m, p)), m, p * x.cols());
}

// B12: a 3-D tile transposed (a user expecting the last two dimensions to swap). Key words: "transpose".
#ifdef PK_CXX_B12
PK_KERNEL void b12_transpose_3d(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [b, m, n] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 16}))
    store(y, transpose(load<1, 16, 16>(x, b, m, n)), b, n, m);
}
#endif

// B13: the histogram of a float tile of expert ids (the router output was never cast). Key words: "histogram".
#ifdef PK_CXX_B13
PK_KERNEL void b13_histogram_float(Tensor<f32, 1> ids, Tensor<i32, 1> counts) {
  for (auto i : tiles(ids.size(), {1024})) store(counts, histogram<64>(load<1024>(ids, i)), i / 16);
}
#endif

// B14: rows gathered by a float index tile (positions computed in f32 and never cast). Key words: "load_rows",
// an integer index.
#ifdef PK_CXX_B14
PK_KERNEL void b14_load_rows_float_index(Tensor<bf16, 2> table, Tensor<f32, 1> pos, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(y.rows(), y.cols(), {16, 256}))
    store(y, load_rows<16, 256>(table, load<16>(pos, t), n), t, n);
}
#endif

// B15: integer ids scaled by a float (an fp rounding of expert ids). Key words: "invalid operands" (a C++ overload
// error at the operator).
#ifdef PK_CXX_B15
PK_KERNEL void b15_int_times_float(Tensor<i32, 1> ids, Tensor<f32, 1> y) {
  for (auto i : tiles(ids.size(), {256})) store(y, cast<f32>(load<256>(ids, i) * 0.5f), i);
}
#endif

// B16: store_add into this rank's own Sym copy, without .on(rank()) (finding 2, fixed: it was a Clang "no
// matching function"; it now compiles as the local add of rows, as store(sym, ...) writes this rank's copy;
// test/Compile/user_specs22.test checks the emitted add).
#ifdef PK_CXX_B16
PK_KERNEL void b16_store_add_own_sym(Tensor<i32, 1> ids, Sym<i32, 2> local) {
  for (auto i : tiles(ids.size(), {1024})) store_add(local, reshape<1, 64>(histogram<64>(load<1024>(ids, i))), 0, 0);
}
#endif

// B17: a mask made of an i32 comparison times a float comparison (group-limited routing). Key words: "different
// element types".
#ifdef PK_CXX_B17
PK_KERNEL void b17_int_mask_times_float_mask(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto t : tiles(x.rows(), {16})) {
    auto v = load<16, 64>(x, t, 0);
    store(y, where((cast<i32>(col_index<16, 64>(0)) / 8 == 1) * (v > 0.0f), v, 0.0f), t, 0);
  }
}
#endif

// F1 (finding 1, fixed: refused): where(mask, 4294967296L, 0L) is an i32 tile (two integer scalars give i32),
// so the constant 2^32 wrapped to 0 silently: y[i] = x[i] + (x[i] < 0 ? 2^32 : 0) was meant, y[i] = x[i] was
// computed. A constant that does not fit the i32 tile it meets is now an error naming the i64 form.
PK_KERNEL void f1_where_long_constant_wraps(Tensor<i64, 1> x, Tensor<i64, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    auto v = load<256>(x, i);
    store(y, v + cast<i64>(where(v < 0, 4294967296L, 0L)), i);
  }
}

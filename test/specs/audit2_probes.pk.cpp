// Probes of the second padding / retiling audit (test/specs/audit2_findings.md). Each kernel is
// the minimal reproducer of one finding; all compile with pkc (none has run on a GPU). The last two
// (offset_by_past_end_base, divide_by_one_element) were added for test/gpu/audit2_jit_test.cu,
// which runs every kernel here against exact or float64 references.
#include <pk/spec.h>
using namespace pk;

// Finding 1: a gather by a partial index tile yields a tile whose padding rows look like data.
// Rows of x picked by src[t], moved to y at dst_of[src[t]]. For the last, partial tile of src
// the padding rows of s gather zeros into d and rows, both marked wholly valid, so store_rows
// writes zero rows into y[0, 0..256).
PK_KERNEL void gather_then_scatter(Tensor<i32, 1> src, Tensor<i32, 2> dst_of, Tensor<bf16, 2> x,
                                   Tensor<bf16, 2> y) {
  for (auto m : tiles(src.size(), {16})) {
    auto s = load<16>(src, m);
    auto d = load_rows<16, 1>(dst_of, s, 0);
    auto rows = load_rows<16, 256>(x, s, 0);
    store_rows(y, rows, d, 0);
  }
}

// Finding 1 (histogram): experts of the tile's tokens looked up through a table; the partial
// tile's padding rows are counted as expert 0.
PK_KERNEL void gathered_histogram(Tensor<i32, 1> tok, Tensor<i32, 2> expert_of, Tensor<i32, 2> counts) {
  for (auto m : tiles(tok.size(), {16})) {
    auto e = load_rows<16, 1>(expert_of, load<16>(tok, m), 0);
    store(counts, histogram<8>(e), m / 16, 0);
  }
}

// Finding 1 (prim::reduce): a reduced tile carries no padding either; histogram counts the
// partial last tile's padding as value 0.
PK_KERNEL void reduced_histogram(Sym<i32, 1> ids, Tensor<i32, 1> counts) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(ids.size(), {256})) {
    auto e = prim::reduce<256>(Sum, Ldst, ids, i);
    store(counts, histogram<64>(e), i / 256 * 64);
  }
  prim::barrier(prim::flag(1));
}

// Finding 2: per-row statistics kept in registers are scattered by scatter_row_values, which
// checks the index vector's padding but not the values'. slots has S >= T entries (a padded
// slot map): rows T .. of the last tile are x's padding; cache drops them, amax_cache gets 0.
PK_KERNEL void scatter_row_stats(Tensor<f32, 2> x, Tensor<i32, 1> slots, Tensor<f32, 2> amax_cache,
                                 Tensor<f32, 2> cache) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 64>(x, m, 0);
    auto idx = load<16>(slots, m);
    store_rows(amax_cache, row_max(abs(t)), idx, 0);
    store_rows(cache, t, idx, 0);
  }
}

// Finding 3: claim checks padding along dimension 0 only. Top-k routing [T, 6] read as 16 x 8
// tiles: columns 6 and 7 are padding (value 0) and each claims a slot of expert 0.
PK_KERNEL void claim_padded_columns(Tensor<i32, 2> experts, Tensor<i32, 1> fill, Tensor<i32, 2> place) {
  for (auto m : tiles(experts.rows(), {16})) {
    auto e = load<16, 8>(experts, m, 0);
    store(place, claim(fill, e), m, 0);
  }
}

// Finding 4: a row or column index of unit extent in a GEMM epilogue is the tile's origin (one
// value broadcast over the tile) on the general path, but the template evaluates it per element.
PK_KERNEL void gemm_epilogue_tile_origin(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(c, acc + row_index<1, 64>(m) * 1000.0f + col_index<64, 1>(n), m, n);
  }
}

// Finding 4 (attention): a block-aligned window from the tile's first query row.
PK_KERNEL void attention_tile_origin_window(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v,
                                            Tensor<bf16, 3> o, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      auto first = row_index<1, 64>(m);  // the tile's first query row, for every key column
      s = where((col_index<64, 64>(n) < k.dim(1)) * (col_index<64, 64>(n) > first - window), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// Finding 5: a 1 x 16 index row loaded at a row past its tensor's end, transposed into a column:
// the load zeroes valid0 only, the transpose moves valid1 (still 16) into valid0, and store_rows
// scatters the 16 zero indices into y's row 0. (B = x.rows() may exceed ids.rows().)
PK_KERNEL void transposed_row_past_end(Tensor<i32, 2> ids, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [b, j] : tiles(x.rows(), ids.cols(), {1, 16})) {
    auto col = transpose(load<1, 16>(ids, b, j));
    store_rows(y, load<16, 64>(x, b * 16, 0), col, 0);
  }
}

// Finding 6: an integer to bf16 cast rounds twice (to fp32, then to bf16): 16842753 becomes
// 16777216, not the nearest bf16 16908288.
PK_KERNEL void int_to_bf16(Tensor<i32, 1> x, Tensor<bf16, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, cast<bf16>(load<256>(x, i)), i);
}

// Finding 7: division by a one-element or 3-D broadcast f32 tile multiplies by its reciprocal
// (about 2 ulp) where the doc promises correctly rounded fp32 division.
PK_KERNEL void divide_by_broadcast(Tensor<f32, 3> x, Tensor<f32, 3> s, Tensor<f32, 3> y) {
  for (auto [b, t, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {4, 16, 64}))
    store(y, load<4, 16, 64>(x, b, t, d) / load<1, 1, 64>(s, 0, 0, d), b, t, d);
}

// Finding 5 (a one-element operand): the base offset read at e, past base's end when e >=
// base.size(), makes every index padding (computed from no data): nothing is stored. Before the
// fix the one-element operand's padding was dropped and ids[t] + 0 moved x's rows.
PK_KERNEL void offset_by_past_end_base(Tensor<i32, 1> ids, Tensor<i32, 1> base, Tensor<f32, 2> x,
                                       Tensor<f32, 2> y, index e) {
  for (auto m : tiles(ids.size(), {16})) {
    auto idx = load<16>(ids, m) + load<1>(base, e);
    store_rows(y, load<16, 64>(x, m, 0), idx, 0);
  }
}

// Finding 7 (a one-element divisor): correctly rounded fp32 division, not a reciprocal.
PK_KERNEL void divide_by_one_element(Tensor<f32, 2> x, Tensor<f32, 2> s, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n) / load<1, 1>(s, 0, 0), m, n);
}

// Integer tiles and rows moved by index, run on one GPU by test/gpu/int_tiles_test.cu against
// host references: integer arithmetic and masks, i64 values past 2^31, casts both ways, a
// vocabulary-parallel embedding lookup (out-of-range ids read zeros), rows scattered to slots
// and rows added into slots (the two halves of an MoE dispatch and combine).
#include <pk/spec.h>
using namespace pk;

// Integer + - * / %, max, abs, comparisons against an index scalar, where; a float cast.
PK_KERNEL void int_arith(Tensor<i32, 2> a, Tensor<i32, 2> b, Tensor<i32, 2> c, Tensor<f32, 2> f,
                         index lo) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 128})) {
    auto x = load<16, 128>(a, m, n);
    auto y = load<16, 128>(b, m, n);
    auto r = where(x < lo, x % y + 1, max(x - lo, y) / 3 - abs(y));
    store(c, r, m, n);
    store(f, cast<f32>(r) * 0.5f, m, n);
  }
}

// Division and remainder by a kernel scalar (pk::tile::Divisor: a multiply, not a division),
// as whole tiles and as the row indices of a gather rebuilt by every thread for its rows.
PK_KERNEL void int_divide(Tensor<i32, 1> a, Tensor<i32, 1> q, Tensor<i32, 1> r, Tensor<f32, 2> x,
                          Tensor<f32, 2> g, index d) {
  for (auto i : tiles(a.size(), {1024})) {
    auto v = load<1024>(a, i);
    store(q, v / d, i);
    store(r, v % d, i);
  }
  for (auto [t, n] : tiles(g.rows(), g.cols(), {32, 64}))
    store(g, load_rows<32, 64>(x, load<32>(a, t) % d, n), t, n);
}

// i64 arithmetic stays exact past 2^31; float to integer casts round toward zero and saturate.
PK_KERNEL void int64_mix(Tensor<i64, 1> a, Tensor<f32, 1> x, Tensor<i64, 1> out, Tensor<i32, 1> q) {
  for (auto i : tiles(a.size(), {1024})) {
    auto v = load<1024>(a, i);
    auto f = load<1024>(x, i);
    store(out, v * 3 - cast<i64>(f), i);
    store(q, cast<i32>(f * 100.0f), i);
  }
}

// Rank r of a vocabulary-parallel embedding holds rows [first_row, first_row + V) of the table;
// ids outside that range read zeros (an all-reduce over ranks then sums the rows).
PK_KERNEL void embedding_lookup(Tensor<i32, 1> ids, Tensor<bf16, 2> table, Tensor<bf16, 2> out,
                                index first_row) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 256}))
    store(out, load_rows<16, 256>(table, load<16>(ids, t) - first_row, n), t, n);
}

// Each row of x to its slot (an MoE dispatch's layout step); slots outside y are dropped.
PK_KERNEL void scatter_rows(Tensor<f32, 2> x, Tensor<i64, 2> slot, Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store_rows(y, load<32, 128>(x, t, n), load<32, 1>(slot, t, 0), n);
}

// The same with the slots stored as one [1, T] row, transposed into a column: the padding of a
// clipped row load stays padding after the transpose (never row 0).
PK_KERNEL void scatter_rows_by_id_row(Tensor<f32, 2> x, Tensor<i32, 2> slot, Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store_rows(y, load<32, 128>(x, t, n), transpose(load<1, 32>(slot, 0, t)), n);
}

// Rows weighted and added into their slots (an MoE combine): duplicates all arrive.
PK_KERNEL void combine_rows(Tensor<f32, 2> x, Tensor<f32, 2> w, Tensor<i32, 1> slot,
                            Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store_add_rows(y, load<32, 128>(x, t, n) * load<32, 1>(w, t, 0), load<32>(slot, t), n);
}

// Integer rows added into their slots: per-slot counts, exact.
PK_KERNEL void count_rows(Tensor<i32, 2> c, Tensor<i32, 1> slot, Tensor<i32, 2> counts) {
  for (auto [t, n] : tiles(c.rows(), c.cols(), {64, 8}))
    store_add_rows(counts, load<64, 8>(c, t, n), load<64>(slot, t), n);
}

// Index scalars divided by a run-time value (pk::scalar_div / scalar_rem: 0 by zero): each
// tile adds its origin's quotient and remainder by d to its elements.
PK_KERNEL void index_division(Tensor<i64, 1> x, Tensor<i64, 1> y, index d) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) + (i / d) * 1000 + i % d, i);
}

// i64 tiles transposed through the stage (8-byte values), in 16 x 48 tiles.
PK_KERNEL void int64_transpose(Tensor<i64, 2> x, Tensor<i64, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48})) store(y, transpose(load<16, 48>(x, m, n)) + 1, n, m);
}

// Per-tile expert counts and offsets (an MoE layout): counts[b, e] counts tile b's tokens routed
// to expert e (ids outside 0..63 are not counted), offsets[b, e] is the exclusive running sum;
// and running sums of a float tile.
PK_KERNEL void expert_offsets(Tensor<i32, 1> expert, Tensor<i32, 1> counts, Tensor<i32, 1> offsets,
                              Tensor<f32, 1> x, Tensor<f32, 1> sums) {
  for (auto i : tiles(expert.size(), {1024})) {
    auto h = histogram<64>(load<1024>(expert, i));
    store(counts, h, i / 16);
    store(offsets, cumsum(h) - h, i / 16);
    store(sums, cumsum(load<1024>(x, i)), i);
  }
}

// Counts of a 2-D index tile clipped in both dimensions: counts[b, e] for tile b (row-major
// over the 4 x 64 tiles) counts its elements equal to e; padding rows and columns count nowhere.
// A running sum of values made from padding (x + 1) counts them as computed: past x's end each
// element adds 1 (padding loads 0), as row_sum would.
PK_KERNEL void counts_2d(Tensor<i32, 2> ids, Tensor<i32, 1> counts, Tensor<f32, 1> x, Tensor<f32, 1> sums) {
  index tiles_n = (ids.cols() + 63) / 64;
  for (auto [m, n] : tiles(ids.rows(), ids.cols(), {4, 64}))
    store(counts, histogram<8>(load<4, 64>(ids, m, n)), (m / 4 * tiles_n + n / 64) * 8);
  for (auto i : tiles(sums.size(), {256})) store(sums, cumsum(load<256>(x, i) + 1.0f), i);
}

// The 16-row tiles of x that start below counts[e], scaled by scale[e]: a tile loop bounded by
// a count read from a tensor (the tokens an expert received), and a float read the same way.
// As everywhere, a tile is clipped at the tensor's edge, not at the loop's bound.
PK_KERNEL void expert_rows(Tensor<i32, 1> counts, Tensor<f32, 1> scale, Tensor<f32, 2> x, Tensor<f32, 2> y,
                           index e) {
  for (auto [m, n] : tiles(counts.at(e), x.cols(), {16, 128}))
    store(y, load<16, 128>(x, m, n) * scale.at(e), m, n);
}

// Running sums longer than the shared-memory stage, which they pass through in chunks: f32 tiles
// of 8192 and i64 tiles of 5000 (the stage holds 2048 of them, less a total per thread).
PK_KERNEL void long_cumsum(Tensor<f32, 1> x, Tensor<f32, 1> y, Tensor<i64, 1> a, Tensor<i64, 1> b) {
  for (auto i : tiles(x.size(), {8192})) store(y, cumsum(load<8192>(x, i)), i);
  for (auto i : tiles(a.size(), {5000})) store(b, cumsum(load<5000>(a, i)), i);
}

// A third user-written spec set: kernels stressing edge semantics: tails in every dimension,
// 1-D tiles, tiles with an extent of 1, 3-D and 4-D tensors, mixed dtypes and casts, row
// reductions over partial tiles (row_max of negative values, row_min of positive ones, where the
// documented zero padding enters the reduction, and masked versions where it must not), iota
// masks, range loops carrying tiles and scalars, loads and stores at offsets, in-place updates,
// repeated stores, integer division by negative divisors, cumsum / histogram with tails,
// transposes, small mma / mma_t with tails in K, and histograms / scatters by index tiles of a
// 3-D tensor's trailing dimensions with padding.
// test/gpu/user_specs3_test.cu runs the kernels at world size 1 against float64 references;
// test/Compile/user_specs3.test compiles the set to an sm_90a cubin.
#include <pk/spec.h>
using namespace pk;

// ---- row reductions over partial tiles ----

// Per-tile row maximum of negative data, 16 x 32 tiles over [M, N] with N % 32 != 0: the
// last column tile's padding loads as 0 and (documented) counts, so its maximum is 0.
// hi is [M, ceil(N / 32)], one column per column tile.
PK_KERNEL void tile_row_max_unmasked(Tensor<f32, 2> x, Tensor<f32, 2> hi) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(hi, row_max(load<16, 32>(x, m, n)), m, n / 32);
}

// The same with the padding masked to -inf-like: the true maximum of each partial row.
PK_KERNEL void tile_row_max_masked(Tensor<f32, 2> x, Tensor<f32, 2> hi) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto t = where(col_index<16, 32>(n) < x.cols(), load<16, 32>(x, m, n), -1e30f);
    store(hi, row_max(t), m, n / 32);
  }
}

// Whole-row minimum of positive data in one 8 x 128 tile per row block (N < 128): masked, and
// unmasked (the padding's zeros win).
PK_KERNEL void row_min_pos(Tensor<f32, 2> x, Tensor<f32, 2> lo_masked, Tensor<f32, 2> lo_raw) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 128>(x, m, 0);
    store(lo_masked, row_min(where(col_index<8, 128>(0) < x.cols(), t, 1e30f)), m, 0);
    store(lo_raw, row_min(t), m, 0);
  }
}

// Softmax of negative bf16 logits with a column tail, 4 x 64 row tiles walking columns in a
// range loop carrying the running max and sum; output bf16.
PK_KERNEL void softmax_neg_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {4})) {
    auto mx = zeros<f32, 4, 1>() - 1e30f;
    auto l = zeros<f32, 4, 1>();
    for (auto k : range(0, x.cols(), 64)) {
      auto t = where(col_index<4, 64>(k) < x.cols(), cast<f32>(load<4, 64>(x, m, k)), -1e30f);
      auto nm = max(mx, row_max(t));
      l = l * exp(mx - nm) + row_sum(exp(t - nm));
      mx = nm;
    }
    for (auto k : range(0, x.cols(), 64))
      store(y, cast<bf16>(exp(cast<f32>(load<4, 64>(x, m, k)) - mx) / l), m, k);
  }
}

// Row reductions of a 1 x 256 tile (a tile of one row): y = x / sum |x| over the tile.
PK_KERNEL void one_row_tiles(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 256})) {
    auto t = load<1, 256>(x, m, n);
    store(y, t / row_sum(abs(t)), m, n);
  }
}

// Row-range normalisation in f16: (x - row_min) / (row_max - row_min) over whole masked rows.
PK_KERNEL void minmax_scale_f16(Tensor<f16, 2> x, Tensor<f16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = cast<f32>(load<16, 96>(x, m, 0));
    auto in = col_index<16, 96>(0) < x.cols();
    auto lo = row_min(where(in, t, 1e30f));
    auto hi = row_max(where(in, t, -1e30f));
    store(y, cast<f16>((t - lo) / (hi - lo)), m, 0);
  }
}

// ---- element-wise with tails, offsets, in place ----

// In place, 1-D: y = y * y - 0.5 (each tile reads and writes its own elements).
PK_KERNEL void square_inplace_1d(Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {128})) {
    auto t = load<128>(y, i);
    store(y, t * t - 0.5f, i);
  }
}

// In place, 2-D bf16 axpy with tails: y = y + alpha * x.
PK_KERNEL void axpy_inplace_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> y, float alpha) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {32, 48})) {
    auto t = cast<f32>(load<32, 48>(y, m, n)) + alpha * cast<f32>(load<32, 48>(x, m, n));
    store(y, cast<bf16>(t), m, n);
  }
}

// Loads at an offset: y[r, c] = x[r + 3, c + 5] - x[r, c] for y of [M - 3, N - 5].
PK_KERNEL void shifted_diff(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 32}))
    store(y, load<16, 32>(x, m + 3, n + 5) - load<16, 32>(x, m, n), m, n);
}

// Stores at an offset: y[r + 2, c + 1] = 2 x[r, c] for y of [M + 2, N + 1]; row 0..1 and
// column 0 of y keep their values.
PK_KERNEL void store_shifted(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n) * 2.0f, m + 2, n + 1);
}

// The same tile stored several times: y gets x, then 3x over it; z gets x + 1 in between.
PK_KERNEL void restore_twice(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 64})) {
    auto t = load<8, 64>(x, m, n);
    store(y, t, m, n);
    store(z, t + 1.0f, m, n);
    store(y, t * 3.0f, m, n);
  }
}

// Column tiles (M x 1): y[:, c] = x[:, c] * (c + 1) with the column index from col_index.
PK_KERNEL void column_tiles(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 1}))
    store(y, load<64, 1>(x, m, n) * (col_index<64, 1>(n) + 1.0f), m, n);
}

// Triangle masks from iota tiles: upper = x on and above the diagonal, 0 below; diag = 1 on the
// diagonal, -1 off it.
PK_KERNEL void triangles(Tensor<f32, 2> x, Tensor<f32, 2> upper, Tensor<f32, 2> diag) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 32})) {
    auto r = row_index<32, 32>(m);
    auto c = col_index<32, 32>(n);
    store(upper, where(c >= r, load<32, 32>(x, m, n), 0.0f), m, n);
    store(diag, where(c == r, 1.0f, zeros<f32, 32, 32>() - 1.0f), m, n);
  }
}

// Column broadcast from an [M, 1] tensor and a row from a [1, N] one, with a clamp:
// y = min(max((x - mu) * g, lo), hi).
PK_KERNEL void center_clamp(Tensor<f32, 2> x, Tensor<f32, 2> mu, Tensor<f32, 2> g, Tensor<f32, 2> y, float lo,
                            float hi) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = (load<16, 64>(x, m, n) - load<16, 1>(mu, m, 0)) * load<1, 64>(g, 0, n);
    store(y, min(max(t, lo), hi), m, n);
  }
}

// ---- mixed dtypes ----

// bf16 times f16 into f32, and a truncating cast to i32 of 10 * the product.
PK_KERNEL void mixed_mul(Tensor<bf16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> p, Tensor<i32, 2> q) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 40})) {
    auto t = cast<f32>(load<16, 40>(a, m, n)) * cast<f32>(load<16, 40>(b, m, n));
    store(p, t, m, n);
    store(q, cast<i32>(t * 10.0f), m, n);
  }
}

// i64 values past 2^31 to f32 and back to i64 (through a scale), and an f16 copy of x / 2^20.
PK_KERNEL void i64_roundtrip(Tensor<i64, 1> v, Tensor<f32, 1> f, Tensor<i64, 1> back, Tensor<f16, 1> h) {
  for (auto i : tiles(v.size(), {64})) {
    auto x = cast<f32>(load<64>(v, i));
    store(f, x, i);
    store(back, cast<i64>(x * 0.25f), i);
    store(h, cast<f16>(x * (1.0f / 1048576.0f)), i);
  }
}

// ---- integers ----

// i64 division and remainder by a negative run-time divisor and by a tile with negatives.
PK_KERNEL void i64_divmod(Tensor<i64, 2> a, Tensor<i64, 2> b, Tensor<i64, 2> q, Tensor<i64, 2> r, index d) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {8, 24})) {
    auto x = load<8, 24>(a, m, n);
    auto y = load<8, 24>(b, m, n);
    store(q, x / d + x / y, m, n);
    store(r, x % d - x % y, m, n);
  }
}

// Collatz step on i32 with negatives: even -> x / 2, odd -> 3x + 1; clamped to [lo, hi].
PK_KERNEL void collatz_i32(Tensor<i32, 1> a, Tensor<i32, 1> y, index lo, index hi) {
  for (auto i : tiles(a.size(), {256})) {
    auto x = load<256>(a, i);
    store(y, min(max(where(x % 2 == 0, x / 2, 3 * x + 1), lo), hi), i);
  }
}

// Prefix sums of an i32 tensor in 1-D tiles of 256 with a tail (per-tile inclusive sums).
PK_KERNEL void cumsum_tiles_i32(Tensor<i32, 1> v, Tensor<i32, 1> s) {
  for (auto i : tiles(v.size(), {256})) store(s, cumsum(load<256>(v, i)), i);
}

// Per-tile histograms of ids in 0..15 over 1-D tiles of 256 with a tail; padding not counted.
// h is [ceil(n / 256), 16].
PK_KERNEL void histogram_tiles(Tensor<i32, 1> ids, Tensor<i32, 2> h) {
  for (auto i : tiles(ids.size(), {256})) store(h, histogram<16>(load<256>(ids, i)), i / 256, 0);
}

// Inclusive prefix sums of f32 whose padding (after + 1) must add nothing: s = cumsum(x + 1).
PK_KERNEL void cumsum_plus_one(Tensor<f32, 1> x, Tensor<f32, 1> s) {
  for (auto i : tiles(x.size(), {512})) store(s, cumsum(load<512>(x, i) + 1.0f), i);
}

// ---- 3-D / 4-D ----

// 4-D [A, B, C, D] tensor: each (a, b) plane's 8 x 64 tiles of its trailing [C, D] dimensions;
// y = x * w (w a [1, 1, 1, D] row), and the row maxima of the masked tile into mx [A, B, C, 1].
PK_KERNEL void planes_4d(Tensor<f32, 4> x, Tensor<f32, 4> w, Tensor<f32, 4> y, Tensor<f32, 4> mx) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 1, 8})) {
    auto t = load<8, 64>(x, a, b, c, 0);
    store(y, t * load<1, 64>(w, 0, 0, 0, 0), a, b, c, 0);
    store(mx, row_max(where(col_index<8, 64>(0) < x.dim(3), t, -1e30f)), a, b, c, 0);
  }
}

// 3-D tiles with an extent of 1 in the middle: 2 x 1 x 32 tiles of [B, S, D] with tails in B
// and D: y = 2x - 1.
PK_KERNEL void tiles_3d_thin(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [b, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 1, 32}))
    store(y, load<2, 1, 32>(x, b, s, d) * 2.0f - 1.0f, b, s, d);
}

// ---- loops ----

// Row-wise running sums across column blocks: y[:, block k] = x[:, block k] + sum of the row
// over all earlier blocks, a range loop carrying a 8 x 1 tile.
PK_KERNEL void blockwise_prefix(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {8})) {
    auto carry = zeros<f32, 8, 1>();
    for (auto k : range(0, x.cols(), 32)) {
      auto t = load<8, 32>(x, m, k);
      store(y, t + carry, m, k);
      carry = carry + row_sum(t);
    }
  }
}

// Nested range loops carrying an index-derived float and a tile: y = sum over i < 3, j < 2 of
// x * (i + 1) * 0.5^j, with the scalar halved by the inner loop and reset by the outer.
PK_KERNEL void nested_ranges(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    auto acc = zeros<f32, 16, 64>();
    for (auto i : range(0, 3)) {
      float w = float(i) + 1.0f;
      for (auto j : range(0, 2)) {
        acc = acc + t * w;
        w = w * 0.5f;
      }
    }
    store(y, acc, m, n);
  }
}

// A range loop whose trip count is a kernel argument: y = x * 0.9^steps + steps.
PK_KERNEL void repeat_steps(Tensor<f32, 2> x, Tensor<f32, 2> y, index steps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48})) {
    auto t = load<16, 48>(x, m, n);
    for (auto s : range(0, steps)) t = t * 0.9f + 1.0f;
    store(y, t, m, n);
  }
}

// ---- transpose, mma ----

// Transpose with tails in both dimensions, 32 x 16 tiles: y = x^T * 2.
PK_KERNEL void transpose_tail(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 16})) store(y, transpose(load<32, 16>(x, m, n)) * 2.0f, n, m);
}

// Small odd mma on the general path (f32 output): 16 x 16 tiles, K stepped by 16 with a tail.
PK_KERNEL void mma_small_odd(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {16, 16})) {
    auto acc = zeros<f32, 16, 16>();
    for (auto k : range(0, a.cols(), 16)) acc = mma(load<16, 16>(a, m, k), load<16, 16>(b, k, n), acc);
    store(c, acc, m, n);
  }
}

// mma_t in f16 with a K tail and an epilogue of a bias row and relu into f32 (general path).
PK_KERNEL void mma_t_bias_relu(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> bias, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {32, 32})) {
    auto acc = zeros<f32, 32, 32>();
    for (auto k : range(0, a.cols(), 16)) acc = mma_t(load<32, 16>(a, m, k), load<32, 16>(b, n, k), acc);
    store(c, max(acc + load<1, 32>(bias, 0, n), 0.0f), m, n);
  }
}

// GEMM with a bias row and gelu, bf16 in, f32 out (general path), 64 x 32 tiles, K by 32.
PK_KERNEL void gemm_bias_gelu_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 32})) {
    auto acc = zeros<f32, 64, 32>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 32>(b, k, n), acc);
    store(c, gelu(acc + cast<f32>(load<1, 32>(bias, 0, n))), m, n);
  }
}

// ---- padding of trailing-dimension tiles as indices ----

// Per-(b, row block) histograms of [B, S, D] ids (D < 64) through a 4 x 64 tile of the trailing
// dimensions: the column padding (and the row padding past S) must not count as value 0.
// h is [B, ceil(S / 4), 16].
PK_KERNEL void histogram_trailing(Tensor<i32, 3> ids, Tensor<i32, 3> h) {
  for (auto [b, s] : tiles(ids.dim(0), ids.dim(1), {1, 4}))
    store(h, histogram<16>(load<4, 64>(ids, b, s, 0)), b, s / 4, 0);
}

// The same through a 3-D 1 x 4 x 64 tile.
PK_KERNEL void histogram_3d_tile(Tensor<i32, 3> ids, Tensor<i32, 3> h) {
  for (auto [b, s] : tiles(ids.dim(0), ids.dim(1), {1, 4}))
    store(h, histogram<16>(load<1, 4, 64>(ids, b, s, 0)), b, s / 4, 0);
}

// Scatter of [B, T, 32] rows into y by slots of a [B, 1, T] i32 tensor, 16 slots at a time
// (a 1-D tile of the last dimension): rows past T are padding and must not land in row 0.
PK_KERNEL void scatter_by_3d_slots(Tensor<i32, 3> slots, Tensor<f32, 3> src, Tensor<f32, 2> y) {
  for (auto [b, t] : tiles(slots.dim(0), slots.dim(2), {1, 16}))
    store_rows(y, load<16, 32>(src, b, t, 0), load<16>(slots, b, 0, t), 0);
}

// The same scatter with the slots as a 16 x 1 column of a [B, T, 1] tensor (the form whose
// indices each thread computes for its own rows).
PK_KERNEL void scatter_by_3d_column(Tensor<i32, 3> slots, Tensor<f32, 3> src, Tensor<f32, 2> y) {
  for (auto [b, t] : tiles(slots.dim(0), slots.dim(1), {1, 16}))
    store_rows(y, load<16, 32>(src, b, t, 0), load<16, 1>(slots, b, t, 0), 0);
}

// A gather by a [B, T, 1] column of ids, scaled, into [B, T, 32]: rows past T are padding.
PK_KERNEL void gather_by_3d_column(Tensor<i32, 3> ids, Tensor<f32, 2> table, Tensor<f32, 3> out) {
  for (auto [b, t] : tiles(ids.dim(0), ids.dim(1), {1, 16}))
    store(out, load_rows<16, 32>(table, load<16, 1>(ids, b, t, 0), 0) * 2.0f, b, t, 0);
}

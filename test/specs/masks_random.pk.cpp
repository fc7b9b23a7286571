// Masks combined by && || !, coordinates of any rank (dim_index) and counter-based random numbers
// (uniform), on the general path and in a GEMM template's epilogue. GPU test:
// test/gpu/masks_random_jit_test.cu; lit: test/Frontend/masks-random.cpp.
#include <pk/spec.h>
using namespace pk;

// Truth of arbitrary values (0 false, anything else, NaN too, true), as one number per element:
// bit 0 x && y, bit 1 x || y, bit 2 !x.
PK_KERNEL void truth_table_f32(Tensor<f32, 2> a, Tensor<f32, 2> b, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {32, 64})) {
    auto x = load<32, 64>(a, m, n);
    auto y = load<32, 64>(b, m, n);
    store(out, (x && y) + 2.f * (x || y) + 4.f * !x, m, n);
  }
}

PK_KERNEL void truth_table_i32(Tensor<i32, 2> a, Tensor<i32, 2> b, Tensor<i32, 2> out) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 32})) {
    auto x = load<16, 32>(a, m, n);
    auto y = load<16, 32>(b, m, n);
    store(out, (x && y) + 2 * (x || y) + 4 * !x, m, n);
  }
}

// Masks of two element types: an f32 tile's truth && an i32 tile's (and ||) join as an f32 mask;
// the [1, 32] i32 row broadcasts over the rows.
PK_KERNEL void truth_table_mixed(Tensor<f32, 2> a, Tensor<i32, 1> b, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 32})) {
    auto x = load<16, 32>(a, m, n);
    auto y = load<1, 32>(b, n);
    store(out, (x && y) + 2.f * (y || x) + 4.f * ((x > 0.5f) && (y >= 1)), m, n);
  }
}

// A band of a score matrix: keys within w before the query, by && of two comparisons, and a
// column mask broadcast by ||.
PK_KERNEL void band_mask(Tensor<f32, 2> s, Tensor<f32, 2> out, index w, index always) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {64, 64})) {
    auto r = row_index<64, 64>(m);
    auto c = col_index<64, 64>(n);
    auto keep = ((c <= r) && (c > r - w)) || (col_index<1, 64>(n) < always);
    store(out, where(keep, load<64, 64>(s, m, n), -1e30f), m, n);
  }
}

// Position ids of a [B, S, H] tile: s * 1000 + b * 10 + (h % 10), from dim_index along each.
PK_KERNEL void coords_3d(Tensor<i32, 3> out) {
  for (auto [b, s, h] : tiles(out.dim(0), out.dim(1), out.dim(2), {2, 16, 32}))
    store(out, cast<i32>(dim_index<1, 2, 16, 32>(s)) * 1000 + cast<i32>(dim_index<0, 2, 16, 32>(b)) * 10 +
                   cast<i32>(dim_index<2, 2, 16, 32>(h)) % 10,
          b, s, h);
}

// The random numbers themselves, through tiles of ranks 1, 2 and 4 (every element depends only
// on the seed and its coordinates, so the test compares with the documented hash exactly).
PK_KERNEL void uniform_1d(Tensor<f32, 1> out, index seed) {
  for (auto i : tiles(out.size(), {256})) store(out, uniform<256>(seed, i), i);
}
PK_KERNEL void uniform_2d(Tensor<f32, 2> out, index seed) {
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 64})) store(out, uniform<16, 64>(seed, m, n), m, n);
}
// (The last dimension at most 32: one tile along it.)
PK_KERNEL void uniform_4d(Tensor<f32, 4> out, index seed) {
  for (auto [a, b, c] : tiles(out.dim(0), out.dim(1), out.dim(2), {1, 2, 8}))
    store(out, uniform<1, 2, 8, 32>(seed, a, b, c, 0), a, b, c, 0);
}

// Dropout of a bf16 activation: zero where u < p, else x / (1 - p).
PK_KERNEL void dropout_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> y, index seed, float p) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto t = cast<f32>(load<32, 128>(x, m, n));
    store(y, cast<bf16>(where(uniform<32, 128>(seed, m, n) < p, 0.f, t * (1.f / (1.f - p)))), m, n);
  }
}

// C = dropout(A B^T): the Hopper GEMM template with the mask in its epilogue.
PK_KERNEL void gemm_dropout(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index seed, float p) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(where(uniform<128, 256>(seed, m, n) < p, 0.f, acc * (1.f / (1.f - p)))), m, n);
  }
}

// Running sums along the last dimension of a 3-D i32 tile (exact), partial in every dimension.
PK_KERNEL void cumsum_3d_i32(Tensor<i32, 3> x, Tensor<i32, 3> y) {
  for (auto [b, s, h] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 8, 64}))
    store(y, cumsum(load<2, 8, 64>(x, b, s, h)), b, s, h);
}

// The trailing-dimension form: a 2-D tile of a 3-D tensor, its leading origin a coordinate itself.
PK_KERNEL void uniform_trailing(Tensor<f32, 3> out, index seed) {
  for (auto [b, m, n] : tiles(out.dim(0), out.dim(1), out.dim(2), {1, 16, 64}))
    store(out, uniform<16, 64>(seed, b, m, n), b, m, n);
}

// Rows past 2^24: positions from row_index cast to i32 and a bound compared with row_index stay
// exact (pk-exact-index-tiles); as f32 values they would merge neighbouring rows and misplace the
// bound there. y[i] = x[i] for i < hi, -1 elsewhere, scattered by the computed positions.
PK_KERNEL void positions_past_2p24(Tensor<f32, 2> x, Tensor<f32, 2> y, index hi) {
  for (auto j : tiles(x.rows(), {64})) {
    auto pos = cast<i32>(row_index<64, 1>(j));
    store_rows(y, where(row_index<64, 1>(j) < hi, load<64, 1>(x, j, 0), -1.0f), pos, 0);
  }
}

// The same along a 1-D tensor, the positions a reshaped row of column indices (set 35 finding 1:
// the reshape hid the iota from pk-exact-index-tiles, so positions past 2^24 were rounded):
// y[i] = x[i] for i < hi, -1 elsewhere, scattered to y[i] as the cast position says.
PK_KERNEL void positions_past_2p24_1d(Tensor<f32, 1> x, Tensor<f32, 2> y, index hi) {
  for (auto i : tiles(x.size(), {1024})) {
    auto keep = reshape<1024>(col_index<1, 1024>(i)) < hi;
    auto pos = reshape<1024, 1>(cast<i32>(reshape<1024>(col_index<1, 1024>(i))));
    store_rows(y, reshape<1024, 1>(where(keep, load<1024>(x, i), -1.0f)), pos, 0);
  }
}

// Bits of i32 tiles: & | ^ and shifts, the counts from z (negative and past 31 included: << gives
// 0 there and >> the sign fill), a scalar on either side.
PK_KERNEL void bits_i32(Tensor<i32, 2> a, Tensor<i32, 2> b, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) {
    auto x = load<16, 64>(a, m, n), z = load<16, 64>(b, m, n);
    store(y, (x & z) + 3 * (x | z) - (x ^ z) + (x << z) + (x >> z) + (7 << (z & 7)) + (1 ^ x), m, n);
  }
}

// int4 weights packed eight to an i32 (nibble j at bits 4j .. 4j + 3, stored with offset 8):
// y[n, c, j] = (nibble j of w[n, c] - 8) * s[n], y viewed as [N, K / 8, 8].
PK_KERNEL void unpack_int4(Tensor<i32, 2> w, Tensor<f32, 1> s, Tensor<f32, 3> y) {
  for (auto [n, c] : tiles(w.rows(), w.cols(), {16, 32})) {
    auto packed = load<16, 32>(w, n, c);
    for (auto j : range(0, 8, 1))
      store(y, reshape<16, 32, 1>(cast<f32>(((packed >> (4 * j)) & 15) - 8) * load<16, 1>(s, n)), n, c, j);
  }
}

// Kernels for the general tile path (register tiles, pk/tile/*.cuh), each with edge tiles in
// every dimension at the sizes test/gpu/tile_path_test.cu runs. The compile tier turns them
// into sm_90a cubins; the GPU test runs them against float64 references of what they say.
#include <pk/spec.h>
using namespace pk;

// Softmax of each 16 x 1024 tile along its rows (elements outside the tensor read as zero).
PK_KERNEL void tile_softmax(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 1024})) {
    auto t = cast<f32>(load<16, 1024>(x, m, n));
    auto e = exp(t - row_max(t));
    store(y, cast<bf16>(e / row_sum(e)), m, n);
  }
}

// z = x + y on 1-D tiles.
PK_KERNEL void tile_add(Tensor<f32, 1> x, Tensor<f32, 1> y, Tensor<f32, 1> z) {
  for (auto i : tiles(x.size(), {4096}))
    store(z, load<4096>(x, i) + load<4096>(y, i), i);
}

// The row sums of every 32 x 128 tile, one column per tile: s[m + r, n / 128].
PK_KERNEL void tile_row_sums(Tensor<f32, 2> x, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store(s, row_sum(load<32, 128>(x, m, n)), m, n / 128);
}

// y = max(x + bias, x * x) with a 1 x N bias row broadcast over the rows.
PK_KERNEL void tile_bias(Tensor<f32, 2> x, Tensor<f32, 2> bias, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64})) {
    auto t = load<64, 64>(x, m, n);
    store(y, max(t + load<1, 64>(bias, 0, n), t * t), m, n);
  }
}

// C = A * B in f16 with B stored [K, N], 64 x 64 tiles, stored in f32: the Hopper template
// stores bf16 or f16 only, so the general path's mma.
PK_KERNEL void tile_gemm_ab(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32))
      acc = mma(load<64, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(c, acc, m, n);
  }
}

// C = A * B^T in bf16 with 128 x 128 tiles, stored in f32 (general path too).
PK_KERNEL void tile_gemm_abt(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<128, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// RMSNorm of rows of up to 4096 elements (one tile per row), weights as a 1 x N row.
PK_KERNEL void tile_rms_norm(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> y, float inv_n,
                             float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 4096})) {
    auto t = cast<f32>(load<8, 4096>(x, m, n));
    auto r = rsqrt(row_sum(t * t) * inv_n + eps);
    store(y, cast<bf16>(t * r * cast<f32>(load<1, 4096>(w, 0, n))), m, n);
  }
}

// SwiGLU's gate: silu(g) * u.
PK_KERNEL void tile_swiglu(Tensor<bf16, 2> g, Tensor<bf16, 2> u, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 512}))
    store(y, cast<bf16>(silu(cast<f32>(load<16, 512>(g, m, n))) * cast<f32>(load<16, 512>(u, m, n))),
          m, n);
}

// The other math functions and scalar constants, in one expression.
PK_KERNEL void tile_math(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    auto t = load<32, 256>(x, m, n);
    store(y, gelu(t) + 0.5f * gelu_erf(t) - pow(abs(t), 2.0f) + sigmoid(t) * tanh(t) +
                 sin(t) * cos(t) + log(abs(t) + 1.0f) + sqrt(abs(t)) - min(t, 0.25f),
          m, n);
  }
}

// Causal softmax of [S, S] scores in 16 x 256 tiles: row r keeps columns <= r of each tile
// (masked elements, and those outside the tensor, count as -1e30 and zero).
PK_KERNEL void tile_causal_softmax(Tensor<f32, 2> s, Tensor<f32, 2> p) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 256})) {
    auto x = where(col_index<16, 256>(n) <= row_index<16, 256>(m), load<16, 256>(s, m, n), -1e30f);
    auto e = exp(x - row_max(x));
    store(p, e / row_sum(e), m, n);
  }
}

// y = x where 0.5 < x < 1.5 or x >= 1.75, else -x (bf16): comparisons of a tile with floats.
PK_KERNEL void tile_band(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64})) {
    auto t = load<32, 64>(x, m, n);
    store(y, where((t > 0.5f) * (t < 1.5f) + (t >= 1.75f), t, -t), m, n);
  }
}

// y = x transposed, in 32 x 64 tiles of x (the tile at (m, n) of x is the tile at (n, m) of y).
PK_KERNEL void tile_transpose(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64})) store(y, transpose(load<32, 64>(x, m, n)) * 2.0f, n, m);
}

// Column sums of x [M, N] into y [N]: an N x 1 column carried over the rows, stored into a 1-D
// tensor; and z = x * v[m] with v [M] loaded as an M x 1 column (unit extents beyond the
// tensor's rank dropped).
PK_KERNEL void tile_unit_dims(Tensor<f32, 2> x, Tensor<f32, 1> v, Tensor<f32, 1> y, Tensor<f32, 2> z) {
  for (auto n : tiles(x.cols(), {48})) {
    auto acc = zeros<f32, 48, 1>();
    for (auto m : range(0, x.rows(), 32)) acc = acc + row_sum(transpose(load<32, 48>(x, m, n)));
    store(y, acc, n);
  }
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 32})) store(z, load<64, 32>(x, m, n) * load<64, 1>(v, m), m, n);
}

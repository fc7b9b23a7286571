// A second user-written spec set: kernels an AI-workload user writes against pk/spec.h, mixing
// constructs in ways test/specs/user_specs.pk.cpp does not (f16 norms with in-kernel sizes, two
// outputs, temperature and offset masks, online softmax carried over column blocks, per-column
// reductions through transposes, integer quantisation, cumsum-based ops, odd tile shapes and
// tensors with edges in both dimensions, GEMM epilogues on the template and general paths).
// test/gpu/user_specs2_test.cu runs the kernels at world size 1 against float64 references;
// test/Compile/user_specs2.test compiles the set to an sm_90a cubin.
#include <pk/spec.h>
using namespace pk;

// ---- norms ----

// LayerNorm in f16 with weight and bias rows; 1 / cols computed in the kernel from the size.
PK_KERNEL void layer_norm_f16(Tensor<f16, 2> x, Tensor<f16, 2> w, Tensor<f16, 2> b, Tensor<f16, 2> y, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 768})) {
    const float inv_n = 1.0f / float(x.cols());
    auto t = cast<f32>(load<8, 768>(x, m, n));
    auto d = t - row_sum(t) * inv_n;
    auto r = d * rsqrt(row_sum(d * d) * inv_n + eps);
    store(y, cast<f16>(r * cast<f32>(load<1, 768>(w, 0, n)) + cast<f32>(load<1, 768>(b, 0, n))), m, n);
  }
}

// Residual add then RMSNorm: h = x + r (bf16, stored), y = h * rsqrt(mean(h^2) + eps) * w.
PK_KERNEL void add_rms_norm(Tensor<bf16, 2> x, Tensor<bf16, 2> r, Tensor<bf16, 2> w, Tensor<bf16, 2> h,
                            Tensor<bf16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto s = load<4, 1024>(x, m, 0) + load<4, 1024>(r, m, 0);
    store(h, s, m, 0);
    auto t = cast<f32>(s);
    auto inv = rsqrt(row_sum(t * t) / float(x.cols()) + eps);
    store(y, cast<bf16>(t * inv * cast<f32>(load<1, 1024>(w, 0, 0))), m, 0);
  }
}

// Row-wise L1 normalisation (abs, row_sum) in 48 x 80 tiles: each row of a tile divided by
// the sum of its |x| within that tile.
PK_KERNEL void l1_norm_tiles(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {48, 80})) {
    auto t = load<48, 80>(x, m, n);
    store(y, t / (row_sum(abs(t)) + 1e-3f), m, n);
  }
}

// ---- softmax family ----

// Softmax with temperature and a causal mask shifted by `offset` (keys up to row + offset),
// 16 x 128 tiles over [M, N] scores (one tile across the row when N <= 128).
PK_KERNEL void softmax_temp_causal(Tensor<f32, 2> s, Tensor<f32, 2> p, float temperature, index offset) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 128})) {
    auto x = load<16, 128>(s, m, n) / temperature;
    auto keep = col_index<16, 128>(n) <= row_index<16, 128>(m) + float(offset);
    auto z = where(keep, x, -1e30f);
    auto e = exp(z - row_max(z));
    store(p, e / row_sum(e), m, n);
  }
}

// log-softmax of bf16 logits into f32 over whole 512-column rows, with padding masked out.
PK_KERNEL void log_softmax_bf16(Tensor<bf16, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = where(col_index<4, 512>(0) < x.cols(), cast<f32>(load<4, 512>(x, m, 0)), -1e30f);
    auto s = t - row_max(t);
    store(y, s - log(row_sum(exp(s))), m, 0);
  }
}

// Online softmax over column blocks of 64: a first range loop carries the running max and sum
// (16 x 1 tiles), a second writes exp(x - max) / sum; columns past the tensor are masked.
PK_KERNEL void online_softmax(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    auto l = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), 64)) {
      auto t = where(col_index<16, 64>(k) < x.cols(), load<16, 64>(x, m, k), -1e30f);
      auto nm = max(mx, row_max(t));
      l = l * exp(mx - nm) + row_sum(exp(t - nm));
      mx = nm;
    }
    for (auto k : range(0, x.cols(), 64)) store(y, exp(load<16, 64>(x, m, k) - mx) / l, m, k);
  }
}

// Masked mean pooling: row r averages its first len[r] columns (lengths as an f32 column).
PK_KERNEL void masked_mean(Tensor<f32, 2> x, Tensor<f32, 2> len, Tensor<f32, 2> out) {
  for (auto m : tiles(x.rows(), {32})) {
    auto n = load<32, 1>(len, m, 0);
    auto t = where(col_index<32, 256>(0) < n, load<32, 256>(x, m, 0), 0.0f);
    store(out, row_sum(t) / max(n, 1.0f), m, 0);
  }
}

// ---- rotary, quantisation ----

// Rotary embedding on [H, S, 64] heads (halves of 32), one head's 16 x 32 tiles at a time;
// cos / sin are [S, 32] shared by all heads.
PK_KERNEL void rotary_heads(Tensor<f32, 3> x, Tensor<f32, 2> c, Tensor<f32, 2> s, Tensor<f32, 3> y) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    auto x1 = load<16, 32>(x, h, m, 0);
    auto x2 = load<16, 32>(x, h, m, 32);
    auto cs = load<16, 32>(c, m, 0);
    auto sn = load<16, 32>(s, m, 0);
    store(y, x1 * cs - x2 * sn, h, m, 0);
    store(y, x2 * cs + x1 * sn, h, m, 32);
  }
}

// Row-wise absmax int8-style quantisation: q = trunc(x * 127 / amax) as i32, scale = amax / 127,
// and the dequantised row q * scale.
PK_KERNEL void absmax_quant_i8(Tensor<f32, 2> x, Tensor<i32, 2> q, Tensor<f32, 2> scale, Tensor<f32, 2> dq) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 256>(x, m, 0);
    auto amax = max(row_max(abs(t)), 1e-8f);
    auto qi = cast<i32>(t * (127.0f / amax));
    store(q, qi, m, 0);
    store(scale, amax / 127.0f, m, 0);
    store(dq, cast<f32>(qi) * (amax / 127.0f), m, 0);
  }
}

// e5m2 quantise and dequantise in one pass (per row and 64-column block): bf16 out.
PK_KERNEL void fp8_e5m2_fake_quant(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = cast<f32>(load<16, 64>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-20f);
    auto q = cast<f8e5m2>(t * (57344.0f / amax));
    store(y, cast<bf16>(cast<f32>(q) * (amax / 57344.0f)), m, n);
  }
}

// ---- per-column reductions, transposes, cumsum ----

// Column sums and column maxima of [M, N]: 64 x 32 tiles transposed, row-reduced, carried over
// a range loop down the rows; rows past the tensor masked to -1e30 for the max.
PK_KERNEL void col_sum_max(Tensor<f32, 2> x, Tensor<f32, 2> csum, Tensor<f32, 2> cmax) {
  for (auto n : tiles(x.cols(), {32})) {
    auto s = zeros<f32, 32, 1>();
    auto mx = zeros<f32, 32, 1>() - 1e30f;
    for (auto m : range(0, x.rows(), 64)) {
      auto t = load<64, 32>(x, m, n);
      s = s + row_sum(transpose(t));
      mx = max(mx, row_max(transpose(where(row_index<64, 32>(m) < x.rows(), t, -1e30f))));
    }
    store(csum, s, n, 0);
    store(cmax, mx, n, 0);
  }
}

// Row max and min of all-negative values in 48 x 80 tiles, one result per tile (the padding
// of partial tiles loads as zero and counts).
PK_KERNEL void neg_row_extrema(Tensor<f32, 2> x, Tensor<f32, 2> hi, Tensor<f32, 2> lo) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {48, 80})) {
    auto t = load<48, 80>(x, m, n) - 3.0f;
    store(hi, row_max(t), m, n / 80);
    store(lo, row_min(t), m, n / 80);
  }
}

// Transpose of bf16 in 16 x 48 tiles with a per-column scale (a 1 x 48 row of x's columns
// becomes a 48 x 1 column of y's rows).
PK_KERNEL void transpose_scale_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> sc, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48})) {
    auto t = load<16, 48>(x, m, n) * load<1, 48>(sc, 0, n);
    store(y, transpose(t), n, m);
  }
}

// Exclusive prefix sums of a 1-D f32 tensor within 96-element tiles, plus the tile total
// broadcast (a one-element tile).
PK_KERNEL void cumsum_exclusive(Tensor<f32, 1> x, Tensor<f32, 1> ex, Tensor<f32, 1> frac) {
  for (auto i : tiles(x.size(), {96})) {
    auto t = abs(load<96>(x, i));
    auto c = cumsum(t);
    store(ex, c - t, i);
    store(frac, c / (cumsum(t + 0.0f) - t + t + 1.0f), i);
  }
}

// Integer running offsets in i64: counts (|v| % 7) turned into exclusive offsets within tiles of
// 256, then added to the tile's base (i times 1000).
PK_KERNEL void offsets_i64(Tensor<i64, 1> v, Tensor<i64, 1> off) {
  for (auto i : tiles(v.size(), {256})) {
    auto cnt = abs(load<256>(v, i)) % 7;
    store(off, cumsum(cnt) - cnt + i * 1000, i);
  }
}

// ---- element-wise, masks, integers ----

// Hard-swish in f16 by a chain of comparisons and selects.
PK_KERNEL void hard_swish_f16(Tensor<f16, 2> x, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 96})) {
    auto t = cast<f32>(load<32, 96>(x, m, n)) * 2.0f;
    auto mid = t * (t + 3.0f) / 6.0f;
    store(y, cast<f16>(where(t <= -3.0f, 0.0f, where(t >= 3.0f, t, mid))), m, n);
  }
}

// Band mask: keep |row - col| <= w (w an index scalar), else a fill value; bf16.
PK_KERNEL void band_mask(Tensor<bf16, 2> s, Tensor<bf16, 2> y, index w, float fill) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {32, 64})) {
    auto d = abs(col_index<32, 64>(n) - row_index<32, 64>(m));
    store(y, where(d <= float(w), load<32, 64>(s, m, n), cast<bf16>(zeros<f32, 32, 64>() + fill)), m, n);
  }
}

// i32 arithmetic with negative values: floor-style bucketing and wrapping products.
PK_KERNEL void int_bucket(Tensor<i32, 2> a, Tensor<i32, 2> b, Tensor<i32, 2> q, Tensor<i32, 2> r, index d) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 48})) {
    auto x = load<16, 48>(a, m, n);
    auto y = load<16, 48>(b, m, n);
    store(q, x / d - where(x % d < 0, 1 + zeros<i32, 16, 48>(), zeros<i32, 16, 48>()), m, n);
    store(r, min(max(x * y, -1000), 1000) - (x % y), m, n);
  }
}

// i64 hashes past 2^32 from i32 ids, and the bucket (hash % buckets) as i32.
PK_KERNEL void id_hash(Tensor<i32, 1> ids, Tensor<i64, 1> h, Tensor<i32, 1> bucket, index buckets) {
  for (auto i : tiles(ids.size(), {512})) {
    auto v = cast<i64>(load<512>(ids, i)) * 2654435761 + 12345;
    store(h, v, i);
    store(bucket, cast<i32>(abs(v) % buckets), i);
  }
}

// Float to int casts that saturate (large products) and NaN to 0 (log of a negative).
PK_KERNEL void cast_saturate(Tensor<f32, 1> x, Tensor<i32, 1> big, Tensor<i32, 1> nan0) {
  for (auto i : tiles(x.size(), {128})) {
    auto t = load<128>(x, i);
    store(big, cast<i32>(t * 3e9f), i);
    store(nan0, cast<i32>(log(t) * 100.0f), i);
  }
}

// Scalar math: y = x * a + b where a and b are computed once from float and size scalars.
PK_KERNEL void scalar_affine(Tensor<f32, 2> x, Tensor<f32, 2> y, float t, index k) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48})) {
    const float a = exp(-t) * sqrt(float(x.cols())) / float(x.rows());
    const float b = tanh(t) + float(k) / 4.0f - log(2.0f + t * t);
    store(y, load<16, 48>(x, m, n) * a + b, m, n);
  }
}

// Index arithmetic on tile origins with a run-time divisor: y = x + (i / d) + 0.001 * (i % d).
PK_KERNEL void origin_div(Tensor<f32, 1> x, Tensor<f32, 1> y, index d) {
  for (auto i : tiles(x.size(), {96})) {
    const float q = i / d;
    const float r = i % d;
    store(y, load<96>(x, i) + q + r * 0.001f, i);
  }
}

// 3-D tile loop: [B, S, D] activations plus a [1, 1, D] bias, gelu_erf, 16 x 64 tiles of the
// trailing dimensions (the bias as a 1 x 64 row of its trailing dimensions).
PK_KERNEL void bias_gelu_3d(Tensor<f32, 3> x, Tensor<f32, 3> bias, Tensor<f32, 3> y) {
  for (auto [b, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 64}))
    store(y, gelu_erf(load<16, 64>(x, b, s, d) + load<1, 64>(bias, 0, 0, d)), b, s, d);
}

// Broadcasts of any rank: a [1, 1, D] bias over 4 x 16 x 64 tiles of [B, S, D], each tile
// minus its rows' first element ([4, 16, 1]), times a per-batch row ([4, 1, 64] of w [B, 1, D]).
PK_KERNEL void broadcast_3d(Tensor<f32, 3> x, Tensor<f32, 3> bias, Tensor<f32, 3> w, Tensor<f32, 3> y) {
  for (auto [b, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {4, 16, 64})) {
    auto t = load<4, 16, 64>(x, b, s, d) + load<1, 1, 64>(bias, 0, 0, d);
    store(y, (t - load<4, 16, 1>(x, b, s, 0)) * load<4, 1, 64>(w, b, 0, d), b, s, d);
  }
}

// Outer products: y = u[r] * v[c] - v[c] (an [M, 1] column times a [1, N] row, both ways).
PK_KERNEL void outer_product(Tensor<f32, 2> u, Tensor<f32, 2> v, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {32, 64}))
    store(y, load<32, 1>(u, m, 0) * load<1, 64>(v, 0, n) - load<1, 64>(v, 0, n) * 1.0f, m, n);
}

// Row and column broadcasts in 16 x 48 tiles: y = (x - mu[r]) * inv[r] * g[c] (f32).
PK_KERNEL void row_col_broadcast(Tensor<f32, 2> x, Tensor<f32, 2> mu, Tensor<f32, 2> inv, Tensor<f32, 2> g,
                                 Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48}))
    store(y, (load<16, 48>(x, m, n) - load<16, 1>(mu, m, 0)) * load<16, 1>(inv, m, 0) * load<1, 48>(g, 0, n), m, n);
}

// Gather rows by i64 ids computed in the kernel ((id * 3 + 1) % rows), scaled by a per-row weight.
PK_KERNEL void gather_scaled(Tensor<i64, 1> ids, Tensor<f32, 2> table, Tensor<f32, 2> w, Tensor<f32, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 96}))
    store(out, load_rows<16, 96>(table, (load<16>(ids, t) * 3 + 1) % table.rows(), n) * load<16, 1>(w, t, 0), t, n);
}

// ---- GEMMs ----

// Template GEMM, f16, B stored [K, N]: C = relu(A * B + bias) + R (f16 out).
PK_KERNEL void gemm_f16_bias_relu_res(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> bias, Tensor<f16, 2> r,
                                      Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, cast<f16>(max(acc + cast<f32>(load<1, 128>(bias, 0, n)), 0.0f) + cast<f32>(load<128, 128>(r, m, n))), m, n);
  }
}

// Template GEMM, bf16, B stored [N, K]: C = silu(alpha * A * B^T * s[r]) (row scales s as f32).
PK_KERNEL void gemm_t_bf16_rowscale_silu(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> s, Tensor<bf16, 2> c,
                                         float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), load<256, 32>(b, n, k), acc);
    store(c, cast<bf16>(silu(acc * alpha * load<64, 1>(s, m, 0))), m, n);
  }
}

// General-path GEMM (f32 output, a row reduction of the accumulator): bf16 A * B with bias and
// tanh, and each tile row's sum of the result into rs[m, n / 64].
PK_KERNEL void gemm_bias_tanh_rowsum(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> bias, Tensor<f32, 2> c,
                                     Tensor<f32, 2> rs) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {32, 64})) {
    auto acc = zeros<f32, 32, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<32, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    auto o = tanh(acc + load<1, 64>(bias, 0, n));
    store(c, o, m, n);
    store(rs, row_sum(o), m, n / 64);
  }
}

// General-path mma_t in f16 with odd M, N, K (tails everywhere): C = A * B^T * scale + R (f32).
PK_KERNEL void gemm_t_f16_odd(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> r, Tensor<f32, 2> c, float scale) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {48, 80})) {
    auto acc = zeros<f32, 48, 80>();
    for (auto k : range(0, a.cols(), 16)) acc = mma_t(load<48, 16>(a, m, k), load<80, 16>(b, n, k), acc);
    store(c, acc * scale + load<48, 80>(r, m, n), m, n);
  }
}

// Small single-tile attention on the general path: S <= 64 rows, head dim 64, bf16, with a
// causal mask and the softmax in registers between two mmas.
PK_KERNEL void tiny_attention(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<f32, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto s = mma_t(load<64, 64>(q, m, 0), load<64, 64>(k, 0, 0), zeros<f32, 64, 64>()) * scale;
    auto keep = (col_index<64, 64>(0) <= row_index<64, 64>(m)) * (col_index<64, 64>(0) < k.rows());
    auto z = where(keep, s, -1e30f);
    auto p = exp(z - row_max(z));
    auto acc = mma(cast<bf16>(p), load<64, 64>(v, 0, 0), zeros<f32, 64, 64>());
    store(o, acc / row_sum(p), m, 0);
  }
}

// SwiGLU from one fused [M, 2F] projection: y = silu(x[:, :F]) * x[:, F:] with F = 160, bf16,
// 16 x 80 tiles (two column tiles per half).
PK_KERNEL void swiglu_split(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 80})) {
    auto g = cast<f32>(load<16, 80>(x, m, n));
    auto u = cast<f32>(load<16, 80>(x, m, n + y.cols()));
    store(y, cast<bf16>(silu(g) * u), m, n);
  }
}

// A tiles() loop inside another: each block walks all column tiles of its row tile (y = 2x + 1).
PK_KERNEL void nested_tiles(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : tiles(x.cols(), {64})) store(y, load<16, 64>(x, m, n) * 2.0f + 1.0f, m, n);
}

// A float local carried by a range loop: y[:, 0:64] = sum over k < 4 of x[:, 64k:64k+64] / 2^k.
PK_KERNEL void decaying_sum(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    float w = 1.0f;
    auto acc = zeros<f32, 16, 64>();
    for (auto k : range(0, 4)) {
      acc = acc + load<16, 64>(x, m, k * 64) * w;
      w = w * 0.5f;
    }
    store(y, acc, m, 0);
  }
}

// A range loop whose step is a kernel argument: y[:, 0:64] = sum over k = 0, s, 2s, ... below
// x.cols() of x[:, k:k+64] (clipped at the last column). A step <= 0 skips the loop, an error.
PK_KERNEL void strided_sum(Tensor<f32, 2> x, Tensor<f32, 2> y, index s) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 64>();
    for (auto k : range(0, x.cols(), s)) acc = acc + load<16, 64>(x, m, k);
    store(y, acc, m, 0);
  }
}

// The same from column 16: a run-time step near 2^63 takes one trip (k = 16) and stops, where
// k += s wrapped k negative and ran on (2^63 - 8: a second trip at k = 0).
PK_KERNEL void offset_strided_sum(Tensor<f32, 2> x, Tensor<f32, 2> y, index s) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 64>();
    for (auto k : range(16, x.cols(), s)) acc = acc + load<16, 64>(x, m, k);
    store(y, acc, m, 0);
  }
}

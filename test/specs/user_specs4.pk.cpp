// A fourth user-written spec set: single-GPU kernels a model needs that the earlier sets do not
// cover, written from docs/language.md alone: template GEMMs with f16 operands and odd tile
// shapes, general-path GEMMs feeding row softmax / norms / two accumulators, fused QKV splits,
// rotary embedding with tables and position offsets, two-pass layer norm over column blocks,
// cross-entropy and argmax over vocabulary blocks, int8-style quantisation, sliding-window and
// ALiBi masks, position ids from cumsum, T5-style relative buckets, hash dropout masks, KV-cache
// appends, reshapes through trailing-dimension tiles, every math function on tiles and scalars.
// test/gpu/user_specs4_test.cu runs the kernels at world size 1 against float64 references;
// test/Compile/user_specs4.test compiles the set to an sm_90a cubin.
#include <pk/spec.h>
using namespace pk;

// ---- template GEMMs (Hopper template) ----

// f16 A * B (B stored [K, N]), 64 x 64 tiles stepping K by 32: gelu(acc + bias) + residual, f16.
PK_KERNEL void gemm_f16_kn_gelu_res(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> bias, Tensor<f16, 2> r,
                                    Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(c, cast<f16>(gelu(acc + cast<f32>(load<1, 64>(bias, 0, n))) + cast<f32>(load<64, 64>(r, m, n))), m, n);
  }
}

// f16 A * B^T, 128 x 128 tiles stepping K by 64: silu(alpha * acc), bf16 output.
PK_KERNEL void gemm_t_f16_silu_bf16out(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<bf16, 2> c, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, cast<bf16>(silu(acc * alpha)), m, n);
  }
}

// bf16 A * B^T, 64 x 256 tiles stepping K by 16 (shared-memory operands): a per-row f32 scale
// times the accumulator plus an f32 bias row, f16 output.
PK_KERNEL void gemm_t_64x256_rowscale_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> s,
                                           Tensor<f32, 2> bias, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 16)) acc = mma_t(load_smem<64, 16>(a, m, k), load_smem<256, 16>(b, n, k), acc);
    store(c, cast<f16>(acc * load<64, 1>(s, m, 0) + load<1, 256>(bias, 0, n)), m, n);
  }
}

// ---- general-path GEMMs ----

// f16 A * B into f32 in 16 x 16 tiles, K by 16 with a tail, minus a residual (f32).
PK_KERNEL void gemm_f16_16x16_f32(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> r, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {16, 16})) {
    auto acc = zeros<f32, 16, 16>();
    for (auto k : range(0, a.cols(), 16)) acc = mma(load<16, 16>(a, m, k), load<16, 16>(b, k, n), acc);
    store(c, acc - load<16, 16>(r, m, n), m, n);
  }
}

// GEMM then row softmax: logits = A * B (bf16, N <= 128 columns in one tile), the padding
// columns masked, softmax into f32 probabilities.
PK_KERNEL void gemm_row_softmax(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> p) {
  for (auto m : tiles(a.rows(), {32})) {
    auto acc = zeros<f32, 32, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<32, 32>(a, m, k), load<32, 128>(b, k, 0), acc);
    auto t = where(col_index<32, 128>(0) < b.cols(), acc, -1e30f);
    auto e = exp(t - row_max(t));
    store(p, e / row_sum(e), m, 0);
  }
}

// GEMM + residual into bf16 h, and each row tile's sum of squares of the rounded h (for a
// following RMSNorm) into ss[m, n / 64]: a second store keeps it on the general path.
PK_KERNEL void gemm_res_sumsq(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> r, Tensor<bf16, 2> h,
                              Tensor<f32, 2> ss) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {32, 64})) {
    auto acc = zeros<f32, 32, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<32, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    auto hb = cast<bf16>(acc + cast<f32>(load<32, 64>(r, m, n)));
    store(h, hb, m, n);
    auto hf = cast<f32>(hb);
    store(ss, row_sum(hf * hf), m, n / 64);
  }
}

// Gated MLP in one loop: two accumulators over the same A tile, y = silu(A Wg) * (A Wu), bf16.
PK_KERNEL void gated_mlp_two_acc(Tensor<bf16, 2> a, Tensor<bf16, 2> wg, Tensor<bf16, 2> wu, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), wg.cols(), {32, 32})) {
    auto g = zeros<f32, 32, 32>();
    auto u = zeros<f32, 32, 32>();
    for (auto k : range(0, a.cols(), 32)) {
      auto at = load<32, 32>(a, m, k);
      g = mma(at, load<32, 32>(wg, k, n), g);
      u = mma(at, load<32, 32>(wu, k, n), u);
    }
    store(y, cast<bf16>(silu(g) * u), m, n);
  }
}

// Attention scores with an ALiBi bias on the general path: s = scale * Q K^T - slope * (r - c)
// for c <= r, -inf-like above the diagonal; softmax over S <= 64 keys; f32 probabilities.
PK_KERNEL void alibi_scores_softmax(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<f32, 2> p, float scale, float slope) {
  for (auto m : tiles(q.rows(), {16})) {
    auto s = mma_t(load<16, 64>(q, m, 0), load<64, 64>(k, 0, 0), zeros<f32, 16, 64>()) * scale;
    auto r = row_index<16, 64>(m);
    auto c = col_index<16, 64>(0);
    auto t = where(c <= r, s - slope * (r - c), -1e30f);
    auto e = exp(t - row_max(t));
    store(p, e / row_sum(e), m, 0);
  }
}

// ---- projections, rotary, caches ----

// Fused QKV split: x is [M, 3D] with D = 64; q = x[:, 0:D] * scale, k = x[:, D:2D], v = x[:, 2D:3D].
PK_KERNEL void qkv_split(Tensor<bf16, 2> x, Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, float scale) {
  for (auto m : tiles(x.rows(), {24})) {
    store(q, cast<bf16>(cast<f32>(load<24, 64>(x, m, 0)) * scale), m, 0);
    store(k, load<24, 64>(x, m, 64), m, 0);
    store(v, load<24, 64>(x, m, 128), m, 0);
  }
}

// Rotary embedding of heads packed in columns: x is [S, H * 64] f16, cos / sin tables [P, 32]
// f32 read at position pos0 + row; halves of 32 rotated; the head loop bound a kernel argument.
PK_KERNEL void rotary_tables_offset(Tensor<f16, 2> x, Tensor<f32, 2> cs, Tensor<f32, 2> sn, Tensor<f16, 2> y,
                                    index heads, index pos0) {
  for (auto [m, h] : tiles(x.rows(), heads, {16, 1})) {
    auto x1 = cast<f32>(load<16, 32>(x, m, h * 64));
    auto x2 = cast<f32>(load<16, 32>(x, m, h * 64 + 32));
    auto c = load<16, 32>(cs, pos0 + m, 0);
    auto s = load<16, 32>(sn, pos0 + m, 0);
    store(y, cast<f16>(x1 * c - x2 * s), m, h * 64);
    store(y, cast<f16>(x2 * c + x1 * s), m, h * 64 + 32);
  }
}

// KV-cache append: new rows knew [B, T, D] stored into cache [B, Smax, D] at position pos; as
// documented, a partial last 8-row tile's zero rows land in the cache too (rows pos + T up to
// the next multiple of 8 past pos), since a store clips at the destination's edges.
PK_KERNEL void kv_cache_append(Tensor<bf16, 3> knew, Tensor<bf16, 3> cache, index pos) {
  for (auto [b, t] : tiles(knew.dim(0), knew.dim(1), {1, 8})) store(cache, load<8, 64>(knew, b, t, 0), b, pos + t, 0);
}

// Reshape [B, S, D] -> [B * S, D] through 1 x 64 trailing-dimension tiles (D < 64), times 2.
// (Taller tiles would store their padding rows over the next batch's rows.)
PK_KERNEL void reshape_3d_to_2d(Tensor<f32, 3> x, Tensor<f32, 2> y) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {1, 1})) store(y, load<1, 64>(x, b, s, 0) * 2.0f, b * x.dim(1) + s, 0);
}

// Reshape [B * S, D] -> [B, S, D]: y[b, s, :] = x[b * S + s, :] + 1 in 16 x 64 tiles (D < 64);
// the rows a partial tile reads past batch b belong to batch b + 1 and are clipped by y's S.
PK_KERNEL void reshape_2d_to_3d(Tensor<f32, 2> x, Tensor<f32, 3> y) {
  for (auto [b, s] : tiles(y.dim(0), y.dim(1), {1, 16}))
    store(y, load<16, 64>(x, b * y.dim(1) + s, 0) + 1.0f, b, s, 0);
}

// ---- norms ----

// Two-pass LayerNorm with weight and bias over rows longer than one tile (f32): a range loop
// sums, a second sums squared deviations (padding masked), a third writes the output.
PK_KERNEL void layer_norm_two_pass(Tensor<f32, 2> x, Tensor<f32, 2> w, Tensor<f32, 2> b, Tensor<f32, 2> y,
                                   float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    float inv_n = 1.0f / float(x.cols());
    auto s = zeros<f32, 8, 1>();
    for (auto k : range(0, x.cols(), 128)) s = s + row_sum(load<8, 128>(x, m, k));
    auto mu = s * inv_n;
    auto v = zeros<f32, 8, 1>();
    for (auto k : range(0, x.cols(), 128)) {
      auto d = where(col_index<8, 128>(k) < x.cols(), load<8, 128>(x, m, k) - mu, 0.0f);
      v = v + row_sum(d * d);
    }
    auto rstd = rsqrt(v * inv_n + eps);
    for (auto k : range(0, x.cols(), 128))
      store(y, (load<8, 128>(x, m, k) - mu) * rstd * load<1, 128>(w, 0, k) + load<1, 128>(b, 0, k), m, k);
  }
}

// RMSNorm of bf16 rows (N <= 384, one masked tile) with f32 accumulation and a bf16 weight,
// 1 / N from the size; the normalised value rounded to bf16 before the weight (as HF does).
PK_KERNEL void rms_norm_bf16_hf(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = cast<f32>(load<16, 384>(x, m, 0));
    auto n = cast<bf16>(t * rsqrt(row_sum(t * t) / float(x.cols()) + eps));
    store(y, cast<bf16>(cast<f32>(n) * cast<f32>(load<1, 384>(w, 0, 0))), m, 0);
  }
}

// LayerNorm over the last dimension of [B, S, D] (D <= 128) with weight and bias [1, 1, D]:
// 4 x 128 tiles of the trailing dimensions, the padding masked out of the variance; f16.
PK_KERNEL void layer_norm_3d_f16(Tensor<f16, 3> x, Tensor<f16, 3> w, Tensor<f16, 3> b, Tensor<f16, 3> y, float eps) {
  for (auto [bb, s] : tiles(x.dim(0), x.dim(1), {1, 4})) {
    auto t = cast<f32>(load<4, 128>(x, bb, s, 0));
    auto in = col_index<4, 128>(0) < x.dim(2);
    auto mu = row_sum(t) / float(x.dim(2));
    auto d = where(in, t - mu, 0.0f);
    auto r = d * rsqrt(row_sum(d * d) / float(x.dim(2)) + eps);
    store(y, cast<f16>(r * cast<f32>(load<1, 128>(w, 0, 0, 0)) + cast<f32>(load<1, 128>(b, 0, 0, 0))), bb, s, 0);
  }
}

// ---- softmax family, losses, argmax ----

// log-softmax of f16 logits into f32 over rows longer than one tile: a range loop carries the
// running max and sum (online), a second writes x - max - log(sum).
PK_KERNEL void log_softmax_online_f16(Tensor<f16, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {8})) {
    auto mx = zeros<f32, 8, 1>() - 1e30f;
    auto l = zeros<f32, 8, 1>();
    for (auto k : range(0, x.cols(), 96)) {
      auto t = where(col_index<8, 96>(k) < x.cols(), cast<f32>(load<8, 96>(x, m, k)), -1e30f);
      auto nm = max(mx, row_max(t));
      l = l * exp(mx - nm) + row_sum(exp(t - nm));
      mx = nm;
    }
    auto lse = mx + log(l);
    for (auto k : range(0, x.cols(), 96)) store(y, cast<f32>(load<8, 96>(x, m, k)) - lse, m, k);
  }
}

// Cross-entropy per row: loss = logsumexp(x) - x[label] over a vocabulary walked in 128-column
// blocks; labels an i32 [M, 1] column compared with the column index.
PK_KERNEL void cross_entropy_rows(Tensor<f32, 2> x, Tensor<i32, 2> labels, Tensor<f32, 2> loss) {
  for (auto m : tiles(x.rows(), {16})) {
    auto lab = cast<f32>(load<16, 1>(labels, m, 0));
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    auto l = zeros<f32, 16, 1>();
    auto picked = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), 128)) {
      auto c = col_index<16, 128>(k);
      auto raw = load<16, 128>(x, m, k);
      auto t = where(c < x.cols(), raw, -1e30f);
      auto nm = max(mx, row_max(t));
      l = l * exp(mx - nm) + row_sum(exp(t - nm));
      mx = nm;
      picked = picked + row_sum(where(c == lab, raw, 0.0f));
    }
    store(loss, mx + log(l) - picked, m, 0);
  }
}

// Top-1 over rows: the maximum and the first column holding it (as i32), walked in 64-column
// blocks carrying the best value and index; padding masked.
PK_KERNEL void argmax_rows(Tensor<f32, 2> x, Tensor<f32, 2> best, Tensor<i32, 2> idx) {
  for (auto m : tiles(x.rows(), {16})) {
    auto bv = zeros<f32, 16, 1>() - 1e30f;
    auto bi = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), 64)) {
      auto c = col_index<16, 64>(k);
      auto t = where(c < x.cols(), load<16, 64>(x, m, k), -1e30f);
      auto tm = row_max(t);
      auto ti = row_min(where(t == tm, c, 1e30f));
      bi = where(tm > bv, ti, bi);
      bv = max(bv, tm);
    }
    store(best, bv, m, 0);
    store(idx, cast<i32>(bi), m, 0);
  }
}

// MoE router over E = 8 experts: softmax probabilities, the top-1 probability and expert (i32).
PK_KERNEL void router_top1(Tensor<bf16, 2> logits, Tensor<f32, 2> probs, Tensor<f32, 2> top_p, Tensor<i32, 2> top_e) {
  for (auto m : tiles(logits.rows(), {32})) {
    auto t = cast<f32>(load<32, 8>(logits, m, 0));
    auto e = exp(t - row_max(t));
    auto p = e / row_sum(e);
    store(probs, p, m, 0);
    auto pm = row_max(p);
    store(top_p, pm, m, 0);
    store(top_e, cast<i32>(row_min(where(p == pm, col_index<32, 8>(0), 100.0f))), m, 0);
  }
}

// Sliding-window causal softmax: keys c with r - w < c <= r (w an index argument), bf16 scores.
PK_KERNEL void sliding_window_softmax(Tensor<bf16, 2> s, Tensor<bf16, 2> p, index w) {
  for (auto m : tiles(s.rows(), {16})) {
    auto r = row_index<16, 256>(m);
    auto c = col_index<16, 256>(0);
    auto keep = (c <= r) * (c > r - w);
    auto t = where(keep, cast<f32>(load<16, 256>(s, m, 0)), -1e30f);
    auto e = exp(t - row_max(t));
    store(p, cast<bf16>(e / row_sum(e)), m, 0);
  }
}

// Gemma-style logit soft-capping in f16: cap * tanh(x / cap).
PK_KERNEL void softcap_f16(Tensor<f16, 2> x, Tensor<f16, 2> y, float cap) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 128}))
    store(y, cast<f16>(tanh(cast<f32>(load<64, 128>(x, m, n)) / cap) * cap), m, n);
}

// ---- quantisation ----

// Per-tensor int8-style quantisation: q = trunc(clamp(x / scale, -127, 127)) as i32 and the
// dequantised q * scale as bf16.
PK_KERNEL void quant_int8_clamp(Tensor<f32, 2> x, Tensor<i32, 2> q, Tensor<bf16, 2> dq, float scale) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64})) {
    auto qi = cast<i32>(min(max(load<32, 64>(x, m, n) / scale, -127.0f), 127.0f));
    store(q, qi, m, n);
    store(dq, cast<bf16>(cast<f32>(qi) * scale), m, n);
  }
}

// Group-wise dequantisation: int weights q [N, K] (i32 in -8..7) with one f32 scale per row
// and group of 32 columns (scales [N, K / 32]); bf16 output.
PK_KERNEL void dequant_groupwise(Tensor<i32, 2> q, Tensor<f32, 2> scales, Tensor<bf16, 2> w) {
  for (auto [n, k] : tiles(q.rows(), q.cols(), {16, 32}))
    store(w, cast<bf16>(cast<f32>(load<16, 32>(q, n, k)) * load<16, 1>(scales, n, k / 32)), n, k);
}

// ---- integers, masks ----

// Position ids from a 0/1 attention mask (i32, 1-D, one sequence): pos = cumsum(mask) - 1
// where the mask is 1, else 0 (left padding), one tile of up to 1024 tokens.
PK_KERNEL void position_ids(Tensor<i32, 1> mask, Tensor<i32, 1> pos) {
  for (auto i : tiles(mask.size(), {1024})) {
    auto mk = load<1024>(mask, i);
    store(pos, where(mk == 1, cumsum(mk) - 1, 0), i);
  }
}

// T5-style relative position buckets (bidirectional): rel = c - r; small |rel| < 8 is its own
// bucket, larger ones 8 + min(|rel| / 4, 7); plus 16 for rel > 0. i32 [Q, K].
PK_KERNEL void relative_buckets(Tensor<i32, 2> out) {
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 32})) {
    auto rel = cast<i32>(col_index<16, 32>(n)) - cast<i32>(row_index<16, 32>(m));
    auto a = abs(rel);
    auto b = where(a < 8, a, 8 + min(a / 4, 7));
    store(out, where(rel > 0, b + 16, b), m, n);
  }
}

// Hash-based dropout: keep element (r, c) where ((r * 1103515245 + c * 12345 + seed) mod 2^31)
// % 100 >= p_drop (i32 wrapping arithmetic), scaled by 1 / (1 - p); bf16.
PK_KERNEL void hash_dropout(Tensor<bf16, 2> x, Tensor<bf16, 2> y, index seed, index p_drop, float inv_keep) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto r = cast<i32>(row_index<16, 64>(m));
    auto c = cast<i32>(col_index<16, 64>(n));
    auto h = r * 1103515245 + c * 12345 + seed;
    auto u = abs(h % 100);
    store(y, cast<bf16>(where(u >= p_drop, cast<f32>(load<16, 64>(x, m, n)) * inv_keep, 0.0f)), m, n);
  }
}

// ---- element-wise, math ----

// Every tile math function on one input, each into its own plane of y [11, M, N].
PK_KERNEL void math_planes(Tensor<f32, 2> x, Tensor<f32, 3> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48})) {
    auto t = load<16, 48>(x, m, n);
    auto p = abs(t) + 0.25f;
    store(y, sqrt(p), 0, m, n);
    store(y, rsqrt(p), 1, m, n);
    store(y, exp(t), 2, m, n);
    store(y, log(p), 3, m, n);
    store(y, tanh(t), 4, m, n);
    store(y, sigmoid(t), 5, m, n);
    store(y, silu(t), 6, m, n);
    store(y, gelu(t), 7, m, n);
    store(y, gelu_erf(t), 8, m, n);
    store(y, sin(t) + cos(t), 9, m, n);
    store(y, pow(p, 1.5f), 10, m, n);
  }
}

// Every scalar math function on two float arguments, combined into one scale: y = x * s.
PK_KERNEL void scalar_math_all(Tensor<f32, 1> x, Tensor<f32, 1> y, float a, float b) {
  for (auto i : tiles(x.size(), {200})) {
    float s = sqrt(a) + rsqrt(a) + exp(-a) + log(a) + tanh(b) + sigmoid(b) + silu(b) + gelu(b) + gelu_erf(b);
    float t = sin(b) * cos(a) + abs(-b) + pow(a, 3.0f) + max(a, b) - min(a, b);
    store(y, load<200>(x, i) * (s + t / float(x.size())), i);
  }
}

// 1-D f16 tiles of 100 with a tail: y = x * w where w is a 1-D table of 100 repeated (i % 100).
PK_KERNEL void tile_1d_f16_table(Tensor<f16, 1> x, Tensor<f16, 1> w, Tensor<f16, 1> y) {
  for (auto i : tiles(x.size(), {100})) store(y, cast<f16>(cast<f32>(load<100>(x, i)) * cast<f32>(load<100>(w, 0))), i);
}

// Transpose of f16 in 64 x 16 tiles into f32 with a per-row (of y) bias column: y = x^T + bias.
PK_KERNEL void transpose_f16_bias(Tensor<f16, 2> x, Tensor<f32, 2> bias, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 16}))
    store(y, cast<f32>(transpose(load<64, 16>(x, m, n))) + load<16, 1>(bias, n, 0), n, m);
}

// Exponential moving average along column blocks carrying a tile: ema = beta * ema + (1 - beta)
// * x[:, block], every block's ema stored (f32, 8 x 32 tiles).
PK_KERNEL void ema_blocks(Tensor<f32, 2> x, Tensor<f32, 2> y, float beta) {
  for (auto m : tiles(x.rows(), {8})) {
    auto ema = zeros<f32, 8, 32>();
    for (auto k : range(0, x.cols(), 32)) {
      ema = ema * beta + load<8, 32>(x, m, k) * (1.0f - beta);
      store(y, ema, m, k);
    }
  }
}

// A range loop starting at a run-time column (start) with a run-time step: y[:, 0:32] = sum of
// x[:, k:k+32] for k = start, start + step, ... below x.cols().
PK_KERNEL void range_runtime_start(Tensor<f32, 2> x, Tensor<f32, 2> y, index start, index step) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 32>();
    for (auto k : range(start, x.cols(), step)) acc = acc + load<16, 32>(x, m, k);
    store(y, acc, m, 0);
  }
}

// Residual add with a learned per-column gate in bf16 and an f32 copy: h = x + g * f(x) with
// f = gelu_erf; both h (bf16) and h as f32 of the rounded value.
PK_KERNEL void gated_residual(Tensor<bf16, 2> x, Tensor<bf16, 2> g, Tensor<bf16, 2> h, Tensor<f32, 2> hf) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {128, 128})) {
    auto t = cast<f32>(load<128, 128>(x, m, n));
    auto hb = cast<bf16>(t + cast<f32>(load<1, 128>(g, 0, n)) * gelu_erf(t));
    store(h, hb, m, n);
    store(hf, cast<f32>(hb), m, n);
  }
}

// ---- more combinations ----

// Greedy decoding step: the argmax token of each row of f32 logits (V <= 128, padding masked)
// and its bf16 embedding row gathered by that id (load_rows with ids from row reductions).
PK_KERNEL void greedy_next_embed(Tensor<f32, 2> logits, Tensor<bf16, 2> emb, Tensor<bf16, 2> out) {
  for (auto m : tiles(logits.rows(), {16})) {
    auto c = col_index<16, 128>(0);
    auto t = where(c < logits.cols(), load<16, 128>(logits, m, 0), -1e30f);
    auto id = cast<i32>(row_min(where(t == row_max(t), c, 1e30f)));
    store(out, load_rows<16, 64>(emb, id, 0), m, 0);
  }
}

// A two-layer MLP on one row tile: h = silu(x W1) rounded to bf16, y = h W2 (f32); x [M, 64],
// W1 [64, 64], W2 [64, 32], one mma per layer without a K loop.
PK_KERNEL void mlp_two_layer_tile(Tensor<bf16, 2> x, Tensor<bf16, 2> w1, Tensor<bf16, 2> w2, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {32})) {
    auto h = mma(load<32, 64>(x, m, 0), load<64, 64>(w1, 0, 0), zeros<f32, 32, 64>());
    store(y, mma(cast<bf16>(silu(h)), load<64, 32>(w2, 0, 0), zeros<f32, 32, 32>()), m, 0);
  }
}

// fp8 e4m3 A * B^T on the general path (32 x 32 tiles, K by 32) times a per-tensor f32 scale
// read from device memory (scale.at(0)) and the scalar argument b_scale.
PK_KERNEL void fp8_gemm_t_scaled(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 1> a_scale, Tensor<f32, 2> c,
                                 float b_scale) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {32, 32})) {
    auto acc = zeros<f32, 32, 32>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<32, 32>(a, m, k), load<32, 32>(b, n, k), acc);
    store(c, acc * (a_scale.at(0) * b_scale), m, n);
  }
}

// f16 A * B^T with shared-memory operands in 48 x 48 tiles, K by 16 (general path), times alpha.
PK_KERNEL void gemm_t_smem_48(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> c, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {48, 48})) {
    auto acc = zeros<f32, 48, 48>();
    for (auto k : range(0, a.cols(), 16)) acc = mma_t(load_smem<48, 16>(a, m, k), load_smem<48, 16>(b, n, k), acc);
    store(c, acc * alpha, m, n);
  }
}

// Tiny odd tiles (3 x 5) with tails in both dimensions: y = x * 3 - col_index.
PK_KERNEL void odd_tiles_3x5(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {3, 5})) store(y, load<3, 5>(x, m, n) * 3.0f - col_index<3, 5>(n), m, n);
}

// L2 normalisation of long rows in one 1 x 8192 tile per row (N < 8192).
PK_KERNEL void long_row_l2norm(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {1})) {
    auto t = load<1, 8192>(x, m, 0);
    store(y, t * rsqrt(row_sum(t * t)), m, 0);
  }
}

// MoE combine: each token row of x [T, 64], weighted by its gate g [T, 1], is added into
// y[ids[t]] (duplicates all arrive; ids outside y are dropped).
PK_KERNEL void moe_combine_add(Tensor<f32, 2> x, Tensor<f32, 2> g, Tensor<i32, 1> ids, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) store_add_rows(y, load<16, 64>(x, m, 0) * load<16, 1>(g, m, 0), load<16>(ids, m), 0);
}

// A tile loop bounded by a count read from device memory: rows below counts[0] (in whole 16-row
// tiles, the last clipped at the tensor's edge, not at the count) get x + 1.
PK_KERNEL void count_bounded_rows(Tensor<i32, 1> counts, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(counts.at(0), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n) + 1.0f, m, n);
}

// bf16 minus a float scalar close to its values, no casts: y = x - c. The language reference says
// tiles compute in fp32 and round to T after each op, so x = 1000, c = 1000.4 gives bf16(-0.4).
// (pkc once splatted c into a bf16 tile first, rounding it to 1000: the result was 0.)
PK_KERNEL void bf16_minus_scalar(Tensor<bf16, 2> x, Tensor<bf16, 2> y, float c) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n) - c, m, n);
}

// where with two scalars: the sign of x as an f32 tile (1 where x > 0, else -1), and an i32
// bucket (16 where the integer is positive, else 0). (Rejected by pk/spec.h's overloads once.)
PK_KERNEL void where_scalars(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<i32, 2> a, Tensor<i32, 2> b) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, where(load<16, 64>(x, m, n) > 0.0f, 1.0f, -1.0f), m, n);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 32})) store(b, where(load<16, 32>(a, m, n) > 0, 16, 0), m, n);
}

// where with broadcasting: positive x kept, others replaced by the row's maximum; and a column
// mask (rows whose first value is positive) against the whole tile, with a bf16 row vector
// as the other side.
PK_KERNEL void where_broadcast(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<bf16, 2> u, Tensor<bf16, 1> w, Tensor<bf16, 2> v) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    store(y, where(t > 0.0f, t, row_max(t)), m, n);
  }
  for (auto [m, n] : tiles(u.rows(), u.cols(), {16, 64}))
    store(v, where(load<16, 1>(u, m, 0) > 0.0f, load<16, 64>(u, m, n), load<1, 64>(w, n)), m, n);
}

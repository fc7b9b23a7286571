// A user-written spec set: kernels as a new user writes them against pk/spec.h, mixing the
// language's constructs (norms, softmax, GEMM epilogues, gated activations, rotary embeddings,
// fake quantisation, masks, peer tiles, collectives on N-D tensors, explicit primitives). The
// compile tier turns every one into an sm_90a cubin (test/Compile/user_specs.test).
#include <pk/spec.h>
using namespace pk;

// ---- element-wise ----

PK_KERNEL void scale_shift(Tensor<f32, 2> x, Tensor<f32, 2> y, float a, float b) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 128}))
    store(y, load<64, 128>(x, m, n) * a + b, m, n);
}

PK_KERNEL void residual_add(Tensor<bf16, 2> x, Tensor<bf16, 2> r, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256}))
    store(y, load<32, 256>(x, m, n) + load<32, 256>(r, m, n), m, n);
}

PK_KERNEL void gelu_f16(Tensor<f16, 1> x, Tensor<f16, 1> y) {
  for (auto i : tiles(x.size(), {2048})) store(y, gelu(load<2048>(x, i)), i);
}

PK_KERNEL void silu_mul(Tensor<bf16, 2> g, Tensor<bf16, 2> u, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 512})) {
    auto a = cast<f32>(load<16, 512>(g, m, n));
    store(y, cast<bf16>(silu(a) * cast<f32>(load<16, 512>(u, m, n))), m, n);
  }
}

PK_KERNEL void geglu(Tensor<bf16, 2> g, Tensor<bf16, 2> u, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 512}))
    store(y, cast<bf16>(gelu_erf(cast<f32>(load<16, 512>(g, m, n))) * cast<f32>(load<16, 512>(u, m, n))), m, n);
}

PK_KERNEL void clamp_abs(Tensor<f32, 2> x, Tensor<f32, 2> y, float lo, float hi) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store(y, min(max(abs(load<32, 128>(x, m, n)), lo), hi), m, n);
}

PK_KERNEL void cast_f32_to_bf16(Tensor<f32, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64})) store(y, cast<bf16>(load<64, 64>(x, m, n)), m, n);
}

PK_KERNEL void sigmoid_gate(Tensor<f32, 1> x, Tensor<f32, 1> g, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {4096})) store(y, load<4096>(x, i) * sigmoid(load<4096>(g, i)), i);
}

// ---- row-wise ----

PK_KERNEL void rms_norm_f32(Tensor<f32, 2> x, Tensor<f32, 2> w, Tensor<f32, 2> y, float inv_n, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {4, 2048})) {
    auto t = load<4, 2048>(x, m, n);
    store(y, t * rsqrt(row_sum(t * t) * inv_n + eps) * load<1, 2048>(w, 0, n), m, n);
  }
}

// The mean square taken over the whole row by a scale computed from the row length and eps as
// float scalars (rsqrt, sqrt, max, pow, abs of scalars; float(x.cols())).
PK_KERNEL void scalar_math_scale(Tensor<f32, 2> x, Tensor<f32, 2> y, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 256})) {
    const float scale = rsqrt(float(x.cols())) * max(sqrt(eps), 0.25f) - pow(eps, 2.0f) + abs(-eps);
    store(y, load<8, 256>(x, m, n) * scale, m, n);
  }
}

PK_KERNEL void layer_norm(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> b, Tensor<bf16, 2> y,
                          float inv_n, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {4, 4096})) {
    auto t = cast<f32>(load<4, 4096>(x, m, n));
    auto d = t - row_sum(t) * inv_n;
    auto r = d * rsqrt(row_sum(d * d) * inv_n + eps);
    store(y, cast<bf16>(r * cast<f32>(load<1, 4096>(w, 0, n)) + cast<f32>(load<1, 4096>(b, 0, n))), m, n);
  }
}

PK_KERNEL void softmax_scaled(Tensor<f32, 2> x, Tensor<f32, 2> y, float scale) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024})) {
    auto t = load<8, 1024>(x, m, n) * scale;
    auto e = exp(t - row_max(t));
    store(y, e / row_sum(e), m, n);
  }
}

PK_KERNEL void log_softmax(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024})) {
    auto t = load<8, 1024>(x, m, n);
    auto s = t - row_max(t);
    store(y, s - log(row_sum(exp(s))), m, n);
  }
}

PK_KERNEL void row_min_max(Tensor<f32, 2> x, Tensor<f32, 2> lo, Tensor<f32, 2> hi) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    auto t = load<32, 256>(x, m, n);
    store(lo, row_min(t), m, n / 256);
    store(hi, row_max(t), m, n / 256);
  }
}

PK_KERNEL void l2_normalize(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 1024})) {
    auto t = cast<f32>(load<8, 1024>(x, m, n));
    store(y, cast<bf16>(t / (sqrt(row_sum(t * t)) + 1e-6f)), m, n);
  }
}

// Fake quantisation: each row tile scaled to [-7, 7] by its absolute maximum, rounded to f16
// precision, scaled back.
PK_KERNEL void fake_quant(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 512})) {
    auto t = load<16, 512>(x, m, n);
    auto s = row_max(abs(t)) / 7.0f + 1e-12f;
    store(y, cast<f32>(cast<f16>(t / s)) * s, m, n);
  }
}

// Rotary embedding of [rows, 128] heads: x1 = x[:, :64], x2 = x[:, 64:], cos/sin [rows, 64].
PK_KERNEL void rotary(Tensor<bf16, 2> x, Tensor<f32, 2> c, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto x1 = cast<f32>(load<16, 64>(x, m, 0));
    auto x2 = cast<f32>(load<16, 64>(x, m, 64));
    auto cs = load<16, 64>(c, m, 0);
    auto sn = load<16, 64>(s, m, 0);
    store(y, cast<bf16>(x1 * cs - x2 * sn), m, 0);
    store(y, cast<bf16>(x2 * cs + x1 * sn), m, 64);
  }
}

// Rotary positions computed in the kernel: angle = position * inv_freq[j] (a 1 x 64 row).
PK_KERNEL void rotary_positions(Tensor<f32, 2> x, Tensor<f32, 2> inv_freq, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto a = row_index<16, 64>(m) * load<1, 64>(inv_freq, 0, 0);
    auto x1 = load<16, 64>(x, m, 0);
    auto x2 = load<16, 64>(x, m, 64);
    store(y, x1 * cos(a) - x2 * sin(a), m, 0);
    store(y, x2 * cos(a) + x1 * sin(a), m, 64);
  }
}

PK_KERNEL void causal_mask_scores(Tensor<bf16, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {64, 64}))
    store(y, cast<bf16>(where(col_index<64, 64>(n) > row_index<64, 64>(m), -1e30f, cast<f32>(load<64, 64>(s, m, n)))), m, n);
}

// ---- GEMMs on the general path (f32 output; the template GEMMs are in gemm_variants.pk.cpp) ----

PK_KERNEL void gemm_f16_scaled(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> c, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), load<128, 32>(b, n, k), acc);
    store(c, acc * alpha, m, n);
  }
}

// ---- communication ----

PK_KERNEL void ring_shift_f32(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store(y.on(next_rank()), load<32, 128>(x, m, n), m, n);
}

PK_KERNEL void ring_shift_back(Sym<bf16, 1> x, Sym<bf16, 1> y) {
  for (auto i : tiles(x.size(), {4096})) store(y.on(prev_rank()), load<4096>(x, i), i);
}

PK_KERNEL void scaled_add_to_owner(Sym<f32, 2> x, Sym<f32, 2> y, float scale) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64}))
    store_add(y.on(1 % world_size()), load<32, 64>(x, m, n) * scale, m, n);
}

PK_KERNEL void all_reduce_2d(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_reduce(Sum, x, y); }
PK_KERNEL void all_gather_2d(Sym<f32, 2> x, Sym<f32, 2> y) { all_gather(x, y); }
PK_KERNEL void reduce_scatter_max(Sym<f32, 2> x, Sym<f32, 2> y) { reduce_scatter(Max, x, y); }
PK_KERNEL void all_to_all_rows(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_to_all(x, y); }
PK_KERNEL void broadcast_from_last(Sym<f32, 1> x, Sym<f32, 1> y) { broadcast(x, y, world_size() - 1); }
PK_KERNEL void gather_to_zero(Sym<bf16, 1> x, Sym<bf16, 1> y) { gather(x, y, 0); }

// Explicit primitives: a pull between barriers, and a reduce over ranks used in compute.
PK_KERNEL void pull_prev(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store(y, prim::load_peer<32, 128>(Ldst, x.on(prev_rank()), m, n), m, n);
  prim::barrier(prim::flag(1));
}

PK_KERNEL void mean_over_ranks(Sym<f32, 2> x, Tensor<f32, 2> y, float inv_world) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y, prim::reduce<16, 256>(Sum, Ldst, x, m, n) * inv_world, m, n);
  prim::barrier(prim::flag(1));
}

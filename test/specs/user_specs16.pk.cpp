// The sixteenth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only, in the style of
// ParallelKernelBench problems (Megatron-LM / DeepSpeed / TensorRT-LLM layers): tensor-parallel GEMMs
// with column all-gathers and reduce-scatters, norms with weight and bias, fused residual + norm,
// softmax with scale and masks, rotary (half-split and interleaved via a 4-D view), gated MLPs,
// int8-like and fp8 quantisation, vocab-parallel embedding and cross-entropy, argmax / top-1 masks,
// MoE routing pieces (histograms, running sums, claims, row gathers and scatters), ring shifts and
// peer adds, multi-phase kernels, in-place updates, attention variants, batched GEMMs, odd tiles,
// 1-D / 3-D / 4-D tensors, i32 / i64 tensors and scalar arguments. Each kernel compiles alone
// (pkc FILE --kernel NAME) and the file compiles as a whole; test/specs/specs16_findings.md says
// what was checked in the emitted CUDA. Part (b) is user_specs16_bad.pk.cpp.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ Tensor-parallel GEMMs

// Column-parallel linear (Megatron ColumnParallelLinear, gather_output=True): each rank computes its
// [M, N/W] slice of X·Wᵀ, then the slices are all-gathered along the columns into [M, N].
PK_KERNEL void cp_linear_gather_cols(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Sym<bf16, 2> part, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<128, 64>(w, n, k), acc);
    store(part, cast<bf16>(acc), m, n);
  }
  all_gather(part, y, 1);
}

// Row-parallel linear whose output is scattered along the hidden dimension (sequence-parallel off,
// but hidden-sharded): partial sums in f32, reduce-scattered along dimension 1.
PK_KERNEL void rp_linear_rs_cols(Tensor<f16, 2> x, Tensor<f16, 2> w, Sym<f32, 2> partial, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, x.cols(), 32)) acc = mma(load<64, 32>(x, m, k), load<32, 128>(w, k, n), acc);
    store(partial, acc, m, n);
  }
  reduce_scatter(Sum, partial, y, 1);
}

// Row-parallel linear with bias added once (rank 0 only) and reduce-scatter along rows (sequence parallel).
PK_KERNEL void rp_linear_bias_rs_rows(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<f32, 1> bias, Sym<f32, 2> partial,
                                      Tensor<f32, 2> y) {
  float on_root = float(1 - min(rank(), 1));
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<64, 64>(w, n, k), acc);
    store(partial, acc + load<1, 64>(bias, n) * on_root, m, n);
  }
  reduce_scatter(Sum, partial, y);
}

// Sequence-parallel input: all-gather the row shards of X first, then X·W (B stored [K, N]) with a
// SwiGLU-free ReLU² epilogue (Primer).
PK_KERNEL void sp_ag_then_gemm_relu2(Sym<bf16, 2> xs, Sym<bf16, 2> xg, Tensor<bf16, 2> w, Tensor<bf16, 2> y) {
  all_gather(xs, xg);
  for (auto [m, n] : tiles(xg.rows(), w.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, xg.cols(), 64)) acc = mma(load<64, 64>(xg, m, k), load<64, 128>(w, k, n), acc);
    auto r = max(acc, 0.0f);
    store(y, cast<bf16>(r * r), m, n);
  }
}

// Batched GEMM A·B over [B, M, K] x [B, K, N] in f16 with a per-batch scale and a residual.
PK_KERNEL void bmm_f16_scale_residual(Tensor<f16, 3> a, Tensor<f16, 3> b, Tensor<f32, 1> s, Tensor<f16, 3> r,
                                      Tensor<f16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(2), {1, 64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma(load<64, 64>(a, z, m, k), load<64, 128>(b, z, k, n), acc);
    store(c, cast<f16>(acc * s.at(z) + cast<f32>(load<64, 128>(r, z, m, n))), z, m, n);
  }
}

// Odd tiles on the general path: a 48 x 80 GEMM tile with a 16-deep K step, tanh soft-cap of logits,
// and a vocabulary mask by an integer argument (padded vocabulary).
PK_KERNEL void lm_head_softcap_odd(Tensor<bf16, 2> h, Tensor<bf16, 2> emb, Tensor<f32, 2> logits, index vocab,
                                   float cap) {
  for (auto [m, n] : tiles(h.rows(), emb.rows(), {48, 80})) {
    auto acc = zeros<f32, 48, 80>();
    for (auto k : range(0, h.cols(), 16)) acc = mma_t(load<48, 16>(h, m, k), load<80, 16>(emb, n, k), acc);
    auto capped = tanh(acc * (1.0f / cap)) * cap;
    store(logits, where(col_index<48, 80>(n) < vocab, capped, -1e30f), m, n);
  }
}

// fp8 GEMM (e4m3 activations x e5m2 weights) with per-row and per-column dequant scales.
PK_KERNEL void fp8_gemm_rowcol_scales(Tensor<f8e4m3, 2> a, Tensor<f8e5m2, 2> b, Tensor<f32, 1> sa, Tensor<f32, 1> sb,
                                      Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * load<64, 1>(sa, m) * load<1, 64>(sb, n)), m, n);
  }
}

// ============================================================================ Norms

// RMSNorm with weight, f16 in, hidden size not a multiple of the chunk (two passes over 512-column chunks).
PK_KERNEL void rmsnorm_f16_chunks(Tensor<f16, 2> x, Tensor<f16, 1> w, Tensor<f16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto ss = zeros<f32, 4, 1>();
    for (auto n : range(0, x.cols(), 512)) {
      auto t = cast<f32>(load<4, 512>(x, m, n));
      ss = ss + row_sum(t * t);
    }
    auto inv = rsqrt(ss / float(x.cols()) + eps);
    for (auto n : range(0, x.cols(), 512))
      store(y, cast<f16>(cast<f32>(load<4, 512>(x, m, n)) * inv * cast<f32>(load<1, 512>(w, n))), m, n);
  }
}

// LayerNorm with weight and bias (bf16), two-pass variance, saving mean and rstd for backward.
PK_KERNEL void layernorm_wb_stats(Tensor<bf16, 2> x, Tensor<bf16, 1> w, Tensor<bf16, 1> b, Tensor<bf16, 2> y,
                                  Tensor<f32, 1> mean, Tensor<f32, 1> rstd, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    float inv_n = 1.0f / float(x.cols());
    auto s = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 256)) s = s + row_sum(cast<f32>(load<8, 256>(x, m, n)));
    auto mu = s * inv_n;
    auto v = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 256)) {
      auto d = where(col_index<8, 256>(n) < x.cols(), cast<f32>(load<8, 256>(x, m, n)) - mu, 0.0f);
      v = v + row_sum(d * d);
    }
    auto r = rsqrt(v * inv_n + eps);
    for (auto n : range(0, x.cols(), 256)) {
      auto xn = (cast<f32>(load<8, 256>(x, m, n)) - mu) * r;
      store(y, cast<bf16>(xn * cast<f32>(load<1, 256>(w, n)) + cast<f32>(load<1, 256>(b, n))), m, n);
    }
    store(mean, mu, m);
    store(rstd, r, m);
  }
}

// Fused residual add + RMSNorm, in place on the residual stream (TensorRT-LLM's fused_add_rms_norm):
// h = h + x is written back into h, y = rmsnorm(h) * w. Whole rows of up to 1024 columns in one tile.
PK_KERNEL void fused_add_rmsnorm_inplace(Tensor<bf16, 2> h, Tensor<bf16, 2> x, Tensor<bf16, 1> w, Tensor<bf16, 2> y,
                                         float eps) {
  for (auto m : tiles(h.rows(), {16})) {
    auto s = cast<f32>(load<16, 1024>(h, m, 0)) + cast<f32>(load<16, 1024>(x, m, 0));
    auto sb = cast<bf16>(s);
    store(h, sb, m, 0);
    auto sf = cast<f32>(sb);
    auto r = rsqrt(row_sum(sf * sf) / float(h.cols()) + eps);
    store(y, cast<bf16>(sf * r * cast<f32>(load<1, 1024>(w, 0))), m, 0);
  }
}

// Tensor-parallel LayerNorm over a hidden dimension sharded across ranks: partial sums and sums of
// squares all-reduced together (two columns of one [M, 2] buffer), then the normalisation.
PK_KERNEL void tp_layernorm_sharded(Tensor<f32, 2> x, Tensor<f32, 1> w, Tensor<f32, 1> b, Sym<f32, 2> part,
                                    Sym<f32, 2> tot, Tensor<f32, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {32})) {
    auto t = load<32, 128>(x, m, 0);
    store(part, row_sum(t), m, 0);
    store(part, row_sum(t * t), m, 1);
  }
  all_reduce(Sum, part, tot);
  float n = float(x.cols() * world_size());
  for (auto m : tiles(x.rows(), {32})) {
    auto mu = load<32, 1>(tot, m, 0) / n;
    auto var = load<32, 1>(tot, m, 1) / n - mu * mu;
    auto t = load<32, 128>(x, m, 0);
    store(y, (t - mu) * rsqrt(var + eps) * load<1, 128>(w, 0) + load<1, 128>(b, 0), m, 0);
  }
}

// RMSNorm of a 3-D [B, S, D] activation with one [D] weight; tile of the trailing two dimensions.
PK_KERNEL void rmsnorm_3d_batch(Tensor<bf16, 3> x, Tensor<f32, 1> w, Tensor<bf16, 3> y, float eps) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {1, 8})) {
    auto t = cast<f32>(load<8, 256>(x, b, s, 0));
    auto r = rsqrt(row_sum(t * t) * (1.0f / 256.0f) + eps);
    store(y, cast<bf16>(t * r * load<1, 256>(w, 0)), b, s, 0);
  }
}

// ============================================================================ Softmax and masks

// Scaled causal softmax over [B*H, S, S] scores in f16 with an online (one pass) max / sum over 128-key chunks,
// then a second pass writing probabilities.
PK_KERNEL void scaled_causal_softmax_f16(Tensor<f16, 3> s, Tensor<f16, 3> p, float scale) {
  for (auto [z, m] : tiles(s.dim(0), s.dim(1), {1, 16})) {
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    auto l = zeros<f32, 16, 1>();
    for (auto n : range(0, s.dim(2), 128)) {
      auto keep = (col_index<16, 128>(n) <= row_index<16, 128>(m)) * (col_index<16, 128>(n) < s.dim(2));
      auto x = where(keep, cast<f32>(load<16, 128>(s, z, m, n)) * scale, -1e30f);
      auto mn = max(mx, row_max(x));
      l = l * exp(mx - mn) + row_sum(exp(x - mn));
      mx = mn;
    }
    for (auto n : range(0, s.dim(2), 128)) {
      auto keep = col_index<16, 128>(n) <= row_index<16, 128>(m);
      auto x = where(keep, cast<f32>(load<16, 128>(s, z, m, n)) * scale, -1e30f);
      store(p, cast<f16>(exp(x - mx) / l), z, m, n);
    }
  }
}

// Masked softmax with an additive attention mask row per batch [B, S] (key padding), 4-D scores [B, H, S, S].
PK_KERNEL void softmax_keypad_4d(Tensor<f32, 4> s, Tensor<f32, 2> kmask, Tensor<f32, 4> p, float scale) {
  for (auto [b, h, m] : tiles(s.dim(0), s.dim(1), s.dim(2), {1, 1, 8})) {
    auto x = load<8, 64>(s, b, h, m, 0) * scale + load<1, 64>(kmask, b, 0);
    x = where(col_index<8, 64>(0) < s.dim(3), x, -1e30f);
    auto e = exp(x - row_max(x));
    store(p, e / row_sum(e), b, h, m, 0);
  }
}

// Top-1 mask and argmax per row (router): the first column holding the row's max, as an i32 index
// and a one-hot f32 mask, masking columns past the end.
PK_KERNEL void router_argmax_onehot(Tensor<f32, 2> logits, Tensor<i32, 2> top, Tensor<f32, 2> onehot) {
  for (auto m : tiles(logits.rows(), {32})) {
    auto cols = col_index<32, 64>(0);
    auto x = where(cols < logits.cols(), load<32, 64>(logits, m, 0), -1e30f);
    auto first = row_min(where(x == row_max(x), cols, 1e9f));
    store(top, cast<i32>(first), m, 0);
    store(onehot, where(cols == first, 1.0f, 0.0f), m, 0);
  }
}

// Top-k-like threshold mask: keep logits >= a per-row threshold (the k-th largest, computed elsewhere),
// renormalise the kept probabilities (top-k sampling's softmax), bf16 in / f32 out.
PK_KERNEL void topk_threshold_softmax(Tensor<bf16, 2> logits, Tensor<f32, 2> thresh, Tensor<f32, 2> probs,
                                      float inv_temp) {
  for (auto m : tiles(logits.rows(), {8})) {
    auto x = cast<f32>(load<8, 512>(logits, m, 0));
    auto keep = (x >= load<8, 1>(thresh, m, 0)) * (col_index<8, 512>(0) < logits.cols());
    auto z = where(keep, x * inv_temp, -1e30f);
    auto e = where(keep, exp(z - row_max(z)), 0.0f);
    store(probs, e / row_sum(e), m, 0);
  }
}

// ============================================================================ Rotary, gated MLPs

// Rotary embedding (NeoX half-split) on q [H, S, 128] in bf16 with f32 cos / sin [S, 64], into a second
// tensor (the in-place form is refused: user_specs16_bad.pk.cpp f1_rope_inplace_halves, finding 1).
PK_KERNEL void rope_neox_out(Tensor<bf16, 3> q, Tensor<f32, 2> cos_t, Tensor<f32, 2> sin_t, Tensor<bf16, 3> qr) {
  for (auto [h, s] : tiles(q.dim(0), q.dim(1), {1, 16})) {
    auto x1 = cast<f32>(load<16, 64>(q, h, s, 0));
    auto x2 = cast<f32>(load<16, 64>(q, h, s, 64));
    auto c = load<16, 64>(cos_t, s, 0);
    auto sn = load<16, 64>(sin_t, s, 0);
    store(qr, cast<bf16>(x1 * c - x2 * sn), h, s, 0);
    store(qr, cast<bf16>(x2 * c + x1 * sn), h, s, 64);
  }
}

// Rotary embedding, GPT-J interleaved pairs: x viewed as [H, S, 32, 2] (4-D), cos / sin [S, 32];
// the 16 x 32 x 1 tiles of cos read as 16 x 32.
PK_KERNEL void rope_gptj_4d(Tensor<f16, 4> x, Tensor<f32, 2> cos_t, Tensor<f32, 2> sin_t, Tensor<f16, 4> y) {
  for (auto [h, s] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    auto ev = cast<f32>(load<16, 32, 1>(x, h, s, 0, 0));
    auto od = cast<f32>(load<16, 32, 1>(x, h, s, 0, 1));
    auto c = load<16, 32, 1>(cos_t, s, 0);
    auto sn = load<16, 32, 1>(sin_t, s, 0);
    store(y, cast<f16>(ev * c - od * sn), h, s, 0, 0);
    store(y, cast<f16>(od * c + ev * sn), h, s, 0, 1);
  }
}

// Rotary angles computed in the kernel from positions (i64 position ids) and an inverse frequency row.
PK_KERNEL void rope_from_positions(Tensor<bf16, 2> x, Tensor<i64, 1> pos, Tensor<f32, 1> inv_freq, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {32})) {
    auto ang = cast<f32>(load<32, 1>(pos, m)) * load<1, 32>(inv_freq, 0);
    auto a = cast<f32>(load<32, 32>(x, m, 0));
    auto b = cast<f32>(load<32, 32>(x, m, 32));
    store(y, cast<bf16>(a * cos(ang) - b * sin(ang)), m, 0);
    store(y, cast<bf16>(b * cos(ang) + a * sin(ang)), m, 32);
  }
}

// SwiGLU on a fused gate/up projection [M, 2F] (gate first): out [M, F]; F need not divide the tile.
PK_KERNEL void swiglu_fused_halves(Tensor<bf16, 2> gu, Tensor<bf16, 2> out) {
  index F = out.cols();
  for (auto [m, n] : tiles(gu.rows(), F, {16, 128})) {
    auto g = cast<f32>(load<16, 128>(gu, m, n));
    auto u = cast<f32>(load<16, 128>(gu, m, F + n));
    store(out, cast<bf16>(silu(g) * u), m, n);
  }
}

// GeGLU (exact erf GELU) in f16 from two tensors, with a clamp of the up projection (TensorRT-LLM's swiglu_limit).
PK_KERNEL void geglu_clamped_f16(Tensor<f16, 2> g, Tensor<f16, 2> u, Tensor<f16, 2> out, float limit) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {32, 96})) {
    auto up = min(max(cast<f32>(load<32, 96>(u, m, n)), -limit), limit);
    store(out, cast<f16>(gelu_erf(cast<f32>(load<32, 96>(g, m, n))) * up), m, n);
  }
}

// ============================================================================ Quantisation

// Per-row symmetric int8-like quantisation via f32: amax over all columns in 1024-column chunks, then
// q = round-half-away(x * 127 / amax), clamped to [-127, 127], stored as i32, and the scale.
PK_KERNEL void quant_int8_per_row(Tensor<bf16, 2> x, Tensor<i32, 2> q, Tensor<f32, 1> scale) {
  for (auto m : tiles(x.rows(), {8})) {
    auto amax = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 1024)) amax = max(amax, row_max(abs(cast<f32>(load<8, 1024>(x, m, n)))));
    amax = max(amax, 1e-8f);
    for (auto n : range(0, x.cols(), 1024)) {
      auto v = cast<f32>(load<8, 1024>(x, m, n)) * (127.0f / amax);
      auto r = cast<i32>(v + where(v >= 0.0f, 0.5f, -0.5f));
      store(q, min(max(r, -127), 127), m, n);
    }
    store(scale, amax * (1.0f / 127.0f), m);
  }
}

// Dequantise int8-like values with per-row scales and per-column (per-channel) weight scales.
PK_KERNEL void dequant_int8_rowcol(Tensor<i32, 2> q, Tensor<f32, 1> srow, Tensor<f32, 1> scol, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {64, 64}))
    store(y, cast<bf16>(cast<f32>(load<64, 64>(q, m, n)) * load<64, 1>(srow, m) * load<1, 64>(scol, n)), m, n);
}

// fp8 e4m3 per-block (1 x 128) quantisation with the scale layout [M, ceil(K/128)] (DeepSeek-V3 activations).
PK_KERNEL void fp8_quant_1x128(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto t = cast<f32>(load<32, 128>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-12f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(s, amax * (1.0f / 448.0f), m, n / 128);
  }
}

// fp8 e5m2 per-tensor-block (128 x 128) dequantisation for weights (scales [ceil(N/128), ceil(K/128)]).
PK_KERNEL void fp8_dequant_128x128(Tensor<f8e5m2, 2> w, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(w.rows(), w.cols(), {128, 128}))
    store(y, cast<bf16>(cast<f32>(load<128, 128>(w, m, n)) * s.at(m / 128, n / 128)), m, n);
}

// fp8 all-gather of a row-sharded activation with a per-row scale, dequantised on arrival into f16.
PK_KERNEL void fp8_rowscale_all_gather(Tensor<f16, 2> x, Scratch<f8e4m3, 2> q, Scratch<f32, 2> s,
                                       Scratch<f8e4m3, 2> gq, Scratch<f32, 2> gs, Tensor<f16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = cast<f32>(load<16, 256>(x, m, 0));
    auto amax = max(row_max(abs(t)), 1e-20f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, 0);
    store(s, amax * (1.0f / 448.0f), m, 0);
  }
  all_gather(q, gq);
  all_gather(s, gs);
  for (auto m : tiles(y.rows(), {16}))
    store(y, cast<f16>(cast<f32>(load<16, 256>(gq, m, 0)) * load<16, 1>(gs, m, 0)), m, 0);
}

// ============================================================================ Vocab-parallel embedding / CE

// Vocab-parallel embedding with i64 token ids: rows outside this rank's vocabulary slice read as zero,
// then an all-reduce sums the ranks' contributions.
PK_KERNEL void vocab_embed_i64(Tensor<i64, 1> ids, Tensor<bf16, 2> table, Sym<bf16, 2> part, Sym<bf16, 2> out) {
  index first = rank() * table.rows();
  for (auto [t, n] : tiles(ids.size(), table.cols(), {32, 256})) {
    auto local = load<32>(ids, t) - first;
    auto in = (local >= 0) * (local < table.rows());
    store(part, load_rows<32, 256>(table, where(in, local, -1), n), t, n);
  }
  all_reduce(Sum, part, out);
}

// Vocab-parallel cross-entropy forward with label smoothing: per-rank max, sum of exp, picked logit and
// sum of logits; three all-reduces; loss = lse - (1 - eps) * picked - eps * mean.
PK_KERNEL void vocab_ce_label_smoothing(Tensor<bf16, 2> logits, Tensor<i64, 1> target, Sym<f32, 1> lmax, Sym<f32, 1> gmax,
                                        Sym<f32, 2> st, Sym<f32, 2> gst, Tensor<f32, 1> loss, float eps) {
  index V = logits.cols();
  for (auto t : tiles(logits.rows(), {16})) {
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    for (auto n : range(0, V, 256))
      mx = max(mx, row_max(where(col_index<16, 256>(n) < V, cast<f32>(load<16, 256>(logits, t, n)), -1e30f)));
    store(lmax, mx, t);
  }
  all_reduce(Max, lmax, gmax);
  for (auto t : tiles(logits.rows(), {16})) {
    auto g = load<16, 1>(gmax, t);
    auto want = cast<f32>(load<16, 1>(target, t) - rank() * V);
    auto se = zeros<f32, 16, 1>();
    auto pick = zeros<f32, 16, 1>();
    auto all = zeros<f32, 16, 1>();
    for (auto n : range(0, V, 256)) {
      auto c = col_index<16, 256>(n);
      auto x = cast<f32>(load<16, 256>(logits, t, n));
      se = se + row_sum(where(c < V, exp(x - g), 0.0f));
      pick = pick + row_sum(where(c == want, x, 0.0f));
      all = all + row_sum(x);
    }
    store(st, se, t, 0);
    store(st, pick, t, 1);
    store(st, all, t, 2);
  }
  all_reduce(Sum, st, gst);
  float vt = float(V * world_size());
  for (auto t : tiles(logits.rows(), {16})) {
    auto lse = log(load<16, 1>(gst, t, 0)) + load<16, 1>(gmax, t);
    store(loss, lse - (1.0f - eps) * load<16, 1>(gst, t, 1) - eps * load<16, 1>(gst, t, 2) / vt, t);
  }
}

// ============================================================================ MoE routing pieces

// Expert histogram of top-k ids [T, K] (i32) over all ranks: per-block histograms added into a local
// count vector, then an all-reduce; the global counts' exclusive running sum gives each expert's offset.
PK_KERNEL void moe_counts_offsets(Tensor<i32, 2> ids, Sym<i32, 1> cnt, Sym<i32, 1> gcnt, Tensor<i32, 1> offs) {
  for (auto e : tiles(cnt.size(), {64})) store(cnt, zeros<i32, 64>(), e);
  for (auto [t, k] : tiles(ids.rows(), ids.cols(), {128, 8})) {
    auto h = histogram<64>(load<128, 8>(ids, t, k));
    store_add(cnt.on(rank()), h, 0);
  }
  all_reduce(Sum, cnt, gcnt);
  for (auto e : tiles(gcnt.size(), {64})) {
    auto c = load<64>(gcnt, e);
    store(offs, cumsum(c) - c, e);
  }
}

// Token positions inside their expert: claim a slot per (token, choice) from a zeroed fill counter;
// dropped choices (past capacity) marked -1; i64 ids.
PK_KERNEL void moe_claim_capacity(Tensor<i64, 2> ids, Tensor<i32, 1> fill, Tensor<i32, 2> pos, index capacity) {
  for (auto e : tiles(fill.size(), {256})) store(fill, zeros<i32, 256>(), e);
  for (auto [t, k] : tiles(ids.rows(), ids.cols(), {64, 2})) {
    auto p = claim(fill, load<64, 2>(ids, t, k));
    store(pos, where(p < capacity, p, -1), t, k);
  }
}

// Gather rows into expert order (permute) by a source index per destination row, f16 [T, D], and scale
// each gathered row by its routing weight.
PK_KERNEL void moe_permute_gather(Tensor<f16, 2> x, Tensor<i32, 1> src, Tensor<f32, 1> wgt, Tensor<f16, 2> xp) {
  for (auto [r, n] : tiles(src.size(), x.cols(), {64, 128})) {
    auto rows = load_rows<64, 128>(x, load<64>(src, r), n);
    store(xp, cast<f16>(cast<f32>(rows) * load<64, 1>(wgt, r)), r, n);
  }
}

// Unpermute with a weighted sum (MoE combine): each expert-ordered row added into its token's row.
PK_KERNEL void moe_unpermute_scatter_add(Tensor<f32, 2> yp, Tensor<i64, 1> dst, Tensor<f32, 1> wgt, Tensor<f32, 2> y) {
  for (auto [r, n] : tiles(yp.rows(), yp.cols(), {32, 256}))
    store_add_rows(y, load<32, 256>(yp, r, n) * load<32, 1>(wgt, r), load<32>(dst, r), n);
}

// Token shift / ring buffer in a 1-D i64 sequence: y[i] = x[i - 1] (x[-1] reads 0), plus the running count
// of non-zero tokens as an i64 cumulative sum within each 512 tile.
PK_KERNEL void token_shift_i64(Tensor<i64, 1> x, Tensor<i64, 1> y, Tensor<i64, 1> nz) {
  for (auto i : tiles(x.size(), {512})) {
    store(y, load<512>(x, i - 1), i);
    store(nz, cumsum(cast<i64>(load<512>(x, i) != 0)), i);
  }
}

// ============================================================================ Ring shifts, peer adds, phases

// Ring shift of a 3-D KV block to the next rank (context parallelism), tile of the trailing dims.
PK_KERNEL void ring_shift_kv_3d(Sym<bf16, 3> kv, Sym<bf16, 3> recv) {
  for (auto [h, s] : tiles(kv.dim(0), kv.dim(1), {1, 32}))
    store(recv.on(next_rank()), load<32, 128>(kv, h, s, 0), h, s, 0);
}

// A tile added into the previous rank (halo accumulation), f32, after zeroing the receive buffer.
PK_KERNEL void halo_add_prev(Tensor<f32, 2> x, Sym<f32, 2> halo) {
  for (auto [m, n] : tiles(halo.rows(), halo.cols(), {16, 64})) store(halo, zeros<f32, 16, 64>(), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store_add(halo.on(prev_rank()), load<16, 64>(x, m, n) * 0.5f, m, n);
}

// Reduce-scatter by adds into owners along columns: owner o gets columns [o * C, (o + 1) * C) of every
// rank's [M, W * C] partial, i32 counts added exactly.
PK_KERNEL void rs_cols_by_adds_i32(Tensor<i32, 2> part, Sym<i32, 2> out) {
  for (auto [m, n] : tiles(out.rows(), out.cols(), {32, 32})) store(out, zeros<i32, 32, 32>(), m, n);
  for (auto [o, m, n] : tiles(world_size(), out.rows(), out.cols(), {1, 32, 32}))
    store_add(out.on(o), load<32, 32>(part, m, o * out.cols() + n), m, n);
}

// Multi-phase: all-reduce of per-rank f32 gradients, then an in-place SGD with momentum on the parameters.
PK_KERNEL void allreduce_sgd_momentum(Sym<f32, 1> g, Sym<f32, 1> gsum, Tensor<f32, 1> p, Tensor<f32, 1> mom, float lr,
                                      float beta) {
  all_reduce(Sum, g, gsum);
  float inv_w = 1.0f / float(world_size());
  for (auto i : tiles(p.size(), {1024})) {
    auto v = load<1024>(mom, i) * beta + load<1024>(gsum, i) * inv_w;
    store(mom, v, i);
    store(p, load<1024>(p, i) - v * lr, i);
  }
}

// Multi-phase with a broadcast: rank `root` holds the global scale; every rank applies it to its shard, then
// the shards are all-gathered (i64 -> f32 not involved: plain f32).
PK_KERNEL void bcast_scale_then_gather(Sym<f32, 1> sc, Sym<f32, 1> scb, Tensor<f32, 2> x, Sym<f32, 2> xs,
                                       Tensor<f32, 2> y, index root) {
  broadcast(sc, scb, root);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 128})) store(xs, load<8, 128>(x, m, n) * load<1, 1>(scb, 0), m, n);
  all_gather(xs, y);
}

// Max all-reduce of i64 sequence lengths, then a padding mask [B, S] built from the global max.
PK_KERNEL void seq_len_mask_i64(Sym<i64, 1> len, Sym<i64, 1> glen, Tensor<i32, 2> mask) {
  all_reduce(Max, len, glen);
  for (auto [b, s] : tiles(mask.rows(), mask.cols(), {4, 256}))
    store(mask, cast<i32>(col_index<4, 256>(s) < cast<f32>(load<4, 1>(glen, b))), b, s);
}

// Ulysses-style head/sequence all-to-all on a 4-D [B, H, S/W, D] tensor, then a per-head scale.
PK_KERNEL void a2a_4d_then_scale(Sym<bf16, 4> x, Sym<bf16, 4> y, Tensor<f32, 1> hs, Tensor<bf16, 4> z) {
  all_to_all(x, y, 1, 2);
  for (auto [b, h, s] : tiles(y.dim(0), y.dim(1), y.dim(2), {1, 1, 64}))
    store(z, cast<bf16>(cast<f32>(load<64, 64>(y, b, h, s, 0)) * hs.at(rank() * y.dim(1) + h)), b, h, s, 0);
}

// Reduce to a root of i32 expert counts (Min over ranks of free capacity), then the root writes an admit flag.
PK_KERNEL void reduce_min_capacity(Sym<i32, 1> freecap, Sym<i32, 1> mincap, Tensor<i32, 1> admit, index need) {
  reduce(Min, freecap, mincap, 0);
  for (auto e : tiles(admit.size(), {128})) store(admit, cast<i32>(load<128>(mincap, e) >= need), e);
}

// ============================================================================ Attention variants

// Causal attention, f16, head dim 64, [H, S, 64].
PK_KERNEL void attn_causal_f16_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o,
                                   Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) <= row_index<64, 64>(m), where(col_index<64, 64>(n) < k.dim(1), s, -1e30f), -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// GQA, bf16, head dim 128, group from the sizes, no lse output.
PK_KERNEL void attn_gqa_d128_nolse(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index kh = h / (q.dim(0) / k.dim(0));
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, kh, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, kh, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// Decode attention (one query per head, general path): q [H, 64], K/V caches [H, S, 64], valid length
// per head from an i32 tensor; 16 keys per step; f32 output.
PK_KERNEL void decode_attn_lens(Tensor<f32, 2> q, Tensor<f32, 3> kc, Tensor<f32, 3> vc, Tensor<i32, 1> lens,
                                Tensor<f32, 2> o, float scale) {
  for (auto h : tiles(q.rows(), {1})) {
    auto qt = load<1, 64>(q, h, 0);
    index len = lens.at(h);
    auto mx = zeros<f32, 1, 1>() - 1e30f;
    auto l = zeros<f32, 1, 1>();
    auto acc = zeros<f32, 1, 64>();
    for (auto n : range(0, kc.dim(1), 16)) {
      auto kt = load<16, 64>(kc, h, n, 0);
      auto s = transpose(row_sum(kt * qt)) * scale;
      s = where(col_index<1, 16>(n) < len, s, -1e30f);
      auto mn = max(mx, row_max(s));
      auto p = exp(s - mn);
      auto corr = exp(mx - mn);
      l = l * corr + row_sum(p);
      acc = acc * corr + transpose(row_sum(transpose(transpose(p) * load<16, 64>(vc, h, n, 0))));
      mx = mn;
    }
    store(o, acc / l, h, 0);
  }
}

// ============================================================================ Misc layers

// Bias + dropout-free residual + GELU on a 3-D [B, S, D] activation with a 1-D bias, odd tile 3 x 24 x 40.
PK_KERNEL void bias_gelu_residual_3d(Tensor<bf16, 3> x, Tensor<bf16, 1> b, Tensor<bf16, 3> r, Tensor<bf16, 3> y) {
  for (auto [z, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {3, 24, 40})) {
    auto t = cast<f32>(load<3, 24, 40>(x, z, s, d)) + cast<f32>(load<1, 1, 40>(b, d));
    store(y, cast<bf16>(gelu(t) + cast<f32>(load<3, 24, 40>(r, z, s, d))), z, s, d);
  }
}

// Transpose with a tail in both dimensions (odd 40 x 24 tile), f16 [M, N] -> [N, M].
PK_KERNEL void transpose_odd_f16(Tensor<f16, 2> x, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {40, 24})) store(y, transpose(load<40, 24>(x, m, n)), n, m);
}

// Mean pooling over the sequence of [B, S, D] with a per-batch valid length (i32), f32 out [B, D].
PK_KERNEL void masked_mean_pool(Tensor<f32, 3> x, Tensor<i32, 1> lens, Tensor<f32, 2> y) {
  for (auto [b, d] : tiles(x.dim(0), x.dim(2), {1, 64})) {
    index len = lens.at(b);
    auto acc = zeros<f32, 64, 1>();
    for (auto s : range(0, x.dim(1), 32)) {
      auto t = load<32, 64>(x, b, s, d);
      acc = acc + row_sum(transpose(where(row_index<32, 64>(s) < len, t, 0.0f)));
    }
    store(y, transpose(acc / float(max(len, 1))), b, d);
  }
}

// KV-cache append: new keys [T, D] written at per-token slots (i64) of a paged cache [P, D].
PK_KERNEL void kv_cache_append(Tensor<bf16, 2> knew, Tensor<i64, 1> slot, Tensor<bf16, 2> cache) {
  for (auto [t, n] : tiles(knew.rows(), knew.cols(), {16, 128}))
    store_rows(cache, load<16, 128>(knew, t, n), load<16>(slot, t), n);
}

// Integer index arithmetic on i32 tiles with a scalar offset: local expert id and rank of each choice,
// division and modulo by a run-time expert count.
PK_KERNEL void expert_owner_local(Tensor<i32, 2> ids, Tensor<i32, 2> owner, Tensor<i32, 2> local, index per_rank) {
  for (auto [t, k] : tiles(ids.rows(), ids.cols(), {128, 4})) {
    auto e = load<128, 4>(ids, t, k);
    store(owner, e / per_rank, t, k);
    store(local, e % per_rank, t, k);
  }
}

// Adam update in place (four 1-D tensors, scalar hyper-parameters, bias corrections computed from `step`).
PK_KERNEL void adam_inplace(Tensor<f32, 1> p, Tensor<f32, 1> g, Tensor<f32, 1> m1, Tensor<f32, 1> m2, float lr, float b1,
                            float b2, float eps, float step) {
  float c1 = 1.0f / (1.0f - pow(b1, step));
  float c2 = 1.0f / (1.0f - pow(b2, step));
  for (auto i : tiles(p.size(), {2048})) {
    auto gt = load<2048>(g, i);
    auto a = load<2048>(m1, i) * b1 + gt * (1.0f - b1);
    auto b = load<2048>(m2, i) * b2 + gt * gt * (1.0f - b2);
    store(m1, a, i);
    store(m2, b, i);
    store(p, load<2048>(p, i) - lr * (a * c1) / (sqrt(b * c2) + eps), i);
  }
}

// Grouped (per-group) quantisation of a 4-D [B, H, S, 64] KV cache to fp8 e4m3 with one scale per
// (b, h, s) row, scales [B, H, S].
PK_KERNEL void kv_fp8_quant_4d(Tensor<bf16, 4> kv, Tensor<f8e4m3, 4> q, Tensor<f32, 3> s) {
  for (auto [b, h, t] : tiles(kv.dim(0), kv.dim(1), kv.dim(2), {1, 1, 32})) {
    auto x = cast<f32>(load<32, 64>(kv, b, h, t, 0));
    auto amax = max(row_max(abs(x)), 1e-12f);
    store(q, cast<f8e4m3>(x * (448.0f / amax)), b, h, t, 0);
    store(s, transpose(amax * (1.0f / 448.0f)), b, h, t);
  }
}

// In place (finding 1 of test/specs/specs16_findings.md, refused until pk-check-tile-races learned
// that an iteration may read and write different parts of a cell of the tensor no other iteration
// touches): rotary on both halves, and norms of rows wider than one tile.

// F1: in-place NeoX rotary on [H, S, 128]: each iteration reads the two column halves of its own
// rows and writes the same two halves back. No other iteration touches those elements (dimension 2
// is not tiled); pkc once refused it ("reads a tensor at other tiles than it writes").
PK_KERNEL void f1_rope_inplace_halves(Tensor<bf16, 3> q, Tensor<f32, 2> cos_t, Tensor<f32, 2> sin_t) {
  for (auto [h, s] : tiles(q.dim(0), q.dim(1), {1, 16})) {
    auto x1 = cast<f32>(load<16, 64>(q, h, s, 0));
    auto x2 = cast<f32>(load<16, 64>(q, h, s, 64));
    auto c = load<16, 64>(cos_t, s, 0);
    auto sn = load<16, 64>(sin_t, s, 0);
    store(q, cast<bf16>(x1 * c - x2 * sn), h, s, 0);
    store(q, cast<bf16>(x2 * c + x1 * sn), h, s, 64);
  }
}

// F1c: in-place RMSNorm of rows wider than one tile (hidden 4096-8192 in 1024-column chunks): the first
// range loop reads x at (m, n), the second writes x at (m, n') after every read of the row block is
// done. Iteration m touches rows m .. m + 3 only; refused by F1's rule before the fix.
PK_KERNEL void f1c_rmsnorm_inplace_chunks(Tensor<bf16, 2> x, Tensor<bf16, 1> w, float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto ss = zeros<f32, 4, 1>();
    for (auto n : range(0, x.cols(), 1024)) {
      auto t = cast<f32>(load<4, 1024>(x, m, n));
      ss = ss + row_sum(t * t);
    }
    auto inv = rsqrt(ss / float(x.cols()) + eps);
    for (auto n : range(0, x.cols(), 1024))
      store(x, cast<bf16>(cast<f32>(load<4, 1024>(x, m, n)) * inv * cast<f32>(load<1, 1024>(w, n))), m, n);
  }
}

// F1d: vLLM / TensorRT-LLM fused_add_rms_norm for a wide hidden size: res += x, x = rmsnorm(res) * w,
// both in place, in 1024-column chunks. Refused by F1's rule before the fix (the read of x in the first loop and the
// write of x in the second are "other tiles").
PK_KERNEL void f1d_fused_add_rmsnorm_chunks(Tensor<bf16, 2> x, Tensor<bf16, 2> res, Tensor<bf16, 1> w, float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto ss = zeros<f32, 4, 1>();
    for (auto n : range(0, x.cols(), 1024)) {
      auto s = cast<bf16>(cast<f32>(load<4, 1024>(x, m, n)) + cast<f32>(load<4, 1024>(res, m, n)));
      store(res, s, m, n);
      auto f = cast<f32>(s);
      ss = ss + row_sum(f * f);
    }
    auto inv = rsqrt(ss / float(x.cols()) + eps);
    for (auto n : range(0, x.cols(), 1024))
      store(x, cast<bf16>(cast<f32>(load<4, 1024>(res, m, n)) * inv * cast<f32>(load<1, 1024>(w, n))), m, n);
  }
}

// Column sums over row tiles added into a local tensor (store_add into a Tensor: rows added by
// index, red.global.add), as a bias and weight gradient need: db [1, N] += sum_m dy[m, :],
// dw [1, N] += sum_m dy[m, :] x[m, :]. Both start from what the caller left there.
PK_KERNEL void colsum_store_add(Tensor<f32, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 2> db, Tensor<f32, 2> dw) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {16, 128})) {
    auto g = load<16, 128>(dy, m, n);
    store_add(db, transpose(row_sum(transpose(g))), 0, n);
    store_add(dw, transpose(row_sum(transpose(g * cast<f32>(load<16, 128>(x, m, n))))), 0, n);
  }
}

// A running sum as a row and as a column (reshape<...> adds unit dimensions):
// y[r, c] = x[r, c] - s[c % 64] + s[r % 64], s the running sums of lens[0..63].
PK_KERNEL void cumsum_reshape_row_col(Tensor<i32, 1> lens, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64})) {
    auto s = cast<f32>(cumsum(load<64>(lens, 0)));
    store(y, load<64, 64>(x, m, n) - reshape<1, 64>(s) + reshape<64, 1>(s), m, n);
  }
}

// Running sums along each row of 2-D tiles (the cumulative probabilities of a top-p filter):
// f32 rows of up to 512 in one tile, and i64 sums that restart at each 64-column tile.
PK_KERNEL void row_cumsum_f32(Tensor<f32, 2> p, Tensor<f32, 2> c) {
  for (auto m : tiles(p.rows(), {8})) store(c, cumsum(load<8, 512>(p, m, 0)), m, 0);
}
PK_KERNEL void tile_row_cumsum_i64(Tensor<i64, 2> p, Tensor<i64, 2> c) {
  for (auto [m, n] : tiles(p.rows(), p.cols(), {16, 64})) store(c, cumsum(load<16, 64>(p, m, n)), m, n);
}

// GELU's exact form, backward, through erf: dx = dy (Phi(x) + x phi(x)), Phi(x) = (1 + erf(x / sqrt 2)) / 2.
PK_KERNEL void gelu_erf_bwd_by_erf(Tensor<bf16, 2> x, Tensor<bf16, 2> dy, Tensor<bf16, 2> dx) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto v = cast<f32>(load<16, 256>(x, m, n));
    auto cdf = 0.5f * (1.0f + erf(v * 0.70710678f));
    auto pdf = exp(v * v * -0.5f) * 0.39894228f;
    store(dx, cast<bf16>(cast<f32>(load<16, 256>(dy, m, n)) * (cdf + v * pdf)), m, n);
  }
}

// An eighth user-written spec set, written from docs/language.md, README.md and pk/spec.h alone
// (no compiler sources read first), modelled on pieces of real multi-GPU training and inference
// stacks (Mistral / Gemma / BLOOM attention variants, vLLM decode, Megatron-LM tensor and sequence
// parallelism, DeepSpeed-MoE, DeepSeek-V3 fp8, Mamba) and aimed at combinations the seven earlier
// sets did not make: sliding-window, ALiBi, soft-capped and multi-query cross attention, decode
// attention with one query row per head, GEMM epilogues with row masks, band masks, a leaky ReLU
// select on the accumulator and odd 48 x 80 tiles, LayerNorm backward (dx and the column
// reductions for dgamma / dbeta), 128 x 128 block fp8 quantisation, a transposing fp8 dequant,
// top-k routing in a run-time loop, weighted MoE un-permutation, an embedding backward by
// scattered row adds, rotary with in-kernel angles on a 3-D tensor, a Mamba selective-scan decode
// step, segment mean pooling bounded by scalar reads; and multi-rank: a row-parallel GEMM then an
// in-place all-reduce then bias + residual, an all-gather feeding an f16 A·B GEMM, a
// reduce-scatter by row adds into the owners for any split, a context-parallel zigzag all-gather
// by row moves into peers, SyncBatchNorm, tensor-parallel LayerNorm backward, the Switch
// Transformer load-balancing loss, an fp8 quantisation with a global amax, an in-place 3-D gradient
// average, and a sequence-parallel multi-query decode with the split-KV merge pulled from peers.
// test/gpu/user_specs8_test.cu runs the general-path kernels against float64 references
// (multi-rank ones at W = 1-4), test/gpu/user_specs8_jit_test.cu the template ones through the
// JIT; test/Compile/user_specs8.test compiles the set to an sm_90a cubin.
#include <pk/spec.h>
using namespace pk;

// ================================================================ single GPU: attention ==

// 1. Sliding-window causal attention (Mistral, Gemma 2 local layers), head dim 64 over [H, S, 64]:
//    query i sees keys j with i - window < j <= i. The shipped causal loop with the window as a
//    third mask factor.
PK_KERNEL void sliding_window_attention_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v,
                                            Tensor<bf16, 3> o, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      s = where((col <= row) * (col > row - window) * (col < k.dim(1)), s, -1e30f);
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

// 2. ALiBi causal attention (BLOOM, MPT), head dim 128: scores get -slope_h * (i - j) with the
//    head's slope 2^(-8 (h + 1) / H) computed from the head index as a float scalar.
PK_KERNEL void alibi_causal_attention_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v,
                                           Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    float slope = pow(2.0f, -8.0f * float(h + 1) / float(q.dim(0)));
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale - (row - col) * slope;
      s = where((col <= row) * (col < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 3. Multi-query cross-attention (encoder-decoder, PaLM MQA), head dim 128: q [H, Sq, 128] against
//    one K/V head [1, Sk, 128] with Sq != Sk, no causal mask and no log-sum-exp. The group is an
//    argument (H here). Template candidate.
PK_KERNEL void mqa_cross_attention_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                        index group, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h / group, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// 4. Attention with logit soft-capping (Gemma 2): s = cap * tanh(q k^T * scale / cap), causal, one
//    head [S, 64].
PK_KERNEL void softcap_causal_attention_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                            float scale, float cap) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = tanh(mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * (scale / cap)) * cap;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// 5. Decode attention (vLLM single-query decode): one query row per head, q [H, 128], against the
//    head's KV cache [H, L, 128] of which only the first `len` rows are valid; f32 out [H, 128].
//    1-row tiles and 1 x 64 score tiles.
PK_KERNEL void decode_attention_1row(Tensor<bf16, 2> q, Tensor<bf16, 3> kc, Tensor<bf16, 3> vc, Tensor<f32, 2> o,
                                     index len, float scale) {
  for (auto h : tiles(q.rows(), {1})) {
    auto qt = load<1, 128>(q, h, 0);
    auto mx = zeros<f32, 1, 1>() - 1e30f;
    auto l = zeros<f32, 1, 1>();
    auto acc = zeros<f32, 1, 128>();
    for (auto n : range(0, len, 64)) {
      auto s = mma_t(qt, load<64, 128>(kc, h, n, 0), zeros<f32, 1, 64>()) * scale;
      s = where(col_index<1, 64>(n) < len, s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(vc, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, acc / l, h, 0);
  }
}

// ================================================================ single GPU: GEMMs ==

// 6. f16 A·Bᵀ with a row mask against an integer argument (padded batch: rows at or past
//    `valid_rows` are zeroed) and a 1-D f16 bias, f16 out; 128 x 128 x 64. Template candidate.
PK_KERNEL void gemm_t_rowmask_bias_f16(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 1> bias, Tensor<f16, 2> c,
                                       index valid_rows) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    auto y = acc + cast<f32>(load<1, 128>(bias, n));
    store(c, cast<f16>(where(row_index<128, 128>(m) < valid_rows, y, 0.0f)), m, n);
  }
}

// 7. bf16 A·B (B [K, N]) with an f32 output under a band mask (local attention scores computed as
//    a GEMM: keep |i - j| <= band), zero elsewhere. Template candidate.
PK_KERNEL void gemm_ab_band_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, index band) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    auto d = row_index<128, 128>(m) - col_index<128, 128>(n);
    store(c, where((d <= band) * (d >= -band), acc, 0.0f), m, n);
  }
}

// 8. bf16 A·Bᵀ with odd 48 x 80 x 48 tiles and an exact-erf GELU (BERT), bf16 out. Template
//    candidate (retiled).
PK_KERNEL void gemm_t_odd_48x80_gelu_erf(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {48, 80})) {
    auto acc = zeros<f32, 48, 80>();
    for (auto k : range(0, a.cols(), 48)) acc = mma_t(load<48, 48>(a, m, k), load<80, 48>(b, n, k), acc);
    store(c, cast<bf16>(gelu_erf(acc)), m, n);
  }
}

// 9. f16 A·B with a leaky ReLU written as a select on the accumulator's sign and an f32 row
//    scale (1-D), f16 out; 64 x 256 x 32.
PK_KERNEL void gemm_leaky_relu_rowscale_f16(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> s, Tensor<f16, 2> c,
                                            float slope) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 256>(b, k, n), acc);
    auto y = acc * load<64, 1>(s, m);
    store(c, cast<f16>(where(y > 0.0f, y, y * slope)), m, n);
  }
}

// ================================================================ single GPU: norms, fp8, rows ==

// 10. LayerNorm backward, dx (Megatron fused LN bwd): with saved mean and rstd [M, 1] and
//     xhat = (x - mean) * rstd, g = dy * gamma: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
//     Rows of at most 1024 bf16 columns; f32 gamma.
PK_KERNEL void layer_norm_bwd_dx(Tensor<bf16, 2> x, Tensor<bf16, 2> dy, Tensor<f32, 1> gamma, Tensor<f32, 2> mean,
                                 Tensor<f32, 2> rstd, Tensor<bf16, 2> dx) {
  for (auto m : tiles(x.rows(), {8})) {
    float inv_n = 1.0f / float(x.cols());
    auto r = load<8, 1>(rstd, m, 0);
    auto xhat = (cast<f32>(load<8, 1024>(x, m, 0)) - load<8, 1>(mean, m, 0)) * r;
    auto g = cast<f32>(load<8, 1024>(dy, m, 0)) * load<1, 1024>(gamma, 0);
    auto c1 = row_sum(g) * inv_n;
    auto c2 = row_sum(g * xhat) * inv_n;
    store(dx, cast<bf16>((g - c1 - xhat * c2) * r), m, 0);
  }
}

// 11. LayerNorm backward, dgamma and dbeta: column sums over all rows of dy * xhat and dy, each
//     block a 64-column strip walking the rows in 16-row steps (transposed row sums); f32 [N, 1].
PK_KERNEL void layer_norm_bwd_dgamma_dbeta(Tensor<bf16, 2> x, Tensor<bf16, 2> dy, Tensor<f32, 2> mean,
                                           Tensor<f32, 2> rstd, Tensor<f32, 2> dgamma, Tensor<f32, 2> dbeta) {
  for (auto n : tiles(x.cols(), {64})) {
    auto sg = zeros<f32, 64, 1>();
    auto sb = zeros<f32, 64, 1>();
    for (auto r : range(0, x.rows(), 16)) {
      auto xhat = (cast<f32>(load<16, 64>(x, r, n)) - load<16, 1>(mean, r, 0)) * load<16, 1>(rstd, r, 0);
      auto d = cast<f32>(load<16, 64>(dy, r, n));
      sg = sg + row_sum(transpose(d * xhat));
      sb = sb + row_sum(transpose(d));
    }
    store(dgamma, sg, n, 0);
    store(dbeta, sb, n, 0);
  }
}

// 12. DeepSeek-V3 weight quantisation: e4m3 with one f32 scale per 128 x 128 block (amax / 448),
//     the block's amax reduced over rows then over the transposed row maxima.
PK_KERNEL void fp8_quant_block128(Tensor<bf16, 2> w, Tensor<f8e4m3, 2> q, Tensor<f32, 2> sc) {
  for (auto [m, n] : tiles(w.rows(), w.cols(), {128, 128})) {
    auto t = cast<f32>(load<128, 128>(w, m, n));
    auto amax = max(row_max(transpose(row_max(abs(t)))), 1e-12f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(sc, amax / 448.0f, m / 128, n / 128);
  }
}

// 13. Dequantise e5m2 gradients with a per-row f32 scale and transpose them (the Bᵀ a backward
//     GEMM wants): y [N, M] bf16 = (q [M, N] * s[m])ᵀ; 32 x 64 tiles.
PK_KERNEL void fp8_dequant_transpose(Tensor<f8e5m2, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {32, 64}))
    store(y, cast<bf16>(transpose(cast<f32>(load<32, 64>(q, m, n)) * load<32, 1>(s, m, 0))), n, m);
}

// 14. Top-k routing with k a run-time argument (Mixtral k = 2, DeepSeek k = 8): softmax over
//     E <= 64 experts, then k rounds of argmax (the smallest index wins a tie) carried through a
//     range loop, each choice's i32 id and probability stored at column j.
PK_KERNEL void topk_softmax_routing(Tensor<f32, 2> logits, Tensor<i32, 2> ids, Tensor<f32, 2> wts, index topk) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto col = col_index<16, 64>(0);
    auto x = where(col < logits.cols(), load<16, 64>(logits, t, 0), -1e30f);
    auto e = exp(x - row_max(x));
    auto p = e / row_sum(e);
    auto sel = where(col < logits.cols(), p, -1.0f);
    for (auto j : range(0, topk)) {
      auto best = row_max(sel);
      auto i = row_min(where(sel == best, col, 1e9f));
      store(ids, cast<i32>(i), t, j);
      store(wts, best, t, j);
      sel = where(col == i, -1.0f, sel);
    }
  }
}

// 15. MoE un-permute (Megablocks / DeepSpeed-MoE combine): token t's output is the sum over its
//     k choices of w[t, j] times row slot[t, j] of the experts' output buffer (-1: dropped by
//     capacity), bf16 out.
PK_KERNEL void moe_unpermute_weighted(Tensor<bf16, 2> eo, Tensor<i32, 2> slot, Tensor<f32, 2> w, Tensor<bf16, 2> y,
                                      index topk) {
  for (auto [t, n] : tiles(y.rows(), y.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto j : range(0, topk))
      acc = acc + cast<f32>(load_rows<16, 128>(eo, load<16, 1>(slot, t, j), n)) * load<16, 1>(w, t, j);
    store(y, cast<bf16>(acc), t, n);
  }
}

// 16. Embedding backward: each token's f32 gradient row added into the table gradient at its i32
//     id (duplicate ids all arrive; ids outside the table dropped).
PK_KERNEL void embedding_bwd_scatter_add(Tensor<i32, 1> ids, Tensor<f32, 2> dy, Tensor<f32, 2> dtable) {
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {16, 64}))
    store_add_rows(dtable, load<16, 64>(dy, t, n), load<16>(ids, t), n);
}

// 17. NeoX rotary with the angles computed in the kernel: x [T, H, 64] bf16 (3-D), position
//     pos0 + t, inverse frequency base^(-2i / 64) = exp(-i * ln(base) / 32) for pair i; halves
//     rotated by sin / cos of t * inv_freq.
PK_KERNEL void rope_neox_3d_computed(Tensor<bf16, 3> x, Tensor<bf16, 3> y, index pos0, float base) {
  for (auto [t, h] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    float lb = log(base) / 32.0f;
    auto ang = (zeros<f32, 16, 32>() + float(pos0 + t)) * exp(col_index<16, 32>(0) * -lb);
    auto c = cos(ang);
    auto s = sin(ang);
    auto x1 = cast<f32>(load<16, 32>(x, t, h, 0));
    auto x2 = cast<f32>(load<16, 32>(x, t, h, 32));
    store(y, cast<bf16>(x1 * c - x2 * s), t, h, 0);
    store(y, cast<bf16>(x2 * c + x1 * s), t, h, 32);
  }
}

// 18. Mamba selective-scan decode step: state h [B, D, N] (3-D, N <= 16), dt and x [B, D, 1],
//     A [D, N], Bm and C [B, 1, N]: h' = exp(dt * A) * h + dt * Bm * x, y = sum_n h' * C + Dp * x.
PK_KERNEL void mamba_ssm_decode_step(Tensor<f32, 3> hs, Tensor<f32, 3> dt, Tensor<f32, 3> x, Tensor<f32, 2> a,
                                     Tensor<f32, 3> bm, Tensor<f32, 3> cm, Tensor<f32, 1> dp, Tensor<f32, 3> y) {
  for (auto [b, d] : tiles(hs.dim(0), hs.dim(1), {1, 16})) {
    auto dtt = load<16, 1>(dt, b, d, 0);
    auto xt = load<16, 1>(x, b, d, 0);
    auto hn = exp(dtt * load<16, 16>(a, d, 0)) * load<16, 16>(hs, b, d, 0) + dtt * load<1, 16>(bm, b, 0, 0) * xt;
    store(hs, hn, b, d, 0);
    store(y, row_sum(hn * load<1, 16>(cm, b, 0, 0)) + load<16, 1>(dp, d) * xt, b, d, 0);
  }
}

// 19. Mean pooling of variable-length sequences (sentence embeddings over a packed batch):
//     sequence b owns rows off[b] .. off[b + 1] of x [T, D]; y [B, D] f32 is their mean (0 for an
//     empty sequence). The row loop's bounds are scalar reads.
PK_KERNEL void segment_mean_pool(Tensor<bf16, 2> x, Tensor<i32, 1> off, Tensor<f32, 2> y) {
  for (auto [b, n] : tiles(y.rows(), y.cols(), {1, 64})) {
    index lo = off.at(b);
    index hi = off.at(b + 1);
    auto acc = zeros<f32, 8, 64>();
    for (auto r : range(lo, hi, 8))
      acc = acc + where(row_index<8, 64>(r) < hi, cast<f32>(load<8, 64>(x, r, n)), 0.0f);
    float cnt = max(float(hi - lo), 1.0f);
    store(y, transpose(row_sum(transpose(acc))) / cnt, b, n);
  }
}

// 20. Mish activation with an integer argument in the expression (f16): y = x * tanh(softplus(x))
//     + shift with softplus = log(1 + exp(x)), and z = |x|^p / (1 + 2 shift): the integer argument
//     converted to float inside tile expressions.
PK_KERNEL void mish_pow_f16(Tensor<f16, 2> x, Tensor<f16, 2> y, Tensor<f16, 2> z, index shift, float p) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = cast<f32>(load<16, 128>(x, m, n));
    store(y, cast<f16>(t * tanh(log(exp(t) + 1.0f)) + float(shift)), m, n);
    store(z, cast<f16>(pow(abs(t), p) / (1.0f + float(shift * 2))), m, n);
  }
}

// 21. One-row and one-column edges: a 1 x N f32 softmax of any width in 2048-column chunks (two
//     passes: running max and sum, then the probabilities) and an M x 1 column scaled by its own
//     maximum magnitude.
PK_KERNEL void one_row_softmax_one_col_norm(Tensor<f32, 2> r, Tensor<f32, 2> pr, Tensor<f32, 2> c, Tensor<f32, 2> pc) {
  for (auto i : tiles(1, {1})) {
    auto mx = zeros<f32, 1, 1>() - 1e30f;
    auto s = zeros<f32, 1, 1>();
    for (auto k : range(0, r.cols(), 2048)) {
      auto t = where(col_index<1, 2048>(k) < r.cols(), load<1, 2048>(r, 0, k), -1e30f);
      auto mn = max(mx, row_max(t));
      s = s * exp(mx - mn) + row_sum(exp(t - mn));
      mx = mn;
    }
    for (auto k : range(0, r.cols(), 2048)) store(pr, exp(load<1, 2048>(r, 0, k) - mx) / s, 0, k);
  }
  for (auto i : tiles(1, {1})) {
    auto amax = zeros<f32, 1, 1>();
    for (auto k : range(0, c.rows(), 1024)) amax = max(amax, row_max(transpose(abs(load<1024, 1>(c, k, 0)))));
    for (auto k : range(0, c.rows(), 1024)) store(pc, load<1024, 1>(c, k, 0) / amax, k, 0);
  }
}

// ================================================================ multi-rank ==

// 22. Megatron row-parallel linear written plainly: the partial product (bf16 A·Bᵀ, 128 x 128) into
//     a symmetric buffer, an in-place all-reduce, then the bias and the residual added once:
//     y = bf16(p + bias + res).
PK_KERNEL void row_linear_ar_bias_residual(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Sym<bf16, 2> p, Tensor<bf16, 1> bias,
                                           Tensor<bf16, 2> res, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<128, 64>(w, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, p);
  for (auto [m, n] : tiles(p.rows(), p.cols(), {16, 128}))
    store(y, cast<bf16>(cast<f32>(load<16, 128>(p, m, n)) + cast<f32>(load<1, 128>(bias, n)) +
                        cast<f32>(load<16, 128>(res, m, n))), m, n);
}

// 23. Sequence-parallel all-gather feeding an f16 A·B GEMM (B [K, N]) with 64 x 128 x 32 tiles and a
//     SiLU epilogue, f16 out (not the shipped fused form).
PK_KERNEL void ag_gemm_f16_ab_silu(Sym<f16, 2> x, Sym<f16, 2> xg, Tensor<f16, 2> w, Tensor<f16, 2> y) {
  all_gather(x, xg);
  for (auto [m, n] : tiles(xg.rows(), w.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, xg.cols(), 32)) acc = mma(load<64, 32>(xg, m, k), load<32, 128>(w, k, n), acc);
    store(y, cast<f16>(silu(acc)), m, n);
  }
}

// 24. Reduce-scatter by row adds into the owners for any split: y [R, N] f32 on every rank is
//     zero-filled, then each rank's partial product of all W * R rows (A·Bᵀ, 32 x 64 tiles) has
//     each row added into its owner row / R at row % R, whatever the tile boundaries.
PK_KERNEL void gemm_rs_rows_any_split(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {32, 64})) store(y, zeros<f32, 32, 64>(), m, n);
  for (auto [m, n] : tiles(a.rows(), b.rows(), {32, 64})) {
    auto acc = zeros<f32, 32, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<32, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    auto row = cast<i32>(row_index<32, 1>(m));
    for (auto p : range(0, world_size()))
      store_add_rows(y.on(p), acc, where(row / y.rows() == p, row % y.rows(), -1), n);
  }
}

// 25. Context-parallel zigzag all-gather (Llama 3 CP, ring attention load balancing): rank r holds
//     chunks r and 2W - 1 - r of C rows each (x [2C, D]); every rank pushes its rows into every
//     peer's y [2WC, D] at their global positions.
PK_KERNEL void cp_zigzag_allgather_rows(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  index c = x.rows() / 2;
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto i = cast<i32>(row_index<16, 1>(m));
    auto g = where(i < c, rank() * c + i, (2 * world_size() - 1 - rank()) * c + i - c);
    auto t = load<16, 64>(x, m, n);
    for (auto p : range(0, world_size())) store_rows(y.on(p), t, g, n);
  }
}

// 26. SyncBatchNorm (torch.nn.SyncBatchNorm, training): per-channel sums and sums of squares over
//     the local batch rows into a symmetric [2, C], all-reduced, then y = (x - mu) * rsqrt(var +
//     eps) * g + b with the global count n_total (rows x world).
PK_KERNEL void sync_batch_norm(Tensor<bf16, 2> x, Sym<f32, 2> st, Sym<f32, 2> gst, Tensor<f32, 1> g, Tensor<f32, 1> b,
                               Tensor<bf16, 2> y, float eps) {
  for (auto n : tiles(x.cols(), {64})) {
    auto s1 = zeros<f32, 64, 1>();
    auto s2 = zeros<f32, 64, 1>();
    for (auto r : range(0, x.rows(), 16)) {
      auto t = cast<f32>(load<16, 64>(x, r, n));
      s1 = s1 + row_sum(transpose(t));
      s2 = s2 + row_sum(transpose(t * t));
    }
    store(st, transpose(s1), 0, n);
    store(st, transpose(s2), 1, n);
  }
  all_reduce(Sum, st, gst);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    float inv = 1.0f / float(x.rows() * world_size());
    auto mu = load<1, 64>(gst, 0, n) * inv;
    auto var = load<1, 64>(gst, 1, n) * inv - mu * mu;
    auto t = cast<f32>(load<16, 64>(x, m, n));
    store(y, cast<bf16>((t - mu) * rsqrt(var + eps) * load<1, 64>(g, n) + load<1, 64>(b, n)), m, n);
  }
}

// 27. Tensor-parallel LayerNorm backward (hidden split over ranks): the two row statistics
//     sum(g) and sum(g * xhat) of the local columns into one symmetric [M, 2], all-reduced in
//     place, then dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with the full width n_full.
PK_KERNEL void tp_layer_norm_bwd_dx(Tensor<f32, 2> x, Tensor<f32, 2> dy, Tensor<f32, 1> gamma, Tensor<f32, 2> mean,
                                    Tensor<f32, 2> rstd, Sym<f32, 2> st, Tensor<f32, 2> dx) {
  for (auto m : tiles(x.rows(), {8})) {
    auto xhat = (load<8, 512>(x, m, 0) - load<8, 1>(mean, m, 0)) * load<8, 1>(rstd, m, 0);
    auto g = load<8, 512>(dy, m, 0) * load<1, 512>(gamma, 0);
    store(st, row_sum(g), m, 0);
    store(st, row_sum(g * xhat), m, 1);
  }
  all_reduce(Sum, st, st);
  for (auto m : tiles(x.rows(), {8})) {
    float inv_n = 1.0f / float(x.cols() * world_size());
    auto r = load<8, 1>(rstd, m, 0);
    auto xhat = (load<8, 512>(x, m, 0) - load<8, 1>(mean, m, 0)) * r;
    auto g = load<8, 512>(dy, m, 0) * load<1, 512>(gamma, 0);
    store(dx, (g - load<8, 1>(st, m, 0) * inv_n - xhat * (load<8, 1>(st, m, 1) * inv_n)) * r, m, 0);
  }
}

// 28. Switch Transformer load-balancing loss over data-parallel ranks: each rank's expert
//     histogram of its top-1 ids (i32 [E]) and column sums of its router probabilities (f32 [1, E]),
//     all-reduced; loss = E * sum_e (count_e / T) * (psum_e / T) with T the global token count.
PK_KERNEL void switch_aux_loss(Tensor<i32, 1> top1, Tensor<f32, 2> probs, Sym<i32, 1> cnt, Sym<f32, 2> psum,
                               Tensor<f32, 1> loss) {
  for (auto i : tiles(1, {1})) {
    store(cnt, histogram<64>(load<4096>(top1, 0)), 0);
    auto s = zeros<f32, 64, 1>();
    for (auto r : range(0, probs.rows(), 16)) s = s + row_sum(transpose(load<16, 64>(probs, r, 0)));
    store(psum, transpose(s), 0, 0);
  }
  all_reduce(Sum, cnt, cnt);
  all_reduce(Sum, psum, psum);
  for (auto i : tiles(1, {1})) {
    float inv_t = 1.0f / float(top1.size() * world_size());
    auto f = cast<f32>(load<1, 64>(cnt, 0)) * inv_t;
    auto pm = load<1, 64>(psum, 0, 0) * inv_t;
    store(loss, row_sum(f * pm) * float(probs.cols()), 0);
  }
}

// 29. fp8 with a global amax (Transformer Engine current scaling across a TP group): each rank's
//     amax of its bf16 shard into a symmetric [1, 1], all-reduced (Max), then every rank
//     quantises with the shared scale 448 / amax and stores the inverse scale.
PK_KERNEL void fp8_global_amax_quant(Tensor<bf16, 2> x, Sym<f32, 2> am, Sym<f32, 2> gam, Tensor<f8e4m3, 2> q,
                                     Tensor<f32, 2> inv_scale) {
  for (auto i : tiles(1, {1})) {
    auto a = zeros<f32, 1, 1>();
    for (auto r : range(0, x.rows(), 16))
      for (auto k : range(0, x.cols(), 256))
        a = max(a, row_max(transpose(row_max(abs(cast<f32>(load<16, 256>(x, r, k)))))));
    store(am, a, 0, 0);
  }
  all_reduce(Max, am, gam);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto g = max(load<1, 1>(gam, 0, 0), 1e-12f);
    store(q, cast<f8e4m3>(cast<f32>(load<16, 256>(x, m, n)) * (448.0f / g)), m, n);
  }
  for (auto i : tiles(1, {1})) store(inv_scale, max(load<1, 1>(gam, 0, 0), 1e-12f) / 448.0f, 0, 0);
}

// 30. Data-parallel gradient average of a 3-D f32 gradient [L, R, C] in place, then a bf16 copy of
//     the averaged gradient.
PK_KERNEL void dp_grad_avg_3d(Sym<f32, 3> g, Tensor<bf16, 3> gb) {
  all_reduce(Sum, g, g);
  for (auto [l, r, c] : tiles(g.dim(0), g.dim(1), g.dim(2), {1, 8, 64})) {
    auto t = load<1, 8, 64>(g, l, r, c) / float(world_size());
    store(g, t, l, r, c);
    store(gb, cast<bf16>(t), l, r, c);
  }
}

// 31. Sequence-parallel multi-query decode (each rank holds a slice of the KV cache [L, 64]): the
//     local attention of the H query rows [H, 64] over the valid `len` rows, its partial output
//     (f32) and log-sum-exp into symmetric buffers, then every rank pulls all partials and merges
//     them by the log-sum-exp into o [H, 64] bf16.
PK_KERNEL void sp_mqa_decode_merge(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Sym<f32, 2> po,
                                   Sym<f32, 2> plse, Tensor<bf16, 2> o, index len, float scale) {
  for (auto m : tiles(q.rows(), {16})) {
    auto qt = load<16, 64>(q, m, 0);
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    auto l = zeros<f32, 16, 1>();
    auto acc = zeros<f32, 16, 64>();
    for (auto n : range(0, len, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 16, 64>()) * scale;
      s = where(col_index<16, 64>(n) < len, s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(po, acc / l, m, 0);
    store(plse, mx + log(l), m, 0);
  }
  for (auto m : tiles(q.rows(), {16})) {
    auto gm = zeros<f32, 16, 1>() - 1e30f;
    for (auto p : range(0, world_size())) gm = max(gm, load<16, 1>(plse.on(p), m, 0));
    auto s = zeros<f32, 16, 1>();
    auto acc = zeros<f32, 16, 64>();
    for (auto p : range(0, world_size())) {
      auto wgt = exp(load<16, 1>(plse.on(p), m, 0) - gm);
      s = s + wgt;
      acc = acc + load<16, 64>(po.on(p), m, 0) * wgt;
    }
    store(o, cast<bf16>(acc / s), m, 0);
  }
}

// 32. Pipeline-parallel send with a cast: each rank's f32 activations [B, S, H] (3-D) are pushed as
//     bf16 into the next rank's receive buffer, which is then scaled by 1 / world in place locally.
PK_KERNEL void pp_send_next_3d(Tensor<f32, 3> act, Sym<bf16, 3> recv) {
  for (auto [bb, s, h] : tiles(act.dim(0), act.dim(1), act.dim(2), {1, 4, 128}))
    store(recv.on(next_rank()), cast<bf16>(load<1, 4, 128>(act, bb, s, h)), bb, s, h);
  for (auto [bb, s, h] : tiles(recv.dim(0), recv.dim(1), recv.dim(2), {1, 4, 128}))
    store(recv, cast<bf16>(cast<f32>(load<1, 4, 128>(recv, bb, s, h)) / float(world_size())), bb, s, h);
}

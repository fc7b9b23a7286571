// A seventh user-written spec set, written from docs/language.md, README.md and pk/spec.h alone
// (no compiler sources read first), modelled on pieces of real multi-GPU training and inference
// stacks (Megatron-LM, DeepSpeed, TensorRT-LLM, vLLM) and aimed at combinations the six earlier
// sets did not make: a Megatron MLP (column-parallel GEMM + bias + GELU, row-parallel GEMM,
// reduce-scatter) as split launches, an all-gather in front of a template GEMM, template GEMMs
// with 1-D f16 bias and residual + 1-D row scale epilogues, f32-output GEMMs (bias, softcap), a
// fused Q/K projection with rotary by position ids in two accumulators, sequence-parallel
// RMSNorm / residual + bias + LayerNorm with all-gathers along dimensions 0 and 1, vocab-parallel
// softmax with in-place all-reduces (Max then Sum) and greedy argmax across ranks (f32 Max then
// i32 Max), a tensor-parallel embedding by i32 ids plus positions, a paged KV-cache append (block
// table gathered by index, rows scattered by slot), DeepSeek-style biased top-2 routing, top-1
// MoE dispatch into peers, int8 fake quantisation over column chunks, fp8 rows and scales sent by
// all-to-all, a ring pass as a host loop, a row-parallel GEMM reduce-scattered by adds into the
// owners, Ulysses all-to-all around a QK-norm, attention with odd lengths and the log-sum-exp,
// grouped-query attention, SwiGLU backward, a ZeRO Adam step with a bf16 all-gather, global-norm
// gradient clipping, a split-KV merge of partial attention outputs by the log-sum-exp, a causal
// depthwise conv with a halo pulled from the previous rank, i64 ids by all-to-all then rows
// gathered, per-rank expert counts reduce-scattered into i64 offsets, a masked mean loss, and the
// row-parallel GEMM again as store_adds into the owners, which takes the fused gemm_rs template.
// test/gpu/user_specs7_test.cu runs them against float64 references (multi-rank ones at W = 1-4),
// test/gpu/user_specs7_jit_test.cu the two that take the attention and gemm_rs templates;
// test/Compile/user_specs7.test compiles the set to an sm_90a cubin.
#include <pk/spec.h>
using namespace pk;

// ================================================================ single GPU: GEMMs ==

// 1. Megatron column-parallel linear on one rank's shard: f16 x [M, K] times W [K, N] (B stored
//    [K, N]), a 1-D f16 bias and tanh-GELU, f16 out; 128 x 64 x 32 tiles. Template candidate.
PK_KERNEL void col_linear_bias_gelu_f16(Tensor<f16, 2> x, Tensor<f16, 2> w, Tensor<f16, 1> bias, Tensor<f16, 2> h) {
  for (auto [m, n] : tiles(x.rows(), w.cols(), {128, 64})) {
    auto acc = zeros<f32, 128, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma(load<128, 32>(x, m, k), load<32, 64>(w, k, n), acc);
    store(h, cast<f16>(gelu(acc + cast<f32>(load<1, 64>(bias, n)))), m, n);
  }
}

// 2. f16 GEMM with an f16 residual and a 1-D f32 per-row scale (a dequant scale of A), f16 out:
//    c = acc * s[m] + r; 64 x 128 x 64 tiles. Template candidate.
PK_KERNEL void gemm_f16_rowscale_residual(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> s, Tensor<f16, 2> r,
                                          Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<64, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, cast<f16>(acc * load<64, 1>(s, m) + cast<f32>(load<64, 128>(r, m, n))), m, n);
  }
}

// 3. GEMM with an f32 output: bf16 A * B^T (B [N, K]) times alpha plus a 1-D f32 bias, stored as
//    f32 without a cast (an fp32 master-weight gradient or a logits buffer).
PK_KERNEL void gemm_t_f32out_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> bias, Tensor<f32, 2> c,
                                  float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, acc * alpha + load<1, 128>(bias, n), m, n);
  }
}

// 4. LM head with final-logit softcapping (Gemma 2): f32 logits = cap * tanh(acc / cap).
PK_KERNEL void lm_head_softcap_f32(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<f32, 2> logits, float cap) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(logits, tanh(acc / cap) * cap, m, n);
  }
}

// 5. Fused Q/K/V projection with rotary on the general path: w [3 * H * 64, C] (A * B^T); each
//    64-column output tile is one head, computed as two 32-column accumulators (the NeoX halves);
//    the q and k heads (columns below rot_cols) are rotated by the cos / sin rows of each token's
//    i32 position, the v heads pass through. bf16 out [T, 3 * H * 64].
PK_KERNEL void qkv_proj_rotary(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<i32, 1> pos, Tensor<f32, 2> cos_t,
                               Tensor<f32, 2> sin_t, Tensor<bf16, 2> qkv, index rot_cols) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {16, 64})) {
    auto a1 = zeros<f32, 16, 32>();
    auto a2 = zeros<f32, 16, 32>();
    for (auto k : range(0, x.cols(), 64)) {
      auto xt = load<16, 64>(x, m, k);
      a1 = mma_t(xt, load<32, 64>(w, n, k), a1);
      a2 = mma_t(xt, load<32, 64>(w, n + 32, k), a2);
    }
    auto p = load<16>(pos, m);
    auto rot = col_index<16, 32>(n) < rot_cols;
    auto c = where(rot, load_rows<16, 32>(cos_t, p, 0), 1.0f);
    auto s = where(rot, load_rows<16, 32>(sin_t, p, 0), 0.0f);
    store(qkv, cast<bf16>(a1 * c - a2 * s), m, n);
    store(qkv, cast<bf16>(a2 * c + a1 * s), m, n + 32);
  }
}

// ================================================================ single GPU: attention ==

// 6. Attention at head dim 128 with lengths that are not multiples of anything (queries and keys
//    odd) and the log-sum-exp, written as templates/specs/attention.pk.cpp's form. Template
//    candidate.
PK_KERNEL void attention_odd_lse_d128(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                      Tensor<f32, 2> lse, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, mx + log(l), m, 0);
  }
}

// 7. Grouped-query causal attention, head dim 64: q [Hq, S, 64], k and v [Hkv, S, 64]; query head
//    h reads key / value head h / (Hq / Hkv). Otherwise the shipped causal form.
PK_KERNEL void gqa_attention_causal_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                        Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index kh = h / (q.dim(0) / k.dim(0));
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, kh, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, kh, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// ================================================================ single GPU: element-wise and rows ==

// 8. Dropout-free residual + bias + LayerNorm (bf16 rows of at most 2048): h = bf16(x + bias + r)
//    is the new residual; y = LN(h) * g + b from the rounded h, bf16 out.
PK_KERNEL void residual_bias_layer_norm(Tensor<bf16, 2> x, Tensor<bf16, 2> r, Tensor<f32, 1> bias, Tensor<f32, 1> g,
                                        Tensor<f32, 1> b, Tensor<bf16, 2> h, Tensor<bf16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto hb = cast<bf16>(cast<f32>(load<4, 2048>(x, m, 0)) + load<1, 2048>(bias, 0) + cast<f32>(load<4, 2048>(r, m, 0)));
    store(h, hb, m, 0);
    auto t = cast<f32>(hb);
    float inv_n = 1.0f / float(x.cols());
    auto mu = row_sum(t) * inv_n;
    auto d = where(col_index<4, 2048>(0) < x.cols(), t - mu, 0.0f);
    auto rs = rsqrt(row_sum(d * d) * inv_n + eps);
    store(y, cast<bf16>(d * rs * load<1, 2048>(g, 0) + load<1, 2048>(b, 0)), m, 0);
  }
}

// 9. SwiGLU backward (f16): with s = sigmoid(g), dg = dy * u * s * (1 + g * (1 - s)) and
//    du = dy * g * s.
PK_KERNEL void swiglu_bwd_f16(Tensor<f16, 2> g, Tensor<f16, 2> u, Tensor<f16, 2> dy, Tensor<f16, 2> dg,
                              Tensor<f16, 2> du) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {8, 128})) {
    auto gt = cast<f32>(load<8, 128>(g, m, n));
    auto ut = cast<f32>(load<8, 128>(u, m, n));
    auto d = cast<f32>(load<8, 128>(dy, m, n));
    auto s = sigmoid(gt);
    store(dg, cast<f16>(d * ut * s * (1.0f + gt * (1.0f - s))), m, n);
    store(du, cast<f16>(d * gt * s), m, n);
  }
}

// 10. Paged KV-cache append (vLLM reshape_and_cache): token t of sequence seq[t] at position pos[t]
//     goes to slot block_table[seq * max_blocks + pos / B] * B + pos % B of the flat caches; the
//     physical block is gathered by index from the [Nseq * max_blocks, 1] table; padding tokens
//     (pos < 0) are dropped.
PK_KERNEL void paged_kv_append(Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<i32, 1> seq, Tensor<i32, 1> pos,
                               Tensor<i32, 2> block_table, Tensor<bf16, 2> k_cache, Tensor<bf16, 2> v_cache,
                               index max_blocks, index block) {
  for (auto [t, n] : tiles(k.rows(), k.cols(), {16, 64})) {
    auto p = load<16, 1>(pos, t);
    auto e = load<16, 1>(seq, t) * max_blocks + p / block;
    auto phys = load_rows<16, 1>(block_table, where(p >= 0, e, -1), 0);
    auto slot = where(p >= 0, phys * block + p % block, -1);
    store_rows(k_cache, load<16, 64>(k, t, n), slot, n);
    store_rows(v_cache, load<16, 64>(v, t, n), slot, n);
  }
}

// 11. Top-2 routing with a selection bias (DeepSeek-V3, auxiliary-loss-free): experts chosen by
//     sigmoid(logit) + bias over the E <= 64 real experts (the smallest index wins a tie), the two
//     weights sigmoid(logit) renormalised over the two; ids i32 [T, 2], weights f32 [T, 2].
PK_KERNEL void top2_biased_routing(Tensor<f32, 2> logits, Tensor<f32, 1> ebias, Tensor<i32, 2> ids,
                                   Tensor<f32, 2> wts) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto col = col_index<16, 64>(0);
    auto sc = sigmoid(load<16, 64>(logits, t, 0));
    auto sel = where(col < logits.cols(), sc + load<1, 64>(ebias, 0), -1e30f);
    auto m1 = row_max(sel);
    auto i1 = row_min(where(sel == m1, col, 1e9f));
    auto sel2 = where(col == i1, -1e30f, sel);
    auto m2 = row_max(sel2);
    auto i2 = row_min(where(sel2 == m2, col, 1e9f));
    auto s1 = row_sum(where(col == i1, sc, 0.0f));
    auto s2 = row_sum(where(col == i2, sc, 0.0f));
    store(ids, cast<i32>(i1), t, 0);
    store(ids, cast<i32>(i2), t, 1);
    store(wts, s1 / (s1 + s2), t, 0);
    store(wts, s2 / (s1 + s2), t, 1);
  }
}

// 12. Fake quantisation to int8 with one scale per row (QAT), rows of any width in 256-column
//     chunks: amax over the row first, then q = clamp(round-half-away(x * (127 / amax)), -127,
//     127) as an integer tile, y = q * (amax / 127) in bf16; the scale amax / 127 stored [M, 1].
PK_KERNEL void fake_quant_int8_rows(Tensor<bf16, 2> x, Tensor<bf16, 2> y, Tensor<f32, 2> scale) {
  for (auto m : tiles(x.rows(), {8})) {
    auto amax = zeros<f32, 8, 1>() + 1e-8f;
    for (auto k : range(0, x.cols(), 256)) amax = max(amax, row_max(abs(cast<f32>(load<8, 256>(x, m, k)))));
    auto inv = 127.0f / amax;
    auto sc = amax / 127.0f;
    store(scale, sc, m, 0);
    for (auto k : range(0, x.cols(), 256)) {
      auto v = cast<f32>(load<8, 256>(x, m, k)) * inv;
      auto q = cast<i32>(v + where(v >= 0.0f, 0.5f, -0.5f));
      q = max(min(q, 127), -127);
      store(y, cast<bf16>(cast<f32>(q) * sc), m, k);
    }
  }
}

// ================================================================ multi-rank: Megatron tensor / sequence parallel ==

// 13. Megatron MLP on one tensor-parallel rank: h = gelu(x W1 + b1) (column-parallel, W1 [K, F/W]),
//     p = h W2 (row-parallel, W2 [F/W, N]) into a symmetric buffer, reduce-scattered over rows.
PK_KERNEL void megatron_mlp_rs(Tensor<bf16, 2> x, Tensor<bf16, 2> w1, Tensor<f32, 1> b1, Tensor<bf16, 2> h,
                               Tensor<bf16, 2> w2, Sym<bf16, 2> p, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w1.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma(load<128, 64>(x, m, k), load<64, 128>(w1, k, n), acc);
    store(h, cast<bf16>(gelu(acc + load<1, 128>(b1, n))), m, n);
  }
  for (auto [m, n] : tiles(h.rows(), w2.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, h.cols(), 64)) acc = mma(load<128, 64>(h, m, k), load<64, 128>(w2, k, n), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  reduce_scatter(Sum, p, y);
}

// 14. Sequence-parallel all-gather in front of a column-parallel linear: the rank's rows of x
//     gathered along dimension 0, then a bf16 template GEMM xg W^T + bias (1-D bf16), bf16 out.
PK_KERNEL void sp_ag_linear_bias(Sym<bf16, 2> x, Sym<bf16, 2> xg, Tensor<bf16, 2> w, Tensor<bf16, 1> bias,
                                 Tensor<bf16, 2> y) {
  all_gather(x, xg);
  for (auto [m, n] : tiles(xg.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, xg.cols(), 64)) acc = mma_t(load<128, 64>(xg, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc + cast<f32>(load<1, 256>(bias, n))), m, n);
  }
}

// 15. Sequence-parallel RMSNorm: the rank's rows (at most 1024 columns) normalised with a 1-D
//     weight into a symmetric buffer, all-gathered along dimension 0 into a local tensor.
PK_KERNEL void sp_rms_norm_ag(Tensor<bf16, 2> x, Tensor<f32, 1> w, Sym<bf16, 2> yl, Tensor<bf16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 1024>(x, m, 0));
    auto r = rsqrt(row_sum(t * t) / float(x.cols()) + eps);
    store(yl, cast<bf16>(t * r * load<1, 1024>(w, 0)), m, 0);
  }
  all_gather(yl, y);
}

// 16. Sequence-parallel residual + bias + LayerNorm on [B, S/W, H] f16 (H <= 512), the sequence
//     dimension 1 gathered: h = x + bias + res stored as the new residual, LN(h) into a symmetric
//     [B, S/W, H] buffer, all-gathered along dimension 1 into [B, S, H].
PK_KERNEL void sp_add_layer_norm_ag_dim1(Tensor<f16, 3> x, Tensor<f16, 3> res, Tensor<f16, 1> bias, Tensor<f32, 1> g,
                                         Tensor<f32, 1> b, Tensor<f16, 3> hout, Sym<f16, 3> yl, Sym<f16, 3> y,
                                         float eps) {
  for (auto [bb, s] : tiles(x.dim(0), x.dim(1), {1, 4})) {
    auto hf = cast<f32>(load<4, 512>(x, bb, s, 0)) + cast<f32>(load<1, 512>(bias, 0)) +
              cast<f32>(load<4, 512>(res, bb, s, 0));
    store(hout, cast<f16>(hf), bb, s, 0);
    float inv_n = 1.0f / float(x.dim(2));
    auto mu = row_sum(hf) * inv_n;
    auto d = where(col_index<4, 512>(0) < x.dim(2), hf - mu, 0.0f);
    auto rs = rsqrt(row_sum(d * d) * inv_n + eps);
    store(yl, cast<f16>(d * rs * load<1, 512>(g, 0) + load<1, 512>(b, 0)), bb, s, 0);
  }
  all_gather(yl, y, 1);
}

// 17. Vocab-parallel softmax of f16 logits [T, V/W] (any width, 256-column chunks): row maxima
//     all-reduced (Max) in place, exp sums all-reduced (Sum) in place, bf16 probabilities.
PK_KERNEL void vocab_softmax(Tensor<f16, 2> x, Sym<f32, 2> mx, Sym<f32, 2> se, Tensor<bf16, 2> p) {
  for (auto m : tiles(x.rows(), {8})) {
    auto a = zeros<f32, 8, 1>() - 1e30f;
    for (auto k : range(0, x.cols(), 256))
      a = max(a, row_max(where(col_index<8, 256>(k) < x.cols(), cast<f32>(load<8, 256>(x, m, k)), -1e30f)));
    store(mx, a, m, 0);
  }
  all_reduce(Max, mx, mx);
  for (auto m : tiles(x.rows(), {8})) {
    auto g = load<8, 1>(mx, m, 0);
    auto s = zeros<f32, 8, 1>();
    for (auto k : range(0, x.cols(), 256))
      s = s + row_sum(where(col_index<8, 256>(k) < x.cols(), exp(cast<f32>(load<8, 256>(x, m, k)) - g), 0.0f));
    store(se, s, m, 0);
  }
  all_reduce(Sum, se, se);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 256}))
    store(p, cast<bf16>(exp(cast<f32>(load<8, 256>(x, m, n)) - load<8, 1>(mx, m, 0)) / load<8, 1>(se, m, 0)), m, n);
}

// 18. Vocab-parallel greedy decoding: each rank's row maximum of bf16 logits and its first
//     column (over 512-column chunks), the maxima all-reduced (Max); ranks holding the global
//     maximum offer their global token id, the others -1, all-reduced (Max, i32): the largest id
//     among ranks that tie, the smallest within a rank.
PK_KERNEL void vocab_greedy_argmax(Tensor<bf16, 2> x, Sym<f32, 2> lmax, Sym<f32, 2> gmax, Tensor<f32, 2> larg,
                                   Sym<i32, 2> cand, Tensor<i32, 2> tok) {
  for (auto m : tiles(x.rows(), {8})) {
    auto best = zeros<f32, 8, 1>() - 1e30f;
    auto bidx = zeros<f32, 8, 1>();
    for (auto k : range(0, x.cols(), 512)) {
      auto col = col_index<8, 512>(k);
      auto t = where(col < x.cols(), cast<f32>(load<8, 512>(x, m, k)), -1e30f);
      auto cm = row_max(t);
      auto ci = row_min(where(t == cm, col, 1e9f));
      bidx = where(cm > best, ci, bidx);
      best = max(best, cm);
    }
    store(lmax, best, m, 0);
    store(larg, bidx, m, 0);
  }
  all_reduce(Max, lmax, gmax);
  for (auto m : tiles(x.rows(), {8})) {
    auto id = cast<i32>(load<8, 1>(larg, m, 0)) + rank() * x.cols();
    store(cand, where(load<8, 1>(lmax, m, 0) == load<8, 1>(gmax, m, 0), id, -1), m, 0);
  }
  all_reduce(Max, cand, tok);
}

// 19. Tensor-parallel embedding by i32 ids with learned positions: this rank's rows of an f16
//     table [V/W, D] (ids of other shards read zeros), all-reduced (Sum) in place in f32, then
//     y = bf16(e * scale + pos[p0 + t]) with an f32 position table.
PK_KERNEL void tp_embedding_positions(Tensor<i32, 1> ids, Tensor<f16, 2> table, Tensor<f32, 2> pos_table,
                                      Sym<f32, 2> e, Tensor<bf16, 2> y, index p0, float scale) {
  for (auto [t, n] : tiles(ids.size(), table.cols(), {16, 64})) {
    auto loc = load<16>(ids, t) - rank() * table.rows();
    auto ok = where(loc >= 0, loc, -1);
    store(e, cast<f32>(load_rows<16, 64>(table, where(loc < table.rows(), ok, -1), n)), t, n);
  }
  all_reduce(Sum, e, e);
  for (auto [t, n] : tiles(ids.size(), table.cols(), {16, 64}))
    store(y, cast<bf16>(load<16, 64>(e, t, n) * scale + load<16, 64>(pos_table, p0 + t, n)), t, n);
}

// 20. Row-parallel linear reduce-scattered by tiles added into the owners: each rank's partial
//     product of row block p (x [W * R, K/W] times W^T, W [N, K/W]) added into rank p's y [R, N]
//     (f32), starting at this rank's own block.
PK_KERNEL void row_linear_add_to_owners(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {32, 64}))
    for (auto j : range(0, world_size())) {
      index p = (rank() + j) % world_size();
      auto acc = zeros<f32, 32, 64>();
      for (auto k : range(0, x.cols(), 64))
        acc = mma_t(load<32, 64>(x, p * y.rows() + m, k), load<64, 64>(w, n, k), acc);
      store_add(y.on(p), acc, m, n);
    }
}

// 21. Ulysses QK-norm: [H, S/W, D] q all-to-all to head-parallel [H/W, S, D], an RMS norm of each
//     head row over D <= 64 with a 1-D gain, back to sequence-parallel [H, S/W, D].
PK_KERNEL void ulysses_qk_norm(Sym<bf16, 3> q, Sym<bf16, 3> qh, Sym<bf16, 3> oh, Tensor<bf16, 3> o, Tensor<f32, 1> g,
                               float eps) {
  all_to_all(q, qh, 0, 1);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 16})) {
    auto t = cast<f32>(load<16, 64>(qh, h, m, 0));
    auto r = rsqrt(row_sum(t * t) / float(qh.dim(2)) + eps);
    store(oh, cast<bf16>(t * r * load<1, 64>(g, 0)), h, m, 0);
  }
  all_to_all(oh, o, 1, 0);
}

// ================================================================ multi-rank: optimiser ==

// 22. ZeRO Adam step: f32 gradients [W * R, C] reduce-scattered (averaged), this rank's f32 m, v
//     and master weights updated in place (Adam with decoupled weight decay, bias corrections
//     given as 1 / (1 - beta^t)), bf16 weights all-gathered.
PK_KERNEL void zero_adam_step(Sym<f32, 2> grad, Sym<f32, 2> gs, Tensor<f32, 2> m1, Tensor<f32, 2> v1,
                              Tensor<f32, 2> w, Sym<bf16, 2> wb, Tensor<bf16, 2> wfull, float lr, float beta1,
                              float beta2, float eps, float wd, float bc1, float bc2) {
  reduce_scatter(Sum, grad, gs);
  for (auto [m, n] : tiles(gs.rows(), gs.cols(), {16, 64})) {
    auto gt = load<16, 64>(gs, m, n) / float(world_size());
    auto mt = load<16, 64>(m1, m, n) * beta1 + gt * (1.0f - beta1);
    auto vt = load<16, 64>(v1, m, n) * beta2 + gt * gt * (1.0f - beta2);
    auto wt = load<16, 64>(w, m, n);
    auto wn = wt - lr * (mt * bc1 / (sqrt(vt * bc2) + eps) + wd * wt);
    store(m1, mt, m, n);
    store(v1, vt, m, n);
    store(w, wn, m, n);
    store(wb, cast<bf16>(wn), m, n);
  }
  all_gather(wb, wfull);
}

// 23. Gradient clipping by the global norm over two gradient tensors (an f32 vector and a bf16
//     matrix, each rank's shard): the sum of squares all-reduced, the norm stored, both scaled in
//     place by min(1, max_norm / (norm + 1e-6)).
PK_KERNEL void clip_grad_global_norm(Tensor<f32, 1> g1, Tensor<bf16, 2> g2, Sym<f32, 1> ss, Tensor<f32, 1> tot,
                                     Tensor<f32, 1> norm, float max_norm) {
  for (auto i : tiles(1, {1})) {
    auto s = zeros<f32, 1, 1>();
    for (auto k : range(0, g1.size(), 1024)) {
      auto t = load<1, 1024>(g1, k);
      s = s + row_sum(t * t);
    }
    for (auto r : range(0, g2.rows(), 8))
      for (auto c : range(0, g2.cols(), 256)) {
        auto t = cast<f32>(load<8, 256>(g2, r, c));
        s = s + row_sum(transpose(row_sum(t * t)));
      }
    store(ss, s, 0);
  }
  all_reduce(Sum, ss, tot);
  for (auto i : tiles(1, {1})) store(norm, sqrt(load<1>(tot, 0)), 0);
  for (auto i : tiles(g1.size(), {1024})) {
    auto c = min(max_norm / (sqrt(load<1>(tot, 0)) + 1e-6f), 1.0f);
    store(g1, load<1024>(g1, i) * c, i);
  }
  for (auto [m, n] : tiles(g2.rows(), g2.cols(), {8, 256})) {
    auto c = min(max_norm / (sqrt(load<1, 1>(tot, 0)) + 1e-6f), 1.0f);
    store(g2, cast<bf16>(cast<f32>(load<8, 256>(g2, m, n)) * c), m, n);
  }
}

// 24. Masked mean of per-token losses over the data-parallel ranks: the local sum of loss * mask
//     (f32) and count of mask (i32) all-reduced side by side, mean = sum / max(count, 1).
PK_KERNEL void dp_masked_mean_loss(Tensor<f32, 1> loss, Tensor<i32, 1> mask, Sym<f32, 1> s, Sym<i32, 1> c,
                                   Tensor<f32, 1> stot, Tensor<i32, 1> ctot, Tensor<f32, 1> mean) {
  for (auto i : tiles(1, {1})) {
    auto a = zeros<f32, 1, 1>();
    auto b = zeros<f32, 1, 1>();
    for (auto k : range(0, loss.size(), 512)) {
      auto mk = cast<f32>(load<1, 512>(mask, k));
      a = a + row_sum(load<1, 512>(loss, k) * mk);
      b = b + row_sum(mk);
    }
    store(s, a, 0);
    store(c, cast<i32>(b), 0);
  }
  all_reduce(Sum, s, stot);
  all_reduce(Sum, c, ctot);
  for (auto i : tiles(1, {1})) store(mean, load<1>(stot, 0) / max(cast<f32>(load<1>(ctot, 0)), 1.0f), 0);
}

// ================================================================ multi-rank: MoE ==

// 25. Top-1 MoE dispatch into peers: each token's expert is the argmax of its f32 router logits
//     over E <= 64 experts (E = W * experts_per_rank), its owner e / experts_per_rank; the row
//     times its softmax probability goes to row rank() * T + t of the owner's receive buffer
//     [W * T, D] (bf16), and the expert id beside it in an i32 [W * T, 1] buffer.
PK_KERNEL void moe_dispatch_top1(Tensor<bf16, 2> x, Tensor<f32, 2> logits, Sym<bf16, 2> recv, Sym<i32, 2> recv_e,
                                 index experts_per_rank) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto col = col_index<16, 64>(0);
    auto l = where(col < logits.cols(), load<16, 64>(logits, t, 0), -1e30f);
    auto mx = row_max(l);
    auto e = cast<i32>(row_min(where(l == mx, col, 1e9f)));
    auto prob = 1.0f / row_sum(exp(l - mx));
    auto v = cast<bf16>(cast<f32>(load<16, 64>(x, t, n)) * prob);
    auto slot = cast<i32>(row_index<16, 1>(t)) + rank() * x.rows();
    for (auto p : range(0, world_size())) store_rows(recv.on(p), v, where(e / experts_per_rank == p, slot, -1), n);
  }
  for (auto t : tiles(x.rows(), {16})) {
    auto col = col_index<16, 64>(0);
    auto l = where(col < logits.cols(), load<16, 64>(logits, t, 0), -1e30f);
    auto e = cast<i32>(row_min(where(l == row_max(l), col, 1e9f)));
    auto slot = cast<i32>(row_index<16, 1>(t)) + rank() * x.rows();
    for (auto p : range(0, world_size())) store_rows(recv_e.on(p), e, where(e / experts_per_rank == p, slot, -1), 0);
  }
}

// 26. Low-precision dispatch (DeepEP style): bf16 rows [W * R, D] (block j for rank j) quantised
//     to e4m3 with one f32 scale per row (t * (448 / amax)), rows and scales sent by all-to-all,
//     dequantised on arrival into bf16.
PK_KERNEL void fp8_a2a_dispatch(Tensor<bf16, 2> x, Sym<f8e4m3, 2> q, Sym<f32, 2> sc, Sym<f8e4m3, 2> qr,
                                Sym<f32, 2> scr, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = cast<f32>(load<16, 512>(x, m, 0));
    auto amax = max(row_max(abs(t)), 1e-12f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, 0);
    store(sc, amax / 448.0f, m, 0);
  }
  all_to_all(q, qr);
  all_to_all(sc, scr);
  for (auto [m, n] : tiles(qr.rows(), qr.cols(), {16, 128}))
    store(y, cast<bf16>(cast<f32>(load<16, 128>(qr, m, n)) * load<16, 1>(scr, m, 0)), m, n);
}

// 27. Expert-parallel token ids: i64 ids [W * T] (block j for rank j) sent by all-to-all, then the
//     received ids' rows of a local f32 table gathered (ids outside read zeros), times 2.
PK_KERNEL void a2a_ids_gather_rows(Sym<i64, 1> ids, Sym<i64, 1> rid, Tensor<f32, 2> table, Tensor<f32, 2> y) {
  all_to_all(ids, rid);
  for (auto [t, n] : tiles(rid.size(), table.cols(), {16, 64}))
    store(y, load_rows<16, 64>(table, load<16>(rid, t), n) * 2.0f, t, n);
}

// 28. Expert counts over the ranks: each rank's histogram of its token experts (E = W * epr <= 64,
//     at most 4096 tokens) as i64 into a symmetric [E] buffer, reduce-scattered (Sum) so each rank
//     holds its experts' totals, then their exclusive offsets (i64).
PK_KERNEL void expert_counts_rs_offsets(Tensor<i32, 1> experts, Sym<i64, 1> cnt, Tensor<i64, 1> mine,
                                        Tensor<i64, 1> off) {
  for (auto i : tiles(1, {1})) store(cnt, cast<i64>(histogram<64>(load<4096>(experts, 0))), 0);
  reduce_scatter(Sum, cnt, mine);
  for (auto i : tiles(1, {1})) {
    auto c = load<64>(mine, 0);
    store(off, cumsum(c) - c, 0);
  }
}

// ================================================================ multi-rank: rings, halos, merges ==

// 29. A ring pass as a host loop of `steps` launches (ring attention's K/V rotation): each step
//     every rank pulls the previous rank's [H, S, D] f16 block into y, then x = 0.5 * y.
PK_KERNEL void ring_pass_steps(Sym<f16, 3> x, Sym<f16, 3> y, index steps) {
  for (auto s : range(0, steps)) {
    for (auto [h, m, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 8, 32}))
      store(y, load<1, 8, 32>(x.on(prev_rank()), h, m, d), h, m, d);
    for (auto [h, m, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 8, 32}))
      store(x, load<1, 8, 32>(y, h, m, d) * 0.5f, h, m, d);
  }
}

// 30. Split-KV merge (flash-decoding across GPUs / ring attention's last step): every rank holds
//     a partial output o [T, D] (f32) and its log-sum-exp [T, 1]; out = sum_p exp(lse_p - L) o_p
//     with L = log(sum_p exp(lse_p)), pulled from every rank, bf16; L stored too.
PK_KERNEL void split_kv_merge(Sym<f32, 2> o, Sym<f32, 2> lse, Tensor<bf16, 2> out, Tensor<f32, 2> lse_out) {
  for (auto [m, n] : tiles(o.rows(), o.cols(), {16, 64})) {
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    for (auto p : range(0, world_size())) mx = max(mx, load<16, 1>(lse.on(p), m, 0));
    auto s = zeros<f32, 16, 1>();
    auto acc = zeros<f32, 16, 64>();
    for (auto p : range(0, world_size())) {
      auto wgt = exp(load<16, 1>(lse.on(p), m, 0) - mx);
      s = s + wgt;
      acc = acc + load<16, 64>(o.on(p), m, n) * wgt;
    }
    store(out, cast<bf16>(acc / s), m, n);
  }
  for (auto m : tiles(o.rows(), {16})) {
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    for (auto p : range(0, world_size())) mx = max(mx, load<16, 1>(lse.on(p), m, 0));
    auto s = zeros<f32, 16, 1>();
    for (auto p : range(0, world_size())) s = s + exp(load<16, 1>(lse.on(p), m, 0) - mx);
    store(lse_out, mx + log(s), m, 0);
  }
}

// 31. Sequence-parallel causal depthwise conv (Mamba, width 4) with SiLU: y[t] = silu(b + sum_j
//     w[j] x[t - j]); rows before the rank's chunk come from the previous rank's last rows (rank 0:
//     zeros), gathered by index from its copy. f16 x and y [L, C], f32 w [4, C] and b [C].
PK_KERNEL void causal_conv1d_halo(Sym<f16, 2> x, Tensor<f32, 2> w, Tensor<f32, 1> b, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    index ok = (rank() + world_size() - 1) / world_size();  // 0 on rank 0, else 1
    auto acc = zeros<f32, 16, 64>() + load<1, 64>(b, n);
    for (auto j : range(0, 4)) {
      auto r = cast<i32>(row_index<16, 1>(m)) - j;
      auto here = load_rows<16, 64>(x, where(r >= 0, r, -1), n);
      auto prev = load_rows<16, 64>(x.on(prev_rank()), where(r < 0, (r + x.rows() + 1) * ok - 1, -1), n);
      acc = acc + (cast<f32>(here) + cast<f32>(prev)) * load<1, 64>(w, j, n);
    }
    store(y, cast<f16>(silu(acc)), m, n);
  }
}

// 32. A ring shift of bf16 tiles to the next rank with an all-reduce of the shifted copy's column
//     sums: y on the next rank gets x + rank (the sender's), then each rank's column sums of y
//     (rows in 16-row tiles, transposed) are all-reduced.
PK_KERNEL void ring_shift_colsum_ar(Sym<bf16, 2> x, Sym<bf16, 2> y, Sym<f32, 2> cs, Tensor<f32, 2> total) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(next_rank()), cast<bf16>(cast<f32>(load<16, 64>(x, m, n)) + float(rank())), m, n);
  for (auto n : tiles(y.cols(), {64})) {
    auto acc = zeros<f32, 64, 1>();
    for (auto r : range(0, y.rows(), 16)) acc = acc + row_sum(transpose(cast<f32>(load<16, 64>(y, r, n))));
    store(cs, acc, n, 0);
  }
  all_reduce(Sum, cs, total);
}

// 33. Megatron row-parallel linear with its reduce-scatter fused, written as `--explain` asks for
//     kernel 13's second GEMM ("to fuse a reduce-scatter of the product, add each tile into its
//     owner"): bf16 h [W * R, F/W] times W2^T (W2 [N, F/W]) in the shipped 128 x 256 x 64 form,
//     each tile added into row block m / R of its owner. Takes the fused gemm_rs template (which
//     zeroes y at each launch: specs7_findings.md).
PK_KERNEL void row_linear_rs_fused(Tensor<bf16, 2> h, Tensor<bf16, 2> w2, Sym<bf16, 2> y) {
  index rows = h.rows() / world_size();
  for (auto [m, n] : tiles(h.rows(), w2.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, h.cols(), 64)) acc = mma_t(load<128, 64>(h, m, k), load<256, 64>(w2, n, k), acc);
    store_add(y.on(m / rows), cast<bf16>(acc), m % rows, n);
  }
}

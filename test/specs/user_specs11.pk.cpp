// An eleventh user-written spec set, written from docs/language.md, README.md, pk/spec.h and the
// shipped specs alone (no compiler sources read first). It is aimed mainly at single-GPU kernels
// that mix constructs, with sizes that are not multiples of the tiles: f16 and bf16 GEMMs in both
// layouts with epilogues (a bias row and a residual in f16, a column scale and a row mask into
// f32), two accumulators (SwiGLU), a batched GEMM over 3-D tensors with a per-batch scale read by
// .at(), an fp8 GEMM with per-row and per-column scales, a weight-only fp8 GEMM dequantised per
// 128 x 128 block inside the K loop, LoRA as two dependent tile loops, an LM head whose tiles
// reduce to per-block maxima and argmaxes; fused norms (add + RMSNorm with the residual updated in
// place, LayerNorm over column chunks, group norm over [B, C, HW] through transpose); softmax
// variants (lengths-masked with a temperature, min-p sampling probabilities, a one-pass online
// softmax over column chunks); rotary embeddings (interleaved GPT-J pairs by loads shifted one
// column either way, NeoX with partial rotary dims, and rotary applied to k on its way into a
// KV cache by slot, with cos / sin gathered by position); quantisation (fp8 e4m3 with one scale per
// 128 x 128 block of a weight, asymmetric int8-like rows into i32 with zero points); top-4 by
// iterative masking in a range loop; running sums (per row, inclusive and exclusive; positions
// from an i32 mask with a histogram of it); attention (GQA causal with an additive bias and a 3-D
// lse, a padded batch with key lengths read by .at(), f16 causal on the general path, split-KV
// decode for grouped heads as two dependent phases); cross-entropy with an ignore index, z-loss
// and a sum and count added into one row by store_add_rows; an embedding bag mean; a causal
// depthwise conv over [B, T, C] reading rows before each sequence's start. Four multi-rank
// kernels close the set (all-reduce + residual + LayerNorm, a column reduce-scatter feeding a
// softmax across column shards and a column all-gather, a ring shift of keys then scores, a
// reduce-scatter then per-row fp8), with world size 3 in mind, and three kernels that read one
// place before a tensor's start (a GPT-J rotary appended by slot, a bigram hash gathered by
// load_rows, an exclusive scan by a shifted load): specs11 finding 1. Each kernel's comment says
// what the correct result is. test/gpu/user_specs11_jit_test.cu runs them through the JIT against
// float64; test/Compile/user_specs11.test compiles the set; test/specs/specs11_findings.md has
// the findings.
#include <pk/spec.h>
using namespace pk;

// ================================================================ GEMMs ==

// 1. f16 A [M, K] times B [K, N] (mma, B K-major rows), plus an f32 bias [N] and an f16 residual
//    [M, N], stored f16: c = f16(a b + bias + res). 128 x 128 x 32 tiles; any M, N, K.
PK_KERNEL void gemm_f16_ab_bias_res_f16(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> bias, Tensor<f16, 2> res,
                                        Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<128, 32>(a, m, k), load<32, 128>(b, k, n), acc);
    store(c, cast<f16>(acc + load<1, 128>(bias, n) + cast<f32>(load<128, 128>(res, m, n))), m, n);
  }
}

// 2. bf16 A [M, K] times B [N, K] transposed (mma_t), each column scaled by cs [N] (f32), rows at
//    or past `valid_rows` set to 0, stored f32: c[i, j] = i < valid_rows ? (a b^T)[i, j] cs[j] : 0.
PK_KERNEL void gemm_t_bf16_colscale_rowmask_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> cs,
                                                Tensor<f32, 2> c, index valid_rows) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, where(row_index<64, 128>(m) < valid_rows, acc * load<1, 128>(cs, n), 0.0f), m, n);
  }
}

// 3. LLaMA's MLP gate in f16: h = f16(silu(x wg^T) * (x wu^T)) with wg, wu [N, K], two
//    accumulators over one K loop (one x tile feeding both). 64 x 64 x 32 tiles; any sizes.
PK_KERNEL void swiglu_two_gemm_f16(Tensor<f16, 2> x, Tensor<f16, 2> wg, Tensor<f16, 2> wu, Tensor<f16, 2> h) {
  for (auto [m, n] : tiles(x.rows(), wg.rows(), {64, 64})) {
    auto g = zeros<f32, 64, 64>();
    auto u = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) {
      auto xt = load<64, 32>(x, m, k);
      g = mma_t(xt, load<64, 32>(wg, n, k), g);
      u = mma_t(xt, load<64, 32>(wu, n, k), u);
    }
    store(h, cast<f16>(silu(g) * u), m, n);
  }
}

// 4. Batched GEMM over 3-D tensors: a [B, M, K], b [B, N, K], c[bb] = bf16(a[bb] b[bb]^T * s[bb])
//    with s [B] f32 read by .at(bb). 64 x 64 x 32 tiles of the trailing dimensions; any sizes.
PK_KERNEL void batched_gemm_t_scale(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 1> s, Tensor<bf16, 3> c) {
  for (auto [bb, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.dim(2), 32))
      acc = mma_t(load<64, 32>(a, bb, m, k), load<64, 32>(b, bb, n, k), acc);
    store(c, cast<bf16>(acc * s.at(bb)), bb, m, n);
  }
}

// 5. fp8 GEMM with row-wise scales (the usual W8A8 form): a [M, K] and b [N, K] e4m3, sa [M] and
//    sb [N] f32, c = bf16((a b^T) * sa[i] * sb[j]). 128 x 128 x 64 tiles; K a multiple of 16.
PK_KERNEL void fp8_gemm_t_rowcol_scales(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 1> sa,
                                        Tensor<f32, 1> sb, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * load<128, 1>(sa, m) * load<1, 128>(sb, n)), m, n);
  }
}

// 6. Weight-only fp8 GEMM (DeepSeek-style 128 x 128 block scales): w [N, K] e4m3 with one f32
//    scale per block ws [ceil(N / 128), ceil(K / 128)]; each K step dequantises its block to bf16,
//    y = bf16(sum_k x[i, k] bf16(w[j, k] ws[j / 128, k / 128])). 64 x 128 x 128 tiles.
PK_KERNEL void w8a16_blockscale_gemm_t(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<f32, 2> ws, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, x.cols(), 128)) {
      auto wt = cast<bf16>(cast<f32>(load<128, 128>(w, n, k)) * ws.at(n / 128, k / 128));
      acc = mma_t(load<64, 128>(x, m, k), wt, acc);
    }
    store(y, cast<bf16>(acc), m, n);
  }
}

// 7. LoRA linear in two dependent tile loops: xa = bf16(x la^T) ([M, r], la [r, K], r <= 16)
//    is written by the first loop and read across tiles by the second:
//    y = bf16(x w^T + scale * (xa lb^T)) with w [N, K] and lb [N, r].
PK_KERNEL void lora_linear(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> la, Tensor<bf16, 2> lb,
                           Tensor<bf16, 2> xa, Tensor<bf16, 2> y, float scale) {
  for (auto [m, j] : tiles(x.rows(), la.rows(), {64, 16})) {
    auto acc = zeros<f32, 64, 16>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<16, 64>(la, j, k), acc);
    store(xa, cast<bf16>(acc), m, j);
  }
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<64, 64>(w, n, k), acc);
    auto d = zeros<f32, 64, 64>();
    for (auto j : range(0, la.rows(), 16)) d = mma_t(load<64, 16>(xa, m, j), load<64, 16>(lb, n, j), d);
    store(y, cast<bf16>(acc + d * scale), m, n);
  }
}

// 8. Greedy decoding's LM head, reduced per tile: logits = h w^T (h [T, K], w [V, K]); for each
//    128-column block b of the vocabulary, pmax[t, b] = the block's largest logit (f32) and
//    pidx[t, b] = its column (the first on ties), i32. Columns past V do not count.
PK_KERNEL void lm_head_argmax_partials(Tensor<bf16, 2> h, Tensor<bf16, 2> w, Tensor<f32, 2> pmax, Tensor<i32, 2> pidx) {
  for (auto [m, n] : tiles(h.rows(), w.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, h.cols(), 64)) acc = mma_t(load<64, 64>(h, m, k), load<128, 64>(w, n, k), acc);
    auto cols = col_index<64, 128>(n);
    auto s = where(cols < w.rows(), acc, -1e30f);
    auto mx = row_max(s);
    store(pmax, mx, m, n / 128);
    store(pidx, cast<i32>(row_min(where(s == mx, cols, 1e9f))), m, n / 128);
  }
}

// ================================================================ norms ==

// 9. vLLM's fused_add_rms_norm in f16 (H <= 1024): h = f16(x + res) is written back into res (in
//    place), y = f16(h * rsqrt(mean(h^2) + eps) * w).
PK_KERNEL void add_rmsnorm_inplace_f16(Tensor<f16, 2> x, Tensor<f16, 2> res, Tensor<f16, 1> w, Tensor<f16, 2> y,
                                       float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto hh = cast<f16>(cast<f32>(load<4, 1024>(x, m, 0)) + cast<f32>(load<4, 1024>(res, m, 0)));
    store(res, hh, m, 0);
    auto t = cast<f32>(hh);
    auto r = rsqrt(row_sum(t * t) / float(x.cols()) + eps);
    store(y, cast<f16>(t * r * cast<f32>(load<1, 1024>(w, 0))), m, 0);
  }
}

// 10. LayerNorm with weight and bias over any H, in 256-column chunks (three passes: mean,
//     variance of the masked deviations, normalise): y = bf16((x - mu) rsqrt(var + eps) g + b).
PK_KERNEL void layernorm_chunked_bf16(Tensor<bf16, 2> x, Tensor<bf16, 1> g, Tensor<bf16, 1> b, Tensor<bf16, 2> y,
                                      float eps) {
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
    auto rs = rsqrt(v * inv_n + eps);
    for (auto n : range(0, x.cols(), 256))
      store(y,
            cast<bf16>((cast<f32>(load<8, 256>(x, m, n)) - mu) * rs * cast<f32>(load<1, 256>(g, n)) +
                       cast<f32>(load<1, 256>(b, n))),
            m, n);
  }
}

// 11. GroupNorm on [B, C, HW] f32 with 8 channels per group (C a multiple of 8, HW <= 64): each
//     tile is one group's 8 x HW block; its mean and variance come from row sums reduced again
//     through a transpose; y = (x - mu) rsqrt(var + eps) gamma[c] + beta[c].
PK_KERNEL void group_norm_nchw(Tensor<f32, 3> x, Tensor<f32, 1> gamma, Tensor<f32, 1> beta, Tensor<f32, 3> y,
                               float eps) {
  for (auto [bb, c] : tiles(x.dim(0), x.dim(1), {1, 8})) {
    auto t = load<8, 64>(x, bb, c, 0);
    float inv_n = 1.0f / float(8 * x.dim(2));
    auto mu = row_sum(transpose(row_sum(t))) * inv_n;
    auto d = where(col_index<8, 64>(0) < x.dim(2), t - mu, 0.0f);
    auto var = row_sum(transpose(row_sum(d * d))) * inv_n;
    store(y, d * rsqrt(var + eps) * load<8, 1>(gamma, c) + load<8, 1>(beta, c), bb, c, 0);
  }
}

// ================================================================ softmax ==

// 12. Key-padding softmax of [B, Sq, Sk] f32 scores (Sk <= 512) with a temperature: batch bb
//     keeps the first len[bb] keys (1 <= len <= Sk, i32 read by .at()), p = bf16(softmax(s / T)),
//     0 at the masked keys.
PK_KERNEL void masked_softmax_lengths(Tensor<f32, 3> s, Tensor<i32, 1> len, Tensor<bf16, 3> p, float inv_temp) {
  for (auto [bb, m] : tiles(s.dim(0), s.dim(1), {1, 16})) {
    index L = len.at(bb);
    auto x = where(col_index<16, 512>(0) < L, load<16, 512>(s, bb, m, 0) * inv_temp, -1e30f);
    auto e = exp(x - row_max(x));
    store(p, cast<bf16>(e / row_sum(e)), bb, m, 0);
  }
}

// 13. Min-p sampling probabilities over any vocabulary, in 1024-column chunks: with
//     e = exp(x / T - max(x / T)), tokens with e < min_p (p < min_p * p_max) are dropped and the
//     rest renormalised: probs = e >= min_p ? e / sum_{kept} e : 0.
PK_KERNEL void min_p_probs(Tensor<f32, 2> logits, Tensor<f32, 2> probs, float inv_temp, float min_p) {
  for (auto t : tiles(logits.rows(), {4})) {
    auto mx = zeros<f32, 4, 1>() - 1e30f;
    for (auto n : range(0, logits.cols(), 1024))
      mx = max(mx, row_max(where(col_index<4, 1024>(n) < logits.cols(), load<4, 1024>(logits, t, n) * inv_temp,
                                 -1e30f)));
    auto s = zeros<f32, 4, 1>();
    for (auto n : range(0, logits.cols(), 1024)) {
      auto e = exp(load<4, 1024>(logits, t, n) * inv_temp - mx);
      s = s + row_sum(where((col_index<4, 1024>(n) < logits.cols()) * (e >= min_p), e, 0.0f));
    }
    for (auto n : range(0, logits.cols(), 1024)) {
      auto e = exp(load<4, 1024>(logits, t, n) * inv_temp - mx);
      store(probs, where(e >= min_p, e / s, 0.0f), t, n);
    }
  }
}

// 14. One-pass online softmax statistics over 512-column chunks (running max and rescaled sum),
//     then the normalised output: y = bf16(exp(x - max) / sum) for any row length.
PK_KERNEL void softmax_online_chunks(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto t : tiles(x.rows(), {8})) {
    auto mx = zeros<f32, 8, 1>() - 1e30f;
    auto l = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 512)) {
      auto v = where(col_index<8, 512>(n) < x.cols(), cast<f32>(load<8, 512>(x, t, n)), -1e30f);
      auto mn = max(mx, row_max(v));
      l = l * exp(mx - mn) + row_sum(exp(v - mn));
      mx = mn;
    }
    for (auto n : range(0, x.cols(), 512)) store(y, cast<bf16>(exp(cast<f32>(load<8, 512>(x, t, n)) - mx) / l), t, n);
  }
}

// ================================================================ rotary, KV cache ==

// 15. GPT-J (interleaved) rotary on x [S, H, 64] bf16 with full-width cos / sin tables [S, 64]
//     (cos[s, 2i] == cos[s, 2i + 1]): y[.., 2i] = x[2i] cos - x[2i + 1] sin,
//     y[.., 2i + 1] = x[2i + 1] cos + x[2i] sin. The pair partner comes from loads one column to
//     the right and to the left; 16 heads per tile (any H).
PK_KERNEL void rope_interleaved_3d(Tensor<bf16, 3> x, Tensor<f32, 2> cs, Tensor<f32, 2> sn, Tensor<bf16, 3> y) {
  for (auto [s, h] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    auto t = cast<f32>(load<16, 64>(x, s, h, 0));
    auto nxt = cast<f32>(load<16, 64>(x, s, h, 1));
    auto prv = cast<f32>(load<16, 64>(x, s, h, -1));
    auto even = cast<i32>(col_index<16, 64>(0)) % 2 == 0;
    auto rot = where(even, -nxt, prv);
    store(y, cast<bf16>(t * load<1, 64>(cs, s, 0) + rot * load<1, 64>(sn, s, 0)), s, h, 0);
  }
}

// 16. NeoX rotary with partial rotary dims (GPT-NeoX rotary_pct = 0.5): x [T, H, 64] bf16, the
//     first 32 dims rotate as pairs (d, d + 16) with cos / sin [T, 16] f32, dims 32..63 pass
//     through. Three stores per tile at column offsets 0, 16, 32; 8 heads per tile (any H).
PK_KERNEL void rope_neox_partial_3d(Tensor<bf16, 3> x, Tensor<f32, 2> cs, Tensor<f32, 2> sn, Tensor<bf16, 3> y) {
  for (auto [t, h] : tiles(x.dim(0), x.dim(1), {1, 8})) {
    auto x1 = cast<f32>(load<8, 16>(x, t, h, 0));
    auto x2 = cast<f32>(load<8, 16>(x, t, h, 16));
    auto c = load<1, 16>(cs, t, 0);
    auto s = load<1, 16>(sn, t, 0);
    store(y, cast<bf16>(x1 * c - x2 * s), t, h, 0);
    store(y, cast<bf16>(x2 * c + x1 * s), t, h, 16);
    store(y, load<8, 32>(x, t, h, 32), t, h, 32);
  }
}

// 17. vLLM's rotary + reshape_and_cache: k, v [T, Hkv * 64] bf16; k gets NeoX rotary with cos /
//     sin rows gathered by the token's position (pos [T] i32 into caches [P, 32] f32); both are
//     written into the KV caches [NS, Hkv * 64] at row slots[t] (i64; -1 = padding token, not
//     written). One head (64 columns) per tile.
PK_KERNEL void rope_kv_append(Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<i32, 1> pos, Tensor<i64, 1> slots,
                              Tensor<f32, 2> cos_cache, Tensor<f32, 2> sin_cache, Tensor<bf16, 2> kc,
                              Tensor<bf16, 2> vc) {
  for (auto [t, n] : tiles(k.rows(), k.cols(), {16, 64})) {
    auto p = load<16>(pos, t);
    auto c = load_rows<16, 32>(cos_cache, p, 0);
    auto s = load_rows<16, 32>(sin_cache, p, 0);
    auto k1 = cast<f32>(load<16, 32>(k, t, n));
    auto k2 = cast<f32>(load<16, 32>(k, t, n + 32));
    auto sl = load<16>(slots, t);
    store_rows(kc, cast<bf16>(k1 * c - k2 * s), sl, n);
    store_rows(kc, cast<bf16>(k2 * c + k1 * s), sl, n + 32);
    store_rows(vc, load<16, 64>(v, t, n), sl, n);
  }
}

// ================================================================ quantisation ==

// 18. fp8 e4m3 weight quantisation with one scale per 128 x 128 block (any shape; a partial
//     block's scale covers what it holds): amax over the block (row maxima reduced again through
//     a transpose), q = e4m3(w * 448 / amax), sc[m / 128, n / 128] = amax / 448 (amax at least
//     1e-12).
PK_KERNEL void fp8_block2d_quant(Tensor<bf16, 2> w, Tensor<f8e4m3, 2> q, Tensor<f32, 2> sc) {
  for (auto [m, n] : tiles(w.rows(), w.cols(), {128, 128})) {
    auto t = cast<f32>(load<128, 128>(w, m, n));
    auto amax = max(row_max(transpose(row_max(abs(t)))), 1e-12f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(sc, amax / 448.0f, m / 128, n / 128);
  }
}

// 19. Asymmetric int8-like row quantisation into i32 (cols <= 512): hi = max(max x, 0),
//     lo = min(min x, 0), s = max((hi - lo) / 255, 1e-8), zp = round(-128 - lo / s) (half up),
//     q = clamp(round(x / s) + zp, -128, 127) (half away from zero); scale [M, 1], zp [M, 1].
PK_KERNEL void int8_asym_quant_rows(Tensor<f32, 2> x, Tensor<i32, 2> q, Tensor<f32, 2> scale, Tensor<i32, 2> zp) {
  for (auto m : tiles(x.rows(), {8})) {
    auto valid = col_index<8, 512>(0) < x.cols();
    auto t = load<8, 512>(x, m, 0);
    auto hi = max(row_max(where(valid, t, -1e30f)), 0.0f);
    auto lo = min(row_min(where(valid, t, 1e30f)), 0.0f);
    auto s = max((hi - lo) / 255.0f, 1e-8f);
    auto z = cast<i32>(lo / s * -1.0f + 0.5f);  // -lo / s >= 0: truncation rounds half up
    auto zz = z - 128;
    auto r = t / s;
    auto qi = cast<i32>(r + where(r >= 0.0f, 0.5f, -0.5f)) + zz;
    store(q, max(min(qi, 127), -128), m, 0);
    store(scale, s, m, 0);
    store(zp, zz, m, 0);
  }
}

// ================================================================ selection, running sums ==

// 20. Top-4 of each row (cols <= 1024) by iterative masking in a range loop that carries the
//     tile: vals[t, j] the j-th largest value, ids[t, j] its column (the lowest on ties).
PK_KERNEL void topk4_iterative(Tensor<f32, 2> x, Tensor<f32, 2> vals, Tensor<i32, 2> ids) {
  for (auto m : tiles(x.rows(), {8})) {
    auto cols = col_index<8, 1024>(0);
    auto t = where(cols < x.cols(), load<8, 1024>(x, m, 0), -1e30f);
    for (auto j : range(0, 4)) {
      auto mx = row_max(t);
      auto id = row_min(where(t == mx, cols, 1e9f));
      store(vals, mx, m, j);
      store(ids, cast<i32>(id), m, j);
      t = where(cols == id, -1e30f, t);
    }
  }
}

// 21. Running sums along each row (cols <= 2048) as 1-D tiles of the trailing dimension:
//     incl[r, j] = sum_{i <= j} x[r, i], excl = incl - x.
PK_KERNEL void cumsum_rows_incl_excl(Tensor<f32, 2> x, Tensor<f32, 2> incl, Tensor<f32, 2> excl) {
  for (auto r : tiles(x.rows(), {1})) {
    auto t = load<2048>(x, r, 0);
    auto c = cumsum(t);
    store(incl, c, r, 0);
    store(excl, c - t, r, 0);
  }
}

// 22. Position ids from an i32 attention mask of one sequence (n <= 8192): pos[i] = (number of
//     ones in mask[0..i]) - 1 where mask[i] != 0, else -1; counts[0..1] = how many zeros and ones.
PK_KERNEL void positions_from_mask(Tensor<i32, 1> mask, Tensor<i32, 1> pos, Tensor<i32, 1> counts) {
  for (auto i : tiles(mask.size(), {8192})) {
    auto mk = load<8192>(mask, i);
    store(pos, where(mk != 0, cumsum(mk) - 1, -1), i);
    store(counts, histogram<2>(mk), 0);
  }
}

// ================================================================ attention ==

// 23. Grouped-query causal attention, head dim 128, with an additive f32 score bias [S, S]
//     (shared by the heads): s = q k^T scale + bias[i, j], causal, keys past S masked;
//     q [H, S, 128], k v [Hkv, S, 128] (H a multiple of Hkv), o bf16, lse [H, S, 1] f32.
PK_KERNEL void gqa_causal_bias_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<f32, 2> bias,
                                    Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index kh = h / (q.dim(0) / k.dim(0));
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, kh, n, 0), zeros<f32, 64, 64>()) * scale + load<64, 64>(bias, m, n);
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, kh, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 24. A padded batch, head dim 64, not causal: q k v [B * heads, S, 64] (batch bb's heads are
//     bb * heads ..), key lengths klen [B] i32 (1 <= klen <= S) read by .at(h / heads); keys at
//     or past the length are masked. o bf16, lse [B * heads, S, 1].
PK_KERNEL void padded_batch_attention_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v,
                                          Tensor<i32, 1> klen, Tensor<bf16, 3> o, Tensor<f32, 3> lse, index heads,
                                          float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index L = klen.at(h / heads);
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)) * (col_index<64, 64>(n) < L), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 25. Causal attention in f16 (q k v o [H, S, 64] f16; written when the template was bf16 only,
//     now on the template in f16), 32 query rows per tile, odd S.
PK_KERNEL void attention_f16_causal_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o,
                                        float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 32})) {
    auto qt = load<32, 64>(q, h, m, 0);
    auto mx = zeros<f32, 32, 1>() - 1e30f;
    auto l = zeros<f32, 32, 1>();
    auto acc = zeros<f32, 32, 64>();
    for (auto n : range(0, m + 32, 32)) {
      auto s = mma_t(qt, load<32, 64>(k, h, n, 0), zeros<f32, 32, 32>()) * scale;
      s = where((col_index<32, 32>(n) <= row_index<32, 32>(m)) * (col_index<32, 32>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<32, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
  }
}

// 26. Split-KV decode (flash decoding) for grouped heads on one GPU, two dependent phases: q
//     [Hkv, 8, 128] (8 query heads per KV head, one token), k v [Hkv, S, 128]; phase 1 computes,
//     per KV head and 256-key split sp, the split's normalised output part_o[h * NS + sp]
//     ([Hkv * NS, 8, 128] f32) and log-sum-exp part_lse[h * NS + sp] ([Hkv * NS, 8, 1]), with
//     NS = part_o.dim(0) / Hkv = ceil(S / 256); phase 2 merges them: o = bf16(sum_sp
//     exp(lse_sp - max) o_sp / sum_sp exp(lse_sp - max)).
PK_KERNEL void split_kv_decode_gqa(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<f32, 3> part_o,
                                   Tensor<f32, 3> part_lse, Tensor<bf16, 3> o, float scale) {
  index ns = part_o.dim(0) / k.dim(0);
  for (auto [h, n0] : tiles(k.dim(0), k.dim(1), {1, 256})) {
    auto qt = load<8, 128>(q, h, 0, 0);
    auto mx = zeros<f32, 8, 1>() - 1e30f;
    auto l = zeros<f32, 8, 1>();
    auto acc = zeros<f32, 8, 128>();
    for (auto n : range(n0, n0 + 256, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 8, 64>()) * scale;
      s = where(col_index<8, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    index sp = h * ns + n0 / 256;
    store(part_o, acc / l, sp, 0, 0);
    store(part_lse, mx + log(l), sp, 0, 0);
  }
  for (auto h : tiles(k.dim(0), {1})) {
    auto gm = zeros<f32, 8, 1>() - 1e30f;
    for (auto j : range(0, ns)) gm = max(gm, load<8, 1>(part_lse, h * ns + j, 0, 0));
    auto den = zeros<f32, 8, 1>();
    auto num = zeros<f32, 8, 128>();
    for (auto j : range(0, ns)) {
      auto wgt = exp(load<8, 1>(part_lse, h * ns + j, 0, 0) - gm);
      den = den + wgt;
      num = num + load<8, 128>(part_o, h * ns + j, 0, 0) * wgt;
    }
    store(o, cast<bf16>(num / den), h, 0, 0);
  }
}

// ================================================================ losses, gathers, conv ==

// 27. Cross-entropy over any vocabulary in one online pass (running max, rescaled exp sum, the
//     target's logit), with HF's ignore_index -100 and PaLM's z-loss: loss[t] = lse - x[target] +
//     z * lse^2, 0 for ignored rows; total [1, 2] (zeroed by the kernel's first loop) receives the
//     sum of the losses and the number of rows not ignored, added by store_add_rows into row 0.
PK_KERNEL void cross_entropy_zloss_sum(Tensor<bf16, 2> logits, Tensor<i32, 1> target, Tensor<f32, 1> loss,
                                       Tensor<f32, 2> total, float z_coef) {
  for (auto i : tiles(1, {1})) store(total, zeros<f32, 1, 2>(), i, 0);
  for (auto t : tiles(logits.rows(), {16})) {
    auto tg = load<16, 1>(target, t);
    auto tgf = cast<f32>(tg);
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    auto l = zeros<f32, 16, 1>();
    auto xt = zeros<f32, 16, 1>();
    for (auto n : range(0, logits.cols(), 512)) {
      auto cols = col_index<16, 512>(n);
      auto x = where(cols < logits.cols(), cast<f32>(load<16, 512>(logits, t, n)), -1e30f);
      auto mn = max(mx, row_max(x));
      l = l * exp(mx - mn) + row_sum(exp(x - mn));
      xt = xt + row_sum(where(cols == tgf, x, 0.0f));
      mx = mn;
    }
    auto lse = mx + log(l);
    auto keep = tg != -100;
    auto li = where(keep, lse - xt + z_coef * lse * lse, 0.0f);
    store(loss, li, t);
    auto both = where(col_index<16, 2>(0) == 0.0f, li, cast<f32>(keep));
    store_add_rows(total, both, load<16>(target, t) * 0, 0);
  }
}

// 28. EmbeddingBag(mode="mean"): ids [B, L] i32 (-1 = padding, not counted), table [V, D] bf16,
//     out[b] = sum of table[ids[b, l]] over valid l / max(count, 1), f32.
PK_KERNEL void embedding_bag_mean(Tensor<i32, 2> ids, Tensor<bf16, 2> table, Tensor<f32, 2> out) {
  for (auto [b, n] : tiles(ids.rows(), table.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    auto cnt = zeros<f32, 16, 1>();
    for (auto l : range(0, ids.cols())) {
      auto id = load<16, 1>(ids, b, l);
      acc = acc + cast<f32>(load_rows<16, 128>(table, id, n));
      cnt = cnt + cast<f32>(id >= 0);
    }
    store(out, acc / max(cnt, 1.0f), b, n);
  }
}

// 29. Mamba's causal depthwise conv1d (width 4) with SiLU over a batch: x [B, T, C] bf16, taps
//     w [4, C] f32 (tap j multiplies x[t - 3 + j]), bias [C]; rows before a sequence's start are
//     zero (never the previous sequence's rows): y = bf16(silu(bias + sum_j w[j] x[t - 3 + j])).
PK_KERNEL void causal_conv1d_silu_3d(Tensor<bf16, 3> x, Tensor<f32, 2> w, Tensor<f32, 1> bias, Tensor<bf16, 3> y) {
  for (auto [b, t, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 128})) {
    auto acc = zeros<f32, 16, 128>() + load<1, 128>(bias, c);
    for (auto j : range(0, 4)) acc = acc + cast<f32>(load<16, 128>(x, b, t - 3 + j, c)) * load<1, 128>(w, j, c);
    store(y, cast<bf16>(silu(acc)), b, t, c);
  }
}

// 30. Dequantise an e4m3 [M, N] tensor with per-row scales [M] and subtract a per-column mean
//     [N] in bf16, stored transposed ([N, M]): yt[j, i] = bf16(q[i, j] s[i] - mu[j]). 32 x 64
//     tiles, any sizes.
PK_KERNEL void dequant_center_transpose(Tensor<f8e4m3, 2> q, Tensor<f32, 1> s, Tensor<f32, 1> mu, Tensor<bf16, 2> yt) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {32, 64})) {
    auto t = cast<f32>(load<32, 64>(q, m, n)) * load<32, 1>(s, m) - load<1, 64>(mu, n);
    store(yt, cast<bf16>(transpose(t)), n, m);
  }
}

// ================================================================ multi-rank ==

// 31. Row-parallel linear's epilogue: p [T, H] f16 (this rank's partial sum) all-reduced into s,
//     h = s + res (f32) written back as f16 into res, y = f16(LN(h) g + b) with f32 g, b (H <= 1024).
PK_KERNEL void ar_residual_layernorm_f16(Sym<f16, 2> p, Sym<f16, 2> s, Tensor<f16, 2> res, Tensor<f32, 1> g,
                                         Tensor<f32, 1> b, Tensor<f16, 2> y, float eps) {
  all_reduce(Sum, p, s);
  for (auto m : tiles(s.rows(), {8})) {
    auto hh = cast<f32>(load<8, 1024>(s, m, 0)) + cast<f32>(load<8, 1024>(res, m, 0));
    store(res, cast<f16>(hh), m, 0);
    float inv_n = 1.0f / float(s.cols());
    auto mu = row_sum(hh) * inv_n;
    auto d = where(col_index<8, 1024>(0) < s.cols(), hh - mu, 0.0f);
    store(y, cast<f16>(d * rsqrt(row_sum(d * d) * inv_n + eps) * load<1, 1024>(g, 0) + load<1, 1024>(b, 0)), m, 0);
  }
}

// 32. A softmax over vocabulary column shards: the partial logits p [T, V] (f32, each rank's
//     partial sum) are reduce-scattered along columns into ps [T, V / W]; the row max and exp sum
//     over the whole vocabulary come from a Max and a Sum all-reduce of per-shard statistics; the
//     bf16 probabilities of the shard are all-gathered along columns into out [T, V].
PK_KERNEL void rs_cols_softmax_ag_cols(Sym<f32, 2> p, Sym<f32, 2> ps, Sym<f32, 2> mx, Sym<f32, 2> gmx, Sym<f32, 2> sm,
                                       Sym<f32, 2> gsm, Sym<bf16, 2> pr, Tensor<bf16, 2> out) {
  reduce_scatter(Sum, p, ps, 1);
  for (auto t : tiles(ps.rows(), {8})) {
    auto m = zeros<f32, 8, 1>() - 1e30f;
    for (auto n : range(0, ps.cols(), 256))
      m = max(m, row_max(where(col_index<8, 256>(n) < ps.cols(), load<8, 256>(ps, t, n), -1e30f)));
    store(mx, m, t, 0);
  }
  all_reduce(Max, mx, gmx);
  for (auto t : tiles(ps.rows(), {8})) {
    auto g = load<8, 1>(gmx, t, 0);
    auto e = zeros<f32, 8, 1>();
    for (auto n : range(0, ps.cols(), 256))
      e = e + row_sum(where(col_index<8, 256>(n) < ps.cols(), exp(load<8, 256>(ps, t, n) - g), 0.0f));
    store(sm, e, t, 0);
  }
  all_reduce(Sum, sm, gsm);
  for (auto [t, n] : tiles(ps.rows(), ps.cols(), {8, 256}))
    store(pr, cast<bf16>(exp(load<8, 256>(ps, t, n) - load<8, 1>(gmx, t, 0)) / load<8, 1>(gsm, t, 0)), t, n);
  all_gather(pr, out, 1);
}

// 33. One ring-attention step: each rank pushes its key block k [S, 64] (S <= 128) into the next
//     rank's kr, then scores its queries q [Sq, 64] against the previous rank's keys:
//     p = softmax(q kr^T scale) over the S keys, f32 [Sq, 128] (columns past S are 0).
PK_KERNEL void ring_kv_shift_scores(Sym<bf16, 2> k, Sym<bf16, 2> kr, Tensor<bf16, 2> q, Tensor<f32, 2> p, float scale) {
  for (auto [m, n] : tiles(k.rows(), k.cols(), {16, 64})) store(kr.on(next_rank()), load<16, 64>(k, m, n), m, n);
  for (auto m : tiles(q.rows(), {16})) {
    auto s = mma_t(load<16, 64>(q, m, 0), load<128, 64>(kr, 0, 0), zeros<f32, 16, 128>()) * scale;
    s = where(col_index<16, 128>(0) < kr.rows(), s, -1e30f);
    auto e = exp(s - row_max(s));
    store(p, e / row_sum(e), m, 0);
  }
}

// 34. Reduce-scatter of bf16 partial sums p [T, H] over rows into ps [T / W, H], then per-row
//     dynamic e4m3 quantisation of the rank's rows (H <= 512): sc[t] = max(amax, 1e-12) / 448,
//     q = e4m3(ps / sc).
PK_KERNEL void rs_rows_fp8_rowwise(Sym<bf16, 2> p, Sym<bf16, 2> ps, Tensor<f8e4m3, 2> q, Tensor<f32, 1> sc) {
  reduce_scatter(Sum, p, ps);
  for (auto m : tiles(ps.rows(), {16})) {
    auto t = cast<f32>(load<16, 512>(ps, m, 0));
    auto amax = max(row_max(abs(t)), 1e-12f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, 0);
    store(sc, amax / 448.0f, m);
  }
}

// ================================================================ loads before the start (finding 1) ==

// 35. GPT-J rotary on k [T, 64] bf16 (interleaved pairs, the partner from loads one column to the
//     right and to the left, full-width f32 cos / sin [T, 64]) appended to a KV cache at row
//     slots[t] (i32; -1 = not written): kc[slots[t]] = bf16(k cos + rot(k) sin).
PK_KERNEL void rope_gptj_kv_append(Tensor<bf16, 2> k, Tensor<f32, 2> cs, Tensor<f32, 2> sn, Tensor<i32, 1> slots,
                                   Tensor<bf16, 2> kc) {
  for (auto t : tiles(k.rows(), {16})) {
    auto x = cast<f32>(load<16, 64>(k, t, 0));
    auto nxt = cast<f32>(load<16, 64>(k, t, 1));
    auto prv = cast<f32>(load<16, 64>(k, t, -1));
    auto even = cast<i32>(col_index<16, 64>(0)) % 2 == 0;
    auto y = x * load<16, 64>(cs, t, 0) + where(even, -nxt, prv) * load<16, 64>(sn, t, 0);
    store_rows(kc, cast<bf16>(y), load<16>(slots, t), 0);
  }
}

// 36. Bigram hash embedding: row t of y is table[(31 ids[t] + ids[t - 1]) % V] (ids[-1] reads 0),
//     gathered by load_rows; i32 ids [T], bf16 table [V, D].
PK_KERNEL void bigram_hash_embed(Tensor<i32, 1> ids, Tensor<bf16, 2> table, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(ids.size(), table.cols(), {16, 128})) {
    auto h = (load<16>(ids, t) * 31 + load<16>(ids, t - 1)) % table.rows();
    store(y, load_rows<16, 128>(table, h, n), t, n);
  }
}

// 37. Exclusive prefix sum of per-expert counts (E <= 256), written as the running sum of the
//     counts shifted one place: offsets[e] = counts[0] + .. + counts[e - 1] (counts[-1] reads 0).
PK_KERNEL void expert_offsets_exclusive(Tensor<i32, 1> counts, Tensor<i32, 1> offsets) {
  for (auto i : tiles(offsets.size(), {256})) store(offsets, cumsum(load<256>(counts, i - 1)), i);
}

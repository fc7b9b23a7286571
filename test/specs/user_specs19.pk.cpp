// The nineteenth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only, around the constructs
// added most recently, in real kernels and beside the old ones: masks combined with && / || / !
// (attention masks on the Hopper template and the general path, document and padding masks of i32 ids),
// dim_index on 3-D and 4-D tiles (ALiBi on [B, H, S, S], sinusoidal positions), uniform() random numbers
// (dropout in training kernels, sequence-parallel dropout with global coordinates, DropPath per sample,
// Gumbel-max and exponential-race sampling, stochastic rounding, tiles of rank 1-4 with offset origins
// and seeds past 2^32 or negative), row_topk / row_topk_index (MoE routers with renormalised weights and
// DeepSeek-style bias selection, top-k / top-p filters, k-th value thresholds, sorts with NaN and ties,
// K larger than the row, argmax over long rows in two phases, vocabulary-parallel top-k across ranks),
// cumsum along the last dimension of 2-D / 3-D / 4-D tiles (bf16, f32, i32, i64), reshape, local store_add
// (look-ahead sums past a tensor's end, adds at shifted origins, tiles wider than the tensor, i64
// counts), the GEMM template's A-transposed form (weight gradients dW = dYᵀ X with f32 / bf16 / f16
// outputs, in-place accumulation, row scales, masks and dropout in the epilogue), erf, and MoE routing
// feeding a dispatch to the experts' ranks with store_rows into peers. Dtypes bf16, f16, f32, i32, i64;
// tensors of rank 1-4; odd tile shapes; partial tiles everywhere. Each kernel compiles alone
// (pkc FILE --kernel NAME) and the file compiles as a whole; test/specs/specs19_findings.md says what
// was checked in the emitted CUDA. Part (b) is user_specs19_bad.pk.cpp; GPU test:
// test/gpu/user_specs19_jit_test.cu.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ Attention masks by && || !

// Causal attention over [S, D] (head dim 64) with the mask written as one && of the two factors the
// template knows (key inside k, key not after the query); log-sum-exp into a 1-D [S].
PK_KERNEL void attn_causal_and_klen_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                        Tensor<f32, 1> lse, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, mx + log(l), m);
  }
}

// StreamingLLM: causal attention to a sliding window of the last `window` keys plus the first `sinks`
// keys (the attention sinks), heads [H, S, D], head dim 128. The window is inside an ||, so no key
// step may be skipped: the loop visits every key step up to the query tile.
PK_KERNEL void attn_sinks_window_or_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                         index window, index sinks, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col < k.dim(1)) && (col <= row) && ((col > row - window) || (col < sinks)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// Prefix-LM in f16 with grouped-query heads (G an argument): every query sees the first `prefix` keys
// and the others causally, written (col <= row || col < prefix) && col < S; lse into [H, S, 1].
PK_KERNEL void attn_prefix_or_causal_gqa_f16_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v,
                                                 Tensor<f16, 3> o, Tensor<f32, 3> lse, index group, index prefix,
                                                 float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto s = mma_t(qt, load<64, 64>(k, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(((col <= row) || (col < prefix)) && (col < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, h / group, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// Packed sequences (document masking) with padded keys: a key is visible when it is in the query's
// document (i32 segment ids), not a padding token (`pad` i32, nonzero = padding, flipped with !) and
// inside k. The i32 part of the mask is cast to f32 before it meets the f32 column mask.
PK_KERNEL void attn_doc_not_pad_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                    Tensor<i32, 1> seg, Tensor<i32, 1> pad, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      auto same_doc = (load<64, 1>(seg, m) == load<1, 64>(seg, n)) && !load<1, 64>(pad, n);
      s = where(cast<f32>(same_doc) && (col_index<64, 64>(n) < k.rows()), s, -1e30f);
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

// Attention with dropout on the probabilities (training), heads [H, S, D], head dim 64: the running sum
// takes the undropped p, the product the dropped and rescaled one (p / (1 - pd) where u >= pd), u drawn
// at (h, query, key) through a [1, 64, 64] tile viewed as [64, 64]. The template cannot take it (the
// general path; --explain names the step).
PK_KERNEL void attn_dropout_general_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                        index seed, float pd, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      auto keep = reshape<64, 64>(uniform<1, 64, 64>(seed, h, m, n)) >= pd;
      acc = mma(cast<bf16>(where(keep, p * (1.0f / (1.0f - pd)), 0.0f)), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// Masked softmax of f32 scores [B, Sq, Sk] on the general path (odd 24 x 40 tiles, the keys walked in 40-column
// chunks): a key is kept where it is not after the query or, in a bidirectional prefix, where both are in it:
// keep = !(col > row) || (row < pre && col < pre), pre read per batch (i64 [B]). Two passes: the row max and
// sum over the chunks, then the probabilities.
PK_KERNEL void masked_softmax_or_not_3d(Tensor<f32, 3> s, Tensor<i64, 1> pre, Tensor<f32, 3> p) {
  for (auto [b, m] : tiles(s.dim(0), s.dim(1), {1, 24})) {
    auto row = row_index<24, 40>(m);
    float np = float(pre.at(b));
    auto mx = zeros<f32, 24, 1>() - 1e30f;
    auto l = zeros<f32, 24, 1>();
    for (auto n : range(0, s.dim(2), 40)) {
      auto col = col_index<24, 40>(n);
      auto keep = (!(col > row) || ((row < np) && (col < np))) && (col < s.dim(2));
      auto x = where(keep, load<24, 40>(s, b, m, n), -1e30f);
      auto mnew = max(mx, row_max(x));
      l = l * exp(mx - mnew) + row_sum(where(keep, exp(x - mnew), 0.0f));
      mx = mnew;
    }
    for (auto n : range(0, s.dim(2), 40)) {
      auto col = col_index<24, 40>(n);
      auto keep = (!(col > row) || ((row < np) && (col < np))) && (col < s.dim(2));
      store(p, where(keep, exp(load<24, 40>(s, b, m, n) - mx) / l, 0.0f), b, m, n);
    }
  }
}

// ============================================================================ dim_index on 3-D and 4-D tiles

// ALiBi biases and a causal mask on [B, H, Sq, Sk] scores, as 4-D tiles (2 heads x 16 queries x 64 keys,
// the keys walked by a range loop): out = s * scale - slope_h (i - j) where j <= i, -1e30 elsewhere;
// slope_h = 2^(-8 (h + 1) / H) computed from dim_index along the head dimension.
PK_KERNEL void alibi_causal_bias_4d(Tensor<f32, 4> s, Tensor<f32, 4> out, float scale) {
  for (auto [b, h, i] : tiles(s.dim(0), s.dim(1), s.dim(2), {1, 2, 16}))
    for (auto j : range(0, s.dim(3), 64)) {
      auto hh = dim_index<1, 1, 2, 16, 64>(h);
      auto qi = dim_index<2, 1, 2, 16, 64>(i);
      auto kj = dim_index<3, 1, 2, 16, 64>(j);
      float c = -8.0f * 0.693147181f / float(s.dim(1));
      auto slope = exp((hh + 1.0f) * c);
      auto x = load<1, 2, 16, 64>(s, b, h, i, j) * scale - slope * (qi - kj);
      store(out, where((kj <= qi) && (hh < s.dim(1)), x, -1e30f), b, h, i, j);
    }
}

// Sinusoidal position embeddings added to bf16 activations [B, S, D] with a position offset (tokens
// already in the cache): pos = s + past, column pairs (2i, 2i + 1) get sin / cos of pos / 10000^(2i/D).
PK_KERNEL void sinusoidal_pos_add_3d(Tensor<bf16, 3> x, Tensor<bf16, 3> y, index past) {
  for (auto [b, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 16, 64})) {
    auto pos = dim_index<1, 2, 16, 64>(s) + float(past);
    auto col = dim_index<2, 2, 16, 64>(d);
    auto pair = cast<f32>(cast<i32>(col) / 2) * 2.0f;
    auto ang = pos * exp(pair * (-9.21034037f / float(x.dim(2))));
    auto even = cast<i32>(col) % 2 == 0;
    store(y, cast<bf16>(cast<f32>(load<2, 16, 64>(x, b, s, d)) + where(cast<f32>(even), sin(ang), cos(ang))), b, s, d);
  }
}

// ============================================================================ uniform(): dropout and noise

// Dropout on the residual branch in f16, [B, S, H] as 3-D tiles: y = r + where(u < p, 0, h / (1 - p)).
PK_KERNEL void dropout_add_residual_f16_3d(Tensor<f16, 3> h, Tensor<f16, 3> r, Tensor<f16, 3> y, index seed, float p) {
  for (auto [b, s, c] : tiles(h.dim(0), h.dim(1), h.dim(2), {2, 8, 128})) {
    auto u = uniform<2, 8, 128>(seed, b, s, c);
    auto t = cast<f32>(load<2, 8, 128>(h, b, s, c));
    auto keep = where(u < p, 0.0f, t * (1.0f / (1.0f - p)));
    store(y, cast<f16>(cast<f32>(load<2, 8, 128>(r, b, s, c)) + keep), b, s, c);
  }
}

// Dropout's backward pass beside the forward one: the same seed and coordinates regenerate the mask,
// so dx = where(u < p, 0, dy / (1 - p)) (bf16), and the mask itself is kept as i32 (1 = kept).
PK_KERNEL void dropout_bwd_regenerate_bf16(Tensor<bf16, 2> dy, Tensor<bf16, 2> dx, Tensor<i32, 2> kept, index seed,
                                           float p) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {32, 96})) {
    auto drop = uniform<32, 96>(seed, m, n) < p;
    store(dx, cast<bf16>(where(drop, 0.0f, cast<f32>(load<32, 96>(dy, m, n)) / (1.0f - p))), m, n);
    store(kept, cast<i32>(!drop), m, n);
  }
}

// Sequence-parallel dropout: each rank holds rows [rank R, rank R + R) of the sequence (R = x.rows()),
// and draws the numbers at the global row, so the mask is the one a single GPU would draw.
PK_KERNEL void sp_dropout_global_rows(Tensor<bf16, 2> x, Tensor<bf16, 2> y, index seed, float p) {
  index row0 = rank() * x.rows();
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto u = uniform<16, 128>(seed, row0 + m, n);
    store(y, cast<bf16>(where(u >= p, cast<f32>(load<16, 128>(x, m, n)) * (1.0f / (1.0f - p)), 0.0f)), m, n);
  }
}

// DropPath (stochastic depth): one number per sample, a [2, 1, 1] tile at (b, 0, 0) broadcast over the
// sample's [S, H] block: y = x + where(u < p, 0, f / (1 - p)).
PK_KERNEL void drop_path_per_sample_3d(Tensor<f32, 3> x, Tensor<f32, 3> f, Tensor<f32, 3> y, index seed, float p) {
  for (auto [b, s, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 16, 64})) {
    auto u = uniform<2, 1, 1>(seed, b, 0, 0);
    auto branch = where(u < p, zeros<f32, 2, 16, 64>(), load<2, 16, 64>(f, b, s, c) * (1.0f / (1.0f - p)));
    store(y, load<2, 16, 64>(x, b, s, c) + branch, b, s, c);
  }
}

// Gumbel-max sampling over a vocabulary of at most 1024 per row (columns past V are a clipped load's
// padding, never chosen): token = argmax(logits / T - log(-log(u))), as i64, and the winning score.
PK_KERNEL void gumbel_max_sample(Tensor<f32, 2> logits, Tensor<i64, 2> token, Tensor<f32, 2> score, index seed,
                                 float inv_temp) {
  for (auto m : tiles(logits.rows(), {8})) {
    auto g = -log(-log(uniform<8, 1024>(seed, m, 0)));
    auto z = load<8, 1024>(logits, m, 0) * inv_temp + g;
    store(token, cast<i64>(row_topk_index<1>(z)), m, 0);
    store(score, row_topk<1>(z), m, 0);
  }
}

// vLLM's exponential-race sampler: probabilities divided by Exponential(1) noise q = -log(1 - u), argmax
// (q = 0 when u = 0 gives +inf: that token wins). Softmax over the valid columns only.
PK_KERNEL void exponential_race_sample(Tensor<f32, 2> logits, Tensor<i32, 2> token, index seed) {
  for (auto m : tiles(logits.rows(), {16})) {
    auto x = where(col_index<16, 512>(0) < logits.cols(), load<16, 512>(logits, m, 0), -1e30f);
    auto e = exp(x - row_max(x));
    auto pr = e / row_sum(e);
    auto q = -log(1.0f - uniform<16, 512>(seed, m, 0));
    store(token, row_topk_index<1>(pr / q), m, 0);
  }
}

// Stochastic rounding to int8 levels: q = clamp(floor(x / scale + u), -128, 127), floor written as a
// truncation of a shifted value (x / scale + u > -256 here); i32 out.
PK_KERNEL void stochastic_round_int8(Tensor<f32, 2> x, Tensor<i32, 2> q, float inv_scale, index seed) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 80})) {
    auto v = load<16, 80>(x, m, n) * inv_scale + uniform<16, 80>(seed, m, n);
    auto fl = cast<i32>(v + 256.0f) - 256;
    store(q, min(max(fl, -128), 127), m, n);
  }
}

// The numbers themselves on a 4-D tile whose origin is offset along two dimensions (a slice of a larger
// tensor drawn at its own coordinates) and a 1-D tile (i64 seeds past 2^32 and negative in the test).
PK_KERNEL void uniform_4d_offset_origins(Tensor<f32, 4> out, Tensor<f32, 1> flat, index seed, index off1, index off3) {
  for (auto [a, b, c] : tiles(out.dim(0), out.dim(1), out.dim(2), {1, 3, 5}))
    store(out, uniform<1, 3, 5, 24>(seed, a, b + off1, c, off3), a, b, c, 0);
  for (auto i : tiles(flat.size(), {300})) store(flat, uniform<300>(seed, i), i);
}

// ============================================================================ row_topk / row_topk_index

// Mixtral-style router over E <= 64 experts (columns past E are padding of the 64-wide tile, masked to
// -inf before the softmax): the top 4 experts, their probabilities renormalised to sum to 1, ids i32.
PK_KERNEL void moe_router_softmax_top4(Tensor<f32, 2> logits, Tensor<i32, 2> ids, Tensor<f32, 2> w) {
  for (auto m : tiles(logits.rows(), {32})) {
    auto x = where(col_index<32, 64>(0) < logits.cols(), load<32, 64>(logits, m, 0), -1e30f);
    auto e = exp(x - row_max(x));
    auto pr = e / row_sum(e);
    auto v = row_topk<4>(pr);
    store(w, v / row_sum(v), m, 0);
    store(ids, row_topk_index<4>(pr), m, 0);
  }
}

// DeepSeek-V3's auxiliary-loss-free router: scores s = sigmoid(logits), experts chosen by s + bias (the
// load-balancing bias), weights from s itself renormalised over the chosen K and scaled; a dense bf16 gate
// matrix [T, E] (zero for experts not chosen), the threshold being the K-th largest biased score.
PK_KERNEL void moe_router_sigmoid_bias_dense(Tensor<f32, 2> logits, Tensor<f32, 1> bias, Tensor<bf16, 2> gates,
                                             Tensor<i32, 2> ids, float route_scale) {
  for (auto m : tiles(logits.rows(), {16})) {
    auto sc = sigmoid(load<16, 256>(logits, m, 0));
    auto biased = where(col_index<16, 256>(0) < logits.cols(), sc + load<1, 256>(bias, 0), -1e30f);
    auto kth = row_min(row_topk<6>(biased));
    auto chosen = (biased >= kth) && (col_index<16, 256>(0) < logits.cols());
    auto ws = where(chosen, sc, 0.0f);
    store(gates, cast<bf16>(ws / row_sum(ws) * route_scale), m, 0);
    store(ids, row_topk_index<6>(biased), m, 0);
  }
}

// Top-k then top-p (nucleus) filtering of logits over a vocabulary of at most 256: the probabilities
// sorted (row_topk of the whole row; -inf past the last valid column, zeroed by the index), a sorted
// position kept while it is among the first top_k and the mass before it is below top_p, the smallest
// kept probability the threshold; logits below it become -inf.
PK_KERNEL void topk_topp_filter(Tensor<f32, 2> logits, Tensor<f32, 2> out, index top_k, float top_p) {
  for (auto m : tiles(logits.rows(), {8})) {
    auto x = where(col_index<8, 256>(0) < logits.cols(), load<8, 256>(logits, m, 0), -1e30f);
    auto e = exp(x - row_max(x));
    auto pr = e / row_sum(e);
    auto idx = row_topk_index<256>(pr);
    auto sorted = where(idx >= 0, row_topk<256>(pr), zeros<f32, 8, 256>());
    auto before = cumsum(sorted) - sorted;
    auto keep = (col_index<8, 256>(0) < top_k) && (before < top_p) && cast<f32>(idx >= 0);
    auto thr = row_min(where(keep, sorted, 2.0f));
    store(out, where((pr >= thr) && (col_index<8, 256>(0) < logits.cols()), x, -1e30f), m, 0);
  }
}

// The k-th largest value of each bf16 row (k = 5, rows of at most 128) and how many elements reach it
// (padding columns excluded by a column mask, since a partial tile's padding loads as zero).
PK_KERNEL void kth_value_count_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> kth, Tensor<i32, 2> count) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 128>(x, m, 0);
    auto k5 = row_min(row_topk<5>(t));
    auto reach = cast<f32>(t >= k5) && (col_index<16, 128>(0) < x.cols());
    store(kth, k5, m, 0);
    store(count, cast<i32>(row_sum(cast<f32>(reach))), m, 0);
  }
}

// Sort each f16 row of at most 32 values descending (row_topk of the whole width): NaN never chosen,
// ties by column, -inf / -1 past the row's last candidate; the rows sorted in place, and their order.
PK_KERNEL void sort_rows_f16_inplace(Tensor<f16, 2> x, Tensor<i32, 2> order) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 32>(x, m, 0);
    store(order, row_topk_index<32>(t), m, 0);
    store(x, row_topk<32>(t), m, 0);
  }
}

// K larger than the row: the top 8 of an 8-wide tile of rows of 5 (a K above the tile's width is refused,
// so the tile is as wide as K; its last three columns are a clipped load's padding: -inf and -1), rows
// partly past the tensor's end too.
PK_KERNEL void topk_k_exceeds_row(Tensor<f32, 2> x, Tensor<f32, 2> v, Tensor<i32, 2> i) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = load<4, 8>(x, m, 0);
    store(v, row_topk<8>(t), m, 0);
    store(i, row_topk_index<8>(t), m, 0);
  }
}

// Greedy decoding over a long vocabulary (more than one tile): phase 1, each 2048-column chunk's best
// value and its global column (row_topk_index + the chunk's origin); phase 2, the best chunk per row and
// the column stored with it, picked by a one-hot row sum (exact below 2^24), as i64. Ties go to the lower
// column in both phases.
PK_KERNEL void argmax_long_rows_two_phase(Tensor<f32, 2> logits, Tensor<f32, 2> cv, Tensor<i32, 2> ci,
                                          Tensor<i64, 2> token) {
  for (auto [m, n] : tiles(logits.rows(), logits.cols(), {8, 2048})) {
    auto t = load<8, 2048>(logits, m, n);
    store(cv, row_topk<1>(t), m, n / 2048);
    store(ci, row_topk_index<1>(t) + n, m, n / 2048);
  }
  for (auto m : tiles(logits.rows(), {8})) {
    auto c = load<8, 32>(cv, m, 0);
    auto pos = cast<f32>(row_topk_index<1>(c));
    auto col = row_sum(where(col_index<8, 32>(0) == pos, cast<f32>(load<8, 32>(ci, m, 0)), 0.0f));
    store(token, cast<i64>(col), m, 0);
  }
}

// The first stage of a two-stage top-k: the top 3 of each 96-column chunk and their global columns, the
// chunk c's results at columns 3c .. 3c + 2 (n / 32 = 3 n / 96).
PK_KERNEL void chunk_top3_candidates(Tensor<bf16, 2> x, Tensor<bf16, 2> cv, Tensor<i32, 2> ci) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 96})) {
    auto t = load<16, 96>(x, m, n);
    store(cv, row_topk<3>(t), m, n / 32);
    store(ci, row_topk_index<3>(t) + n, m, n / 32);
  }
}

// Vocabulary-parallel top-4 across ranks: each rank's top 4 of its shard (global columns) pushed into
// every rank's candidate rows at columns 4 rank .. 4 rank + 3; then on every rank the top 4 of the W x 4
// candidates and their global columns (the candidate position picked out of the id row by a one-hot sum).
PK_KERNEL void tp_vocab_top4(Tensor<f32, 2> logits, Sym<f32, 2> cv, Sym<i32, 2> ci, Tensor<f32, 2> vals,
                             Tensor<i32, 2> pos, Tensor<i64, 2> ids) {
  for (auto m : tiles(logits.rows(), {16})) {
    auto t = load<16, 1024>(logits, m, 0);
    auto v = row_topk<4>(t);
    auto i = row_topk_index<4>(t) + rank() * logits.cols();
    for (auto p : range(0, world_size())) {
      store(cv.on(p), v, m, 4 * rank());
      store(ci.on(p), i, m, 4 * rank());
    }
  }
  for (auto m : tiles(cv.rows(), {16})) {
    auto c = load<16, 64>(cv, m, 0);
    store(vals, row_topk<4>(c), m, 0);
    store(pos, row_topk_index<4>(c), m, 0);
  }
  for (auto m : tiles(cv.rows(), {16}))
    for (auto j : range(0, 4)) {
      auto pj = cast<f32>(load<16, 1>(pos, m, j));
      auto id = row_sum(where(col_index<16, 64>(0) == pj, cast<f32>(load<16, 64>(ci, m, 0)), 0.0f));
      store(ids, cast<i64>(id), m, j);
    }
}

// Expert-choice routing: each expert takes its top 16 tokens by score; scores [T, E] f32 (T <= 512) read
// transposed, so an expert's scores over the tokens are a row (tokens past T are the transposed padding,
// never chosen); token ids and gates [E, 16].
PK_KERNEL void expert_choice_top16(Tensor<f32, 2> scores, Tensor<i32, 2> tok, Tensor<f32, 2> gate) {
  for (auto e : tiles(scores.cols(), {8})) {
    auto st = transpose(load<512, 8>(scores, 0, e));
    store(tok, row_topk_index<16>(st), e, 0);
    store(gate, row_topk<16>(st), e, 0);
  }
}

// Cross entropy with ignore_index (-100) and labels outside the vocabulary ignored too (i64 labels [T]):
// the per-token losses of the valid rows (the tile's rows past T masked by row_index: a row reduction
// counts what a partial tile computes there) summed into a [1, 1] f32 total, their count into another.
PK_KERNEL void ce_loss_sum_ignore_index(Tensor<f32, 2> logits, Tensor<i64, 1> labels, Tensor<f32, 2> loss_sum,
                                        Tensor<f32, 2> count) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto x = where(col_index<16, 512>(0) < logits.cols(), load<16, 512>(logits, t, 0), -1e30f);
    auto mx = row_max(x);
    auto lse = mx + log(row_sum(exp(x - mx)));
    auto lab = load<16, 1>(labels, t);
    auto valid = cast<f32>((lab != -100) && (lab >= 0) && (lab < logits.cols())) && (row_index<16, 1>(t) < logits.rows());
    auto picked = row_sum(where(col_index<16, 512>(0) == cast<f32>(lab), x, 0.0f));
    auto l = where(valid, lse - picked, 0.0f);
    store_add(loss_sum, transpose(row_sum(transpose(l))), 0, 0);
    store_add(count, transpose(row_sum(transpose(valid))), 0, 0);
  }
}

// ============================================================================ cumsum along the last dimension

// Running sums along the last dimension of a 4-D bf16 tensor whose last dimension is narrower than the
// tile (the tile's padding columns add nothing and are not stored), partial in every dimension.
PK_KERNEL void cumsum_4d_bf16_wide_tile(Tensor<bf16, 4> x, Tensor<bf16, 4> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 2, 4}))
    store(y, cast<bf16>(cumsum(cast<f32>(load<1, 2, 4, 64>(x, a, b, c, 0)))), a, b, c, 0);
}

// Exclusive per-expert offsets from i64 counts [B, G, E] (E <= 128): offsets = cumsum(counts) - counts
// on 3-D tiles; then each group's total into [B, G, 1] (the largest running sum, counts being >= 0),
// through a [1, 4, 128] tile viewed as [4, 128] and the [4, 1] result viewed back as [1, 4, 1].
PK_KERNEL void exclusive_offsets_i64_3d(Tensor<i64, 3> counts, Tensor<i64, 3> offs, Tensor<i64, 3> total) {
  for (auto [b, g] : tiles(counts.dim(0), counts.dim(1), {2, 4})) {
    auto c = load<2, 4, 128>(counts, b, g, 0);
    store(offs, cumsum(c) - c, b, g, 0);
  }
  for (auto [b, g] : tiles(counts.dim(0), counts.dim(1), {1, 4})) {
    auto run = cumsum(reshape<4, 128>(load<1, 4, 128>(counts, b, g, 0)));
    store(total, reshape<1, 4, 1>(cast<i64>(row_max(cast<f32>(run)))), b, g, 0);
  }
}

// Positions of the real tokens of each row (i64 token ids; a token is real when it is not `pad` and is
// below the vocabulary size): pos = (running count of real tokens) - 1 where real, -1 elsewhere, i32,
// rows walked in 128-column chunks with the count carried between them.
PK_KERNEL void real_token_positions_i64(Tensor<i64, 2> tok, Tensor<i32, 2> pos, index pad, index vocab) {
  for (auto b : tiles(tok.rows(), {4})) {
    auto carry = zeros<i32, 4, 1>();
    for (auto n : range(0, tok.cols(), 128)) {
      auto t = load<4, 128>(tok, b, n);
      auto real = cast<i32>((t != pad) && (t < vocab));
      auto run = cumsum(real) + carry;
      store(pos, where(real, run - 1, -1), b, n);
      carry = carry + cast<i32>(row_sum(cast<f32>(real)));
    }
  }
}

// Running sums of i64 rows of up to 1000 in [4, 1024] tiles: 4096 values, more than the stage holds at
// once, so the scan runs in chunks whose boundaries fall inside rows (the carry between chunks).
PK_KERNEL void cumsum_i64_wide_rows(Tensor<i64, 2> x, Tensor<i64, 2> y) {
  for (auto m : tiles(x.rows(), {4})) store(y, cumsum(load<4, 1024>(x, m, 0)), m, 0);
}

// ============================================================================ reshape

// Cumulative weights of a 1-D [N] vector (N <= 128) as a row broadcast over a tile: y[m, j] = x[m, j] *
// sum_{i <= j} w[i] (the 1-D cumsum reshaped to [1, 128]).
PK_KERNEL void reshape_cumsum_row_scale(Tensor<f32, 2> x, Tensor<f32, 1> w, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    store(y, load<16, 128>(x, m, 0) * reshape<1, 128>(cumsum(load<128>(w, 0))), m, 0);
}

// The top 2 of each row of a [B, S, V] tensor through reshapes: a [1, 16, 64] tile of one batch viewed as
// [16, 64], its top 2 (values and columns) viewed back as [1, 16, 2] and stored into [B, S, 2].
PK_KERNEL void reshape_3d_topk2(Tensor<f32, 3> x, Tensor<f32, 3> v, Tensor<i32, 3> i) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    auto t = reshape<16, 64>(load<1, 16, 64>(x, b, s, 0));
    store(v, reshape<1, 16, 2>(row_topk<2>(t)), b, s, 0);
    store(i, reshape<1, 16, 2>(row_topk_index<2>(t)), b, s, 0);
  }
}

// ============================================================================ local store_add

// Backward pass of a three-tap causal conv1d (y[t] = w0 x[t] + w1 x[t - 1] + w2 x[t - 2]): dx[t] += w0
// dy[t] + w1 dy[t + 1] + w2 dy[t + 2], added into a gradient buffer; dy past T reads as zero, so the last
// two rows still get their w0 (and w1) terms.
PK_KERNEL void conv1d_3tap_bwd_store_add(Tensor<f32, 2> dy, Tensor<f32, 2> w, Tensor<f32, 2> dx) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {16, 128}))
    store_add(dx,
              load<16, 128>(dy, m, n) * load<1, 128>(w, 0, n) + load<16, 128>(dy, m + 1, n) * load<1, 128>(w, 1, n) +
                  load<16, 128>(dy, m + 2, n) * load<1, 128>(w, 2, n),
              m, n);
}

// The same convolution's transpose written as scatters: y[t] += w0 x[t], y[t + 1] += w1 x[t] and y[t - 1]
// += w2 x[t] (a non-causal three-tap filter), three adds at shifted origins, the first tile's row -1 and
// the last tile's row T dropped.
PK_KERNEL void conv1d_scatter_shifted_adds(Tensor<f32, 2> x, Tensor<f32, 2> w, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    store_add(y, t * load<1, 64>(w, 0, n), m, n);
    store_add(y, t * load<1, 64>(w, 1, n), m + 1, n);
    store_add(y, t * load<1, 64>(w, 2, n), m - 1, n);
  }
}

// Bias and LayerNorm-weight gradients with a tile wider than the tensor (256 columns of at most 200):
// db [1, N] f32 += column sums of dy, dg [1, N] bf16 += column sums of dy * xhat (bf16 adds).
PK_KERNEL void colsum_wide_tile_store_add(Tensor<f32, 2> dy, Tensor<f32, 2> xhat, Tensor<f32, 2> db, Tensor<bf16, 2> dg) {
  for (auto m : tiles(dy.rows(), {64})) {
    auto d = load<64, 256>(dy, m, 0);
    store_add(db, transpose(row_sum(transpose(d))), 0, 0);
    store_add(dg, cast<bf16>(transpose(row_sum(transpose(d * load<64, 256>(xhat, m, 0))))), 0, 0);
  }
}

// Per-sequence expert counts in i64: each 256-token chunk's histogram of its expert ids (i32 [B, T]),
// reshaped to a [1, 64] row and added into counts [B, 64] (i64 adds; the chunks of a row all arrive).
PK_KERNEL void expert_counts_i64_store_add(Tensor<i32, 2> ids, Tensor<i64, 2> counts) {
  for (auto [b, t] : tiles(ids.rows(), ids.cols(), {1, 256}))
    store_add(counts, reshape<1, 64>(cast<i64>(histogram<64>(load<1, 256>(ids, b, t)))), b, 0);
}

// ============================================================================ GEMM with A stored [K, M] (dW = dYᵀ X)

// Gradient accumulation of a weight gradient in f32, in place: dW [N, K] += alpha dYᵀ X, dY [T, N] and
// X [T, K] bf16 (the template's A-transposed form, the output read at the tile it writes).
PK_KERNEL void wgrad_accumulate_f32_inplace(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 2> dw, float alpha) {
  for (auto [n, k] : tiles(dy.cols(), x.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto t : range(0, dy.rows(), 64)) acc = mma(transpose(load<64, 128>(dy, t, n)), load<64, 128>(x, t, k), acc);
    store(dw, load<128, 128>(dw, n, k) + acc * alpha, n, k);
  }
}

// A bf16 weight gradient with odd tiles (48 x 80, K step 40), a per-output-row scale (an f32 [N] read as a
// column), and the columns from `kmax` on zeroed (a frozen block of inputs) by a mask written with || (its
// second factor, row < 0, is never true).
PK_KERNEL void wgrad_rowscale_mask_bf16(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 1> rs, Tensor<bf16, 2> dw,
                                        index kmax) {
  for (auto [n, k] : tiles(dy.cols(), x.cols(), {48, 80})) {
    auto acc = zeros<f32, 48, 80>();
    for (auto t : range(0, dy.rows(), 40)) acc = mma(transpose(load<40, 48>(dy, t, n)), load<40, 80>(x, t, k), acc);
    auto live = (col_index<48, 80>(k) < kmax) || (row_index<48, 80>(n) < 0);
    store(dw, cast<bf16>(where(live, acc * load<48, 1>(rs, n), 0.0f)), n, k);
  }
}

// An f16 weight gradient with B stored [N, K] (mma_t: X stored transposed, [K, T]), dropout on the
// gradient in the epilogue (uniform at the output's coordinates), f16 out.
PK_KERNEL void wgrad_t_f16_dropout(Tensor<f16, 2> dy, Tensor<f16, 2> xt, Tensor<f16, 2> dw, index seed, float p) {
  for (auto [n, k] : tiles(dy.cols(), xt.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto t : range(0, dy.rows(), 64)) acc = mma_t(transpose(load<64, 128>(dy, t, n)), load<256, 64>(xt, k, t), acc);
    store(dw, cast<f16>(where(uniform<128, 256>(seed, n, k) < p, 0.0f, acc * (1.0f / (1.0f - p)))), n, k);
  }
}

// A plain f32 weight gradient scaled by a scalar erf: dW = erf(c) dYᵀ X (erf of a float argument, computed
// once per tile in the template's prepare()), f32 out.
PK_KERNEL void wgrad_erf_scalar_f32(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 2> dw, float c) {
  for (auto [n, k] : tiles(dy.cols(), x.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto t : range(0, dy.rows(), 32)) acc = mma(transpose(load<32, 64>(dy, t, n)), load<32, 128>(x, t, k), acc);
    store(dw, acc * erf(c), n, k);
  }
}

// A linear layer with the exact GELU written with the tile erf in the template's epilogue, f32 out:
// y = 0.5 z (1 + erf(z / sqrt 2)), z = x Wᵀ + b (b a [1, N] f32 row).
PK_KERNEL void linear_erf_gelu_f32(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<f32, 2> b, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<128, 64>(w, n, k), acc);
    auto z = acc + load<1, 128>(b, 0, n);
    store(y, 0.5f * z * (1.0f + erf(z * 0.707106781f)), m, n);
  }
}

// ============================================================================ erf

// The exact GELU written with erf on f16 3-D tiles beside gelu_erf itself: y0 = 0.5 x (1 + erf(x / sqrt 2)),
// y1 = gelu_erf(x), both f16 (they agree to the rounding of each op).
PK_KERNEL void gelu_by_erf_f16_3d(Tensor<f16, 3> x, Tensor<f16, 3> y0, Tensor<f16, 3> y1) {
  for (auto [b, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 8, 96})) {
    auto t = cast<f32>(load<1, 8, 96>(x, b, s, d));
    store(y0, cast<f16>(0.5f * t * (1.0f + erf(t * 0.707106781f))), b, s, d);
    store(y1, cast<f16>(gelu_erf(t)), b, s, d);
  }
}

// ============================================================================ MoE routing into a dispatch

// Top-2 routing and dispatch in one kernel across ranks: E = W El experts (El per rank); each token's top 2
// experts from its logits (f32 [T, E], E <= 64), their softmax weights over the two (f32 [T, 2]), a slot
// claimed on the expert's rank for each (token, choice) (block (rank, local expert) of T rows, as
// templates/specs/moe_dispatch.pk.cpp lays it out), the rows pushed there with store_rows into peers, and
// the counts into every expert rank's row of senders.
PK_KERNEL void moe_route_top2_dispatch(Tensor<bf16, 2> x, Tensor<f32, 2> logits, Scratch<i32, 1> fill,
                                       Tensor<i32, 2> ids, Tensor<f32, 2> wts, Tensor<i32, 2> slot,
                                       Sym<bf16, 2> recv, Sym<i32, 1> counts) {
  index experts = counts.size() / world_size();
  for (auto e : tiles(fill.size(), {64})) store(fill, zeros<i32, 64>(), e);
  for (auto t : tiles(logits.rows(), {32})) {
    auto lg = load<32, 64>(logits, t, 0);
    auto v = row_topk<2>(lg);
    auto ev = exp(v - row_max(v));
    store(wts, ev / row_sum(ev), t, 0);
    auto e = row_topk_index<2>(lg);
    store(ids, e, t, 0);
    auto place = claim(fill, e);
    auto fits = (place >= 0) && (place < x.rows());
    store(slot, where(fits, (e % experts + rank() * experts) * x.rows() + place, -1), t, 0);
  }
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    auto rows = load<32, 256>(x, t, n);
    for (auto k : range(0, 2)) {
      auto owner = load<32, 1>(ids, t, k) / experts;
      auto place = load<32, 1>(slot, t, k);
      for (auto p : range(0, world_size())) store_rows(recv.on(p), rows, where(owner == p, place, -1), n);
    }
  }
  for (auto [p, l] : tiles(world_size(), experts, {1, 1}))
    store(counts.on(p), min(load<1>(fill, p * experts + l), x.rows()), rank() * experts + l);
}

// The matching combine: each token's two expert outputs gathered from the experts' ranks (load_rows from
// peers at the recorded slots) and summed with the routing weights, f32 accumulation, bf16 out.
PK_KERNEL void moe_combine_top2(Sym<bf16, 2> yexp, Tensor<i32, 2> ids, Tensor<i32, 2> slot, Tensor<f32, 2> wts,
                                Tensor<bf16, 2> out, index experts) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto k : range(0, 2)) {
      auto owner = load<16, 1>(ids, t, k) / experts;
      auto place = load<16, 1>(slot, t, k);
      for (auto p : range(0, world_size()))
        acc = acc + cast<f32>(load_rows<16, 128>(yexp.on(p), where(owner == p, place, -1), n)) * load<16, 1>(wts, t, k);
    }
    store(out, cast<bf16>(acc), t, n);
  }
}

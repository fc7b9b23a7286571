// A fifth user-written spec set, written from docs/language.md alone and modelled on the kernels
// of Megatron / DeepSpeed / TensorRT-LLM layers: fused residual + norms, rotary embedding by
// position ids, temperature / causal softmax, router logits, int8 and fp8 quantisation with
// per-row scales, embedding lookups, template and general GEMMs with epilogues, MoE counts and
// offsets; and multi-rank pieces: tensor-parallel norms (stats all-reduced), vocabulary-parallel
// cross-entropy and embedding, gathers along columns, reduce-scatters into tile loops, ring shifts,
// halo pulls, adds into owners, in-place collectives, shared fp8 scales, MoE layouts over ranks.
// test/gpu/user_specs5_test.cu runs every kernel (the multi-rank ones at W = 1-4) against float64
// references; test/Compile/user_specs5.test compiles the set to an sm_90a cubin.
#include <pk/spec.h>
using namespace pk;

// ---------------------------------------------------------------- single GPU: norms, rotary --

// 1. Fused residual add + RMSNorm (bf16, rows of at most 256): h = x + r rounded to bf16 (a bf16
//    tile sum), stored as the new residual; y = h * rsqrt(mean(h^2) + eps) * w.
PK_KERNEL void fused_add_rms_norm(Tensor<bf16, 2> x, Tensor<bf16, 2> r, Tensor<bf16, 2> w, Tensor<bf16, 2> h,
                                  Tensor<bf16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {16})) {
    auto hb = load<16, 256>(x, m, 0) + load<16, 256>(r, m, 0);
    store(h, hb, m, 0);
    auto t = cast<f32>(hb);
    store(y, cast<bf16>(t * rsqrt(row_sum(t * t) / float(x.cols()) + eps) * cast<f32>(load<1, 256>(w, 0, 0))), m, 0);
  }
}

// 2. One-pass LayerNorm of f16 rows (at most 512 columns): mean and E[x^2] from one tile, the
//    variance as E[x^2] - mean^2, f32 weight and bias, f16 output.
PK_KERNEL void layer_norm_one_pass_f16(Tensor<f16, 2> x, Tensor<f32, 2> w, Tensor<f32, 2> b, Tensor<f16, 2> y,
                                       float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 512>(x, m, 0));
    float inv_n = 1.0f / float(x.cols());
    auto mu = row_sum(t) * inv_n;
    auto var = row_sum(t * t) * inv_n - mu * mu;
    store(y, cast<f16>((t - mu) * rsqrt(var + eps) * load<1, 512>(w, 0, 0) + load<1, 512>(b, 0, 0)), m, 0);
  }
}

// 3. Rotary embedding by position ids (packed heads of 64 in x's columns, NeoX halves): the cos
//    and sin rows of each token gathered from [P, 32] tables by its i32 position.
PK_KERNEL void rope_pos_ids(Tensor<bf16, 2> x, Tensor<i32, 1> pos, Tensor<f32, 2> cs, Tensor<f32, 2> sn,
                            Tensor<bf16, 2> y) {
  for (auto [m, h] : tiles(x.rows(), x.cols() / 64, {16, 1})) {
    auto p = load<16>(pos, m);
    auto c = load_rows<16, 32>(cs, p, 0);
    auto s = load_rows<16, 32>(sn, p, 0);
    auto x1 = cast<f32>(load<16, 32>(x, m, h * 64));
    auto x2 = cast<f32>(load<16, 32>(x, m, h * 64 + 32));
    store(y, cast<bf16>(x1 * c - x2 * s), m, h * 64);
    store(y, cast<bf16>(x2 * c + x1 * s), m, h * 64 + 32);
  }
}

// 4. Softmax with a temperature and a causal mask for queries at positions q0 + row against
//    S <= 256 keys (a KV cache), bf16 probabilities; keys past the tensor masked too.
PK_KERNEL void softmax_temp_causal(Tensor<f32, 2> s, Tensor<bf16, 2> p, float inv_temp, index q0) {
  for (auto m : tiles(s.rows(), {16})) {
    auto c = col_index<16, 256>(0);
    auto keep = c <= row_index<16, 256>(m) + float(q0);
    auto t = where(c < s.cols(), where(keep, load<16, 256>(s, m, 0) * inv_temp, -1e30f), -1e30f);
    auto e = exp(t - row_max(t));
    store(p, cast<bf16>(e / row_sum(e)), m, 0);
  }
}

// 5. MoE router: logits = x Wr^T (general path, E <= 64 experts, K with a tail) plus an f32
//    expert bias, softmax over the real experts, and each row's log-sum-exp (for the z-loss).
PK_KERNEL void router_softmax_lse(Tensor<bf16, 2> x, Tensor<bf16, 2> wr, Tensor<f32, 2> bias, Tensor<f32, 2> probs,
                                  Tensor<f32, 2> lse) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<16, 32>(x, m, k), load<64, 32>(wr, 0, k), acc);
    auto z = where(col_index<16, 64>(0) < wr.rows(), acc + load<1, 64>(bias, 0, 0), -1e30f);
    auto mx = row_max(z);
    auto e = exp(z - mx);
    auto se = row_sum(e);
    store(probs, e / se, m, 0);
    store(lse, mx + log(se), m, 0);
  }
}

// ---------------------------------------------------------------- single GPU: quantisation --

// 6. Symmetric int8 quantisation with one scale per row (rows of at most 512): q = round-half-
//    away(x * 127 / amax) kept in i32, scale = amax / 127.
PK_KERNEL void quant_int8_rowwise(Tensor<bf16, 2> x, Tensor<i32, 2> q, Tensor<f32, 2> scale) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 512>(x, m, 0));
    auto amax = max(row_max(abs(t)), 1e-8f);
    auto v = t * (127.0f / amax);
    store(q, cast<i32>(where(v >= 0.0f, v + 0.5f, v - 0.5f)), m, 0);
    store(scale, amax * (1.0f / 127.0f), m, 0);
  }
}

// 7. Dequantisation of int8 values with per-row scales plus a bias row, bf16 out.
PK_KERNEL void dequant_int8_bias(Tensor<i32, 2> q, Tensor<f32, 2> scale, Tensor<bf16, 2> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 96}))
    store(y, cast<bf16>(cast<f32>(load<16, 96>(q, m, n)) * load<16, 1>(scale, m, 0) +
                        cast<f32>(load<1, 96>(bias, 0, n))), m, n);
}

// 8. fp8 e5m2 quantisation with one scale per row over a range loop of column blocks (amax
//    first), then the values scaled to the format's range (57344).
PK_KERNEL void quant_e5m2_rowwise(Tensor<f32, 2> x, Tensor<f8e5m2, 2> q, Tensor<f32, 2> scale) {
  for (auto m : tiles(x.rows(), {16})) {
    auto amax = zeros<f32, 16, 1>() + 1e-12f;
    for (auto k : range(0, x.cols(), 64)) amax = max(amax, row_max(abs(load<16, 64>(x, m, k))));
    auto inv = 57344.0f / amax;
    for (auto k : range(0, x.cols(), 64)) store(q, cast<f8e5m2>(load<16, 64>(x, m, k) * inv), m, k);
    store(scale, amax / 57344.0f, m, 0);
  }
}

// 9. fp8 e4m3 weights with per-row scales dequantised to f16 and multiplied by a gate column.
PK_KERNEL void dequant_e4m3_gate(Tensor<f8e4m3, 2> q, Tensor<f32, 2> scale, Tensor<f32, 2> gate, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {32, 64}))
    store(y, cast<f16>(cast<f32>(load<32, 64>(q, m, n)) * (load<32, 1>(scale, m, 0) * load<32, 1>(gate, m, 0))), m, n);
}

// ---------------------------------------------------------------- single GPU: embeddings, MoE --

// 10. Token embedding: rows of a bf16 table gathered by i64 ids (some outside: zeros), 2-D tiles
//     over [T, D] with a partial column tile.
PK_KERNEL void embedding_lookup(Tensor<i64, 1> ids, Tensor<bf16, 2> table, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(ids.size(), table.cols(), {16, 128}))
    store(y, load_rows<16, 128>(table, load<16>(ids, t), n), t, n);
}

// 11. Token embedding scaled by sqrt(D) plus learned positions from position p0 on, f32 out.
PK_KERNEL void embedding_tok_pos(Tensor<i32, 1> ids, Tensor<f32, 2> tok, Tensor<f32, 2> pos, Tensor<f32, 2> y,
                                 index p0) {
  for (auto [t, n] : tiles(ids.size(), tok.cols(), {32, 64})) {
    float s = sqrt(float(tok.cols()));
    store(y, load_rows<32, 64>(tok, load<32>(ids, t), n) * s + load<32, 64>(pos, p0 + t, n), t, n);
  }
}

// 12. MoE permute: token t's row times its gate goes to slot[t] of the expert-sorted buffer.
PK_KERNEL void moe_permute_rows(Tensor<bf16, 2> x, Tensor<f32, 2> gate, Tensor<i32, 1> slot, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store_rows(y, cast<bf16>(cast<f32>(load<16, 64>(x, t, n)) * load<16, 1>(gate, t, 0)), load<16>(slot, t), n);
}

// 13. MoE counts and offsets of up to 2048 tokens over 64 expert slots in one tile: counts by
//     histogram, exclusive offsets by cumsum.
PK_KERNEL void moe_counts_offsets(Tensor<i32, 1> experts, Tensor<i32, 1> counts, Tensor<i32, 1> offsets) {
  for (auto i : tiles(1, {1})) {
    auto h = histogram<64>(load<2048>(experts, i));
    store(counts, h, 0);
    store(offsets, cumsum(h) - h, 0);
  }
}

// 14. Packed-sequence offsets (cu_seqlens): inclusive i64 running sums of lengths in one tile of
//     up to 1024, and each sequence's start.
PK_KERNEL void cu_seqlens_i64(Tensor<i64, 1> len, Tensor<i64, 1> ends, Tensor<i64, 1> starts) {
  for (auto i : tiles(len.size(), {1024})) {
    auto l = load<1024>(len, i);
    auto c = cumsum(l);
    store(ends, c, i);
    store(starts, c - l, i);
  }
}

// ---------------------------------------------------------------- single GPU: GEMMs --

// 15. Template GEMM, f16 A * B (B [K, N]) with a bf16 output: alpha * acc + an f32 bias row.
PK_KERNEL void gemm_f16_kn_bias_bf16out(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> bias, Tensor<bf16, 2> c,
                                        float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, cast<bf16>(acc * alpha + load<1, 128>(bias, 0, n)), m, n);
  }
}

// 16. Template GEMM, bf16 A * B^T (B [N, K]), 64 x 128 tiles: gelu_erf(acc + bias) + residual,
//     f16 output.
PK_KERNEL void gemm_t_bf16_gelu_res_f16out(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias,
                                           Tensor<f16, 2> r, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), load<128, 32>(b, n, k), acc);
    store(c, cast<f16>(gelu_erf(acc + cast<f32>(load<1, 128>(bias, 0, n))) + cast<f32>(load<64, 128>(r, m, n))), m, n);
  }
}

// 17. General-path GEMM, f16 A * B into f32 with odd M / N / K: c = alpha * acc + residual.
PK_KERNEL void gemm_f16_f32out_res(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> r, Tensor<f32, 2> c,
                                   float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {32, 48})) {
    auto acc = zeros<f32, 32, 48>();
    for (auto k : range(0, a.cols(), 16)) acc = mma(load<32, 16>(a, m, k), load<16, 48>(b, k, n), acc);
    store(c, acc * alpha + load<32, 48>(r, m, n), m, n);
  }
}

// 18. Output projection followed by RMSNorm of its rows (N <= 128): bf16 A * B^T on the general
//     path, the norm over the accumulator's real columns, bf16 out.
PK_KERNEL void gemm_t_rms_norm(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> w, Tensor<bf16, 2> y,
                               float eps) {
  for (auto m : tiles(a.rows(), {32})) {
    auto acc = zeros<f32, 32, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<32, 32>(a, m, k), load<128, 32>(b, 0, k), acc);
    auto rs = rsqrt(row_sum(acc * acc) / float(b.rows()) + eps);
    store(y, cast<bf16>(acc * rs * cast<f32>(load<1, 128>(w, 0, 0))), m, 0);
  }
}

// 19. SwiGLU on a fused gate/up projection output [M, 2F]: y = silu(g) * u, f32 in, bf16 out.
PK_KERNEL void swiglu_fused(Tensor<f32, 2> gu, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(gu.rows(), y.cols(), {16, 64}))
    store(y, cast<bf16>(silu(load<16, 64>(gu, m, n)) * load<16, 64>(gu, m, y.cols() + n)), m, n);
}

// ================================================================ multi-rank ==

// 20. Tensor-parallel LayerNorm of column shards (at most 256 columns per rank): each row's sum
//     and sum of squares into two columns of one symmetric tensor, all-reduced, then the scale.
PK_KERNEL void tp_layer_norm(Tensor<f32, 2> x, Tensor<f32, 2> w, Tensor<f32, 2> b, Sym<f32, 2> st, Sym<f32, 2> tot,
                             Tensor<f32, 2> y, float inv_n, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 256>(x, m, 0);
    store(st, row_sum(t), m, 0);
    store(st, row_sum(t * t), m, 1);
  }
  all_reduce(Sum, st, tot);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 128})) {
    auto mu = load<8, 1>(tot, m, 0) * inv_n;
    auto var = load<8, 1>(tot, m, 1) * inv_n - mu * mu;
    store(y, (load<8, 128>(x, m, n) - mu) * rsqrt(var + eps) * load<1, 128>(w, 0, n) + load<1, 128>(b, 0, n), m, n);
  }
}

// 21. Tensor-parallel fused residual add + RMSNorm (bf16 column shards of any width): h = x + r,
//     its squared row sums all-reduced, y = h * rsqrt(sum / (C * W) + eps) * w.
PK_KERNEL void tp_add_rms_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> r, Tensor<bf16, 2> w, Tensor<bf16, 2> h,
                               Sym<f32, 2> ss, Sym<f32, 2> tot, Tensor<bf16, 2> y, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(h, load<16, 128>(x, m, n) + load<16, 128>(r, m, n), m, n);
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), 128)) {
      auto t = cast<f32>(load<16, 128>(h, m, k));
      acc = acc + row_sum(t * t);
    }
    store(ss, acc, m, 0);
  }
  all_reduce(Sum, ss, tot);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = cast<f32>(load<16, 128>(h, m, n));
    store(y, cast<bf16>(t * rsqrt(load<16, 1>(tot, m, 0) / float(x.cols() * world_size()) + eps) *
                        cast<f32>(load<1, 128>(w, 0, n))), m, n);
  }
}

// 22. Vocabulary-parallel cross-entropy: masked row maxima all-reduced (Max); sums of exp and the
//     label's logit (on the rank that owns it) all-reduced (Sum); loss = log(sum) + max - logit.
PK_KERNEL void vocab_ce_loss(Tensor<f32, 2> x, Tensor<i32, 2> labels, Sym<f32, 2> lmax, Sym<f32, 2> gmax,
                             Sym<f32, 2> part, Sym<f32, 2> tot, Tensor<f32, 2> loss) {
  for (auto m : tiles(x.rows(), {8})) {
    auto mx = zeros<f32, 8, 1>() - 1e30f;
    for (auto k : range(0, x.cols(), 128))
      mx = max(mx, row_max(where(col_index<8, 128>(k) < x.cols(), load<8, 128>(x, m, k), -1e30f)));
    store(lmax, mx, m, 0);
  }
  all_reduce(Max, lmax, gmax);
  for (auto m : tiles(x.rows(), {8})) {
    auto g = load<8, 1>(gmax, m, 0);
    auto lab = cast<f32>(load<8, 1>(labels, m, 0) - rank() * x.cols());
    auto se = zeros<f32, 8, 1>();
    auto tgt = zeros<f32, 8, 1>();
    for (auto k : range(0, x.cols(), 128)) {
      auto t = load<8, 128>(x, m, k);
      auto c = col_index<8, 128>(k);
      se = se + row_sum(where(c < x.cols(), exp(t - g), 0.0f));
      tgt = tgt + row_sum(where(c == lab, t, 0.0f));
    }
    store(part, se, m, 0);
    store(part, tgt, m, 1);
  }
  all_reduce(Sum, part, tot);
  for (auto m : tiles(x.rows(), {8}))
    store(loss, log(load<8, 1>(tot, m, 0)) + load<8, 1>(gmax, m, 0) - load<8, 1>(tot, m, 1), m, 0);
}

// 23. Vocabulary-parallel embedding: this rank's rows of the table by i64 ids shifted to its
//     shard (ids elsewhere read zeros), all-reduced (Sum) into a local tensor.
PK_KERNEL void vocab_embed(Tensor<i64, 1> ids, Tensor<bf16, 2> table, Sym<f32, 2> part, Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(ids.size(), table.cols(), {16, 64}))
    store(part, cast<f32>(load_rows<16, 64>(table, load<16>(ids, t) - rank() * table.rows(), n)), t, n);
  all_reduce(Sum, part, y);
}

// 24. Column-parallel output gathered along the columns, then bias + GELU on the whole rows.
PK_KERNEL void ag_cols_bias_gelu(Sym<bf16, 2> x, Tensor<bf16, 2> g, Tensor<f32, 2> bias, Tensor<f32, 2> y) {
  all_gather(x, g, 1);
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 128}))
    store(y, gelu(cast<f32>(load<16, 128>(g, m, n)) + load<1, 128>(bias, 0, n)), m, n);
}

// 25. Row-parallel partial sums reduce-scattered over rows, then bias + bf16 residual in a tile loop.
PK_KERNEL void rs_bias_residual(Sym<f32, 2> p, Sym<f32, 2> s, Tensor<f32, 2> bias, Tensor<bf16, 2> r,
                                Tensor<bf16, 2> y) {
  reduce_scatter(Sum, p, s);
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 128}))
    store(y, cast<bf16>(load<16, 128>(s, m, n) + load<1, 128>(bias, 0, n) + cast<f32>(load<16, 128>(r, m, n))), m, n);
}

// 26. Reduce-scatter of column blocks (Sum), then an RMS norm of each row of this rank's block
//     (at most 128 columns).
PK_KERNEL void rs_cols_rms(Sym<f32, 2> x, Sym<f32, 2> s, Tensor<f32, 2> y, float eps) {
  reduce_scatter(Sum, x, s, 1);
  for (auto m : tiles(s.rows(), {16})) {
    auto t = load<16, 128>(s, m, 0);
    store(y, t * rsqrt(row_sum(t * t) / float(s.cols()) + eps), m, 0);
  }
}

// 27. Ring shift of bf16 tiles to the next rank, scaled and offset by the sender's rank.
PK_KERNEL void ring_shift_scaled(Sym<bf16, 2> x, Sym<bf16, 2> y, float a) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y.on(next_rank()), cast<bf16>(cast<f32>(load<16, 128>(x, m, n)) * a + float(rank())), m, n);
}

// 28. Row stencil across ranks (sequence-parallel conv halo): y = up + 2 x + down, the row above
//     the first and below the last pulled from the previous and next ranks (a ring).
PK_KERNEL void halo_stencil(Sym<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto ri = row_index<16, 64>(m);
    auto up = load<16, 64>(x, m - 1, n) + where(ri == 0.0f, load<1, 64>(x.on(prev_rank()), x.rows() - 1, n), 0.0f);
    auto dn = load<16, 64>(x, m + 1, n) + where(ri == float(x.rows() - 1), load<1, 64>(x.on(next_rank()), 0, n), 0.0f);
    store(y, up + 2.0f * load<16, 64>(x, m, n) + dn, m, n);
  }
}

// 29. A reduce-scatter written by hand: each rank adds half of row block p of x into rank p's y.
PK_KERNEL void rs_by_store_add(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    for (auto p : range(0, world_size())) store_add(y.on(p), load<16, 64>(x, p * y.rows() + m, n) * 0.5f, m, n);
}

// 30. Logits summed over ranks in place, then a softmax with a temperature (at most 128 columns).
PK_KERNEL void ar_in_place_softmax(Tensor<f32, 2> a, Sym<f32, 2> h, Tensor<f32, 2> p, float inv_temp) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(h, load<16, 64>(a, m, n) * float(rank() + 1), m, n);
  all_reduce(Sum, h, h);
  for (auto m : tiles(h.rows(), {16})) {
    auto t = where(col_index<16, 128>(0) < h.cols(), load<16, 128>(h, m, 0) * inv_temp, -1e30f);
    auto e = exp(t - row_max(t));
    store(p, e / row_sum(e), m, 0);
  }
}

// 31. fp8 quantisation with a per-row scale shared by the tensor-parallel ranks: row amax over
//     this rank's columns, all-reduced (Max), then e4m3 values and the scale.
PK_KERNEL void tp_fp8_shared_scale(Tensor<bf16, 2> x, Sym<f32, 2> lm, Sym<f32, 2> gm, Tensor<f8e4m3, 2> q,
                                   Tensor<f32, 2> scale) {
  for (auto m : tiles(x.rows(), {16})) {
    auto mx = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), 128)) mx = max(mx, row_max(abs(cast<f32>(load<16, 128>(x, m, k)))));
    store(lm, mx, m, 0);
  }
  all_reduce(Max, lm, gm);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(q, cast<f8e4m3>(cast<f32>(load<16, 128>(x, m, n)) * (448.0f / max(load<16, 1>(gm, m, 0), 1e-12f))), m, n);
  for (auto m : tiles(x.rows(), {16})) store(scale, max(load<16, 1>(gm, m, 0), 1e-12f) * (1.0f / 448.0f), m, 0);
}

// 32. MoE layout over ranks: each rank's expert counts (histogram), all-gathered; then the total
//     per expert, the experts' exclusive offsets, and where this rank's tokens start in each.
PK_KERNEL void moe_layout(Tensor<i32, 1> experts, Sym<i32, 1> cnt, Sym<i32, 1> all, Tensor<i32, 1> total,
                          Tensor<i32, 1> start) {
  for (auto i : tiles(1, {1})) store(cnt, histogram<64>(load<2048>(experts, i)), 0);
  all_gather(cnt, all);
  for (auto i : tiles(1, {1})) {
    auto tot = zeros<i32, 64>();
    for (auto q : range(0, world_size())) tot = tot + load<64>(all, q * 64);
    auto before = zeros<i32, 64>();
    for (auto q : range(0, rank())) before = before + load<64>(all, q * 64);
    store(total, tot, i);
    store(start, cumsum(tot) - tot + before, i);
  }
}

// 33. Sequence-parallel all-gather of rows, then a general-path GEMM x W^T into f32.
PK_KERNEL void sp_ag_gemm_t(Sym<bf16, 2> x, Sym<bf16, 2> g, Tensor<bf16, 2> w, Tensor<f32, 2> y) {
  all_gather(x, g);
  for (auto [m, n] : tiles(g.rows(), w.rows(), {32, 32})) {
    auto acc = zeros<f32, 32, 32>();
    for (auto k : range(0, g.cols(), 32)) acc = mma_t(load<32, 32>(g, m, k), load<32, 32>(w, n, k), acc);
    store(y, acc, m, n);
  }
}

// 34. Row-parallel linear: a general-path GEMM's f32 partial products, reduce-scattered over rows.
PK_KERNEL void gemm_partial_rs(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<f32, 2> p, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {32, 64})) {
    auto acc = zeros<f32, 32, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<32, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(p, acc, m, n);
  }
  reduce_scatter(Sum, p, y);
}

// 35. Column blocks exchanged between ranks (all-to-all within dimension 1), then 2 y - 1.
PK_KERNEL void a2a_cols_affine(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> z) {
  all_to_all(x, y, 1, 1);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64})) store(z, load<16, 64>(y, m, n) * 2.0f - 1.0f, m, n);
}

// A tenth user-written spec set, written from docs/language.md, README.md, pk/spec.h and the
// shipped specs alone (no compiler sources read first). It is aimed at multi-rank and
// multi-phase kernels as they appear, piece by piece, in Megatron-LM, DeepSpeed, TensorRT-LLM
// and vLLM, and at the combinations the earlier sets did not make: sequence-parallel norms
// between a reduce-scatter and an all-gather (out of place and in NCCL's in-place layout),
// all-gathers and reduce-scatters along columns around GEMMs, TensorRT-LLM's all-reduce +
// residual + RMSNorm + fp8 quantisation, a vocabulary-parallel embedding reduce-scattered to
// sequence-parallel rows, cross-entropy with label smoothing and an ignore index, Ulysses
// re-sharding of [S, H, D] and of 4-D [B, H, S, D] tensors, integer counts / offsets /
// histograms across ranks (all_to_all of one count per rank, all_gather + all_reduce of
// histograms, an i64 Max, an i32 Min), ring shifts and halo exchanges that read what the peers
// stored in a later phase, a two-shot all-reduce and a ring all-gather written by hand with
// peer loads and stores, peer adds into owners and into every rank, MoE top-2 dispatch with
// claimed slots and combine by pulls, fp8 all-gather along columns and an fp8 reduce-scatter
// by peer loads, a five-phase ZeRO-2 step with an in-place all-gather, rooted collectives
// around compute, an in-place all-to-all on both sides of an expert, and the shipped fused GEMM
// forms behind an all-gather along columns, an in-place all-gather and an all-reduce into a local
// tensor. Every kernel's comment says what the correct result is; shapes with tails and world
// size 3 are the point.
// test/gpu/user_specs10_jit_test.cu runs them through the JIT against float64 at W = 1, 2, 3;
// test/Compile/user_specs10.test compiles the set; test/specs/specs10_findings.md has findings.
#include <pk/spec.h>
using namespace pk;

// ================================================================ sequence / tensor parallel norms ==

// 1. Megatron sequence parallelism after a row-parallel linear: p [S, H] (bf16, each rank's
//    partial sum) is reduce-scattered over rows into ps [S/W, H]; h = bf16(ps + res) is stored as
//    the new residual; y = bf16(bf16(h) * rsqrt(mean(h^2) + eps) * w) (H <= 1024) into a symmetric
//    [S/W, H] buffer, all-gathered into y [S, H] on every rank.
PK_KERNEL void sp_rs_add_rmsnorm_ag(Sym<bf16, 2> p, Sym<bf16, 2> ps, Tensor<bf16, 2> res, Tensor<f32, 1> w,
                                    Tensor<bf16, 2> hres, Sym<bf16, 2> yl, Tensor<bf16, 2> y, float eps) {
  reduce_scatter(Sum, p, ps);
  for (auto m : tiles(ps.rows(), {8})) {
    auto hb = cast<bf16>(cast<f32>(load<8, 1024>(ps, m, 0)) + cast<f32>(load<8, 1024>(res, m, 0)));
    store(hres, hb, m, 0);
    auto t = cast<f32>(hb);
    auto r = rsqrt(row_sum(t * t) / float(ps.cols()) + eps);
    store(yl, cast<bf16>(t * r * load<1, 1024>(w, 0)), m, 0);
  }
  all_gather(yl, y);
}

// 2. Sequence-parallel LayerNorm (f16, H <= 512) written straight into this rank's chunk of an
//    [W R, H] symmetric buffer (rows rank() R ..), then all-gathered in place (NCCL's layout:
//    chunk r is rank r's input). y[q R + i] = LN(x_q[i]) * g + b on every rank. R is any number
//    of rows: the last 8-row tile's padding rows land in the next chunk of this rank's own copy,
//    which the all-gather then overwrites with that chunk's owner's rows.
PK_KERNEL void sp_layernorm_ag_in_place(Tensor<f16, 2> x, Tensor<f32, 1> g, Tensor<f32, 1> b, Sym<f16, 2> y,
                                        float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 512>(x, m, 0));
    float inv_n = 1.0f / float(x.cols());
    auto mu = row_sum(t) * inv_n;
    auto d = where(col_index<8, 512>(0) < x.cols(), t - mu, 0.0f);
    auto rs = rsqrt(row_sum(d * d) * inv_n + eps);
    store(y, cast<f16>(d * rs * load<1, 512>(g, 0) + load<1, 512>(b, 0)), rank() * x.rows() + m, 0);
  }
  all_gather(y, y);
}

// 3. TensorRT-LLM's fused all-reduce + residual + RMSNorm + fp8 quantisation after a row-parallel
//    linear: p [T, H] (bf16, H <= 2048) all-reduced in place; h = bf16(p + res) stored as the new
//    residual; y = w * bf16(h * rsqrt(mean(h^2) + eps)) (HF's order, a bf16 product), quantised
//    with a static per-tensor scale: q = e4m3(y * inv_scale), saturating.
PK_KERNEL void ar_residual_rmsnorm_fp8(Sym<bf16, 2> p, Tensor<bf16, 2> res, Tensor<bf16, 1> w, Tensor<bf16, 2> hres,
                                       Tensor<f8e4m3, 2> q, float eps, float inv_scale) {
  all_reduce(Sum, p, p);
  for (auto m : tiles(p.rows(), {4})) {
    auto hb = cast<bf16>(cast<f32>(load<4, 2048>(p, m, 0)) + cast<f32>(load<4, 2048>(res, m, 0)));
    store(hres, hb, m, 0);
    auto t = cast<f32>(hb);
    auto r = rsqrt(row_sum(t * t) / float(p.cols()) + eps);
    auto yb = cast<bf16>(t * r) * load<1, 2048>(w, 0);
    store(q, cast<f8e4m3>(cast<f32>(yb) * inv_scale), m, 0);
  }
}

// ================================================================ tensor-parallel MLP pieces ==

// 4. Column-parallel linear whose input arrives split by columns (K sharded): x [M, K/W] is
//    all-gathered along dimension 1 into xg [M, K], then h = bf16(gelu(xg w^T + bias)) with
//    w [N, K] and an f32 bias [N]; 128 x 128 x 64 tiles.
PK_KERNEL void ag_cols_gemm_bias_gelu(Sym<bf16, 2> x, Sym<bf16, 2> xg, Tensor<bf16, 2> w, Tensor<f32, 1> bias,
                                      Tensor<bf16, 2> h) {
  all_gather(x, xg, 1);
  for (auto [m, n] : tiles(xg.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, xg.cols(), 64)) acc = mma_t(load<128, 64>(xg, m, k), load<128, 64>(w, n, k), acc);
    store(h, cast<bf16>(gelu(acc + load<1, 128>(bias, n))), m, n);
  }
}

// 5. Row-parallel linear whose output is wanted split by columns: the partial product a b
//    (a [M, K/W], b [K/W, N], f32, 64 x 128 x 64 tiles) into p [M, N], reduce-scattered along
//    dimension 1 into ys [M, N/W]; then y = bf16(ys + bias[rank() N/W + n]) with the full f32
//    bias [N] (this rank's columns of it). The f32 GEMM stays on the general path (finding 6).
PK_KERNEL void gemm_rs_cols_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<f32, 2> p, Sym<f32, 2> ys,
                                 Tensor<f32, 1> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<64, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(p, acc, m, n);
  }
  reduce_scatter(Sum, p, ys, 1);
  for (auto [m, n] : tiles(ys.rows(), ys.cols(), {16, 64}))
    store(y, cast<bf16>(load<16, 64>(ys, m, n) + load<1, 64>(bias, rank() * ys.cols() + n)), m, n);
}

// 6. DeepSpeed / Megatron weight broadcast before use: w [N, K] (bf16) broadcast in place from
//    `root`, then y = bf16(x w^T) in the shipped 128 x 256 x 64 form (a template candidate).
PK_KERNEL void bcast_weight_gemm(Sym<bf16, 2> w, Tensor<bf16, 2> x, Tensor<bf16, 2> y, index root) {
  broadcast(w, w, root);
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// ================================================================ vocabulary parallel ==

// 7. Megatron vocabulary-parallel embedding with sequence parallelism: i64 ids [T] (global ids,
//    -1 for padding), this rank's bf16 table rows [V/W, H]; each rank's lookup (zeros for ids of
//    other shards) into an f32 [T, H] buffer, reduce-scattered over rows into es [T/W, H]; then
//    y = bf16(es * scale) (Gemma's sqrt(H) embedding scale).
PK_KERNEL void vocab_embed_rs_sp(Tensor<i64, 1> ids, Tensor<bf16, 2> table, Sym<f32, 2> part, Sym<f32, 2> es,
                                 Tensor<bf16, 2> y, float scale) {
  for (auto [t, n] : tiles(part.rows(), part.cols(), {16, 128}))
    store(part, cast<f32>(load_rows<16, 128>(table, load<16>(ids, t) - rank() * table.rows(), n)), t, n);
  reduce_scatter(Sum, part, es);
  for (auto [t, n] : tiles(es.rows(), es.cols(), {16, 128}))
    store(y, cast<bf16>(load<16, 128>(es, t, n) * scale), t, n);
}

// 8. Vocabulary-parallel cross-entropy with label smoothing and an ignore index (Megatron's
//    VocabParallelCrossEntropy with label_smoothing, HF's ignore_index = -100): logits [T, V/W]
//    f32, i64 targets [T] (global ids). With lse over the whole vocabulary (W V columns),
//    loss = (1 - eps) (lse - x_target) + eps (lse - mean_j x_j), and 0 where target < 0.
PK_KERNEL void vocab_ce_smoothing_ignore(Tensor<f32, 2> logits, Tensor<i64, 1> target, Sym<f32, 2> mx,
                                         Sym<f32, 2> st, Sym<f32, 2> gst, Tensor<f32, 1> loss, float eps) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = zeros<f32, 16, 1>() - 1e30f;
    for (auto n : range(0, logits.cols(), 256))
      m = max(m, row_max(where(col_index<16, 256>(n) < logits.cols(), load<16, 256>(logits, t, n), -1e30f)));
    store(mx, m, t, 0);
  }
  all_reduce(Max, mx, mx);
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = load<16, 1>(mx, t, 0);
    auto want = cast<f32>(load<16, 1>(target, t) - rank() * logits.cols());
    auto se = zeros<f32, 16, 1>();
    auto xt = zeros<f32, 16, 1>();
    auto sx = zeros<f32, 16, 1>();
    for (auto n : range(0, logits.cols(), 256)) {
      auto cols = col_index<16, 256>(n);
      auto x = load<16, 256>(logits, t, n);
      se = se + row_sum(where(cols < logits.cols(), exp(x - m), 0.0f));
      xt = xt + row_sum(where(cols == want, x, 0.0f));
      sx = sx + row_sum(x);  // the padding columns load as zeros
    }
    store(st, se, t, 0);
    store(st, xt, t, 1);
    store(st, sx, t, 2);
  }
  all_reduce(Sum, st, gst);
  for (auto t : tiles(logits.rows(), {16})) {
    auto lse = log(load<16, 1>(gst, t, 0)) + load<16, 1>(mx, t, 0);
    float v = float(world_size() * logits.cols());
    auto l = (1.0f - eps) * (lse - load<16, 1>(gst, t, 1)) + eps * (lse - load<16, 1>(gst, t, 2) / v);
    store(loss, where(load<16, 1>(target, t) >= 0, l, 0.0f), t);
  }
}

// 9. Sampling over the whole vocabulary: the LM head's f32 column shards [T, V/W] all-gathered
//    along dimension 1 into a local [T, V], then a softmax with temperature in 512-column chunks
//    (any V): prob = bf16(exp(x / temp - max) / sum).
PK_KERNEL void vocab_ag_cols_softmax(Sym<f32, 2> l, Tensor<f32, 2> lf, Tensor<bf16, 2> prob, float inv_temp) {
  all_gather(l, lf, 1);
  for (auto t : tiles(lf.rows(), {8})) {
    auto m = zeros<f32, 8, 1>() - 1e30f;
    for (auto n : range(0, lf.cols(), 512))
      m = max(m, row_max(where(col_index<8, 512>(n) < lf.cols(), load<8, 512>(lf, t, n) * inv_temp, -1e30f)));
    auto s = zeros<f32, 8, 1>();
    for (auto n : range(0, lf.cols(), 512))
      s = s + row_sum(where(col_index<8, 512>(n) < lf.cols(), exp(load<8, 512>(lf, t, n) * inv_temp - m), 0.0f));
    for (auto n : range(0, lf.cols(), 512)) store(prob, cast<bf16>(exp(load<8, 512>(lf, t, n) * inv_temp - m) / s), t, n);
  }
}

// ================================================================ all-to-all re-sharding ==

// 10. Ulysses on [S, H, D] (sequence first, as Megatron and DeepSpeed lay activations out):
//     x [S/W, H, 64] all-to-all (split heads, concatenate sequence) into y [S, H/W, 64]; a QK
//     RMSNorm over D with an f32 gain [64]; back with the inverse all-to-all into o [S/W, H, 64].
PK_KERNEL void ulysses_shd_qk_rmsnorm(Sym<bf16, 3> x, Sym<bf16, 3> y, Tensor<f32, 1> g, Sym<bf16, 3> z,
                                      Tensor<bf16, 3> o, float eps) {
  all_to_all(x, y, 1, 0);
  for (auto [s, h] : tiles(y.dim(0), y.dim(1), {1, 4})) {
    auto t = cast<f32>(load<4, 64>(y, s, h, 0));
    auto r = rsqrt(row_sum(t * t) / float(y.dim(2)) + eps);
    store(z, cast<bf16>(t * r * load<1, 64>(g, 0)), s, h, 0);
  }
  all_to_all(z, o, 0, 1);
}

// 11. Ulysses on 4-D [B, H, S/W, 64] (split heads, concatenate the sequence, dimension 2) into
//     [B, H/W, S, 64], then each head scaled by its global head's factor hscale[rank() H/W + h].
PK_KERNEL void ulysses_bhsd_head_scale(Sym<bf16, 4> x, Sym<bf16, 4> y, Tensor<f32, 1> hscale, Tensor<bf16, 4> o) {
  all_to_all(x, y, 1, 2);
  for (auto [bh, s] : tiles(y.dim(0) * y.dim(1), y.dim(2), {1, 16})) {
    index b = bh / y.dim(1);
    index h = bh % y.dim(1);
    float sc = hscale.at(rank() * y.dim(1) + h);
    store(o, cast<bf16>(cast<f32>(load<16, 64>(y, b, h, s, 0)) * sc), b, h, s, 0);
  }
}

// 12. GShard-style capacity dispatch in place: buf [W cap, D] (block j for rank j) all-to-all'ed
//     in place, each rank's expert applied (y = bf16(gelu(x * gain)), gain a bf16 [1, D] row of
//     this rank's expert), and all-to-all'ed back in place: block j of rank r ends as expert j
//     (rank j's gain) applied to rank r's own block j.
PK_KERNEL void gshard_a2a_in_place_expert(Sym<bf16, 2> buf, Tensor<bf16, 2> gain) {
  all_to_all(buf, buf);
  for (auto [m, n] : tiles(buf.rows(), buf.cols(), {16, 128}))
    store(buf, cast<bf16>(gelu(cast<f32>(load<16, 128>(buf, m, n)) * cast<f32>(load<1, 128>(gain, 0, n)))), m, n);
  all_to_all(buf, buf);
}

// ================================================================ integers across ranks ==

// 13. The all_to_all_v pre-step: each rank counts its tokens per destination rank (dest i32 [T],
//     -1 for dropped tokens, any T in 4096-token chunks) into cnt [W], the counts are exchanged
//     by an all-to-all of one element per rank (rc[j] = tokens rank j sends here), then the
//     receive offsets (exclusive running sums) and the total received.
PK_KERNEL void token_counts_a2a_offsets(Tensor<i32, 1> dest, Sym<i32, 1> cnt, Sym<i32, 1> rc, Tensor<i32, 1> roff,
                                        Tensor<i32, 1> total) {
  for (auto i : tiles(1, {1})) {
    auto h = zeros<i32, 16>();
    for (auto k : range(0, dest.size(), 4096)) h = h + histogram<16>(load<4096>(dest, k));
    store(cnt, h, 0);
  }
  all_to_all(cnt, rc);
  for (auto i : tiles(1, {1})) {
    auto c = load<16>(rc, 0);
    store(roff, cumsum(c) - c, 0);
    store(total, cast<i32>(row_sum(cast<f32>(load<1, 16>(rc, 0)))), 0);
  }
}

// 14. Expert-parallel layout across ranks: each rank's histogram of its tokens' experts (E = 64,
//     any T in 2048-token chunks) is all-gathered ([W 64]) and all-reduced; gstart[e] is the
//     exclusive running sum of the global counts, base[e] = gstart[e] + the counts of expert e on
//     the lower ranks (where this rank's tokens of expert e start in the global order).
PK_KERNEL void expert_offsets_across_ranks(Tensor<i32, 1> experts, Sym<i32, 1> lc, Sym<i32, 1> allc, Sym<i32, 1> gc,
                                           Tensor<i32, 1> gstart, Tensor<i32, 1> base) {
  for (auto i : tiles(1, {1})) {
    auto h = zeros<i32, 64>();
    for (auto k : range(0, experts.size(), 2048)) h = h + histogram<64>(load<2048>(experts, k));
    store(lc, h, 0);
  }
  all_gather(lc, allc);
  all_reduce(Sum, lc, gc);
  for (auto i : tiles(1, {1})) {
    auto c = load<64>(gc, 0);
    auto st = cumsum(c) - c;
    store(gstart, st, 0);
    auto b = st;
    for (auto p : range(0, rank())) b = b + load<64>(allc, p * lc.size());
    store(base, b, 0);
  }
}

// 15. Left padding to the longest sequence over the data-parallel ranks: i64 lengths [B]
//     (B <= 1024); the local maximum, an i64 Max all-reduce, then position ids pos [B, L] =
//     j - (gmax - len[b]) where j >= gmax - len[b], else -1.
PK_KERNEL void dp_left_pad_positions(Tensor<i64, 1> len, Sym<i64, 1> lmax, Sym<i64, 1> gmax, Tensor<i64, 2> pos) {
  for (auto i : tiles(1, {1})) store(lmax, cast<i64>(row_max(cast<f32>(load<1, 1024>(len, 0)))), 0);
  all_reduce(Max, lmax, gmax);
  for (auto [b, j] : tiles(pos.rows(), pos.cols(), {16, 128})) {
    auto pad = load<1, 1>(gmax, 0) - load<16, 1>(len, b);
    auto col = cast<i64>(col_index<16, 128>(j));
    store(pos, where(col >= pad, col - pad, -1), b, j);
  }
}

// 16. The first end-of-sequence token across a sequence-parallel split: tok [B, L/W] i32 holds
//     this rank's columns (global column rank() L/W + j); each row's first column equal to `eos`
//     (1e9 if none), an i32 Min all-reduce, then keep[b, j] = 1 where the global column is at or
//     before the first eos, else 0.
PK_KERNEL void sp_first_eos_mask(Tensor<i32, 2> tok, Sym<i32, 2> lf, Sym<i32, 2> gf, Tensor<i32, 2> keep, index eos) {
  for (auto b : tiles(tok.rows(), {16})) {
    auto first = zeros<f32, 16, 1>() + 1e9f;
    for (auto j : range(0, tok.cols(), 256)) {
      auto col = col_index<16, 256>(j);
      auto hit = where(col < tok.cols(), where(load<16, 256>(tok, b, j) == eos, col + float(rank() * tok.cols()), 1e9f), 1e9f);
      first = min(first, row_min(hit));
    }
    store(lf, cast<i32>(first), b, 0);
  }
  all_reduce(Min, lf, gf);
  for (auto [b, j] : tiles(tok.rows(), tok.cols(), {16, 256})) {
    auto pos = cast<i32>(col_index<16, 256>(j)) + rank() * tok.cols();
    store(keep, where(pos <= load<16, 1>(gf, b, 0), 1, 0), b, j);
  }
}

// ================================================================ rings, halos, peers ==

// 17. Ring shift, then combine (ring attention's K/V rotation fused with a use): x [R, C] bf16 is
//     stored into the next rank's recv; then y = bf16(0.5 (x + recv)), recv being what the
//     previous rank sent.
PK_KERNEL void ring_shift_then_combine(Sym<bf16, 2> x, Sym<bf16, 2> recv, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(recv.on(next_rank()), load<16, 128>(x, m, n), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, cast<bf16>((cast<f32>(load<16, 128>(x, m, n)) + cast<f32>(load<16, 128>(recv, m, n))) * 0.5f), m, n);
}

// 18. Halo exchange on a periodic ring of row blocks, both directions, then a 3-point stencil:
//     each rank's first row goes into the previous rank's `bot` [1, C], its last row into the
//     next rank's `top` [1, C]; y[i] = x[i-1] + 2 x[i] + x[i+1] with x[-1] = top (the previous
//     rank's last row) and x[R] = bot (the next rank's first row).
PK_KERNEL void halo_stencil_ring(Sym<f32, 2> x, Sym<f32, 2> top, Sym<f32, 2> bot, Tensor<f32, 2> y) {
  for (auto n : tiles(x.cols(), {128})) {
    store(bot.on(prev_rank()), load<1, 128>(x, 0, n), 0, n);
    store(top.on(next_rank()), load<1, 128>(x, x.rows() - 1, n), 0, n);
  }
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto rows = row_index<16, 128>(m);
    auto up = where(rows == 0.0f, load<1, 128>(top, 0, n), load<16, 128>(x, m - 1, n));
    auto dn = where(rows == float(x.rows() - 1), load<1, 128>(bot, 0, n), load<16, 128>(x, m + 1, n));
    store(y, up + load<16, 128>(x, m, n) * 2.0f + dn, m, n);
  }
}

// 19. vLLM's custom two-shot all-reduce written by hand: x, y [W R, C] f32; rank r sums its row
//     block [r R, (r + 1) R) over every rank's x (peer loads), then stores the sums into that
//     block of every rank's y. y = sum over ranks of x, everywhere.
PK_KERNEL void two_shot_all_reduce_by_hand(Sym<f32, 2> x, Sym<f32, 2> y) {
  index rows = x.rows() / world_size();
  for (auto [m, n] : tiles(rows, x.cols(), {1, 256})) {
    auto s = zeros<f32, 1, 256>();
    for (auto p : range(0, world_size())) s = s + load<1, 256>(x.on(p), rank() * rows + m, n);
    for (auto p : range(0, world_size())) store(y.on(p), s, rank() * rows + m, n);
  }
}

// 20. A ring all-gather written by hand: this rank's rows x [R, C] into its chunk of y [W R, C],
//     then W - 1 steps, step s sending chunk (rank - s) mod W to the next rank. Written first as
//     one tile loop in the step loop (load the chunk, store it into the next rank): refused as a
//     race across steps (specs10_findings.md, finding 4), because pkc does not make that range
//     loop a host loop; with the chunk staged through a local buffer (two tile loops, the second
//     reading what the first wrote) each step is a launch of a host loop. y = all ranks' x.
PK_KERNEL void ring_all_gather_steps(Tensor<bf16, 2> x, Sym<bf16, 2> y, Tensor<bf16, 2> stage) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 256})) store(y, load<1, 256>(x, m, n), rank() * x.rows() + m, n);
  for (auto s : range(0, world_size() - 1)) {
    index c = (rank() + world_size() - s) % world_size();
    for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 256})) store(stage, load<1, 256>(y, c * x.rows() + m, n), m, n);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 256}))
      store(y.on(next_rank()), load<1, 256>(stage, m, n), c * x.rows() + m, n);
  }
}

// 21. An all-gather written as pulls: y [W R, C] f16 (local) gets every rank's x [R, C] at rows
//     p R, over (owner, row, column) tiles. Written with 16-row tiles it is refused (rightly: a
//     partial tile's padding rows would land on the next owner's first rows; finding 7), so one
//     row per tile.
PK_KERNEL void pull_all_gather_rows(Sym<f16, 2> x, Tensor<f16, 2> y) {
  for (auto [p, m, n] : tiles(world_size(), x.rows(), x.cols(), {1, 1, 256}))
    store(y, load<1, 256>(x.on(p), m, n), p * x.rows() + m, n);
}

// 22. Reduce-scatter of a SiLU backward by adds into the owners (the gemm_rs form over owners):
//     g, a [W R, C] f32 on every rank; y [R, C] is zeroed, then every rank adds
//     g * dsilu(a) of owner o's rows (o R + m) into rank o's y. y = sum over ranks of
//     g * s (1 + a (1 - s)), s = sigmoid(a), of this rank's rows.
PK_KERNEL void rs_silu_grad_add_to_owners(Tensor<f32, 2> g, Tensor<f32, 2> a, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64})) store(y, zeros<f32, 16, 64>(), m, n);
  for (auto [o, m, n] : tiles(world_size(), y.rows(), y.cols(), {1, 16, 64})) {
    auto at = load<16, 64>(a, o * y.rows() + m, n);
    auto s = sigmoid(at);
    store_add(y.on(o), load<16, 64>(g, o * y.rows() + m, n) * s * (1.0f + at * (1.0f - s)), m, n);
  }
}

// 23. Data-parallel bias gradient all-reduced by adds into every rank: db [N, 1] (f32) zeroed,
//     then each rank's column sums of dy [T, N] (bf16) added into every rank's db. db = the
//     column sums over all ranks' dy, everywhere.
PK_KERNEL void bias_grad_add_all(Tensor<bf16, 2> dy, Sym<f32, 2> db) {
  for (auto n : tiles(db.rows(), {256})) store(db, zeros<f32, 256, 1>(), n, 0);
  for (auto n : tiles(dy.cols(), {64})) {
    auto acc = zeros<f32, 64, 1>();
    for (auto r : range(0, dy.rows(), 32)) acc = acc + row_sum(transpose(cast<f32>(load<32, 64>(dy, r, n))));
    for (auto p : range(0, world_size())) store_add(db.on(p), acc, n, 0);
  }
}

// 24. Ulysses by stores: each rank holds all H heads of its sequence block, x [H, S/W, 64];
//     head h goes to its owner h / (H/W) as local head h % (H/W), at the sequence rows of this
//     rank's block: y [H/W, S, 64] on the owner, y[h % hpr, r S/W + s] = x_r[h, s]. Written with
//     hpr = x.dim(0) / world_size() it is refused (finding 5); with hpr = y.dim(0) it compiles.
//     One row per tile: 16-row tiles' padding rows would reach the next rank's block (a race).
PK_KERNEL void heads_to_owners_by_stores(Tensor<bf16, 3> x, Sym<bf16, 3> y) {
  for (auto [h, s] : tiles(x.dim(0), x.dim(1), {1, 1}))
    store(y.on(h / y.dim(0)), load<1, 64>(x, h, s, 0), h % y.dim(0), rank() * x.dim(1) + s, 0);
}

// ================================================================ MoE ==

// 25. Top-2 MoE dispatch with claimed slots: ids [T, 2] (global experts, E = W epr), weights
//     [T, 2]; each (token, choice) claims the next place for its owner rank (e / epr) from the
//     per-destination counter `fill` [W] (zeroed first), and goes to rows rank() cap + place of
//     the owner's recv [W cap, D] with its weight (recv_w [W cap, 1]) and source token
//     (recv_tok [W cap, 1]); places at or past cap are dropped. Then each rank's count for
//     owner p (at most cap) goes into p's recv_cnt [W] at this rank's index. Every id must be
//     an expert (0 <= e < E): -1 / epr is 0 (C division), which would claim a place on rank 0.
PK_KERNEL void moe_dispatch_top2_claim(Tensor<bf16, 2> x, Tensor<i32, 2> ids, Tensor<f32, 2> wts, Tensor<i32, 1> fill,
                                       Sym<bf16, 2> recv, Sym<f32, 2> recv_w, Sym<i32, 2> recv_tok,
                                       Sym<i32, 1> recv_cnt, index epr, index cap) {
  for (auto i : tiles(1, {1})) store(fill, zeros<i32, 16>(), 0);
  for (auto t : tiles(x.rows(), {16})) {
    for (auto k : range(0, 2)) {
      auto owner = load<16, 1>(ids, t, k) / epr;
      auto place = claim(fill, owner);
      auto dst = where((place >= 0) * (place < cap), place + rank() * cap, -1);
      auto w = load<16, 1>(wts, t, k);
      auto tok = cast<i32>(row_index<16, 1>(t));
      for (auto p : range(0, world_size())) {
        auto d = where(owner == p, dst, -1);
        for (auto n : range(0, x.cols(), 128)) store_rows(recv.on(p), load<16, 128>(x, t, n), d, n);
        store_rows(recv_w.on(p), w, d, 0);
        store_rows(recv_tok.on(p), tok, d, 0);
      }
    }
  }
  for (auto p : tiles(world_size(), {1})) store(recv_cnt.on(p), min(load<1>(fill, p), cap), rank());
}

// 26. Top-2 MoE combine by pulls with the residual: eo [W cap, D] bf16 holds each rank's expert
//     outputs; owner, slot [T, 2] (slot -1: dropped) and weights [T, 2] are this rank's routing.
//     y = bf16(res + sum_k w_k eo_{owner_k}[slot_k]) in f32.
PK_KERNEL void moe_combine_top2_pull(Sym<bf16, 2> eo, Tensor<i32, 2> owner, Tensor<i32, 2> slot, Tensor<f32, 2> wts,
                                     Tensor<bf16, 2> res, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(y.rows(), y.cols(), {16, 128})) {
    auto acc = cast<f32>(load<16, 128>(res, t, n));
    for (auto k : range(0, 2)) {
      auto o = load<16, 1>(owner, t, k);
      auto s = load<16, 1>(slot, t, k);
      auto part = zeros<f32, 16, 128>();
      for (auto p : range(0, world_size())) part = part + cast<f32>(load_rows<16, 128>(eo.on(p), where(o == p, s, -1), n));
      acc = acc + part * load<16, 1>(wts, t, k);
    }
    store(y, cast<bf16>(acc), t, n);
  }
}

// ================================================================ fp8 ==

// 27. fp8 (e5m2) all-gather along columns: x [M, N/W] bf16 (N/W <= 1024 and a multiple of 64)
//     quantised with one f32 scale per row of the shard (q = e5m2(x * (57344 / amax))), q and
//     the scales all-gathered along dimension 1, dequantised: y [M, N] = q * amax_shard / 57344.
PK_KERNEL void fp8_e5m2_all_gather_cols(Tensor<bf16, 2> x, Sym<f8e5m2, 2> q, Sym<f32, 2> s, Sym<f8e5m2, 2> gq,
                                        Sym<f32, 2> gs, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = cast<f32>(load<16, 1024>(x, m, 0));
    auto amax = max(row_max(abs(t)), 1e-12f);
    store(q, cast<f8e5m2>(t * (57344.0f / amax)), m, 0);
    store(s, amax / 57344.0f, m, 0);
  }
  all_gather(q, gq, 1);
  all_gather(s, gs, 1);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(y, cast<bf16>(cast<f32>(load<16, 64>(gq, m, n)) * load<16, 1>(gs, m, n / x.cols())), m, n);
}

// 28. fp8 (e4m3) reduce-scatter by peer loads: x [W R, N] f32 partials quantised per row and
//     128-column block (scale = amax / 448) into q, s; then rank r pulls its row block from every
//     rank and sums the dequantised values in f32: y [R, N] = sum_p deq(q_p[r R + i]).
PK_KERNEL void fp8_reduce_scatter_pull_rows(Tensor<f32, 2> x, Sym<f8e4m3, 2> q, Sym<f32, 2> s, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = load<16, 128>(x, m, n);
    auto amax = max(row_max(abs(t)), 1e-30f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(s, amax / 448.0f, m, n / 128);
  }
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto p : range(0, world_size()))
      acc = acc + cast<f32>(load<16, 128>(q.on(p), rank() * y.rows() + m, n)) *
                      load<16, 1>(s.on(p), rank() * y.rows() + m, n / 128);
    store(y, acc, m, n);
  }
}

// ================================================================ multi-phase ==

// 29. A ZeRO-2 step in five phases: gradients g [W R, C] f32 reduce-scattered (sum) into gs
//     [R, C]; the squared sum of gs into ss [1], all-reduced into tot (the global squared norm);
//     the shard w [R, C] updated by clipped SGD, w -= lr * gs * min(max_norm / (sqrt(tot) +
//     1e-6), 1); the new weights as bf16 into this rank's chunk of wf [W R, C], all-gathered in
//     place.
PK_KERNEL void zero2_clip_sgd_ag_in_place(Sym<f32, 2> g, Sym<f32, 2> gs, Sym<f32, 1> ss, Sym<f32, 1> tot,
                                          Tensor<f32, 2> w, Sym<bf16, 2> wf, float lr, float max_norm) {
  reduce_scatter(Sum, g, gs);
  for (auto i : tiles(1, {1})) {
    auto a = zeros<f32, 1, 1>();
    for (auto r : range(0, gs.rows(), 8))
      for (auto c : range(0, gs.cols(), 256)) {
        auto t = load<8, 256>(gs, r, c);
        a = a + row_sum(transpose(row_sum(t * t)));
      }
    store(ss, a, 0);
  }
  all_reduce(Sum, ss, tot);
  for (auto [m, n] : tiles(gs.rows(), gs.cols(), {8, 256})) {
    auto c = min(max_norm / (sqrt(load<1, 1>(tot, 0)) + 1e-6f), 1.0f);
    auto wn = load<8, 256>(w, m, n) - load<8, 256>(gs, m, n) * c * lr;
    store(w, wn, m, n);
    store(wf, cast<bf16>(wn), rank() * gs.rows() + m, n);
  }
  all_gather(wf, wf);
}

// 30. Rooted collectives around compute (a pipeline's first stage handing out micro-batches):
//     x [W R, H] f32 on `root` scattered into xs [R, H]; LayerNorm over H <= 256 (g, b f32 [H])
//     into ys; gathered into y [W R, H] on root.
PK_KERNEL void scatter_layernorm_gather(Sym<f32, 2> x, Sym<f32, 2> xs, Sym<f32, 2> ys, Sym<f32, 2> y,
                                        Tensor<f32, 1> g, Tensor<f32, 1> b, float eps, index root) {
  scatter(x, xs, root);
  for (auto m : tiles(xs.rows(), {8})) {
    auto t = load<8, 256>(xs, m, 0);
    float inv_n = 1.0f / float(xs.cols());
    auto mu = row_sum(t) * inv_n;
    auto d = where(col_index<8, 256>(0) < xs.cols(), t - mu, 0.0f);
    store(ys, d * rsqrt(row_sum(d * d) * inv_n + eps) * load<1, 256>(g, 0) + load<1, 256>(b, 0), m, 0);
  }
  gather(ys, y, root);
}

// 31. Partial logits [T, V] (f32, V <= 1024) reduced (sum) to `root`, then every rank's softmax
//     of its copy (meaningful on root: p = softmax(sum over ranks of part)).
PK_KERNEL void reduce_root_softmax(Sym<f32, 2> part, Sym<f32, 2> l, Tensor<f32, 2> p, index root) {
  reduce(Sum, part, l, root);
  for (auto m : tiles(l.rows(), {8})) {
    auto x = where(col_index<8, 1024>(0) < l.cols(), load<8, 1024>(l, m, 0), -1e30f);
    auto e = exp(x - row_max(x));
    store(p, e / row_sum(e), m, 0);
  }
}

// ================================================================ GEMM fusions with communication ==
// The shipped fused forms (128 x 256 x 64 bf16 tiles of A B^T, no epilogue, Scratch workspace),
// with the all-gather or all-reduce written another legal way. specs10_findings.md, findings 1-2:
// pkc fuses all three as if they were the shipped forms.

// 32. A K-sharded input (Megatron's column-sharded activations) gathered along dimension 1:
//     a [M, K/W] per rank, a_full [M, K] (Scratch), c = bf16(a_full b^T), b [N, K].
PK_KERNEL void ag_cols_gemm_scratch(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full, 1);
  for (auto [m, n] : tiles(a_full.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a_full.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a_full, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// 33. NCCL's in-place all-gather (x [W R, K], chunk r is rank r's rows) feeding the GEMM:
//     c = bf16(x_gathered b^T), c [W R, N].
PK_KERNEL void ag_in_place_gemm_scratch(Scratch<bf16, 2> x, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(x, x);
  for (auto [m, n] : tiles(x.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64))
      acc = mma_t(load_smem<128, 64>(x, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// 34. Row-parallel linear all-reduced into a local tensor (the docs allow a local output):
//     y = sum over ranks of bf16(a b^T), p the Scratch product.
PK_KERNEL void gemm_ar_local_out(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, y);
}

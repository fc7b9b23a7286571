// The twenty-second user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only, as a new user writing
// ParallelKernelBench-style problems (Megatron-LM, DeepSpeed, TensorRT-LLM, vLLM) around integer / indexed
// tensors, fp8 and MoE: routers (softmax then top-k with renormalised weights, top-k then softmax,
// sigmoid scores with a selection bias), expert histograms and exclusive offsets, token permutation and
// un-permutation by index, capacity-factor dropping, grouped expert GEMMs over permuted rows, MoE dispatch
// and combine across ranks with experts per rank not a power of two, all-to-all-v with splits computed on
// the device, vocabulary-parallel embedding (padding id, i64 ids) and cross-entropy (label smoothing,
// ignore_index), fp8 e4m3 / e5m2 quantisation per tensor, per row, per 1 x 128 and 128 x 128 block, fp8
// GEMMs with per-tensor / per-row-and-column / per-block scales, fp8 all-gather and all-to-all, int8-style
// quantisation held in i32, transposed loads and tiles, argmax and sampling utilities, multi-phase
// kernels. Each kernel compiles alone (pkc FILE --kernel NAME) and the file compiles as a whole. Each
// kernel's comment gives its exact semantics (W = world_size(), r = rank()). Part (b) is
// user_specs22_bad.pk.cpp; findings in test/specs/specs22_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ Routers

// Softmax-then-top-2 router (Switch / GShard / DeepSeek-V2 "softmax" scoring) with renormalised weights:
// logits [T, E] f32 with E <= 64; p[t, :] = softmax(logits[t, :E]); ids[t, j] (i32) = the column of the
// j-th largest p[t, :] (ties to the lower column), wts[t, j] = p[t, ids[t, j]] / (p[t, ids[t, 0]] +
// p[t, ids[t, 1]]), j = 0, 1.
PK_KERNEL void router_softmax_top2_renorm(Tensor<f32, 2> logits, Tensor<i32, 2> ids, Tensor<f32, 2> wts) {
  for (auto t : tiles(logits.rows(), {32})) {
    auto x = where(col_index<32, 64>(0) < logits.cols(), load<32, 64>(logits, t, 0), -1e30f);
    auto e = exp(x - row_max(x));
    auto p = e / row_sum(e);
    auto top = row_topk<2>(p);
    store(ids, row_topk_index<2>(p), t, 0);
    store(wts, top / row_sum(top), t, 0);
  }
}

// Top-k-then-softmax router (Mixtral): v[t, 0..7] = the 8 largest logits[t, :] (E <= 128, largest first),
// ids[t, j] their columns; wts[t, j] = exp(v[t, j] - v[t, 0]) / sum_i exp(v[t, i] - v[t, 0]).
PK_KERNEL void router_top8_then_softmax(Tensor<bf16, 2> logits, Tensor<i32, 2> ids, Tensor<f32, 2> wts) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto x = cast<f32>(load<16, 128>(logits, t, 0));
    auto v = row_topk<8>(x);
    store(ids, row_topk_index<8>(x), t, 0);
    auto e = exp(v - row_max(v));
    store(wts, e / row_sum(e), t, 0);
  }
}

// DeepSeek-V3 router: s = sigmoid(logits) [T, E] (E = 64 exactly); the experts are chosen by s + bias
// (bias [1, E], the load-balancing correction) but weighted by s itself: ids[t, j] = the column of the
// j-th largest s[t, :] + bias[0, :] (j < 4); wts[t, j] = route_scale * s[t, ids[t, j]] / sum_i s[t, ids[t, i]].
// Two phases: the choice (ids into `ids`, the unbiased scores into `sg` [T, E]), then the weights read
// back by comparing each column with the chosen id.
PK_KERNEL void router_sigmoid_bias_top4(Tensor<f32, 2> logits, Tensor<f32, 2> bias, Tensor<i32, 2> ids,
                                        Tensor<f32, 2> sg, Tensor<f32, 2> wts, float route_scale) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto s = sigmoid(load<16, 64>(logits, t, 0));
    store(sg, s, t, 0);
    store(ids, row_topk_index<4>(s + load<1, 64>(bias, 0, 0)), t, 0);
  }
  for (auto t : tiles(logits.rows(), {16})) {
    auto s = load<16, 64>(sg, t, 0);
    auto cols = cast<i32>(col_index<16, 64>(0));
    auto w0 = row_sum(where(cols == load<16, 1>(ids, t, 0), s, 0.0f));
    auto w1 = row_sum(where(cols == load<16, 1>(ids, t, 1), s, 0.0f));
    auto w2 = row_sum(where(cols == load<16, 1>(ids, t, 2), s, 0.0f));
    auto w3 = row_sum(where(cols == load<16, 1>(ids, t, 3), s, 0.0f));
    auto k = route_scale / (w0 + w1 + w2 + w3);
    store(wts, w0 * k, t, 0);
    store(wts, w1 * k, t, 1);
    store(wts, w2 * k, t, 2);
    store(wts, w3 * k, t, 3);
  }
}

// Group-limited routing (DeepSeek-V2 device-limited): E = 64 experts in 8 groups of 8; each token keeps
// only its best 2 groups (a group's score = its largest expert logit, which ranks groups as the largest
// probability would) and chooses its top-2 experts among them. Phase 1: gscore[t, i] = max_{e in group i}
// logits[t, e]. Phase 2: p = softmax(logits[t, :]); keep[t, e] = (gscore[t, e / 8] >= the 2nd largest of
// gscore[t, :]); ids[t, :] = the top-2 columns of where(keep, p, -1).
PK_KERNEL void router_group_limited_top2(Tensor<f32, 2> logits, Tensor<f32, 2> gscore, Tensor<i32, 2> ids) {
  for (auto t : tiles(logits.rows(), {16})) {
    for (auto g : range(0, 8)) store(gscore, row_max(load<16, 8>(logits, t, g * 8)), t, g);
  }
  for (auto t : tiles(logits.rows(), {16})) {
    auto x = load<16, 64>(logits, t, 0);
    auto e = exp(x - row_max(x));
    auto p = e / row_sum(e);
    auto g = load<16, 8>(gscore, t, 0);
    auto second = row_topk<2>(g);
    auto thr = row_min(second);
    auto keep = zeros<f32, 16, 64>();
    for (auto i : range(0, 8))
      keep = keep + cast<f32>(cast<i32>(col_index<16, 64>(0)) / 8 == i) * (load<16, 1>(gscore, t, i) >= thr);
    store(ids, row_topk_index<2>(where(keep > 0.0f, p, -1.0f)), t, 0);
  }
}

// ============================================================================ Expert counts, offsets, permutation

// Expert histogram and exclusive offsets over all tiles (Megatron's moe_utils / the sort-based
// permutation): ids [N] i32 (N = T K flattened choices; values outside [0, E) not counted), E <= 128.
// Phase 1 zeroes counts [1, 128]; phase 2 adds each 2048-id tile's histogram into it; phase 3 writes
// offsets[0, e] = sum_{e' < e} counts[0, e'] and offsets[0, 128] = sum of all counts ([1, 129] tensor).
PK_KERNEL void expert_counts_offsets(Tensor<i32, 1> ids, Tensor<i32, 2> counts, Tensor<i32, 2> offsets) {
  for (auto z : tiles(1, {1})) store(counts, zeros<i32, 1, 128>(), z, 0);
  for (auto i : tiles(ids.size(), {2048})) store_add(counts, reshape<1, 128>(histogram<128>(load<2048>(ids, i))), 0, 0);
  for (auto z : tiles(1, {1})) {
    auto c = load<1, 128>(counts, z, 0);
    auto incl = cumsum(c);
    store(offsets, incl - c, z, 0);
    store(offsets, cast<i32>(row_sum(cast<f32>(c))), z, 128);
  }
}

// Token permutation by a precomputed row map (Megatron's permute with a sorted index, TensorRT-LLM's
// expandInputRowsKernel): src [N] i32, N = T K; y[i, :] = x[src[i] / K, :] for i < N (a choice's token is
// its flat index divided by K = topk). Rows of y past N inside the last 64-row tile get zeros (that tile's
// padding rows: a store clips at y's end, not src's); rows past it are not written.
PK_KERNEL void permute_tokens(Tensor<bf16, 2> x, Tensor<i32, 1> src, Tensor<bf16, 2> y, index topk) {
  for (auto [i, n] : tiles(src.size(), x.cols(), {64, 256}))
    store(y, load_rows<64, 256>(x, load<64>(src, i) / topk, n), i, n);
}

// Un-permutation with the router weights (Megatron's unpermute / TensorRT-LLM finalizeMoeRouting):
// dst [T, K] i32 = the row of y each (token, choice) went to (-1: dropped); out[t, :] = bf16(sum_{k < K,
// dst[t, k] >= 0} wts[t, k] * f32(y[dst[t, k], :]) + f32(residual[t, :])).
PK_KERNEL void unpermute_weighted_residual(Tensor<bf16, 2> y, Tensor<i32, 2> dst, Tensor<f32, 2> wts,
                                           Tensor<bf16, 2> residual, Tensor<bf16, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 256})) {
    auto acc = cast<f32>(load<32, 256>(residual, t, n));
    for (auto k : range(0, dst.cols()))
      acc = acc + cast<f32>(load_rows<32, 256>(y, load<32, 1>(dst, t, k), n)) * load<32, 1>(wts, t, k);
    store(out, cast<bf16>(acc), t, n);
  }
}

// Capacity-factor dispatch on one rank (GShard / Switch): ids [T, K] i32 choose among E experts, each
// with `capacity` rows in buf [E capacity, H]. fill [E] is zeroed, then each (token, choice) claims a place
// p in its expert (claim order unspecified); a choice is kept iff 0 <= ids < E and p < capacity:
// slot[t, k] = ids[t, k] * capacity + p if kept, else -1; then x[t, :] is copied to buf[slot[t, k], :]
// for every kept choice. Rows of buf that no choice claims keep their old contents; count[e] =
// min(fill[e], capacity) afterwards (the rows expert e holds).
PK_KERNEL void capacity_dispatch(Tensor<bf16, 2> x, Tensor<i32, 2> ids, Tensor<i32, 1> fill, Tensor<i32, 2> slot,
                                 Tensor<bf16, 2> buf, Tensor<i32, 1> count, index capacity) {
  for (auto e : tiles(fill.size(), {256})) store(fill, zeros<i32, 256>(), e);
  for (auto [t, k] : tiles(ids.rows(), ids.cols(), {128, 1})) {
    auto e = load<128, 1>(ids, t, k);
    auto p = claim(fill, e);
    store(slot, where((p >= 0) * (p < capacity), e * capacity + p, -1), t, k);
  }
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    auto rows = load<32, 256>(x, t, n);
    for (auto k : range(0, ids.cols())) store_rows(buf, rows, load<32, 1>(slot, t, k), n);
  }
  for (auto e : tiles(fill.size(), {256})) store(count, min(load<256>(fill, e), capacity), e);
}

// Grouped expert GEMM over permuted rows (the MoE expert MLP's first GEMM, as a loop over experts):
// xp [N, K] bf16 holds expert e's rows at [off[e], off[e] + cnt[e]); w [E, F, K] bf16; h[off[e] + i, j] =
// bf16(silu(sum_k xp[off[e] + i, k] w[e, j, k])) for i < cnt[e], j < F. Rows are gathered and scattered by
// index (rows past the expert's count get index -1: neither read nor written); `maxrows` bounds every
// cnt[e] (tiles past an expert's count do nothing).
PK_KERNEL void grouped_expert_gemm_silu(Tensor<bf16, 2> xp, Tensor<i32, 1> off, Tensor<i32, 1> cnt,
                                        Tensor<bf16, 3> w, Tensor<bf16, 2> h, index maxrows) {
  for (auto [e, m, n] : tiles(w.dim(0), maxrows, w.dim(1), {1, 64, 64})) {
    auto r = cast<i32>(row_index<64, 1>(m));
    auto idx = where(r < load<1, 1>(cnt, e), r + load<1, 1>(off, e), -1);
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, xp.cols(), 64))
      acc = mma_t(load_rows<64, 64>(xp, idx, k), load<64, 64>(w, e, n, k), acc);
    store_rows(h, cast<bf16>(silu(acc)), idx, n);
  }
}

// Expert-count histogram of a 2-D [T, K] choice tensor per 64-token block, with tokens per expert capped
// (the "tokens per expert" statistics of Megatron's load balancer): ids [T, K] with K <= 8 and E = 96;
// tokens_per_expert[0, e] = number of (t, k) with ids[t, k] == e, accumulated by adds (the tensor must be
// zero beforehand, zeroed by phase 1 here); frac[0, e] = tokens_per_expert[0, e] / (T K) in f32.
PK_KERNEL void tokens_per_expert_frac(Tensor<i32, 2> ids, Tensor<i32, 2> tokens_per_expert, Tensor<f32, 2> frac) {
  for (auto z : tiles(1, {1})) store(tokens_per_expert, zeros<i32, 1, 96>(), z, 0);
  for (auto t : tiles(ids.rows(), {64}))
    store_add(tokens_per_expert, reshape<1, 96>(histogram<96>(load<64, 8>(ids, t, 0))), 0, 0);
  for (auto z : tiles(1, {1}))
    store(frac, cast<f32>(load<1, 96>(tokens_per_expert, z, 0)) / float(ids.rows() * ids.cols()), z, 0);
}

// ============================================================================ MoE across ranks

// Expert-parallel dispatch with an expert-major receive layout and a source map (DeepSpeed / Tutel style),
// for any W and any El = experts per rank (3, 5, ...: an argument, not a power of two). E = W El experts,
// expert e on rank e / El as local expert e % El. On rank q, recv [El W T, H] block b = l W + s (local
// expert l, source rank s) holds in rows [b T, b T + n) the tokens rank s sent to expert q El + l (T =
// x.rows(), the same on every rank; K distinct ids per token, so n <= T). src [El W T, 1] i32 on rank q gets,
// for each filled row, the token's global index s T + t (what a push-back combine needs); rows of recv and
// src not filled keep their old contents. slot [T, K] on the home rank = the row it landed at (-1: id outside
// [0, E)). fill [E] is zeroed first. counts [El W] on rank q: counts[l W + s] = rows rank s sent to l.
PK_KERNEL void ep_dispatch_expert_major(Tensor<bf16, 2> x, Tensor<i32, 2> ids, Scratch<i32, 1> fill,
                                        Tensor<i32, 2> slot, Sym<bf16, 2> recv, Sym<i32, 2> src,
                                        Sym<i32, 1> counts, index experts) {
  for (auto e : tiles(fill.size(), {1024})) store(fill, zeros<i32, 1024>(), e);
  for (auto [t, k] : tiles(ids.rows(), ids.cols(), {256, 1})) {
    auto e = load<256, 1>(ids, t, k);
    auto place = claim(fill, e);
    auto ok = (place >= 0) * (place < x.rows());
    store(slot, where(ok, ((e % experts) * world_size() + rank()) * x.rows() + place, -1), t, k);
  }
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    auto rows = load<32, 256>(x, t, n);
    for (auto k : range(0, ids.cols())) {
      auto owner = load<32, 1>(ids, t, k) / experts;
      auto place = load<32, 1>(slot, t, k);
      for (auto p : range(0, world_size())) store_rows(recv.on(p), rows, where(owner == p, place, -1), n);
    }
  }
  for (auto t : tiles(x.rows(), {32})) {
    auto gid = cast<i32>(row_index<32, 1>(t)) + rank() * x.rows();
    for (auto k : range(0, ids.cols())) {
      auto owner = load<32, 1>(ids, t, k) / experts;
      auto place = load<32, 1>(slot, t, k);
      for (auto p : range(0, world_size())) store_rows(src.on(p), gid, where(owner == p, place, -1), 0);
    }
  }
  for (auto [p, l] : tiles(world_size(), experts, {1, 1}))
    store(counts.on(p), min(load<1>(fill, p * experts + l), x.rows()), l * world_size() + rank());
}

// Expert-parallel combine by pushes back into the home ranks (the reverse of ep_dispatch_expert_major):
// on expert rank q, y [El W T, H] bf16 holds the expert outputs in the dispatch layout, src [El W T, 1] the
// token's global index s T + t for each filled row, wrecv [El W T, 1] f32 the router weight of that
// (token, choice), counts [El W, 1] the filled rows of each block b (rows [b T, b T + counts[b]) are
// filled; T = out.rows()). out [T, H] f32 (Sym) on every rank is zeroed, then out[t, :] on rank s gets
// sum over the filled rows i with src[i] == s T + t of wrecv[i] * f32(y[i, :]) from every expert rank
// (red.global.add: the order of the adds is unspecified). Stale rows past a block's count add nothing.
PK_KERNEL void ep_combine_push(Tensor<bf16, 2> y, Tensor<i32, 2> src, Tensor<f32, 2> wrecv, Tensor<i32, 2> counts,
                               Sym<f32, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {64, 256})) store(out, zeros<f32, 64, 256>(), t, n);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {32, 256})) {
    auto r = cast<i32>(row_index<32, 1>(m));
    auto b = r / out.rows();
    auto filled = (r - b * out.rows()) < load_rows<32, 1>(counts, b, 0);
    auto g = load<32, 1>(src, m, 0);
    auto home = g / out.rows();
    auto v = cast<f32>(load<32, 256>(y, m, n)) * load<32, 1>(wrecv, m, 0);
    for (auto p : range(0, world_size()))
      store_add_rows(out.on(p), v, where((home == p) * filled, g - home * out.rows(), -1), n);
  }
}

// all-to-all-v with the split sizes computed on the device from an unsorted destination per row (a
// token-routing all-to-all without a host sync): dest [N, 1] i32 gives each row of x [N, H] its target rank
// (outside [0, W): not sent). fill [W] is zeroed; each row claims a place c within its destination (order
// unspecified); recv [W] on rank p gets recv[s] = the rows rank s sends p (exchanged by peer stores); then
// row i of x lands in p = dest[i]'s y [M, H] at row (sum_{s < r} recv_p[s]) + c, so p's y holds, in
// source-rank order, every row sent to it (rows past M dropped). place [N, 1] records c (-1: not sent).
PK_KERNEL void all_to_all_v_unsorted(Tensor<bf16, 2> x, Tensor<i32, 2> dest, Scratch<i32, 1> fill,
                                     Tensor<i32, 2> place, Sym<bf16, 2> y, Sym<i32, 1> recv) {
  for (auto p : tiles(fill.size(), {64})) store(fill, zeros<i32, 64>(), p);
  for (auto i : tiles(dest.rows(), {256})) store(place, claim(fill, load<256, 1>(dest, i, 0)), i, 0);
  for (auto p : tiles(world_size(), {1})) store(recv.on(p), load<1>(fill, p), rank());
  for (auto [i, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    auto rows = load<32, 256>(x, i, n);
    auto d = load<32, 1>(dest, i, 0);
    auto c = load<32, 1>(place, i, 0);
    for (auto p : range(0, world_size())) {
      auto base = zeros<i32, 1, 1>();
      for (auto s : range(0, rank())) base = base + load<1, 1>(recv.on(p), s);
      store_rows(y.on(p), rows, where((d == p) * (c >= 0), base + c, -1), n);
    }
  }
}

// ============================================================================ Vocabulary-parallel embedding and loss

// Vocabulary-parallel embedding with a padding id and i64 ids (HF nn.Embedding(padding_idx) under Megatron's
// VocabParallelEmbedding): rank r holds rows [r V, (r + 1) V) of the [W V, H] table as `table` [V, H];
// partial[t, :] = table[ids[t] - r V, :] when ids[t] != pad and r V <= ids[t] < (r + 1) V, else 0; then
// out = the sum of every rank's partial (all-reduce), times `scale` (sqrt(H) in Gemma), on every rank.
PK_KERNEL void vp_embedding_padding_idx(Tensor<i64, 2> ids, Tensor<bf16, 2> table, Scratch<bf16, 2> partial,
                                        Sym<bf16, 2> out, index pad, float scale) {
  for (auto [t, n] : tiles(partial.rows(), partial.cols(), {32, 256})) {
    auto id = load<32, 1>(ids, t, 0);
    auto local = where(id == pad, -1, id - rank() * table.rows());
    store(partial, cast<bf16>(cast<f32>(load_rows<32, 256>(table, local, n)) * scale), t, n);
  }
  all_reduce(Sum, partial, out);
}

// Vocabulary-parallel cross-entropy with label smoothing and ignore_index (Megatron's
// vocab_parallel_cross_entropy with label_smoothing, PyTorch's ignore_index = -100): logits [T, V] f32 are
// rank r's columns [r V, (r + 1) V) of [T, W V]; target [T, 1] i32 global ids. With M = max over all W V
// columns, S = sum exp(x - M), lse = log S + M, x_t = the target's logit, mean = (sum of all W V logits) /
// (W V): loss[t] = (1 - eps) (lse - x_t) + eps (lse - mean) for target != ignore, and 0 for target ==
// ignore. Three phases and two all-reduces (max, then the sums [T, 3]: S, x_t, sum x).
PK_KERNEL void vp_cross_entropy_smooth_ignore(Tensor<f32, 2> logits, Tensor<i32, 2> target, Sym<f32, 2> lmax,
                                              Sym<f32, 2> gmax, Sym<f32, 2> lstats, Sym<f32, 2> gstats,
                                              Tensor<f32, 2> loss, float eps, index ignore) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = zeros<f32, 16, 1>() - 1e30f;
    for (auto n : range(0, logits.cols(), 256))
      m = max(m, row_max(where(col_index<16, 256>(n) < logits.cols(), load<16, 256>(logits, t, n), -1e30f)));
    store(lmax, m, t, 0);
  }
  all_reduce(Max, lmax, gmax);
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = load<16, 1>(gmax, t, 0);
    auto want = load<16, 1>(target, t, 0) - rank() * logits.cols();
    auto s = zeros<f32, 16, 1>();
    auto xt = zeros<f32, 16, 1>();
    auto sx = zeros<f32, 16, 1>();
    for (auto n : range(0, logits.cols(), 256)) {
      auto x = load<16, 256>(logits, t, n);
      auto c = col_index<16, 256>(n);
      s = s + row_sum(where(c < logits.cols(), exp(x - m), 0.0f));
      xt = xt + row_sum(where(cast<i32>(c) == want, x, 0.0f));
      sx = sx + row_sum(x);
    }
    store(lstats, s, t, 0);
    store(lstats, xt, t, 1);
    store(lstats, sx, t, 2);
  }
  all_reduce(Sum, lstats, gstats);
  for (auto t : tiles(logits.rows(), {16})) {
    auto lse = log(load<16, 1>(gstats, t, 0)) + load<16, 1>(gmax, t, 0);
    auto mean = load<16, 1>(gstats, t, 2) / float(logits.cols() * world_size());
    auto l = (1.0f - eps) * (lse - load<16, 1>(gstats, t, 1)) + eps * (lse - mean);
    store(loss, where(load<16, 1>(target, t, 0) == ignore, 0.0f, l), t, 0);
  }
}

// Its backward on the same shard: dlogits[t, j] = g[t] ((1 - eps) (softmax_j - [j == target]) + eps
// (softmax_j - 1 / (W V))) with softmax_j = exp(x[t, j] - M) / S (M, S from gmax / gstats above), and 0 for
// the rows whose target is `ignore`; g [T, 1] is the upstream gradient. bf16 output.
PK_KERNEL void vp_cross_entropy_smooth_ignore_bwd(Tensor<f32, 2> logits, Tensor<i32, 2> target, Tensor<f32, 2> gmax,
                                                  Tensor<f32, 2> gstats, Tensor<f32, 2> g, Tensor<bf16, 2> dlogits,
                                                  float eps, index ignore) {
  for (auto [t, n] : tiles(logits.rows(), logits.cols(), {16, 256})) {
    auto p = exp(load<16, 256>(logits, t, n) - load<16, 1>(gmax, t, 0)) / load<16, 1>(gstats, t, 0);
    auto tgt = load<16, 1>(target, t, 0);
    auto hit = cast<f32>(cast<i32>(col_index<16, 256>(n)) + rank() * logits.cols() == tgt);
    auto d = (1.0f - eps) * (p - hit) + eps * (p - 1.0f / float(logits.cols() * world_size()));
    store(dlogits, cast<bf16>(where(tgt == ignore, 0.0f, d * load<16, 1>(g, t, 0))), t, n);
  }
}

// ============================================================================ fp8 quantisation

// Per-tensor e4m3 quantisation in two phases (TransformerEngine's current scaling): phase 1 stores each
// row's largest magnitude, rmax[i, 0] = max_j |x[i, j]| (C <= 4096); phase 2 computes in every tile the
// tensor's amax = max(max_i rmax[i, 0], 1e-12) by 1024-row chunks of rmax read as rows, then
// q = e4m3(x * (448 / amax)) (saturating); a third phase (one tile) stores scale_inv[0, 0] = amax / 448.
PK_KERNEL void fp8_per_tensor_two_phase(Tensor<bf16, 2> x, Tensor<f32, 2> rmax, Tensor<f8e4m3, 2> q,
                                        Tensor<f32, 2> scale_inv) {
  for (auto m : tiles(x.rows(), {8})) store(rmax, row_max(abs(cast<f32>(load<8, 4096>(x, m, 0)))), m, 0);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto amax = zeros<f32, 1, 1>() + 1e-12f;
    for (auto c : range(0, x.rows(), 1024)) amax = max(amax, row_max(transpose(load<1024, 1>(rmax, c, 0))));
    store(q, cast<f8e4m3>(cast<f32>(load<16, 256>(x, m, n)) * (448.0f / amax)), m, n);
  }
  for (auto z : tiles(1, {1})) {
    auto amax = zeros<f32, 1, 1>() + 1e-12f;
    for (auto c : range(0, x.rows(), 1024)) amax = max(amax, row_max(transpose(load<1024, 1>(rmax, c, 0))));
    store(scale_inv, amax / 448.0f, z, 0);
  }
}

// DeepSeek-V3 128 x 128 block quantisation of a weight: w [N, K] bf16; for block (i, j) (rows [128 i,
// 128 i + 128), columns [128 j, 128 j + 128), clipped at the edges) amax = max(max |w| over the block,
// 1e-12); q = e4m3(w * (448 / amax)); s[i, j] = amax / 448 (s [ceil(N / 128), ceil(K / 128)] f32). The
// block maximum is the row maxima of the block transposed into a row, then its maximum.
PK_KERNEL void fp8_block128_weight_quant(Tensor<bf16, 2> w, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(w.rows(), w.cols(), {128, 128})) {
    auto t = cast<f32>(load<128, 128>(w, m, n));
    auto amax = max(row_max(transpose(row_max(abs(t)))), 1e-12f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(s, amax / 448.0f, m / 128, n / 128);
  }
}

// Its dequantisation: y[r, c] = bf16(f32(q[r, c]) * s[r / 128, c / 128]), 32 x 128 tiles (the scale read
// once per tile as a scalar: the tile lies inside one block).
PK_KERNEL void fp8_block128_dequant(Tensor<f8e4m3, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {32, 128}))
    store(y, cast<bf16>(cast<f32>(load<32, 128>(q, m, n)) * s.at(m / 128, n / 128)), m, n);
}

// Per-token (row) e5m2 quantisation of a gradient with a per-row scale and an amax output (FP8 backward,
// rows of at most 2048): a = max_j |g[i, j]|; q[i, :] = e5m2(g[i, :] * (57344 / max(a, 1e-12)));
// sinv[i, 0] = max(a, 1e-12) / 57344; amax[i, 0] = a.
PK_KERNEL void fp8_e5m2_rowwise_grad(Tensor<bf16, 2> g, Tensor<f8e5m2, 2> q, Tensor<f32, 2> sinv, Tensor<f32, 2> amax) {
  for (auto m : tiles(g.rows(), {4})) {
    auto t = cast<f32>(load<4, 2048>(g, m, 0));
    auto a = row_max(abs(t));
    auto c = max(a, 1e-12f);
    store(q, cast<f8e5m2>(t * (57344.0f / c)), m, 0);
    store(sinv, c / 57344.0f, m, 0);
    store(amax, a, m, 0);
  }
}

// 1 x 128 activation quantisation with ragged rows (DeepSeek-V3's act_quant), written per row tile with
// a range loop over the column blocks: x [T, C] bf16, C any; block j of row i: a = max(max_{c in block}
// |x[i, c]|, 1e-12); q[i, c] = e4m3(x[i, c] * 448 / a); s[i, j] = a / 448 (s [T, ceil(C / 128)]).
PK_KERNEL void fp8_act_quant_1x128_loop(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {32})) {
    for (auto n : range(0, x.cols(), 128)) {
      auto t = cast<f32>(load<32, 128>(x, m, n));
      auto a = max(row_max(abs(t)), 1e-12f);
      store(q, cast<f8e4m3>(t * (448.0f / a)), m, n);
      store(s, a / 448.0f, m, n / 128);
    }
  }
}

// ============================================================================ fp8 GEMMs

// fp8 GEMM with per-tensor scales (torch._scaled_mm, TensorRT-LLM fp8 linear): a [M, K] e4m3, b [N, K] e4m3;
// c[i, j] = bf16((sum_k f32(a[i, k]) f32(b[j, k])) * sa[0] * sb[0]), K a multiple of 16.
PK_KERNEL void fp8_gemm_per_tensor(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 1> sa, Tensor<f32, 1> sb,
                                   Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * (sa.at(0) * sb.at(0))), m, n);
  }
}

// fp8 GEMM with row-wise scales (per-token activation scales, per-channel weight scales) and a bias:
// c[i, j] = bf16(acc[i, j] * sa[i, 0] * sb[0, j] + bias[0, j]), acc = e4m3 a [M, K] times e4m3 b [N, K]
// transposed, fp32 accumulation.
PK_KERNEL void fp8_gemm_rowwise_bias(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 2> sa, Tensor<f32, 2> sb,
                                     Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 128)) acc = mma_t(load<128, 128>(a, m, k), load<128, 128>(b, n, k), acc);
    store(c, cast<bf16>(acc * load<128, 1>(sa, m, 0) * load<1, 128>(sb, 0, n) + cast<f32>(load<1, 128>(bias, 0, n))), m, n);
  }
}

// DeepSeek-V3 block-scaled fp8 GEMM: a [M, K] e4m3 with 1 x 128 scales sa [M, ceil(K / 128)], b [N, K]
// e4m3 with 128 x 128 scales sb [ceil(N / 128), ceil(K / 128)]; c[i, j] = bf16(sum over 128-blocks kb of
// (sum_{k in kb} a[i, k] b[j, k]) * sa[i, kb] * sb[j / 128, kb]). 64 x 128 output tiles (a tile's
// columns lie in one 128-row block of b).
PK_KERNEL void fp8_gemm_block_scaled(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 2> sa, Tensor<f32, 2> sb,
                                     Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 128)) {
      auto part = mma_t(load<64, 128>(a, m, k), load<128, 128>(b, n, k), zeros<f32, 64, 128>());
      acc = acc + part * load<64, 1>(sa, m, k / 128) * sb.at(n / 128, k / 128);
    }
    store(c, cast<bf16>(acc), m, n);
  }
}

// fp8 weight-only GEMM (W8A16 with e4m3 weights): x [M, K] bf16, w [N, K] e4m3 with a per-output-channel
// scale ws [N, 1]: y[i, j] = bf16(ws[j] * sum_k x[i, k] bf16(w[j, k])) (each weight widened to bf16 exactly:
// every e4m3 value is a bf16 value).
PK_KERNEL void w8a16_fp8_weight_gemm(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<f32, 2> ws, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), cast<bf16>(load<64, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc * transpose(load<64, 1>(ws, n, 0))), m, n);
  }
}

// ============================================================================ fp8 communication

// fp8 all-gather along the hidden dimension with per-row e5m2 scales (a gradient all-gather, TP column
// shards): x [R, C] bf16 per rank, C <= 1024; q = e5m2(x * 57344 / a) with a = max(max_j |x[i, j]|, 1e-12)
// and s[i, 0] = a / 57344; all_gather(q, gq, 1) ([R, W C]: rank p's columns at p C) and all_gather(s, gs, 1)
// ([R, W]: rank p's scale in column p); y[i, p, j] = bf16(f32(gq[i, p C + j]) * gs[i, p]) (y [R, W, C]: the
// same memory as [R, W C]; stored 3-D so that a tile clips at its own rank's C columns).
PK_KERNEL void fp8_e5m2_allgather_cols(Tensor<bf16, 2> x, Scratch<f8e5m2, 2> q, Scratch<f32, 2> s,
                                       Scratch<f8e5m2, 2> gq, Scratch<f32, 2> gs, Tensor<bf16, 3> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = cast<f32>(load<16, 1024>(x, m, 0));
    auto a = max(row_max(abs(t)), 1e-12f);
    store(q, cast<f8e5m2>(t * (57344.0f / a)), m, 0);
    store(s, a / 57344.0f, m, 0);
  }
  all_gather(q, gq, 1);
  all_gather(s, gs, 1);
  for (auto [m, p] : tiles(y.dim(0), world_size(), {16, 1}))
    store(y, reshape<16, 1, 1024>(cast<bf16>(cast<f32>(load<16, 1024>(gq, m, p * x.cols())) * load<16, 1>(gs, m, p))), m, p, 0);
}

// MoE token exchange in fp8 by the built-in all-to-all (DeepEP-style low-precision dispatch, fixed
// capacity): send [W C, H] bf16 holds C rows for each destination rank (block p for rank p); each row is
// quantised to e4m3 with one scale per row (H <= 2048): q = e4m3(v * 448 / a), s = a / 448,
// a = max(max |v|, 1e-12); all_to_all moves block p of q and s to rank p (block r there); recv[i, :] =
// bf16(f32(gq[i, :]) * gs[i, 0]).
PK_KERNEL void moe_a2a_fp8_rowscale(Tensor<bf16, 2> send, Sym<f8e4m3, 2> q, Sym<f32, 2> s, Sym<f8e4m3, 2> gq,
                                    Sym<f32, 2> gs, Tensor<bf16, 2> recv) {
  for (auto m : tiles(send.rows(), {8})) {
    auto t = cast<f32>(load<8, 2048>(send, m, 0));
    auto a = max(row_max(abs(t)), 1e-12f);
    store(q, cast<f8e4m3>(t * (448.0f / a)), m, 0);
    store(s, a / 448.0f, m, 0);
  }
  all_to_all(q, gq);
  all_to_all(s, gs);
  for (auto [m, n] : tiles(recv.rows(), recv.cols(), {32, 256}))
    store(recv, cast<bf16>(cast<f32>(load<32, 256>(gq, m, n)) * load<32, 1>(gs, m, 0)), m, n);
}

// ============================================================================ Integer tricks (i32 / i64)

// Symmetric int8 quantisation held in i32 (SmoothQuant / LLM.int8() per-token): a = max(max_j |x[i, j]|,
// 1e-8) (rows <= 4096 wide); q[i, j] = clamp(round_half_away(x[i, j] * 127 / a), -127, 127) as i32 (round
// half away from zero: trunc(v + 0.5 sign(v))); s[i, 0] = a / 127.
PK_KERNEL void int8_rowwise_quant_i32(Tensor<f32, 2> x, Tensor<i32, 2> q, Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = load<4, 4096>(x, m, 0);
    auto a = max(row_max(abs(t)), 1e-8f);
    auto v = t * (127.0f / a);
    auto r = cast<i32>(where(v >= 0.0f, v + 0.5f, v - 0.5f));
    store(q, min(max(r, -127), 127), m, 0);
    store(s, a / 127.0f, m, 0);
  }
}

// W8A16 with int8 weights packed four to an i32 along K (AWQ / GPTQ-style packing, unsigned bytes with a
// zero point of 128): wp [K / 4, N] i32 holds w[4 i + b, j] - (-128) in byte b of wp[i, j] (b = 0 lowest;
// byte 3 may set the sign bit). Each weight is unpacked as ((u / 256^b) mod 256) - 128 with u = wp[i, j]
// taken as unsigned (via i64: u = wp + 2^32 when negative); y[i, j] = bf16(ws[0, j] * sum_k x[i, k]
// w[k, j]) for x [M, K] bf16, ws [1, N] f32. The packed rows are gathered with load_rows by k / 4.
PK_KERNEL void w8a16_int8_packed_gemm(Tensor<bf16, 2> x, Tensor<i32, 2> wp, Tensor<f32, 2> ws, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), wp.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 64)) {
      auto r = cast<i32>(row_index<64, 1>(k));
      auto u = cast<i64>(load_rows<64, 64>(wp, r / 4, n));
      u = where(u < 0, u + 4294967296L, u);
      auto b = r % 4;
      auto div = cast<i64>(where(b == 0, 1, where(b == 1, 256, where(b == 2, 65536, 16777216))));
      auto w = cast<f32>((u / div) % 256 - 128);
      acc = mma(load<64, 64>(x, m, k), cast<bf16>(w), acc);
    }
    store(y, cast<bf16>(acc * load<1, 64>(ws, 0, n)), m, n);
  }
}

// ============================================================================ Transposes, argmax, sampling

// Routing map transposed (token-major [T, E] i32 choice mask to expert-major [E, T], Megatron's
// routing_map.T): y[e, t] = x[t, e], 32 x 48 tiles (neither a multiple of the other), plus a transposed
// i64 copy of the same map widened: z[e, t] = i64(x[t, e]) * 1000000007.
PK_KERNEL void routing_map_transpose(Tensor<i32, 2> x, Tensor<i32, 2> y, Tensor<i64, 2> z) {
  for (auto [t, e] : tiles(x.rows(), x.cols(), {32, 48})) {
    auto v = transpose(load<32, 48>(x, t, e));
    store(y, v, e, t);
    store(z, cast<i64>(v) * 1000000007L, e, t);
  }
}

// Greedy argmax over a wide vocabulary (V up to any size, 2048-column chunks): ids[t, 0] (i64) = the
// smallest column j with logits[t, j] maximal over j < V (NaN never chosen), best[t, 0] = that maximum.
// Each chunk's top-1 (value and in-chunk column) is merged into the running best with a strict > so the
// earlier chunk wins ties.
PK_KERNEL void argmax_wide_vocab(Tensor<bf16, 2> logits, Tensor<i64, 2> ids, Tensor<f32, 2> best) {
  for (auto t : tiles(logits.rows(), {8})) {
    auto bv = zeros<f32, 8, 1>() - 3.0e38f;
    auto bi = zeros<i64, 8, 1>();
    for (auto n : range(0, logits.cols(), 2048)) {
      auto x = cast<f32>(load<8, 2048>(logits, t, n));
      auto v = row_topk<1>(x);
      auto j = cast<i64>(row_topk_index<1>(x)) + n;
      auto better = v > bv;
      bi = where(better, j, bi);
      bv = where(better, v, bv);
    }
    store(ids, bi, t, 0);
    store(best, bv, t, 0);
  }
}

// Top-p (nucleus) sampling over the top 64 candidates (vLLM's top-k-top-p sampler with k = 64, V <= 2048):
// v = the 64 largest logits / temp (largest first), c their columns; p = softmax(v); keep j iff
// (cumsum(p) - p)[j] < top_p (the smallest prefix whose mass reaches top_p; j = 0 always kept);
// q = where(keep, p, 0) / sum(kept p); with u = uniform(seed, t, 0) in [0, 1), the chosen j* = the number of
// j with cumsum(q)[j] <= u (clamped to the kept count - 1); tok[t, 0] = c[j*].
PK_KERNEL void top_p_sample_64(Tensor<f32, 2> logits, Tensor<i32, 2> tok, float temp, float top_p, index seed) {
  for (auto t : tiles(logits.rows(), {4})) {
    auto x = load<4, 2048>(logits, t, 0);
    auto v = row_topk<64>(where(col_index<4, 2048>(0) < logits.cols(), x, -3.0e38f)) / temp;
    auto c = row_topk_index<64>(where(col_index<4, 2048>(0) < logits.cols(), x, -3.0e38f));
    auto e = exp(v - row_max(v));
    auto p = e / row_sum(e);
    auto keep = (cumsum(p) - p) < top_p;
    auto q = where(keep, p, 0.0f);
    q = q / row_sum(q);
    auto u = uniform<4, 1>(seed, t, 0);
    auto kept = row_sum(cast<f32>(keep));
    auto j = min(row_sum(cast<f32>(cumsum(q) <= u)), kept - 1.0f);
    auto hit = cast<i32>(col_index<4, 64>(0)) == cast<i32>(j);
    store(tok, cast<i32>(row_sum(cast<f32>(where(hit, c, 0)))), t, 0);
  }
}

// Min-p filtering (vLLM min_p): p = softmax(logits[t, :]) (V <= 1024); out[t, j] = logits[t, j] where
// p[t, j] >= min_p * max_j p[t, j], else -inf (-3e38 here); columns past V are not written.
PK_KERNEL void min_p_filter(Tensor<f32, 2> logits, Tensor<f32, 2> out, float min_p) {
  for (auto t : tiles(logits.rows(), {8})) {
    auto x = where(col_index<8, 1024>(0) < logits.cols(), load<8, 1024>(logits, t, 0), -3.0e38f);
    auto e = exp(x - row_max(x));
    auto p = e / row_sum(e);
    store(out, where(p >= min_p * row_max(p), x, -3.0e38f), t, 0);
  }
}

// Repetition penalty (CTRL / HF RepetitionPenaltyLogitsProcessor) over prior tokens: prev [T, L] i32 (L <= 64,
// -1 = none); for every column j of logits [T, V] that appears in prev[t, :], out[t, j] = x / penalty if
// x > 0 else x * penalty; other columns out = x. Columns are compared with each prior token in turn.
PK_KERNEL void repetition_penalty(Tensor<f32, 2> logits, Tensor<i32, 2> prev, Tensor<f32, 2> out, float penalty) {
  for (auto [t, n] : tiles(logits.rows(), logits.cols(), {16, 256})) {
    auto x = load<16, 256>(logits, t, n);
    auto cols = cast<i32>(col_index<16, 256>(n));
    auto seen = zeros<i32, 16, 256>();
    for (auto l : range(0, prev.cols())) seen = max(seen, cast<i32>(cols == load<16, 1>(prev, t, l)));
    store(out, where(seen, where(x > 0.0f, x / penalty, x * penalty), x), t, n);
  }
}

// ============================================================================ Multi-phase and index utilities

// Position ids from an attention mask (HF: position_ids = cumsum(mask) - 1, masked_fill(mask == 0, 1)):
// mask [B, S] i64 of 0 / 1 with S <= 4096; pos[b, s] = (sum_{s' <= s} mask[b, s']) - 1 where mask[b, s] == 1,
// else 1.
PK_KERNEL void position_ids_from_mask(Tensor<i64, 2> mask, Tensor<i64, 2> pos) {
  for (auto b : tiles(mask.rows(), {1})) {
    auto m = load<1, 4096>(mask, b, 0);
    store(pos, where(m == 1, cumsum(m) - 1, 1), b, 0);
  }
}

// cu_seqlens for varlen attention: lens [B] i32 with B <= 4096; cu [B + 1]: cu[0] = 0, cu[i + 1] =
// sum_{j <= i} lens[j]; max_len[0] = max_i lens[i] (one tile: the whole batch).
PK_KERNEL void cu_seqlens_and_max(Tensor<i32, 1> lens, Tensor<i32, 1> cu, Tensor<i32, 1> max_len) {
  for (auto z : tiles(1, {1})) {
    auto l = load<4096>(lens, z);
    store(cu, zeros<i32, 1>(), z);
    store(cu, cumsum(l), z + 1);
    store(max_len, cast<i32>(reshape<1>(row_max(cast<f32>(reshape<1, 4096>(l))))), z);
  }
}

// Switch-Transformer load-balancing loss with top-1 routing (E = 64, Fedus et al.): p = softmax(logits[t, :]);
// f_e = (number of t whose argmax p is e) / T; P_e = (sum_t p[t, e]) / T; aux[0, 0] = E sum_e f_e P_e.
// Phase 1 zeroes psum [1, 64] f32 and cnt [1, 64] i32; phase 2 adds each 32-token tile's column sums of p
// (padding rows masked) and its histogram of the top-1 ids; phase 3 computes aux from them.
PK_KERNEL void switch_aux_loss(Tensor<f32, 2> logits, Tensor<f32, 2> psum, Tensor<i32, 2> cnt, Tensor<f32, 2> aux) {
  for (auto z : tiles(1, {1})) {
    store(psum, zeros<f32, 1, 64>(), z, 0);
    store(cnt, zeros<i32, 1, 64>(), z, 0);
  }
  for (auto t : tiles(logits.rows(), {32})) {
    auto x = load<32, 64>(logits, t, 0);
    auto e = exp(x - row_max(x));
    auto p = where(row_index<32, 64>(t) < logits.rows(), e / row_sum(e), 0.0f);
    store_add(psum, transpose(row_sum(transpose(p))), 0, 0);
    store_add(cnt, reshape<1, 64>(histogram<64>(row_topk_index<1>(p))), 0, 0);
  }
  for (auto z : tiles(1, {1})) {
    float T = logits.rows();
    auto fp = cast<f32>(load<1, 64>(cnt, z, 0)) * load<1, 64>(psum, z, 0);
    store(aux, row_sum(fp) * (64.0f / (T * T)), z, 0);
  }
}

// Router z-loss (ST-MoE): z[t, 0] = logsumexp_e(logits[t, e]) (E <= 256); zl[0, 0] = (1 / T) sum_t z[t, 0]^2.
// Phase 1 stores z; phase 2 (one tile) sums z^2 over 1024-row chunks read as rows.
PK_KERNEL void router_z_loss(Tensor<f32, 2> logits, Tensor<f32, 2> z, Tensor<f32, 2> zl) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto x = where(col_index<16, 256>(0) < logits.cols(), load<16, 256>(logits, t, 0), -1e30f);
    auto m = row_max(x);
    store(z, m + log(row_sum(exp(x - m))), t, 0);
  }
  for (auto o : tiles(1, {1})) {
    auto acc = zeros<f32, 1, 1>();
    for (auto c : range(0, logits.rows(), 1024)) {
      auto v = transpose(load<1024, 1>(z, c, 0));
      acc = acc + row_sum(v * v);
    }
    store(zl, acc / float(logits.rows()), o, 0);
  }
}

// Aux-loss-free load balancing across expert-parallel ranks (DeepSeek-V3's bias update): ids [N] i32 are this
// rank's chosen experts (E <= 256); local [1, 256] counts them (zeroed, then histogram adds into this rank's
// copy, written local.on(rank()): store_add has no Sym overload, finding 2); all_reduce(Sum)
// into total [1, 256] on every rank; then bias[0, e] += rate * sign(mean - total[0, e]) in place for e < E
// (sign 0 at equality), mean = (sum over e < E of total[0, e]) / E.
PK_KERNEL void ep_bias_update(Tensor<i32, 1> ids, Sym<i32, 2> local, Sym<i32, 2> total, Tensor<f32, 2> bias,
                              float rate) {
  for (auto z : tiles(1, {1})) store(local, zeros<i32, 1, 256>(), z, 0);
  for (auto i : tiles(ids.size(), {4096})) store_add(local.on(rank()), reshape<1, 256>(histogram<256>(load<4096>(ids, i))), 0, 0);
  all_reduce(Sum, local, total);
  for (auto z : tiles(1, {1})) {
    auto c = cast<f32>(load<1, 256>(total, z, 0));
    auto mean = row_sum(c) / float(bias.cols());
    auto d = where(c < mean, 1.0f, where(c > mean, -1.0f, 0.0f));
    store(bias, load<1, 256>(bias, z, 0) + d * rate, z, 0);
  }
}

// Expert-parallel counts exchange then receive offsets (the metadata step before a variable all-to-all):
// send_counts [W El] i32 per rank (block p = counts for rank p's El experts); all_to_all into recv_counts
// [W El] (block s = what rank s sends this rank's experts); then recv_off[s El + l] = exclusive running sum
// of recv_counts in (source, expert) order, and recv_total[0] = their sum (W El <= 4096).
PK_KERNEL void ep_counts_exchange_offsets(Sym<i32, 1> send_counts, Sym<i32, 1> recv_counts, Tensor<i32, 1> recv_off,
                                          Tensor<i32, 1> recv_total) {
  all_to_all(send_counts, recv_counts);
  for (auto z : tiles(1, {1})) {
    auto c = load<4096>(recv_counts, z);
    auto s = cumsum(c);
    store(recv_off, s - c, z);
    store(recv_total, cast<i32>(reshape<1>(row_sum(cast<f32>(reshape<1, 4096>(c))))), z);
  }
}

// MoE combine at any experts-per-rank count (3, 5, ...) with the top-k weights renormalised in the kernel and a
// residual (Qwen-MoE norm_topk_prob): y [W El T, H] bf16 Sym in moe_dispatch's layout, ids / slot [T, K] i32,
// wts [T, K] f32; w'[t, k] = wts[t, k] / sum_k wts[t, k] (over all K, dropped choices included); out[t, :] =
// bf16(f32(res[t, :]) + sum over k with slot >= 0 of w'[t, k] f32(y on rank ids[t, k] / El)[slot[t, k], :]).
PK_KERNEL void moe_combine_renorm_residual(Sym<bf16, 2> y, Tensor<i32, 2> ids, Tensor<f32, 2> wts, Tensor<i32, 2> slot,
                                           Tensor<bf16, 2> res, Tensor<bf16, 2> out, index experts) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 256})) {
    auto acc = zeros<f32, 32, 256>();
    auto wsum = zeros<f32, 32, 1>();
    for (auto k : range(0, ids.cols())) wsum = wsum + load<32, 1>(wts, t, k);
    for (auto k : range(0, ids.cols())) {
      auto owner = load<32, 1>(ids, t, k) / experts;
      auto place = load<32, 1>(slot, t, k);
      auto w = load<32, 1>(wts, t, k) / wsum;
      for (auto p : range(0, world_size()))
        acc = acc + cast<f32>(load_rows<32, 256>(y.on(p), where(owner == p, place, -1), n)) * w;
    }
    store(out, cast<bf16>(acc + cast<f32>(load<32, 256>(res, t, n))), t, n);
  }
}

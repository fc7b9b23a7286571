// The twentieth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only, as whole-layer pieces
// and serving kernels of ParallelKernelBench-style problems (Megatron-LM, DeepSpeed, vLLM, TensorRT-LLM):
// tensor-parallel MLP halves (all-gather + GEMM + SwiGLU, GEMM + reduce-scatter / all-reduce + residual),
// sequence-parallel norms feeding an all-gather, vocabulary-parallel embedding and cross-entropy forward
// and backward, KV-cache appends by slot and through a paged block table, paged decode attention, rotary
// embedding with positions gathered from cos / sin tables, speculative-decoding acceptance, fp8
// quantisation with per-row / per-block / per-tensor scales, MoE combine with router weights, router
// statistics, top-k sampling with temperature, multi-phase kernels (a reduction and then a normalisation),
// in-place optimizer steps and gradient clipping by a global norm across ranks, ring shifts at W = 3, and
// odd shapes (rows and columns that are not multiples of the tile, one-row tensors). Each kernel compiles
// alone (pkc FILE --kernel NAME) and the file compiles as a whole. Each kernel's comment gives its exact
// semantics (W = world_size(), r = rank()). Part (b) is user_specs20_bad.pk.cpp; findings in
// test/specs/specs20_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ Tensor-parallel MLP halves

// Sequence-parallel input into a column-parallel linear with a SiLU epilogue: a [R, K] on every rank is
// all-gathered into a_full [W R, K] (rank q's rows at q R); h[i, j] = bf16(silu(sum_k a_full[i, k] w[j, k]))
// for h [W R, F], w [F, K].
PK_KERNEL void ag_linear_silu(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> w, Tensor<bf16, 2> h) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a_full.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a_full.cols(), 64)) acc = mma_t(load<128, 64>(a_full, m, k), load<128, 64>(w, n, k), acc);
    store(h, cast<bf16>(silu(acc)), m, n);
  }
}

// The column-parallel half of a SwiGLU MLP with separate gate and up weights (general path, two
// accumulators): x [R, K] per rank all-gathered into xf [W R, K]; h[i, j] = bf16(silu(g) * u) with
// g = sum_k xf[i, k] wg[j, k], u = sum_k xf[i, k] wu[j, k] (fp32 sums), h [W R, F].
PK_KERNEL void ag_swiglu_dual_gemm(Sym<bf16, 2> x, Sym<bf16, 2> xf, Tensor<bf16, 2> wg, Tensor<bf16, 2> wu,
                                   Tensor<bf16, 2> h) {
  all_gather(x, xf);
  for (auto [m, n] : tiles(xf.rows(), wg.rows(), {64, 64})) {
    auto g = zeros<f32, 64, 64>();
    auto u = zeros<f32, 64, 64>();
    for (auto k : range(0, xf.cols(), 64)) {
      auto xt = load<64, 64>(xf, m, k);
      g = mma_t(xt, load<64, 64>(wg, n, k), g);
      u = mma_t(xt, load<64, 64>(wu, n, k), u);
    }
    store(h, cast<bf16>(silu(g) * u), m, n);
  }
}

// SwiGLU of a packed gate|up projection: gu [T, 2F] (gate in columns [0, F), up in [F, 2F)),
// h[t, j] = bf16(silu(gu[t, j]) * gu[t, F + j]) for h [T, F]; F need not be a multiple of 128.
PK_KERNEL void swiglu_packed_gate_up(Tensor<bf16, 2> gu, Tensor<bf16, 2> h) {
  index f = h.cols();
  for (auto [t, n] : tiles(h.rows(), h.cols(), {16, 128})) {
    auto g = cast<f32>(load<16, 128>(gu, t, n));
    auto u = cast<f32>(load<16, 128>(gu, t, n + f));
    store(h, cast<bf16>(silu(g) * u), t, n);
  }
}

// The SwiGLU epilogue on the GEMM template: h[i, j] = bf16(silu(sum_k x[i, k] wg[j, k]) * up[i, j])
// with up [T, F] computed by an earlier GEMM.
PK_KERNEL void gemm_silu_times_up(Tensor<bf16, 2> x, Tensor<bf16, 2> wg, Tensor<bf16, 2> up, Tensor<bf16, 2> h) {
  for (auto [m, n] : tiles(x.rows(), wg.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(wg, n, k), acc);
    store(h, cast<bf16>(silu(acc) * cast<f32>(load<128, 256>(up, m, n))), m, n);
  }
}

// The row-parallel half (down projection) as the fused GEMM + reduce-scatter: every rank holds
// h [M, F/W] and w [H, F/W]; c [M / W, H] on rank r = rows [r M / W, (r + 1) M / W) of the sum over ranks of
// h wᵀ (bf16 adds). The shipped gemm_rs form.
PK_KERNEL void down_proj_gemm_rs(Tensor<bf16, 2> h, Tensor<bf16, 2> w, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256})) store(c, zeros<bf16, 64, 256>(), m, n);
  index rows = h.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, w.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, h.cols(), 64))
      acc = mma_t(load_smem<128, 64>(h, o * rows + m, k), load_smem<256, 64>(w, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}

// Row-parallel linear, reduce-scatter and sequence-parallel residual (Megatron's RowParallelLinear with
// sequence parallelism): part = h wᵀ [M, H] in f32 (h [M, F/W], w [H, F/W]); s = reduce_scatter(Sum, part)
// [M / W, H] (rank r's rows r M / W ..); y[i, j] = bf16(s[i, j] + bias[j] + res[i, j]) for y, res [M / W, H].
PK_KERNEL void row_parallel_rs_bias_residual(Tensor<bf16, 2> h, Tensor<bf16, 2> w, Scratch<f32, 2> part,
                                             Sym<f32, 2> s, Tensor<bf16, 1> bias, Tensor<bf16, 2> res,
                                             Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(h.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, h.cols(), 64)) acc = mma_t(load<128, 64>(h, m, k), load<128, 64>(w, n, k), acc);
    store(part, acc, m, n);
  }
  reduce_scatter(Sum, part, s);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 256}))
    store(y, cast<bf16>(load<16, 256>(s, m, n) + cast<f32>(load<1, 256>(bias, n)) + cast<f32>(load<16, 256>(res, m, n))),
          m, n);
}

// Row-parallel linear with an in-place all-reduce, then bias and residual added into the residual stream
// in place: p = h wᵀ [T, H] (bf16 out of the GEMM); p = all_reduce(Sum, p) in place;
// res[i, j] = bf16(res[i, j] + p[i, j] + bias[0, j]).
PK_KERNEL void row_parallel_ar_inplace_residual(Tensor<bf16, 2> h, Tensor<bf16, 2> w, Sym<bf16, 2> p,
                                                Tensor<bf16, 2> bias, Tensor<bf16, 2> res) {
  for (auto [m, n] : tiles(h.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, h.cols(), 64)) acc = mma_t(load<128, 64>(h, m, k), load<256, 64>(w, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, p);
  for (auto [m, n] : tiles(res.rows(), res.cols(), {8, 512}))
    store(res,
          cast<bf16>(cast<f32>(load<8, 512>(res, m, n)) + cast<f32>(load<8, 512>(p, m, n)) +
                     cast<f32>(load<1, 512>(bias, 0, n))),
          m, n);
}

// ============================================================================ Sequence-parallel norms

// Sequence-parallel RMSNorm feeding an all-gather: x [R, H] are this rank's rows (any R, any H);
// xn[r R + i, j] = bf16(x[i, j] * rsqrt(mean_j x[i, :]^2 + eps) * w[j]) written into rank r's chunk of the
// symmetric xn [W R, H] by row scatter (only the R real rows), then all_gather(xn, xn) in place, so every
// rank ends with all W R normalised rows. Rows wider than one tile: a sum-of-squares pass, then a scale pass.
PK_KERNEL void sp_rmsnorm_ag_inplace(Tensor<bf16, 2> x, Tensor<bf16, 1> w, Sym<bf16, 2> xn, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto ss = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 512)) {
      auto t = cast<f32>(load<8, 512>(x, m, n));
      ss = ss + row_sum(t * t);
    }
    auto r = rsqrt(ss / float(x.cols()) + eps);
    auto rows = cast<i32>(row_index<8, 1>(m)) + rank() * x.rows();
    for (auto n : range(0, x.cols(), 512)) {
      auto t = cast<f32>(load<8, 512>(x, m, n));
      store_rows(xn, cast<bf16>(t * r * cast<f32>(load<1, 512>(w, n))), rows, n);
    }
  }
  all_gather(xn, xn);
}

// Sequence-parallel LayerNorm then an out-of-place all-gather: x [R, H] (H <= 2048), y_loc [R, H] symmetric,
// y [W R, H] local: y_loc[i, j] = (x[i, j] - mu_i) * rsqrt(var_i + eps) * g[j] + b[j] with mu and var over
// the H real columns (biased variance), in f32; y = all_gather(y_loc).
PK_KERNEL void sp_layernorm_ag(Tensor<f32, 2> x, Tensor<f32, 2> g, Tensor<f32, 2> b, Sym<f32, 2> y_loc,
                               Tensor<f32, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = load<4, 2048>(x, m, 0);
    auto mu = row_sum(t) / float(x.cols());
    auto d = where(col_index<4, 2048>(0) < x.cols(), t - mu, 0.0f);
    auto var = row_sum(d * d) / float(x.cols());
    store(y_loc, d * rsqrt(var + eps) * load<1, 2048>(g, 0, 0) + load<1, 2048>(b, 0, 0), m, 0);
  }
  all_gather(y_loc, y);
}

// vLLM's fused_add_rms_norm, in place on both tensors: res[i, :] = bf16(x[i, :] + res[i, :]), then
// x[i, j] = bf16(res'[i, j] * rsqrt(mean_j res'[i, :]^2 + eps) * w[j]) where res' is the rounded bf16 sum;
// H <= 4096, any T.
PK_KERNEL void fused_add_rmsnorm_inplace(Tensor<bf16, 2> x, Tensor<bf16, 2> res, Tensor<bf16, 1> w, float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto s = cast<bf16>(cast<f32>(load<4, 4096>(x, m, 0)) + cast<f32>(load<4, 4096>(res, m, 0)));
    store(res, s, m, 0);
    auto t = cast<f32>(s);
    store(x, cast<bf16>(t * rsqrt(row_sum(t * t) / float(x.cols()) + eps) * cast<f32>(load<1, 4096>(w, 0))), m, 0);
  }
}

// RMSNorm of a one-row f16 tensor (a single decode token): x [1, C] (C <= 4096),
// y[0, j] = f16(x[0, j] * rsqrt(sum_j x[0, j]^2 / C + eps) * w[0, j]); tiles of 8 rows over a 1-row tensor.
PK_KERNEL void one_row_rmsnorm_f16(Tensor<f16, 2> x, Tensor<f16, 2> w, Tensor<f16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 4096>(x, m, 0));
    store(y, cast<f16>(t * rsqrt(row_sum(t * t) * (1.0f / float(x.cols())) + eps) * cast<f32>(load<1, 4096>(w, 0, 0))),
          m, 0);
  }
}

// ============================================================================ Vocabulary-parallel embedding and cross-entropy

// Vocabulary-parallel embedding with i64 ids and a scale (Gemma's sqrt(H)): rank r holds rows [r V, (r+1) V)
// of the table as table [V, H]; part[t, :] = f32(table[ids[t] - r V, :]) * scale (zeros for ids outside
// the shard); out = all_reduce(Sum, part), f32 [T, H].
PK_KERNEL void vp_embedding_i64_scaled(Tensor<i64, 1> ids, Tensor<bf16, 2> table, Scratch<f32, 2> part,
                                       Sym<f32, 2> out, float scale) {
  for (auto [t, n] : tiles(part.rows(), part.cols(), {16, 256}))
    store(part, cast<f32>(load_rows<16, 256>(table, load<16>(ids, t) - rank() * table.rows(), n)) * scale, t, n);
  all_reduce(Sum, part, out);
}

// Vocabulary-parallel embedding backward: dtable [V, H] f32 (this rank's shard, rows [r V, (r+1) V));
// dtable[ids[t] - r V, :] += dy[t, :] for every token whose id lies in the shard (others dropped);
// duplicates all arrive.
PK_KERNEL void vp_embedding_bwd(Tensor<i32, 1> ids, Tensor<bf16, 2> dy, Tensor<f32, 2> dtable) {
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {16, 256}))
    store_add_rows(dtable, cast<f32>(load<16, 256>(dy, t, n)), load<16>(ids, t) - rank() * dtable.rows(), n);
}

// Vocabulary-parallel cross-entropy forward on bf16 logits with i64 targets, saving the statistics the
// backward needs: logits [T, V] (rank r's columns [r V, (r+1) V) of the full [T, W V]); mx[t] = max over all
// W V logits (all-reduced); sums[t, 0] = sum over all columns of exp(x - mx[t]), sums[t, 1] = the target's
// logit; loss[t] = log(sums[t, 0]) + mx[t] - sums[t, 1]. mx, sums are symmetric [T, 1] / [T, 2]; the
// partial ones are workspace.
PK_KERNEL void vp_cross_entropy_fwd(Tensor<bf16, 2> logits, Tensor<i64, 2> target, Sym<f32, 2> pmax,
                                    Sym<f32, 2> mx, Sym<f32, 2> psums, Sym<f32, 2> sums, Tensor<f32, 1> loss) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = zeros<f32, 16, 1>() - 1e30f;
    for (auto n : range(0, logits.cols(), 256))
      m = max(m, row_max(where(col_index<16, 256>(n) < logits.cols(), cast<f32>(load<16, 256>(logits, t, n)), -1e30f)));
    store(pmax, m, t, 0);
  }
  all_reduce(Max, pmax, mx);
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = load<16, 1>(mx, t, 0);
    auto want = load<16, 1>(target, t, 0) - rank() * logits.cols();
    auto s = zeros<f32, 16, 1>();
    auto picked = zeros<f32, 16, 1>();
    for (auto n : range(0, logits.cols(), 256)) {
      auto x = cast<f32>(load<16, 256>(logits, t, n));
      auto col = cast<i64>(col_index<16, 256>(n));
      s = s + row_sum(where(col < logits.cols(), exp(x - m), 0.0f));
      picked = picked + row_sum(where(col == want, x, 0.0f));
    }
    store(psums, s, t, 0);
    store(psums, picked, t, 1);
  }
  all_reduce(Sum, psums, sums);
  for (auto t : tiles(logits.rows(), {16}))
    store(loss, log(load<16, 1>(sums, t, 0)) + load<16, 1>(mx, t, 0) - load<16, 1>(sums, t, 1), t);
}

// Vocabulary-parallel cross-entropy backward (local: the statistics come from the forward):
// dlogits[t, v] = bf16((exp(x[t, v] - mx[t]) / sums[t, 0] - (v + r V == target[t] ? 1 : 0)) * dloss[t])
// for this rank's shard x = logits [T, V].
PK_KERNEL void vp_cross_entropy_bwd(Tensor<bf16, 2> logits, Tensor<i64, 2> target, Tensor<f32, 2> mx,
                                    Tensor<f32, 2> sums, Tensor<f32, 1> dloss, Tensor<bf16, 2> dlogits) {
  for (auto [t, n] : tiles(logits.rows(), logits.cols(), {16, 256})) {
    auto x = cast<f32>(load<16, 256>(logits, t, n));
    auto p = exp(x - load<16, 1>(mx, t, 0)) / load<16, 1>(sums, t, 0);
    auto hit = cast<i64>(col_index<16, 256>(n)) + rank() * logits.cols() == load<16, 1>(target, t, 0);
    store(dlogits, cast<bf16>((p - cast<f32>(hit)) * load<16, 1>(dloss, t)), t, n);
  }
}

// Greedy decoding over a vocabulary-parallel LM head: logits [T, V] (this rank's shard, V <= 2048, i.e.
// global columns r V ..). Each rank puts its row maximum and its column into every rank's cand_v / cand_i
// [T, 8] at column r; then tok[t] = the global column (q V + i) of the largest candidate, the lowest rank on
// ties, as i64 (W <= 8).
PK_KERNEL void vp_greedy_argmax(Tensor<f32, 2> logits, Sym<f32, 2> cand_v, Sym<i32, 2> cand_i, Tensor<i64, 1> tok) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto x = load<16, 2048>(logits, t, 0);
    auto v = row_topk<1>(x);
    auto i = row_topk_index<1>(x);
    for (auto p : range(0, world_size())) {
      store(cand_v.on(p), v, t, rank());
      store(cand_i.on(p), i, t, rank());
    }
  }
  for (auto t : tiles(logits.rows(), {16})) {
    auto win = row_topk_index<1>(where(col_index<16, 8>(0) < world_size(), load<16, 8>(cand_v, t, 0), -1e30f));
    auto col = row_sum(where(col_index<16, 8>(0) == cast<f32>(win), cast<f32>(load<16, 8>(cand_i, t, 0)), 0.0f));
    store(tok, cast<i64>(col) + cast<i64>(win) * logits.cols(), t);
  }
}

// ============================================================================ KV cache

// vLLM's reshape_and_cache: key, value [T, D] (D <= 128) written to kcache, vcache [NS, D] at row slots[t];
// a slot of -1 (a padding token) writes nothing.
PK_KERNEL void kv_append_slots(Tensor<bf16, 2> key, Tensor<bf16, 2> value, Tensor<i64, 1> slots,
                               Tensor<bf16, 2> kcache, Tensor<bf16, 2> vcache) {
  for (auto t : tiles(key.rows(), {16})) {
    auto s = load<16>(slots, t);
    store_rows(kcache, load<16, 128>(key, t, 0), s, 0);
    store_rows(vcache, load<16, 128>(value, t, 0), s, 0);
  }
}

// Paged KV append through a block table: token t belongs to sequence seq[t] at position pos[t];
// bt [S * MB, 1] is the block table flattened (block j of sequence b at row b MB + j); the slot is
// bt[seq[t] MB + pos[t] / bs] * bs + pos[t] % bs and kcache [NB bs, D] (D <= 256) gets key[t, :] there.
PK_KERNEL void paged_kv_append(Tensor<bf16, 2> key, Tensor<i32, 1> seq, Tensor<i32, 1> pos, Tensor<i32, 2> bt,
                               Tensor<bf16, 2> kcache, index mb, index bs) {
  for (auto t : tiles(key.rows(), {32})) {
    auto p = load<32, 1>(pos, t);
    auto blk = load_rows<32, 1>(bt, load<32, 1>(seq, t) * mb + p / bs, 0);
    store_rows(kcache, load<32, 256>(key, t, 0), blk * bs + p % bs, 0);
  }
}

// Paged KV gather into a contiguous buffer for sequence b: out[i, :] = kcache[bt[b MB + i / bs] * bs + i % bs, :]
// for i < out.rows() (the sequence's length), D <= 128.
PK_KERNEL void paged_kv_gather(Tensor<bf16, 2> kcache, Tensor<i32, 2> bt, Tensor<bf16, 2> out, index b, index mb,
                               index bs) {
  for (auto i : tiles(out.rows(), {64})) {
    auto pos = cast<i32>(row_index<64, 1>(i));
    auto blk = load_rows<64, 1>(bt, pos / bs + b * mb, 0);
    store(out, load_rows<64, 128>(kcache, blk * bs + pos % bs, 0), i, 0);
  }
}

// fp8 KV-cache append: each new key row k[t, :] (D = 128 columns) is quantised with its own scale:
// a = max(max_j |k[t, j]|, 1e-12), kq[slot[t], :] = e4m3(k[t, :] * 448 / a), ks[slot[t], 0] = a / 448;
// slot -1 writes nothing.
PK_KERNEL void kv_append_fp8_rowscale(Tensor<bf16, 2> k, Tensor<i32, 2> slot, Tensor<f8e4m3, 2> kq,
                                      Tensor<f32, 2> ks) {
  for (auto t : tiles(k.rows(), {32})) {
    auto x = cast<f32>(load<32, 128>(k, t, 0));
    auto a = max(row_max(abs(x)), 1e-12f);
    auto s = load<32, 1>(slot, t, 0);
    store_rows(kq, cast<f8e4m3>(x * (448.0f / a)), s, 0);
    store_rows(ks, a * (1.0f / 448.0f), s, 0);
  }
}

// Paged decode attention (one query token per sequence, one head, D = 128): q [B, D]; kc, vc [NB bs, D];
// bt [B MB, 1]; lens [B] (keys 0 .. lens[b] - 1 of sequence b); key j of sequence b lives at row
// bt[b MB + j / bs] * bs + j % bs. o[b, :] = bf16(softmax_j(scale q[b] . k_j) v_j) over j < lens[b].
PK_KERNEL void paged_decode_attention(Tensor<bf16, 2> q, Tensor<bf16, 2> kc, Tensor<bf16, 2> vc, Tensor<i32, 2> bt,
                                      Tensor<i32, 1> lens, Tensor<bf16, 2> o, index mb, index bs, float scale) {
  for (auto b : tiles(q.rows(), {1})) {
    auto qt = load<1, 128>(q, b, 0);
    auto len = lens.at(b);
    auto mx = zeros<f32, 1, 1>() - 1e30f;
    auto l = zeros<f32, 1, 1>();
    auto acc = zeros<f32, 1, 128>();
    for (auto n : range(0, len, 64)) {
      auto j = cast<i32>(row_index<64, 1>(n));
      auto blk = load_rows<64, 1>(bt, j / bs + b * mb, 0);
      auto slot = blk * bs + j % bs;
      auto s = mma_t(qt, load_rows<64, 128>(kc, slot, 0), zeros<f32, 1, 64>()) * scale;
      s = where(col_index<1, 64>(n) < float(len), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load_rows<64, 128>(vc, slot, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), b, 0);
  }
}

// ============================================================================ Rotary embedding

// NeoX rotary embedding in place on heads: x [T, H, 128] (bf16), pos [T] i32, cosT / sinT [P, 64] f32.
// For head h, with c = cosT[pos[t], j], s = sinT[pos[t], j], j < 64: x[t, h, j] = x1 c - x2 s and
// x[t, h, 64 + j] = x2 c + x1 s, with x1, x2 the old values at j and 64 + j (one head per tile, the read of
// both halves inside the tile's cell).
PK_KERNEL void rope_neox_inplace_pos(Tensor<bf16, 3> x, Tensor<i32, 1> pos, Tensor<f32, 2> cosT, Tensor<f32, 2> sinT) {
  for (auto [t, h] : tiles(x.dim(0), x.dim(1), {16, 1})) {
    auto p = load<16>(pos, t);
    auto c = reshape<16, 1, 64>(load_rows<16, 64>(cosT, p, 0));
    auto s = reshape<16, 1, 64>(load_rows<16, 64>(sinT, p, 0));
    auto x1 = cast<f32>(load<16, 1, 64>(x, t, h, 0));
    auto x2 = cast<f32>(load<16, 1, 64>(x, t, h, 64));
    store(x, cast<bf16>(x1 * c - x2 * s), t, h, 0);
    store(x, cast<bf16>(x2 * c + x1 * s), t, h, 64);
  }
}

// NeoX rotary embedding on 3-D [T, H, 64] f32 queries, out of place, with the cos / sin rows gathered by
// position and broadcast over heads: qo[t, h, j] = q1 c - q2 s, qo[t, h, 32 + j] = q2 c + q1 s (j < 32),
// c = cosT[pos[t], j], s = sinT[pos[t], j]; any T and H.
PK_KERNEL void rope_heads_3d_gathered(Tensor<f32, 3> q, Tensor<i32, 1> pos, Tensor<f32, 2> cosT, Tensor<f32, 2> sinT,
                                      Tensor<f32, 3> qo) {
  for (auto [t, h] : tiles(q.dim(0), q.dim(1), {16, 4})) {
    auto p = load<16>(pos, t);
    auto c = reshape<16, 1, 32>(load_rows<16, 32>(cosT, p, 0));
    auto s = reshape<16, 1, 32>(load_rows<16, 32>(sinT, p, 0));
    auto q1 = load<16, 4, 32>(q, t, h, 0);
    auto q2 = load<16, 4, 32>(q, t, h, 32);
    store(qo, q1 * c - q2 * s, t, h, 0);
    store(qo, q2 * c + q1 * s, t, h, 32);
  }
}

// ============================================================================ Speculative decoding

// Greedy speculative-decoding acceptance: draft [B, K] i32 (K <= 15) and target [B, K + 1] i32 (the target
// model's argmax at K + 1 positions). n[b] = the number of leading j < K with draft[b, j] == target[b, j];
// out[b, j] = target[b, j] for j <= n[b] (the accepted tokens and the bonus token), -1 for j > n[b]
// (out [B, K + 1]); nacc[b] = n[b].
PK_KERNEL void spec_accept_greedy(Tensor<i32, 2> draft, Tensor<i32, 2> target, Tensor<i32, 2> out,
                                  Tensor<i32, 1> nacc) {
  for (auto b : tiles(draft.rows(), {16})) {
    auto tg = load<16, 16>(target, b, 0);
    auto miss = cast<i32>(load<16, 16>(draft, b, 0) != tg);
    auto ok = cast<f32>(cumsum(miss) == 0) && (col_index<16, 16>(0) < draft.cols());
    auto n = row_sum(cast<f32>(ok));
    store(out, where(col_index<16, 16>(0) <= n, tg, -1), b, 0);
    store(nacc, cast<i32>(n), b);
  }
}

// Speculative acceptance with the argmax in the same kernel: logits [B, K + 1, V] f32 (V <= 1024,
// K + 1 <= 8), draft [B, K] i32. a[b, j] = argmax_v logits[b, j, v] (lowest v on ties); n[b] = leading j < K
// with draft[b, j] == a[b, j]; out[b, j] = a[b, j] for j <= n[b], -1 otherwise (out [B, K + 1]).
PK_KERNEL void spec_argmax_accept(Tensor<f32, 3> logits, Tensor<i32, 2> draft, Tensor<i32, 2> out) {
  for (auto b : tiles(logits.dim(0), {1})) {
    auto a = reshape<1, 8>(row_topk_index<1>(reshape<8, 1024>(load<1, 8, 1024>(logits, b, 0, 0))));
    auto col = col_index<1, 8>(0);
    auto miss = cast<i32>(load<1, 8>(draft, b, 0) != a) + cast<i32>(col >= float(draft.cols()));
    auto n = row_sum(cast<f32>(cumsum(miss) == 0));
    store(out, where(col <= n, a, -1), b, 0);
  }
}

// Speculative sampling's accept test and residual distribution: pt, pd [R, V] (target and draft probs of
// each draft position), d [R] the draft token, seed. u[r] = uniform(seed, r, 0); acc[r] = 1 if
// u[r] < min(1, pt[r, d[r]] / pd[r, d[r]]) else 0 (i32); resid[r, v] = max(pt - pd, 0) / sum_v max(pt - pd, 0)
// (any V; a zero sum gives inf / nan there).
PK_KERNEL void spec_sampling_accept(Tensor<f32, 2> pt, Tensor<f32, 2> pd, Tensor<i32, 1> d, Tensor<i32, 1> acc,
                                    Tensor<f32, 2> resid, index seed) {
  for (auto r : tiles(pt.rows(), {16})) {
    auto want = cast<f32>(load<16, 1>(d, r));
    auto a = zeros<f32, 16, 1>();
    auto q = zeros<f32, 16, 1>();
    auto z = zeros<f32, 16, 1>();
    for (auto n : range(0, pt.cols(), 512)) {
      auto t = load<16, 512>(pt, r, n);
      auto e = load<16, 512>(pd, r, n);
      auto hit = col_index<16, 512>(n) == want;
      a = a + row_sum(where(hit, t, 0.0f));
      q = q + row_sum(where(hit, e, 0.0f));
      z = z + row_sum(max(t - e, 0.0f));
    }
    auto u = uniform<16, 1>(seed, r, 0);
    store(acc, cast<i32>(u < min(a / q, 1.0f)), r);
    for (auto n : range(0, pt.cols(), 512))
      store(resid, max(load<16, 512>(pt, r, n) - load<16, 512>(pd, r, n), 0.0f) / z, r, n);
  }
}

// ============================================================================ fp8 quantisation

// Per-row e4m3 quantisation of wide rows (any C): a[i] = max(max_j |x[i, j]|, 1e-12); q[i, j] =
// e4m3(x[i, j] * 448 / a[i]); s[i, 0] = a[i] / 448. Two passes over each row in one tile.
PK_KERNEL void fp8_quant_per_row_wide(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {16})) {
    auto a = zeros<f32, 16, 1>() + 1e-12f;
    for (auto n : range(0, x.cols(), 1024)) a = max(a, row_max(abs(cast<f32>(load<16, 1024>(x, m, n)))));
    for (auto n : range(0, x.cols(), 1024)) store(q, cast<f8e4m3>(cast<f32>(load<16, 1024>(x, m, n)) * (448.0f / a)), m, n);
    store(s, a / 448.0f, m, 0);
  }
}

// DeepSeek-style 1 x 128 block quantisation of ragged rows: for block k (columns 128k .. 128k + 127, the
// last one shorter when C % 128 != 0): a = max(max |x|, 1e-10); q = e4m3(x * 448 / a); s[i, k] = a / 448.
PK_KERNEL void fp8_quant_1x128_ragged(Tensor<f32, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto t = load<32, 128>(x, m, n);
    auto a = max(row_max(abs(t)), 1e-10f);
    store(q, cast<f8e4m3>(t * (448.0f / a)), m, n);
    store(s, a * (1.0f / 448.0f), m, n / 128);
  }
}

// 128 x 128 block dequantisation: y[i, j] = bf16(q[i, j] * s[i / 128, j / 128]) for q [R, C] e4m3 (any R, C)
// and s [ceil(R / 128), ceil(C / 128)].
PK_KERNEL void fp8_dequant_128x128(Tensor<f8e4m3, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 128}))
    store(y, cast<bf16>(cast<f32>(load<16, 128>(q, m, n)) * s.at(m / 128, n / 128)), m, n);
}

// Per-tensor e5m2 quantisation with one scale across all ranks (tensor parallel gradients): x [R, C] on
// every rank (R <= 4096, any C); g = max over ranks, rows and columns of |x| (at least 1e-12);
// q[i, j] = e5m2(x[i, j] * 57344 / g); sc[0, 0] = g / 57344 on every rank. Phases: row maxima into
// rmax [1, R] (as a row), the tensor's maximum into amax [1, 1], all_reduce(Max) into gmax [1, 1], quantise.
PK_KERNEL void fp8_e5m2_per_tensor_tp(Tensor<f32, 2> x, Tensor<f32, 2> rmax, Sym<f32, 2> amax, Sym<f32, 2> gmax,
                                      Tensor<f8e5m2, 2> q, Tensor<f32, 2> sc) {
  for (auto m : tiles(x.rows(), {16})) {
    auto a = zeros<f32, 16, 1>() + 1e-12f;
    for (auto n : range(0, x.cols(), 512)) a = max(a, row_max(abs(load<16, 512>(x, m, n))));
    store(rmax, transpose(a), 0, m);
  }
  for (auto i : tiles(1, {1})) store(amax, row_max(load<1, 4096>(rmax, 0, 0)), 0, 0);
  all_reduce(Max, amax, gmax);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 512}))
    store(q, cast<f8e5m2>(load<16, 512>(x, m, n) * (57344.0f / load<1, 1>(gmax, 0, 0))), m, n);
  for (auto i : tiles(1, {1})) store(sc, load<1, 1>(gmax, 0, 0) * (1.0f / 57344.0f), 0, 0);
}

// ============================================================================ MoE

// Local MoE combine with renormalised router weights: y [N, H] bf16 expert outputs, slot [T, K] i32 (row of
// y holding token t's k-th expert output, -1 for a dropped choice), w [T, K] f32 (K <= 8);
// out[t, :] = bf16(sum_k (w[t, k] / sum_k' w[t, k']) y[slot[t, k], :]) in f32 (a -1 slot adds nothing, but
// its weight stays in the sum).
PK_KERNEL void moe_combine_renorm(Tensor<bf16, 2> y, Tensor<i32, 2> slot, Tensor<f32, 2> w, Tensor<bf16, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 256})) {
    auto ws = row_sum(load<16, 8>(w, t, 0));
    auto acc = zeros<f32, 16, 256>();
    for (auto k : range(0, slot.cols()))
      acc = acc + cast<f32>(load_rows<16, 256>(y, load<16, 1>(slot, t, k), n)) * (load<16, 1>(w, t, k) / ws);
    store(out, cast<bf16>(acc), t, n);
  }
}

// MoE un-permute by scatter-add (DeepSpeed's gather-scatter combine): out [T, H] f32 is zeroed, then every
// expert-output row r of y [N, H] adds gate[r] * y[r, :] into out[tok[r], :] (tok -1 adds nothing).
PK_KERNEL void moe_unpermute_scatter_add(Tensor<f32, 2> y, Tensor<i32, 1> tok, Tensor<f32, 1> gate,
                                         Tensor<f32, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 256})) store(out, zeros<f32, 16, 256>(), t, n);
  for (auto [r, n] : tiles(y.rows(), y.cols(), {16, 256}))
    store_add_rows(out, load<16, 256>(y, r, n) * load<16, 1>(gate, r), load<16>(tok, r), n);
}

// Router with load-balancing statistics: logits [T, E] f32 (E <= 64). p = softmax over the E experts;
// ids[t, 0..1] = top-2 experts (i32), wts[t, 0..1] = their p renormalised to sum 1; psum[0, e] += sum over
// tokens of p[t, e] and cnt[0, e] += the number of top-2 choices of expert e (psum, cnt accumulate).
PK_KERNEL void router_top2_aux_stats(Tensor<f32, 2> logits, Tensor<i32, 2> ids, Tensor<f32, 2> wts,
                                     Tensor<f32, 2> psum, Tensor<i32, 2> cnt) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto x = where(col_index<16, 64>(0) < logits.cols(), load<16, 64>(logits, t, 0), -1e30f);
    auto e = exp(x - row_max(x));
    auto p = where(row_index<16, 64>(t) < logits.rows(), e / row_sum(e), 0.0f);
    auto top = row_topk<2>(p);
    auto idx = row_topk_index<2>(p);
    store(ids, idx, t, 0);
    store(wts, top / row_sum(top), t, 0);
    store_add(psum, transpose(row_sum(transpose(p))), 0, 0);
    store_add(cnt, reshape<1, 64>(histogram<64>(idx)), 0, 0);
  }
}

// ============================================================================ Sampling

// Top-k sampling with temperature (k = 32, V <= 2048): v = the 32 largest logits of row t, in order, and
// their columns c; p = softmax(v / temp); g = Gumbel noise -log(-log(max(u, 1e-7))) with
// u = uniform(seed, t, j) for the j-th candidate; tok[t] = c[j*] with j* = argmax_j (log p_j + g_j);
// prob[t] = p_{j*}.
PK_KERNEL void topk_sample_temperature(Tensor<f32, 2> logits, Tensor<i32, 1> tok, Tensor<f32, 1> prob, float temp,
                                       index seed) {
  for (auto t : tiles(logits.rows(), {4})) {
    auto x = load<4, 2048>(logits, t, 0);
    auto v = row_topk<32>(x) / temp;
    auto c = row_topk_index<32>(x);
    auto e = exp(v - row_max(v));
    auto p = e / row_sum(e);
    auto g = -log(-log(max(uniform<4, 32>(seed, t, 0), 1e-7f)));
    auto j = row_topk_index<1>(log(p) + g);
    auto pick = col_index<4, 32>(0) == cast<f32>(j);
    store(tok, cast<i32>(row_sum(where(pick, cast<f32>(c), 0.0f))), t);
    store(prob, row_sum(where(pick, p, 0.0f)), t);
  }
}

// ============================================================================ Multi-phase kernels

// Softmax of wide rows in place (any C): m_i = max_j x[i, j], l_i = sum_j exp(x[i, j] - m_i) over the C real
// columns (online: one pass), then x[i, j] = exp(x[i, j] - m_i) / l_i.
PK_KERNEL void softmax_wide_inplace(Tensor<f32, 2> x) {
  for (auto m : tiles(x.rows(), {8})) {
    auto mx = zeros<f32, 8, 1>() - 1e30f;
    auto l = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 1024)) {
      auto t = where(col_index<8, 1024>(n) < x.cols(), load<8, 1024>(x, m, n), -1e30f);
      auto mnew = max(mx, row_max(t));
      l = l * exp(mx - mnew) + row_sum(exp(t - mnew));
      mx = mnew;
    }
    for (auto n : range(0, x.cols(), 1024)) store(x, exp(load<8, 1024>(x, m, n) - mx) / l, m, n);
  }
}

// Column centring in three local phases: csum [1, C] is zeroed, then csum[0, j] = sum_i x[i, j] (adds from
// every row tile), then y[i, j] = x[i, j] - csum[0, j] / R.
PK_KERNEL void column_center_three_phase(Tensor<f32, 2> x, Tensor<f32, 2> csum, Tensor<f32, 2> y) {
  for (auto n : tiles(csum.cols(), {256})) store(csum, zeros<f32, 1, 256>(), 0, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256}))
    store_add(csum, transpose(row_sum(transpose(load<32, 256>(x, m, n)))), 0, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256}))
    store(y, load<32, 256>(x, m, n) - load<1, 256>(csum, 0, n) * (1.0f / float(x.rows())), m, n);
}

// ============================================================================ Optimizer steps and clipping

// Adam(W) step in place on f32 1-D tensors: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// p = p - lr (m / bc1) / (sqrt(v / bc2) + eps) - lr wd p (old p in the decay term).
PK_KERNEL void adamw_f32_inplace(Tensor<f32, 1> p, Tensor<f32, 1> g, Tensor<f32, 1> m, Tensor<f32, 1> v, float lr,
                                 float b1, float b2, float eps, float wd, float bc1, float bc2) {
  for (auto i : tiles(p.size(), {1024})) {
    auto gt = load<1024>(g, i);
    auto mt = load<1024>(m, i) * b1 + gt * (1.0f - b1);
    auto vt = load<1024>(v, i) * b2 + gt * gt * (1.0f - b2);
    auto pt = load<1024>(p, i);
    store(m, mt, i);
    store(v, vt, i);
    store(p, pt - (mt / bc1) / (sqrt(vt / bc2) + eps) * lr - pt * (lr * wd), i);
  }
}

// Adam with bf16 model weights, an f32 master copy and bf16 moments (2-D, odd shapes): gradients g bf16;
// m, v bf16 updated as above (in f32, rounded once); master = master - lr (m/bc1) / (sqrt(v/bc2) + eps);
// w = bf16(master).
PK_KERNEL void adam_bf16_master(Tensor<f32, 2> master, Tensor<bf16, 2> w, Tensor<bf16, 2> g, Tensor<bf16, 2> m,
                                Tensor<bf16, 2> v, float lr, float b1, float b2, float eps, float bc1, float bc2) {
  for (auto [r, c] : tiles(w.rows(), w.cols(), {8, 256})) {
    auto gt = cast<f32>(load<8, 256>(g, r, c));
    auto mt = cast<f32>(load<8, 256>(m, r, c)) * b1 + gt * (1.0f - b1);
    auto vt = cast<f32>(load<8, 256>(v, r, c)) * b2 + gt * gt * (1.0f - b2);
    auto pt = load<8, 256>(master, r, c) - (mt / bc1) / (sqrt(vt / bc2) + eps) * lr;
    store(m, cast<bf16>(mt), r, c);
    store(v, cast<bf16>(vt), r, c);
    store(master, pt, r, c);
    store(w, cast<bf16>(pt), r, c);
  }
}

// Gradient clipping by the global norm across tensor-parallel ranks, in place: ss [1, 1] local is zeroed,
// ss = sum_ij g[i, j]^2 (adds from every tile), copied into the symmetric part [1, 1], tot = all_reduce(Sum,
// part); then g[i, j] *= min(1, max_norm / (sqrt(tot) + 1e-6)).
PK_KERNEL void clip_grad_global_norm_tp(Tensor<f32, 2> g, Tensor<f32, 2> ss, Sym<f32, 2> part, Sym<f32, 2> tot,
                                        float max_norm) {
  for (auto i : tiles(1, {1})) store(ss, zeros<f32, 1, 1>(), 0, 0);
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 256})) {
    auto t = load<16, 256>(g, m, n);
    store_add(ss, transpose(row_sum(transpose(row_sum(t * t)))), 0, 0);
  }
  for (auto i : tiles(1, {1})) store(part, load<1, 1>(ss, 0, 0), 0, 0);
  all_reduce(Sum, part, tot);
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 256}))
    store(g, load<16, 256>(g, m, n) * min(max_norm / (sqrt(load<1, 1>(tot, 0, 0)) + 1e-6f), 1.0f), m, n);
}

// SGD with Nesterov momentum on bf16 weights (1-D, in place, any N): buf = mu buf + g (f32);
// p = bf16(p - lr (g + mu buf)).
PK_KERNEL void sgd_nesterov_bf16(Tensor<bf16, 1> p, Tensor<bf16, 1> g, Tensor<f32, 1> buf, float lr, float mu) {
  for (auto i : tiles(p.size(), {2048})) {
    auto gt = cast<f32>(load<2048>(g, i));
    auto b = load<2048>(buf, i) * mu + gt;
    store(buf, b, i);
    store(p, cast<bf16>(cast<f32>(load<2048>(p, i)) - (gt + b * mu) * lr), i);
  }
}

// ============================================================================ Ring shifts at W = 3

// Shift by two ranks: y on rank (r + 2) % W gets x of rank r (at W = 3, the previous rank's y).
PK_KERNEL void ring_shift_by_two(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y.on((rank() + 2) % world_size()), load<16, 256>(x, m, n), m, n);
}

// Ring pull and accumulate: y[i, j] = x_r[i, j] + x_{(r - 1) mod W}[i, j] + x_{(r + 1) mod W}[i, j] (the
// three-rank neighbourhood sum; at W = 3 the sum of every rank's x).
PK_KERNEL void ring_pull_neighbours_sum(Sym<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y, load<16, 256>(x, m, n) + load<16, 256>(x.on(prev_rank()), m, n) + load<16, 256>(x.on(next_rank()), m, n),
          m, n);
}

// Reduce-scatter by pulls: x [W R, C] on every rank; y [R, C] on rank r = sum over ranks q of
// x_q[r R + i, j] (R = x.rows() / W; any R).
PK_KERNEL void rs_by_pulls(Sym<f32, 2> x, Tensor<f32, 2> y) {
  index rows = x.rows() / world_size();
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto q : range(0, world_size())) acc = acc + load<16, 128>(x.on(q), rank() * rows + m, n);
    store(y, acc, m, n);
  }
}

// Ring attention's K/V hand-off with a double buffer: kv [2, S, D] on every rank; at step s, rank r sends
// its slot s % 2 into slot (s + 1) % 2 of rank r + 1: kv_{r+1}[(s+1) % 2, i, :] = kv_r[s % 2, i, :].
PK_KERNEL void ring_kv_double_buffer_step(Sym<bf16, 3> kv, index s) {
  for (auto m : tiles(kv.dim(1), {32}))
    store(kv.on(next_rank()), load<32, 128>(kv, s % 2, m, 0), (s + 1) % 2, m, 0);
}

// All-gather by a ring of stores: x [R, C] on every rank; y [W R, C]: y_q[r R + i, :] = x_r[i, :] on every
// rank q, written by rank r into every rank (scattered rows, only the R real rows; any R).
PK_KERNEL void ag_by_row_stores(Tensor<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto t = load<16, 256>(x, m, n);
    auto rows = cast<i32>(row_index<16, 1>(m)) + rank() * x.rows();
    for (auto p : range(0, world_size())) store_rows(y.on(p), t, rows, n);
  }
}

// ============================================================================ Odd shapes and one-row tensors

// Bias + GELU on a [T, C] bf16 tensor whose rows and columns are not multiples of the 16 x 96 tile:
// y[t, j] = bf16(gelu(x[t, j] + b[j])).
PK_KERNEL void bias_gelu_odd_tiles(Tensor<bf16, 2> x, Tensor<bf16, 1> b, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 96}))
    store(y, cast<bf16>(gelu(cast<f32>(load<16, 96>(x, t, n)) + cast<f32>(load<1, 96>(b, n)))), t, n);
}

// LM-head logits for one decode token on the general path: h [1, K], w [V, K] (V, K any), out [1, V] f32:
// out[0, v] = sum_k h[0, k] w[v, k] / temp.
PK_KERNEL void one_token_lm_head(Tensor<bf16, 2> h, Tensor<bf16, 2> w, Tensor<f32, 2> out, float temp) {
  for (auto n : tiles(w.rows(), {64})) {
    auto acc = zeros<f32, 1, 64>();
    for (auto k : range(0, h.cols(), 64)) acc = mma_t(load<1, 64>(h, 0, k), load<64, 64>(w, n, k), acc);
    store(out, acc / temp, 0, n);
  }
}

// NeoX rotary embedding in place on packed heads x [T, H * 128] (Megatron's and vLLM's layout): each
// 16 x 128 cell is one head of 16 tokens; x1 = x[t, n .. n + 63], x2 = x[t, n + 64 .. n + 127] (the read
// at n + 64 stays inside the cell), cos / sin rows gathered by position; x1' = x1 cos - x2 sin,
// x2' = x2 cos + x1 sin. (Set 20's finding 2: refused before reads at v + c inside the step were taken.)
PK_KERNEL void rope_neox_packed_inplace(Tensor<bf16, 2> x, Tensor<i32, 1> pos, Tensor<f32, 2> cosT,
                                        Tensor<f32, 2> sinT) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto p = load<16>(pos, t);
    auto c = load_rows<16, 64>(cosT, p, 0);
    auto s = load_rows<16, 64>(sinT, p, 0);
    auto x1 = cast<f32>(load<16, 64>(x, t, n));
    auto x2 = cast<f32>(load<16, 64>(x, t, n + 64));
    store(x, cast<bf16>(x1 * c - x2 * s), t, n);
    store(x, cast<bf16>(x2 * c + x1 * s), t, n + 64);
  }
}

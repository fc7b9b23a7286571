// The seventeenth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only. Emphasis: backward
// passes and training steps (norm, softmax, activation, embedding, attention-score and cross-entropy
// backward), optimizer steps (AdamW, Lion, SGD with weight decay, global-norm clipping, loss scaling
// with inf/nan checks), data-, sequence- and pipeline-parallel pieces, inference pieces (paged KV-cache
// gather and append, greedy argmax, top-k masks, repetition penalty, speculative-decoding acceptance,
// beam scores), column reductions, prefix sums, histograms and integer index math with tails. Each
// kernel compiles alone (pkc FILE --kernel NAME) and the file compiles as a whole; findings in
// test/specs/specs17_findings.md. Part (b) is user_specs17_bad.pk.cpp.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ Norm backward

// RMSNorm backward, dx only (f32, rows chunked by 512 columns, any width):
// dx = rstd * (w*dy - x * rstd^2 * mean(w*dy*x)), rstd saved by the forward pass ([M]).
PK_KERNEL void rmsnorm_bwd_dx(Tensor<f32, 2> x, Tensor<f32, 2> dy, Tensor<f32, 1> w, Tensor<f32, 1> rstd,
                              Tensor<f32, 2> dx) {
  for (auto m : tiles(x.rows(), {8})) {
    auto r = load<8, 1>(rstd, m);
    auto dot = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 512))
      dot = dot + row_sum(load<8, 512>(dy, m, n) * load<1, 512>(w, n) * load<8, 512>(x, m, n));
    auto c = dot * (1.0f / float(x.cols())) * r * r;
    for (auto n : range(0, x.cols(), 512)) {
      auto g = load<8, 512>(dy, m, n) * load<1, 512>(w, n);
      store(dx, r * (g - load<8, 512>(x, m, n) * c), m, n);
    }
  }
}

// RMSNorm backward, dweight: a column reduction over all rows. Each block owns 128 columns and walks
// every row block, accumulating dy * x * rstd in a 32 x 128 tile; the final column sums come from
// row_sum of the transposed accumulator, a 128 x 1 column stored into the [N] dweight.
PK_KERNEL void rmsnorm_bwd_dw_colsum(Tensor<bf16, 2> x, Tensor<bf16, 2> dy, Tensor<f32, 1> rstd, Tensor<f32, 1> dw) {
  for (auto n : tiles(x.cols(), {128})) {
    auto acc = zeros<f32, 32, 128>();
    for (auto m : range(0, x.rows(), 32))
      acc = acc + cast<f32>(load<32, 128>(dy, m, n)) * cast<f32>(load<32, 128>(x, m, n)) * load<32, 1>(rstd, m);
    store(dw, row_sum(transpose(acc)), n);
  }
}

// LayerNorm backward dx (bf16 in/out, mean and rstd saved): xhat = (x - mu) * rstd, g = dy * w,
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)). Whole rows of up to 2048 in one 4 x 2048 tile;
// the padding columns of a partial tile have x = 0, so xhat there is -mu * rstd: masked out of the sums.
PK_KERNEL void layernorm_bwd_dx(Tensor<bf16, 2> x, Tensor<bf16, 2> dy, Tensor<bf16, 1> w, Tensor<f32, 1> mean,
                                Tensor<f32, 1> rstd, Tensor<bf16, 2> dx) {
  for (auto m : tiles(x.rows(), {4})) {
    auto r = load<4, 1>(rstd, m);
    auto valid = col_index<4, 2048>(0) < x.cols();
    auto xhat = where(valid, (cast<f32>(load<4, 2048>(x, m, 0)) - load<4, 1>(mean, m)) * r, 0.0f);
    auto g = cast<f32>(load<4, 2048>(dy, m, 0)) * cast<f32>(load<1, 2048>(w, 0));
    float inv_n = 1.0f / float(x.cols());
    auto mg = row_sum(g) * inv_n;
    auto mgx = row_sum(g * xhat) * inv_n;
    store(dx, cast<bf16>(r * (g - mg - xhat * mgx)), m, 0);
  }
}

// LayerNorm backward dweight and dbias by atomic row adds: every row of each tile is added into row 0
// of a [1, N] accumulator (store_add_rows with an all-zero index tile), after a phase that zeroes it.
PK_KERNEL void layernorm_bwd_dw_db_atomic(Tensor<f32, 2> x, Tensor<f32, 2> dy, Tensor<f32, 1> mean,
                                          Tensor<f32, 1> rstd, Tensor<f32, 2> dw, Tensor<f32, 2> db) {
  for (auto n : tiles(dw.cols(), {256})) {
    store(dw, zeros<f32, 1, 256>(), 0, n);
    store(db, zeros<f32, 1, 256>(), 0, n);
  }
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto xhat = (load<16, 256>(x, m, n) - load<16, 1>(mean, m)) * load<16, 1>(rstd, m);
    auto g = load<16, 256>(dy, m, n);
    auto zero_rows = cast<i32>(row_index<16, 1>(m)) * 0;
    store_add_rows(dw, g * xhat, zero_rows, n);
    store_add_rows(db, g, zero_rows, n);
  }
}

// Sequence-parallel LayerNorm backward, weight gradients: each rank sums its sequence shard's
// columns (dw, db in one [2, N] Sym) and the partial sums are all-reduced.
PK_KERNEL void sp_layernorm_bwd_dw_allreduce(Tensor<bf16, 2> x, Tensor<bf16, 2> dy, Tensor<f32, 1> mean,
                                             Tensor<f32, 1> rstd, Sym<f32, 2> part, Sym<f32, 2> total) {
  for (auto n : tiles(x.cols(), {64})) {
    auto aw = zeros<f32, 16, 64>();
    auto ab = zeros<f32, 16, 64>();
    for (auto m : range(0, x.rows(), 16)) {
      auto xhat = (cast<f32>(load<16, 64>(x, m, n)) - load<16, 1>(mean, m)) * load<16, 1>(rstd, m);
      auto g = cast<f32>(load<16, 64>(dy, m, n));
      aw = aw + g * xhat;
      ab = ab + g;
    }
    store(part, transpose(row_sum(transpose(aw))), 0, n);
    store(part, transpose(row_sum(transpose(ab))), 1, n);
  }
  all_reduce(Sum, part, total);
}

// ============================================================================ Softmax / activation backward

// Softmax backward: dx = y * (dy - sum(dy * y)), rows of up to 1024 (f16).
PK_KERNEL void softmax_bwd_f16(Tensor<f16, 2> y, Tensor<f16, 2> dy, Tensor<f16, 2> dx) {
  for (auto m : tiles(y.rows(), {16})) {
    auto yt = cast<f32>(load<16, 1024>(y, m, 0));
    auto g = cast<f32>(load<16, 1024>(dy, m, 0));
    store(dx, cast<f16>(yt * (g - row_sum(g * yt))), m, 0);
  }
}

// Log-softmax backward over chunked rows: dx = dy - exp(lsm) * sum(dy), 3-D [B, S, V] f32.
PK_KERNEL void log_softmax_bwd_3d(Tensor<f32, 3> lsm, Tensor<f32, 3> dy, Tensor<f32, 3> dx) {
  for (auto [b, s] : tiles(lsm.dim(0), lsm.dim(1), {1, 8})) {
    auto tot = zeros<f32, 8, 1>();
    for (auto v : range(0, lsm.dim(2), 256)) tot = tot + row_sum(load<8, 256>(dy, b, s, v));
    for (auto v : range(0, lsm.dim(2), 256))
      store(dx, load<8, 256>(dy, b, s, v) - exp(load<8, 256>(lsm, b, s, v)) * tot, b, s, v);
  }
}

// GELU (tanh form) backward: d/dx 0.5 x (1 + tanh(k (x + c x^3))).
PK_KERNEL void gelu_tanh_bwd(Tensor<bf16, 2> x, Tensor<bf16, 2> dy, Tensor<bf16, 2> dx) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 96})) {
    auto t = cast<f32>(load<32, 96>(x, m, n));
    float k = 0.7978845608f;
    auto th = tanh(k * (t + 0.044715f * t * t * t));
    auto d = 0.5f * (1.0f + th) + 0.5f * t * (1.0f - th * th) * k * (1.0f + 3.0f * 0.044715f * t * t);
    store(dx, cast<bf16>(cast<f32>(load<32, 96>(dy, m, n)) * d), m, n);
  }
}

// GELU (erf form) backward: Phi(x) + x * phi(x). The language has no erf; Phi(x) is recovered as
// gelu_erf(x) / x away from 0 (and 0.5 at 0) -- see finding "no erf".
PK_KERNEL void gelu_erf_bwd(Tensor<f32, 2> x, Tensor<f32, 2> dy, Tensor<f32, 2> dx) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = load<16, 128>(x, m, n);
    auto phi_cdf = where(abs(t) < 1e-6f, zeros<f32, 16, 128>() + 0.5f, gelu_erf(t) / t);
    auto pdf = exp(-0.5f * t * t) * 0.3989422804f;
    store(dx, load<16, 128>(dy, m, n) * (phi_cdf + t * pdf), m, n);
  }
}

// SwiGLU backward: h = silu(g) * u; du = dy * silu(g), dg = dy * u * sig(g) * (1 + g (1 - sig(g))).
PK_KERNEL void swiglu_bwd(Tensor<bf16, 2> gate, Tensor<bf16, 2> up, Tensor<bf16, 2> dy, Tensor<bf16, 2> dgate,
                          Tensor<bf16, 2> dup) {
  for (auto [m, n] : tiles(gate.rows(), gate.cols(), {64, 64})) {
    auto g = cast<f32>(load<64, 64>(gate, m, n));
    auto u = cast<f32>(load<64, 64>(up, m, n));
    auto d = cast<f32>(load<64, 64>(dy, m, n));
    auto s = sigmoid(g);
    store(dup, cast<bf16>(d * g * s), m, n);
    store(dgate, cast<bf16>(d * u * s * (1.0f + g * (1.0f - s))), m, n);
  }
}

// Dropout backward with a saved i32 keep mask and 1/(1-p) scale, 4-D [B, H, S, D] f16.
PK_KERNEL void dropout_bwd_4d(Tensor<f16, 4> dy, Tensor<i32, 4> keep, Tensor<f16, 4> dx, float inv_keep) {
  for (auto [b, h, s] : tiles(dy.dim(0), dy.dim(1), dy.dim(2), {1, 2, 16})) {
    auto g = cast<f32>(load<2, 16, 64>(dy, b, h, s, 0));
    store(dx, cast<f16>(where(load<2, 16, 64>(keep, b, h, s, 0) != 0, g * inv_keep, 0.0f)), b, h, s, 0);
  }
}

// ============================================================================ Embedding / CE / attention backward

// Embedding backward: dtable[ids[t], :] += dy[t, :], zeroed first (duplicated ids all arrive).
PK_KERNEL void embedding_bwd_scatter_add(Tensor<i64, 1> ids, Tensor<f32, 2> dy, Tensor<f32, 2> dtable) {
  for (auto [v, n] : tiles(dtable.rows(), dtable.cols(), {64, 128})) store(dtable, zeros<f32, 64, 128>(), v, n);
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {32, 128}))
    store_add_rows(dtable, load<32, 128>(dy, t, n), load<32>(ids, t), n);
}

// Cross-entropy backward from saved log-sum-exp: dlogits = (softmax - onehot(target)) * dloss / n_valid,
// rows whose target is the ignore index (-100) get zero gradient. Vocab chunked by 512; bf16 logits.
PK_KERNEL void cross_entropy_bwd(Tensor<bf16, 2> logits, Tensor<i64, 1> target, Tensor<f32, 1> lse,
                                 Tensor<bf16, 2> dlogits, float dloss_over_n) {
  for (auto [t, n] : tiles(logits.rows(), logits.cols(), {16, 512})) {
    auto tg = load<16, 1>(target, t);
    auto live = cast<f32>(tg != -100);
    auto p = exp(cast<f32>(load<16, 512>(logits, t, n)) - load<16, 1>(lse, t));
    auto onehot = where(col_index<16, 512>(n) == cast<f32>(tg), 1.0f, 0.0f);
    store(dlogits, cast<bf16>((p - onehot) * (live * dloss_over_n)), t, n);
  }
}

// Attention backward preprocessing (FlashAttention's D): delta[h, s] = sum_d dO * O, [H, S, D] bf16.
PK_KERNEL void attn_bwd_delta(Tensor<bf16, 3> o, Tensor<bf16, 3> dout, Tensor<f32, 2> delta) {
  for (auto [h, m] : tiles(o.dim(0), o.dim(1), {1, 64})) {
    auto d = row_sum(cast<f32>(load<64, 128>(o, h, m, 0)) * cast<f32>(load<64, 128>(dout, h, m, 0)));
    store(delta, transpose(d), h, m);
  }
}

// Attention-score backward for one head: dP = dO · Vᵀ (mma_t), dS = P * (dP - delta) * scale,
// with P recomputed from the scores' saved lse; causal mask. [S, D] bf16 operands, dS f32.
PK_KERNEL void attn_bwd_dscores(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> dout,
                                Tensor<f32, 1> lse, Tensor<f32, 1> delta, Tensor<f32, 2> ds, float scale) {
  for (auto [m, n] : tiles(q.rows(), k.rows(), {64, 64})) {
    auto s = zeros<f32, 64, 64>();
    auto dp = zeros<f32, 64, 64>();
    for (auto d : range(0, q.cols(), 32)) {
      s = mma_t(load<64, 32>(q, m, d), load<64, 32>(k, n, d), s);
      dp = mma_t(load<64, 32>(dout, m, d), load<64, 32>(v, n, d), dp);
    }
    auto vis = col_index<64, 64>(n) <= row_index<64, 64>(m);
    auto p = where(vis, exp(s * scale - load<64, 1>(lse, m)), 0.0f);
    store(ds, p * (dp - load<64, 1>(delta, m)) * scale, m, n);
  }
}

// dV = Pᵀ · dO for one head: P [Sq, Sk] f32 (saved), dO [Sq, D] bf16; the A operand is a transposed
// register tile of P, cast to bf16.
PK_KERNEL void attn_bwd_dv(Tensor<f32, 2> p, Tensor<bf16, 2> dout, Tensor<f32, 2> dv) {
  for (auto [n, d] : tiles(p.cols(), dout.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto m : range(0, p.rows(), 32))
      acc = mma(cast<bf16>(transpose(load<32, 64>(p, m, n))), load<32, 64>(dout, m, d), acc);
    store(dv, acc, n, d);
  }
}

// ============================================================================ Optimizers

// AdamW with f32 master weights, bf16 gradients and a bf16 weight copy for the forward pass; bias
// corrections from an integer step argument; decoupled weight decay.
PK_KERNEL void adamw_master_bf16(Tensor<f32, 1> p, Tensor<bf16, 1> g, Tensor<f32, 1> m1, Tensor<f32, 1> m2,
                                 Tensor<bf16, 1> p16, float lr, float b1, float b2, float eps, float wd, index step) {
  float c1 = 1.0f / (1.0f - pow(b1, float(step)));
  float c2 = 1.0f / (1.0f - pow(b2, float(step)));
  for (auto i : tiles(p.size(), {1024})) {
    auto gt = cast<f32>(load<1024>(g, i));
    auto a = load<1024>(m1, i) * b1 + gt * (1.0f - b1);
    auto b = load<1024>(m2, i) * b2 + gt * gt * (1.0f - b2);
    auto w = load<1024>(p, i) * (1.0f - lr * wd);
    auto nw = w - lr * (a * c1) / (sqrt(b * c2) + eps);
    store(m1, a, i);
    store(m2, b, i);
    store(p, nw, i);
    store(p16, cast<bf16>(nw), i);
  }
}

// Lion: update = sign(b1 m + (1 - b1) g); p = p (1 - lr wd) - lr update; m = b2 m + (1 - b2) g. 2-D.
PK_KERNEL void lion_step_2d(Tensor<bf16, 2> p, Tensor<bf16, 2> g, Tensor<f32, 2> mom, float lr, float b1, float b2,
                            float wd) {
  for (auto [r, c] : tiles(p.rows(), p.cols(), {8, 256})) {
    auto gt = cast<f32>(load<8, 256>(g, r, c));
    auto mt = load<8, 256>(mom, r, c);
    auto u = mt * b1 + gt * (1.0f - b1);
    auto sgn = where(u > 0.0f, 1.0f, 0.0f) - where(u < 0.0f, 1.0f, 0.0f);
    store(p, cast<bf16>(cast<f32>(load<8, 256>(p, r, c)) * (1.0f - lr * wd) - lr * sgn), r, c);
    store(mom, mt * b2 + gt * (1.0f - b2), r, c);
  }
}

// SGD with Nesterov momentum and L2 weight decay (added to the gradient), 3-D f32.
PK_KERNEL void sgd_nesterov_wd_3d(Tensor<f32, 3> p, Tensor<f32, 3> g, Tensor<f32, 3> buf, float lr, float mu,
                                  float wd) {
  for (auto [a, b, c] : tiles(p.dim(0), p.dim(1), p.dim(2), {2, 8, 64})) {
    auto w = load<2, 8, 64>(p, a, b, c);
    auto gt = load<2, 8, 64>(g, a, b, c) + w * wd;
    auto v = load<2, 8, 64>(buf, a, b, c) * mu + gt;
    store(buf, v, a, b, c);
    store(p, w - lr * (gt + mu * v), a, b, c);
  }
}

// Gradient clipping by a global norm over all ranks: per-tile sums of squares ([T] Sym, one per
// 4096-element tile), all-reduced; every block then sums the totals and scales its tile by
// min(1, max_norm / (norm + 1e-6)).
PK_KERNEL void clip_grad_global_norm(Tensor<f32, 1> g, Sym<f32, 1> part, Sym<f32, 1> total, float max_norm) {
  for (auto i : tiles(g.size(), {4096})) {
    auto t = load<1, 4096>(g, i);
    store(part, row_sum(t * t), i / 4096);
  }
  all_reduce(Sum, part, total);
  for (auto i : tiles(g.size(), {4096})) {
    auto ss = zeros<f32, 1, 1>();
    for (auto j : range(0, total.size(), 1024)) ss = ss + row_sum(load<1, 1024>(total, j));
    auto coef = min(max_norm / (sqrt(ss) + 1e-6f), 1.0f);
    store(g, load<1, 4096>(g, i) * coef, i);
  }
}

// Mixed-precision loss scaling: unscale fp16 gradients into f32, flag any inf/nan (x != x, or |x| above
// the largest finite f16), one flag per row ([M] Syms), reduce the flags over ranks with Max, and zero
// the whole update on overflow anywhere.
PK_KERNEL void unscale_check_overflow(Tensor<f16, 2> g16, Tensor<f32, 2> g, Sym<f32, 1> flag, Sym<f32, 1> gflag,
                                      float inv_scale) {
  for (auto m : tiles(g16.rows(), {16})) {
    auto t = cast<f32>(load<16, 512>(g16, m, 0));
    auto bad = max(cast<f32>(t != t), cast<f32>(abs(t) > 65504.0f));
    store(flag, row_max(bad), m);
  }
  all_reduce(Max, flag, gflag);
  for (auto m : tiles(g16.rows(), {16})) {
    auto any = zeros<f32, 1, 1>();
    for (auto j : range(0, gflag.size(), 1024)) any = max(any, row_max(load<1, 1024>(gflag, j)));
    auto ok = 1.0f - any;
    store(g, cast<f32>(load<16, 512>(g16, m, 0)) * inv_scale * ok, m, 0);
  }
}

// Dynamic loss-scale update from the overflow flag: halve on overflow, else grow by 2 every
// `interval` good steps (counter kept in an i32 [1] tensor).
PK_KERNEL void loss_scale_update(Tensor<f32, 1> found_inf, Tensor<f32, 1> scale, Tensor<i32, 1> good, index interval) {
  for (auto i : tiles(1, {1})) {
    auto f = load<1>(found_inf, i);
    auto gcount = where(f > 0.0f, zeros<i32, 1>(), load<1>(good, i) + 1);
    auto grow = gcount >= interval;
    auto s = load<1>(scale, i);
    auto ns = where(f > 0.0f, s * 0.5f, where(grow, s * 2.0f, s));
    store(scale, ns, i);
    store(good, where(grow, 0, gcount), i);
  }
}

// ============================================================================ Data / sequence / pipeline parallel

// DDP: three gradient buckets all-reduced (independent collectives) and averaged by 1/W in place.
PK_KERNEL void ddp_three_buckets_avg(Sym<f32, 1> b0, Sym<f32, 1> b1, Sym<bf16, 2> b2, Sym<f32, 1> o0,
                                     Sym<f32, 1> o1, Sym<bf16, 2> o2) {
  all_reduce(Sum, b0, o0);
  all_reduce(Sum, b1, o1);
  all_reduce(Sum, b2, o2);
  float inv_w = 1.0f / float(world_size());
  for (auto i : tiles(o0.size(), {2048})) store(o0, load<2048>(o0, i) * inv_w, i);
  for (auto i : tiles(o1.size(), {2048})) store(o1, load<2048>(o1, i) * inv_w, i);
  for (auto [r, c] : tiles(o2.rows(), o2.cols(), {16, 256}))
    store(o2, cast<bf16>(cast<f32>(load<16, 256>(o2, r, c)) * inv_w), r, c);
}

// ZeRO-1 step: reduce-scatter the gradient, SGD with weight decay on this rank's shard of the f32
// master weights, all-gather the updated shards into the bf16 full parameter.
PK_KERNEL void zero1_rs_sgd_ag(Sym<f32, 1> grad, Sym<f32, 1> gshard, Tensor<f32, 1> master, Sym<bf16, 1> pshard,
                               Sym<bf16, 1> pfull, float lr, float wd) {
  reduce_scatter(Sum, grad, gshard);
  for (auto i : tiles(gshard.size(), {1024})) {
    auto w = load<1024>(master, i);
    auto nw = w - lr * (load<1024>(gshard, i) + wd * w);
    store(master, nw, i);
    store(pshard, cast<bf16>(nw), i);
  }
  all_gather(pshard, pfull);
}

// Sequence-parallel LayerNorm forward: each rank normalises its [S/W, H] rows, then the normalised
// shards are all-gathered along the sequence into [S, H] for the tensor-parallel GEMM that follows.
PK_KERNEL void sp_layernorm_all_gather(Tensor<bf16, 2> x, Tensor<f32, 1> w, Tensor<f32, 1> b, Sym<bf16, 2> ln,
                                       Sym<bf16, 2> full, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 1024>(x, m, 0));
    auto valid = col_index<8, 1024>(0) < x.cols();
    float inv_n = 1.0f / float(x.cols());
    auto mu = row_sum(t) * inv_n;
    auto d = where(valid, t - mu, 0.0f);
    auto r = rsqrt(row_sum(d * d) * inv_n + eps);
    store(ln, cast<bf16>(d * r * load<1, 1024>(w, 0) + load<1, 1024>(b, 0)), m, 0);
  }
  all_gather(ln, full);
}

// Sequence-parallel residual block tail: reduce-scatter the row-parallel output along the sequence,
// add the residual shard and RMSNorm it (two outputs: the new residual and the normed activation).
PK_KERNEL void sp_rs_residual_rmsnorm(Sym<f32, 2> partial, Sym<f32, 2> shard, Tensor<f32, 2> resid,
                                      Tensor<f32, 2> w, Tensor<f32, 2> newres, Tensor<bf16, 2> y, float eps) {
  reduce_scatter(Sum, partial, shard);
  for (auto m : tiles(shard.rows(), {4})) {
    auto h = load<4, 2048>(shard, m, 0) + load<4, 2048>(resid, m, 0);
    store(newres, h, m, 0);
    auto r = rsqrt(row_sum(h * h) * (1.0f / float(shard.cols())) + eps);
    store(y, cast<bf16>(h * r * load<1, 2048>(w, 0, 0)), m, 0);
  }
}

// Pipeline-parallel activation send: every rank but the last pushes its [M, H] activations into the
// next stage's receive buffer (the last rank's loop has no tiles).
PK_KERNEL void pp_send_next_stage(Tensor<bf16, 2> act, Sym<bf16, 2> recv) {
  index sends = min(world_size() - 1 - rank(), 1);
  for (auto [m, n] : tiles(act.rows() * sends, act.cols(), {32, 128}))
    store(recv.on(next_rank()), load<32, 128>(act, m, n), m, n);
}

// Pipeline-parallel receive by pulls: every rank but the first pulls the previous stage's output
// (a Sym it wrote in an earlier phase of this kernel) and applies its stage's bias + GELU.
PK_KERNEL void pp_pull_prev_stage(Tensor<f32, 2> x, Sym<f32, 2> out, Tensor<f32, 1> bias, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(out, gelu(load<16, 128>(x, m, n)), m, n);
  index recvs = min(rank(), 1);
  for (auto [m, n] : tiles(x.rows() * recvs, x.cols(), {16, 128}))
    store(y, load<16, 128>(out.on(prev_rank()), m, n) + load<1, 128>(bias, n), m, n);
}

// ============================================================================ Inference

// Paged KV-cache gather: for sequence b, row j of the contiguous output is cache row
// block_table[b, j / bs] * bs + j % bs. The block table [B, MB] is read through a [B * MB, 1] view
// (load_rows of one column), the page size bs an integer argument.
PK_KERNEL void paged_kv_gather(Tensor<bf16, 2> cache, Tensor<i32, 2> table_flat, Tensor<bf16, 3> out, index bs,
                               index max_blocks) {
  for (auto [b, j, n] : tiles(out.dim(0), out.dim(1), out.dim(2), {1, 16, 128})) {
    auto row = cast<i32>(row_index<16, 1>(j));
    auto blk = load_rows<16, 1>(table_flat, row / bs + b * max_blocks, 0);
    auto slot = blk * bs + row % bs;
    store(out, load_rows<16, 128>(cache, slot, n), b, j, n);
  }
}

// Paged KV-cache append for decode: sequence b's new key row goes to page table[b, pos[b] / bs]
// at offset pos[b] % bs (i64 positions, i32 table [B * MB, 1]).
PK_KERNEL void paged_kv_append(Tensor<f16, 2> knew, Tensor<i64, 1> pos, Tensor<i32, 2> table_flat,
                               Tensor<f16, 2> cache, index bs, index max_blocks) {
  for (auto [b, n] : tiles(knew.rows(), knew.cols(), {8, 64})) {
    auto p = load<8, 1>(pos, b);
    auto seq = cast<i64>(row_index<8, 1>(b));
    auto page = cast<i64>(load_rows<8, 1>(table_flat, p / bs + seq * max_blocks, 0));
    store_rows(cache, load<8, 64>(knew, b, n), page * bs + p % bs, n);
  }
}

// Greedy sampling: argmax over a vocabulary chunked by 1024 (lowest index on ties), f32 logits [B, V],
// i64 token out [B]. The running best value and index are carried as 4 x 1 tiles.
PK_KERNEL void greedy_argmax_chunked(Tensor<f32, 2> logits, Tensor<i64, 1> token) {
  for (auto b : tiles(logits.rows(), {4})) {
    auto best = zeros<f32, 4, 1>() - 3.0e38f;
    auto arg = zeros<f32, 4, 1>();
    for (auto v : range(0, logits.cols(), 1024)) {
      auto cols = col_index<4, 1024>(v);
      auto x = where(cols < logits.cols(), load<4, 1024>(logits, b, v), -3.0e38f);
      auto mx = row_max(x);
      auto first = row_min(where(x == mx, cols, 3.0e38f));
      arg = where(mx > best, first, arg);
      best = max(best, mx);
    }
    store(token, cast<i64>(arg), b);
  }
}

// Top-k mask by k passes of "largest value below the previous threshold" (distinct values; ties
// count once), then everything below the k-th value is set to -inf. Rows of up to 512 (bf16).
PK_KERNEL void topk_mask_iterative(Tensor<bf16, 2> logits, Tensor<bf16, 2> out, index k) {
  for (auto b : tiles(logits.rows(), {8})) {
    auto x = where(col_index<8, 512>(0) < logits.cols(), cast<f32>(load<8, 512>(logits, b, 0)), -3.0e38f);
    auto thr = zeros<f32, 8, 1>() + 3.0e38f;
    for (auto i : range(0, k, 1)) thr = row_max(where(x < thr, x, -3.0e38f));
    store(out, cast<bf16>(where(x >= thr, x, -1e30f)), b, 0);
  }
}

// Repetition penalty (CTRL): for each previous token id of row b, logits[b, id] becomes logit / p
// if positive, logit * p otherwise. A copy first, then a gather / scatter of single elements through
// [B * V, 1] views (duplicate ids write the same value).
PK_KERNEL void repetition_penalty(Tensor<f32, 2> logits_flat, Tensor<i64, 2> prev, Tensor<f32, 2> out_flat,
                                  index vocab, float penalty) {
  for (auto i : tiles(logits_flat.rows(), {4096})) store(out_flat, load<4096, 1>(logits_flat, i, 0), i, 0);
  for (auto [b, l] : tiles(prev.rows(), prev.cols(), {1, 64})) {
    auto flat = transpose(load<1, 64>(prev, b, l)) + b * vocab;
    auto x = load_rows<64, 1>(logits_flat, flat, 0);
    store_rows(out_flat, where(x > 0.0f, x / penalty, x * penalty), flat, 0);
  }
}

// Speculative decoding, greedy verification: the accepted length of each row is the position of the
// first draft token that differs from the target model's argmax (K if all match). i32 [B, K] in.
PK_KERNEL void spec_decode_accept_len(Tensor<i32, 2> draft, Tensor<i32, 2> target, Tensor<i32, 1> accepted) {
  for (auto b : tiles(draft.rows(), {32})) {
    auto diff = cast<f32>(load<32, 8>(draft, b, 0) != load<32, 8>(target, b, 0));
    auto cols = col_index<32, 8>(0);
    auto first = row_min(where(diff * (cols < draft.cols()) > 0.0f, cols, float(draft.cols())));
    store(accepted, cast<i32>(first), b);
  }
}

// Speculative decoding, stochastic acceptance: token j is accepted if u < min(1, p_target / p_draft);
// the accepted prefix length is the first rejection. f32 probabilities of the drafted tokens [B, K].
PK_KERNEL void spec_decode_prob_accept(Tensor<f32, 2> pt, Tensor<f32, 2> pd, Tensor<f32, 2> u, Tensor<i64, 1> n_acc) {
  for (auto b : tiles(pt.rows(), {16})) {
    auto ratio = min(load<16, 16>(pt, b, 0) / max(load<16, 16>(pd, b, 0), 1e-20f), 1.0f);
    auto cols = col_index<16, 16>(0);
    auto reject = (load<16, 16>(u, b, 0) >= ratio) * (cols < pt.cols());
    store(n_acc, cast<i64>(row_min(where(reject > 0.0f, cols, float(pt.cols())))), b);
  }
}

// Beam search step: candidate score = beam score + log-prob, length-normalised by ((5 + len) / 6)^alpha;
// per-beam best candidate (value and token) over a chunked vocabulary. [B * beams, V] f32.
PK_KERNEL void beam_score_best(Tensor<f32, 2> logp, Tensor<f32, 1> beam_score, Tensor<f32, 1> best,
                               Tensor<i32, 1> best_tok, float len, float alpha) {
  float lp = 1.0f / pow((5.0f + len) / 6.0f, alpha);
  for (auto r : tiles(logp.rows(), {8})) {
    auto base = load<8, 1>(beam_score, r);
    auto bv = zeros<f32, 8, 1>() - 3.0e38f;
    auto bi = zeros<f32, 8, 1>();
    for (auto v : range(0, logp.cols(), 512)) {
      auto cols = col_index<8, 512>(v);
      auto sc = where(cols < logp.cols(), (load<8, 512>(logp, r, v) + base) * lp, -3.0e38f);
      auto mx = row_max(sc);
      bi = where(mx > bv, row_min(where(sc == mx, cols, 3.0e38f)), bi);
      bv = max(bv, mx);
    }
    store(best, bv, r);
    store(best_tok, cast<i32>(bi), r);
  }
}

// Gumbel-max sampling: argmax(logits / T - log(-log(u))) over rows of up to 2048 (f16 logits).
PK_KERNEL void gumbel_sample(Tensor<f16, 2> logits, Tensor<f32, 2> u, Tensor<i32, 1> tok, float inv_temp) {
  for (auto b : tiles(logits.rows(), {2})) {
    auto cols = col_index<2, 2048>(0);
    auto g = -log(-log(max(load<2, 2048>(u, b, 0), 1e-20f)));
    auto s = where(cols < logits.cols(), cast<f32>(load<2, 2048>(logits, b, 0)) * inv_temp + g, -3.0e38f);
    store(tok, cast<i32>(row_min(where(s == row_max(s), cols, 3.0e38f))), b);
  }
}

// ============================================================================ Scans, histograms, index math

// Multi-block inclusive prefix sum of a 1-D i32 array: phase 1 scans each 1024-tile and writes its
// total; phase 2 (one tile) scans the tile totals exclusively; phase 3 adds each tile's offset.
PK_KERNEL void prefix_sum_three_phase(Tensor<i32, 1> x, Tensor<i32, 1> y, Tensor<i32, 1> tile_tot,
                                      Tensor<i32, 1> tile_off) {
  for (auto i : tiles(x.size(), {1024})) {
    auto c = cumsum(load<1024>(x, i));
    store(y, c, i);
    store(tile_tot, cast<i32>(row_sum(cast<f32>(load<1, 1024>(x, i)))), i / 1024);  // exact below 2^24
  }
  for (auto i : tiles(1, {1})) {
    auto t = load<4096>(tile_tot, 0);
    store(tile_off, cumsum(t) - t, 0);
  }
  for (auto i : tiles(x.size(), {1024})) store(y, load<1024>(y, i) + tile_off.at(i / 1024), i);
}

// Token histogram over ranks: each rank counts ids 0..255 of its [T, K] i64 routing ids (padding not
// counted), then the counts are all-reduced; a single-tile kernel (ids up to 8192 x 4).
PK_KERNEL void expert_histogram_allreduce(Tensor<i64, 2> ids, Sym<i32, 1> cnt, Sym<i32, 1> gcnt) {
  for (auto t : tiles(1, {1})) store(cnt, histogram<256>(load<8192, 4>(ids, 0, 0)), 0);
  all_reduce(Sum, cnt, gcnt);
}

// Segment ids from sequence lengths (packed batch, up to 64 sequences): phase 1 stores the inclusive
// ends (cumsum of lens); phase 2 gives token t the number of ends <= t (its segment) and its position
// t - start of that segment. i32 throughout; tokens past the total get segment = number of sequences.
PK_KERNEL void segment_ids_from_lengths(Tensor<i32, 1> lens, Tensor<i32, 1> ends, Tensor<i32, 1> seg,
                                        Tensor<i32, 1> pos_in_seg) {
  for (auto t : tiles(1, {1})) store(ends, cumsum(load<64>(lens, 0)), 0);
  for (auto t : tiles(seg.size(), {256})) {
    auto tok = cast<i32>(row_index<256, 1>(t));
    auto e = load<1, 64>(ends, 0);
    auto st = e - load<1, 64>(lens, 0);
    auto valid = cast<i32>(col_index<256, 64>(0) < lens.size());
    auto sid = row_sum(cast<f32>((tok >= e) * valid));
    auto start = row_max(cast<f32>(where((st <= tok) * valid != 0, st, 0)));
    store(seg, cast<i32>(sid), t);
    store(pos_in_seg, tok - cast<i32>(start), t);
  }
}

// 4-D position ids with tails: pos[b, h, s, d] = (b * S + s) % period as i64, 16-row tiles of the
// trailing two dimensions walked 8 columns at a time (index tiles are 2-D only).
PK_KERNEL void position_ids_4d_i64(Tensor<i64, 4> pos, index period) {
  for (auto [b, h, s] : tiles(pos.dim(0), pos.dim(1), pos.dim(2), {1, 1, 16}))
    for (auto d : range(0, pos.dim(3), 8))
      store(pos, (cast<i64>(row_index<16, 8>(s)) + b * pos.dim(2)) % period, b, h, s, d);
}

// ============================================================================ More training pieces

// Vocabulary-parallel cross-entropy forward + backward in one kernel: global row max and sum of exps
// all-reduced, then each rank writes its shard's dlogits = (softmax - onehot) * dloss / T and the
// loss. Logits [T, V/W] bf16, targets [T] i32 (global ids), [T] workspaces.
PK_KERNEL void vocab_parallel_ce_fwd_bwd(Tensor<bf16, 2> logits, Tensor<i32, 1> target, Sym<f32, 1> lmax,
                                         Sym<f32, 1> gmax, Sym<f32, 2> lstat, Sym<f32, 2> gstat,
                                         Tensor<bf16, 2> dlogits, Tensor<f32, 1> loss, float dloss) {
  const index first = rank() * logits.cols();
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = zeros<f32, 16, 1>() - 3.0e38f;
    for (auto v : range(0, logits.cols(), 256))
      m = max(m, row_max(where(col_index<16, 256>(v) < logits.cols(), cast<f32>(load<16, 256>(logits, t, v)), -3.0e38f)));
    store(lmax, m, t);
  }
  all_reduce(Max, lmax, gmax);
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = load<16, 1>(gmax, t);
    auto want = cast<f32>(load<16, 1>(target, t) - first);
    auto se = zeros<f32, 16, 1>();
    auto picked = zeros<f32, 16, 1>();
    for (auto v : range(0, logits.cols(), 256)) {
      auto cols = col_index<16, 256>(v);
      auto x = cast<f32>(load<16, 256>(logits, t, v));
      se = se + row_sum(where(cols < logits.cols(), exp(x - m), 0.0f));
      picked = picked + row_sum(where(cols == want, x, 0.0f));
    }
    store(lstat, se, t, 0);
    store(lstat, picked, t, 1);
  }
  all_reduce(Sum, lstat, gstat);
  float g = dloss / float(logits.rows());
  for (auto [t, v] : tiles(logits.rows(), logits.cols(), {16, 256})) {
    auto lse = log(load<16, 1>(gstat, t, 0)) + load<16, 1>(gmax, t);
    auto want = cast<f32>(load<16, 1>(target, t) - first);
    auto p = exp(cast<f32>(load<16, 256>(logits, t, v)) - lse);
    store(dlogits, cast<bf16>((p - where(col_index<16, 256>(v) == want, 1.0f, 0.0f)) * g), t, v);
  }
  for (auto t : tiles(logits.rows(), {16}))
    store(loss, log(load<16, 1>(gstat, t, 0)) + load<16, 1>(gmax, t) - load<16, 1>(gstat, t, 1), t);
}

// Gradient accumulation over micro-batches: f32 accumulator += bf16 micro-batch gradient * 1/steps,
// 3-D [L, R, C] with a 1 x 24 x 40 tile (tails in both trailing dimensions).
PK_KERNEL void grad_accumulate_3d(Tensor<f32, 3> acc, Tensor<bf16, 3> g, float inv_steps) {
  for (auto [l, r, c] : tiles(acc.dim(0), acc.dim(1), acc.dim(2), {1, 24, 40}))
    store(acc, load<1, 24, 40>(acc, l, r, c) + cast<f32>(load<1, 24, 40>(g, l, r, c)) * inv_steps, l, r, c);
}

// EMA of weights (4-D conv-like [O, I, KH, KW] f16 params, f32 shadow): ema = d * ema + (1 - d) * p.
PK_KERNEL void ema_update_4d(Tensor<f16, 4> p, Tensor<f32, 4> ema, float decay) {
  for (auto [o, i, h] : tiles(p.dim(0), p.dim(1), p.dim(2), {2, 4, 3}))
    store(ema, load<2, 4, 3, 3>(ema, o, i, h, 0) * decay + cast<f32>(load<2, 4, 3, 3>(p, o, i, h, 0)) * (1.0f - decay),
          o, i, h, 0);
}

// Rotary embedding backward (half-split form): the inverse rotation of the gradient,
// dx1 = dy1 cos + dy2 sin, dx2 = dy2 cos - dy1 sin; [S, D] f32 with tables [S, D/2].
PK_KERNEL void rope_bwd_halves(Tensor<f32, 2> dy, Tensor<f32, 2> cos_t, Tensor<f32, 2> sin_t, Tensor<f32, 2> dx) {
  for (auto m : tiles(dy.rows(), {16})) {
    auto c = load<16, 64>(cos_t, m, 0);
    auto s = load<16, 64>(sin_t, m, 0);
    auto a = load<16, 64>(dy, m, 0);
    auto b = load<16, 64>(dy, m, 64);
    store(dx, a * c + b * s, m, 0);
    store(dx, b * c - a * s, m, 64);
  }
}

// The twenty-third user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only, as a new user writing the
// training step as Megatron-LM, DeepSpeed ZeRO, PyTorch FSDP and Apex's fused optimizers write it: backward
// passes of layer / RMS norm (dx, dgamma, dbeta with column sums over row tiles), softmax, GELU, SwiGLU, fused
// cross-entropy and dropout (the same seeded mask as the forward), Adam / AdamW / Lion / SGD-momentum updates in
// place on f32 master weights with bf16 copies, global-norm clipping all-reduced across ranks, loss scaling with
// an all-reduced inf / NaN check that skips the step, gradient accumulation, bucketed all-reduce, ZeRO-1/2 style
// reduce-scatter + sharded step + all-gather, weight-decay masks, EMA, and GEMM backward (dX = dY W, dW = dYᵀ X,
// sequence-parallel all-gather before and reduce-scatter after). Nothing assumes a world size: the kernels are
// meant for W = 1, 2, 3, 5 (shapes that must divide by W say so). Each kernel compiles alone (pkc FILE --kernel
// NAME) and the file compiles as a whole. Each kernel's comment gives its exact semantics (W = world_size(),
// r = rank(); "x[i]" of a Sym is this rank's copy unless said otherwise). Part (b) is user_specs23_bad.pk.cpp;
// findings in test/specs/specs23_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ Norm backward

// LayerNorm backward in one kernel (Apex fused_layer_norm_cuda's cuComputeGradInput + cuComputePartGradGammaBeta):
// x, dy bf16 [T, H] with H <= 1024; gamma bf16 [1, H]; mean, rstd f32 [T, 1] saved by the forward.
// xhat = (x - mean) * rstd; g = dy * gamma;
// dx[t, :] = rstd[t] * (g - mean_j(g[t, j]) - xhat * mean_j(g[t, j] * xhat[t, j]))  (bf16, means over the H columns);
// dgamma[0, j] = sum_t dy[t, j] * xhat[t, j], dbeta[0, j] = sum_t dy[t, j]  (f32 [1, H], zeroed by the kernel).
// The padding columns of x read 0, so xhat there is -mean * rstd: dy there is 0, so g * xhat adds nothing.
PK_KERNEL void layernorm_bwd_dx_dgamma_dbeta(Tensor<bf16, 2> x, Tensor<bf16, 2> dy, Tensor<bf16, 2> gamma,
                                             Tensor<f32, 2> mean, Tensor<f32, 2> rstd, Tensor<bf16, 2> dx,
                                             Tensor<f32, 2> dgamma, Tensor<f32, 2> dbeta) {
  for (auto z : tiles(1, {1})) {
    store(dgamma, zeros<f32, 1, 1024>(), 0, 0);
    store(dbeta, zeros<f32, 1, 1024>(), 0, 0);
  }
  float inv_h = 1.0f / float(x.cols());
  for (auto t : tiles(x.rows(), {8})) {
    auto r = load<8, 1>(rstd, t, 0);
    auto xhat = (cast<f32>(load<8, 1024>(x, t, 0)) - load<8, 1>(mean, t, 0)) * r;
    auto d = cast<f32>(load<8, 1024>(dy, t, 0));
    auto g = d * cast<f32>(load<1, 1024>(gamma, 0, 0));
    auto mg = row_sum(g) * inv_h;
    auto mgx = row_sum(g * xhat) * inv_h;
    store(dx, cast<bf16>(r * (g - mg - xhat * mgx)), t, 0);
    store_add(dgamma, transpose(row_sum(transpose(d * xhat))), 0, 0);
    store_add(dbeta, reshape<1, 1024>(row_sum(transpose(d))), 0, 0);
  }
}

// RMSNorm backward for rows of any width (T5 / LLaMA RMSNorm, no saved statistics): x, dy f32 [T, H], w f32 [1, H].
// rstd[t] = 1 / sqrt(mean_j x[t, j]^2 + eps) (recomputed); c[t] = mean_j (dy * w * x)[t, j];
// dx = rstd * (dy * w - x * rstd^2 * c); dw[0, j] += sum_t dy[t, j] * x[t, j] * rstd[t]  (dw f32 [1, H], added
// into what it holds: gradient accumulation across micro-batches, not zeroed here).
// Two passes over 256-column chunks per 8-row tile.
PK_KERNEL void rmsnorm_bwd_wide_rows(Tensor<f32, 2> x, Tensor<f32, 2> dy, Tensor<f32, 2> w, Tensor<f32, 2> dx,
                                     Tensor<f32, 2> dw, float eps) {
  float inv_h = 1.0f / float(x.cols());
  for (auto t : tiles(x.rows(), {8})) {
    auto ss = zeros<f32, 8, 1>();
    auto dot = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 256)) {
      auto xt = load<8, 256>(x, t, n);
      ss = ss + row_sum(xt * xt);
      dot = dot + row_sum(load<8, 256>(dy, t, n) * load<1, 256>(w, 0, n) * xt);
    }
    auto rs = rsqrt(ss * inv_h + eps);
    auto c = dot * inv_h;
    for (auto n : range(0, x.cols(), 256)) {
      auto xt = load<8, 256>(x, t, n);
      auto d = load<8, 256>(dy, t, n);
      store(dx, rs * (d * load<1, 256>(w, 0, n) - xt * rs * rs * c), t, n);
      store_add(dw, transpose(row_sum(transpose(d * xt * rs))), 0, n);
    }
  }
}

// Sequence-parallel RMSNorm weight gradient (Megatron sequence_parallel: each rank holds T/W rows of x and dy,
// the weight is replicated and its gradient all-reduced): x, dy bf16 [Tl, H] (this rank's rows), rstd f32 [Tl, 1];
// part Sym f32 [1, H] := sum over this rank's rows of dy * x * rstd (zeroed first), then
// part := sum over ranks of part (in place); dw bf16 [1, H] = part (every rank the same).
PK_KERNEL void sp_rmsnorm_bwd_dw_allreduce(Tensor<bf16, 2> x, Tensor<bf16, 2> dy, Tensor<f32, 2> rstd,
                                           Sym<f32, 2> part, Tensor<bf16, 2> dw) {
  for (auto n : tiles(part.cols(), {512})) store(part, zeros<f32, 1, 512>(), 0, n);
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto v = cast<f32>(load<32, 128>(dy, t, n)) * cast<f32>(load<32, 128>(x, t, n)) * load<32, 1>(rstd, t, 0);
    store_add(part, transpose(row_sum(transpose(v))), 0, n);
  }
  all_reduce(Sum, part, part);
  for (auto n : tiles(part.cols(), {512})) store(dw, cast<bf16>(load<1, 512>(part, 0, n)), 0, n);
}

// ============================================================================ Activation / loss backward

// Softmax backward for rows wider than a tile (attention probabilities saved as y): y, dy f32 [T, V];
// dx[t, :] = y[t, :] * (dy[t, :] - sum_j dy[t, j] * y[t, j]). Two passes over 512-column chunks.
PK_KERNEL void softmax_bwd_wide(Tensor<f32, 2> y, Tensor<f32, 2> dy, Tensor<f32, 2> dx) {
  for (auto t : tiles(y.rows(), {4})) {
    auto dot = zeros<f32, 4, 1>();
    for (auto n : range(0, y.cols(), 512)) dot = dot + row_sum(load<4, 512>(y, t, n) * load<4, 512>(dy, t, n));
    for (auto n : range(0, y.cols(), 512)) {
      auto yt = load<4, 512>(y, t, n);
      store(dx, yt * (load<4, 512>(dy, t, n) - dot), t, n);
    }
  }
}

// GELU (tanh form) backward in place on the incoming gradient (Megatron's bias_gelu_back without the bias):
// x bf16 [T, F]; g bf16 [T, F] holds dy on entry and dx on exit:
// u = 0.79788456 * (x + 0.044715 x^3), th = tanh(u);
// g := dy * (0.5 (1 + th) + 0.5 x (1 - th^2) * 0.79788456 * (1 + 3 * 0.044715 x^2)).
PK_KERNEL void gelu_bwd_inplace(Tensor<bf16, 2> x, Tensor<bf16, 2> g) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto xt = cast<f32>(load<16, 256>(x, t, n));
    auto th = tanh(0.79788456f * (xt + 0.044715f * xt * xt * xt));
    auto dg = 0.5f * (1.0f + th) + 0.5f * xt * (1.0f - th * th) * 0.79788456f * (1.0f + 0.134145f * xt * xt);
    store(g, cast<bf16>(cast<f32>(load<16, 256>(g, t, n)) * dg), t, n);
  }
}

// Bias + GELU backward with the bias gradient (Megatron bias_gelu_back + the dbias column sum):
// x = h + bias (h bf16 [T, F], bias bf16 [1, F]); dx bf16 [T, F] = dy * gelu'(x) (tanh form, as above);
// dbias f32 [1, F] = sum_t dx[t, :] in f32 before rounding (zeroed by the kernel first).
PK_KERNEL void bias_gelu_bwd_dbias(Tensor<bf16, 2> h, Tensor<bf16, 2> bias, Tensor<bf16, 2> dy, Tensor<bf16, 2> dx,
                                   Tensor<f32, 2> dbias) {
  for (auto n : tiles(dbias.cols(), {256})) store(dbias, zeros<f32, 1, 256>(), 0, n);
  for (auto [t, n] : tiles(h.rows(), h.cols(), {32, 128})) {
    auto xt = cast<f32>(load<32, 128>(h, t, n)) + cast<f32>(load<1, 128>(bias, 0, n));
    auto th = tanh(0.79788456f * (xt + 0.044715f * xt * xt * xt));
    auto dg = 0.5f * (1.0f + th) + 0.5f * xt * (1.0f - th * th) * 0.79788456f * (1.0f + 0.134145f * xt * xt);
    auto d = cast<f32>(load<32, 128>(dy, t, n)) * dg;
    store(dx, cast<bf16>(d), t, n);
    store_add(dbias, transpose(row_sum(transpose(d))), 0, n);
  }
}

// SwiGLU backward on the packed gate|up projection (Megatron's fused [T, 2F] output, gate first), viewed as
// [T, 2, F] so that a tile clips at its own half: hp bf16 [T, 2, F], gate = hp[:, 0, :], up = hp[:, 1, :];
// dy bf16 [T, F] (gradient of silu(gate) * up); s = sigmoid(gate); dgate = dy * up * s * (1 + gate * (1 - s));
// dup = dy * gate * s; dhp bf16 [T, 2, F]: dhp[:, 0, :] = dgate, dhp[:, 1, :] = dup.
PK_KERNEL void swiglu_bwd_packed(Tensor<bf16, 3> hp, Tensor<bf16, 2> dy, Tensor<bf16, 3> dhp) {
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {16, 128})) {
    auto gt = reshape<16, 128>(cast<f32>(load<16, 1, 128>(hp, t, 0, n)));
    auto ut = reshape<16, 128>(cast<f32>(load<16, 1, 128>(hp, t, 1, n)));
    auto d = cast<f32>(load<16, 128>(dy, t, n));
    auto s = sigmoid(gt);
    store(dhp, reshape<16, 1, 128>(cast<bf16>(d * ut * s * (1.0f + gt * (1.0f - s)))), t, 0, n);
    store(dhp, reshape<16, 1, 128>(cast<bf16>(d * gt * s)), t, 1, n);
  }
}

// Cross-entropy forward + backward fused with the softmax (Megatron / Apex xentropy, one vocabulary shard):
// logits bf16 [T, V] (any V), target i32 [T, 1] with ignore_index -100; scale = 1 / (number of counted tokens),
// an argument. lse[t] = log sum_j exp(logits[t, j]); loss f32 [T, 1] = (lse - logits[t, target[t]]) * scale, or 0
// where target = -100; dlogits bf16 [T, V] = (exp(logits - lse) - (j == target)) * scale, or 0 where target = -100.
// Pass 1: online max / sum over 1024-column chunks (padding columns masked to -inf-ish); pass 2: the gradient.
PK_KERNEL void cross_entropy_fused_fwd_bwd(Tensor<bf16, 2> logits, Tensor<i32, 2> target, Tensor<f32, 2> loss,
                                           Tensor<bf16, 2> dlogits, float scale) {
  for (auto t : tiles(logits.rows(), {4})) {
    auto tg = load<4, 1>(target, t, 0);
    auto mx = zeros<f32, 4, 1>() - 1e30f;
    auto sm = zeros<f32, 4, 1>();
    auto picked = zeros<f32, 4, 1>();
    for (auto n : range(0, logits.cols(), 1024)) {
      auto cols = col_index<4, 1024>(n);
      auto z = where(cols < logits.cols(), cast<f32>(load<4, 1024>(logits, t, n)), -1e30f);
      auto nm = max(mx, row_max(z));
      sm = sm * exp(mx - nm) + row_sum(exp(z - nm));
      mx = nm;
      picked = picked + row_sum(where(cast<i32>(cols) == tg, z, 0.0f));
    }
    auto lse = mx + log(sm);
    auto keep = tg != -100;
    store(loss, where(keep, (lse - picked) * scale, 0.0f), t, 0);
    for (auto n : range(0, logits.cols(), 1024)) {
      auto cols = col_index<4, 1024>(n);
      auto p = exp(cast<f32>(load<4, 1024>(logits, t, n)) - lse);
      auto gr = (p - cast<f32>(cast<i32>(cols) == tg)) * scale;
      store(dlogits, cast<bf16>(where(keep, gr, 0.0f)), t, n);
    }
  }
}

// Dropout forward and backward with one seeded mask, written with different tile shapes (the forward on
// 16 x 128 tiles, the backward on 64 x 32) as two kernels of one training step:
// keep[t, j] = uniform(seed, t, j) >= p (the element's coordinates only, so the tiling does not matter);
// forward: y = keep ? x / (1 - p) : 0; backward: dx = keep ? dy / (1 - p) : 0. bf16 [T, H].
PK_KERNEL void dropout_fwd(Tensor<bf16, 2> x, Tensor<bf16, 2> y, index seed, float p) {
  float k = 1.0f / (1.0f - p);
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, cast<bf16>(where(uniform<16, 128>(seed, t, n) >= p, cast<f32>(load<16, 128>(x, t, n)) * k, 0.0f)), t, n);
}
PK_KERNEL void dropout_bwd(Tensor<bf16, 2> dy, Tensor<bf16, 2> dx, index seed, float p) {
  float k = 1.0f / (1.0f - p);
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {64, 32}))
    store(dx, cast<bf16>(where(uniform<64, 32>(seed, t, n) >= p, cast<f32>(load<64, 32>(dy, t, n)) * k, 0.0f)), t, n);
}

// Residual-dropout backward on [B, S, H] activations with a per-layer seed (seed + layer): dres = dy (the
// residual path) plus dx = keep ? dy / (1 - p) : 0 with keep[b, s, h] = uniform(seed + layer, b, s, h) >= p.
// Both outputs bf16 [B, S, H].
PK_KERNEL void residual_dropout_bwd_3d(Tensor<bf16, 3> dy, Tensor<bf16, 3> dres, Tensor<bf16, 3> dx, index seed,
                                       index layer, float p) {
  for (auto [b, s, h] : tiles(dy.dim(0), dy.dim(1), dy.dim(2), {1, 16, 128})) {
    auto d = cast<f32>(load<1, 16, 128>(dy, b, s, h));
    store(dres, cast<bf16>(d), b, s, h);
    store(dx, cast<bf16>(where(uniform<1, 16, 128>(seed + layer, b, s, h) >= p, d / (1.0f - p), 0.0f)), b, s, h);
  }
}

// ============================================================================ Optimizers (in place)

// Apex multi_tensor_adam (AdamW, decoupled weight decay) over two parameter tensors of different shapes in
// one launch: for each of (w0 [N0], g0 bf16 [N0]) and (w1 [R, C], g1 bf16 [R, C]), f32 master weights w,
// moments m, v (f32), bf16 model copy h; step >= 1:
// m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; mh = m / (1 - b1^step); vh = v / (1 - b2^step);
// w = w - lr * (mh / (sqrt(vh) + eps) + wd * w); h = bf16(w). Everything updated in place.
PK_KERNEL void multi_tensor_adamw(Tensor<f32, 1> w0, Tensor<bf16, 1> g0, Tensor<f32, 1> m0, Tensor<f32, 1> v0,
                                  Tensor<bf16, 1> h0, Tensor<f32, 2> w1, Tensor<bf16, 2> g1, Tensor<f32, 2> m1,
                                  Tensor<f32, 2> v1, Tensor<bf16, 2> h1, float lr, float b1, float b2, float eps,
                                  float wd, index step) {
  float bc1 = 1.0f - pow(b1, float(step));
  float bc2 = 1.0f - pow(b2, float(step));
  for (auto i : tiles(w0.size(), {2048})) {
    auto g = cast<f32>(load<2048>(g0, i));
    auto m = b1 * load<2048>(m0, i) + (1.0f - b1) * g;
    auto v = b2 * load<2048>(v0, i) + (1.0f - b2) * g * g;
    auto w = load<2048>(w0, i);
    auto nw = w - lr * ((m / bc1) / (sqrt(v / bc2) + eps) + wd * w);
    store(m0, m, i);
    store(v0, v, i);
    store(w0, nw, i);
    store(h0, cast<bf16>(nw), i);
  }
  for (auto [r, c] : tiles(w1.rows(), w1.cols(), {8, 256})) {
    auto g = cast<f32>(load<8, 256>(g1, r, c));
    auto m = b1 * load<8, 256>(m1, r, c) + (1.0f - b1) * g;
    auto v = b2 * load<8, 256>(v1, r, c) + (1.0f - b2) * g * g;
    auto w = load<8, 256>(w1, r, c);
    auto nw = w - lr * ((m / bc1) / (sqrt(v / bc2) + eps) + wd * w);
    store(m1, m, r, c);
    store(v1, v, r, c);
    store(w1, nw, r, c);
    store(h1, cast<bf16>(nw), r, c);
  }
}

// AdamW with a weight-decay mask (no decay for biases and norm weights, Megatron's no_weight_decay_cond as a
// per-element i32 mask, 1 = decay): w, m, v f32 [N], g f32 [N], dmask i32 [N];
// same update as above with wd replaced by wd * (dmask != 0), no bias correction (bc = 1).
PK_KERNEL void adamw_decay_mask(Tensor<f32, 1> w, Tensor<f32, 1> g, Tensor<f32, 1> m, Tensor<f32, 1> v,
                                Tensor<i32, 1> dmask, float lr, float b1, float b2, float eps, float wd) {
  for (auto i : tiles(w.size(), {1024})) {
    auto gt = load<1024>(g, i);
    auto mt = b1 * load<1024>(m, i) + (1.0f - b1) * gt;
    auto vt = b2 * load<1024>(v, i) + (1.0f - b2) * gt * gt;
    auto wt = load<1024>(w, i);
    auto decay = where(load<1024>(dmask, i) != 0, wd, 0.0f);
    store(m, mt, i);
    store(v, vt, i);
    store(w, wt - lr * (mt / (sqrt(vt) + eps) + decay * wt), i);
  }
}

// Lion on f32 master weights with a bf16 copy (2-D): c = b1 m + (1 - b1) g; u = sign(c) (0 at 0);
// w = w (1 - lr wd) - lr u; m = b2 m + (1 - b2) g; h = bf16(w). g bf16 [R, C].
PK_KERNEL void lion_master_bf16(Tensor<f32, 2> w, Tensor<bf16, 2> g, Tensor<f32, 2> m, Tensor<bf16, 2> h, float lr,
                                float b1, float b2, float wd) {
  for (auto [r, c] : tiles(w.rows(), w.cols(), {16, 128})) {
    auto gt = cast<f32>(load<16, 128>(g, r, c));
    auto mt = load<16, 128>(m, r, c);
    auto cc = b1 * mt + (1.0f - b1) * gt;
    auto u = where(cc > 0.0f, 1.0f, where(cc < 0.0f, -1.0f, 0.0f));
    auto nw = load<16, 128>(w, r, c) * (1.0f - lr * wd) - lr * u;
    store(w, nw, r, c);
    store(m, b2 * mt + (1.0f - b2) * gt, r, c);
    store(h, cast<bf16>(nw), r, c);
  }
}

// torch.optim.SGD with momentum, dampening and Nesterov, including the first-step rule (the buffer starts as g):
// g' = g + wd * w; buf = first ? g' : mu * buf + (1 - damp) * g'; d = nesterov ? g' + mu * buf : buf;
// w = w - lr * d. first and nesterov are integer arguments (0 / 1). f32 [N].
PK_KERNEL void sgd_momentum_torch(Tensor<f32, 1> w, Tensor<f32, 1> g, Tensor<f32, 1> buf, float lr, float mu,
                                  float damp, float wd, index first, index nesterov) {
  float fst = float(first);
  float nes = float(nesterov);
  for (auto i : tiles(w.size(), {4096})) {
    auto wt = load<4096>(w, i);
    auto gt = load<4096>(g, i) + wd * wt;
    // a select, not a blend: on the first step buf may hold anything (NaN included)
    auto b = where(zeros<f32, 4096>() + fst != 0.0f, gt, mu * load<4096>(buf, i) + (1.0f - damp) * gt);
    auto d = nes * (gt + mu * b) + (1.0f - nes) * b;
    store(buf, b, i);
    store(w, wt - lr * d, i);
  }
}

// EMA of the weights with warmup (timm ModelEmaV2 / torch swa_utils style): decay = min(d_max, (1 + step) /
// (10 + step)); ema = decay * ema + (1 - decay) * bf16-model-weight. ema f32 [R, C], model bf16 [R, C].
PK_KERNEL void ema_weights_warmup(Tensor<f32, 2> ema, Tensor<bf16, 2> model, float d_max, index step) {
  float d = min(d_max, (1.0f + float(step)) / (10.0f + float(step)));
  for (auto [r, c] : tiles(ema.rows(), ema.cols(), {32, 128}))
    store(ema, d * load<32, 128>(ema, r, c) + (1.0f - d) * cast<f32>(load<32, 128>(model, r, c)), r, c);
}

// Gradient accumulation across micro-batches (Megatron main_grad): main f32 [R, C] += bf16 grad [R, C]; on the
// last micro-batch (last = 1) the accumulated gradient is also averaged (times inv_steps) and written to the
// bf16 grad for the optimizer, and main is reset to 0 for the next step. Otherwise grad is left as it was.
PK_KERNEL void grad_accum_microbatch(Tensor<f32, 2> main, Tensor<bf16, 2> grad, float inv_steps, index last) {
  float is_last = float(last);
  for (auto [r, c] : tiles(main.rows(), main.cols(), {16, 256})) {
    auto g = cast<f32>(load<16, 256>(grad, r, c));
    auto acc = load<16, 256>(main, r, c) + g;
    store(main, acc * (1.0f - is_last), r, c);
    store(grad, cast<bf16>(where(zeros<f32, 16, 256>() + is_last != 0.0f, acc * inv_steps, g)), r, c);
  }
}

// ============================================================================ Clipping and loss scaling across ranks

// Global-norm gradient clipping over two gradient tensors and all data-parallel ranks (torch clip_grad_norm_
// after DDP): ss (Sym f32 [1, 1]) := sum over ranks of (sum g0^2 + sum g1^2), zeroed first, added from every
// tile (store_add into this rank's copy) and all-reduced in place; coef = min(1, max_norm / (sqrt(ss) + 1e-6));
// g0 (f32 [N]) and g1 (bf16 [R, C]) scaled by coef in place. norm_out f32 [1, 1] = sqrt(ss).
PK_KERNEL void clip_global_norm_two_tensors(Tensor<f32, 1> g0, Tensor<bf16, 2> g1, Sym<f32, 2> ss,
                                            Tensor<f32, 2> norm_out, float max_norm) {
  for (auto z : tiles(1, {1})) store(ss, zeros<f32, 1, 1>(), 0, 0);
  for (auto i : tiles(g0.size(), {4096})) {
    auto t = load<1, 4096>(g0, i);
    store_add(ss, row_sum(t * t), 0, 0);
  }
  for (auto [r, c] : tiles(g1.rows(), g1.cols(), {16, 256})) {
    auto t = cast<f32>(load<16, 256>(g1, r, c));
    store_add(ss, transpose(row_sum(transpose(row_sum(t * t)))), 0, 0);
  }
  all_reduce(Sum, ss, ss);
  for (auto z : tiles(1, {1})) store(norm_out, sqrt(load<1, 1>(ss, 0, 0)), 0, 0);
  for (auto i : tiles(g0.size(), {4096})) {
    auto coef = min(max_norm / (sqrt(load<1, 1>(ss, 0, 0)) + 1e-6f), 1.0f);
    store(g0, load<1, 4096>(g0, i) * coef, i);
  }
  for (auto [r, c] : tiles(g1.rows(), g1.cols(), {16, 256})) {
    auto coef = min(max_norm / (sqrt(load<1, 1>(ss, 0, 0)) + 1e-6f), 1.0f);
    store(g1, cast<bf16>(cast<f32>(load<16, 256>(g1, r, c)) * coef), r, c);
  }
}

// Mixed-precision step with dynamic loss scaling and a skipped step (Apex amp / DeepSpeed fp16 optimizer):
// g16 f16 [N] holds loss_scale * grad. found (Sym f32 [1, 1]) := max over ranks and elements of
// (g16 is inf or NaN ? 1 : 0), zeroed first, each tile's flag max-ed in through a [1, T] Sym of per-tile flags
// (tile i's flag at column i / 2048, so the Sym needs ceil(N / 2048) columns), all-reduced by Max in place.
// If found == 0: SGD step w = w - lr * g16 / loss_scale (w f32 [N]); else w unchanged. The scale state:
// scale f32 [1, 1]: halved when found, else unchanged (growth handled elsewhere).
PK_KERNEL void amp_unscale_skip_step(Tensor<f16, 1> g16, Tensor<f32, 1> w, Sym<f32, 2> flags, Tensor<f32, 2> scale,
                                     float lr) {
  for (auto i : tiles(g16.size(), {2048})) {
    auto t = cast<f32>(load<1, 2048>(g16, i));
    auto bad = (t != t) || (abs(t) > 65504.0f);
    store(flags, row_max(cast<f32>(bad)), 0, i / 2048);
  }
  all_reduce(Max, flags, flags);
  for (auto i : tiles(g16.size(), {2048})) {
    auto any = zeros<f32, 1, 1>();
    for (auto j : range(0, flags.cols(), 256)) any = max(any, row_max(load<1, 256>(flags, 0, j)));
    auto inv = 1.0f / load<1, 1>(scale, 0, 0);
    auto wt = load<1, 2048>(w, i);
    store(w, where(any > 0.0f, wt, wt - lr * cast<f32>(load<1, 2048>(g16, i)) * inv), i);
  }
  for (auto z : tiles(1, {1})) {
    auto any = zeros<f32, 1, 1>();
    for (auto j : range(0, flags.cols(), 256)) any = max(any, row_max(load<1, 256>(flags, 0, j)));
    auto s = load<1, 1>(scale, 0, 0);
    store(scale, where(any > 0.0f, s * 0.5f, s), 0, 0);
  }
}

// ============================================================================ ZeRO / FSDP / DDP buckets

// ZeRO-2 step (DeepSpeed stage 2 with bf16 gradients): grad Sym bf16 [N] (N a multiple of W), this rank's
// gradient of the whole flat parameter; gsh Sym bf16 [N / W] := rank r's shard of sum over ranks of grad
// (reduce-scatter); AdamW (bias-corrected by bc1, bc2 given by the host) on this rank's f32 master shard
// master, m, v [N / W] with the averaged gradient g = gsh / W; psh Sym bf16 [N / W] = bf16(master);
// params Sym bf16 [N] := concatenation over ranks of psh (all-gather).
PK_KERNEL void zero2_rs_adamw_ag(Sym<bf16, 1> grad, Sym<bf16, 1> gsh, Tensor<f32, 1> master, Tensor<f32, 1> m,
                                 Tensor<f32, 1> v, Sym<bf16, 1> psh, Sym<bf16, 1> params, float lr, float b1,
                                 float b2, float eps, float wd, float bc1, float bc2) {
  reduce_scatter(Sum, grad, gsh);
  float inv_w = 1.0f / float(world_size());
  for (auto i : tiles(gsh.size(), {1024})) {
    auto g = cast<f32>(load<1024>(gsh, i)) * inv_w;
    auto mt = b1 * load<1024>(m, i) + (1.0f - b1) * g;
    auto vt = b2 * load<1024>(v, i) + (1.0f - b2) * g * g;
    auto w = load<1024>(master, i);
    auto nw = w - lr * ((mt / bc1) / (sqrt(vt / bc2) + eps) + wd * w);
    store(m, mt, i);
    store(v, vt, i);
    store(master, nw, i);
    store(psh, cast<bf16>(nw), i);
  }
  all_gather(psh, params);
}

// The same step in place with NCCL's layout (torch FSDP's flat parameter): g Sym f32 [N] (N a multiple of W)
// is reduce-scattered in place, so chunk r = g[r N/W, (r+1) N/W) holds the summed shard; SGD with momentum on
// that chunk: buf[i] = mu buf[i] + g[r N/W + i] / W, master[i] -= lr buf[i] (buf, master f32 [N / W]);
// p Sym bf16 [N]: chunk r := bf16(master), then p is all-gathered in place (chunk j from rank j).
PK_KERNEL void fsdp_inplace_rs_sgd_ag(Sym<f32, 1> g, Tensor<f32, 1> buf, Tensor<f32, 1> master, Sym<bf16, 1> p,
                                      float lr, float mu) {
  reduce_scatter(Sum, g, g);
  index sh = g.size() / world_size();
  float inv_w = 1.0f / float(world_size());
  for (auto i : tiles(sh, {1024})) {
    auto b = mu * load<1024>(buf, i) + load<1024>(g, rank() * sh + i) * inv_w;
    auto nw = load<1024>(master, i) - lr * b;
    store(buf, b, i);
    store(master, nw, i);
    store(p, cast<bf16>(nw), rank() * sh + i);
  }
  all_gather(p, p);
}

// FSDP on a 2-D weight sharded by rows: grad Sym bf16 [R, C] (R a multiple of W); gsh16 Sym bf16 [R / W, C] :=
// rank r's row block of the sum over ranks of grad (reduce-scatter, summed in fp32, rounded to bf16 once);
// w f32 [R / W, C] master rows; w -= lr * (f32(gsh16) / W);
// wsh Sym bf16 [R / W, C] = bf16(w); wfull Tensor bf16 [R, C] := all-gather of wsh (each rank pulls into its own).
PK_KERNEL void fsdp_rows_rs_sgd_ag(Sym<bf16, 2> grad, Sym<bf16, 2> gsh16, Tensor<f32, 2> w, Sym<bf16, 2> wsh,
                                   Tensor<bf16, 2> wfull, float lr) {
  reduce_scatter(Sum, grad, gsh16);
  float inv_w = 1.0f / float(world_size());
  for (auto [r, c] : tiles(w.rows(), w.cols(), {16, 256})) {
    auto nw = load<16, 256>(w, r, c) - lr * inv_w * cast<f32>(load<16, 256>(gsh16, r, c));
    store(w, nw, r, c);
    store(wsh, cast<bf16>(nw), r, c);
  }
  all_gather(wsh, wfull);
}

// Column-sharded variant (tensor dimension 1, Megatron's distributed optimizer on a [R, C] weight split by columns,
// C a multiple of W): gsh Sym f32 [R, C / W] := column block r of the sum over ranks of grad (f32 [R, C]);
// SGD on the master block w = w - lr * gsh; wsh Sym f32 [R, C / W] = w; wfull Sym f32 [R, C] :=
// all-gather of the column blocks along dimension 1.
PK_KERNEL void zero_cols_rs_sgd_ag(Sym<f32, 2> grad, Sym<f32, 2> gsh, Tensor<f32, 2> w, Sym<f32, 2> wsh,
                                   Sym<f32, 2> wfull, float lr) {
  reduce_scatter(Sum, grad, gsh, 1);
  for (auto [r, c] : tiles(w.rows(), w.cols(), {8, 128})) {
    auto nw = load<8, 128>(w, r, c) - lr * load<8, 128>(gsh, r, c);
    store(w, nw, r, c);
    store(wsh, nw, r, c);
  }
  all_gather(wsh, wfull, 1);
}

// DDP bucketing (torch DDP's flat bucket): three gradients g0 f32 [N0], g1 f32 [N1], g2 f32 [N2] are packed into
// one Sym bucket f32 at offsets 0, o1 = ceil(N0 / 1024) * 1024, o2 = o1 + ceil(N1 / 1024) * 1024 (each start a
// whole number of 1024-element tiles apart so a partial tile's zeros land in the gap; the bucket holds at least
// o2 + N2 elements), pre-divided by W (gradient_predivide_factor = W); the bucket is all-reduced in place; each
// gradient is copied back from its offset. Result: g_k = sum over ranks of g_k / W.
PK_KERNEL void ddp_bucket_pack_allreduce_unpack(Tensor<f32, 1> g0, Tensor<f32, 1> g1, Tensor<f32, 1> g2,
                                                Sym<f32, 1> bucket) {
  index o1 = (g0.size() + 1023) / 1024 * 1024;
  index o2 = o1 + (g1.size() + 1023) / 1024 * 1024;
  float inv_w = 1.0f / float(world_size());
  for (auto i : tiles(g0.size(), {1024})) store(bucket, load<1024>(g0, i) * inv_w, i);
  for (auto i : tiles(g1.size(), {1024})) store(bucket, load<1024>(g1, i) * inv_w, o1 + i);
  for (auto i : tiles(g2.size(), {1024})) store(bucket, load<1024>(g2, i) * inv_w, o2 + i);
  all_reduce(Sum, bucket, bucket);
  for (auto i : tiles(g0.size(), {1024})) store(g0, load<1024>(bucket, i), i);
  for (auto i : tiles(g1.size(), {1024})) store(g1, load<1024>(bucket, o1 + i), i);
  for (auto i : tiles(g2.size(), {1024})) store(g2, load<1024>(bucket, o2 + i), i);
}

// DDP with bf16 gradient compression (torch's bf16_compress_hook) and accumulation into the f32 main gradient:
// c Sym bf16 [R, C] = bf16(g / W) (g f32 [R, C]); c := sum over ranks of c (all-reduce in place); main f32
// [R, C] += f32(c).
PK_KERNEL void ddp_bf16_compress_accumulate(Tensor<f32, 2> g, Sym<bf16, 2> c, Tensor<f32, 2> main) {
  float inv_w = 1.0f / float(world_size());
  for (auto [r, k] : tiles(g.rows(), g.cols(), {16, 256})) store(c, cast<bf16>(load<16, 256>(g, r, k) * inv_w), r, k);
  all_reduce(Sum, c, c);
  for (auto [r, k] : tiles(g.rows(), g.cols(), {16, 256}))
    store(main, load<16, 256>(main, r, k) + cast<f32>(load<16, 256>(c, r, k)), r, k);
}

// LAMB on a ZeRO shard (NVIDIA's FusedLAMB with DeepSpeed stage 1): the trust ratio needs the norms of the whole
// parameter and of the whole update, each summed over the shards of all ranks.
// Phase 1: u = m / (sqrt(v) + eps) + wd * w with m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2 on this rank's
// shard (all f32 [S]; m, v updated in place; u kept in u f32 [S]); nn (Sym f32 [1, 2]) := [sum w^2, sum u^2]
// over the shard (zeroed, then added). Phase 2: nn := sum over ranks (all-reduce in place).
// Phase 3: ratio = (|w| > 0 and |u| > 0) ? |w| / |u| : 1 (|.| = sqrt of the sums); w -= lr * ratio * u.
PK_KERNEL void lamb_sharded(Tensor<f32, 1> w, Tensor<f32, 1> g, Tensor<f32, 1> m, Tensor<f32, 1> v, Tensor<f32, 1> u,
                            Sym<f32, 2> nn, float lr, float b1, float b2, float eps, float wd) {
  for (auto z : tiles(1, {1})) store(nn, zeros<f32, 1, 2>(), 0, 0);
  for (auto i : tiles(w.size(), {2048})) {
    auto gt = load<1, 2048>(g, i);
    auto mt = b1 * load<1, 2048>(m, i) + (1.0f - b1) * gt;
    auto vt = b2 * load<1, 2048>(v, i) + (1.0f - b2) * gt * gt;
    auto wt = load<1, 2048>(w, i);
    auto ut = mt / (sqrt(vt) + eps) + wd * wt;
    store(m, mt, i);
    store(v, vt, i);
    store(u, ut, i);
    store_add(nn, row_sum(wt * wt), 0, 0);
    store_add(nn, row_sum(ut * ut), 0, 1);
  }
  all_reduce(Sum, nn, nn);
  for (auto i : tiles(w.size(), {2048})) {
    auto wn = sqrt(load<1, 1>(nn, 0, 0));
    auto un = sqrt(load<1, 1>(nn, 0, 1));
    auto ratio = where((wn > 0.0f) && (un > 0.0f), wn / un, 1.0f);
    store(w, load<1, 2048>(w, i) - lr * ratio * load<1, 2048>(u, i), i);
  }
}

// ============================================================================ GEMM backward

// Linear layer backward, input gradient (y = x Wᵀ with W [out, in] as torch stores it): dx [T, in] = dy [T, out] W
// [out, in] (B stored [K, N]: mma), bf16 out. The Hopper template's A·B form.
PK_KERNEL void linear_bwd_dx(Tensor<bf16, 2> dy, Tensor<bf16, 2> w, Tensor<bf16, 2> dx) {
  for (auto [m, n] : tiles(dy.rows(), w.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.cols(), 64)) acc = mma(load<128, 64>(dy, m, k), load<64, 256>(w, k, n), acc);
    store(dx, cast<bf16>(acc), m, n);
  }
}

// Linear layer backward, weight gradient with Megatron's gradient_accumulation_fusion: main_grad f32 [out, in] +=
// dyᵀ x, dy bf16 [T, out], x bf16 [T, in] (A = dy read transposed, stored [K = T, M = out]; B = x stored [K, N]).
// The epilogue reads main_grad at the output tile (in place, same tile).
PK_KERNEL void linear_bwd_dw_accum_f32(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 2> main_grad) {
  for (auto [m, n] : tiles(dy.cols(), x.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.rows(), 64))
      acc = mma(transpose(load<64, 128>(dy, k, m)), load<64, 256>(x, k, n), acc);
    store(main_grad, acc + load<128, 256>(main_grad, m, n), m, n);
  }
}

// Weight gradient stored bf16 with the loss-scale removed and a weight-decay term folded in (a fused "grad + wd * w"
// for SGD-style optimizers): dw bf16 [out, in] = (dyᵀ x) * inv_scale + wd * w (w bf16 [out, in]).
PK_KERNEL void linear_bwd_dw_unscale_wd(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> dw,
                                        float inv_scale, float wd) {
  for (auto [m, n] : tiles(dy.cols(), x.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.rows(), 64))
      acc = mma(transpose(load<64, 128>(dy, k, m)), load<64, 256>(x, k, n), acc);
    store(dw, cast<bf16>(acc * inv_scale + wd * cast<f32>(load<128, 256>(w, m, n))), m, n);
  }
}

// dx for a weight kept as Wᵀ [in, out] (e.g. a tied embedding used as [V, H] in the forward: logits = h Eᵀ,
// dh [T, H] = dlogits [T, V] E [V, H] is A·B; here the other case, W stored [in, out], so dx = dy Wᵀ: mma_t).
// dx [T, in] = sum_k dy[t, k] wt[in, k], wt bf16 [in, out]; f16 variant to vary the dtype: all f16.
PK_KERNEL void linear_bwd_dx_wt_f16(Tensor<f16, 2> dy, Tensor<f16, 2> wt, Tensor<f16, 2> dx) {
  for (auto [m, n] : tiles(dy.rows(), wt.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, dy.cols(), 64)) acc = mma_t(load<128, 64>(dy, m, k), load<128, 64>(wt, n, k), acc);
    store(dx, cast<f16>(acc), m, n);
  }
}

// Bias gradient next to the input gradient (one kernel, two loops): dx as in linear_bwd_dx; db f32 [1, out] =
// sum_t dy[t, :] (zeroed, then added per 64-row tile).
PK_KERNEL void linear_bwd_dx_db(Tensor<bf16, 2> dy, Tensor<bf16, 2> w, Tensor<bf16, 2> dx, Tensor<f32, 2> db) {
  for (auto n : tiles(db.cols(), {256})) store(db, zeros<f32, 1, 256>(), 0, n);
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {64, 128}))
    store_add(db, transpose(row_sum(transpose(cast<f32>(load<64, 128>(dy, m, n))))), 0, n);
  for (auto [m, n] : tiles(dy.rows(), w.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.cols(), 64)) acc = mma(load<128, 64>(dy, m, k), load<64, 256>(w, k, n), acc);
    store(dx, cast<bf16>(acc), m, n);
  }
}

// Sequence-parallel column-parallel linear backward (Megatron ColumnParallelLinear with sequence_parallel):
// x_sh Sym bf16 [S / W, in] is this rank's sequence shard of the input; the forward all-gathered it. Backward:
// x_full Sym bf16 [S, in] := all-gather of x_sh (re-gathered, as Megatron does instead of keeping it);
// dw [out_l, in] f32 = dyᵀ x_full with dy bf16 [S, out_l] (this rank's output columns);
// dxp Sym bf16 [S, in] = dy w (w bf16 [out_l, in], this rank's rows of the weight), a partial sum over ranks;
// dx_sh Sym bf16 [S / W, in] := rank r's row block of sum over ranks of dxp (reduce-scatter).
PK_KERNEL void sp_column_linear_bwd(Sym<bf16, 2> x_sh, Sym<bf16, 2> x_full, Tensor<bf16, 2> dy, Tensor<bf16, 2> w,
                                    Tensor<f32, 2> dw, Sym<bf16, 2> dxp, Sym<bf16, 2> dx_sh) {
  all_gather(x_sh, x_full);
  for (auto [m, n] : tiles(dy.cols(), x_full.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.rows(), 64))
      acc = mma(transpose(load<64, 128>(dy, k, m)), load<64, 256>(x_full, k, n), acc);
    store(dw, acc, m, n);
  }
  for (auto [m, n] : tiles(dy.rows(), w.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.cols(), 64)) acc = mma(load<128, 64>(dy, m, k), load<64, 256>(w, k, n), acc);
    store(dxp, cast<bf16>(acc), m, n);
  }
  reduce_scatter(Sum, dxp, dx_sh);
}

// Row-parallel linear backward with sequence parallelism (Megatron RowParallelLinear: the forward reduce-scattered
// the output): dy_sh Sym bf16 [S / W, out] is this rank's shard of the output gradient; dy_full Sym bf16 [S, out]
// := all-gather of dy_sh; dx [S, in_l] bf16 = dy_full w (w bf16 [out, in_l], this rank's column block of the
// weight, stored [out, in_l] as [K, N]).
PK_KERNEL void sp_row_linear_bwd_dx(Sym<bf16, 2> dy_sh, Sym<bf16, 2> dy_full, Tensor<bf16, 2> w, Tensor<bf16, 2> dx) {
  all_gather(dy_sh, dy_full);
  for (auto [m, n] : tiles(dy_full.rows(), w.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy_full.cols(), 64)) acc = mma(load<128, 64>(dy_full, m, k), load<64, 256>(w, k, n), acc);
    store(dx, cast<bf16>(acc), m, n);
  }
}

// Tensor-parallel input gradient reduce-scattered by adds into the owners (gemm_rs's form with an A·B weight):
// dx Sym bf16 [S / W, in] on rank o := sum over ranks of rows [o S/W, (o+1) S/W) of dy w, with dy bf16 [S, out_l],
// w bf16 [out_l, in] (S a multiple of W). dx is zeroed first (store_add adds into it).
PK_KERNEL void tp_dx_gemm_rs_adds(Tensor<bf16, 2> dy, Tensor<bf16, 2> w, Sym<bf16, 2> dx) {
  for (auto [m, n] : tiles(dx.rows(), dx.cols(), {64, 256})) store(dx, zeros<bf16, 64, 256>(), m, n);
  index rows = dy.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, w.cols(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.cols(), 64))
      acc = mma(load_smem<128, 64>(dy, o * rows + m, k), load_smem<64, 256>(w, k, n), acc);
    store_add(dx.on(o), cast<bf16>(acc), m, n);
  }
}

// ============================================================================ More mixed training-step kernels

// Sequence-parallel LayerNorm backward, whole (Megatron with sequence_parallel: x and dy are this rank's T/W rows;
// gamma and beta are replicated and their gradients all-reduced): x, dy f32 [Tl, H] (H <= 512), gamma f32 [1, H],
// mean, rstd f32 [Tl, 1]. dx f32 [Tl, H] as in layernorm_bwd_dx_dgamma_dbeta; gb Sym f32 [2, H] := row 0 the
// column sums of dy * xhat, row 1 those of dy, over this rank's rows (zeroed, added), then summed over ranks in
// place.
PK_KERNEL void sp_layernorm_bwd_full(Tensor<f32, 2> x, Tensor<f32, 2> dy, Tensor<f32, 2> gamma, Tensor<f32, 2> mean,
                                     Tensor<f32, 2> rstd, Tensor<f32, 2> dx, Sym<f32, 2> gb) {
  for (auto z : tiles(1, {1})) store(gb, zeros<f32, 2, 512>(), 0, 0);
  float inv_h = 1.0f / float(x.cols());
  for (auto t : tiles(x.rows(), {16})) {
    auto r = load<16, 1>(rstd, t, 0);
    auto xhat = (load<16, 512>(x, t, 0) - load<16, 1>(mean, t, 0)) * r;
    auto d = load<16, 512>(dy, t, 0);
    auto g = d * load<1, 512>(gamma, 0, 0);
    store(dx, r * (g - row_sum(g) * inv_h - xhat * (row_sum(g * xhat) * inv_h)), t, 0);
    store_add(gb, transpose(row_sum(transpose(d * xhat))), 0, 0);
    store_add(gb, transpose(row_sum(transpose(d))), 1, 0);
  }
  all_reduce(Sum, gb, gb);
}

// Megatron's scaled_masked_softmax backward (causal): y = softmax(scale * mask(x)) saved, f16 [B*H*S, S] viewed
// as [H, S, S] per batch here; dx = scale * y * (dy - sum_j dy * y) (masked positions have y = 0, so dx = 0 there).
// f16 [H, S, S], S <= 1024.
PK_KERNEL void scaled_masked_softmax_bwd(Tensor<f16, 3> y, Tensor<f16, 3> dy, Tensor<f16, 3> dx, float scale) {
  for (auto [h, s] : tiles(y.dim(0), y.dim(1), {1, 4})) {
    auto yt = cast<f32>(load<4, 1024>(y, h, s, 0));
    auto d = cast<f32>(load<4, 1024>(dy, h, s, 0));
    store(dx, cast<f16>(scale * yt * (d - row_sum(d * yt))), h, s, 0);
  }
}

// Attention-probability dropout backward fused with the softmax backward (the non-flash path): p bf16 [S, S] the
// softmax output before dropout, dpd bf16 [S, S] the gradient w.r.t. the dropped probabilities;
// keep = uniform(seed, i, j) >= q; dp = keep ? dpd / (1 - q) : 0; ds = p * (dp - sum_j dp * p) (f32 [S, S]).
// Rows of up to 2048 in one 2 x 2048 tile.
PK_KERNEL void attn_dropout_softmax_bwd(Tensor<bf16, 2> p, Tensor<bf16, 2> dpd, Tensor<f32, 2> ds, index seed,
                                        float q) {
  for (auto i : tiles(p.rows(), {2})) {
    auto keep = uniform<2, 2048>(seed, i, 0) >= q;
    auto dp = where(keep, cast<f32>(load<2, 2048>(dpd, i, 0)) / (1.0f - q), 0.0f);
    auto pt = cast<f32>(load<2, 2048>(p, i, 0));
    store(ds, pt * (dp - row_sum(dp * pt)), i, 0);
  }
}

// Cross-entropy backward with label smoothing (torch CrossEntropyLoss(label_smoothing=e), mean reduction over
// n tokens): lse f32 [T, 1] saved; logits f32 [T, V] (V <= 4096), target i32 [T, 1];
// dlogits f32 [T, V] = (exp(logits - lse) - (1 - e) * (j == target) - e / V) / n.
PK_KERNEL void ce_label_smoothing_bwd(Tensor<f32, 2> logits, Tensor<f32, 2> lse, Tensor<i32, 2> target,
                                      Tensor<f32, 2> dlogits, float e, float n) {
  float ev = e / float(logits.cols());
  for (auto [t, v] : tiles(logits.rows(), logits.cols(), {8, 512})) {
    auto p = exp(load<8, 512>(logits, t, v) - load<8, 1>(lse, t, 0));
    auto hit = cast<f32>(cast<i32>(col_index<8, 512>(v)) == load<8, 1>(target, t, 0));
    store(dlogits, (p - (1.0f - e) * hit - ev) / n, t, v);
  }
}

// DeepSpeed-style loss-scale update with hysteresis, all on device, after an overflow check all-reduced across
// ranks in i32: ovf Sym i32 [1, 1] := max over ranks of (any g16 element inf or NaN ? 1 : 0) (each rank's flag
// from its [1, Nt] per-tile flags tf, Nt = ceil(N / 4096), all-reduced by Max in place; then ovf from tf);
// state i32 [1, 2] = [good_steps, hysteresis_left], scale f32 [1, 1]:
// overflow: hyst' = hyst - 1; if hyst' <= 0 scale = max(scale / 2, 1) and hyst' = 0 (stays); good = 0.
// no overflow: good += 1; if good == window: scale *= 2, good = 0, hyst' = hyst0.
PK_KERNEL void loss_scale_hysteresis(Tensor<f16, 1> g16, Sym<i32, 2> tf, Tensor<i32, 2> state, Tensor<f32, 2> scale,
                                     index window, index hyst0) {
  for (auto i : tiles(g16.size(), {4096})) {
    auto t = cast<f32>(load<1, 4096>(g16, i));
    store(tf, cast<i32>(row_max(cast<f32>((t != t) || (abs(t) > 65504.0f)))), 0, i / 4096);
  }
  all_reduce(Max, tf, tf);
  for (auto z : tiles(1, {1})) {
    auto anyf = zeros<f32, 1, 1>();
    for (auto j : range(0, tf.cols(), 512)) anyf = max(anyf, row_max(cast<f32>(load<1, 512>(tf, 0, j))));
    auto ovf = anyf > 0.0f;
    auto good = load<1, 1>(state, 0, 0);
    auto hyst = load<1, 1>(state, 0, 1);
    auto s = load<1, 1>(scale, 0, 0);
    auto h1 = max(hyst - 1, 0);
    auto g1 = good + 1;
    auto grow = g1 == window;
    store(scale, where(ovf, where(h1 <= 0, max(s * 0.5f, 1.0f), s), where(grow, s * 2.0f, s)), 0, 0);
    store(state, where(ovf, zeros<i32, 1, 1>(), where(grow, zeros<i32, 1, 1>(), g1)), 0, 0);
    store(state, where(ovf, h1, where(grow, zeros<i32, 1, 1>() + hyst0, hyst)), 0, 1);
  }
}

// ZeRO-1 with clipping: gradients reduce-scattered (grad Sym f32 [N] -> gsh Sym f32 [N / W]), the global norm of the
// full averaged gradient is the square root of the sum over ranks of each shard's sum of squares (ss Sym f32
// [1, 1], zeroed, added, all-reduced in place), coef = min(1, max_norm / (norm + 1e-6)), then Adam (no bias
// correction, no decay) on the shard: g = coef * gsh / W; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// w -= lr m / (sqrt(v) + eps) (w, m, v f32 [N / W]); wsh Sym bf16 [N / W] = bf16(w); wfull Sym bf16 [N] := all-gather.
PK_KERNEL void zero1_clip_adam(Sym<f32, 1> grad, Sym<f32, 1> gsh, Sym<f32, 2> ss, Tensor<f32, 1> w, Tensor<f32, 1> m,
                               Tensor<f32, 1> v, Sym<bf16, 1> wsh, Sym<bf16, 1> wfull, float lr, float b1, float b2,
                               float eps, float max_norm) {
  for (auto z : tiles(1, {1})) store(ss, zeros<f32, 1, 1>(), 0, 0);
  reduce_scatter(Sum, grad, gsh);
  float inv_w = 1.0f / float(world_size());
  for (auto i : tiles(gsh.size(), {2048})) {
    auto g = load<1, 2048>(gsh, i) * inv_w;
    store_add(ss, row_sum(g * g), 0, 0);
  }
  all_reduce(Sum, ss, ss);
  for (auto i : tiles(gsh.size(), {2048})) {
    auto coef = min(max_norm / (sqrt(load<1, 1>(ss, 0, 0)) + 1e-6f), 1.0f);
    auto g = load<1, 2048>(gsh, i) * inv_w * coef;
    auto mt = b1 * load<1, 2048>(m, i) + (1.0f - b1) * g;
    auto vt = b2 * load<1, 2048>(v, i) + (1.0f - b2) * g * g;
    auto nw = load<1, 2048>(w, i) - lr * mt / (sqrt(vt) + eps);
    store(m, mt, i);
    store(v, vt, i);
    store(w, nw, i);
    store(wsh, cast<bf16>(nw), i);
  }
  all_gather(wsh, wfull);
}

// A hand-written reduce-scatter by adds into the owners (DeepSpeed's "reduce_scatter via reduce" fallback), rows of
// a 2-D gradient: grad f32 [R, C] on every rank (R a multiple of W, sh = R / W); gsh Sym f32 [sh, C] on owner o :=
// sum over ranks of grad[o sh .. (o + 1) sh, :]. Zeroed first; tiles walk each owner's rows so a partial tile
// clips at the owner's block (rows past sh are dropped).
PK_KERNEL void reduce_scatter_by_adds(Tensor<f32, 2> grad, Sym<f32, 2> gsh) {
  for (auto [m, n] : tiles(gsh.rows(), gsh.cols(), {16, 256})) store(gsh, zeros<f32, 16, 256>(), m, n);
  index sh = grad.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), sh, grad.cols(), {1, 16, 256}))
    store_add(gsh.on(o), load<16, 256>(grad, o * sh + m, n), m, n);
}

// Adafactor (factored second moments, no momentum; Shazeer & Stern 2018) on a 2-D f32 weight [R, C]:
// rv f32 [R, 1], cv f32 [1, C] the row / column accumulators; G = g^2 + eps1.
// rv = b2 rv + (1 - b2) mean_c G; cv = b2 cv + (1 - b2) mean_r G; vhat = rv cv / mean_r(rv);
// w -= lr * g / sqrt(vhat). Phases: (1) zero the column-sum scratch cs f32 [1, C] and rs f32 [1, 1];
// (2) per 16-row tile: rv updated (whole rows, C <= 1024), column sums of G added into cs, the new rv added into rs;
// (3) cv = b2 cv + (1 - b2) cs / R; (4) w updated from rv, cv and rs / R.
PK_KERNEL void adafactor_step(Tensor<f32, 2> w, Tensor<f32, 2> g, Tensor<f32, 2> rv, Tensor<f32, 2> cv,
                              Tensor<f32, 2> cs, Tensor<f32, 2> rs, float lr, float b2, float eps1) {
  float inv_c = 1.0f / float(w.cols());
  float inv_r = 1.0f / float(w.rows());
  for (auto z : tiles(1, {1})) {
    store(cs, zeros<f32, 1, 1024>(), 0, 0);
    store(rs, zeros<f32, 1, 1>(), 0, 0);
  }
  for (auto r : tiles(w.rows(), {16})) {
    auto gt = load<16, 1024>(g, r, 0);
    auto gg = where(col_index<16, 1024>(0) < w.cols(), gt * gt + eps1, 0.0f);
    gg = where(row_index<16, 1024>(r) < w.rows(), gg, 0.0f);
    auto nr = b2 * load<16, 1>(rv, r, 0) + (1.0f - b2) * row_sum(gg) * inv_c;
    store(rv, nr, r, 0);
    store_add(cs, transpose(row_sum(transpose(gg))), 0, 0);
    store_add(rs, transpose(row_sum(transpose(where(row_index<16, 1>(r) < w.rows(), nr, 0.0f)))), 0, 0);
  }
  for (auto z : tiles(1, {1})) store(cv, b2 * load<1, 1024>(cv, 0, 0) + (1.0f - b2) * load<1, 1024>(cs, 0, 0) * inv_r, 0, 0);
  for (auto [r, c] : tiles(w.rows(), w.cols(), {16, 256})) {
    auto vhat = load<16, 1>(rv, r, 0) * load<1, 256>(cv, 0, c) / (load<1, 1>(rs, 0, 0) * inv_r);
    store(w, load<16, 256>(w, r, c) - lr * load<16, 256>(g, r, c) * rsqrt(vhat), r, c);
  }
}

// ============================================================================ Loops over micro-batches and layers

// Gradient accumulation over micro-batches inside one launch: g f32 [micro * R, C] holds the micro-batches' gradients
// stacked by rows; acc f32 [R, C] += sum over s < micro of g[s R .. s R + R, :]. The range loop's trips read back
// the tile the previous trip wrote (same tile, same block).
PK_KERNEL void grad_accum_microbatch_loop(Tensor<f32, 2> g, Tensor<f32, 2> acc, index micro) {
  for (auto s : range(0, micro, 1)) {
    for (auto [r, c] : tiles(acc.rows(), acc.cols(), {16, 256}))
      store(acc, load<16, 256>(acc, r, c) + load<16, 256>(g, s * acc.rows() + r, c), r, c);
  }
}

// Per-layer bucket all-reduce (DDP's reverse-order buckets, one layer per trip): grads f32 [L, N] (one row per
// layer); for each layer l in order: bucket (Sym f32 [1, N]) = grads[l, :] / W; all-reduce in place;
// grads[l, :] = bucket. A host loop of L launches (the collective runs once per launch).
PK_KERNEL void ddp_per_layer_buckets(Tensor<f32, 2> grads, Sym<f32, 2> bucket) {
  float inv_w = 1.0f / float(world_size());
  for (auto l : range(0, grads.rows(), 1)) {
    for (auto n : tiles(grads.cols(), {2048})) store(bucket, load<1, 2048>(grads, l, n) * inv_w, 0, n);
    all_reduce(Sum, bucket, bucket);
    for (auto n : tiles(grads.cols(), {2048})) store(grads, load<1, 2048>(bucket, 0, n), l, n);
  }
}

// Column-sharded optimizer step fully in place (NCCL layout along dimension 1): x Sym f32 [R, C] (C a multiple of W)
// holds this rank's gradient; reduce-scattered in place along dimension 1, so column block r (cw = C / W columns)
// holds the sum; w f32 [R, cw] -= lr * that block; the block is overwritten with the new w and x is all-gathered in
// place along dimension 1 (every rank ends with all blocks of the new weight).
PK_KERNEL void zero_cols_inplace_sgd(Sym<f32, 2> x, Tensor<f32, 2> w, float lr) {
  reduce_scatter(Sum, x, x, 1);
  index cw = x.cols() / world_size();
  for (auto [r, c] : tiles(x.rows(), cw, {8, 128})) {
    auto nw = load<8, 128>(w, r, c) - lr * load<8, 128>(x, r, rank() * cw + c);
    store(w, nw, r, c);
    store(x, nw, r, rank() * cw + c);
  }
  all_gather(x, x, 1);
}

// Tensor-parallel input gradient with the weight stored transposed (wt bf16 [in, out_l]): dxp (Scratch bf16 [S, in])
// = dy wtᵀ (A·Bᵀ), then dx_sh Sym bf16 [S / W, in] := rank r's row block of the sum over ranks (reduce-scatter).
PK_KERNEL void tp_dx_gemm_then_rs(Tensor<bf16, 2> dy, Tensor<bf16, 2> wt, Scratch<bf16, 2> dxp, Sym<bf16, 2> dx_sh) {
  for (auto [m, n] : tiles(dy.rows(), wt.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.cols(), 64)) acc = mma_t(load<128, 64>(dy, m, k), load<256, 64>(wt, n, k), acc);
    store(dxp, cast<bf16>(acc), m, n);
  }
  reduce_scatter(Sum, dxp, dx_sh);
}

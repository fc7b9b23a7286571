// The eighteenth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only, as the layers of
// ParallelKernelBench-style problems that Megatron-LM, DeepSpeed, TensorRT-LLM and vLLM need, mixing
// constructs in combinations the earlier sets did not: GEMMs (mma / mma_t, A·B and A·Bᵀ, bf16 and f16
// in, f16 / bf16 / f32 out) with epilogues of every kind (bias rows, per-row and per-column scales,
// residual tiles read from the output itself, erf GELU, tanh, clamps, casts, batch masks), batched
// GEMMs, split-K by adds into a local tensor, tensor-parallel GEMMs next to all_gather /
// reduce_scatter along dimension 1, attention variants (GQA + soft-capping + ALiBi, prefix-LM, sliding
// window f16, head dim 96 and 4-D tensors on the general path, chunked prefill), multi-phase kernels,
// in-place updates, cumsum along rows (and down columns through transposes), reshape, store_add into
// local 2-D tensors, i32 / i64 index math, ring shifts to next_rank() / prev_rank(), 3-D and 4-D
// tensors, odd tile shapes. Each kernel compiles alone (pkc FILE --kernel NAME) and the file compiles
// as a whole; test/specs/specs18_findings.md says what was checked in the emitted CUDA. Part (b) is
// user_specs18_bad.pk.cpp.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ GEMM epilogues (template)

// Megatron's fused bias + exact GELU after a column-parallel f16 linear stored [K, N] (A·B):
// c = f16(gelu_erf(a·b + bias)), bias an f32 [N].
PK_KERNEL void linear_ab_f16_bias_gelu_erf(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> bias, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 128>(b, k, n), acc);
    store(c, cast<f16>(gelu_erf(acc + load<1, 128>(bias, n))), m, n);
  }
}

// TensorRT-LLM's W8A8 (SmoothQuant) GEMM epilogue on dequantised bf16 operands: per-token row scales
// ([M] 1-D, read as a column), per-channel column scales ([1, N] 2-D, read as a row), a bf16 bias [N],
// then a clamp to [-clip, clip] before the bf16 cast.
PK_KERNEL void w8a8_dequant_rowcol_clamp(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> srow, Tensor<f32, 2> scol,
                                         Tensor<bf16, 1> bias, Tensor<bf16, 2> c, float clip) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 64})) {
    auto acc = zeros<f32, 128, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    auto y = acc * load<128, 1>(srow, m) * load<1, 64>(scol, 0, n) + cast<f32>(load<1, 64>(bias, n));
    store(c, cast<bf16>(min(max(y, -clip), clip)), m, n);
  }
}

// cuBLAS-style GEMM with alpha and beta into an f32 output: c = alpha a·bᵀ + beta r.
PK_KERNEL void linear_t_alpha_beta_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> r, Tensor<f32, 2> c,
                                       float alpha, float beta) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc * alpha + load<128, 256>(r, m, n) * beta, m, n);
  }
}

// Gradient accumulation of a weight gradient in place (DeepSpeed's fp32 grad accumulation fused into
// the wgrad GEMM): c += a·bᵀ, c read at the very tile it writes.
PK_KERNEL void gemm_t_accumulate_inplace_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, load<128, 128>(c, m, n) + acc, m, n);
  }
}

// LoRA merge in place (PEFT merge_and_unload): W [N, K] += scale * (B [N, R] · A [R, K]), B·A written as
// A·B with the second operand stored [K, N] (mma), W read at the tile it writes.
PK_KERNEL void lora_merge_inplace(Tensor<bf16, 2> w, Tensor<bf16, 2> lb, Tensor<bf16, 2> la, float scale) {
  for (auto [m, n] : tiles(lb.rows(), la.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, lb.cols(), 16)) acc = mma(load<64, 16>(lb, m, k), load<16, 128>(la, k, n), acc);
    store(w, cast<bf16>(cast<f32>(load<64, 128>(w, m, n)) + acc * scale), m, n);
  }
}

// Primer's squared ReLU after an f16 A·B, in odd 48 x 40 tiles stepping K by 16 (the template retiles).
PK_KERNEL void gemm_ab_relu2_odd_f16(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {48, 40})) {
    auto acc = zeros<f32, 48, 40>();
    for (auto k : range(0, a.cols(), 16)) acc = mma(load<48, 16>(a, m, k), load<16, 40>(b, k, n), acc);
    auto r = max(acc, 0.0f);
    store(c, cast<f16>(r * r), m, n);
  }
}

// bf16 operands, f16 output: a per-output-channel scale ([N] 1-D as a row) and a tanh activation.
PK_KERNEL void gemm_t_colscale_tanh_f16out(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> cs, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 192})) {
    auto acc = zeros<f32, 128, 192>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<192, 64>(b, n, k), acc);
    store(c, cast<f16>(tanh(acc * load<1, 192>(cs, n))), m, n);
  }
}

// ============================================================================ Batched GEMMs (template)

// Per-batch causal scores (a masked bmm, as HF's eager attention builds them): [B, M, K] x [B, N, K]
// in f16, scaled by s[z], the upper triangle of each batch (column > row, counted inside the batch)
// zeroed; f16 out.
PK_KERNEL void bmm_t_causal_batch_scale_f16(Tensor<f16, 3> a, Tensor<f16, 3> b, Tensor<f32, 1> s, Tensor<f16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<64, 64>(a, z, m, k), load<64, 64>(b, z, n, k), acc);
    store(c, cast<f16>(where(col_index<64, 64>(n) <= row_index<64, 64>(m), acc * s.at(z), 0.0f)), z, m, n);
  }
}

// Batched A·B ([B, M, K] x [B, K, N], bf16) + a shared f32 bias [N] + a per-batch residual, bf16 out.
PK_KERNEL void bmm_kn_residual_bias_bf16(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> r, Tensor<f32, 1> bias,
                                         Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(2), {1, 128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma(load<128, 64>(a, z, m, k), load<64, 128>(b, z, k, n), acc);
    store(c, cast<bf16>(acc + load<1, 128>(bias, n) + cast<f32>(load<128, 128>(r, z, m, n))), z, m, n);
  }
}

// A linear layer over a batch of sequences with one shared weight W [N, K] (mma_t), a bf16 [1, N] bias
// and the exact GELU, f32 out [B, M, N].
PK_KERNEL void bmm_shared_w_gelu_erf_f32(Tensor<bf16, 3> x, Tensor<bf16, 2> w, Tensor<bf16, 2> bias, Tensor<f32, 3> y) {
  for (auto [z, m, n] : tiles(x.dim(0), x.dim(1), w.rows(), {1, 64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, x.dim(2), 64)) acc = mma_t(load<64, 64>(x, z, m, k), load<128, 64>(w, n, k), acc);
    store(y, gelu_erf(acc + cast<f32>(load<1, 128>(bias, 0, n))), z, m, n);
  }
}

// ============================================================================ Linear backward

// Linear layer backward, data gradient: dX [M, K] = dY [M, N] · W [N, K] (W read as the [K, N]-stored
// second operand of an A·B), bf16 out: the GEMM template.
PK_KERNEL void linear_dgrad_ab(Tensor<bf16, 2> dy, Tensor<bf16, 2> w, Tensor<bf16, 2> dx) {
  for (auto [m, k] : tiles(dy.rows(), w.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto n : range(0, dy.cols(), 64)) acc = mma(load<128, 64>(dy, m, n), load<64, 128>(w, n, k), acc);
    store(dx, cast<bf16>(acc), m, k);
  }
}

// Linear layer backward, weight gradient: dW [N, K] = dYᵀ [N, M] · X [M, K], the A operand a
// transposed register tile of dY, accumulated in f32 over the tokens (the GEMM template with A
// stored [K, M], since finding 6 was fixed; the general path before).
PK_KERNEL void linear_wgrad_transposed_a(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 2> dw) {
  for (auto [n, k] : tiles(dy.cols(), x.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto m : range(0, dy.rows(), 32)) acc = mma(transpose(load<32, 64>(dy, m, n)), load<32, 64>(x, m, k), acc);
    store(dw, acc, n, k);
  }
}

// ============================================================================ GEMMs on the general path

// Split-K GEMM (TensorRT-LLM's split-K / stream-K reduction by atomics): a first phase zeroes the f32
// output, then a 3-D tile loop over (m, n, K chunk of 256) adds each chunk's partial product into the
// local output (store_add: red.global.add, the chunks of one tile all arrive).
PK_KERNEL void splitk_gemm_t_store_add(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 64})) store(c, zeros<f32, 64, 64>(), m, n);
  for (auto [m, n, kc] : tiles(a.rows(), b.rows(), a.cols(), {64, 64, 256})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(kc, min(kc + 256, a.cols()), 64))
      acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store_add(c, acc, m, n);
  }
}

// Embedding-model head (sentence-transformers): a linear layer whose rows are L2-normalised, with the
// whole output row in one 32 x 256 tile (N <= 256): y = acc * rsqrt(sum(acc^2) + eps). The row
// reduction of the accumulator keeps it on the general path.
PK_KERNEL void linear_l2norm_rows(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {32})) {
    auto acc = zeros<f32, 32, 256>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<32, 32>(x, m, k), load<256, 32>(w, 0, k), acc);
    store(y, cast<bf16>(acc * rsqrt(row_sum(acc * acc) + eps)), m, 0);
  }
}

// Fused QKV projection whose output is split into three planes [3, S, Hd] (Megatron's
// split of the fused QKV tensor): column block n lands in plane n / Hd at column n % Hd (Hd a
// multiple of the 64-column tile), with a bias [3 Hd].
PK_KERNEL void qkv_proj_split_planes(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<f32, 1> bias, Tensor<bf16, 3> qkv) {
  index hd = x.cols();
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<64, 64>(w, n, k), acc);
    store(qkv, cast<bf16>(acc + load<1, 64>(bias, n)), n / hd, m, n % hd);
  }
}

// Attention probabilities returned to the caller (HF eager attention with output_attentions) on
// [B, H, S, D] 4-D tensors (D <= 64): a first pass over the keys keeps the running max and sum of
// exp per query row, a second writes softmax(q kᵀ scale) with the causal mask, 0 above the diagonal.
PK_KERNEL void attn_probs_4d_causal(Tensor<bf16, 4> q, Tensor<bf16, 4> k, Tensor<f32, 4> p, float scale) {
  for (auto [b, h, m] : tiles(q.dim(0), q.dim(1), q.dim(2), {1, 1, 32})) {
    auto qt = load<32, 64>(q, b, h, m, 0);
    auto mx = zeros<f32, 32, 1>() - 1e30f;
    auto l = zeros<f32, 32, 1>();
    for (auto n : range(0, k.dim(2), 64)) {
      auto vis = (col_index<32, 64>(n) <= row_index<32, 64>(m)) * (col_index<32, 64>(n) < k.dim(2));
      auto s = where(vis, mma_t(qt, load<64, 64>(k, b, h, n, 0), zeros<f32, 32, 64>()) * scale, -1e30f);
      auto mnew = max(mx, row_max(s));
      l = l * exp(mx - mnew) + row_sum(where(vis, exp(s - mnew), 0.0f));
      mx = mnew;
    }
    for (auto n : range(0, k.dim(2), 64)) {
      auto vis = col_index<32, 64>(n) <= row_index<32, 64>(m);
      auto s = mma_t(qt, load<64, 64>(k, b, h, n, 0), zeros<f32, 32, 64>()) * scale;
      store(p, where(vis, exp(s - mx) / l, 0.0f), b, h, m, n);
    }
  }
}

// ============================================================================ Attention

// Grouped-query attention with Gemma 2's logit soft-capping and ALiBi slopes read per head, causal,
// head dim 128 over [H, S, 128] (K and V heads H / G, G from the sizes), the log-sum-exp into [H, S, 1]:
// s = cap tanh(q kᵀ scale / cap) - slope_h (i - j).
PK_KERNEL void gqa_softcap_alibi_causal_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                             Tensor<f32, 1> slopes, Tensor<f32, 3> lse, float scale, float cap) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index kh = h / (q.dim(0) / k.dim(0));
    float slope = slopes.at(h);
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto s = tanh(mma_t(qt, load<64, 128>(k, kh, n, 0), zeros<f32, 64, 64>()) * (scale / cap)) * cap - (row - col) * slope;
      s = where((col <= row) * (col < k.dim(1)), s, -1e30f);
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

// Prefix-LM attention (T5 / UL2 / PaliGemma): every query sees the first `prefix` keys, and the rest
// causally. "Or" of two masks written as max(a, b) of 0/1 tiles; head dim 64.
PK_KERNEL void prefix_lm_attention_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                       index prefix, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(max(col <= row, col < prefix) * (col < k.dim(1)), s, -1e30f);
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

// Mistral-style sliding-window GQA in f16, head dim 64, window an integer argument (i - window < j <= i),
// G an integer argument, the log-sum-exp into [H, S, 1].
PK_KERNEL void sliding_window_gqa_f16_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o,
                                          Tensor<f32, 3> lse, index group, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto s = mma_t(qt, load<64, 64>(k, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col <= row) * (col > row - window) * (col < k.dim(1)), s, -1e30f);
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

// Causal attention with head dim 96 (no template head dim: the general path), 32-row query tiles and
// 32-key steps, so S need not be a multiple of anything; log-sum-exp into a 2-D [H, S] tensor through
// a 1 x 32 row (the transposed column).
PK_KERNEL void causal_attention_d96_general(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                            Tensor<f32, 2> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 32})) {
    auto qt = load<32, 96>(q, h, m, 0);
    auto mx = zeros<f32, 32, 1>() - 1e30f;
    auto l = zeros<f32, 32, 1>();
    auto acc = zeros<f32, 32, 96>();
    for (auto n : range(0, m + 32, 32)) {
      auto s = mma_t(qt, load<32, 96>(k, h, n, 0), zeros<f32, 32, 32>()) * scale;
      s = where((col_index<32, 32>(n) <= row_index<32, 32>(m)) * (col_index<32, 32>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<32, 96>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, transpose(mx + log(l)), h, m);
  }
}

// Causal attention over [B, H, S, 64] 4-D tensors (the BHSD layout of HF / SDPA), a 3-D tile loop over
// (batch, head, 64 query rows): the general path.
PK_KERNEL void attention_4d_causal_d64(Tensor<bf16, 4> q, Tensor<bf16, 4> k, Tensor<bf16, 4> v, Tensor<bf16, 4> o,
                                       float scale) {
  for (auto [b, h, m] : tiles(q.dim(0), q.dim(1), q.dim(2), {1, 1, 64})) {
    auto qt = load<64, 64>(q, b, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, b, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(2)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, b, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), b, h, m, 0);
  }
}

// Cross-attention with per-head key lengths (padded encoder outputs, one sequence per "head" slot):
// head h sees its first klen[h] keys (klen an i32 [H], at least 1), head dim 128.
PK_KERNEL void cross_attention_klen_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                         Tensor<i32, 1> klen, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index len = klen.at(h);
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)) * (col_index<64, 64>(n) < len), s, -1e30f);
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

// Chunked prefill (vLLM): the Sq queries of this chunk are the last Sq positions of the Sk cached keys,
// so query i sees keys j <= i + (Sk - Sq), with soft-capping; one head [S, 128].
PK_KERNEL void chunked_prefill_softcap_d128(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                            Tensor<f32, 1> lse, float scale, float cap) {
  index past = k.rows() - q.rows();
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = tanh(mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * (scale / cap)) * cap;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m) + past) * (col_index<64, 64>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, mx + log(l), m);
  }
}

// ============================================================================ Tensor-parallel layers

// Row-parallel input gather: the activations arrive sharded along the hidden dimension ([M, K/W] per
// rank), are all-gathered along dimension 1 into [M, K], then multiplied by this rank's full weight
// slice W [N, K] (a column-parallel layer after a hidden-sharded one).
PK_KERNEL void tp_gather_k_then_gemm(Sym<bf16, 2> xs, Sym<bf16, 2> xf, Tensor<bf16, 2> w, Tensor<bf16, 2> y) {
  all_gather(xs, xf, 1);
  for (auto [m, n] : tiles(xf.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, xf.cols(), 64)) acc = mma_t(load<128, 64>(xf, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// Row-parallel linear with the output reduce-scattered along the hidden dimension, then the bias slice
// of this rank (columns rank() * N/W ..) and the exact GELU on the shard: three phases.
PK_KERNEL void tp_row_linear_rs_cols_bias_gelu(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Sym<f32, 2> part, Sym<f32, 2> shard,
                                               Tensor<f32, 1> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<128, 64>(w, n, k), acc);
    store(part, acc, m, n);
  }
  reduce_scatter(Sum, part, shard, 1);
  index c0 = rank() * shard.cols();
  for (auto [m, n] : tiles(shard.rows(), shard.cols(), {32, 64}))
    store(y, cast<bf16>(gelu_erf(load<32, 64>(shard, m, n) + load<1, 64>(bias, c0 + n))), m, n);
}

// Vocabulary-parallel LM head with Gemma 2's final soft-capping, its padded vocabulary rows (global
// column >= vocab) masked to -1e4, then the logit shards all-gathered along the vocabulary into a local
// [M, V] tensor on every rank.
PK_KERNEL void tp_lm_head_softcap_gather_vocab(Tensor<bf16, 2> h, Tensor<bf16, 2> emb, Sym<f32, 2> part,
                                               Tensor<f32, 2> logits, index vocab, float cap) {
  index v0 = rank() * emb.rows();
  for (auto [m, n] : tiles(h.rows(), emb.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, h.cols(), 64)) acc = mma_t(load<128, 64>(h, m, k), load<128, 64>(emb, n, k), acc);
    store(part, where(col_index<128, 128>(n) + v0 < vocab, tanh(acc * (1.0f / cap)) * cap, -1e4f), m, n);
  }
  all_gather(part, logits, 1);
}

// Hidden-sharded activations gathered along dimension 1 and LayerNorm'ed whole (rows of up to 2048 in
// one tile, the padding columns masked out of the variance): f32 in, bf16 out, weight and bias [H].
PK_KERNEL void tp_gather_hidden_layernorm(Sym<f32, 2> xs, Sym<f32, 2> xf, Tensor<f32, 1> g, Tensor<f32, 1> b,
                                          Tensor<bf16, 2> y, float eps) {
  all_gather(xs, xf, 1);
  for (auto m : tiles(xf.rows(), {4})) {
    auto t = load<4, 2048>(xf, m, 0);
    float inv_n = 1.0f / float(xf.cols());
    auto mu = row_sum(t) * inv_n;
    auto d = where(col_index<4, 2048>(0) < xf.cols(), t - mu, 0.0f);
    auto r = rsqrt(row_sum(d * d) * inv_n + eps);
    store(y, cast<bf16>(d * r * load<1, 2048>(g, 0) + load<1, 2048>(b, 0)), m, 0);
  }
}

// Sequence-parallel tail in f16: partial outputs [M, H] reduce-scattered along the hidden dimension, the
// shard added into the residual stream in place (f16 [M, H/W]), then RMSNorm of the new residual with
// this rank's weight slice [H/W] (the statistic over the shard only, as a hidden-sharded norm's local
// step computes it).
PK_KERNEL void sp_rs_cols_residual_inplace_f16(Sym<f16, 2> part, Sym<f16, 2> shard, Tensor<f16, 2> res,
                                               Tensor<f16, 1> w, Tensor<f16, 2> y, float eps) {
  reduce_scatter(Sum, part, shard, 1);
  for (auto m : tiles(res.rows(), {8})) {
    auto h = cast<f32>(load<8, 512>(res, m, 0)) + cast<f32>(load<8, 512>(shard, m, 0));
    store(res, cast<f16>(h), m, 0);
    auto hr = cast<f32>(cast<f16>(h));
    auto r = rsqrt(row_sum(hr * hr) * (1.0f / float(res.cols())) + eps);
    store(y, cast<f16>(hr * r * cast<f32>(load<1, 512>(w, 0))), m, 0);
  }
}

// Vocabulary-parallel greedy sampling (vLLM's sampler with the vocabulary sharded): each rank's best
// logit and its global column (lowest on ties) per row, into [M, 2] (value, index as f32), gathered
// along dimension 1 into [M, 2W]; then the winner over ranks (lowest index among equal maxima) as i64.
PK_KERNEL void tp_vocab_argmax(Tensor<f32, 2> logits, Sym<f32, 2> best, Sym<f32, 2> all_best, Tensor<i64, 1> token) {
  index v0 = rank() * logits.cols();
  for (auto m : tiles(logits.rows(), {8})) {
    auto bv = zeros<f32, 8, 1>() - 3.0e38f;
    auto bi = zeros<f32, 8, 1>();
    for (auto n : range(0, logits.cols(), 512)) {
      auto cols = col_index<8, 512>(n);
      auto x = where(cols < logits.cols(), load<8, 512>(logits, m, n), -3.0e38f);
      auto mx = row_max(x);
      bi = where(mx > bv, row_min(where(x == mx, cols, 3.0e38f)) + float(v0), bi);
      bv = max(bv, mx);
    }
    store(best, bv, m, 0);
    store(best, bi, m, 1);
  }
  all_gather(best, all_best, 1);
  for (auto m : tiles(logits.rows(), {8})) {
    auto t = load<8, 32>(all_best, m, 0);
    auto live = col_index<8, 32>(0) < 2 * world_size();
    auto odd = cast<f32>(cast<i32>(col_index<8, 32>(0)) % 2 == 1);
    auto mx = row_max(where(live * (1.0f - odd), t, -3.0e38f));
    // Column j of `prev` is column j - 1 of all_best (a load one column before the start): at an index
    // column it holds the value of the same pair.
    auto prev = load<8, 32>(all_best, m, -1);
    auto win = where(live * odd * (prev == mx), t, 3.0e38f);
    store(token, cast<i64>(row_min(win)), m);
  }
}

// ============================================================================ Ring shifts and peers

// Ring attention's KV rotation with both layouts: K [H, S, D] (3-D) goes to the next rank, V [B, H, S, D]
// (4-D, odd 2 x 24 x 40 tiles of the trailing dimensions) to the previous rank (a bidirectional ring).
PK_KERNEL void ring_shift_kv_3d_4d(Tensor<bf16, 3> k, Tensor<f16, 4> v, Sym<bf16, 3> kr, Sym<f16, 4> vr) {
  for (auto [h, s, d] : tiles(k.dim(0), k.dim(1), k.dim(2), {1, 32, 64}))
    store(kr.on(next_rank()), load<32, 64>(k, h, s, d), h, s, d);
  for (auto [b, h, s] : tiles(v.dim(0), v.dim(1), v.dim(2), {1, 2, 24}))
    for (auto d : range(0, v.dim(3), 40)) store(vr.on(prev_rank()), load<2, 24, 40>(v, b, h, s, d), b, h, s, d);
}

// A ring reduction step with a local epilogue: the accumulator is zeroed, every rank adds alpha * x into
// the next rank's accumulator, and once the adds have landed each rank writes acc + bias (the sum it
// received from the previous rank) into a local bf16 output.
PK_KERNEL void ring_add_next_then_bias(Tensor<f32, 2> x, Sym<f32, 2> acc, Tensor<f32, 1> bias, Tensor<bf16, 2> y,
                                       float alpha) {
  for (auto [m, n] : tiles(acc.rows(), acc.cols(), {32, 128})) store(acc, zeros<f32, 32, 128>(), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 96})) store_add(acc.on(next_rank()), load<16, 96>(x, m, n) * alpha, m, n);
  for (auto [m, n] : tiles(acc.rows(), acc.cols(), {32, 128}))
    store(y, cast<bf16>(load<32, 128>(acc, m, n) + load<1, 128>(bias, n)), m, n);
}

// ============================================================================ Norms, in-place updates

// vLLM's fused_add_rms_norm on 3-D [B, S, H] activations, both tensors updated in place, rows chunked by
// 512 columns (any hidden size): residual += x; x = residual * rsqrt(mean(residual^2) + eps) * w.
PK_KERNEL void fused_add_rmsnorm_inplace_3d(Tensor<bf16, 3> x, Tensor<bf16, 3> res, Tensor<bf16, 1> w, float eps) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {1, 4})) {
    auto ss = zeros<f32, 4, 1>();
    for (auto n : range(0, x.dim(2), 512)) {
      auto h = cast<bf16>(cast<f32>(load<4, 512>(x, b, s, n)) + cast<f32>(load<4, 512>(res, b, s, n)));
      store(res, h, b, s, n);
      auto hf = cast<f32>(h);
      ss = ss + row_sum(hf * hf);
    }
    auto r = rsqrt(ss * (1.0f / float(x.dim(2))) + eps);
    for (auto n : range(0, x.dim(2), 512))
      store(x, cast<bf16>(cast<f32>(load<4, 512>(res, b, s, n)) * r * cast<f32>(load<1, 512>(w, n))), b, s, n);
  }
}

// NeoX rotary embedding in place on q [S, H, D] (D = 128, halves of 64) from i64 position ids and an f32
// inverse-frequency table [64]: angle = pos * inv_freq, computed per element.
PK_KERNEL void rope_neox_inplace_pos_i64(Tensor<bf16, 3> q, Tensor<i64, 1> pos, Tensor<f32, 1> inv_freq) {
  for (auto [s, h] : tiles(q.dim(0), q.dim(1), {1, 8})) {
    auto ang = cast<f32>(load<1, 1>(pos, s)) * load<1, 64>(inv_freq, 0);
    auto c = cos(ang);
    auto sn = sin(ang);
    auto x1 = cast<f32>(load<8, 64>(q, s, h, 0));
    auto x2 = cast<f32>(load<8, 64>(q, s, h, 64));
    store(q, cast<bf16>(x1 * c - x2 * sn), s, h, 0);
    store(q, cast<bf16>(x2 * c + x1 * sn), s, h, 64);
  }
}

// Adafactor's factored second moment (one step, beta2 = 0): r = row means of g^2 + eps, c = column
// means of g^2 + eps (store_add of column sums into a local [1, N] after a zeroing phase), the
// normaliser sum(r) (store_add into a [1, 1]), then u = g * rsqrt(r c / sum(r)) with r read as a 1-D
// tile reshaped into a column.
PK_KERNEL void adafactor_factored_update(Tensor<f32, 2> g, Tensor<f32, 1> r, Tensor<f32, 2> c, Tensor<f32, 2> rsum,
                                         Tensor<f32, 2> u, float eps) {
  for (auto n : tiles(c.cols(), {256})) store(c, zeros<f32, 1, 256>(), 0, n);
  for (auto i : tiles(1, {1})) store(rsum, zeros<f32, 1, 1>(), 0, 0);
  float inv_rows = 1.0f / float(g.rows());
  for (auto [m, n] : tiles(g.rows(), g.cols(), {32, 256})) {
    auto t = load<32, 256>(g, m, n);
    store_add(c, transpose(row_sum(transpose(t * t))) * inv_rows, 0, n);
  }
  float inv_cols = 1.0f / float(g.cols());
  for (auto m : tiles(g.rows(), {32})) {
    auto ss = zeros<f32, 32, 1>();
    for (auto n : range(0, g.cols(), 256)) {
      auto t = load<32, 256>(g, m, n);
      ss = ss + row_sum(t * t);
    }
    auto rm = ss * inv_cols + eps;
    store(r, rm, m);
    auto live = row_index<32, 1>(m) < g.rows();
    store_add(rsum, transpose(row_sum(transpose(where(live, rm, 0.0f)))), 0, 0);
  }
  for (auto [m, n] : tiles(g.rows(), g.cols(), {32, 256})) {
    auto rc = reshape<32, 1>(load<32>(r, m)) * (load<1, 256>(c, 0, n) + eps);
    store(u, load<32, 256>(g, m, n) * rsqrt(rc / load<1, 1>(rsum, 0, 0)), m, n);
  }
}

// Bias and LayerNorm-weight gradients from 3-D [B, S, H] activations: db[h] = sum dy, dg[h] = sum dy * xhat,
// column sums of each 3-D tile's trailing [S, H] slab added into local [1, H] tensors (zeroed first).
PK_KERNEL void bias_ln_grad_3d_store_add(Tensor<bf16, 3> dy, Tensor<bf16, 3> xhat, Tensor<f32, 2> db, Tensor<f32, 2> dg) {
  for (auto n : tiles(db.cols(), {128})) {
    store(db, zeros<f32, 1, 128>(), 0, n);
    store(dg, zeros<f32, 1, 128>(), 0, n);
  }
  for (auto [b, s, n] : tiles(dy.dim(0), dy.dim(1), dy.dim(2), {1, 16, 128})) {
    auto g = cast<f32>(load<16, 128>(dy, b, s, n));
    store_add(db, transpose(row_sum(transpose(g))), 0, n);
    store_add(dg, transpose(row_sum(transpose(g * cast<f32>(load<16, 128>(xhat, b, s, n))))), 0, n);
  }
}

// ============================================================================ Scans, index math

// Top-p (nucleus) filter on probabilities already sorted in descending order along each row (vLLM's
// sampler after its sort), in place: a probability is kept while the mass before it is below top_p
// (the first one always), else zeroed. Rows walked in 256-column chunks, the running mass carried as an
// 8 x 1 tile between chunks.
PK_KERNEL void top_p_mask_sorted_inplace(Tensor<f32, 2> probs, float top_p) {
  for (auto m : tiles(probs.rows(), {8})) {
    auto carry = zeros<f32, 8, 1>();
    for (auto n : range(0, probs.cols(), 256)) {
      auto p = load<8, 256>(probs, m, n);
      auto before = cumsum(p) - p + carry;
      store(probs, where(before < top_p, p, 0.0f), m, n);
      carry = carry + row_sum(p);
    }
  }
}

// Hugging Face position ids from a padded attention mask (left or right padding): pos = cumsum(mask) - 1
// along each row, 1 where the mask is 0; i64 [B, L] in and out, rows chunked by 128 with the running count
// carried (an i64 1-column tile) between chunks.
PK_KERNEL void position_ids_from_mask_i64(Tensor<i64, 2> mask, Tensor<i64, 2> pos) {
  for (auto b : tiles(mask.rows(), {16})) {
    auto carry = zeros<i64, 16, 1>();
    for (auto n : range(0, mask.cols(), 128)) {
      auto mk = load<16, 128>(mask, b, n);
      auto c = cumsum(mk) + carry;
      store(pos, where(mk == 0, zeros<i64, 16, 128>() + 1, c - 1), b, n);
      carry = carry + cast<i64>(row_sum(cast<f32>(mk)));
    }
  }
}

// Unpadding for variable-length attention (FlashAttention varlen / TensorRT-LLM remove_input_padding):
// out [B, S, H] row (b, s) = packed row cu[b] + s when s < cu[b + 1] - cu[b], else zeros; cu an i64
// [B + 1] of cumulative lengths; the row index computed in i64 (-1 for the padding, which reads zeros).
PK_KERNEL void pad_from_packed_i64(Tensor<bf16, 2> packed, Tensor<i64, 1> cu, Tensor<bf16, 3> out) {
  for (auto [b, s, n] : tiles(out.dim(0), out.dim(1), out.dim(2), {1, 32, 128})) {
    index start = cu.at(b);
    index len = cu.at(b + 1) - start;
    auto srow = cast<i64>(row_index<32, 1>(s));
    auto idx = where(srow < len, srow + start, zeros<i64, 32, 1>() - 1);
    store(out, load_rows<32, 128>(packed, idx, n), b, s, n);
  }
}

// Stream compaction of kept tokens (TensorRT-LLM's remove_padding by a keep mask): phase 1 counts each
// 256-token tile's kept rows, phase 2 (one tile) turns the counts into exclusive offsets, phase 3
// scatters each kept row of x to offset + (running count within the tile) - 1; dropped rows go to -1
// (nowhere). keep is i32 [T], x and y bf16 [T, H] (y's rows past the kept count untouched).
PK_KERNEL void compact_kept_rows(Tensor<i32, 1> keep, Tensor<bf16, 2> x, Tensor<i32, 1> tile_cnt,
                                 Tensor<i32, 1> tile_off, Tensor<bf16, 2> y) {
  for (auto t : tiles(keep.size(), {256}))
    store(tile_cnt, cast<i32>(row_sum(cast<f32>(load<1, 256>(keep, t)))), t / 256);
  for (auto i : tiles(1, {1})) {
    auto c = load<1024>(tile_cnt, 0);
    store(tile_off, cumsum(c) - c, 0);
  }
  for (auto [t, n] : tiles(x.rows(), x.cols(), {256, 64})) {
    auto k = reshape<256, 1>(load<256>(keep, t));
    auto slot = where(k != 0, reshape<256, 1>(cumsum(load<256>(keep, t))) - 1 + tile_off.at(t / 256), -1);
    store_rows(y, load<256, 64>(x, t, n), slot, n);
  }
}

// SmoothQuant per-token int8 quantisation: x * smooth (per channel), the row's absolute maximum over
// 512-column chunks (first pass), scale = amax / 127, q = clamp(round-half-away(x / scale), -127, 127)
// stored as i32 [M, N], scale f32 [M] (rows of zeros get scale 1).
PK_KERNEL void smoothquant_int8_per_token(Tensor<bf16, 2> x, Tensor<f32, 1> smooth, Tensor<i32, 2> q, Tensor<f32, 1> scale) {
  for (auto m : tiles(x.rows(), {8})) {
    auto amax = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 512))
      amax = max(amax, row_max(abs(cast<f32>(load<8, 512>(x, m, n)) * load<1, 512>(smooth, n))));
    auto s = where(amax > 0.0f, amax * (1.0f / 127.0f), 1.0f);
    store(scale, s, m);
    for (auto n : range(0, x.cols(), 512)) {
      auto v = cast<f32>(load<8, 512>(x, m, n)) * load<1, 512>(smooth, n) / s;
      auto r = v + where(v >= 0.0f, 0.5f, -0.5f);
      store(q, cast<i32>(min(max(r, -127.0f), 127.0f)), m, n);
    }
  }
}

// KV-cache append for a decode step on a [B, H, L, D] cache: the new key of every head of sequence b
// ([B, H, D]) goes to position pos[b] (i32), a 4 x 64 tile reshaped into a 4 x 1 x 64 one of the
// cache's trailing dimensions [H, L, D].
PK_KERNEL void kv_cache_append_4d(Tensor<f16, 3> knew, Tensor<i32, 1> pos, Tensor<f16, 4> cache) {
  for (auto [b, h] : tiles(knew.dim(0), knew.dim(1), {1, 4})) {
    index p = pos.at(b);
    store(cache, reshape<4, 1, 64>(load<4, 64>(knew, b, h, 0)), b, h, p, 0);
  }
}

// Online softmax with temperature over [B, S, V] logits, odd 5-row tiles and 96-column chunks: a first
// pass keeps each row's running max and rescaled sum, a second writes the probabilities (f16).
PK_KERNEL void softmax_temp_3d_odd_chunks(Tensor<f32, 3> x, Tensor<f16, 3> p, float inv_temp) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {1, 5})) {
    auto mx = zeros<f32, 5, 1>() - 3.0e38f;
    auto l = zeros<f32, 5, 1>();
    for (auto v : range(0, x.dim(2), 96)) {
      auto t = where(col_index<5, 96>(v) < x.dim(2), load<5, 96>(x, b, s, v) * inv_temp, -3.0e38f);
      auto mnew = max(mx, row_max(t));
      l = l * exp(mx - mnew) + row_sum(exp(t - mnew));
      mx = mnew;
    }
    for (auto v : range(0, x.dim(2), 96))
      store(p, cast<f16>(exp(load<5, 96>(x, b, s, v) * inv_temp - mx) / l), b, s, v);
  }
}

// Cumulative sums down the sequence (linear attention's running key-value state, reduced to a running
// sum): y[t, d] = sum_{u <= t} x[u, d], each 64-column block walking the rows in 32-row steps; the
// column scan is a row cumsum of the transposed tile, the carry a 1 x 64 row.
PK_KERNEL void cumsum_down_columns(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto n : tiles(x.cols(), {64})) {
    auto carry = zeros<f32, 1, 64>();
    for (auto t : range(0, x.rows(), 32)) {
      auto tile = load<32, 64>(x, t, n);
      store(y, transpose(cumsum(transpose(tile))) + carry, t, n);
      carry = carry + transpose(row_sum(transpose(tile)));
    }
  }
}

// ============================================================================ More GEMM layers

// LM head + log-softmax for a small vocabulary (a classifier head, N <= 200) in odd 24 x 200 tiles
// stepping K by 24: the whole row in one tile, the padding columns masked out of the max and the sum.
PK_KERNEL void linear_log_softmax_odd(Tensor<bf16, 2> h, Tensor<bf16, 2> w, Tensor<f32, 2> logp) {
  for (auto m : tiles(h.rows(), {24})) {
    auto acc = zeros<f32, 24, 200>();
    for (auto k : range(0, h.cols(), 24)) acc = mma_t(load<24, 24>(h, m, k), load<200, 24>(w, 0, k), acc);
    auto z = where(col_index<24, 200>(0) < w.rows(), acc, -3.0e38f);
    auto mx = row_max(z);
    auto lse = log(row_sum(exp(z - mx))) + mx;
    store(logp, acc - lse, m, 0);
  }
}

// MoE expert MLP over capacity-padded expert batches (DeepSpeed-MoE / Megatron grouped experts):
// x [E, C, K], gate and up weights [E, F, K]; h = silu(x wgᵀ) * (x wuᵀ) per expert, two accumulators in
// one K loop (the general path), bf16 out [E, C, F].
PK_KERNEL void moe_expert_swiglu_batched(Tensor<bf16, 3> x, Tensor<bf16, 3> wg, Tensor<bf16, 3> wu, Tensor<bf16, 3> h) {
  for (auto [e, m, n] : tiles(x.dim(0), x.dim(1), wg.dim(1), {1, 32, 64})) {
    auto g = zeros<f32, 32, 64>();
    auto u = zeros<f32, 32, 64>();
    for (auto k : range(0, x.dim(2), 32)) {
      auto xt = load<32, 32>(x, e, m, k);
      g = mma_t(xt, load<64, 32>(wg, e, n, k), g);
      u = mma_t(xt, load<64, 32>(wu, e, n, k), u);
    }
    store(h, cast<bf16>(silu(g) * u), e, m, n);
  }
}

// TransformerEngine's LayerNormLinear written as two phases: RMSNorm of x into a local bf16 buffer
// (rows of up to 1024), then the linear layer on the normed rows (the GEMM template: two launches).
PK_KERNEL void rmsnorm_then_linear(Tensor<bf16, 2> x, Tensor<bf16, 1> g, Tensor<bf16, 2> xn, Tensor<bf16, 2> w,
                                   Tensor<bf16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 1024>(x, m, 0));
    auto r = rsqrt(row_sum(t * t) * (1.0f / float(x.cols())) + eps);
    store(xn, cast<bf16>(t * r * cast<f32>(load<1, 1024>(g, 0))), m, 0);
  }
  for (auto [m, n] : tiles(xn.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, xn.cols(), 64)) acc = mma_t(load<128, 64>(xn, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// Attention output projection + bias + residual (f32 out, the GEMM template on its own launch), then
// the post-LayerNorm of BERT / the original Transformer over whole rows of up to 1024 (second launch).
PK_KERNEL void linear_residual_then_layernorm(Tensor<bf16, 2> a, Tensor<bf16, 2> w, Tensor<f32, 1> bias,
                                              Tensor<f32, 2> res, Tensor<f32, 2> hbuf, Tensor<f32, 1> g,
                                              Tensor<f32, 1> b, Tensor<bf16, 2> y, float eps) {
  for (auto [m, n] : tiles(a.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(w, n, k), acc);
    store(hbuf, acc + load<1, 128>(bias, n) + load<128, 128>(res, m, n), m, n);
  }
  for (auto m : tiles(hbuf.rows(), {8})) {
    auto t = load<8, 1024>(hbuf, m, 0);
    float inv_n = 1.0f / float(hbuf.cols());
    auto mu = row_sum(t) * inv_n;
    auto d = where(col_index<8, 1024>(0) < hbuf.cols(), t - mu, 0.0f);
    auto r = rsqrt(row_sum(d * d) * inv_n + eps);
    store(y, cast<bf16>(d * r * load<1, 1024>(g, 0) + load<1, 1024>(b, 0)), m, 0);
  }
}

// MoE routing counts (Megatron's token dispatcher, local part): the top-k expert ids of each token tile
// ([T, K] i32, ids outside 0 .. 63 not counted) counted by histogram, the 64 counts reshaped into a
// [1, 64] row and added into a local [1, 64] i32 tensor (store_add, zeroed in a first phase); then the
// exclusive offsets of the experts in a third phase.
PK_KERNEL void moe_expert_counts_store_add(Tensor<i32, 2> ids, Tensor<i32, 2> counts, Tensor<i32, 2> offsets) {
  for (auto i : tiles(1, {1})) store(counts, zeros<i32, 1, 64>(), 0, 0);
  for (auto t : tiles(ids.rows(), {128})) store_add(counts, reshape<1, 64>(histogram<64>(load<128, 8>(ids, t, 0))), 0, 0);
  for (auto i : tiles(1, {1})) {
    auto c = load<64>(counts, 0, 0);
    store(offsets, reshape<1, 64>(cumsum(c) - c), 0, 0);
  }
}

// The fourteenth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs, aimed at areas the
// earlier sets covered less: GEMM variations on the Hopper template (A B and A B^T, f16 / bf16 in,
// f32 / bf16 / f16 out, tails, epilogues, the batched 3-D form, fp8 operands), the fused GEMM +
// collective forms with other tile shapes, attention (bf16 / f16, head dims 64 / 128, causal, lse,
// MQA, score maps, ring attention by pulls, Ulysses), multi-phase and in-place kernels, register
// tiles on the general path, integer and indexed tensors (gathers, scatters, histograms, scans, MoE,
// vocabulary-parallel embedding and cross-entropy, all-to-all with split sizes), tiles to peers and
// hand-written protocols. Each kernel compiles alone (pkc FILE --kernel NAME) and the file compiles
// as a whole; test/specs/specs14_findings.md says what was checked in the emitted CUDA. Part (b),
// kernels that must be refused (and the findings' reproducers), is user_specs14_bad.pk.cpp.
#include <pk/spec.h>
using namespace pk;


// ========================================================================================== GEMMs on the Hopper template

// C = A B (B stored [K, N]), f16 in, f16 out, 128 x 128 tiles, K step 32: M, N, K any (tails clipped).
PK_KERNEL void g_ab_f16_tails(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 32))
      acc = mma(load_smem<128, 32>(a, m, k), load_smem<32, 128>(b, k, n), acc);
    store(c, cast<f16>(acc), m, n);
  }
}
// C = A B^T, bf16 in, f32 out, 64 x 256 tiles, plus a bias row of an [N] f32 tensor.
PK_KERNEL void g_abt_f32_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> bias, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load<64, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc + load<1, 256>(bias, n), m, n);
  }
}
// Linear layer with a per-output-column dequant scale ([N] f32) and a per-row scale ([M] f32) (e.g. the
// token scale of a quantised activation), bf16 out.
PK_KERNEL void g_abt_row_col_scale(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> row_s, Tensor<f32, 1> col_s,
                                   Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * load<128, 1>(row_s, m) * load<1, 256>(col_s, n)), m, n);
  }
}
// MLP up-projection: bias (bf16 [1, N] row) then SiLU, f16 operands, bf16 output.
PK_KERNEL void g_f16_in_bf16_out_silu(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(silu(acc + cast<f32>(load<1, 256>(bias, 0, n)))), m, n);
  }
}
// Output projection with a residual (f16 [M, N]) added, alpha scaling, and the result cast to f16.
PK_KERNEL void g_residual_alpha(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> r, Tensor<f16, 2> c, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 64})) {
    auto acc = zeros<f32, 128, 64>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma(load<128, 64>(a, m, k), load<64, 64>(b, k, n), acc);
    store(c, cast<f16>(acc * alpha + cast<f32>(load<128, 64>(r, m, n))), m, n);
  }
}
// Bias from row `layer` of a stacked [L, N] bf16 table (an index the host knows), then exact GELU.
PK_KERNEL void g_bias_layer_gelu_erf(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> biases, Tensor<bf16, 2> c,
                                     index layer) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(gelu_erf(acc + cast<f32>(load<1, 256>(biases, layer, n)))), m, n);
  }
}
// LM head: logits past the real vocabulary (cols >= vocab) set to -1e4 (padded vocab), f32 out.
PK_KERNEL void g_vocab_mask_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, index vocab) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<128, 64>(b, n, k), acc);
    store(c, where(col_index<128, 128>(n) < vocab, acc, -1e4f), m, n);
  }
}
// Per-row scale read from column 2 of an [M, 4] f32 table (a host-known column), bf16 A B.
PK_KERNEL void g_col2_scale(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> stats, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma(load_smem<128, 64>(a, m, k), load_smem<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc * load<128, 1>(stats, m, 2)), m, n);
  }
}
// Batched A B^T (3-D bf16), f32 output with a per-column bias [N] and a per-row scale [M] inside the batch.
PK_KERNEL void bg_abt_f32_bias_rows(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 1> bias, Tensor<f32, 1> rs,
                                    Tensor<f32, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<128, 64>(b, z, n, k), acc);
    store(c, (acc + load<1, 128>(bias, n)) * load<128, 1>(rs, m), z, m, n);
  }
}
// Batched A B (B [Bt, K, N], f16) with a residual per batch (f16 [Bt, M, N]) and SiLU, f16 out.
PK_KERNEL void bg_ab_f16_residual_silu(Tensor<f16, 3> a, Tensor<f16, 3> b, Tensor<f16, 3> r, Tensor<f16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(2), {1, 64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma(load<64, 64>(a, z, m, k), load<64, 256>(b, z, k, n), acc);
    store(c, cast<f16>(silu(acc) + cast<f32>(load<64, 256>(r, z, m, n))), z, m, n);
  }
}
// Batched attention-score-like product with a causal mask inside each batch (col > row -> -1e4), bf16 out.
PK_KERNEL void bg_causal_scores(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> c, float scale) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(where(col_index<128, 256>(n) <= row_index<128, 256>(m), acc * scale, -1e4f)), z, m, n);
  }
}
// Batched A B^T with one residual [M, N] shared by every batch (a 2-D tensor read at the tile's rows and
// columns inside each batch).
PK_KERNEL void bg_shared_residual(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 2> r, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<128, 256>(r, m, n))), z, m, n);
  }
}
// Batched A B^T with a per-batch bias row: bias is [Bt, N] and each batch reads its own row z.
PK_KERNEL void bg_bias_per_batch(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 2> bias, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64))
      acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc + load<1, 256>(bias, z, n)), z, m, n);
  }
}

// GEMM + reduce-scatter over each owner's rows, 128 x 128 tiles, A B^T bf16 (not the shipped 128 x 256; the fused
// template retiles it since set 36).
PK_KERNEL void f_gemm_rs_128x128(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256}))
    store(c, zeros<bf16, 64, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.rows(), {1, 128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, o * rows + m, k), load_smem<128, 64>(b, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}
// GEMM + reduce-scatter into f32 partial sums (A B, B [K, N]), owners' rows.
PK_KERNEL void f_gemm_rs_ab_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<f32, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {32, 256}))
    store(c, zeros<f32, 32, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.cols(), {1, 64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma(load<64, 64>(a, o * rows + m, k), load<64, 128>(b, k, n), acc);
    store_add(c.on(o), acc, m, n);
  }
}
// All-gather of A's row shards, then A_full B^T with 128 x 128 tiles and a bias row (bf16).
PK_KERNEL void f_ag_gemm_bias(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 1> bias,
                              Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a_full.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a_full.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a_full, m, k), load_smem<128, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<1, 128>(bias, n))), m, n);
  }
}
// All-gather + GEMM, the shipped form but with f16 operands and A B (B [K, N]).
PK_KERNEL void f_ag_gemm_f16_ab(Sym<f16, 2> a, Scratch<f16, 2> a_full, Tensor<f16, 2> b, Tensor<f16, 2> c) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a_full.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a_full.cols(), 64))
      acc = mma(load_smem<128, 64>(a_full, m, k), load_smem<64, 256>(b, k, n), acc);
    store(c, cast<f16>(acc), m, n);
  }
}
// GEMM + all-reduce (row-parallel linear), 64 x 256 tiles.
PK_KERNEL void f_gemm_ar_64(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<64, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}
// GEMM + all-reduce, then the bias added after the reduction (bias once, not W times), in place in c.
PK_KERNEL void f_gemm_ar_then_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 1> bias, Scratch<bf16, 2> p,
                                   Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
  for (auto [m, n] : tiles(c.rows(), c.cols(), {16, 256}))
    store(c, cast<bf16>(cast<f32>(load<16, 256>(c, m, n)) + cast<f32>(load<1, 256>(bias, n))), m, n);
}
// GEMM + reduce-scatter written over A's rows (each tile added into the owner of its rows).
PK_KERNEL void f_gemm_rs_over_rows(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256}))
    store(c, zeros<bf16, 64, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(m / rows), cast<bf16>(acc), m % rows, n);
  }
}

// ========================================================================================== Attention

// Causal attention on [S, 128] bf16 with the scale computed from the head dim and a 1-D lse [S].
PK_KERNEL void a_bf16_d128_causal_lse1d(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                        Tensor<f32, 1> lse) {
  for (auto m : tiles(q.rows(), {64})) {
    float scale = rsqrt(float(q.cols()));
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.rows()), s, -1e30f);
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
// Non-causal multi-head attention on [H, S, 64] f16 with lse [H, S, 1].
PK_KERNEL void a_f16_d64_heads_lse(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o,
                                   Tensor<f32, 3> lse, float scale) {
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
      acc = mma(cast<f16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}
// Multi-query attention (one K/V head shared by all query heads: group = q.dim(0) / k.dim(0)), bf16, d64,
// causal.
PK_KERNEL void a_mqa_bf16_d64_causal(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                     float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h / (q.dim(0) / k.dim(0)), n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h / (q.dim(0) / k.dim(0)), n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}
// T5-style relative bias: an f32 [Sq, Sk] bias added to the scores at [m, n], bf16 d128, non-causal.
PK_KERNEL void a_bias2d_bf16_d128(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                  Tensor<f32, 2> bias, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale + load<64, 64>(bias, m, n);
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}
// Causal soft-capped attention (Gemma 2) on [H, S, 64] bf16 with lse.
PK_KERNEL void a_softcap_causal_bf16_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                         Tensor<f32, 3> lse, float scale, float cap) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = tanh(mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * (scale / cap)) * cap;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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
// Packed sequences: segment ids (i32 [S]) for queries and keys; a query attends only to keys of its segment.
PK_KERNEL void a_segments_bf16_d128(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                    Tensor<i32, 1> seg, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.rows()) * cast<f32>(load<64, 1>(seg, m) == load<1, 64>(seg, n)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}
// Ring attention by pulls (general path): each rank holds a sequence shard of q, k, v ([S/W, 64] bf16, k and
// v symmetric) and every query tile walks every rank's keys in ring order, causal by global position.
PK_KERNEL void a_ring_pull_causal(Tensor<bf16, 2> q, Sym<bf16, 2> k, Sym<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto p : range(0, world_size())) {
      for (auto n : range(0, k.rows(), 64)) {
        auto s = mma_t(qt, load<64, 64>(k.on(p), n, 0), zeros<f32, 64, 64>()) * scale;
        auto qpos = row_index<64, 64>(m) + float(rank() * q.rows());
        auto kpos = col_index<64, 64>(n) + float(p * k.rows());
        s = where((kpos <= qpos) * (col_index<64, 64>(n) < k.rows()), s, -1e30f);
        auto mnew = max(mx, row_max(s));
        auto pr = exp(s - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(pr);
        acc = mma(cast<bf16>(pr), load<64, 64>(v.on(p), n, 0), acc * corr);
        mx = mnew;
      }
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}
// Ulysses attention, f16 [H, S/W, 64] shards, non-causal: all-to-all to head shards, the template, back.
PK_KERNEL void a_ulysses_f16_d64(Sym<f16, 3> q, Sym<f16, 3> k, Sym<f16, 3> v, Sym<f16, 3> o, Sym<f16, 3> qh,
                                 Sym<f16, 3> kh, Sym<f16, 3> vh, Sym<f16, 3> oh, float scale) {
  all_to_all(q, qh, 0, 1);
  all_to_all(k, kh, 0, 1);
  all_to_all(v, vh, 0, 1);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64})) {
    auto qt = load<64, 64>(qh, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, kh.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(kh, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < kh.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(vh, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(oh, cast<f16>(acc / l), h, m, 0);
  }
  all_to_all(oh, o, 1, 0);
}

// ========================================================================================== Multi-phase and in-place

// In-place all-reduce of a residual stream, then RMSNorm of the sum into y (tensor-parallel block output).
PK_KERNEL void m_ar_inplace_rmsnorm(Sym<bf16, 2> x, Tensor<bf16, 1> w, Tensor<bf16, 2> y, float eps) {
  all_reduce(Sum, x, x);
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 1024>(x, m, 0));
    auto r = rsqrt(row_sum(t * t) * (1.0f / 1024.0f) + eps);
    store(y, cast<bf16>(t * r * cast<f32>(load<1, 1024>(w, 0))), m, 0);
  }
}
// Reduce-scatter in place (rank r's sum lands in chunk r of x), a scale on this rank's chunk in place, then an
// in-place all-gather of the chunks: a sharded optimizer step's communication, rows a multiple of 16 x W.
PK_KERNEL void m_rs_scale_ag_inplace(Sym<f32, 2> x, float lr) {
  reduce_scatter(Sum, x, x);
  index rows = x.rows() / world_size();
  for (auto [m, n] : tiles(rows, x.cols(), {16, 256}))
    store(x, load<16, 256>(x, rank() * rows + m, n) * lr, rank() * rows + m, n);
  all_gather(x, x);
}
// All-reduce, local GELU of the sum, all-gather of a column shard of the GELU output: collective, compute,
// collective.
PK_KERNEL void m_ar_gelu_ag_cols(Sym<f32, 2> x, Sym<f32, 2> s, Sym<f32, 2> g, Tensor<f32, 2> y) {
  all_reduce(Sum, x, s);
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 128}))
    store(g, gelu(load<16, 128>(s, m, rank() * g.cols() + n)), m, n);
  all_gather(g, y, 1);
}
// Two local tile loops: row sums of x into a column, then x divided by its row sum (every block needs
// sums another block wrote only if tiles split rows; here a second loop over other tiles reads them).
PK_KERNEL void m_two_loops_rowsum(Tensor<f32, 2> x, Tensor<f32, 2> sums, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {32})) {
    auto acc = zeros<f32, 32, 1>();
    for (auto n : range(0, x.cols(), 256)) acc = acc + row_sum(load<32, 256>(x, m, n));
    store(sums, acc, m, 0);
  }
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 128}))
    store(y, load<64, 128>(x, m, n) / load<64, 1>(sums, m, 0), m, n);
}
// Hand-written phases: tile loop, grid barrier, a loop reading other blocks' tiles (transposed), grid barrier,
// a third loop; local only.
PK_KERNEL void m_grid_barriers_transpose(Tensor<f32, 2> x, Sym<f32, 2> t, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 32}))
    store(t, transpose(load<32, 32>(x, m, n)), n, m);
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(t.rows(), t.cols(), {32, 32}))
    store(y, load<32, 32>(t, m, n) * 2.0f, m, n);
  prim::barrier(prim::flag(1, Grid));
}
// Tensor-parallel LayerNorm over column shards: partial sums and sums of squares, one all-reduce of both,
// then the normalisation.
PK_KERNEL void m_tp_layernorm(Tensor<f32, 2> x, Tensor<f32, 1> w, Tensor<f32, 1> b, Sym<f32, 2> part,
                              Sym<f32, 2> tot, Tensor<f32, 2> y, float inv_n, float eps) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 512>(x, m, 0);
    store(part, row_sum(t), m, 0);
    store(part, row_sum(t * t), m, 1);
  }
  all_reduce(Sum, part, tot);
  for (auto m : tiles(x.rows(), {16})) {
    auto mean = load<16, 1>(tot, m, 0) * inv_n;
    auto var = load<16, 1>(tot, m, 1) * inv_n - mean * mean;
    auto t = load<16, 512>(x, m, 0);
    store(y, (t - mean) * rsqrt(var + eps) * load<1, 512>(w, 0) + load<1, 512>(b, 0), m, 0);
  }
}
// Broadcast of parameters in place from root, then a local cast to bf16.
PK_KERNEL void m_bcast_inplace_cast(Sym<f32, 1> p, Tensor<bf16, 1> q, index root) {
  broadcast(p, p, root);
  for (auto i : tiles(p.size(), {2048})) store(q, cast<bf16>(load<2048>(p, i)), i);
}
// Max all-reduce of per-row absolute maxima (for a shared fp8 scale), then quantise with that scale.
PK_KERNEL void m_amax_ar_quant(Tensor<bf16, 2> x, Sym<f32, 2> amax, Sym<f32, 2> gmax, Tensor<f8e4m3, 2> q,
                               Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {16})) {
    auto a = zeros<f32, 16, 1>();
    for (auto n : range(0, x.cols(), 512)) a = max(a, row_max(abs(cast<f32>(load<16, 512>(x, m, n)))));
    store(amax, a, m, 0);
  }
  all_reduce(Max, amax, gmax);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 512})) {
    auto g = max(load<16, 1>(gmax, m, 0), 1e-12f);
    store(q, cast<f8e4m3>(cast<f32>(load<16, 512>(x, m, n)) * (448.0f / g)), m, n);
  }
  for (auto m : tiles(x.rows(), {16})) store(s, max(load<16, 1>(gmax, m, 0), 1e-12f) * (1.0f / 448.0f), m, 0);
}
// A host loop: `steps` rounds of an all-reduce followed by a damped update x = 0.5 (x + mean).
PK_KERNEL void m_host_loop_average(Sym<f32, 1> x, Sym<f32, 1> s, index steps) {
  for (auto it : range(0, steps, 1)) {
    all_reduce(Sum, x, s);
    for (auto i : tiles(x.size(), {1024}))
      store(x, (load<1024>(x, i) + load<1024>(s, i) * (1.0f / float(world_size()))) * 0.5f, i);
  }
}
// In-place all-to-all along dimension 1 (column blocks), then a local add of a bias row.
PK_KERNEL void m_a2a_cols_inplace_bias(Sym<f32, 2> x, Tensor<f32, 1> bias, Tensor<f32, 2> y) {
  all_to_all(x, x, 1, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y, load<16, 256>(x, m, n) + load<1, 256>(bias, n), m, n);
}

// ========================================================================================== Register tiles on the general path

// RMSNorm of a bf16 [T, 4096] with a residual add first (x + r written back to r: the fused add-norm).
PK_KERNEL void r_add_rmsnorm(Tensor<bf16, 2> x, Tensor<bf16, 2> r, Tensor<bf16, 1> w, Tensor<bf16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = cast<f32>(load<4, 4096>(x, m, 0)) + cast<f32>(load<4, 4096>(r, m, 0));
    store(r, cast<bf16>(t), m, 0);
    auto inv = rsqrt(row_sum(t * t) * (1.0f / 4096.0f) + eps);
    store(y, cast<bf16>(t * inv * cast<f32>(load<1, 4096>(w, 0))), m, 0);
  }
}
// Softmax over long rows with a range loop carrying the running max and sum (online), then a second pass.
PK_KERNEL void r_online_softmax_long(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {8})) {
    auto mx = zeros<f32, 8, 1>() - 1e30f;
    auto l = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 1024)) {
      auto t = where(col_index<8, 1024>(n) < x.cols(), load<8, 1024>(x, m, n), -1e30f);
      auto mnew = max(mx, row_max(t));
      l = l * exp(mx - mnew) + row_sum(exp(t - mnew));
      mx = mnew;
    }
    for (auto n : range(0, x.cols(), 1024))
      store(y, exp(load<8, 1024>(x, m, n) - mx) / l, m, n);
  }
}
// Rotary embedding (half-split form) on [S, 128] bf16 with cos / sin tables [S, 64] f32.
PK_KERNEL void r_rotary_half(Tensor<bf16, 2> x, Tensor<f32, 2> cs, Tensor<f32, 2> sn, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {32})) {
    auto x1 = cast<f32>(load<32, 64>(x, m, 0));
    auto x2 = cast<f32>(load<32, 64>(x, m, 64));
    auto c = load<32, 64>(cs, m, 0);
    auto s = load<32, 64>(sn, m, 0);
    store(y, cast<bf16>(x1 * c - x2 * s), m, 0);
    store(y, cast<bf16>(x2 * c + x1 * s), m, 64);
  }
}
// Rotary on [H, S, 64] f16 heads with cos / sin computed from positions: theta = pos * inv_freq[j].
PK_KERNEL void r_rotary_heads_computed(Tensor<f16, 3> x, Tensor<f32, 1> inv_freq, Tensor<f16, 3> y, index pos0) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    auto ang = (row_index<16, 32>(m) + float(pos0)) * load<1, 32>(inv_freq, 0);
    auto c = cos(ang);
    auto s = sin(ang);
    auto x1 = cast<f32>(load<16, 32>(x, h, m, 0));
    auto x2 = cast<f32>(load<16, 32>(x, h, m, 32));
    store(y, cast<f16>(x1 * c - x2 * s), h, m, 0);
    store(y, cast<f16>(x2 * c + x1 * s), h, m, 32);
  }
}
// SwiGLU on a fused [T, 2F] gate|up projection into [T, F].
PK_KERNEL void r_swiglu_fused(Tensor<bf16, 2> gu, Tensor<bf16, 2> y) {
  index f = gu.cols() / 2;
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 512})) {
    auto g = cast<f32>(load<16, 512>(gu, m, n));
    auto u = cast<f32>(load<16, 512>(gu, m, f + n));
    store(y, cast<bf16>(silu(g) * u), m, n);
  }
}
// Per-token fp8 quantisation with per-block (1 x 128) scales, e5m2 variant, scale stored transposed
// [C/128, T] (a column-major scale layout).
PK_KERNEL void r_quant_e5m2_blocks_t(Tensor<bf16, 2> x, Tensor<f8e5m2, 2> q, Tensor<f32, 2> st) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto t = cast<f32>(load<32, 128>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-20f);
    store(q, cast<f8e5m2>(t * (57344.0f / amax)), m, n);
    store(st, transpose(amax * (1.0f / 57344.0f)), n / 128, m);
  }
}
// Dequantise e4m3 with 128 x 128 block scales (DeepSeek-style weights) into bf16.
PK_KERNEL void r_dequant_128x128(Tensor<f8e4m3, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {128, 128}))
    store(y, cast<bf16>(cast<f32>(load<128, 128>(q, m, n)) * s.at(m / 128, n / 128)), m, n);
}
// Banded (local) mask on scores: keep |row - col| <= band, others -inf-like, then softmax.
PK_KERNEL void r_band_softmax(Tensor<f32, 2> s, Tensor<f32, 2> p, float band) {
  for (auto m : tiles(s.rows(), {16})) {
    auto d = row_index<16, 1024>(m) - col_index<16, 1024>(0);
    auto keep = (abs(d) <= band) * (col_index<16, 1024>(0) < float(s.cols()));
    auto x = where(keep, load<16, 1024>(s, m, 0), -1e30f);
    auto e = exp(x - row_max(x));
    store(p, e / row_sum(e), m, 0);
  }
}
// Newton iterations for 1 / sqrt(a) carried in a range loop of run-time trip count (x0 = 1 / (1 + a)).
PK_KERNEL void r_range_newton_rsqrt(Tensor<f32, 2> a, Tensor<f32, 2> y, index iters) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 256})) {
    auto t = load<16, 256>(a, m, n);
    auto x = 1.0f / (t + 1.0f);
    for (auto it : range(0, iters)) x = x * (1.5f - 0.5f * t * x * x);
    store(y, x, m, n);
  }
}
// Label-smoothed cross-entropy over [T, V] f32 logits (i32 targets [T, 1]), one pass per row block.
PK_KERNEL void r_xent_smooth(Tensor<f32, 2> logits, Tensor<i32, 2> target, Tensor<f32, 2> loss, float eps) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    for (auto n : range(0, logits.cols(), 512))
      mx = max(mx, row_max(where(col_index<16, 512>(n) < logits.cols(), load<16, 512>(logits, t, n), -1e30f)));
    auto want = cast<f32>(load<16, 1>(target, t, 0));
    auto se = zeros<f32, 16, 1>();
    auto sx = zeros<f32, 16, 1>();
    auto xt = zeros<f32, 16, 1>();
    for (auto n : range(0, logits.cols(), 512)) {
      auto x = load<16, 512>(logits, t, n);
      auto cols = col_index<16, 512>(n);
      se = se + row_sum(where(cols < logits.cols(), exp(x - mx), 0.0f));
      sx = sx + row_sum(x);
      xt = xt + row_sum(where(cols == want, x, 0.0f));
    }
    auto lse = log(se) + mx;
    store(loss, (lse - xt) * (1.0f - eps) + (lse - sx * (1.0f / float(logits.cols()))) * eps, t, 0);
  }
}
// Scalars: a leaky-ReLU-then-clamp with float parameters and a computed constant.
PK_KERNEL void r_leaky_clamp(Tensor<f16, 1> x, Tensor<f16, 1> y, float slope, float lim) {
  for (auto i : tiles(x.size(), {4096})) {
    auto t = cast<f32>(load<4096>(x, i));
    store(y, cast<f16>(min(max(where(t > 0.0f, t, t * slope), -lim), lim)), i);
  }
}

// ========================================================================================== Integer and indexed tensors

// Gather rows of a bf16 table by i64 ids ([T] ids), 32 rows x 256 columns a tile.
PK_KERNEL void i_gather_i64(Tensor<bf16, 2> table, Tensor<i64, 1> ids, Tensor<bf16, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 256}))
    store(out, load_rows<32, 256>(table, load<32>(ids, t), n), t, n);
}
// Scatter rows by a permutation (i32 [T]): out[perm[t]] = x[t] (un-permute after a sort by expert).
PK_KERNEL void i_scatter_perm(Tensor<f32, 2> x, Tensor<i32, 1> perm, Tensor<f32, 2> out) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 512}))
    store_rows(out, load<16, 512>(x, t, n), load<16>(perm, t), n);
}
// Segment sum: rows of x added into out[seg[t]] (duplicates all arrive), f32.
PK_KERNEL void i_segment_sum(Tensor<f32, 2> x, Tensor<i32, 2> seg, Tensor<f32, 2> out) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store_add_rows(out, load<32, 128>(x, t, n), load<32, 1>(seg, t, 0), n);
}
// Histogram of expert ids (i32 [T, K] top-k ids, 64 experts) per tile, accumulated with store_add into
// a local per-block-free layout: counts[tile, e]. Then the exclusive offsets in a second loop via cumsum.
PK_KERNEL void i_hist_then_offsets(Tensor<i32, 2> ids, Tensor<i32, 2> counts, Tensor<i32, 2> offs) {
  for (auto t : tiles(ids.rows(), {256}))
    store(counts, histogram<64>(load<256, 8>(ids, t, 0)), t / 256, 0);
  for (auto r : tiles(counts.rows(), {1})) {
    auto c = load<64>(counts, r, 0);
    store(offs, cumsum(c) - c, r, 0);
  }
}
// Cumulative sum of i64 lengths into offsets [N + 1] (offs[0] = 0), one block.
PK_KERNEL void i_lengths_to_offsets(Tensor<i64, 1> len, Tensor<i64, 1> offs) {
  for (auto i : tiles(1, {1})) {
    store(offs, zeros<i64, 1>(), 0);
    store(offs, cumsum(load<4096>(len, 0)), 1);
  }
}
// Vocabulary-parallel embedding with an i64 id tensor and f16 table, then an all-reduce into out.
PK_KERNEL void i_embed_vp_f16(Tensor<i64, 1> ids, Tensor<f16, 2> table, Scratch<f16, 2> part, Sym<f16, 2> out) {
  for (auto [t, n] : tiles(part.rows(), part.cols(), {32, 128}))
    store(part, load_rows<32, 128>(table, load<32>(ids, t) - rank() * table.rows(), n), t, n);
  all_reduce(Sum, part, out);
}
// Vocabulary-parallel cross-entropy with bf16 logits and i64 targets [T]: max all-reduce, stats all-reduce.
PK_KERNEL void i_xent_vp_bf16(Tensor<bf16, 2> logits, Tensor<i64, 1> target, Sym<f32, 2> lmax, Sym<f32, 2> gmax,
                              Sym<f32, 2> lst, Sym<f32, 2> gst, Tensor<f32, 1> loss) {
  index first = rank() * logits.cols();
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = zeros<f32, 16, 1>() - 1e30f;
    for (auto n : range(0, logits.cols(), 256))
      m = max(m, row_max(where(col_index<16, 256>(n) < logits.cols(), cast<f32>(load<16, 256>(logits, t, n)), -1e30f)));
    store(lmax, m, t, 0);
  }
  all_reduce(Max, lmax, gmax);
  for (auto t : tiles(logits.rows(), {16})) {
    auto m = load<16, 1>(gmax, t, 0);
    auto want = cast<f32>(load<16, 1>(target, t) - first);
    auto se = zeros<f32, 16, 1>();
    auto pk = zeros<f32, 16, 1>();
    for (auto n : range(0, logits.cols(), 256)) {
      auto x = cast<f32>(load<16, 256>(logits, t, n));
      auto cols = col_index<16, 256>(n);
      se = se + row_sum(where(cols < logits.cols(), exp(x - m), 0.0f));
      pk = pk + row_sum(where(cols == want, x, 0.0f));
    }
    store(lst, se, t, 0);
    store(lst, pk, t, 1);
  }
  all_reduce(Sum, lst, gst);
  for (auto t : tiles(logits.rows(), {16}))
    store(loss, log(load<16, 1>(gst, t, 0)) + load<16, 1>(gmax, t, 0) - load<16, 1>(gst, t, 1), t);
}
// MoE combine, top-k weights in bf16, f32 output, 16-row tiles (pulls from every rank).
PK_KERNEL void i_moe_combine_f32(Sym<bf16, 2> y, Tensor<i32, 2> ids, Tensor<bf16, 2> weights, Tensor<i32, 2> slot,
                                 Tensor<f32, 2> out, index experts) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 256})) {
    auto acc = zeros<f32, 16, 256>();
    for (auto k : range(0, ids.cols())) {
      auto owner = load<16, 1>(ids, t, k) / experts;
      auto place = load<16, 1>(slot, t, k);
      auto w = cast<f32>(load<16, 1>(weights, t, k));
      for (auto p : range(0, world_size()))
        acc = acc + cast<f32>(load_rows<16, 256>(y.on(p), where(owner == p, place, -1), n)) * w;
    }
    store(out, acc, t, n);
  }
}
// MoE dispatch with capacity per expert (cap rows each), local slots by claim, tokens pushed to owner ranks.
PK_KERNEL void i_moe_dispatch_cap(Tensor<bf16, 2> x, Tensor<i32, 2> ids, Scratch<i32, 1> fill, Tensor<i32, 2> slot,
                                  Sym<bf16, 2> recv, index cap, index experts) {
  for (auto e : tiles(fill.size(), {256})) store(fill, zeros<i32, 256>(), e);
  for (auto [t, k] : tiles(ids.rows(), ids.cols(), {128, 1})) {
    auto e = load<128, 1>(ids, t, k);
    auto place = claim(fill, e);
    auto ok = (place >= 0) * (place < cap);
    // recv rows: [expert (global), source rank, slot] = ((e * W) + rank) * cap + place
    store(slot, where(ok, (e * world_size() + rank()) * cap + place, -1), t, k);
  }
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    auto rows = load<32, 256>(x, t, n);
    for (auto k : range(0, ids.cols())) {
      auto owner = load<32, 1>(ids, t, k) / experts;
      auto place = load<32, 1>(slot, t, k);
      for (auto p : range(0, world_size()))
        store_rows(recv.on(p), rows, where(owner == p, place - p * experts * world_size() * cap, -1), n);
    }
  }
}
// All-to-all with split sizes (all_to_all_v) of f32 rows with 256-column tiles.
PK_KERNEL void i_a2av_f32(Tensor<f32, 2> x, Tensor<i32, 1> send, Sym<f32, 2> y, Sym<i32, 1> recv) {
  for (auto p : tiles(world_size(), {1})) store(recv.on(p), load<1>(send, p), rank());
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto rows = load<16, 256>(x, t, n);
    auto i = cumsum(zeros<i32, 16>() + 1) + (t - 1);
    auto off = zeros<i32, 1>();
    for (auto p : range(0, world_size())) {
      auto count = load<1>(send, p);
      auto base = zeros<i32, 1>();
      for (auto s : range(0, rank())) base = base + load<1>(recv.on(p), s);
      store_rows(y.on(p), rows, where((i >= off) * (i < off + count), base + i - off, -1), n);
      off = off + count;
    }
  }
}
// Token dropping mask: keep[t] = 1 if the token's expert slot fits the capacity, as f32, from i32 slots.
PK_KERNEL void i_keep_mask(Tensor<i32, 2> slot, Tensor<f32, 2> keep) {
  for (auto [t, k] : tiles(slot.rows(), slot.cols(), {256, 8}))
    store(keep, cast<f32>(load<256, 8>(slot, t, k) >= 0), t, k);
}
// fp8 GEMM (e4m3 x e4m3, A B^T) on the template with per-tensor scales, bf16 out.
PK_KERNEL void i_fp8_gemm_scaled(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 1> sa, Tensor<f32, 1> sb,
                                 Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * (sa.at(0) * sb.at(0))), m, n);
  }
}
// fp8 GEMM with per-row (token) scales of A and per-column (channel) scales of B, f32 out.
PK_KERNEL void i_fp8_gemm_rowcol(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 1> sa, Tensor<f32, 1> sb,
                                 Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 128))
      acc = mma_t(load_smem<128, 128>(a, m, k), load_smem<128, 128>(b, n, k), acc);
    store(c, acc * load<128, 1>(sa, m) * load<1, 128>(sb, n), m, n);
  }
}

// ========================================================================================== Tiles to peers, ring shifts, hand-written protocols

// Ring shift of a 3-D [H, S, D] bf16 tensor by one rank (heads x 16 rows a tile).
PK_KERNEL void x_ring_shift_heads(Tensor<bf16, 3> x, Sym<bf16, 3> y) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16}))
    store(y.on(next_rank()), load<16, 128>(x, h, m, 0), h, m, 0);
}
// Ring shift by two ranks with a computed peer, and the local tile scaled.
PK_KERNEL void x_shift_by_two(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256}))
    store(y.on((rank() + 2) % world_size()), load<32, 256>(x, m, n) * 0.5f, m, n);
}
// Each rank adds its partial into the owner of the row block (sharded gradient accumulation with f32 adds);
// acc is zeroed in a first phase.
PK_KERNEL void x_add_to_owner(Tensor<f32, 2> g, Sym<f32, 2> acc) {
  for (auto [m, n] : tiles(acc.rows(), acc.cols(), {32, 256})) store(acc, zeros<f32, 32, 256>(), m, n);
  index rows = acc.rows();
  for (auto [o, m, n] : tiles(world_size(), rows, g.cols(), {1, 32, 256}))
    store_add(acc.on(o), load<32, 256>(g, o * rows + m, n), m, n);
}
// Halo exchange: each rank sends its first row block to prev and its last to next, into halo buffers
// [2, H, C] (plane 0 from prev, plane 1 from next).
PK_KERNEL void x_halo_exchange(Tensor<f32, 2> x, Sym<f32, 3> halo) {
  for (auto n : tiles(x.cols(), {256})) {
    store(halo.on(prev_rank()), load<4, 256>(x, 0, n), 1, 0, n);
    store(halo.on(next_rank()), load<4, 256>(x, x.rows() - 4, n), 0, 0, n);
  }
}
// Pull the previous rank's tile and add it to ours (a pull-based ring step) in one tile loop.
PK_KERNEL void x_pull_prev_add(Sym<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y, load<16, 256>(x, m, n) + load<16, 256>(x.on(prev_rank()), m, n), m, n);
}
// Rows scattered into peers: each rank puts its rows at rank() * R + r of every rank's gathered tensor
// (an all-gather by rows, exact at any R).
PK_KERNEL void x_store_rows_allgather(Tensor<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto t = load<16, 256>(x, m, n);
    for (auto p : range(0, world_size()))
      store_rows(y.on(p), t, cast<i32>(row_index<16, 1>(m)) + rank() * x.rows(), n);
  }
}
// Hand-written ring push with a Block flag: push my tile to next, signal, wait for prev's push, consume.
PK_KERNEL void x_prim_ring_block(Sym<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> out) {
  auto f = prim::flag(1);
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    prim::store_async(Ldst, buf.on(next_rank()), load<16, 256>(x, m, n), m, n);
  prim::signal(f, next_rank());
  prim::wait(f, 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(out, load<16, 256>(buf, m, n) - load<16, 256>(x, m, n), m, n);
  prim::barrier(prim::flag(2));
}
// Hand-written all-gather into planes by pushes and Grid barriers, then a local sum over the planes.
PK_KERNEL void x_prim_ag_planes_sum(Sym<f32, 2> x, Sym<f32, 3> planes, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    for (auto p : range(0, world_size()))
      prim::store_async(Ldst, planes.on(p), load<16, 256>(x, m, n), rank(), m, n);
  prim::barrier(prim::flag(1, Grid));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto s = zeros<f32, 16, 256>();
    for (auto p : range(0, world_size())) s = s + load<16, 256>(planes, p, m, n);
    store(out, s, m, n);
  }
  prim::barrier(prim::flag(2, Grid));
}
// Per-tile flags: tile t's push signals slot 2 + t; the consumer of tile t waits on that slot only.
PK_KERNEL void x_prim_per_tile_flags(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> out) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size(), {1024})) {
    auto f = prim::flag(2 + i / 1024);
    prim::store_async(Ldst, y.on(next_rank()), load<1024>(x, i) * 2.0f, i);
    prim::signal(f, next_rank());
    prim::wait(f, 1);
    store(out, load<1024>(y, i), i);
  }
  prim::barrier(prim::flag(1));
}
// Two-shot all-reduce by hand: rank r reduces its row block (blocks a whole number of 16-row tiles apart, so
// ranks never overlap) from every rank with prim::reduce and pushes the sum into every rank's y.
PK_KERNEL void x_prim_two_shot(Sym<f32, 2> x, Sym<f32, 2> y) {
  index per = (x.rows() + world_size() * 16 - 1) / (world_size() * 16) * 16;
  prim::barrier(prim::flag(0, Grid));
  for (auto [m, n] : tiles(per, x.cols(), {16, 256})) {
    auto r = prim::reduce<16, 256>(Sum, Ldst, x, rank() * per + m, n);
    for (auto p : range(0, world_size()))
      prim::store_async(Ldst, y.on(p), r, rank() * per + m, n);
  }
  prim::barrier(prim::flag(1, Grid));
}
// Pipelined double buffer over 4 steps through planes s % 2: the producer of step s waits for the consumer's
// 'free' of step s - 2 (flag 10 + s; the first two pre-signalled before the loop), so two steps are in flight.
PK_KERNEL void x_prim_double_buffer(Sym<f32, 2> x, Sym<f32, 3> buf, Tensor<f32, 2> out) {
  prim::barrier(prim::flag(0));
  prim::signal(prim::flag(10), prev_rank());
  prim::signal(prim::flag(11), prev_rank());
  for (auto s : range(0, 4, 1)) {
    prim::wait(prim::flag(10 + s), 1);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      prim::store_async(Ldst, buf.on(next_rank()), load<16, 128>(x, m, n) * float(s + 1), s % 2, m, n);
    prim::signal(prim::flag(1 + s), next_rank());
    prim::wait(prim::flag(1 + s), 1);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
      store(out, load<16, 128>(buf, s % 2, m, n) + load<16, 128>(out, m, n), m, n);
    prim::signal(prim::flag(12 + s), prev_rank());
  }
  prim::wait(prim::flag(14), 1);
  prim::wait(prim::flag(15), 1);
  prim::barrier(prim::flag(20));
}

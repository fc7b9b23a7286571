// The thirty-first user-written spec set: kernels as model code writes them, mixing constructs.
// Attention variants through the language (sliding windows written with iota / where, cross
// attention with query and key lengths that are not multiples of the tile, bottom-right causal
// alignment for a KV cache, GQA, soft-capping, ALiBi from a slope tensor, a 2-D additive bias),
// rotary embedding on [S, H, D] (halves and interleaved pairs), RMSNorm + fp8 with per-row scales,
// top-k routing and a chunked argmax with integer tiles, embedding lookups by row gathers,
// multi-phase kernels, in-place updates, GEMMs with unusual but legal shapes and epilogues, and ring
// shifts / adds into peers from tile loops. Findings: test/specs/specs31_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================ attention ==

// 1. Sliding-window causal attention, head dim 64, on [S, D]: query i sees keys j with
//    i - window < j <= i. The window is written with `row - col < window` and the masks nested.
PK_KERNEL void b31_swa_nested_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                  Tensor<f32, 2> lse, index window, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto row = row_index<64, 64>(m);
      auto col = col_index<64, 64>(n);
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(row - col < window, where(col <= row, where(col < k.rows(), s, -1e30f), -1e30f), -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, mx + log(l), m, 0);
  }
}

// 2. Cross attention, head dim 128: Sq queries against Sk keys (encoder states), neither a multiple
//    of 64; no causal mask. o = softmax(scale q k^T) v.
PK_KERNEL void b31_cross_d128(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                              float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
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

// 3. Causal attention against a KV cache, bottom-right aligned (chunked prefill / speculative decode):
//    Sq new queries are the last Sq of Sk positions, so query i sees keys j <= i + (Sk - Sq).
//    Head dim 64, [H, S, D].
PK_KERNEL void b31_kvcache_causal_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                      float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index off = k.dim(1) - q.dim(1);
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto row = row_index<64, 64>(m);
      auto col = col_index<64, 64>(n);
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col <= row + off) && (col < k.dim(1)), s, -1e30f);
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

// 4. GQA with Gemma-2 soft-capping, head dim 128, causal: s = cap * tanh(scale * q.k / cap), K and V
//    at head h / group (group an argument). lse into a [H, S] f32 tensor declared [H, S, 1].
PK_KERNEL void b31_gqa_softcap_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                    Tensor<f32, 3> lse, index group, float scale, float cap) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto raw = mma_t(qt, load<64, 128>(k, h / group, n, 0), zeros<f32, 64, 64>());
      auto s = tanh(raw * (scale / cap)) * cap;
      s = where(min(col_index<64, 64>(n) <= row_index<64, 64>(m), col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h / group, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 5. ALiBi from a slope tensor (slopes [H], f32), non-causal (an encoder), head dim 64:
//    s = scale q.k - slope_h |i - j|.
PK_KERNEL void b31_alibi_abs_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                 Tensor<f32, 1> slopes, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    float slope = slopes.at(h);
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto dist = abs(row_index<64, 64>(m) - col_index<64, 64>(n));
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale - dist * slope;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
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

// 6. Attention with an additive f32 bias [Sq, Sk] (T5 relative bias, shared by all heads) and a key
//    padding mask from an i32 tensor valid [Sk] (1 = keep), head dim 64, cross lengths.
PK_KERNEL void b31_bias_keymask_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                    Tensor<f32, 2> bias, Tensor<i32, 1> valid, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale + load<64, 64>(bias, m, n);
      s = where((col_index<64, 64>(n) < k.dim(1)) && (load<1, 64>(valid, n) != 0), s, -1e30f);
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

// 7. Attention with head dim 96 (not a template head dim) and GQA, causal, on the general path:
//    [H, S, 96], K and V at head h / (Hq / Hk).
PK_KERNEL void b31_gqa_d96_general(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                   float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 32})) {
    index kh = h / (q.dim(0) / k.dim(0));
    auto qt = load<32, 96>(q, h, m, 0);
    auto mx = zeros<f32, 32, 1>() - 1e30f;
    auto l = zeros<f32, 32, 1>();
    auto acc = zeros<f32, 32, 96>();
    for (auto n : range(0, m + 32, 32)) {
      auto s = mma_t(qt, load<32, 96>(k, kh, n, 0), zeros<f32, 32, 32>()) * scale;
      s = where((col_index<32, 32>(n) <= row_index<32, 32>(m)) && (col_index<32, 32>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<32, 96>(v, kh, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// 8. The window's keys only: the key loop starts at the first block the window reaches
//    (max(0, m - window + 1) rounded down to 64) instead of 0, as a user skipping keys by hand writes.
PK_KERNEL void b31_swa_skip_d128(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                 index window, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(max(0, m - window + 1) / 64 * 64, m + 64, 64)) {
      auto row = row_index<64, 64>(m);
      auto col = col_index<64, 64>(n);
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col <= row) && (col > row - window) && (col < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<128 / 2, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// 9. Single-pass softmax attention for short key sequences (Sk <= 256, one key tile), head dim 64,
//    f32 scores through the general path: the padding columns masked with col_index before row_max.
PK_KERNEL void b31_short_keys_onepass(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<f32, 2> o,
                                      float scale) {
  for (auto m : tiles(q.rows(), {16})) {
    auto s = mma_t(load<16, 64>(q, m, 0), load<256, 64>(k, 0, 0), zeros<f32, 16, 256>()) * scale;
    s = where(col_index<16, 256>(0) < k.rows(), s, -1e30f);
    auto e = exp(s - row_max(s));
    auto p = e / row_sum(e);
    store(o, mma(cast<bf16>(p), load<256, 64>(v, 0, 0), zeros<f32, 16, 64>()), m, 0);
  }
}

// 10. Masked after the exponential (a variant some ports write): the running max comes from the
//     unmasked scores, masked probabilities are zeroed. Same softmax over the visible (causal) keys.
PK_KERNEL void b31_mask_after_exp_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                      float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      auto keep = (col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.rows());
      auto mnew = max(mx, row_max(where(keep, s, -1e30f)));
      auto p = where(keep, exp(s - mnew), 0.0f);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// ============================================================ rotary ==

// 11. Rotary embedding (NeoX halves) in place on x [S, H, 128] bf16, cos / sin [S, 64] f32:
//     x[s, h, j] = x1 cos - x2 sin, x[s, h, 64 + j] = x2 cos + x1 sin (x1 = x[.., j], x2 = x[.., 64 + j]).
PK_KERNEL void b31_rope_shd_inplace(Tensor<bf16, 3> x, Tensor<f32, 2> cos_t, Tensor<f32, 2> sin_t) {
  for (auto [s, h] : tiles(x.dim(0), x.dim(1), {16, 1})) {
    auto x1 = cast<f32>(load<16, 1, 64>(x, s, h, 0));
    auto x2 = cast<f32>(load<16, 1, 64>(x, s, h, 64));
    auto c = reshape<16, 1, 64>(load<16, 64>(cos_t, s, 0));
    auto sn = reshape<16, 1, 64>(load<16, 64>(sin_t, s, 0));
    store(x, cast<bf16>(x1 * c - x2 * sn), s, h, 0);
    store(x, cast<bf16>(x2 * c + x1 * sn), s, h, 64);
  }
}

// 12. Rotary embedding (GPT-J interleaved pairs) on x [S, H, D/2, 2] into y of the same shape, angles
//     computed in the kernel: theta = s * base^(-2j / D) with inv_freq [D/2] given.
PK_KERNEL void b31_rope_interleaved_4d(Tensor<bf16, 4> x, Tensor<f32, 1> inv_freq, Tensor<bf16, 4> y) {
  for (auto [s, h, j] : tiles(x.dim(0), x.dim(1), x.dim(2), {8, 2, 32})) {
    auto ev = cast<f32>(load<8, 2, 32, 1>(x, s, h, j, 0));
    auto od = cast<f32>(load<8, 2, 32, 1>(x, s, h, j, 1));
    auto pos = dim_index<0, 8, 1, 1, 1>(s);
    auto f = reshape<1, 1, 32, 1>(load<32>(inv_freq, j));
    auto th = pos * f;
    auto c = cos(th);
    auto sn = sin(th);
    store(y, cast<bf16>(ev * c - od * sn), s, h, j, 0);
    store(y, cast<bf16>(od * c + ev * sn), s, h, j, 1);
  }
}

// 13. Rotary on packed heads [T, H * 128] with positions from an i32 tensor pos [T] (ragged batch):
//     the angle table cos / sin [P, 64] is gathered by position with load_rows.
PK_KERNEL void b31_rope_packed_gather(Tensor<bf16, 2> x, Tensor<i32, 2> pos, Tensor<f32, 2> cos_t,
                                      Tensor<f32, 2> sin_t, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto p = load<16, 1>(pos, t, 0);
    auto c = load_rows<16, 64>(cos_t, p, 0);
    auto sn = load_rows<16, 64>(sin_t, p, 0);
    auto x1 = cast<f32>(load<16, 64>(x, t, n));
    auto x2 = cast<f32>(load<16, 64>(x, t, n + 64));
    store(y, cast<bf16>(x1 * c - x2 * sn), t, n);
    store(y, cast<bf16>(x2 * c + x1 * sn), t, n + 64);
  }
}

// ============================================================ norms and quantisation ==

// 14. RMSNorm then fp8 e4m3 with one scale per row, rows of any width: three passes over column
//     blocks of 512 (sum of squares, amax of the normed row, quantise). y = x * rsqrt(mean(x^2) + eps) * w;
//     amax = max |y| (at least 1e-12); q = e4m3(y * 448 / amax); scale = amax / 448.
PK_KERNEL void b31_rmsnorm_fp8_rows(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<f8e4m3, 2> q, Tensor<f32, 2> scale,
                                    float eps) {
  for (auto m : tiles(x.rows(), {4})) {
    auto ss = zeros<f32, 4, 1>();
    for (auto n : range(0, x.cols(), 512)) {
      auto t = cast<f32>(load<4, 512>(x, m, n));
      ss = ss + row_sum(t * t);
    }
    auto r = rsqrt(ss / float(x.cols()) + eps);
    auto amax = zeros<f32, 4, 1>() + 1e-12f;
    for (auto n : range(0, x.cols(), 512)) {
      auto y = cast<f32>(load<4, 512>(x, m, n)) * r * cast<f32>(load<1, 512>(w, 0, n));
      amax = max(amax, row_max(abs(y)));
    }
    for (auto n : range(0, x.cols(), 512)) {
      auto y = cast<f32>(load<4, 512>(x, m, n)) * r * cast<f32>(load<1, 512>(w, 0, n));
      store(q, cast<f8e4m3>(y * (448.0f / amax)), m, n);
    }
    store(scale, amax / 448.0f, m, 0);
  }
}

// 15. Fused residual add + RMSNorm in place (x += r; y = rmsnorm(x) * w), 1-D weight, one tile per row
//     block of 1024 columns.
PK_KERNEL void b31_add_rmsnorm_inplace(Tensor<bf16, 2> x, Tensor<bf16, 2> r, Tensor<bf16, 1> w, Tensor<bf16, 2> y,
                                       float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto h = cast<bf16>(cast<f32>(load<8, 1024>(x, m, 0)) + cast<f32>(load<8, 1024>(r, m, 0)));
    store(x, h, m, 0);
    auto hf = cast<f32>(h);
    auto inv = rsqrt(row_sum(hf * hf) * (1.0f / float(x.cols())) + eps);
    store(y, cast<bf16>(hf * inv * cast<f32>(load<1, 1024>(w, 0))), m, 0);
  }
}

// 16. Per-token int8 quantisation with an e5m2 side channel: q8 = i8(round(x * 127 / amax)),
//     the row's amax also stored as e5m2 (rounded) and f32.
PK_KERNEL void b31_token_int8(Tensor<f32, 2> x, Tensor<i8, 2> q8, Tensor<f8e5m2, 2> amax8, Tensor<f32, 2> amaxf) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 256>(x, m, 0);
    auto a = max(row_max(abs(t)), 1e-8f);
    store(q8, cast<i8>(round(t * (127.0f / a))), m, 0);
    store(amax8, cast<f8e5m2>(a), m, 0);
    store(amaxf, a, m, 0);
  }
}

// ============================================================ routing with integer tiles ==

// 17. Top-2 router with renormalised softmax weights over E experts (E <= 64, any E): ids [T, 2] i32,
//     weights [T, 2] f32 = softmax of the two chosen logits. Padding columns (E..63) must never win.
PK_KERNEL void b31_router_top2(Tensor<f32, 2> logits, Tensor<i32, 2> ids, Tensor<f32, 2> wts) {
  for (auto t : tiles(logits.rows(), {32})) {
    auto lg = load<32, 64>(logits, t, 0);
    auto top = row_topk<2>(lg);
    auto idx = row_topk_index<2>(lg);
    auto e = exp(top - row_max(top));
    store(ids, idx, t, 0);
    store(wts, e / row_sum(e), t, 0);
  }
}

// 18. Argmax over a long vocabulary (V any size) in chunks of 1024, the running best carried by a range
//     loop as an f32 value and an i32 index; ties keep the earlier index. best [T, 1] i32.
PK_KERNEL void b31_argmax_chunked(Tensor<f32, 2> logits, Tensor<i32, 2> best) {
  for (auto t : tiles(logits.rows(), {8})) {
    auto bv = zeros<f32, 8, 1>() - 3.0e38f;
    auto bi = zeros<i32, 8, 1>();
    for (auto n : range(0, logits.cols(), 1024)) {
      auto chunk = load<8, 1024>(logits, t, n);
      auto v = row_topk<1>(chunk);
      auto i = row_topk_index<1>(chunk) + n;
      auto better = v > bv;
      bi = where(better, i, bi);
      bv = where(better, v, bv);
    }
    store(best, bi, t, 0);
  }
}

// 19. Expert load: counts [1, 64] i32 of the routed ids ([T, 2], values 0..E-1) summed over token tiles
//     with store_add, after a zeroing phase; then offsets [1, 64] = exclusive prefix sum of the counts.
PK_KERNEL void b31_expert_counts_offsets(Tensor<i32, 2> ids, Tensor<i32, 2> counts, Tensor<i32, 2> offsets) {
  for (auto z : tiles(1, {1})) store(counts, zeros<i32, 1, 64>(), z, 0);
  for (auto t : tiles(ids.rows(), {128})) store_add(counts, reshape<1, 64>(histogram<64>(load<128, 2>(ids, t, 0))), 0, 0);
  for (auto z : tiles(1, {1})) {
    auto c = load<1, 64>(counts, z, 0);
    store(offsets, cumsum(c) - c, z, 0);
  }
}

// 20. Top-k sampling filter: keep the logits at least as large as the row's k-th largest (k = 8 of a
//     256-wide vocabulary tile), others -inf-ish; then the kept probabilities.
PK_KERNEL void b31_topk_filter(Tensor<f32, 2> logits, Tensor<f32, 2> probs, float temp) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto lg = load<16, 256>(logits, t, 0) / temp;
    auto kth = row_min(row_topk<8>(lg));
    auto kept = where((lg >= kth) && (col_index<16, 256>(0) < logits.cols()), lg, -1e30f);
    auto e = exp(kept - row_max(kept));
    store(probs, e / row_sum(e), t, 0);
  }
}

// ============================================================ embeddings ==

// 21. Token embedding lookup scaled by sqrt(D) plus learned positions: y[t] = table[ids[t]] * sqrt(D) +
//     pos[t % P]; an id outside the table reads zeros. ids [T, 1] i32.
PK_KERNEL void b31_embed_pos(Tensor<bf16, 2> table, Tensor<i32, 2> ids, Tensor<bf16, 2> pos, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(ids.rows(), table.cols(), {16, 256})) {
    auto e = cast<f32>(load_rows<16, 256>(table, load<16, 1>(ids, t, 0), n));
    auto pr = cast<i32>(row_index<16, 1>(t)) % pos.rows();
    auto p = cast<f32>(load_rows<16, 256>(pos, pr, n));
    store(y, cast<bf16>(e * sqrt(float(table.cols())) + p), t, n);
  }
}

// 22. Vocabulary-parallel embedding: rank r holds rows [r V, (r + 1) V) of the table; ids outside its
//     shard read zeros, then an all-reduce sums the shards. ids i64.
PK_KERNEL void b31_vocab_parallel_embed(Tensor<f32, 2> table, Tensor<i64, 2> ids, Sym<f32, 2> part, Sym<f32, 2> out) {
  for (auto [t, n] : tiles(ids.rows(), table.cols(), {32, 128})) {
    auto local = load<32, 1>(ids, t, 0) - rank() * table.rows();
    auto ok = (local >= 0) && (local < table.rows());
    auto rows = where(ok, local, -1);
    store(part, load_rows<32, 128>(table, rows, n), t, n);
  }
  all_reduce(Sum, part, out);
}

// 23. Embedding backward: dtable[ids[t]] += dy[t] (store_add_rows), repeated ids all arrive; dtable
//     zeroed first in the same kernel.
PK_KERNEL void b31_embed_backward(Tensor<f32, 2> dy, Tensor<i32, 2> ids, Tensor<f32, 2> dtable) {
  for (auto [v, n] : tiles(dtable.rows(), dtable.cols(), {32, 128})) store(dtable, zeros<f32, 32, 128>(), v, n);
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {32, 128}))
    store_add_rows(dtable, load<32, 128>(dy, t, n), load<32, 1>(ids, t, 0), n);
}

// ============================================================ multi-phase and in-place ==

// 24. Column standardisation in one kernel: column sums and sums of squares added over row tiles into
//     stats [2, N] (zeroed first), then y = (x - mean) * rsqrt(var + eps) with the biased variance.
PK_KERNEL void b31_col_standardise(Tensor<f32, 2> x, Tensor<f32, 2> stats, Tensor<f32, 2> y, float eps) {
  for (auto n : tiles(x.cols(), {256})) store(stats, zeros<f32, 2, 256>(), 0, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    auto t = load<32, 256>(x, m, n);
    store_add(stats, transpose(row_sum(transpose(t))), 0, n);
    store_add(stats, transpose(row_sum(transpose(t * t))), 1, n);
  }
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 256})) {
    float inv = 1.0f / float(x.rows());
    auto mean = load<1, 256>(stats, 0, n) * inv;
    auto var = load<1, 256>(stats, 1, n) * inv - mean * mean;
    store(y, (load<32, 256>(x, m, n) - mean) * rsqrt(var + eps), m, n);
  }
}

// 25. A whole-vector softmax of x [N] (any N): block maxima into part [ceil(N / 1024)], then one tile
//     reduces them (at most 4096 blocks) into gm [1], then exp sums added into tot [1, 1], then the
//     normalisation. (Finding 1: the max cannot go back into part[0] from the one-tile loop.)
PK_KERNEL void b31_global_softmax(Tensor<f32, 1> x, Tensor<f32, 1> part, Tensor<f32, 1> gm, Tensor<f32, 2> tot,
                                  Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = where(dim_index<0, 1024>(i) < x.size(), load<1024>(x, i), -3.0e38f);
    store(part, reshape<1>(row_max(reshape<1, 1024>(t))), i / 1024);
  }
  for (auto z : tiles(1, {1})) {
    auto pm = where(dim_index<0, 4096>(0) < part.size(), load<4096>(part, 0), -3.0e38f);
    store(gm, reshape<1>(row_max(reshape<1, 4096>(pm))), 0);
    store(tot, zeros<f32, 1, 1>(), 0, 0);
  }
  for (auto i : tiles(x.size(), {1024})) {
    auto gmax = load<1>(gm, 0);
    auto e = where(dim_index<0, 1024>(i) < x.size(), exp(load<1024>(x, i) - gmax), 0.0f);
    store_add(tot, row_sum(reshape<1, 1024>(e)), 0, 0);
  }
  for (auto i : tiles(x.size(), {1024})) {
    auto e = exp(load<1024>(x, i) - load<1>(gm, 0));
    store(y, e / reshape<1>(load<1, 1>(tot, 0, 0)), i);
  }
}

// 25b. The two-level maximum written back in place: block maxima into part, then the one-tile loop's maximum
//      of part into part[0] (finding 1, fixed: a block barrier orders the block's reads before the write).
PK_KERNEL void b31_global_max_in_place(Tensor<f32, 1> x, Tensor<f32, 1> part) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = where(dim_index<0, 1024>(i) < x.size(), load<1024>(x, i), -3.0e38f);
    store(part, reshape<1>(row_max(reshape<1, 1024>(t))), i / 1024);
  }
  for (auto z : tiles(1, {1})) {
    auto pm = where(dim_index<0, 4096>(0) < part.size(), load<4096>(part, 0), -3.0e38f);
    store(part, reshape<1>(row_max(reshape<1, 4096>(pm))), 0);
  }
}

// 26. In-place SwiGLU-style update x += silu(x) * g (g [N] per column), and the row sums of the new x.
PK_KERNEL void b31_inplace_silu_gate(Tensor<f32, 2> x, Tensor<f32, 1> g, Tensor<f32, 2> rs) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 128>(x, m, 0);
    t = t + silu(t) * load<1, 128>(g, 0);
    store(x, t, m, 0);
    store(rs, row_sum(t), m, 0);
  }
}

// 27. In-place exponential moving average of weights over a 3-D tensor: p = decay p + (1 - decay) q.
PK_KERNEL void b31_ema_inplace_3d(Tensor<f32, 3> p, Tensor<f32, 3> q, float decay) {
  for (auto [a, b, c] : tiles(p.dim(0), p.dim(1), p.dim(2), {1, 8, 64}))
    store(p, load<1, 8, 64>(p, a, b, c) * decay + load<1, 8, 64>(q, a, b, c) * (1.0f - decay), a, b, c);
}

// ============================================================ GEMMs ==

// 28. A·B (B stored [K, N], as torch stores W for dX = dY W) with a residual add, bf16 out; K any size.
PK_KERNEL void b31_gemm_ab_residual(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> res, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<128, 128>(res, m, n))), m, n);
  }
}

// 29. x W^T into an f32 output with a per-row scale (s [M] f32) and a per-column bias ([N, 1] bf16
//     read as a row through transpose): c = acc * s[m] + bias[n].
PK_KERNEL void b31_gemm_f32_rowscale(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<f32, 1> s, Tensor<bf16, 2> bias,
                                     Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<128, 32>(w, n, k), acc);
    store(c, acc * load<64, 1>(s, m) + cast<f32>(transpose(load<128, 1>(bias, n, 0))), m, n);
  }
}

// 30. LM head with the vocabulary padded to a multiple of 64 in the weight: logits past `vocab` set to
//     -1e4 in the epilogue; bf16 out.
PK_KERNEL void b31_lm_head_vocab_mask(Tensor<bf16, 2> h, Tensor<bf16, 2> emb, Tensor<bf16, 2> logits, index vocab) {
  for (auto [m, n] : tiles(h.rows(), emb.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, h.cols(), 64)) acc = mma_t(load<128, 64>(h, m, k), load<256, 64>(emb, n, k), acc);
    store(logits, cast<bf16>(where(col_index<128, 256>(n) < vocab, acc, -1e4f)), m, n);
  }
}

// 31. Batched A·B^T with a per-batch scale read from memory and a batched residual: c[z] = s[z] a[z] b[z]^T + r[z].
PK_KERNEL void b31_bmm_scale_residual(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 1> s, Tensor<bf16, 3> r,
                                      Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc * s.at(z) + cast<f32>(load<128, 256>(r, z, m, n))), z, m, n);
  }
}

// 32. Weight gradient dW = dY^T X (A read transposed, stored [K, M]) into f32, 64 x 64 tiles, K step 32.
PK_KERNEL void b31_dw_f32(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 2> dw) {
  for (auto [m, n] : tiles(dy.cols(), x.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, dy.rows(), 32)) acc = mma(transpose(load<32, 64>(dy, k, m)), load<32, 64>(x, k, n), acc);
    store(dw, acc, m, n);
  }
}

// 33. Small decode GEMM on the general path with a GELU and an in-tile row reduction (the epilogue has a
//     row_sum, so no template): y = gelu(x W^T); norms[m] = sum_n y^2 (f32).
PK_KERNEL void b31_decode_gemm_rownorm(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> y, Tensor<f32, 2> norms) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<16, 64>(x, m, k), load<128, 64>(w, 0, k), acc);
    auto g = gelu(acc);
    store(y, cast<bf16>(g), m, 0);
    store(norms, row_sum(g * g), m, 0);
  }
}

// ============================================================ peers ==

// 34. Ring shift of a tile-computed value: y on rank next_rank() gets 2 x + rank() at every tile.
PK_KERNEL void b31_ring_shift(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store(y.on(next_rank()), load<32, 128>(x, m, n) * 2.0f + float(rank()), m, n);
}

// 35. Reduce-scatter by adds into the owners: rows [o R, (o + 1) R) of every rank's x go, summed, to
//     rank o's y [R, N] (R = y.rows()); y zeroed first in the spec.
PK_KERNEL void b31_rs_by_adds(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {32, 128})) store(y, zeros<f32, 32, 128>(), m, n);
  for (auto [o, m, n] : tiles(world_size(), y.rows(), y.cols(), {1, 32, 128}))
    store_add(y.on(o), load<32, 128>(x, o * y.rows() + m, n), m, n);
}

// 36. Pull the previous rank's partial, add this rank's, SiLU, store locally (one step of a ring).
PK_KERNEL void b31_pull_prev_silu(Sym<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto a = cast<f32>(load<16, 256>(x.on(prev_rank()), m, n));
    auto b = cast<f32>(load<16, 256>(x, m, n));
    store(y, cast<bf16>(silu(a + b)), m, n);
  }
}

// 37. MoE combine across ranks: each token's expert output rows (out [T * 2, D], rows 2t and 2t + 1)
//     weighted by wts [T, 2] and added into the owner's y [T_local, D] (owner = t / T_local), y zeroed first.
PK_KERNEL void b31_moe_combine_peers(Tensor<f32, 2> out, Tensor<f32, 2> wts, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128})) store(y, zeros<f32, 16, 128>(), m, n);
  for (auto [o, t, n] : tiles(world_size(), y.rows(), y.cols(), {1, 16, 128})) {
    index tg = o * y.rows() + t;
    auto r0 = load_rows<16, 128>(out, cast<i32>(row_index<16, 1>(tg)) * 2, n);
    auto r1 = load_rows<16, 128>(out, cast<i32>(row_index<16, 1>(tg)) * 2 + 1, n);
    auto w0 = load<16, 1>(wts, tg, 0);
    auto w1 = load<16, 1>(wts, tg, 1);
    store_add(y.on(o), r0 * w0 + r1 * w1, t, n);
  }
}

// ============================================================ more mixes ==

// 38. In-place RMSNorm of rows wider than a tile: the first range loop reads x for the sum of squares,
//     the second rewrites x = x * rsqrt(mean + eps) * w at the tiles it read.
PK_KERNEL void b31_rmsnorm_wide_inplace(Tensor<f32, 2> x, Tensor<f32, 2> w, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto ss = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 256)) {
      auto t = load<8, 256>(x, m, n);
      ss = ss + row_sum(t * t);
    }
    auto r = rsqrt(ss / float(x.cols()) + eps);
    for (auto n : range(0, x.cols(), 256)) store(x, load<8, 256>(x, m, n) * r * load<1, 256>(w, 0, n), m, n);
  }
}

// 39. GEMM accumulating into its output in place (beta = 1): c = c + a b^T, bf16.
PK_KERNEL void b31_gemm_accumulate_inplace(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<128, 256>(c, m, n))), m, n);
  }
}

// 40. In-place rotary on packed heads [T, H * 128] with the half-offset read (n and n + 64 inside a
//     {16, 128} cell), angles from positions pos [T, 1] i32 and inv_freq [64].
PK_KERNEL void b31_rope_packed_inplace(Tensor<bf16, 2> x, Tensor<i32, 2> pos, Tensor<f32, 1> inv_freq) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto th = cast<f32>(load<16, 1>(pos, t, 0)) * load<1, 64>(inv_freq, 0);
    auto c = cos(th);
    auto sn = sin(th);
    auto x1 = cast<f32>(load<16, 64>(x, t, n));
    auto x2 = cast<f32>(load<16, 64>(x, t, n + 64));
    store(x, cast<bf16>(x1 * c - x2 * sn), t, n);
    store(x, cast<bf16>(x2 * c + x1 * sn), t, n + 64);
  }
}

// 41. Vocabulary-parallel cross entropy: each rank holds logits [T, V_local] for vocabulary
//     [r V_local, (r + 1) V_local). Global row max by all_reduce(Max), sum of exp by all_reduce(Sum),
//     the target's logit by all_reduce(Sum) of the owner's value; loss [T, 1] = log(sum) + max - target.
PK_KERNEL void b31_vocab_parallel_xent(Tensor<f32, 2> logits, Tensor<i32, 2> target, Sym<f32, 2> mx, Sym<f32, 2> gmx,
                                       Sym<f32, 2> se, Sym<f32, 2> gse, Sym<f32, 2> tl, Sym<f32, 2> gtl,
                                       Tensor<f32, 2> loss) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto lg = where(col_index<16, 512>(0) < logits.cols(), load<16, 512>(logits, t, 0), -1e30f);
    store(mx, row_max(lg), t, 0);
    auto local = load<16, 1>(target, t, 0) - rank() * logits.cols();
    auto hit = cast<i32>(col_index<16, 512>(0)) == local;
    store(tl, row_sum(where(hit, lg, 0.0f)), t, 0);
  }
  all_reduce(Max, mx, gmx);
  all_reduce(Sum, tl, gtl);
  for (auto t : tiles(logits.rows(), {16})) {
    auto lg = load<16, 512>(logits, t, 0);
    auto e = where(col_index<16, 512>(0) < logits.cols(), exp(lg - load<16, 1>(gmx, t, 0)), 0.0f);
    store(se, row_sum(e), t, 0);
  }
  all_reduce(Sum, se, gse);
  for (auto t : tiles(logits.rows(), {16}))
    store(loss, log(load<16, 1>(gse, t, 0)) + load<16, 1>(gmx, t, 0) - load<16, 1>(gtl, t, 0), t, 0);
}

// 42. A ring shift named once: ny = y.on(next_rank()); every rank sends its rows scaled by (rank + 1) and
//     its own row sums to the next rank's y and ys.
PK_KERNEL void b31_ring_named(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> ys) {
  auto ny = y.on(next_rank());
  auto nys = ys.on(next_rank());
  for (auto m : tiles(x.rows(), {32})) {
    auto t = load<32, 64>(x, m, 0) * float(rank() + 1);
    store(ny, t, m, 0);
    store(nys, row_sum(t), m, 0);
  }
}

// 43. Top-p (nucleus) mask over a sorted 64-wide candidate list: the row's top-64 sorted, cumulative
//     probabilities by cumsum, keep the smallest prefix whose mass reaches p (the first token always),
//     output the kept tokens' probabilities renormalised and their column ids (-1 where dropped).
PK_KERNEL void b31_top_p(Tensor<f32, 2> logits, Tensor<f32, 2> probs, Tensor<i32, 2> ids, float p) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto lg = load<16, 64>(logits, t, 0);
    auto sv = row_topk<64>(lg);
    auto si = row_topk_index<64>(lg);
    auto e = exp(sv - row_max(sv));
    auto pr = e / row_sum(e);
    auto before = cumsum(pr) - pr;
    auto keep = before < p;
    auto kept = where(keep, pr, 0.0f);
    store(probs, kept / row_sum(kept), t, 0);
    store(ids, where(keep, si, -1), t, 0);
  }
}

// 44. Batched top-1 over [B, S, V] scores (3-D tile) with the tile's column origin added:
//     best[b, s, 0] = argmax_v x[b, s, v] (V <= 128).
PK_KERNEL void b31_argmax_3d(Tensor<f32, 3> x, Tensor<i32, 3> best, Tensor<f32, 3> val) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {2, 16})) {
    auto t = load<2, 16, 128>(x, b, s, 0);
    store(best, row_topk_index<1>(t), b, s, 0);
    store(val, row_topk<1>(t), b, s, 0);
  }
}

// 45. Expert-choice gating with mixed masks on the general path: tokens whose score passes a threshold
//     and whose expert id is valid (i32) keep their score, others 0: (p > thr) && (ids >= 0).
PK_KERNEL void b31_mixed_mask(Tensor<f32, 2> pr, Tensor<i32, 2> ids, Tensor<f32, 2> out, float thr) {
  for (auto [m, n] : tiles(pr.rows(), pr.cols(), {32, 64})) {
    auto keep = (load<32, 64>(pr, m, n) > thr) && (load<32, 64>(ids, m, n) >= 0);
    store(out, where(keep, load<32, 64>(pr, m, n), 0.0f), m, n);
  }
}

// 46. GEMM with K not a multiple of the step and a ragged A·B (B [K, N]): 64 x 64 tiles stepping K by 48
//     (the template computes with its own 64), epilogue relu(acc) * alpha into f32.
PK_KERNEL void b31_gemm_k48_relu_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 48)) acc = mma(load<64, 48>(a, m, k), load<48, 64>(b, k, n), acc);
    store(c, max(acc, 0.0f) * alpha, m, n);
  }
}

// A ninth user-written spec set, aimed at the attention template's new score maps and the GEMM
// epilogue's scalar arithmetic, varied the way model code varies them: ALiBi with slopes from a
// tensor or from integer arithmetic on the head, soft-capping with other constants and a scale
// from the head dim, sliding windows written four other ways (>=, <=, an extent, without a causal
// factor, one key wider), windows with grouped-query heads and the log-sum-exp, attention sinks
// (a window OR a prefix), relative biases read transposed and per head, an additive key-padding
// row, document masks by integer division and by segment-id tensors, bottom-right causal prefill
// (Sq != Sk) written two ways, q pre-scaled in bf16, masks combined by min with HF's -10000 fill,
// a soft (penalty) window; GEMM epilogues with soft-capped logits, 1 / sqrt(K), a block scale read
// by .at(m / 128, n / 128), a scalar from the tile origin, column halves, row and column masks from
// integer arguments, column parity by an integer cast; and three general-path kernels (Gemma
// RMSNorm, a windowed softmax, a lengths-masked softmax). Each kernel's comment says what the
// correct result is. test/gpu/user_specs9_jit_test.cu runs them through the JIT on the template
// and on the general path against float64; test/Compile/user_specs9.test compiles the set.
#include <pk/spec.h>
using namespace pk;

// ================================================================ attention (score maps) ==

// A1. ALiBi causal attention with the slopes read from an f32 [H] tensor (slopes.at(h)), as HF BLOOM
//     passes them: s = q.k * scale - slope[h] * (i - j), causal. Score maps take no tensor scalar: expect
//     the general path with a clear reason (correct result either way).
PK_KERNEL void alibi_slopes_tensor_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 1> slopes, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    float slope = slopes.at(h);
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale - (row - col) * slope;
      s = where((col <= row) * (col < k.dim(1)), s, -1e30f);
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

// A2. ALiBi with the head's slope as a 1 x 1 tile of an f32 [H, 1] tensor broadcast over the scores,
//     non-causal (encoder): s = q.k * scale - slope[h] * |i - j|.
PK_KERNEL void alibi_slopes_column_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 2> slopes, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale - abs(row - col) * load<1, 1>(slopes, h, 0);
      s = where(col < k.dim(1), s, -1e30f);
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

// A3. Grok / Gemma-2 style soft-capping with the cap a constant 30 and the scale computed from the
//     head dim: s = 30 * tanh((q.k * (1 / sqrt(D))) / 30), causal, with the log-sum-exp.
PK_KERNEL void softcap30_dimscale_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = tanh(qk * (1.0f / sqrt(float(q.dim(2)))) / 30.0f) * 30.0f;
      s = where((col <= row) * (col < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// A4. Sliding window written col >= row - W + 1 (query i sees keys i - W < j <= i), causal.
PK_KERNEL void window_ge_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((col <= row) * (col >= row - window + 1) * (col < k.dim(1)), s, -1e30f);
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

// A5. Sliding window written row - col <= W - 1 (the same keys as A4), causal.
PK_KERNEL void window_le_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((col <= row) * (row - col <= window - 1) * (col < k.dim(1)), s, -1e30f);
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

// A6. Sliding window of a quarter of the keys (an extent, k.dim(1) / 4), causal: keys
//     i - Sk/4 < j <= i.
PK_KERNEL void window_extent_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((col <= row) * (col > row - k.dim(1) / 4) * (col < k.dim(1)), s, -1e30f);
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

// A7. Bidirectional local attention (Longformer-style band, no causal factor): keys |i - j| < W.
PK_KERNEL void local_bidir_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((abs(row - col) < window) * (col < k.dim(1)), s, -1e30f);
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

// A8. Window written col >= row - W: W + 1 keys (i - W <= j <= i), causal. Any key-step skip must
//     keep key i - W.
PK_KERNEL void window_ge_w_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((col <= row) * (col >= row - window) * (col < k.dim(1)), s, -1e30f);
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

// A9. Grouped-query attention (G an argument) with a sliding window row - col < W, causal, with
//     the log-sum-exp into [H, S, 1].
PK_KERNEL void gqa_window_lse_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, index group, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 128>(k, h / group, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((col <= row) * (row - col < window) * (col < k.dim(1)), s, -1e30f);
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

// A10. StreamingLLM attention sinks: the first `sinks` keys always visible plus a window of W,
//      causal: visible if j <= i and (j > i - W or j < sinks). A key-step skip by the window would
//      drop the sinks.
PK_KERNEL void sink_window_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index sinks, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((col <= row) * max(col > row - window, col < sinks) * (col < k.dim(1)), s, -1e30f);
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

// A11. A relative bias stored key-major [Sk, Sq] (f32), read transposed: s = q.k * scale +
//      bt[j, i], non-causal.
PK_KERNEL void rel_bias_transposed_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 2> bt, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale + transpose(load<64, 64>(bt, n, m));
      s = where(col < k.dim(1), s, -1e30f);
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

// A12. A per-head bias [H, Sq, Sk] (f32) added to the scores (T5 with heads), causal:
//      s = q.k * scale + bias[h, i, j].
PK_KERNEL void rel_bias_per_head_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> bias, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale + load<64, 64>(bias, h, m, n);
      s = where((col <= row) * (col < k.dim(1)), s, -1e30f);
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

// A13. Cross attention (Sq != Sk) with an additive key-padding bias kb [Sk] (f32, 0 or -1e4 as HF
//      builds it) read as a 1 x 64 row: s = q.k * scale + kb[j].
PK_KERNEL void key_padding_bias_cross_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 1> kb, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale + load<1, 64>(kb, n);
      s = where(col < k.dim(1), s, -1e30f);
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

// A14. Packed documents of equal length L (an integer argument): visible if i / L == j / L
//      (integer division of the positions) and j <= i.
PK_KERNEL void doc_mask_intdiv_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index doclen, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((col <= row) * cast<f32>(cast<i32>(row) / doclen == cast<i32>(col) / doclen) * (col < k.dim(1)), s, -1e30f);
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

// A15. Packed sequences by segment ids (i32 [Sq] and [Sk]): visible if seg_q[i] == seg_k[j],
//      non-causal.
PK_KERNEL void segment_ids_mask_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<i32, 1> segq, Tensor<i32, 1> segk, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where(cast<f32>(load<64, 1>(segq, m) == load<1, 64>(segk, n)) * (col < k.dim(1)), s, -1e30f);
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

// A16. Head-dependent scalars by integer arithmetic on h: a temperature 1 + 0.25 (h % 4) dividing the
//      scale and an ALiBi slope 1 / (1 + h / 2) (integer h / 2), causal, with the log-sum-exp:
//      s = q.k * scale / (1 + 0.25 (h % 4)) - (i - j) / (1 + h / 2).
PK_KERNEL void head_mod_scalars_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    float temp = 1.0f + 0.25f * float(h % 4);
    float slope = 1.0f / float(1 + h / 2);
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * (scale / temp) - (row - col) * slope;
      s = where((col <= row) * (col < k.dim(1)), s, -1e30f);
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

// A17. Chunked prefill: Sq new queries after Sk - Sq cached keys, causal aligned bottom-right
//      (FlashAttention >= 2.1): query i sees keys j <= i + (Sk - Sq). The loop runs over all keys.
PK_KERNEL void causal_bottom_right_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((col <= row + (k.dim(1) - q.dim(1))) * (col < k.dim(1)), s, -1e30f);
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

// A18. The same as A17 written with row_index at an offset origin: row_index<64, 64>(m + past)
//      holds i + past; visible if j <= i + past (past an integer argument).
PK_KERNEL void row_offset_causal_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index past, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m + past)) * (col < k.dim(1)), s, -1e30f);
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

// A19. q scaled before the product and rounded to bf16 (some ports do this): s = bf16(q * scale) . k,
//      causal. The rounding of q * scale is part of the spec.
PK_KERNEL void q_prescaled_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = cast<bf16>(cast<f32>(load<64, 64>(q, h, m, 0)) * scale);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk;
      s = where((col <= row) * (col < k.dim(1)), s, -1e30f);
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

// A20. One head on 2-D [S, 64] tensors: soft-cap 50 with a sliding window (Gemma 2 local layer),
//      causal, with the log-sum-exp into a 1-D [S] tensor.
PK_KERNEL void softcap_window_2d_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, Tensor<f32, 1> lse, index window, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>());
      auto s = tanh(qk * (scale / 50.0f)) * 50.0f;
      s = where((col <= row) * (row - col < window) * (col < k.rows()), s, -1e30f);
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

// A21. Causal and window masks combined by min (logical and), filled with HF's -10000 instead
//      of -1e30, bounds in a second where: visible if j <= i and i - j < W.
PK_KERNEL void masks_min_hf_fill_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = qk * scale;
      s = where(min(col <= row, row - col < window), s, -10000.0f);
      s = where(col < k.dim(1), s, -1e30f);
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

// A22. A soft window: keys outside i - W < j get a penalty of 8 (not masked), causal:
//      s = q.k * scale - (j <= i - W ? 8 : 0). No key may be skipped.
PK_KERNEL void window_soft_penalty_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto col = col_index<64, 64>(n);
      auto row = row_index<64, 64>(m);
      auto qk = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>());
      auto s = where(col > row - window, qk * scale, qk * scale - 8.0f);
      s = where((col <= row) * (col < k.dim(1)), s, -1e30f);
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

// ================================================================ GEMM epilogues ==

// G1. LM head with final-logit soft-capping (Gemma 2) and a padded vocabulary: logits =
//     cap * tanh(a b^T / cap) for columns below N - pad, -1e4 beyond; f32 out.
PK_KERNEL void gemm_t_softcap_logits_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, float cap, index pad) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, where(col_index<128, 128>(n) < b.rows() - pad, tanh(acc * (1.0f / cap)) * cap, -1e4f), m, n);
  }
}

// G2. A B scaled by 1 / sqrt(K) (K = a.cols(), a scalar from an extent) plus a bf16 [N] bias: bf16.
PK_KERNEL void gemm_ab_rsqrtk_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 1> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<64, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, cast<bf16>(acc * rsqrt(float(a.cols())) + cast<f32>(load<1, 128>(bias, n))), m, n);
  }
}

// G3. Block-quantised GEMM epilogue (DeepSeek-V3 style): one f32 scale per 128 x 128 output block,
//     sc[m / 128, n / 128] read as a scalar: c = bf16(a b^T * sc[i / 128, j / 128]).
PK_KERNEL void gemm_t_block_scale_at(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> sc, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * sc.at(m / 128, n / 128)), m, n);
  }
}

// G4. A per-64-row-block multiplier from the tile origin: rows of block r get (r + 1), i.e.
//     c[i, j] = (a b)[i, j] * (i / 64 + 1) with 64 x 64 tiles; f32 out.
PK_KERNEL void gemm_ab_origin_scalar_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<64, 64>(a, m, k), load<64, 64>(b, k, n), acc);
    store(c, acc * float(m / 64 + 1), m, n);
  }
}

// G5. Fused gate/up halves: the first N / 2 columns get SiLU, the rest stay linear (an extent
//     computed on the host, b.rows() / 2); f16 operands and output.
PK_KERNEL void gemm_t_half_silu_f16(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<f16>(where(col_index<128, 256>(n) < b.rows() / 2, silu(acc), acc)), m, n);
  }
}

// G6. A window of the output: rows below `rows_valid` and columns from `col0` on keep alpha * a b,
//     the rest 0 (integer arguments); f32 out.
PK_KERNEL void gemm_ab_row_col_mask_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, index rows_valid,
                                        index col0, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 64})) {
    auto acc = zeros<f32, 128, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 64>(b, k, n), acc);
    auto keep = (row_index<128, 64>(m) < rows_valid) * (col_index<128, 64>(n) >= col0);
    store(c, where(keep, acc * alpha, 0.0f), m, n);
  }
}

// G7. Interleaved GeGLU layout: even output columns get the exact GELU, odd ones stay linear
//     (parity by an integer cast of col_index); bf16.
PK_KERNEL void gemm_t_parity_gelu(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    auto even = cast<f32>(cast<i32>(col_index<128, 128>(n)) % 2 == 0);
    store(c, cast<bf16>(where(even, gelu_erf(acc), acc)), m, n);
  }
}

// G8. Residual + row scale + bias with the scale clamped on the scalar side: c = r + (a b^T + bias)
//     * min(alpha, 1) * rowscale[i]; bf16, bias f32 [N], rowscale f32 [M].
PK_KERNEL void gemm_t_residual_rowscale(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> bias,
                                        Tensor<f32, 1> rowscale, Tensor<bf16, 2> r, Tensor<bf16, 2> c, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto y = (acc + load<1, 256>(bias, n)) * min(alpha, 1.0f) * load<128, 1>(rowscale, m);
    store(c, cast<bf16>(cast<f32>(load<128, 256>(r, m, n)) + y), m, n);
  }
}

// ================================================================ general path ==

// N1. Gemma RMSNorm: y = x * rsqrt(mean(x^2) + eps) * (1 + w), bf16 [R, 1024] (1024 columns exactly), the mean by
//     1 / x.cols() (a scalar from an extent).
PK_KERNEL void gemma_rmsnorm(Tensor<bf16, 2> x, Tensor<bf16, 1> w, Tensor<bf16, 2> y, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = cast<f32>(load<8, 1024>(x, m, 0));
    auto r = rsqrt(row_sum(t * t) * (1.0f / float(x.cols())) + eps);
    store(y, cast<bf16>(t * r * (1.0f + cast<f32>(load<1, 1024>(w, 0)))), m, 0);
  }
}

// N2. Softmax of the rows of f32 [S, S] scores (S <= 512, one tile a row) with a sliding-window causal
//     mask (i - W < j <= i) and the scale rsqrt(d) from an integer argument: p[i, j] =
//     softmax_j(s[i, j] * rsqrt(d)) over the visible j, 0 elsewhere (exp(-1e30 - max) flushes).
PK_KERNEL void window_softmax_rows(Tensor<f32, 2> s, Tensor<f32, 2> p, index d, index window) {
  for (auto m : tiles(s.rows(), {16})) {
    auto col = col_index<16, 512>(0);
    auto row = row_index<16, 512>(m);
    auto x = where((col <= row) * (row - col < window), load<16, 512>(s, m, 0) * rsqrt(float(d)), -1e30f);
    auto e = exp(x - row_max(x));
    store(p, e / row_sum(e), m, 0);
  }
}

// N3. Key-padding softmax over f32 [R, C <= 256]: row r keeps its first len[r] <= C columns (i32 [R]),
//     softmax over them, 0 elsewhere; a row with len 0 is all -1e30: 1 / 256 in each stored column.
PK_KERNEL void lengths_masked_softmax(Tensor<f32, 2> s, Tensor<i32, 1> len, Tensor<f32, 2> p) {
  for (auto m : tiles(s.rows(), {16})) {
    auto x = where(col_index<16, 256>(0) < cast<f32>(load<16, 1>(len, m)), load<16, 256>(s, m, 0), -1e30f);
    auto e = exp(x - row_max(x));
    store(p, e / row_sum(e), m, 0);
  }
}

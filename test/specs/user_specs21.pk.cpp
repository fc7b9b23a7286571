// Set 21 (user specs): attention and sequence parallelism, and odd world sizes. Attention variants a user
// ports (GQA / MQA with several group sizes, sliding-window and chunked-local attention, ALiBi, soft-capping,
// cross-attention with Sq != Sk, causal with a query offset, decode with one query row, per-head scales, bf16
// and f16, head dims 64 and 128, lse outputs), ring and Ulysses attention variants, multi-phase kernels mixing
// collectives and tile loops, and GEMMs beside attention (QKV projection split into heads, output projection
// + residual). Every multi-rank kernel works at any world size W (3 and 5 included); its shape constraints
// are in its comment. Findings: test/specs/specs21_findings.md.
//
// Conventions in the comments: softmax over keys j of row i; "masked" keys get the score -1e30 before the
// softmax (so a row with no visible key averages its masked keys, as the spec computes it); lse[i] =
// max_j s[i, j] + log(sum_j exp(s[i, j] - max)), the natural-log log-sum-exp of the masked scores. Tensors
// are row-major; [H, S, D] means head-major. Outputs are rounded to the tensors' type once at the store
// (p is rounded to the operand type before P V, as the template does).
#include <pk/spec.h>
using namespace pk;

// 1. GQA, group from the sizes (G = Hq / Hk, e.g. 32 / 8 = 4), causal, head dim 128, bf16.
// q, o [Hq, S, 128]; k, v [Hk, S, 128] (Hq a multiple of Hk); lse [Hq, S, 1] f32.
// o[h, i] = sum_{j <= i, j < S} softmax_j(scale * q[h, i] . k[h / G, j]) v[h / G, j]; lse[h, i] as in the header.
PK_KERNEL void gqa_sizes_causal_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h / (q.dim(0) / k.dim(0)), n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h / (q.dim(0) / k.dim(0)), n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 2. GQA with the group as an argument (group = 8: Hq = 8 Hk), f16, head dim 64, no lse, not causal.
// q, o [Hq, S, 64] f16; k, v [Hk, S, 64] f16 with Hq = group * Hk.
// o[h, i] = sum_j softmax_j(scale * q[h, i] . k[h / group, j]) v[h / group, j].
PK_KERNEL void gqa_arg_g8_f16_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o, index group, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, h / group, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
  }
}

// 3. MQA: one K/V head ([1, S, 64]) shared by every query head (G = Hq / 1), causal, bf16, lse.
// o[h, i] = sum_{j <= i} softmax_j(scale * q[h, i] . k[0, j]) v[0, j]; lse[h, i].
PK_KERNEL void mqa_causal_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h / (q.dim(0) / k.dim(0)), n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h / (q.dim(0) / k.dim(0)), n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 4. GQA with an odd group (group = 3, e.g. Hq = 24, Hk = 8) and a sliding window of `window` keys
// (Mistral): row i sees keys j with i - window < j <= i (window >= 1). d128 bf16, lse.
// o[h, i] = sum_{max(0, i-window+1) <= j <= i} softmax_j(scale * q[h, i] . k[h / 3, j]) v[h / 3, j].
PK_KERNEL void gqa_g3_window_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, index group, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) > row_index<64, 64>(m) - window) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 5. Sliding window written as a distance, `row - col < window` (window >= 1), causal, d64 bf16, lse into
// a 1-D [S] tensor (one head, 2-D q, k, v, o [S, 64]).
// o[i] = sum_{i - window < j <= i} softmax_j(scale * q[i] . k[j]) v[j]; lse[i].
PK_KERNEL void swa_distance_lse1d_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, Tensor<f32, 1> lse, index window, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (row_index<64, 64>(m) - col_index<64, 64>(n) < window) && (col_index<64, 64>(n) < k.rows()), s, -1e30f);
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

// 6. Chunked local attention (Llama 4 iRoPE layers): causal inside chunks of `chunk` tokens, row i sees
// keys j <= i with j / chunk == i / chunk (integer division). d128 bf16, [H, S, 128], lse.
PK_KERNEL void chunked_local_causal_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, index chunk, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && cast<f32>(cast<i32>(row_index<64, 64>(m)) / chunk == cast<i32>(col_index<64, 64>(n)) / chunk) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 7. ALiBi, causal: s[i, j] = scale * q[h, i] . k[h, j] - (i - j) * slope_h with slope_h = 2^(-8 (h + 1) / H),
// H = q.dim(0). d64 bf16, lse of those scores.
PK_KERNEL void alibi_causal_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    float slope = pow(2.f, -8.f * float(h + 1) / float(q.dim(0)));
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale - (row_index<64, 64>(m) - col_index<64, 64>(n)) * slope;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 8. Bidirectional ALiBi with per-head slopes from a tensor (slopes [H] f32): s = scale * q.k - |i - j| * slopes[h].
// Encoder (no causal mask), d128 bf16, keys past Sk masked; lse.
PK_KERNEL void alibi_sym_slopes_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, Tensor<f32, 1> slopes, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale - abs(row_index<64, 64>(m) - col_index<64, 64>(n)) * slopes.at(h);
      s = where((col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 9. Soft-capping (Gemma 2), causal: s = tanh(scale * q.k / cap) * cap. d128 bf16, lse.
PK_KERNEL void softcap_causal_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale, float cap) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = tanh(mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * (scale / cap)) * cap;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 10. Gemma 2 local layer: soft-capping + sliding window + GQA from the sizes, f16, d64, no lse.
// s = tanh(scale * q[h, i].k[h / G, j] / cap) * cap for i - window < j <= i (window >= 1); G = Hq / Hk.
PK_KERNEL void softcap_window_gqa_f16_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o, index window, float scale, float cap) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = tanh(mma_t(qt, load<64, 64>(k, h / (q.dim(0) / k.dim(0)), n, 0), zeros<f32, 64, 64>()) * (scale / cap)) * cap;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) > row_index<64, 64>(m) - window) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, h / (q.dim(0) / k.dim(0)), n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
  }
}

// 11. Cross-attention, Sq != Sk (e.g. 77 text queries against 4096 image keys), not causal, d64 bf16, lse.
// q, o [H, Sq, 64]; k, v [H, Sk, 64]. o[h, i] = sum_{j < Sk} softmax_j(scale * q[h, i].k[h, j]) v[h, j].
PK_KERNEL void cross_attention_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 12. Cross-attention with padded keys: only the first kv_len keys count (kv_len <= Sk an argument), f16 d128.
// o[h, i] = sum_{j < kv_len} softmax_j(scale * q[h, i].k[h, j]) v[h, j]; lse. kv_len >= 1.
PK_KERNEL void cross_attention_kvlen_f16_d128(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o, Tensor<f32, 3> lse, index kv_len, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)) && (col_index<64, 64>(n) < kv_len), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 13. Chunked prefill: the Sq queries are the last Sq of Sk positions (past = Sk - Sq >= 0), causal with that
// offset: row i sees keys j <= i + past. d128 bf16, lse. Every key step is visited.
PK_KERNEL void prefill_offset_causal_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index past = k.dim(1) - q.dim(1);
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m) + past) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 14. Chunked prefill with a sliding window (Mistral serving): the queries are the last Sq of Sk positions
// (past = Sk - Sq >= 0), row i sees keys j with i + past - window < j <= i + past (window >= 1). d64 bf16, lse.
// Any past >= 0 and window >= 1 are legal (the query's own key j = i + past is always seen).
PK_KERNEL void prefill_offset_window_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index past = k.dim(1) - q.dim(1);
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m) + past) && (col_index<64, 64>(n) > row_index<64, 64>(m) + past - window) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 15. Decode, one query row per head: q, o [Hq, 1, 128], k, v [Hk, Sk, 128] (the cache), GQA with the
// group as an argument, lse [Hq, 1, 1]. o[h, 0] = sum_{j < Sk} softmax_j(scale * q[h, 0].k[h / group, j]) v[h / group, j].
PK_KERNEL void decode_one_row_gqa_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, index group, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 16. Decode with a sliding window: q [H, 1, 64] is position Sk - 1, so it sees keys Sk - window <= j < Sk
// (window >= 1). d64 bf16, lse.
PK_KERNEL void decode_window_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, index window, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index past = k.dim(1) - q.dim(1);
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) > row_index<64, 64>(m) + past - window) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 17. Per-head scale read from a tensor (learned temperature): s = q[h, i].k[h, j] * hs[h], hs [H] f32, causal,
// d64 bf16, lse.
PK_KERNEL void per_head_scale_causal_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, Tensor<f32, 1> hs) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * hs.at(h);
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 18. Per-head scale computed from the head (a per-layer scale times 1 / (1 + h % 4), a user's head-group
// temperature), f16 d128 not causal, lse. s = q.k * (scale / float(1 + h % 4)).
PK_KERNEL void per_head_scale_expr_f16_d128(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    float hscale = scale / float(1 + h % 4);
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * hscale;
      s = where((col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 19. One head, f16, head dim 128, 2-D [S, 128] tensors, causal, lse [S, 1].
PK_KERNEL void attention_f16_causal_2d_d128(Tensor<f16, 2> q, Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<f16, 2> o, Tensor<f32, 2> lse, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), m, 0);
    store(lse, mx + log(l), m, 0);
  }
}

// 20. 128-row query tiles and 128-key steps, causal, d64 bf16, lse. (The same attention as 1 with G = 1, other tiles.)
PK_KERNEL void causal_q128_k128_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 128})) {
    auto qt = load<128, 64>(q, h, m, 0);
    auto mx = zeros<f32, 128, 1>() - 1e30f;
    auto l = zeros<f32, 128, 1>();
    auto acc = zeros<f32, 128, 64>();
    for (auto n : range(0, m + 128, 128)) {
      auto s = mma_t(qt, load<128, 64>(k, h, n, 0), zeros<f32, 128, 128>()) * scale;
      s = where((col_index<128, 128>(n) <= row_index<128, 128>(m)) && (col_index<128, 128>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<128, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 21. 64-row query tiles and 32-key steps, not causal, GQA from the sizes, d128 bf16, lse.
PK_KERNEL void gqa_q64_k32_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.dim(1), 32)) {
      auto s = mma_t(qt, load<32, 128>(k, h / (q.dim(0) / k.dim(0)), n, 0), zeros<f32, 64, 32>()) * scale;
      s = where((col_index<64, 32>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<32, 128>(v, h / (q.dim(0) / k.dim(0)), n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 22. Decode with the query heads of one K/V group packed as rows (the GQA packing trick): q, o [Hk, G, 64]
// (row g of q[c] is query head c G + g), k, v [Hk, Sk, 64]. Not causal: every query row sees every key.
// o[c, g] = sum_{j < Sk} softmax_j(scale * q[c, g].k[c, j]) v[c, j]; lse [Hk, G, 1].
PK_KERNEL void decode_gqa_packed_rows_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 23. T5-style relative bias from a per-head table [H, Sq, Sk] f32 plus causal, d64 f16, lse:
// s = scale * q[h, i].k[h, j] + bias[h, i, j] for j <= i.
PK_KERNEL void bias3d_causal_f16_d64(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o, Tensor<f32, 3> lse, Tensor<f32, 3> bias, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale + load<64, 64>(bias, h, m, n);
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 24. Key-padding mask from an i32 [Sk] validity vector (1 keep, 0 pad) plus a causal mask, d128 bf16, lse.
// Row i sees keys j <= i with keep[j] != 0. (Row 0 needs keep[0] = 1 for a defined softmax.)
PK_KERNEL void keypad_causal_d128(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, Tensor<i32, 1> keep, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && cast<f32>(load<1, 64>(keep, n) != 0) && (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// 25. Ulysses attention with GQA, causal, d128 bf16, any W: q [Hq, S/W, 128], k, v [Hk, S/W, 128] (this rank's
// S/W rows of every head; Hq and Hk multiples of W, Hq a multiple of Hk). The all-to-alls give qh [Hq/W, S, 128],
// kh, vh [Hk/W, S, 128]: rank r holds query heads r Hq/W .. and K/V heads r Hk/W .., so local head h reads local
// K/V head h / G (G = Hq / Hk). oh [Hq/W, S, 128] is causal attention over all S rows; lse [Hq/W, S, 1] (rank r's
// heads, all rows); o [Hq, S/W, 128] this rank's rows of every head. E.g. W = 3: Hq = 12, Hk = 3; W = 5: Hq = 20, Hk = 5.
PK_KERNEL void ulysses_gqa_causal_d128(Sym<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Sym<bf16, 3> o, Sym<bf16, 3> qh,
                                  Sym<bf16, 3> kh, Sym<bf16, 3> vh, Sym<bf16, 3> oh, Tensor<f32, 3> lse, float scale) {
  all_to_all(q, qh, 0, 1);  // [Hq, S/W, D] -> [Hq/W, S, D]
  all_to_all(k, kh, 0, 1);  // [Hk, S/W, D] -> [Hk/W, S, D]
  all_to_all(v, vh, 0, 1);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64})) {
    auto qt = load<64, 128>(qh, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(kh, h / (qh.dim(0) / kh.dim(0)), n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < kh.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(vh, h / (qh.dim(0) / kh.dim(0)), n, 0), acc * corr);
      mx = mnew;
    }
    store(oh, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
  all_to_all(oh, o, 1, 0);  // [Hq/W, S, D] -> [Hq, S/W, D]
}

// 26. Ulysses attention with a sliding window (window >= 1), f16, d64, any W with H % W == 0: as 25 with G = 1 and
// row i of the full sequence seeing keys i - window < j <= i. lse [H/W, S, 1].
PK_KERNEL void ulysses_window_f16_d64(Sym<f16, 3> q, Sym<f16, 3> k, Sym<f16, 3> v, Sym<f16, 3> o, Sym<f16, 3> qh,
                                 Sym<f16, 3> kh, Sym<f16, 3> vh, Sym<f16, 3> oh, Tensor<f32, 3> lse, index window, float scale) {
  all_to_all(q, qh, 0, 1);
  all_to_all(k, kh, 0, 1);
  all_to_all(v, vh, 0, 1);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64})) {
    auto qt = load<64, 64>(qh, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(kh, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) > row_index<64, 64>(m) - window) && (col_index<64, 64>(n) < kh.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(vh, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(oh, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
  all_to_all(oh, o, 1, 0);
}

// 27. Ulysses on the token-major layout a user's model has (BSHD without B): q, k, v, o [S/W, H, 64] bf16 (this
// rank's rows; H % W == 0). all_to_all(x, xs, 1, 0) gives xs [S, H/W, 64] (all rows of rank r's heads
// r H/W ..); a tile loop transposes each into head-major xh [H/W, S, 64]; non-causal attention (keys past S
// masked) into oh [H/W, S, 64]; a loop transposes oh to os [S, H/W, 64]; all_to_all(os, o, 0, 1) brings back
// o [S/W, H, 64]: o[i, h] = sum_j softmax_j(scale * q[i, h].k[j, h]) v[j, h] over the whole sequence.
PK_KERNEL void ulysses_token_major_d64(Sym<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Sym<bf16, 3> o,
                                  Sym<bf16, 3> qs, Sym<bf16, 3> ks, Sym<bf16, 3> vs, Sym<bf16, 3> os,
                                  Tensor<bf16, 3> qh, Tensor<bf16, 3> kh, Tensor<bf16, 3> vh, Tensor<bf16, 3> oh, float scale) {
  all_to_all(q, qs, 1, 0);  // [S/W, H, D] -> [S, H/W, D]
  all_to_all(k, ks, 1, 0);
  all_to_all(v, vs, 1, 0);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64}))  // [S, H/W, D] -> [H/W, S, D]
    store(qh, reshape<64, 64>(load<64, 1, 64>(qs, m, h, 0)), h, m, 0);
  for (auto [h, m] : tiles(kh.dim(0), kh.dim(1), {1, 64}))  // [S, H/W, D] -> [H/W, S, D]
    store(kh, reshape<64, 64>(load<64, 1, 64>(ks, m, h, 0)), h, m, 0);
  for (auto [h, m] : tiles(vh.dim(0), vh.dim(1), {1, 64}))  // [S, H/W, D] -> [H/W, S, D]
    store(vh, reshape<64, 64>(load<64, 1, 64>(vs, m, h, 0)), h, m, 0);
  for (auto [h, m] : tiles(qh.dim(0), qh.dim(1), {1, 64})) {
    auto qt = load<64, 64>(qh, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, kh.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(kh, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < kh.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(vh, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(oh, cast<bf16>(acc / l), h, m, 0);
  }
  for (auto [h, m] : tiles(oh.dim(0), oh.dim(1), {1, 64}))  // [H/W, S, D] -> [S, H/W, D]
    store(os, reshape<64, 1, 64>(load<64, 64>(oh, h, m, 0)), m, h, 0);
  all_to_all(os, o, 0, 1);  // [S, H/W, D] -> [S/W, H, D]
}

// 28. Ring attention with GQA and the striped causal layout, f16, d64, any W (3 and 5 included). Rank r holds the
// tokens at positions t W + r: q, o [H, S, 64] (S rows per rank, any S), kr, vr [2 Hk, S, 64] (two slots of Hk K/V
// heads; this rank's own K, V in slot 0 at entry; H a multiple of Hk, G = H / Hk), lse [H, S, 1], op, lp scratch of
// o's and lse's shapes. At step s (0 .. W-1) the block held is the one that started on rank j = (r - s) mod W, in slot
// s % 2 (it is first sent on to the next rank's other slot unless s = W - 1). Key t of block j is before query i of
// rank r when t W + j <= i W + r, i.e. t <= i, or t < i when j > r. Step 0 writes o, lse; each later step computes
// its partial (op, lp) and merges: lse' = log(e^lse + e^lp), o' = (o e^lse + op e^lp) / e^lse' (o rounded to f16 at
// each step). The result is causal attention of head h over the whole sequence with K/V head h / G.
PK_KERNEL void ring_striped_causal_gqa_f16_d64(Tensor<f16, 3> q, Sym<f16, 3> kr, Sym<f16, 3> vr, Tensor<f16, 3> o, Tensor<f32, 3> lse, Tensor<f16, 3> op, Tensor<f32, 3> lp, index group, float scale) {
  index H = q.dim(0), S = kr.dim(1), Hk = kr.dim(0) / 2;
  {  // step 0: this rank's own block, in slot 0
    index s = 0, cur = 0, nxt = Hk, sends = min(world_size() - 1, 1);
    index j = (rank() + world_size() - s) % world_size();  // the block's first rank
    index strict = min(max(j - rank(), 0), 1);  // 1: keys strictly before the query
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 64>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, m + 64, 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h / group, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < row_index<64, 64>(m) + float(1 - strict)) && (col_index<64, 64>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<f16>(p), load<64, 64>(vr, cur + h / group, n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<f16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * Hk, nxt = (s + 1) % 2 * Hk;
    index sends = min(world_size() - 1 - s, 1);  // 0 at the last step
    index j = (rank() + world_size() - s) % world_size();  // the block's first rank
    index strict = min(max(j - rank(), 0), 1);  // 1: keys strictly before the query
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 64>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, m + 64, 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h / group, n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < row_index<64, 64>(m) + float(1 - strict)) && (col_index<64, 64>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<f16>(p), load<64, 64>(vr, cur + h / group, n, 0), acc * corr);
        mx = mnew;
      }
      store(op, cast<f16>(acc / l), h, m, 0);
      store(lp, mx + log(l), h, m, 0);
    }
    for (auto [h, m] : tiles(H, q.dim(1), {1, 64})) {
      auto l0 = load<64, 1>(lse, h, m, 0);
      auto l1 = load<64, 1>(lp, h, m, 0);
      auto top = max(l0, l1);
      auto w0 = exp(l0 - top);
      auto w1 = exp(l1 - top);
      auto o1 = cast<f32>(load<64, 64>(o, h, m, 0)) * w0 + cast<f32>(load<64, 64>(op, h, m, 0)) * w1;
      store(o, cast<f16>(o1 / (w0 + w1)), h, m, 0);
      store(lse, top + log(w0 + w1), h, m, 0);
    }
  }
}

// The same ring with G written from the sizes (set 21 finding 2): H / Hk, Hk = kr.dim(0) / 2 (the two-slot
// tensor holds 2 Hk heads). The attention template takes both loops, G as that host expression.
PK_KERNEL void ring_striped_causal_gqa_sizes_f16_d64(Tensor<f16, 3> q, Sym<f16, 3> kr, Sym<f16, 3> vr, Tensor<f16, 3> o, Tensor<f32, 3> lse, Tensor<f16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = kr.dim(1), Hk = kr.dim(0) / 2;
  {  // step 0: this rank's own block, in slot 0
    index s = 0, cur = 0, nxt = Hk, sends = min(world_size() - 1, 1);
    index j = (rank() + world_size() - s) % world_size();  // the block's first rank
    index strict = min(max(j - rank(), 0), 1);  // 1: keys strictly before the query
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 64>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, m + 64, 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h / (H / Hk), n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < row_index<64, 64>(m) + float(1 - strict)) && (col_index<64, 64>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<f16>(p), load<64, 64>(vr, cur + h / (H / Hk), n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<f16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * Hk, nxt = (s + 1) % 2 * Hk;
    index sends = min(world_size() - 1 - s, 1);  // 0 at the last step
    index j = (rank() + world_size() - s) % world_size();  // the block's first rank
    index strict = min(max(j - rank(), 0), 1);  // 1: keys strictly before the query
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 64>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, m + 64, 64)) {
        auto sc = mma_t(qt, load<64, 64>(kr, cur + h / (H / Hk), n, 0), zeros<f32, 64, 64>()) * scale;
        sc = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < row_index<64, 64>(m) + float(1 - strict)) && (col_index<64, 64>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<f16>(p), load<64, 64>(vr, cur + h / (H / Hk), n, 0), acc * corr);
        mx = mnew;
      }
      store(op, cast<f16>(acc / l), h, m, 0);
      store(lp, mx + log(l), h, m, 0);
    }
    for (auto [h, m] : tiles(H, q.dim(1), {1, 64})) {
      auto l0 = load<64, 1>(lse, h, m, 0);
      auto l1 = load<64, 1>(lp, h, m, 0);
      auto top = max(l0, l1);
      auto w0 = exp(l0 - top);
      auto w1 = exp(l1 - top);
      auto o1 = cast<f32>(load<64, 64>(o, h, m, 0)) * w0 + cast<f32>(load<64, 64>(op, h, m, 0)) * w1;
      store(o, cast<f16>(o1 / (w0 + w1)), h, m, 0);
      store(lse, top + log(w0 + w1), h, m, 0);
    }
  }
}

// 29. Ring attention, load-balanced causal (zigzag) layout, d128 bf16, any W (3 and 5 included). The sequence of
// 2 W C tokens is cut into 2 W chunks of C; rank r holds chunks r and 2W-1-r as its 2C rows (q, o [H, 2C, 128], S = 2C
// even; kr, vr [2H, 2C, 128] two slots, own block in slot 0). Global position of local row i on rank r:
// i + r C for i < C, i + (2W - 2 - r) C otherwise; the same for key t of the block from rank j = (r - s) mod W at step
// s. Key t is visible to query i when pos_j(t) <= pos_r(i). Steps, sends and the merge as in 28 (a row that sees no
// key of a step gets lp about -1e30 and weight 0). Result: causal attention over the whole sequence, lse [H, 2C, 1].
PK_KERNEL void ring_zigzag_causal_d128(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o, Tensor<f32, 3> lse, Tensor<bf16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = kr.dim(1), Hk = kr.dim(0) / 2;
  {  // step 0: this rank's own block, in slot 0
    index s = 0, cur = 0, nxt = Hk, sends = min(world_size() - 1, 1);
    index j = (rank() + world_size() - s) % world_size();
    index C = S / 2;
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 128>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 128>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 128>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 128>();
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 128>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        auto rows = row_index<64, 64>(m), cols = col_index<64, 64>(n);
      auto qpos = rows + where(rows < float(C), float(rank() * C), float((2 * world_size() - 2 - rank()) * C));
      auto kpos = cols + where(cols < float(C), float(j * C), float((2 * world_size() - 2 - j) * C));
      sc = where((kpos <= qpos) && (col_index<64, 64>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<64, 128>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<bf16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * Hk, nxt = (s + 1) % 2 * Hk;
    index sends = min(world_size() - 1 - s, 1);  // 0 at the last step
    index j = (rank() + world_size() - s) % world_size();
    index C = S / 2;
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 128>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 128>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 128>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 128>();
      for (auto n : range(0, kr.dim(1), 64)) {
        auto sc = mma_t(qt, load<64, 128>(kr, cur + h, n, 0), zeros<f32, 64, 64>()) * scale;
        auto rows = row_index<64, 64>(m), cols = col_index<64, 64>(n);
      auto qpos = rows + where(rows < float(C), float(rank() * C), float((2 * world_size() - 2 - rank()) * C));
      auto kpos = cols + where(cols < float(C), float(j * C), float((2 * world_size() - 2 - j) * C));
      sc = where((kpos <= qpos) && (col_index<64, 64>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<64, 128>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(op, cast<bf16>(acc / l), h, m, 0);
      store(lp, mx + log(l), h, m, 0);
    }
    for (auto [h, m] : tiles(H, q.dim(1), {1, 64})) {
      auto l0 = load<64, 1>(lse, h, m, 0);
      auto l1 = load<64, 1>(lp, h, m, 0);
      auto top = max(l0, l1);
      auto w0 = exp(l0 - top);
      auto w1 = exp(l1 - top);
      auto o1 = cast<f32>(load<64, 128>(o, h, m, 0)) * w0 + cast<f32>(load<64, 128>(op, h, m, 0)) * w1;
      store(o, cast<bf16>(o1 / (w0 + w1)), h, m, 0);
      store(lse, top + log(w0 + w1), h, m, 0);
    }
  }
}

// 30. Ring attention, contiguous causal layout with 128-key steps, d64 bf16, any W. Rank r holds positions
// r S .. r S + S - 1 (q, o [H, S, 64]; kr, vr [2H, S, 64]). At step s the block from rank j = (r - s) mod W has key t at
// j S + t, visible to query i when j S + t <= r S + i (all of it for j < r, causal for j = r, none for j > r: those rows
// get lp about -1e30 and weight 0). Steps, sends and merge as in 28. Result: causal attention over W S tokens.
PK_KERNEL void ring_contig_causal_k128_d64(Tensor<bf16, 3> q, Sym<bf16, 3> kr, Sym<bf16, 3> vr, Tensor<bf16, 3> o, Tensor<f32, 3> lse, Tensor<bf16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = kr.dim(1), Hk = kr.dim(0) / 2;
  {  // step 0: this rank's own block, in slot 0
    index s = 0, cur = 0, nxt = Hk, sends = min(world_size() - 1, 1);
    index j = (rank() + world_size() - s) % world_size();
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 64>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, kr.dim(1), 128)) {
        auto sc = mma_t(qt, load<128, 64>(kr, cur + h, n, 0), zeros<f32, 64, 128>()) * scale;
        sc = where((col_index<64, 128>(n) + float(j * S) <= row_index<64, 128>(m) + float(rank() * S)) && (col_index<64, 128>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<128, 64>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<bf16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * Hk, nxt = (s + 1) % 2 * Hk;
    index sends = min(world_size() - 1 - s, 1);  // 0 at the last step
    index j = (rank() + world_size() - s) % world_size();
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 64>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 64>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 64>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 64>();
      for (auto n : range(0, kr.dim(1), 128)) {
        auto sc = mma_t(qt, load<128, 64>(kr, cur + h, n, 0), zeros<f32, 64, 128>()) * scale;
        sc = where((col_index<64, 128>(n) + float(j * S) <= row_index<64, 128>(m) + float(rank() * S)) && (col_index<64, 128>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<bf16>(p), load<128, 64>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(op, cast<bf16>(acc / l), h, m, 0);
      store(lp, mx + log(l), h, m, 0);
    }
    for (auto [h, m] : tiles(H, q.dim(1), {1, 64})) {
      auto l0 = load<64, 1>(lse, h, m, 0);
      auto l1 = load<64, 1>(lp, h, m, 0);
      auto top = max(l0, l1);
      auto w0 = exp(l0 - top);
      auto w1 = exp(l1 - top);
      auto o1 = cast<f32>(load<64, 64>(o, h, m, 0)) * w0 + cast<f32>(load<64, 64>(op, h, m, 0)) * w1;
      store(o, cast<bf16>(o1 / (w0 + w1)), h, m, 0);
      store(lse, top + log(w0 + w1), h, m, 0);
    }
  }
}

// 31. Ring attention, not causal (encoder / cross-sequence), f16, d128, 32-key steps, any W: o = softmax over all
// W S keys, lse [H, S, 1]; layout and steps as in 28 with G = 1 and no mask but the key length.
PK_KERNEL void ring_full_f16_k32_d128(Tensor<f16, 3> q, Sym<f16, 3> kr, Sym<f16, 3> vr, Tensor<f16, 3> o, Tensor<f32, 3> lse, Tensor<f16, 3> op, Tensor<f32, 3> lp, float scale) {
  index H = q.dim(0), S = kr.dim(1), Hk = kr.dim(0) / 2;
  {  // step 0: this rank's own block, in slot 0
    index s = 0, cur = 0, nxt = Hk, sends = min(world_size() - 1, 1);
    index j = 0;
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 128>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 128>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 128>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 128>();
      for (auto n : range(0, kr.dim(1), 32)) {
        auto sc = mma_t(qt, load<32, 128>(kr, cur + h, n, 0), zeros<f32, 64, 32>()) * scale;
        sc = where((col_index<64, 32>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<f16>(p), load<32, 128>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(o, cast<f16>(acc / l), h, m, 0);
      store(lse, mx + log(l), h, m, 0);
    }
  }
  for (auto s : range(1, world_size())) {
    index cur = s % 2 * Hk, nxt = (s + 1) % 2 * Hk;
    index sends = min(world_size() - 1 - s, 1);  // 0 at the last step
    index j = 0;
    for (auto [h, m] : tiles(Hk * sends, S, {1, 64})) {
      store(kr.on(next_rank()), load<1, 64, 128>(kr, cur + h, m, 0), nxt + h, m, 0);
      store(vr.on(next_rank()), load<1, 64, 128>(vr, cur + h, m, 0), nxt + h, m, 0);
    }
    for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
      auto qt = load<64, 128>(q, h, m, 0);
      auto mx = zeros<f32, 64, 1>() - 1e30f;
      auto l = zeros<f32, 64, 1>();
      auto acc = zeros<f32, 64, 128>();
      for (auto n : range(0, kr.dim(1), 32)) {
        auto sc = mma_t(qt, load<32, 128>(kr, cur + h, n, 0), zeros<f32, 64, 32>()) * scale;
        sc = where((col_index<64, 32>(n) < kr.dim(1)), sc, -1e30f);
        auto mnew = max(mx, row_max(sc));
        auto p = exp(sc - mnew);
        auto corr = exp(mx - mnew);
        l = l * corr + row_sum(p);
        acc = mma(cast<f16>(p), load<32, 128>(vr, cur + h, n, 0), acc * corr);
        mx = mnew;
      }
      store(op, cast<f16>(acc / l), h, m, 0);
      store(lp, mx + log(l), h, m, 0);
    }
    for (auto [h, m] : tiles(H, q.dim(1), {1, 64})) {
      auto l0 = load<64, 1>(lse, h, m, 0);
      auto l1 = load<64, 1>(lp, h, m, 0);
      auto top = max(l0, l1);
      auto w0 = exp(l0 - top);
      auto w1 = exp(l1 - top);
      auto o1 = cast<f32>(load<64, 128>(o, h, m, 0)) * w0 + cast<f32>(load<64, 128>(op, h, m, 0)) * w1;
      store(o, cast<f16>(o1 / (w0 + w1)), h, m, 0);
      store(lse, top + log(w0 + w1), h, m, 0);
    }
  }
}

// 32. Context parallelism by an all-gather of K and V (Llama 3 style), causal, GQA by argument, d128 bf16, any W.
// Rank r holds the contiguous rows r S .. r S + S - 1 of every head: q [H, S, 128], k, v [Hk, S, 128] (Sym; H = group Hk).
// all_gather(k, kf, 1) gives kf [Hk, W S, 128] (row block r from rank r), likewise vf. Query i of rank r is at
// position r S + i and sees keys t <= r S + i: o[h, i] = sum_{t <= rS+i} softmax_t(scale q[h, i].kf[h/group, t]) vf[h/group, t];
// lse [H, S, 1]. (Every key step is visited; the mask cuts.)
PK_KERNEL void cp_allgather_kv_causal_gqa_d128(Tensor<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Tensor<bf16, 3> kf,
                                          Tensor<bf16, 3> vf, Tensor<bf16, 3> o, Tensor<f32, 3> lse, index group, float scale) {
  all_gather(k, kf, 1);  // [Hk, S, D] -> [Hk, W S, D]
  all_gather(v, vf, 1);
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index pos0 = rank() * q.dim(1);
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, kf.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(kf, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m) + pos0) && (col_index<64, 64>(n) < kf.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(vf, h / group, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 33. Context parallelism by all-gather with a sliding window (window >= 1), d64 f16, any W: as 32 with G = 1 and
// query r S + i seeing keys r S + i - window < t <= r S + i. Legal for every rank and window >= 1.
PK_KERNEL void cp_allgather_kv_window_f16_d64(Tensor<f16, 3> q, Sym<f16, 3> k, Sym<f16, 3> v, Tensor<f16, 3> kf,
                                         Tensor<f16, 3> vf, Tensor<f16, 3> o, Tensor<f32, 3> lse, index window, float scale) {
  all_gather(k, kf, 1);
  all_gather(v, vf, 1);
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index pos0 = rank() * q.dim(1);
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, kf.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(kf, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m) + pos0) && (col_index<64, 64>(n) > row_index<64, 64>(m) + pos0 - window) && (col_index<64, 64>(n) < kf.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(vf, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 34. Split-KV decode across ranks (the KV cache sharded by sequence over W ranks, any W): q [H, 1, 64] the same on every
// rank, k, v [H, Sl, 64] this rank's Sl cached keys. Each rank computes its partial (op [H, 1, 64] bf16 Sym, lp [H, 1, 1]
// f32 Sym), all-gathers them into opa [W H, 1, 64] and lpa [W H, 1, 1] (block r from rank r), and every rank merges:
// lse[h] = log sum_r exp(lpa[r H + h]); o[h] = sum_r exp(lpa[r H + h] - lse[h]) opa[r H + h] (the partials as rounded
// to bf16), o [H, 1, 64] bf16, lse [H, 1, 1]. The result is decode attention over all W Sl keys.
PK_KERNEL void sp_decode_allgather_merge_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Sym<bf16, 3> op, Sym<f32, 3> lp,
                                        Tensor<bf16, 3> opa, Tensor<f32, 3> lpa, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(op, cast<bf16>(acc / l), h, m, 0);
    store(lp, mx + log(l), h, m, 0);
  }
  all_gather(op, opa);  // [H, 1, D] -> [W H, 1, D]
  all_gather(lp, lpa);
  for (auto h : tiles(q.dim(0), {1})) {
    auto top = load<1, 1>(lpa, h, 0, 0);
    for (auto r : range(1, world_size())) top = max(top, load<1, 1>(lpa, r * q.dim(0) + h, 0, 0));
    auto den = zeros<f32, 1, 1>();
    auto num = zeros<f32, 1, 64>();
    for (auto r : range(0, world_size())) {
      auto w = exp(load<1, 1>(lpa, r * q.dim(0) + h, 0, 0) - top);
      den = den + w;
      num = num + cast<f32>(load<1, 64>(opa, r * q.dim(0) + h, 0, 0)) * w;
    }
    store(o, cast<bf16>(num / den), h, 0, 0);
    store(lse, top + log(den), h, 0, 0);
  }
}

// 35. Flash-decoding on one GPU: the Sk keys of each head split into P = ceil(Sk / chunk) chunks (chunk a multiple of
// 64, an argument). Phase 1, per (head, chunk c): partial softmax over keys c chunk .. min(Sk, (c+1) chunk) - 1 into
// po [H, P, 64] f32 (unnormalised sum p v), pm [H, P] f32 (row max) and pl [H, P] f32 (sum of p). Phase 2 merges:
// M = max_c pm, L = sum_c pl exp(pm - M), o[h, 0] = sum_c po exp(pm - M) / L (bf16), lse[h] = M + log L ([H, 1] f32).
// q [H, 1, 64] (one query), k, v [H, Sk, 64]. (P at most 64.)
PK_KERNEL void flash_decode_split_merge_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<f32, 3> po, Tensor<f32, 2> pm,
                                       Tensor<f32, 2> pl, Tensor<bf16, 3> o, Tensor<f32, 2> lse, index chunk, float scale) {
  for (auto [h, c] : tiles(q.dim(0), po.dim(1), {1, 1})) {
    auto qt = load<1, 64>(q, h, 0, 0);
    auto mx = zeros<f32, 1, 1>() - 1e30f;
    auto l = zeros<f32, 1, 1>();
    auto acc = zeros<f32, 1, 64>();
    index end = min(k.dim(1), (c + 1) * chunk);
    for (auto n : range(c * chunk, end, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 1, 64>()) * scale;
      s = where(col_index<1, 64>(n) < end, s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(po, acc, h, c, 0);
    store(pm, mx, h, c);
    store(pl, l, h, c);
  }
  for (auto h : tiles(q.dim(0), {1})) {
    auto valid = col_index<1, 64>(0) < pm.cols();
    auto mrow = where(valid, load<1, 64>(pm, h, 0), -1e30f);
    auto top = row_max(mrow);
    auto w = where(valid, exp(mrow - top), 0.0f) * load<1, 64>(pl, h, 0);
    auto L = row_sum(w);
    auto num = zeros<f32, 1, 64>();
    for (auto c : range(0, po.dim(1))) num = num + load<1, 64>(po, h, c, 0) * exp(load<1, 1>(pm, h, c) - top);
    store(o, cast<bf16>(num / L), h, 0, 0);
    store(lse, top + log(L), h, 0);
  }
}

// 36. Standalone log-sum-exp merge of two partial attentions (split-K prefill, cascade attention): oa, ob [H, S, 128] bf16
// with la, lb [H, S, 1] f32 (natural-log lse). o = (oa e^la + ob e^lb) / (e^la + e^lb) in f32 then bf16; lse = log(e^la + e^lb),
// computed as top + log(e^(la-top) + e^(lb-top)), top = max(la, lb).
PK_KERNEL void lse_merge_two_d128(Tensor<bf16, 3> oa, Tensor<f32, 3> la, Tensor<bf16, 3> ob, Tensor<f32, 3> lb, Tensor<bf16, 3> o, Tensor<f32, 3> lse) {
  for (auto [h, m] : tiles(oa.dim(0), oa.dim(1), {1, 32})) {
    auto l0 = load<32, 1>(la, h, m, 0);
    auto l1 = load<32, 1>(lb, h, m, 0);
    auto top = max(l0, l1);
    auto w0 = exp(l0 - top);
    auto w1 = exp(l1 - top);
    auto num = cast<f32>(load<32, 128>(oa, h, m, 0)) * w0 + cast<f32>(load<32, 128>(ob, h, m, 0)) * w1;
    store(o, cast<bf16>(num / (w0 + w1)), h, m, 0);
    store(lse, top + log(w0 + w1), h, m, 0);
  }
}

// 37. QKV projection with the split into heads fused into the store: x [T, E] bf16, w [(Hq + 2 Hk) 64, E] bf16 (the q, k, v
// weights stacked by rows), qkv [Hq + 2 Hk, T, 64] bf16 head-major: qkv[c, t, d] = bf16(sum_e x[t, e] w[c 64 + d, e]).
// (Heads 0 .. Hq-1 are q, then k, then v: the attention reads them at head offsets.)
PK_KERNEL void qkv_proj_split_heads(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 3> qkv) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto e : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, e), load<64, 64>(w, n, e), acc);
    store(qkv, cast<bf16>(acc), n / 64, m, 0);
  }
}

// 38. QKV projection on the GEMM template (packed [T, 3 H 128] output, with a bias and q pre-scaled by 1/sqrt(128)
// folded into its columns: columns < H 128 are scaled), then a tile loop splitting the packed rows into head-major
// q, k, v [H, T, 128]: qkv[t, c] = bf16((sum_e x[t, e] w[c, e] + b[c]) * (c < H 128 ? qscale : 1)); q[h, t, d] = qkv[t, h 128 + d],
// k[h, t, d] = qkv[t, (H + h) 128 + d], v[h, t, d] = qkv[t, (2H + h) 128 + d]. H = q.dim(0).
PK_KERNEL void qkv_proj_bias_then_split(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 1> b, Tensor<bf16, 2> qkv,
                                   Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, float qscale) {
  index HD = q.dim(0) * 128;
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto e : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, e), load<128, 64>(w, n, e), acc);
    auto y = acc + cast<f32>(load<1, 128>(b, n));
    store(qkv, cast<bf16>(where(col_index<128, 128>(n) < HD, y * qscale, y)), m, n);
  }
  for (auto [h, t] : tiles(q.dim(0), q.dim(1), {1, 32})) {
    store(q, load<32, 128>(qkv, t, h * 128), h, t, 0);
    store(k, load<32, 128>(qkv, t, HD + h * 128), h, t, 0);
    store(v, load<32, 128>(qkv, t, 2 * HD + h * 128), h, t, 0);
  }
}

// 39. Output projection + residual on the GEMM template: o [T, H D] (heads packed), wo [E, H D], res [T, E], all bf16:
// y[t, e] = bf16(sum_c o[t, c] wo[e, c] + res[t, e]).
PK_KERNEL void out_proj_residual(Tensor<bf16, 2> o, Tensor<bf16, 2> wo, Tensor<bf16, 2> res, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(o.rows(), wo.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto c : range(0, o.cols(), 64)) acc = mma_t(load<128, 64>(o, m, c), load<256, 64>(wo, n, c), acc);
    store(y, cast<bf16>(acc + cast<f32>(load<128, 256>(res, m, n))), m, n);
  }
}

// 40. Output projection reading head-major o [H, T, 64] directly (K = H 64 walked head by head) + residual, f16:
// y[t, e] = f16(sum_h sum_d o[h, t, d] wo[e, h 64 + d] + res[t, e]); wo [E, H 64], res, y [T, E].
PK_KERNEL void out_proj_heads_residual_f16(Tensor<f16, 3> o, Tensor<f16, 2> wo, Tensor<f16, 2> res, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(o.dim(1), wo.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto h : range(0, o.dim(0))) acc = mma_t(load<64, 64>(o, h, m, 0), load<128, 64>(wo, n, h * 64), acc);
    store(y, cast<f16>(acc + cast<f32>(load<64, 128>(res, m, n))), m, n);
  }
}

// 41. Tensor-parallel attention block tail, any W with H % W == 0: this rank holds H/W heads' attention output
// oh [H/W, T, 64] and the row shard wo [E, (H/W) 64] of the output projection. Partial yp[t, e] = sum over local heads
// (f32, Sym [T, E]); all_reduce(Sum) into ys [T, E] f32; then y = bf16(ys + res) with res [T, E] bf16.
PK_KERNEL void tp_out_proj_allreduce_residual(Tensor<bf16, 3> oh, Tensor<bf16, 2> wo, Sym<f32, 2> yp, Sym<f32, 2> ys,
                                          Tensor<bf16, 2> res, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(oh.dim(1), wo.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto h : range(0, oh.dim(0))) acc = mma_t(load<64, 64>(oh, h, m, 0), load<128, 64>(wo, n, h * 64), acc);
    store(yp, acc, m, n);
  }
  all_reduce(Sum, yp, ys);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {32, 128}))
    store(y, cast<bf16>(load<32, 128>(ys, m, n) + cast<f32>(load<32, 128>(res, m, n))), m, n);
}

// 42. Row-parallel output projection + reduce-scatter to sequence-parallel rows + residual, any W with T % W == 0:
// o [T, K/W] bf16 (this rank's heads, packed), wo [E, K/W]; yp [T, E] f32 Sym = o wo^T; reduce_scatter(Sum) gives
// ys [T/W, E] f32, rows r T/W .. of the sum; y = bf16(ys + res) with res, y [T/W, E] (this rank's rows).
PK_KERNEL void sp_out_proj_rs_residual(Tensor<bf16, 2> o, Tensor<bf16, 2> wo, Sym<f32, 2> yp, Sym<f32, 2> ys, Tensor<bf16, 2> res,
                                  Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(o.rows(), wo.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto c : range(0, o.cols(), 64)) acc = mma_t(load<128, 64>(o, m, c), load<256, 64>(wo, n, c), acc);
    store(yp, acc, m, n);
  }
  reduce_scatter(Sum, yp, ys);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 256}))
    store(y, cast<bf16>(load<16, 256>(ys, m, n) + cast<f32>(load<16, 256>(res, m, n))), m, n);
}

// 43. Attention reading q, k, v as head slices of one packed qkv [3H, S, 64] tensor (the output of 37 with Hk = Hq = H):
// q at head h, k at H + h, v at 2H + h; causal, d64 bf16, o [H, S, 64], lse [H, S, 1].
PK_KERNEL void attention_from_packed_qkv_d64(Tensor<bf16, 3> q, Tensor<bf16, 3> qkv, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(qkv, q.dim(0) + h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < qkv.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(qkv, 2 * q.dim(0) + h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// 44. Ring-free sequence parallel attention at odd W by pulls: each rank pulls every rank's K and V block
// (k, v [H, S, 64] Sym, rank j's rows are positions j S ..) into kf, vf [H, W S, 64] (block j at rows j S ..) with one-row
// tile loads from peers (any S: no tile crosses a block's end), then runs non-causal attention of its q [H, S, 64] over all W S keys; o [H, S, 64], lse [H, S, 1].
PK_KERNEL void sp_pull_kv_attention_d64(Tensor<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Tensor<bf16, 3> kf, Tensor<bf16, 3> vf,
                                   Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [j, h, m] : tiles(world_size(), k.dim(0), k.dim(1), {1, 1, 1})) {  // one row a tile: blocks never overlap
    store(kf, load<1, 64>(k.on(j), h, m, 0), h, j * k.dim(1) + m, 0);
    store(vf, load<1, 64>(v.on(j), h, m, 0), h, j * k.dim(1) + m, 0);
  }
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, kf.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(kf, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < kf.dim(1)), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(vf, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

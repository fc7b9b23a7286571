// The thirty-sixth user-written spec set: the GEMM and attention spellings of test/specs/user_specs36_probes.pk.cpp
// that fell off the Hopper templates and now take them (k07, k12, k13, k14, k16, k18, k64, k42, k65, k70), and for
// contrast three probes that took them before (k01, k17, k41), renamed s36_*, each with a comment saying exactly
// what it computes (test/gpu/user_specs36_jit_test.cu's float64 references are written from these comments).
// A B^T is sum over k of A[m, k] B[n, k]; every sum is in fp32. Partial tiles clip at tensor edges: loads read 0
// outside the tensor they read, stores drop what falls outside the tensor they write. Attention: softmax over the
// keys j a query row i sees of scale * q_i . k_j, times V; "causal": row i sees keys j <= i.
// Findings: test/specs/specs36_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================ GEMMs ==

// From k01 (took the template before). c = bf16(gelu(a b^T + bias[0, n])), gelu the tanh form; a [M, K],
// b [N, K], bias [1, N] bf16.
PK_KERNEL void s36_gemm_bias_gelu(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(gelu(acc + cast<f32>(load<1, 256>(bias, 0, n)))), m, n);
  }
}

// From k07. c = bf16(a b^T) with the tile loop over c's extents: c's rows and columns, each row m of c from row m
// of a (0 past a's rows), each column n from row n of b.
PK_KERNEL void s36_gemm_over_c(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k12. c = bf16(a b^T) with the tile loop written column tiles first: tiles(b.rows(), a.rows()) as [n, m].
PK_KERNEL void s36_gemm_nm_loop(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [n, m] : tiles(b.rows(), a.rows(), {256, 128})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k13. c = bf16(c0 + a b^T), the accumulator started from c0 [M, N] bf16.
PK_KERNEL void s36_gemm_acc_from_c0(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c0, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = cast<f32>(load<128, 256>(c0, m, n));
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k14. c = bf16(bias[0, n] + a b^T), the accumulator started at zeros plus the f32 bias row [1, N].
PK_KERNEL void s36_gemm_acc_bias_start(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>() + load<1, 256>(bias, 0, n);
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k16. c = bf16(a b^T) written mma(a, transpose(b's [N, K] tile)), 128 x 128 tiles.
PK_KERNEL void s36_gemm_mma_transpose_b(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), transpose(load<128, 64>(b, n, k)), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k64. c = bf16(a b^T) with the K loop written acc = acc + mma_t(a, b, zeros).
PK_KERNEL void s36_gemm_acc_plus_mma(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = acc + mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), zeros<f32, 128, 256>());
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k17 (took the template before). Batched: c[z] = bf16(a[z] b[z]^T * s[z]); a [Z, M, K], b [Z, N, K],
// s [Z] f32.
PK_KERNEL void s36_bmm_scale(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 1> s, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc * s.at(z)), z, m, n);
  }
}

// From k18. Batched: c[z] = bf16(a[z] b[z]^T) with the loop over c's dims 0, 1 and 2.
PK_KERNEL void s36_bmm_over_c(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(c.dim(0), c.dim(1), c.dim(2), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc), z, m, n);
  }
}

// ============================================================ attention ==

// From k41 (took the template before). Causal attention, head dim 128: q [S, 128], k and v [Sk, 128],
// o = bf16(softmax_j(scale q_i . k_j) v) over j <= i (and j < Sk), lse [S, 1] = log of the row's sum of exp.
PK_KERNEL void s36_attn_causal_lse_d128(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                        Tensor<f32, 2> lse, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto raw = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      auto s = where(row_index<64, 64>(m) >= col_index<64, 64>(n), where(col_index<64, 64>(n) < k.rows(), raw, -1e30f), -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
    store(lse, log(l) + mx, m, 0);
  }
}

// From k42. Causal attention, head dim 64, the key loop to min(m + 64, k.rows()): q [S, 64], k and v [Sk, 64],
// o = bf16(softmax_j(scale q_i . k_j) v) over j <= i and j < Sk.
PK_KERNEL void s36_attn_causal_min_bound(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                         float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, min(m + 64, k.rows()), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) && (col_index<64, 64>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// From k65. Attention over all keys, head dim 64, the output update written acc * corr + mma(p, v, 0):
// q [Sq, 64], k and v [Sk, 64], o = bf16(softmax_j(scale q_i . k_j) v) over j < Sk.
PK_KERNEL void s36_attn_flash_update(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                     float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = acc * corr + mma(cast<bf16>(p), load<64, 64>(v, n, 0), zeros<f32, 64, 64>());
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// From k70. Causal attention over heads, head dim 64, the causal mask compared on cast<i32> coordinates:
// q [H, S, 64], k and v [H, Sk, 64], o[h] = bf16(softmax_j(scale q[h]_i . k[h]_j) v[h]) over j <= i and j < Sk.
PK_KERNEL void s36_attn_causal_i32_heads(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                         float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      auto vis = (cast<i32>(col_index<64, 64>(n)) <= cast<i32>(row_index<64, 64>(m))) && (col_index<64, 64>(n) < k.dim(1));
      s = where(vis, s, -1e30f);
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

// From k57 (a scale computed from the head dim: once per launch, 192-row blocks at head dim 64, after set 36):
// q [Sq, 64], k and v [Sk, 64], o = bf16(softmax_j(q_i . k_j / sqrt(64)) v) over j < Sk.
PK_KERNEL void s36_attn_rsqrt_scale_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o) {
  float scale = rsqrt(float(q.cols()));
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// From k72 (a temperature): causal, q [S, 64], k and v [S, 64],
// o = bf16(softmax_j((0.125 / temp) q_i . k_j) v) over j <= i and j < S.
PK_KERNEL void s36_attn_temp_causal_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o,
                                        float temp) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * (0.125f / temp);
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.rows()), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// From k44 with a constant scale (masked, then scaled): q [Sq, 64], k and v [Sk, 64],
// o = bf16(softmax_j(0.125 q_i . k_j) v) over j < Sk.
PK_KERNEL void s36_attn_mask_then_scale(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = where(col_index<64, 64>(n) < k.rows(), mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()), -1e30f) * 0.125f;
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// From k48 (a KV cache): causal against past keys, q [Sq, 64], k and v [Sk, 64], query i at position
// i + (Sk - Sq): o = bf16(softmax_j(scale q_i . k_j) v) over j <= i + Sk - Sq. Where Sk < Sq the first rows see
// no key, and the spec averages v over every key (all scores -1e30).
PK_KERNEL void s36_attn_kv_cache_causal_d64(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v,
                                            Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m) + (k.rows() - q.rows())) *
                    (col_index<64, 64>(n) < k.rows()),
                s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

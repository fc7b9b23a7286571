// The twenty-eighth user set: GEMM epilogues of every shape a user writes, on every GEMM route (the plain
// template's A * B^T and A * B forms in bf16 / f16 with f32, bf16 or f16 outputs, A read transposed, batched
// GEMMs over 3-D tensors with a per-batch weight or one shared weight, GEMMs with a trailing LoRA product,
// weight-only GEMMs with fp8 / i8 weights, and the GEMMs that feed an all-reduce, an all-gather or a
// reduce-scatter). Each epilogue mixes parts that follow only the output row (per-row scales, row_index masks,
// [M] vectors read as a column, a transposed [1, M] row), parts that follow only the column (bias rows,
// per-column scales, col_index masks, [N] vectors, a transposed [N, 1] column), per-element parts (residual
// tiles, i8 and i32 mask tiles, a transposed residual), parts that join a row value and a column value (outer
// products rs[m] * cs[n], causal where(col <= row), lengths against columns, hashes of row * N + col, uniform
// dropout, segment ids read as both a row and a column), scalars and .at() values, integer maps, casts, both
// GELU forms, SiLU, tanh, where, min / max, per-batch values and the batch index.
//
// Notation: acc[m, n] is the GEMM's fp32 sum (sum_k A[m, k] B[n, k] for mma_t, sum_k A[m, k] B[k, n] for mma);
// row = the output element's row, col its column; bf16(x) / f16(x) round to nearest even; gelu is the tanh form
// 0.5 x (1 + tanh(0.7978845608 (x + 0.044715 x^3))), gelu_erf the erf form, silu(x) = x / (1 + e^-x),
// sigmoid(x) = 1 / (1 + e^-x). A load outside a tensor reads 0 (tails). Written from docs/language.md and
// pk/spec.h; test/gpu/user_specs28_jit_test.cu runs every kernel against a float64 reference; findings in
// test/specs/specs28_findings.md.
#include <pk/spec.h>
using namespace pk;

// ---------------------------------------------------------------------------------------------------------
// Plain GEMM, A [M, K] times B [N, K] (mma_t), bf16.

// 1. y[m, n] = bf16(acc * rs[m, 0] + bias[0, n] + res[m, n]): rs f32 [M, 1], bias bf16 [1, N], res bf16 [M, N].
PK_KERNEL void e28_rowscale_bias_resid(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rs, Tensor<bf16, 2> bias,
                                       Tensor<bf16, 2> res, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto t = acc * load<128, 1>(rs, m, 0) + cast<f32>(load<1, 256>(bias, 0, n));
    store(y, cast<bf16>(t + cast<f32>(load<128, 256>(res, m, n))), m, n);
  }
}

// 2. y[m, n] = acc * (rs[m] * cs[n]) + rs[m] in f32: rs f32 [M] read as a column, cs f32 [N] as a row; the outer
// product rs[m] * cs[n] depends on both.
PK_KERNEL void e28_outer_scales_1d(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> rs, Tensor<f32, 1> cs,
                                   Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto r = load<128, 1>(rs, m);
    store(y, acc * (r * load<1, 256>(cs, n)) + r, m, n);
  }
}

// 3. y[m, n] = bf16(col <= row ? acc + bias[n] : -10000): bias bf16 [N] (a causal, biased score block).
PK_KERNEL void e28_causal_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 1> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto s = acc + cast<f32>(load<1, 256>(bias, n));
    store(y, cast<bf16>(where(col_index<128, 256>(n) <= row_index<128, 256>(m), s, -1e4f)), m, n);
  }
}

// 4. Dropout by a hash of the element: h = i32(row) * N + i32(col) (N = b.rows(), wrapping at 32 bits),
// keep = uniform(seed, row, col) >= 0.1 and h % 7 != 3 (C's truncating %);
// y[m, n] = bf16(keep ? acc * 1.25 : 0). uniform as docs/language.md defines it.
PK_KERNEL void e28_hash_dropout(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> y, index seed) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto h = cast<i32>(row_index<128, 256>(m)) * b.rows() + cast<i32>(col_index<128, 256>(n));
    auto keep = (uniform<128, 256>(seed, m, n) >= 0.1f) * cast<f32>((h % 7) != 3);
    store(y, cast<bf16>(where(keep, acc * 1.25f, 0.0f)), m, n);
  }
}

// 5. y[m, n] = bf16(acc * rv[0, m] + cv[n, 0]): rv f32 [1, M] read transposed as a column (follows the row),
// cv f32 [N, 1] read transposed as a row (follows the column).
PK_KERNEL void e28_transposed_vectors(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rv, Tensor<f32, 2> cv,
                                      Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc * transpose(load<1, 128>(rv, 0, m)) + transpose(load<256, 1>(cv, n, 0))), m, n);
  }
}

// 6. y[m, n] = bf16(acc * alpha + s[0] * t[1, 2] - beta): s f32 [4], t f32 [3, 4], alpha and beta float
// arguments (every step fixed for the tile but acc's).
PK_KERNEL void e28_scalars_at(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> s, Tensor<f32, 2> t,
                              Tensor<bf16, 2> y, float alpha, float beta) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc * alpha + (s.at(0) * t.at(1, 2) - beta)), m, n);
  }
}

// 7. Integer maps in f32: y[m, n] = acc + f32((row % 7) * 3 - col / 5 + min(row, col)) (C's truncating / and
// %, on i32 row and column indices).
PK_KERNEL void e28_int_maps(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto r = cast<i32>(row_index<128, 256>(m)), c = cast<i32>(col_index<128, 256>(n));
    store(y, acc + cast<f32>((r % 7) * 3 - c / 5 + min(r, c)), m, n);
  }
}

// 8. y[m, n] = bf16(gelu(acc + bias[n])) (the tanh form): bias f32 [N].
PK_KERNEL void e28_gelu_tanh_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(gelu(acc + load<1, 256>(bias, n))), m, n);
  }
}

// 9. y[m, n] = gelu(acc * rs[m, 0]) in f32 (the tanh form): rs f32 [M, 1].
PK_KERNEL void e28_gelu_tanh_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rs, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, gelu(acc * load<128, 1>(rs, m, 0)), m, n);
  }
}

// 10. y[m, n] = bf16(gelu_erf(acc) * silu(g[0, n]) * 2): g f32 [1, N] (a gate per column).
PK_KERNEL void e28_gelu_erf_silu_gate(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> g, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(gelu_erf(acc) * (silu(load<1, 256>(g, 0, n)) * 2.0f)), m, n);
  }
}

// 11. f16 operands and output, a logit soft-cap and a row limit:
// y[m, n] = f16(row < rows_kept ? cap * tanh(acc / cap) : 0) (rows_kept an integer argument, cap a float one).
PK_KERNEL void e28_f16_softcap_rows(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> y, float cap, index rows_kept) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    auto capped = tanh(acc / cap) * cap;
    store(y, cast<f16>(where(row_index<128, 128>(m) < rows_kept, capped, 0.0f)), m, n);
  }
}

// 12. i8 masks of three shapes: mt i8 [M, N], mr i8 [M, 1], mc i8 [N];
// y[m, n] = bf16(mt[m, n] != 0 and mr[m, 0] > 0 and mc[n] != 3 ? acc : -1).
PK_KERNEL void e28_i8_masks(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i8, 2> mt, Tensor<i8, 2> mr, Tensor<i8, 1> mc,
                            Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto keep = cast<f32>(load<128, 256>(mt, m, n) != 0) * cast<f32>(load<128, 1>(mr, m, 0) > 0) *
                cast<f32>(load<1, 256>(mc, n) != 3);
    store(y, cast<bf16>(where(keep, acc, -1.0f)), m, n);
  }
}

// 13. y[m, n] = bf16(min(max(k[m, n] > 0 ? acc : 0, lo[m, 0]), hi[0, n])): k i32 [M, N], lo f32 [M, 1],
// hi f32 [1, N].
PK_KERNEL void e28_i32_mask_clamp(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i32, 2> k32, Tensor<f32, 2> lo,
                                  Tensor<f32, 2> hi, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto v = where(load<128, 256>(k32, m, n) > 0, acc, 0.0f);
    store(y, cast<bf16>(min(max(v, load<128, 1>(lo, m, 0)), load<1, 256>(hi, 0, n))), m, n);
  }
}

// 14. Per-row lengths against columns: lens i32 [M, 1]; y[m, n] = bf16(col < lens[m] ? acc : 0).
PK_KERNEL void e28_lengths_mask(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i32, 2> lens, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto keep = col_index<128, 256>(n) < cast<f32>(load<128, 1>(lens, m, 0));
    store(y, cast<bf16>(where(keep, acc, 0.0f)), m, n);
  }
}

// 15. Segment ids read as a column and as a row (a packed-sequence mask, M = N): seg i32 [N];
// y[m, n] = seg[m] == seg[n] ? acc : 0, in f32.
PK_KERNEL void e28_segment_ids(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i32, 1> seg, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, where(load<128, 1>(seg, m) == load<1, 256>(seg, n), acc, 0.0f), m, n);
  }
}

// 16. A residual stored transposed: rt bf16 [N, M]; y[m, n] = bf16(acc + rt[n, m]).
PK_KERNEL void e28_transposed_residual(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> rt, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc + cast<f32>(transpose(load<256, 128>(rt, n, m)))), m, n);
  }
}

// 17. Rows picked by integer arguments: tbl f32 [R, N], v f32 [R2, M];
// y[m, n] = bf16(acc * tbl[sel, n] + v[sel2, m]) (v's row sel2 read transposed as a column).
PK_KERNEL void e28_host_rows(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> tbl, Tensor<f32, 2> v,
                             Tensor<bf16, 2> y, index sel, index sel2) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc * load<1, 256>(tbl, sel, n) + transpose(load<1, 128>(v, sel2, m))), m, n);
  }
}

// 18. One plane of a 3-D tensor at an integer argument: r3 bf16 [P, M, N]; y[m, n] = bf16(acc + r3[p, m, n]).
PK_KERNEL void e28_plane_at_arg(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 3> r3, Tensor<bf16, 2> y,
                                index p) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc + cast<f32>(reshape<128, 256>(load<1, 128, 256>(r3, p, m, n)))), m, n);
  }
}

// 19. Chains that follow only the row and only the column: lse f32 [M, 1], gate f32 [1, N];
// y[m, n] = bf16(acc * exp(-lse[m, 0]) * (sigmoid(gate[0, n]) * 2 + 0.5)).
PK_KERNEL void e28_row_col_chains(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> lse, Tensor<f32, 2> gate,
                                  Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto rw = exp(-load<128, 1>(lse, m, 0));
    auto cw = sigmoid(load<1, 256>(gate, 0, n)) * 2.0f + 0.5f;
    store(y, cast<bf16>(acc * rw * cw), m, n);
  }
}

// 20. A row value against a column value, then a cast: rq f32 [M, 1], cq f32 [1, N];
// y[m, n] = bf16(acc + f32(i32(rq[m, 0] * cq[0, n]))) (i32() rounds toward zero).
PK_KERNEL void e28_outer_to_int(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rq, Tensor<f32, 2> cq,
                                Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto q = cast<i32>(load<128, 1>(rq, m, 0) * load<1, 256>(cq, 0, n));
    store(y, cast<bf16>(acc + cast<f32>(q)), m, n);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Plain GEMM, A [M, K] times B [K, N] (mma), and A read transposed.

// 21. f16, B [K, N], f16 output: y[m, n] = f16(row < valid ? acc * cs[n] : 0), cs f32 [N], valid an integer
// argument.
PK_KERNEL void e28_ab_f16_colscale_rows(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> cs, Tensor<f16, 2> y,
                                        index valid) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k, n), acc);
    store(y, cast<f16>(where(row_index<128, 256>(m) < valid, acc * load<1, 256>(cs, n), 0.0f)), m, n);
  }
}

// 22. bf16, B [K, N], f32 output, a rank-1 update and a clamp: rs f32 [M, 1], cs f32 [N];
// y[m, n] = min(acc + rs[m, 0] * cs[n], 30).
PK_KERNEL void e28_ab_rank1_f32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rs, Tensor<f32, 1> cs,
                                Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<64, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(y, min(acc + load<64, 1>(rs, m, 0) * load<1, 128>(cs, n), 30.0f), m, n);
  }
}

// 23. f16, B [K, N], bf16 output, a SiLU-gated residual by column parity:
// y[m, n] = bf16(col % 2 == 0 ? silu(acc) : acc + res[m, n]), res f16 [M, N].
PK_KERNEL void e28_ab_parity_silu(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> res, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k, n), acc);
    auto even = (cast<i32>(col_index<128, 256>(n)) % 2) == 0;
    store(y, cast<bf16>(where(even, silu(acc), acc + cast<f32>(load<128, 256>(res, m, n)))), m, n);
  }
}

// 24. A stored [K, M] read transposed (dW = dY^T X): y[m, n] = bf16(acc * rs[m] + bias[0, n]), rs f32 [M]
// (a column), bias bf16 [1, N]; acc = sum_k A[k, m] B[k, n].
PK_KERNEL void e28_at_b_epilogue(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> rs, Tensor<bf16, 2> bias,
                                 Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.cols(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.rows(), 64)) acc = mma(transpose(load<64, 128>(a, k, m)), load<64, 256>(b, k, n), acc);
    store(y, cast<bf16>(acc * load<128, 1>(rs, m) + cast<f32>(load<1, 256>(bias, 0, n))), m, n);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Batched GEMMs: A [Z, M, K], B [Z, N, K] or [Z, K, N] (or one shared 2-D weight).

// 25. y[z, m, n] = bf16((acc * ps[z, m, 0] + pb[z, 0, n]) * s[z]): ps f32 [Z, M, 1], pb f32 [Z, 1, N], s f32 [Z].
PK_KERNEL void e28_bmm_batch_vectors(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 3> ps, Tensor<f32, 3> pb,
                                     Tensor<f32, 1> s, Tensor<bf16, 3> y) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    auto t = acc * load<128, 1>(ps, z, m, 0) + load<1, 256>(pb, z, 0, n);
    store(y, cast<bf16>(t * s.at(z)), z, m, n);
  }
}

// 26. f16, B [Z, K, N], f32 output, the batch index in the epilogue:
// y[z, m, n] = (col <= row ? acc : 0) * 0.5 + f32(row % 5 + 7 z).
PK_KERNEL void e28_bmm_kn_batch_index(Tensor<f16, 3> a, Tensor<f16, 3> b, Tensor<f32, 3> y) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(2), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma(load<128, 64>(a, z, m, k), load<64, 256>(b, z, k, n), acc);
    auto low = where(col_index<128, 256>(n) <= row_index<128, 256>(m), acc, 0.0f);
    store(y, low * 0.5f + cast<f32>(cast<i32>(row_index<128, 256>(m)) % 5 + z * 7), z, m, n);
  }
}

// 27. One shared weight w [N, K] for every batch, an outer product of a per-batch row scale and a column scale:
// y[z, m, n] = bf16(acc * rs[z, m, 0] * cs[n, 0]), rs f32 [Z, M, 1], cs f32 [N, 1] read transposed as a row.
PK_KERNEL void e28_bmm_shared_outer(Tensor<bf16, 3> a, Tensor<bf16, 2> w, Tensor<f32, 3> rs, Tensor<f32, 2> cs,
                                    Tensor<bf16, 3> y) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), w.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc * (load<128, 1>(rs, z, m, 0) * transpose(load<256, 1>(cs, n, 0)))), z, m, n);
  }
}

// 28. y[z, m, n] = f16(gelu_erf(acc + r[z, m, n]) + bias[n]): r bf16 [Z, M, N], bias f32 [N].
PK_KERNEL void e28_bmm_resid_gelu_erf(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> r, Tensor<f32, 1> bias,
                                      Tensor<f16, 3> y) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(y, cast<f16>(gelu_erf(acc + cast<f32>(load<128, 256>(r, z, m, n))) + load<1, 256>(bias, n)), z, m, n);
  }
}

// ---------------------------------------------------------------------------------------------------------
// GEMMs with a trailing LoRA product: acc = x w^T + u lb^T (or x w + u lb).

// 29. y[m, n] = bf16(col <= row ? acc * rs[m, 0] + bias[n] : 0): x [M, K], w [N, K], u [M, 32], lb [N, 32] bf16,
// rs f32 [M, 1], bias f32 [N].
PK_KERNEL void e28_lora_causal_rowscale(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> u, Tensor<bf16, 2> lb,
                                        Tensor<f32, 2> rs, Tensor<f32, 1> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    acc = mma_t(load<128, 32>(u, m, 0), load<256, 32>(lb, n, 0), acc);
    auto t = acc * load<128, 1>(rs, m, 0) + load<1, 256>(bias, n);
    store(y, cast<bf16>(where(col_index<128, 256>(n) <= row_index<128, 256>(m), t, 0.0f)), m, n);
  }
}

// 30. f16, B [K, N] for both products: y[m, n] = f16(tanh(acc * rs[m] * cs[n]) + res[m, n]), x [M, K], w [K, N],
// u [M, 64], lb [64, N] f16, rs f32 [M], cs f32 [1, N], res f16 [M, N].
PK_KERNEL void e28_lora_kn_outer_tanh(Tensor<f16, 2> x, Tensor<f16, 2> w, Tensor<f16, 2> u, Tensor<f16, 2> lb,
                                      Tensor<f32, 1> rs, Tensor<f32, 2> cs, Tensor<f16, 2> res, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma(load<128, 64>(x, m, k), load<64, 256>(w, k, n), acc);
    acc = mma(load<128, 64>(u, m, 0), load<64, 256>(lb, 0, n), acc);
    auto t = tanh(acc * load<128, 1>(rs, m) * load<1, 256>(cs, 0, n));
    store(y, cast<f16>(t + cast<f32>(load<128, 256>(res, m, n))), m, n);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Weight-only GEMMs: x bf16 [M, K] times w [N, K] of fp8 e4m3 or i8, each weight cast to bf16.

// 31. y[m, n] = bf16(gelu_erf(acc * ws[n, 0] * xs[m, 0]) + bias[0, n]): w e4m3 [N, K], ws f32 [N, 1] read
// transposed, xs f32 [M, 1], bias bf16 [1, N].
PK_KERNEL void e28_wo_fp8_outer_gelu(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<f32, 2> ws, Tensor<f32, 2> xs,
                                     Tensor<bf16, 2> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    auto t = gelu_erf(acc * transpose(load<256, 1>(ws, n, 0)) * load<128, 1>(xs, m, 0));
    store(y, cast<bf16>(t + cast<f32>(load<1, 256>(bias, 0, n))), m, n);
  }
}

// 32. y[m, n] = bf16((row * N + col) % 3 != 0 ? acc * ws[n] : 0) with i32 arithmetic (N = w.rows()):
// w i8 [N, K], ws f32 [N].
PK_KERNEL void e28_wo_i8_hash_mask(Tensor<bf16, 2> x, Tensor<i8, 2> w, Tensor<f32, 1> ws, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    auto h = cast<i32>(row_index<128, 256>(m)) * w.rows() + cast<i32>(col_index<128, 256>(n));
    store(y, cast<bf16>(where((h % 3) != 0, acc * load<1, 256>(ws, n), 0.0f)), m, n);
  }
}

// ---------------------------------------------------------------------------------------------------------
// GEMMs that feed a collective (every rank holds its own A and B: its slice of K).

// 33. GEMM + all-reduce: p[m, n] = bf16(acc * rs[m, 0] + cs[n]) on each rank (rs f32 [M, 1], cs f32 [N], each
// rank's own), then c = the sum over ranks of p.
PK_KERNEL void e28_gemm_ar_epilogue(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rs, Tensor<f32, 1> cs,
                                    Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc * load<128, 1>(rs, m, 0) + load<1, 256>(cs, n)), m, n);
  }
  all_reduce(Sum, p, c);
}

// 34. All-gather + GEMM: a_full = the ranks' a [R, K] stacked (rank r's rows at r * R), then
// c[m, n] = bf16(col <= row ? acc * rs[m, 0] + cs[n] : 0) over a_full's rows (row counts in a_full).
PK_KERNEL void e28_ag_gemm_causal(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<f32, 2> rs,
                                  Tensor<f32, 1> cs, Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a_full.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a_full.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a_full, m, k), load_smem<256, 64>(b, n, k), acc);
    auto t = acc * load<128, 1>(rs, m, 0) + load<1, 256>(cs, n);
    store(c, cast<bf16>(where(col_index<128, 256>(n) <= row_index<128, 256>(m), t, 0.0f)), m, n);
  }
}

// 35. GEMM + reduce-scatter (collective form), B [K, N]: p[m, n] = bf16(silu(acc) * cs[0, n]) on each rank
// (cs f32 [1, N]), then rank r holds rows [r M / W, (r + 1) M / W) of the sum over ranks of p.
PK_KERNEL void e28_gemm_rs_silu(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> cs, Scratch<bf16, 2> p,
                                Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load_smem<128, 64>(a, m, k), load_smem<64, 256>(b, k, n), acc);
    store(p, cast<bf16>(silu(acc) * load<1, 256>(cs, 0, n)), m, n);
  }
  reduce_scatter(Sum, p, c);
}

// 36. GEMM + reduce-scatter (owner form): c is zeroed, then each rank adds into owner o's rows m .. the tile
// bf16(acc * rs[m, 0] + bias[n]) of A's rows o * R + m (R = a.rows() / W; rs f32 [R, 1] indexed by the row
// inside the owner, bias f32 [N]); c on rank r = the sum over ranks of those tiles (each a bf16, added in bf16).
PK_KERNEL void e28_gemm_rs_owner_rows(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rs, Tensor<f32, 1> bias,
                                      Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256})) store(c, zeros<bf16, 64, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, o * rows + m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc * load<128, 1>(rs, m, 0) + load<1, 256>(bias, n)), m, n);
  }
}

// Set 36: routes and performance cliffs. Kernels a user writes from docs/language.md expecting
// the Hopper GEMM / attention templates (or, for a few, expecting the general path), in natural
// variations. Each comment: what it computes, and the route the docs lead a user to expect.
#include <pk/spec.h>
using namespace pk;

// ---------------------------------------------------------------- plain GEMMs

// k01: C = gelu(A B^T + bias[n]) bf16, bias a [1, N] row. Expect: GEMM template, epilogue.
PK_KERNEL void k01(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(gelu(acc + cast<f32>(load<1, 256>(bias, 0, n)))), m, n);
  }
}

// k02: C = A B + R, f16 in and out, B stored [K, N], 128 x 128 x 32 tiles. Expect: template (retiled).
PK_KERNEL void k02(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f16, 2> r, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<128, 32>(a, m, k), load<32, 128>(b, k, n), acc);
    store(c, cast<f16>(acc + cast<f32>(load<128, 128>(r, m, n))), m, n);
  }
}

// k03: C = alpha * A B^T in f32 (no cast). Expect: template, f32 output.
PK_KERNEL void k03(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc * alpha, m, n);
  }
}

// k04: fp8 e4m3 x e4m3, per-row scale sa [M] and per-column scale sb [N], bf16 out. Expect: template (fp8 wgmma).
PK_KERNEL void k04(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 1> sa, Tensor<f32, 1> sb, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 128)) acc = mma_t(load<128, 128>(a, m, k), load<256, 128>(b, n, k), acc);
    store(c, cast<bf16>(acc * load<128, 1>(sa, m) * load<1, 256>(sb, n)), m, n);
  }
}

// k05: W8A8: i8 x i8 into i32, dequantised by row and column scales to bf16. Expect: template (s8 wgmma).
PK_KERNEL void k05(Tensor<i8, 2> a, Tensor<i8, 2> b, Tensor<f32, 2> sa, Tensor<f32, 2> sb, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, a.cols(), 128)) acc = mma_t(load<128, 128>(a, m, k), load<256, 128>(b, n, k), acc);
    store(c, cast<bf16>(cast<f32>(acc) * load<128, 1>(sa, m, 0) * load<1, 256>(sb, 0, n)), m, n);
  }
}

// k06: weight-only fp8: x (bf16) times cast<bf16>(w8) with a per-output-channel scale [N, 1] read transposed. Expect: template (widened B).
PK_KERNEL void k06(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<f32, 2> ws, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64))
      acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc * transpose(load<256, 1>(ws, n, 0))), m, n);
  }
}

// k07: plain A B^T, the tile loop written over the OUTPUT's extents tiles(c.rows(), c.cols()). Expect: template (same product).
PK_KERNEL void k07(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k08: A B^T with the K loop bounded by B's columns (range(0, b.cols(), 64)). Expect: template.
PK_KERNEL void k08(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, b.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k09: A B^T with extents named as locals (index M = a.rows(), K = a.cols(), N = b.rows()). Expect: template.
PK_KERNEL void k09(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  index M = a.rows(), N = b.rows(), K = a.cols();
  for (auto [m, n] : tiles(M, N, {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, K, 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k10: A B^T with the K loop counting blocks (range(0, a.cols() / 64), load at kb * 64). Expect: template (same K steps) - or a reason.
PK_KERNEL void k10(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto kb : range(0, (a.cols() + 63) / 64))
      acc = mma_t(load<128, 64>(a, m, kb * 64), load<256, 64>(b, n, kb * 64), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k11: A B^T with the loop variables renamed (row, col, kk) and the accumulator named sum. Expect: template.
PK_KERNEL void k11(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> y) {
  for (auto [row, col] : tiles(x.rows(), w.rows(), {64, 128})) {
    auto sum = zeros<f32, 64, 128>();
    for (auto kk : range(0, x.cols(), 64)) sum = mma_t(load<64, 64>(x, row, kk), load<128, 64>(w, col, kk), sum);
    store(y, cast<bf16>(sum), row, col);
  }
}

// k12: A B^T with the tile loop's dimensions swapped (column tiles outer: tiles(b.rows(), a.rows()), [n, m]). Expect: template.
PK_KERNEL void k12(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [n, m] : tiles(b.rows(), a.rows(), {256, 128})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k13: C = C0 + A B^T with the accumulator started from C0 (acc = cast<f32>(load(c0, m, n))). Expect: template (as a residual) - or a reason with the rewrite.
PK_KERNEL void k13(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c0, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = cast<f32>(load<128, 256>(c0, m, n));
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k14: C = A B^T + bias with the bias folded into the starting accumulator (zeros + bias row). Expect: template - or a reason.
PK_KERNEL void k14(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>() + load<1, 256>(bias, 0, n);
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k15: dW = dY^T X (A stored [K, M], read transposed), f16 in, f32 out, times a float. Expect: template (A transposed).
PK_KERNEL void k15(Tensor<f16, 2> dy, Tensor<f16, 2> x, Tensor<f32, 2> dw, float lr) {
  for (auto [m, n] : tiles(dy.cols(), x.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, dy.rows(), 64)) acc = mma(transpose(load<64, 128>(dy, k, m)), load<64, 128>(x, k, n), acc);
    store(dw, acc * lr, m, n);
  }
}

// k16: A B^T written as mma(a, transpose(load(b, n, k))) instead of mma_t. Expect: template (B [N, K]).
PK_KERNEL void k16(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), transpose(load<128, 64>(b, n, k)), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// ---------------------------------------------------------------- batched GEMMs

// k17: batched C[z] = s[z] * A[z] B[z]^T (3-D), bf16. Expect: template, batched.
PK_KERNEL void k17(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 1> s, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc * s.at(z)), z, m, n);
  }
}

// k18: batched A[z] B[z]^T with the loop over the output's extents tiles(c.dim(0), c.dim(1), c.dim(2)). Expect: template.
PK_KERNEL void k18(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(c.dim(0), c.dim(1), c.dim(2), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc), z, m, n);
  }
}

// k19: batched A[z] times one shared weight W [K, N] (mma), plus a bias row [1, N]. Expect: template, shared B.
PK_KERNEL void k19(Tensor<bf16, 3> a, Tensor<bf16, 2> w, Tensor<bf16, 2> bias, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), w.cols(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma(load<128, 64>(a, z, m, k), load<64, 256>(w, k, n), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<1, 256>(bias, 0, n))), z, m, n);
  }
}

// k20: batched scores with a causal mask by row / column index inside the batch: where(col <= row, acc*scale, -1e4). Expect: template, batched.
PK_KERNEL void k20(Tensor<bf16, 3> q, Tensor<bf16, 3> kk, Tensor<f32, 3> s, float scale) {
  for (auto [z, m, n] : tiles(q.dim(0), q.dim(1), kk.dim(1), {1, 128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, q.dim(2), 64)) acc = mma_t(load<128, 64>(q, z, m, k), load<128, 64>(kk, z, n, k), acc);
    store(s, where(col_index<128, 128>(n) <= row_index<128, 128>(m), acc * scale, -1e4f), z, m, n);
  }
}

// ---------------------------------------------------------------- epilogues

// k21: vocab mask where(col < vocab, acc, -1e4) into f32 logits; vocab an index argument. Expect: template.
PK_KERNEL void k21(Tensor<bf16, 2> h, Tensor<bf16, 2> emb, Tensor<f32, 2> logits, index vocab) {
  for (auto [m, n] : tiles(h.rows(), emb.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, h.cols(), 64)) acc = mma_t(load<128, 64>(h, m, k), load<256, 64>(emb, n, k), acc);
    store(logits, where(col_index<128, 256>(n) < vocab, acc, -1e4f), m, n);
  }
}

// k22: double rounding kept: cast<bf16>(cast<f32>(cast<bf16>(acc)) * 2 + 1) . Expect: template, both roundings.
PK_KERNEL void k22(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto r = cast<bf16>(acc);
    store(c, cast<bf16>(cast<f32>(r) * 2.0f + 1.0f), m, n);
  }
}

// k23: silu(acc) * up-projection residual, rows past `valid` zeroed by row_index. Expect: template.
PK_KERNEL void k23(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> up, Tensor<bf16, 2> c, index valid) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto g = silu(acc) * cast<f32>(load<128, 256>(up, m, n));
    store(c, cast<bf16>(where(row_index<128, 256>(m) < valid, g, 0.0f)), m, n);
  }
}

// k24: MUST NOT take the template: the epilogue normalises each row by its row sum (reads the whole tile).
PK_KERNEL void k24(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc / row_sum(acc)), m, n);
  }
}

// k25: MUST NOT take the template: the epilogue stores the transposed accumulator of a square tile.
PK_KERNEL void k25(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, cast<bf16>(transpose(acc)), m, n);
  }
}

// k26: MUST NOT take the template: K loop with a data-dependent trip (kmax read from memory).
PK_KERNEL void k26(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<i32, 1> kmax, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, kmax.at(0), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k27: MUST NOT take the template: X X^T symmetrised in the epilogue, (acc + transpose(acc)) / 2 (reads the mirrored element).
PK_KERNEL void k27(Tensor<bf16, 2> x, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(x.rows(), x.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<128, 64>(x, n, k), acc);
    store(c, cast<bf16>((acc + transpose(acc)) * 0.5f), m, n);
  }
}

// k28: symmetric scaling diag(s) A B^T diag(s) with one 1-D s [N] read as a column AND a row (square problem). Expect: template.
PK_KERNEL void k28(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> s, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * load<128, 1>(s, m) * load<1, 256>(s, n)), m, n);
  }
}

// k29: dW = dY^T X with a per-row (output-row = dY column) scale column [M, 1] and a bias row. Expect: template (A transposed) + epilogue.
PK_KERNEL void k29(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 2> rs, Tensor<f32, 2> cb, Tensor<bf16, 2> dw) {
  for (auto [m, n] : tiles(dy.cols(), x.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.rows(), 64)) acc = mma(transpose(load<64, 128>(dy, k, m)), load<64, 256>(x, k, n), acc);
    store(dw, cast<bf16>(acc * load<128, 1>(rs, m, 0) + load<1, 256>(cb, 0, n)), m, n);
  }
}

// k30: dropout in the epilogue: where(uniform(seed, m, n) >= p, acc / (1 - p), 0). Expect: template.
PK_KERNEL void k30(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index seed, float p) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(where(uniform<128, 256>(seed, m, n) >= p, acc / (1.0f - p), 0.0f)), m, n);
  }
}

// k31: GEMM with an fp8 output (quantised activations): cast<f8e4m3>(acc * inv_scale). Expect: general path (documented).
PK_KERNEL void k31(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f8e4m3, 2> c, float inv_scale) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<f8e4m3>(acc * inv_scale), m, n);
  }
}

// k32: bias in the epilogue read from a 3-D per-layer tensor at a fixed layer l (bias3[l, 0, n]). Expect: template.
PK_KERNEL void k32(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 3> bias3, Tensor<bf16, 2> c, index l) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<1, 256>(bias3, l, 0, n))), m, n);
  }
}

// ---------------------------------------------------------------- multi-rank

// k33: AG + GEMM with B stored [K, N] (mma). Expect: fused ag_gemm.
PK_KERNEL void k33(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a_full.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a_full.cols(), 64)) acc = mma(load_smem<128, 64>(a_full, m, k), load_smem<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k34: GEMM + RS, owner form, A B (mma, B [K, N]), zero fill first. Expect: fused gemm_rs.
PK_KERNEL void k34(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256})) store(c, zeros<bf16, 64, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.cols(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load_smem<128, 64>(a, o * rows + m, k), load_smem<64, 256>(b, k, n), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}

// k35: GEMM + RS over A's rows (store_add(c.on(m / rows), .., m % rows, n)), zero fill first. Expect: fused gemm_rs (rows % 128 == 0) / twin.
PK_KERNEL void k35(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {128, 256})) store(c, zeros<bf16, 128, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(m / rows), cast<bf16>(acc), m % rows, n);
  }
}

// k36: GEMM + AR with B [K, N] (mma) into a Scratch, all_reduce into Sym. Expect: fused gemm_ar.
PK_KERNEL void k36(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k, n), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}

// k37: GEMM + AR written with the plain template's 64 x 256 tiles (any tile shape retiles for the plain GEMM). Expect: fused gemm_ar? (docs: fused takes 128x256x64 only).
PK_KERNEL void k37(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}

// k38: GEMM whose tiles are pushed into the next rank's copy (store(c.on(next_rank()), ..)). Expect: general path (a store into a peer has no template).
PK_KERNEL void k38(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c.on(next_rank()), cast<bf16>(acc), m, n);
  }
}

// k39: AG + GEMM where the loop bounds are written as the gathered size a.rows() * world_size(). Expect: fused ag_gemm.
PK_KERNEL void k39(Sym<bf16, 2> a, Scratch<bf16, 2> a_full, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  all_gather(a, a_full);
  for (auto [m, n] : tiles(a.rows() * world_size(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a_full, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// ---------------------------------------------------------------- attention

// k40: [S, D] d64 non-causal, scale written on the left (scale * mma_t), mask fill -1e9, no lse. Expect: attention template.
PK_KERNEL void k40(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = scale * mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>());
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e9f);
      auto mnew = max(row_max(s), mx);
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = corr * l + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), corr * acc);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// k41: causal d128 with row >= col as nested wheres and && of the two masks, lse = log(l) + mx. Expect: attention template, causal.
PK_KERNEL void k41(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, Tensor<f32, 2> lse, float scale) {
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

// k42: causal d64 with the key loop bounded by min(m + 64, k.rows()) (stop at the end of the keys too). Expect: attention template, causal.
PK_KERNEL void k42(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
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

// k43: causal d64 with the key loop over ALL keys (range(0, k.rows(), 64)) and the causal mask doing the work. Expect: attention template, causal.
PK_KERNEL void k43(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(min(col_index<64, 64>(n) <= row_index<64, 64>(m), col_index<64, 64>(n) < k.rows()), s, -1e30f);
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

// k44: the scale applied after the mask (where(mask, qk, -1e30) * scale). Expect: attention template (scale positive) - or a reason.
PK_KERNEL void k44(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = where(col_index<64, 64>(n) < k.rows(), mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()), -1e30f) * scale;
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

// k45: GQA [H, S, D] d128 causal with G from the sizes, kv head as a local, lse [H, S, 1]. Expect: attention template, GQA.
PK_KERNEL void k45(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index g = q.dim(0) / k.dim(0);
    index kh = h / g;
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, kh, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.dim(1)), s, -1e30f);
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

// k46: GQA with the K/V head written h * k.dim(0) / q.dim(0) (the same integer as h / (q.dim(0) / k.dim(0)) when divisible). Expect: attention template - or a reason.
PK_KERNEL void k46(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    index kh = h * k.dim(0) / q.dim(0);
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, kh, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, kh, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// k47: f16 d128 heads, 128-row query tiles and 128-key steps, lse [H, S, 1]. Expect: attention template, f16.
PK_KERNEL void k47(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o, Tensor<f32, 3> lse, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 128})) {
    auto qt = load<128, 128>(q, h, m, 0);
    auto mx = zeros<f32, 128, 1>() - 1e30f;
    auto l = zeros<f32, 128, 1>();
    auto acc = zeros<f32, 128, 128>();
    for (auto n : range(0, k.dim(1), 128)) {
      auto s = mma_t(qt, load<128, 128>(k, h, n, 0), zeros<f32, 128, 128>()) * scale;
      s = where(col_index<128, 128>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<128, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// k48: decode-style causal with a KV-cache offset: key j visible to query i iff j <= i + (k.rows() - q.rows()). Expect: attention template (score map).
PK_KERNEL void k48(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) <= row_index<64, 64>(m) + (k.rows() - q.rows())) * (col_index<64, 64>(n) < k.rows()), s, -1e30f);
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

// k49: the final normalisation written acc * (1 / l) instead of acc / l. Expect: attention template - or a reason.
PK_KERNEL void k49(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
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
    store(o, cast<bf16>(acc * (1.0f / l)), m, 0);
  }
}

// k50: strict causal (col < row: a query does not see itself, e.g. a "previous tokens only" mask), loop to m + 64. Expect: template (score map) - or a reason.
PK_KERNEL void k50(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < row_index<64, 64>(m)) * (col_index<64, 64>(n) < k.rows()), s, -1e30f);
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

// k51: the online softmax with the max update written where(row_max(s) > mx, row_max(s), mx) instead of max(). Expect: template - or a reason.
PK_KERNEL void k51(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto rm = row_max(s);
      auto mnew = where(rm > mx, rm, mx);
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// k52: scale from a constant 0.125f (1/sqrt(64)) and the mask fill the lowest float. Expect: attention template, constant scale.
PK_KERNEL void k52(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 3.4e38f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * 0.125f;
      s = where(col_index<64, 64>(n) < k.rows(), s, -3.4e38f);
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

// k53: scale computed as rsqrt(float(q.cols())) inside the kernel (the head dim read from the tensor). Expect: attention template (score map or scale).
PK_KERNEL void k53(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o) {
  float scale = rsqrt(float(q.cols()));
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

// k54: the mask's key bound written col < v.rows() (k and v have one length). Expect: template - or a reason.
PK_KERNEL void k54(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, v.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < v.rows(), s, -1e30f);
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

// k55: bf16 A B^T with every extent written through dim(): tiles(a.dim(0), b.dim(0)), range(0, a.dim(1), 64). Expect: template.
PK_KERNEL void k55(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.dim(0), b.dim(0), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(1), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k56: A B^T whose epilogue reads a residual stored transposed (transpose(load<256, 128>(rt, n, m))) plus a clamp. Expect: template.
PK_KERNEL void k56(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> rt, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(min(max(acc + cast<f32>(transpose(load<256, 128>(rt, n, m))), -8.0f), 8.0f)), m, n);
  }
}

// ---------------------------------------------------------------- more variations

// k57: d64 attention with the scale computed in the kernel, rsqrt(float(q.cols())). Expect: attention template (192-row blocks at d64, as with a scale argument).
PK_KERNEL void k57(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o) {
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

// k58: in-place C += A B^T: the epilogue reads c at the output tile and the tile is stored back into c. Expect: template.
PK_KERNEL void k58(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<128, 256>(c, m, n))), m, n);
  }
}

// k59: f16 operands, bf16 output. Expect: template.
PK_KERNEL void k59(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k60: batched A[z] B[z]^T + R[z] (3-D residual), rows of each batch past `len` zeroed. Expect: template, batched.
PK_KERNEL void k60(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> r, Tensor<bf16, 3> c, index len) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    auto y = acc + cast<f32>(load<128, 256>(r, z, m, n));
    store(c, cast<bf16>(where(row_index<128, 256>(m) < len, y, 0.0f)), z, m, n);
  }
}

// k61: GEMM + RS owner form with 64 x 256 tiles (the plain template retiles any shape). Expect: fused gemm_rs? (docs: fused takes 128x256x64).
PK_KERNEL void k61(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), c.cols(), {64, 256})) store(c, zeros<bf16, 64, 256>(), m, n);
  index rows = a.rows() / world_size();
  for (auto [o, m, n] : tiles(world_size(), rows, b.rows(), {1, 64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, o * rows + m, k), load<256, 64>(b, n, k), acc);
    store_add(c.on(o), cast<bf16>(acc), m, n);
  }
}

// k62: A B (mma, B [K, N]) with the K loop bounded by b.rows(). Expect: template.
PK_KERNEL void k62(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, b.rows(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k63: K loop unrolled by hand: step 128, two products per trip (k and k + 64). Expect: template (same sum) - or a reason.
PK_KERNEL void k63(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 128)) {
      acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
      acc = mma_t(load<128, 64>(a, m, k + 64), load<256, 64>(b, n, k + 64), acc);
    }
    store(c, cast<bf16>(acc), m, n);
  }
}

// k64: K loop written acc = acc + mma_t(a, b, zeros) (the sum of per-step products). Expect: template - or a reason.
PK_KERNEL void k64(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = acc + mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), zeros<f32, 128, 256>());
    store(c, cast<bf16>(acc), m, n);
  }
}

// k65: online softmax with the output update written acc * corr + mma(p, v, 0) (FlashAttention paper's algebra). Expect: attention template - or a reason.
PK_KERNEL void k65(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
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

// k66: scale folded into q before the product (mma_t(cast<bf16>(q * scale), k)). Expect: general path with a message saying to scale the scores.
PK_KERNEL void k66(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = cast<bf16>(cast<f32>(load<64, 64>(q, m, 0)) * scale);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>());
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

// k67: two independent GEMMs in one kernel (gate and up projections of one x). Expect: each loop on the GEMM template (two launches).
PK_KERNEL void k67(Tensor<bf16, 2> x, Tensor<bf16, 2> w1, Tensor<bf16, 2> w3, Tensor<bf16, 2> g, Tensor<bf16, 2> u) {
  for (auto [m, n] : tiles(x.rows(), w1.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w1, n, k), acc);
    store(g, cast<bf16>(silu(acc)), m, n);
  }
  for (auto [m, n] : tiles(x.rows(), w3.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w3, n, k), acc);
    store(u, cast<bf16>(acc), m, n);
  }
}

// k68: GEMM, then a dependent element-wise loop reading its output (h = x W^T, y = h * silu(h)). Expect: GEMM template launch + general launch.
PK_KERNEL void k68(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> h, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(h, cast<bf16>(acc), m, n);
  }
  for (auto [m, n] : tiles(h.rows(), h.cols(), {16, 256})) {
    auto t = cast<f32>(load<16, 256>(h, m, n));
    store(y, cast<bf16>(t * silu(t)), m, n);
  }
}

// k69: SwiGLU with both projections in one K loop (two accumulators), silu(acc1) * acc3 stored. Expect (docs: one accumulator): general path, with that reason.
PK_KERNEL void k69(Tensor<bf16, 2> x, Tensor<bf16, 2> w1, Tensor<bf16, 2> w3, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w1.rows(), {128, 128})) {
    auto a1 = zeros<f32, 128, 128>();
    auto a3 = zeros<f32, 128, 128>();
    for (auto k : range(0, x.cols(), 64)) {
      auto xt = load<128, 64>(x, m, k);
      a1 = mma_t(xt, load<128, 64>(w1, n, k), a1);
      a3 = mma_t(xt, load<128, 64>(w3, n, k), a3);
    }
    store(y, cast<bf16>(silu(a1) * a3), m, n);
  }
}

// k70: causal attention d64 over heads where the causal mask uses an i32 comparison (cast<i32>(col) <= cast<i32>(row)). Expect: attention template, causal.
PK_KERNEL void k70(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
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

// k71: heads attention where the key bound is written k.rows() (for [H, S, D] that is H: a user bug). Expect: general path (as written) with a message naming k.dim(1).
PK_KERNEL void k71(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
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

// k72: d64 attention with a constant scale written as an expression, 1.0f / 8.0f. Expect: attention template, 192-row blocks.
PK_KERNEL void k72(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float temp) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * (0.125f / temp);
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

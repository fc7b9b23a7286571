// The thirty-fourth user-written spec set: the kernels of test/specs/user_specs34_probes.pk.cpp that compile
// cleanly (the refused probes and the ones that exist to show a warning left out), renamed b34_*, each with a
// comment saying exactly what it computes (test/gpu/user_specs34_jit_test.cu's float64 references are written
// from these comments). Host loops of launches (hand-written ring all-gathers and reduce-scatters, trip-dependent
// peers, nested host loops around an all-reduce, trips used as scalars and in GEMM epilogues, GEMMs inside host
// loops), GEMMs in unusual combinations (f16 / bf16, A·B and A·Bᵀ, f32 / f16 / bf16 out, shifted operands,
// partial K ranges, epilogues, batched, a fused reduce-scatter, output pushed to a peer), N-D index arithmetic and
// scalar reads. W is world_size(), r is rank(); "x_q" is rank q's copy or input. Partial tiles clip at tensor
// edges: loads read 0 outside the tensor they read, stores drop what falls outside the tensor they write.
// Findings: test/specs/specs34_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================ host loops ==

// From k01. Hand ring all-gather into y [W, R, C] (x [R, C] local): y[r] = x_r, then a host loop of
// W - 1 trips s: push own y[b], b = (r - s) mod W, into next_rank()'s y[b]. Result on every rank: y[q] = x_q
// for every q (W = 1: y[0] = x).
PK_KERNEL void b34_ring_ag_3d(Tensor<f32, 2> x, Sym<f32, 3> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), rank(), m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    index b = (rank() - s + world_size()) % world_size();
    for (auto [m, n] : tiles(y.dim(1), y.dim(2), {16, 64}))
      store(y.on(next_rank()), load<16, 64>(y, b, m, n), b, m, n);
  }
}

// From k03. The same ring on a 2-D y [W Rp, C] with blocks a whole number of 16-row tiles apart,
// Rp = ceil(R / 16) * 16: result on every rank: y[q Rp + i] = x_q[i] for i < R, and 0 for R <= i < Rp (the last
// tile's padding rows, stored inside the block and passed on).
PK_KERNEL void b34_ring_ag_padded(Tensor<f32, 2> x, Sym<f32, 2> y) {
  index Rp = (x.rows() + 15) / 16 * 16;
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), rank() * Rp + m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    index b = (rank() - s + world_size()) % world_size();
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(y.on(next_rank()), load<16, 64>(y, b * Rp + m, n), b * Rp + m, n);
  }
}

// From k04. Ring reduce-scatter by hand, without the final own add: acc [W, R, C] Sym zeroed, then
// trips s = 0 .. W - 2: c = (r - s - 1) mod W, next_rank()'s acc[c] = own acc[c] + x_r[c] (x [W, R, C] local).
// Result: acc_r[c] = sum of x_p[c] over p = c + 1, c + 2, ..., r - 1 (mod W), empty (0) for c = r - 1 mod W; so
// acc_r[r] is the sum over p != r of x_p[r]. At W = 1 every chunk stays 0.
PK_KERNEL void b34_ring_rs_3d(Tensor<f32, 3> x, Sym<f32, 3> acc) {
  for (auto [c, m, n] : tiles(acc.dim(0), acc.dim(1), acc.dim(2), {1, 16, 64}))
    store(acc, zeros<f32, 16, 64>(), c, m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    index c = (rank() - s - 1 + 2 * world_size()) % world_size();
    for (auto [m, n] : tiles(acc.dim(1), acc.dim(2), {16, 64}))
      store(acc.on(next_rank()), load<16, 64>(acc, c, m, n) + load<16, 64>(x, c, m, n), c, m, n);
  }
}

// From k05. Nested host loops: for l < layers: for t < W - 1: y on rank (r + t + 1) mod W gets
// 0.5 x_r (x before this trip's update), then x_r += y_r; after the inner loop z = sum over ranks of x (all_reduce)
// and x = z + l on every rank. Outputs x, z (the last layer's sum) and y (the last inner trip's; untouched at
// W = 1).
PK_KERNEL void b34_nested_ring_allreduce(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z, index layers) {
  for (auto l : range(0, layers, 1)) {
    for (auto t : range(0, world_size() - 1, 1)) {
      for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
        store(y.on((rank() + t + 1) % world_size()), load<16, 64>(x, m, n) * 0.5f, m, n);
      for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
        store(x, load<16, 64>(x, m, n) + load<16, 64>(y, m, n), m, n);
    }
    all_reduce(Sum, x, z);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(x, load<16, 64>(z, m, n) + zeros<f32, 16, 64>() + l, m, n);
  }
}

// From k07. Host loop s = 0, 2, 4, ... < steps: y = sum over ranks of x (all_reduce), then
// x = y + s * 0.5 (1-D, 256-element tiles).
PK_KERNEL void b34_step2_allreduce(Sym<f32, 1> x, Sym<f32, 1> y, index steps) {
  for (auto s : range(0, steps, 2)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(x.dim(0), {256})) store(x, load<256>(y, i) + float(s) * 0.5f, i);
  }
}

// From k12. Layer stack with a 3-D weight w [L, K, N], K = N (x [M, K], h [M, N] bf16):
// for l < layers: h = bf16(x · w[l]) (A·B, f32 accumulation), then x = relu(h) (bf16, exact).
PK_KERNEL void b34_mlp_stack_3d_weight(Tensor<bf16, 2> x, Tensor<bf16, 3> w, Tensor<bf16, 2> h, index layers) {
  for (auto l : range(0, layers, 1)) {
    for (auto [m, n] : tiles(x.rows(), w.dim(2), {128, 256})) {
      auto acc = zeros<f32, 128, 256>();
      for (auto k : range(0, x.cols(), 64)) acc = mma(load<128, 64>(x, m, k), load<64, 256>(w, l, k, n), acc);
      store(h, cast<bf16>(acc), m, n);
    }
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
      store(x, cast<bf16>(max(cast<f32>(load<16, 256>(h, m, n)), 0.0f)), m, n);
  }
}

// From k13. Tensor-parallel layer stack, N = K (x [M, K], w [N, K] local, p Scratch [M, N],
// y Sym [M, N], bf16): for s < steps: p = bf16(x_r · w_rᵀ), y = bf16(sum over ranks of p) (all_reduce), then
// x_r = bf16(x_r + y).
PK_KERNEL void b34_tp_mlp_stack(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Scratch<bf16, 2> p, Sym<bf16, 2> y, index steps) {
  for (auto s : range(0, steps, 1)) {
    for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
      auto acc = zeros<f32, 128, 256>();
      for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
      store(p, cast<bf16>(acc), m, n);
    }
    all_reduce(Sum, p, y);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
      store(x, cast<bf16>(cast<f32>(load<16, 256>(x, m, n)) + cast<f32>(load<16, 256>(y, m, n))), m, n);
  }
}

// From k43. Host loop over layers: y = sum over ranks of x (all_reduce), then x = y * g[l]
// (g [L] f32 read at the trip).
PK_KERNEL void b34_trip_scalar_allreduce(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> g, index layers) {
  for (auto l : range(0, layers, 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(x.dim(0), {256})) store(x, load<256>(y, i) * g.at(l), i);
  }
}

// From k45. Host loop over layers: xr = bf16(sum over ranks of x) (all_reduce; x itself never
// changes), then c = bf16((xr · wᵀ) * g[l] + bias2[l, n] + l) (w [N, K] bf16, g [L], bias2 [L, N] f32). Only
// the last layer's c remains: l = layers - 1.
PK_KERNEL void b34_trip_epilogue_gemm(Sym<bf16, 2> x, Sym<bf16, 2> xr, Tensor<bf16, 2> w, Tensor<f32, 1> g, Tensor<f32, 2> bias2,
                   Tensor<bf16, 2> c, index layers) {
  for (auto l : range(0, layers, 1)) {
    all_reduce(Sum, x, xr);
    for (auto [m, n] : tiles(xr.rows(), w.rows(), {128, 256})) {
      auto acc = zeros<f32, 128, 256>();
      for (auto k : range(0, xr.cols(), 64)) acc = mma_t(load<128, 64>(xr, m, k), load<256, 64>(w, n, k), acc);
      store(c, cast<bf16>(acc * g.at(l) + load<1, 256>(bias2, l, n) + float(l)), m, n);
    }
  }
}

// From k52. Local Jacobi (1-D f32, no communication): steps times, y[i] = (x[i - 1] + x[i + 1]) * 0.5
// with x read as 0 outside [0, N), then x = y.
PK_KERNEL void b34_jacobi_local(Tensor<f32, 1> x, Tensor<f32, 1> y, index steps) {
  for (auto s : range(0, steps, 1)) {
    for (auto i : tiles(x.size(), {256})) store(y, (load<256>(x, i - 1) + load<256>(x, i + 1)) * 0.5f, i);
    for (auto i : tiles(x.size(), {256})) store(x, load<256>(y, i), i);
  }
}

// From k53. Host loop s < steps: y = sum over ranks of x (all_reduce), then for j = 0 .. 3 the
// column block [64 j, 64 j + 64) of x = y * (j + s) (columns from 256 on keep x_r's own values; clipped at C).
PK_KERNEL void b34_inner_range_allreduce(Sym<f32, 2> x, Sym<f32, 2> y, index steps) {
  for (auto s : range(0, steps, 1)) {
    all_reduce(Sum, x, y);
    for (auto j : range(0, 4, 1))
      for (auto m : tiles(x.rows(), {16}))
        store(x, load<16, 64>(y, m, j * 64) * float(j + s), m, j * 64);
  }
}

// k54 (ring all-gather GEMM by hand) with its output slots a whole number of 64-row tiles apart
// (k54 itself stores slot cur at cur M + m, where a partial tile's zero rows land on the next slot: findings 1):
// a [W, M, K] Sym bf16 with a_r[r] this rank's rows, b [N, K], c [W Mp, N] local, Mp = ceil(M / 64) * 64. Trips
// s < W: cur = (r - s) mod W; push a[cur] into next_rank()'s a[cur] (not at the last trip); c[cur Mp + i] =
// bf16(a[cur][i] · bᵀ) for i < M and 0 for M <= i < Mp. Result: c[q Mp + i] = bf16(a_q[q][i] · bᵀ) for every q,
// and every slot a[q] on every rank holds a_q[q].
PK_KERNEL void b34_ring_ag_gemm_padded(Sym<bf16, 3> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  index Mp = (a.dim(1) + 63) / 64 * 64;
  for (auto s : range(0, world_size(), 1)) {
    index cur = (rank() - s + world_size()) % world_size();
    for (auto [m, k] : tiles(a.dim(1) * min(world_size() - 1 - s, 1), a.dim(2), {64, 64}))
      store(a.on(next_rank()), load<64, 64>(a, cur, m, k), cur, m, k);
    for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64})) {
      auto acc = zeros<f32, 64, 64>();
      for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<64, 64>(a, cur, m, k), load<64, 64>(b, n, k), acc);
      store(c, cast<bf16>(acc), cur * Mp + m, n);
    }
  }
}

// From k55. out = 0, then host loop s < W: out += x on rank (r + s) mod W (pulled). Result:
// out = sum over ranks of x (f32, [R, C]).
PK_KERNEL void b34_trip_pull_accumulate(Sym<f32, 2> x, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(out, zeros<f32, 16, 64>(), m, n);
  for (auto s : range(0, world_size(), 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(out, load<16, 64>(out, m, n) + load<16, 64>(x.on((rank() + s) % world_size()), m, n), m, n);
}

// ============================================================ GEMMs ==

// From k14. A·B, f16 in (a [M, K], b [K, N]), f32 out: c = (a · b + bias[n]) * scale (bias [N]
// f32).
PK_KERNEL void b34_gemm_f16_bias_scale_f32(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> bias, Tensor<f32, 2> c, float scale) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, (acc + load<1, 128>(bias, n)) * scale, m, n);
  }
}

// From k15. A·Bᵀ bf16 in (a [M, K], b [N, K]), f16 out:
// c = f16(clamp(silu(a · bᵀ) + r, -4, 4)) with r [M, N] f16.
PK_KERNEL void b34_gemm_bt_silu_res_clamp_f16(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f16, 2> r, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), load<128, 32>(b, n, k), acc);
    store(c, cast<f16>(min(max(silu(acc) + cast<f32>(load<64, 128>(r, m, n)), -4.0f), 4.0f)), m, n);
  }
}

// From k16. c = a · bᵀ (bf16 in, f32 out, [M, N], N <= 256), then p = bf16(softmax of each row
// of c over its N columns) (p [M, N]).
PK_KERNEL void b34_gemm_then_softmax(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, Tensor<bf16, 2> p) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
  for (auto m : tiles(c.rows(), {16})) {
    auto t = where(col_index<16, 256>(0) < c.cols(), load<16, 256>(c, m, 0), -1e30f);
    auto e = exp(t - row_max(t));
    store(p, cast<bf16>(e / row_sum(e)), m, 0);
  }
}

// From k17. Batched A·B: a [B, M, K], b [B, K, N] bf16: c[z] = bf16(a[z] · b[z] * s[z] + bias[z, n])
// (s [B], bias [B, N] f32).
PK_KERNEL void b34_bmm_scale_bias(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 1> s, Tensor<f32, 2> bias, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(2), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma(load<128, 64>(a, z, m, k), load<64, 256>(b, z, k, n), acc);
    store(c, cast<bf16>(acc * s.at(z) + load<1, 256>(bias, z, n)), z, m, n);
  }
}

// From k18. Batched A·Wᵀ with one weight w [N, K] for every batch, f16 in and out:
// c[z] = f16(gelu_erf(a[z] · wᵀ)).
PK_KERNEL void b34_bmm_shared_w_gelu_f16(Tensor<f16, 3> a, Tensor<f16, 2> w, Tensor<f16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), w.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(w, n, k), acc);
    store(c, cast<f16>(gelu_erf(acc)), z, m, n);
  }
}

// From k19. c Sym [M, N] on next_rank() gets bf16(a_r · b_rᵀ) (a [M, K], b [N, K] bf16, local);
// so c_r = bf16(a_{r-1} · b_{r-1}ᵀ).
PK_KERNEL void b34_gemm_push_next(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c.on(next_rank()), cast<bf16>(acc), m, n);
  }
}

// From k20. Partial product over K columns [k0, K): c = bf16(sum_{k0 <= q < K} a[m, q] b[n, q]).
PK_KERNEL void b34_gemm_k_from_k0(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index k0) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(k0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k21. K loop range(0, kmax, 64): steps k = 0, 64, ... < kmax, each loading 64 columns
// (clipped at K), so c = bf16(sum over q < min(ceil(kmax / 64) * 64, K) of a[m, q] b[n, q]).
PK_KERNEL void b34_gemm_k_to_kmax(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index kmax) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, kmax, 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k22. A·B with B read 8 rows down: b [K + 8, N], c = bf16(sum_{q < K} a[m, q] b[q + 8, n]).
PK_KERNEL void b34_gemm_b_shift8(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k + 8, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k23. A read 16 rows down: c [Mc, N], a [Ma, K]: c[i] = bf16(a[i + 16] · bᵀ), a row past Ma
// reading 0 (c[i] = 0 there).
PK_KERNEL void b34_gemm_a_shift16(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m + 16, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// From k24. c [M, 2N] (N = b.rows()): c[:, N + j] = bf16(a · bᵀ)[:, j]; columns 0 .. N - 1
// untouched.
PK_KERNEL void b34_gemm_col_offset(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, b.rows() + n);
  }
}

// From k25. In place: c += a · bᵀ (c [M, N] f32, the accumulator started from c's tile).
PK_KERNEL void b34_gemm_acc_from_c(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = load<64, 64>(c, m, n);
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// From k26. c = bf16(a · bᵀ), and ss [M, 1] f32 += sum over the row's N columns of (a · bᵀ)²
// (f32, store_add per 64-column tile: ss is added into, not overwritten).
PK_KERNEL void b34_gemm_row_sumsq(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, Tensor<f32, 2> ss) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
    store_add(ss, row_sum(acc * acc), m, 0);
  }
}

// From k27. dW = dYᵀ X with dY stored [K, M] (f16), X [K, N] (f16), dW [M, N] f32.
PK_KERNEL void b34_dw_f16_f32(Tensor<f16, 2> dy, Tensor<f16, 2> x, Tensor<f32, 2> dw) {
  for (auto [m, n] : tiles(dy.cols(), x.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.rows(), 64)) acc = mma(transpose(load<64, 128>(dy, k, m)), load<64, 256>(x, k, n), acc);
    store(dw, acc, m, n);
  }
}

// From k28. c = bf16(n < vocab ? (a · bᵀ)[m, n] * rs[m] : -1e4) (rs [M] f32, vocab an argument).
PK_KERNEL void b34_gemm_vocab_rowscale(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> rs, Tensor<bf16, 2> c, index vocab) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(where(col_index<128, 256>(n) < vocab, acc * load<128, 1>(rs, m), -1e4f)), m, n);
  }
}

// From k29. c = a · bᵀ + (the row tile's origin: 64 * floor(m / 64)), f32 out (row_index<1, N>
// of the tile's first row, broadcast).
PK_KERNEL void b34_gemm_row_origin(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc + row_index<1, 256>(m), m, n);
  }
}

// From k30. p = bf16(a_r · b_rᵀ) (Scratch [M, N]), c = reduce_scatter(Sum, p) along rows (c Sym
// [M / W, N]: c_r[i] = sum over ranks q of p_q[r M / W + i], bf16), then c = bf16(c + bias[0, n]) (bias [1, N]
// bf16).
PK_KERNEL void b34_gemm_rs_bias(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c, Tensor<bf16, 2> bias) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  reduce_scatter(Sum, p, c);
  for (auto [m, n] : tiles(c.rows(), c.cols(), {16, 256}))
    store(c, load<16, 256>(c, m, n) + load<1, 256>(bias, 0, n), m, n);
}

// From k46. c = bf16(a · bᵀ + r[n, m]) with r stored [N, M] f32 (a transposed residual).
PK_KERNEL void b34_gemm_res_transposed(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> r, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + transpose(load<256, 128>(r, n, m))), m, n);
  }
}

// From k47. c = (m >= n and n even) ? (a · bᵀ)[m, n] : 0 (f32 out).
PK_KERNEL void b34_gemm_causal_parity(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto keep = (row_index<128, 256>(m) >= col_index<128, 256>(n)) && (cast<i32>(col_index<128, 256>(n)) % 2 == 0);
    store(c, where(keep, acc, 0.0f), m, n);
  }
}

// From k48. c = bf16((a · bᵀ)[m, n] * s[m / 64, n / 64]) (s [ceil(M / 64), ceil(N / 64)] f32).
PK_KERNEL void b34_gemm_block_scales(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> s, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * s.at(m / 64, n / 64)), m, n);
  }
}

// From k49. c[m, n] = (a · bᵀ)[m, n] + bias[32 (n / 64) + n % 64] (the 64-column tile at n0 adds
// bias[n0 / 2 ..]; bias [L] f32, read as 0 at L and past), f32 out.
PK_KERNEL void b34_gemm_bias_half(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> bias, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, acc + load<1, 64>(bias, n / 2), m, n);
  }
}

// From k50. c[m, n] = (a · bᵀ)[m, n] * s[m + 1] (s [M] f32; the last row reads s[M] = 0), f32 out.
PK_KERNEL void b34_gemm_rowscale_next(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> s, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc * load<128, 1>(s, m + 1), m, n);
  }
}

// ============================================================ N-D tensors and index arithmetic ==

// From k31. x, y [B, H, S, D] bf16, one tile loop over the merged (b, h) and S, a range loop over D:
// y[b, h, s, d] = bf16(x[b, h, s, d] * w[h]) (w [H] f32).
PK_KERNEL void b34_4d_merged_bh(Tensor<bf16, 4> x, Tensor<f32, 1> w, Tensor<bf16, 4> y) {
  for (auto [bh, s] : tiles(x.dim(0) * x.dim(1), x.dim(2), {1, 16})) {
    index b = bh / x.dim(1), h = bh % x.dim(1);
    for (auto d : range(0, x.dim(3), 64))
      store(y, cast<bf16>(cast<f32>(load<16, 64>(x, b, h, s, d)) * w.at(h)), b, h, s, d);
  }
}

// From k32. y[i] = x[i + 16] (1-D f32, y [Ny], x [Nx]; 0 where i + 16 >= Nx).
PK_KERNEL void b34_shift_read(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {256})) store(y, load<256>(x, i + 16), i);
}

// From k34. Tiles of 16 x 64 stepping 128 columns, stored at column n / 2: y[i, 64 t + j] =
// x[i, 128 t + j] (j < 64, 0 past x's columns) for each tile t with 128 t < Cx; clipped at y's columns.
PK_KERNEL void b34_store_half_cols(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(y, load<16, 64>(x, m, n), m, n / 2);
}

// From k37. 3-D tiles {2, 8, 32} with tails on every dimension: y[a, b, c] = x[a, b, c] + 100 a + c.
PK_KERNEL void b34_3d_dim_index(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 8, 32}))
    store(y, load<2, 8, 32>(x, a, b, c) + dim_index<0, 2, 8, 32>(a) * 100.0f + dim_index<2, 2, 8, 32>(c), a, b, c);
}

// From k38. y [N, M] = x [M, N]ᵀ (bf16, 48 x 80 tiles).
PK_KERNEL void b34_transpose_48x80(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {48, 80})) store(y, transpose(load<48, 80>(x, m, n)), n, m);
}

// From k39. 1-D tiles of a 3-D tensor's last dimension: y = x * f32(alpha / D), D = x.dim(2).
PK_KERNEL void b34_lastdim_alpha(Tensor<f32, 3> x, Tensor<f32, 3> y, float alpha) {
  for (auto [b, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 1, 128}))
    store(y, load<128>(x, b, s, d) * (alpha / x.dim(2)), b, s, d);
}

// From k44. y [Ry, C], x [Rx, C]: the 16-row tile at m reads x's rows from min(m + off, Rx - 16):
// y[m + i] = x[min(m + off, Rx - 16) + i] (m = 16 floor(row / 16), i = row % 16; 0 past Rx).
PK_KERNEL void b34_min_offset_rows(Tensor<f32, 2> x, Tensor<f32, 2> y, index off) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(y, load<16, 64>(x, min(m + off, x.rows() - 16), n), m, n);
}

// ============================================================ scalars ==

// From k41. Rows bounded by a count read from memory, in whole 16-row tiles:
// y[i] = x[i] * w[0] + w[1] for i < min(16 ceil(cnt[0] / 16), R); rows from there on untouched.
PK_KERNEL void b34_scalar_reads_cnt(Tensor<f32, 2> x, Tensor<f32, 1> w, Tensor<i32, 1> cnt, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(cnt.at(0), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n) * w.at(0) + w.at(1), m, n);
}

// From k42. t = x, then reps times t = t * 0.5 + 1; y = t * beta + reps.
PK_KERNEL void b34_carried_reps(Tensor<f32, 2> x, Tensor<f32, 2> y, index reps, float beta) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    for (auto j : range(0, reps, 1)) t = t * 0.5f + 1.0f;
    store(y, t * beta + float(reps), m, n);
  }
}

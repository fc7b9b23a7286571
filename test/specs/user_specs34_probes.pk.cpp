// Set 34: host loops of launches (hand-written rings, trip-dependent peers, nested loops, collectives and
// GEMMs inside), GEMMs in unusual combinations (types, tails, epilogues, batched, communicated output),
// N-D tensors and index arithmetic, scalar arguments and scalar reads.
#include <pk/spec.h>
using namespace pk;

// ============================================================ host loops ==

// k01: hand ring all-gather into y [W, R, C] (3-D, one block per rank): own block copied first, then host loop
//      s = 0..W-2: read own y at block b = (rank - s) mod W and push it into next_rank()'s y at block b.
//      Expected: compiles; 1 + (W-1) launches, barrier per launch.
PK_KERNEL void k01(Tensor<f32, 2> x, Sym<f32, 3> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), rank(), m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    index b = (rank() - s + world_size()) % world_size();
    for (auto [m, n] : tiles(y.dim(1), y.dim(2), {16, 64}))
      store(y.on(next_rank()), load<16, 64>(y, b, m, n), b, m, n);
  }
}

// k02: the same ring on a 2-D y [W * R, C] with blocks at b * R + m (R = x.rows(), any R). When R % 16 != 0 a
//      tile reaches into the next block (equal values there on the peer, but stores of the same elements).
//      Expected: refused as a race unless R is a multiple of the tile (documented: start blocks a whole number
//      of tiles apart). Got: refused, but the message does not name the padding overlap (finding 2).
PK_KERNEL void k02(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), rank() * x.rows() + m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    index b = (rank() - s + world_size()) % world_size();
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(y.on(next_rank()), load<16, 64>(y, b * x.rows() + m, n), b * x.rows() + m, n);
  }
}

// k03: k02 fixed as the doc says: blocks padded to whole tiles, Rp = (R + 15) / 16 * 16.  Expected: compiles.
PK_KERNEL void k03(Tensor<f32, 2> x, Sym<f32, 2> y) {
  index Rp = (x.rows() + 15) / 16 * 16;
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), rank() * Rp + m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    index b = (rank() - s + world_size()) % world_size();
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(y.on(next_rank()), load<16, 64>(y, b * Rp + m, n), b * Rp + m, n);
  }
}

// k04: ring reduce-scatter by hand (3-D acc [W, R, C] Sym, x [W, R, C] local): step s: rank r adds its own chunk
//      c = (r - s - 1) mod W into the next rank's acc at chunk c... written as: next[c] = acc[c] + x[c] pushed.
//      host loop s = 0..W-2: send (acc[c] + x[c]) for c = (r - s - 1 + W) % W into acc.on(next) at c; step 0 reads
//      acc zeroed by a first loop. Expected: compiles; ordering of read acc[c] (written by prev rank last trip).
PK_KERNEL void k04(Tensor<f32, 3> x, Sym<f32, 3> acc) {
  for (auto [c, m, n] : tiles(acc.dim(0), acc.dim(1), acc.dim(2), {1, 16, 64}))
    store(acc, zeros<f32, 16, 64>(), c, m, n);
  for (auto s : range(0, world_size() - 1, 1)) {
    index c = (rank() - s - 1 + 2 * world_size()) % world_size();
    for (auto [m, n] : tiles(acc.dim(1), acc.dim(2), {16, 64}))
      store(acc.on(next_rank()), load<16, 64>(acc, c, m, n) + load<16, 64>(x, c, m, n), c, m, n);
  }
}

// k05: nested host loops: outer over layers (index arg), inner over ring steps (world size); each inner trip
//      pushes a block to a trip-dependent peer (rank + t + 1) and an all_reduce follows the inner loop.
//      Expected: compiles; loop= fields outermost first, arguments (l, t).
PK_KERNEL void k05(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z, index layers) {
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

// k06: host loop with a non-zero start from an int argument and a bound from min(steps, world_size()):
//      y[s - a] = x * s for s in [a, min(b, W)).  Reads y back each trip (x = x + y[s - a]).  Expected: compiles.
PK_KERNEL void k06(Sym<f32, 2> x, Sym<f32, 3> y, index a, index b) {
  for (auto s : range(a, min(b, world_size()), 1)) {
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(y.on(prev_rank()), load<16, 64>(x, m, n) * float(s), s - a, m, n);
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(x, load<16, 64>(x, m, n) + load<16, 64>(y, s - a, m, n), m, n);
  }
}

// k07: host loop with step 2 and the trip used as a float in tile math.  x += s / 2 each trip, after an
//      all_reduce into y.  Expected: compiles; trips s = 0, 2, 4, ... < steps.
PK_KERNEL void k07(Sym<f32, 1> x, Sym<f32, 1> y, index steps) {
  for (auto s : range(0, steps, 2)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(x.dim(0), {256})) store(x, load<256>(y, i) + float(s) * 0.5f, i);
  }
}

// k08: host loop carrying a float value (w = w * 0.5f) across trips. Expected: refused (must carry no values).
PK_KERNEL void k08(Sym<f32, 1> x, Sym<f32, 1> y, index steps) {
  float w = 1.0f;
  for (auto s : range(0, steps, 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(x.dim(0), {256})) store(x, load<256>(y, i) * w, i);
    w = w * 0.5f;
  }
}

// k09: host loop bound read from device memory. Expected: refused at the loop.
PK_KERNEL void k09(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<i32, 1> n) {
  for (auto s : range(0, n.at(0), 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(x.dim(0), {256})) store(x, load<256>(y, i), i);
  }
}

// k10: nested host loop whose inner bound depends on the outer trip. Expected: refused at the inner loop.
PK_KERNEL void k10(Sym<f32, 1> x, Sym<f32, 1> y, index steps) {
  for (auto s : range(0, steps, 1)) {
    for (auto t : range(0, s + 1, 1)) {
      all_reduce(Sum, x, y);
      for (auto i : tiles(x.dim(0), {256})) store(x, load<256>(y, i), i);
    }
  }
}

// k11: a top-level range loop whose trips are independent (each writes its own column block of y, reads x):
//      no host loop needed. y[:, s*64 ..] = x[:, s*64 ..] * (s + 1). Expected: compiles as one launch.
PK_KERNEL void k11(Tensor<f32, 2> x, Tensor<f32, 2> y, index blocks) {
  for (auto s : range(0, blocks, 1))
    for (auto m : tiles(x.rows(), {16}))
      store(y, load<16, 64>(x, m, s * 64) * float(s + 1), m, s * 64);
}

// k12: host loop with a GEMM inside (layer l: h = x @ w[l], x = relu(h) via another loop, i.e. an MLP stack
//      with a 3-D weight [L, K, N], K = N). Expected: compiles; per trip a GEMM launch and a relu launch;
//      the weight loaded at layer l (trip), not at 0.
PK_KERNEL void k12(Tensor<bf16, 2> x, Tensor<bf16, 3> w, Tensor<bf16, 2> h, index layers) {
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

// k13: tensor-parallel MLP layer stack: host loop, GEMM into a Scratch then all_reduce then residual add.
//      Expected: compiles; GEMM + all-reduce possibly fused; residual after.
PK_KERNEL void k13(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Scratch<bf16, 2> p, Sym<bf16, 2> y, index steps) {
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

// ============================================================ GEMMs ==

// k14: A·B f16 in, f32 out, tails M=1000 N=3000 K=520; epilogue: (acc + bias[n]) * scale with bias a 1-D f32.
//      Expected: GEMM template (f32 output, kernel of its own) + twin.
PK_KERNEL void k14(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> bias, Tensor<f32, 2> c, float scale) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 128>(b, k, n), acc);
    store(c, (acc + load<1, 128>(bias, n)) * scale, m, n);
  }
}

// k15: A·Bᵀ bf16 in, f16 out (cast<f16>), residual f16 tile, silu, clamp to [-4, 4].  Expected: template.
PK_KERNEL void k15(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f16, 2> r, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), load<128, 32>(b, n, k), acc);
    store(c, cast<f16>(min(max(silu(acc) + cast<f32>(load<64, 128>(r, m, n)), -4.0f), 4.0f)), m, n);
  }
}

// k16: GEMM then a row softmax of the GEMM output in another loop (N <= 256 per row tile, masked).
//      Expected: two launches (template GEMM, then the softmax), in that order.
PK_KERNEL void k16(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, Tensor<bf16, 2> p) {
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

// k17: batched A·B over [B, M, K] x [B, K, N] with a per-batch scale s.at(z) and a per-batch bias row
//      bias [B, N] read at (z, n).  Expected: batched template.
PK_KERNEL void k17(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<f32, 1> s, Tensor<f32, 2> bias, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(2), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma(load<128, 64>(a, z, m, k), load<64, 256>(b, z, k, n), acc);
    store(c, cast<bf16>(acc * s.at(z) + load<1, 256>(bias, z, n)), z, m, n);
  }
}

// k18: batched A·Wᵀ with one 2-D weight W [N, K] shared by every batch; f16; gelu_erf epilogue; f16 out.
//      Expected: batched template with a 2-D B map.
PK_KERNEL void k18(Tensor<f16, 3> a, Tensor<f16, 2> w, Tensor<f16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), w.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(w, n, k), acc);
    store(c, cast<f16>(gelu_erf(acc)), z, m, n);
  }
}

// k19: GEMM whose output tile is sent to the next rank (store into c.on(next_rank())).
//      Expected: compiles (general path or split), barrier before/after the peer phase.
PK_KERNEL void k19(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c.on(next_rank()), cast<bf16>(acc), m, n);
  }
}

// k20: GEMM whose K loop starts at a run-time k0 (partial product over K columns k0..K).  The template must
//      not silently start at 0.  Expected: compiles; either the template honours k0 or the general path.
PK_KERNEL void k20(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index k0) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(k0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k21: GEMM whose K loop ends at an argument kmax (< a.cols()).  Expected: template honours kmax or general.
PK_KERNEL void k21(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, index kmax) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, kmax, 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k22: GEMM with B read at a shifted K offset (B rows k + 8 of a [K + 8, N] weight): c = a · b[8:, :].
//      Expected: general path (or template with the offset); never the plain product.
PK_KERNEL void k22(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k + 8, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k23: GEMM with A read at a row offset (rows m + 16 of a): c[m] = a[m + 16] · bᵀ.  Expected: not the plain
//      template product.
PK_KERNEL void k23(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(c.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m + 16, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k24: GEMM stored at a column offset (c [M, 2N]: the product into the right half, c[:, N + n]).
//      Expected: not the plain template (or the template storing at N + n).
PK_KERNEL void k24(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, b.rows() + n);
  }
}

// k25: c += a · bᵀ with the accumulator initialised from c (not zeros), f32 c.  Expected: general path or the
//      template with a residual; c read and written at the same tile (legal in place).
PK_KERNEL void k25(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = load<64, 64>(c, m, n);
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// k26: GEMM + a row reduction of the accumulator (row sum of squares into an [M, 1] f32, per N tile added with
//      store_add) on the general path; tails in N (N=3000): padded columns are zero.  Expected: general path.
PK_KERNEL void k26(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, Tensor<f32, 2> ss) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
    store_add(ss, row_sum(acc * acc), m, 0);
  }
}

// k27: dW = dYᵀ X with A stored [K, M] (transpose of the loaded tile), f16 in, f32 out, tails.
//      Expected: template with A transposed.
PK_KERNEL void k27(Tensor<f16, 2> dy, Tensor<f16, 2> x, Tensor<f32, 2> dw) {
  for (auto [m, n] : tiles(dy.cols(), x.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.rows(), 64)) acc = mma(transpose(load<64, 128>(dy, k, m)), load<64, 256>(x, k, n), acc);
    store(dw, acc, m, n);
  }
}

// k28: GEMM with a vocab mask from an int argument and a column scale of a 1-D [M] tensor read as a column,
//      then a cast to bf16.  Expected: template with the mask in the epilogue.
PK_KERNEL void k28(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> rs, Tensor<bf16, 2> c, index vocab) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(where(col_index<128, 256>(n) < vocab, acc * load<128, 1>(rs, m), -1e4f)), m, n);
  }
}

// k29: GEMM with the epilogue using row_index of the tile's first row only (row_index<1, 256>(m)): depends on the
//      tile. Expected: general path (doc), values = acc + m_tile_origin.
PK_KERNEL void k29(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 256})) {
    auto acc = zeros<f32, 64, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc + row_index<1, 256>(m), m, n);
  }
}

// k30: GEMM into a Scratch then reduce_scatter (fused form) then a bias in a following loop.  Expected: compiles.
PK_KERNEL void k30(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c, Tensor<bf16, 2> bias) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  reduce_scatter(Sum, p, c);
  for (auto [m, n] : tiles(c.rows(), c.cols(), {16, 256}))
    store(c, load<16, 256>(c, m, n) + load<1, 256>(bias, 0, n), m, n);
}

// ============================================================ N-D and index arithmetic ==

// k31: 4-D x [B, H, S, D] tiled by trailing-dims tiles {1, 1, 16, 64}, y = x * w[h] (w [H], f32 scalar read).
//      Expected: compiles.
PK_KERNEL void k31(Tensor<bf16, 4> x, Tensor<f32, 1> w, Tensor<bf16, 4> y) {
  for (auto [bh, s] : tiles(x.dim(0) * x.dim(1), x.dim(2), {1, 16})) {
    index b = bh / x.dim(1), h = bh % x.dim(1);
    for (auto d : range(0, x.dim(3), 64))
      store(y, cast<bf16>(cast<f32>(load<16, 64>(x, b, h, s, d)) * w.at(h)), b, h, s, d);
  }
}

// k32: shifted read y[i] = x[i + 16] (1-D, tile 256, sizes not multiple), different tensors. Expected: compiles.
PK_KERNEL void k32(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {256})) store(y, load<256>(x, i + 16), i);
}

// k33: the same shift in place x[i] = x[i + 16]. Expected: refused (read at another tile).
PK_KERNEL void k33(Tensor<f32, 1> x) {
  for (auto i : tiles(x.size(), {256})) store(x, load<256>(x, i + 16), i);
}

// k34: store at n / 2 with 64-wide tiles stepping 128 (halves: tiles never overlap; y has half x's columns).
//      Expected: compiles (no two iterations touch the same element).
PK_KERNEL void k34(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(y, load<16, 64>(x, m, n), m, n / 2);
}

// k35: store at 2 * n with 64-wide tiles stepping 64 (spread out, gaps). Expected: compiles.
PK_KERNEL void k35(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), m, 2 * n);
}

// k36: store at n / 2 with 64-wide tiles stepping 64 (overlap: tile at n=64 writes [32, 96)). Expected: refused.
PK_KERNEL void k36(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), m, n / 2);
}

// k37: 3-D tile loop over [A, B, C] with tails on every dimension and a 3-D tile {2, 8, 32}: y = x + dim index.
//      Expected: compiles; clipping on all three dims.
PK_KERNEL void k37(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 8, 32}))
    store(y, load<2, 8, 32>(x, a, b, c) + dim_index<0, 2, 8, 32>(a) * 100.0f + dim_index<2, 2, 8, 32>(c), a, b, c);
}

// k38: transpose across tensors with tails: y [N, M] = x [M, N]ᵀ, 48 x 80 tiles.  Expected: compiles.
PK_KERNEL void k38(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {48, 80})) store(y, transpose(load<48, 80>(x, m, n)), n, m);
}

// k39: 1-D tiles of a 3-D tensor's last dimension (load<128>(x, b, s, d)), scaled by a float argument divided by
//      the extent: y = x * (alpha / x.dim(2)).  Expected: compiles; alpha / D in fp32.
PK_KERNEL void k39(Tensor<f32, 3> x, Tensor<f32, 3> y, float alpha) {
  for (auto [b, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 1, 128}))
    store(y, load<128>(x, b, s, d) * (alpha / x.dim(2)), b, s, d);
}

// k40: rows read at 2*m + 1 (odd rows of x, tile of one row): y[m] = x[2m + 1].  Expected: compiles.
PK_KERNEL void k40(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {1, 256})) store(y, load<1, 256>(x, 2 * m + 1, n), m, n);
}

// ============================================================ scalars ==

// k41: scalar reads: y = x * w.at(0) + w.at(1) with an index read cnt.at(0) bounding the rows processed.
//      Expected: compiles; rows past cnt untouched (whole tiles: the last tile clipped at the tensor, not cnt).
PK_KERNEL void k41(Tensor<f32, 2> x, Tensor<f32, 1> w, Tensor<i32, 1> cnt, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(cnt.at(0), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n) * w.at(0) + w.at(1), m, n);
}

// k42: an int argument controlling a sequential loop carrying a tile (t = t * 0.5 + 1, reps times), float args
//      mixed with index casts: out = t * beta + float(reps).  Expected: compiles.
PK_KERNEL void k42(Tensor<f32, 2> x, Tensor<f32, 2> y, index reps, float beta) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    for (auto j : range(0, reps, 1)) t = t * 0.5f + 1.0f;
    store(y, t * beta + float(reps), m, n);
  }
}

// k43: a scalar read at the host trip: host loop over layers, x = x * g.at(l) after an all_reduce.
//      Expected: compiles; g read at index l (trip) in each launch.
PK_KERNEL void k43(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> g, index layers) {
  for (auto l : range(0, layers, 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(x.dim(0), {256})) store(x, load<256>(y, i) * g.at(l), i);
  }
}

// k44: integer index math with min/max and % in a loaded offset: y[m] = x[min(m + off, R - 16)] in 16-row tiles,
//      off an int argument.  Expected: compiles.
PK_KERNEL void k44(Tensor<f32, 2> x, Tensor<f32, 2> y, index off) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(y, load<16, 64>(x, min(m + off, x.rows() - 16), n), m, n);
}

// ============================================================ second round ==

// k45: host loop over layers: all_reduce, then a GEMM whose epilogue reads the trip: per-layer scale g.at(l),
//      per-layer bias row bias2[l, n], and + float(l).  Expected: each trip's GEMM launch uses trip l.
PK_KERNEL void k45(Sym<bf16, 2> x, Sym<bf16, 2> xr, Tensor<bf16, 2> w, Tensor<f32, 1> g, Tensor<f32, 2> bias2,
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

// k46: GEMM epilogue with a transposed residual: r stored [N, M], c[m, n] = acc + r[n, m].  Expected: template
//      reading r at (col, row).
PK_KERNEL void k46(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> r, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + transpose(load<256, 128>(r, n, m))), m, n);
  }
}

// k47: GEMM with a lower-triangular mask (row >= col) and an integer parity mask: keep acc where row >= col
//      and col even, else 0.  Expected: template, masks per element.
PK_KERNEL void k47(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto keep = (row_index<128, 256>(m) >= col_index<128, 256>(n)) && (cast<i32>(col_index<128, 256>(n)) % 2 == 0);
    store(c, where(keep, acc, 0.0f), m, n);
  }
}

// k48: block-scaled GEMM written with 64 x 64 tiles: each 64 x 64 output block scaled by s[m / 64, n / 64]
//      (s an f32 [ceil(M/64), ceil(N/64)] tensor).  The scale index depends on the tile origin, so a retiled
//      template must compute it per element (row / 64, col / 64) or keep the general path.
PK_KERNEL void k48(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> s, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * s.at(m / 64, n / 64)), m, n);
  }
}

// k49: GEMM whose bias row is read at n / 2 (bias of half the width, each tile reads 64 consecutive values
//      from n / 2): c[., n + j] = acc + bias[n / 2 + j].  A retiled template must keep this per spec tile.
PK_KERNEL void k49(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> bias, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, acc + load<1, 64>(bias, n / 2), m, n);
  }
}

// k50: GEMM with a row scale read one row down (s[m + 1 + i] for row m + i).  Expected: template with row + 1,
//      or general.
PK_KERNEL void k50(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> s, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc * load<128, 1>(s, m + 1), m, n);
  }
}

// k51: host loop with a run-time step around a collective. Expected: refused (constant step needed).
PK_KERNEL void k51(Sym<f32, 1> x, Sym<f32, 1> y, index steps, index st) {
  for (auto s : range(0, steps, st)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(x.dim(0), {256})) store(x, load<256>(y, i), i);
  }
}

// k52: local Jacobi iterations (no communication): y = (x[i-1] + x[i+1]) / 2, then x = y, `steps` times.
//      Expected: host loop (or one launch with barriers); neighbours read across tiles of the other tensor.
PK_KERNEL void k52(Tensor<f32, 1> x, Tensor<f32, 1> y, index steps) {
  for (auto s : range(0, steps, 1)) {
    for (auto i : tiles(x.size(), {256})) store(y, (load<256>(x, i - 1) + load<256>(x, i + 1)) * 0.5f, i);
    for (auto i : tiles(x.size(), {256})) store(x, load<256>(y, i), i);
  }
}

// k53: a host loop holding an independent inner range loop (column blocks) and a collective.
//      Expected: host loop; inner loop inside the launch.
PK_KERNEL void k53(Sym<f32, 2> x, Sym<f32, 2> y, index steps) {
  for (auto s : range(0, steps, 1)) {
    all_reduce(Sum, x, y);
    for (auto j : range(0, 4, 1))
      for (auto m : tiles(x.rows(), {16}))
        store(x, load<16, 64>(y, m, j * 64) * float(j + s), m, j * 64);
  }
}

// k54: ring all-gather GEMM by hand: host loop over steps s; a [W, M, K] slots; each trip pushes slot
//      cur = (rank - s) mod W to next rank and multiplies slot cur by B into rows cur * M of c [W M, N].
//      Expected: compiles. Spec bug on purpose when M % 64 != 0: slot cur's padding rows overwrite slot cur + 1's
//      first rows of c, computed one trip earlier: no warning (finding 1).
PK_KERNEL void k54(Sym<bf16, 3> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto s : range(0, world_size(), 1)) {
    index cur = (rank() - s + world_size()) % world_size();
    for (auto [m, k] : tiles(a.dim(1) * min(world_size() - 1 - s, 1), a.dim(2), {64, 64}))
      store(a.on(next_rank()), load<64, 64>(a, cur, m, k), cur, m, k);
    for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64})) {
      auto acc = zeros<f32, 64, 64>();
      for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<64, 64>(a, cur, m, k), load<64, 64>(b, n, k), acc);
      store(c, cast<bf16>(acc), cur * a.dim(1) + m, n);
    }
  }
}

// k55: trip-dependent pull: each trip reads x from rank (rank + s) % W and accumulates into out (local).
//      Expected: compiles, no warning. Got: compiles with a false padding warning (finding 3).
PK_KERNEL void k55(Sym<f32, 2> x, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(out, zeros<f32, 16, 64>(), m, n);
  for (auto s : range(0, world_size(), 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(out, load<16, 64>(out, m, n) + load<16, 64>(x.on((rank() + s) % world_size()), m, n), m, n);
}

// k56: one launch, a top-level range loop over blocks j (independent trips): y rows j * R + m get x, R = x.rows().
//      With R % 16 != 0, trip j's last tile writes zero padding into block j + 1's first rows, which trip
//      j + 1 writes from another block in no order.  Expected: refused or warned (padding over another store).
PK_KERNEL void k56(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto j : range(0, 4, 1))
    for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
      store(y, load<16, 64>(x, m, n) * float(j + 1), j * x.rows() + m, n);
}

// k57: k54's two trips unrolled into one launch: slot 1's GEMM rows then slot 0's (slot 0's padding lands on
//      slot 1's first rows).  Expected: the documented warning at the second store. Got: none (finding 1).
PK_KERNEL void k57(Tensor<bf16, 3> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<64, 64>(a, 1, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), a.dim(1) + m, n);
  }
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<64, 64>(a, 0, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k58: out += x (both [R, C], local), loaded and stored at the same tile, after a zero fill: the padding is
//      out's own (same tile).  Expected: no warning. Got: a false padding warning (finding 3).
PK_KERNEL void k58(Tensor<f32, 2> x, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 64})) store(out, zeros<f32, 16, 64>(), m, n);
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 64}))
    store(out, load<16, 64>(out, m, n) + load<16, 64>(x, m, n), m, n);
}

// k59: k57 without the GEMM: slot 1 copied to rows R + m, then slot 0 to rows m (slot 0's last tile's padding
//      lands on slot 1's first rows).  Expected: the documented warning.
PK_KERNEL void k59(Tensor<bf16, 3> a, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.dim(1), a.dim(2), {64, 64})) store(c, load<64, 64>(a, 1, m, n), a.dim(1) + m, n);
  for (auto [m, n] : tiles(a.dim(1), a.dim(2), {64, 64})) store(c, load<64, 64>(a, 0, m, n), m, n);
}

// k60: k57 with the product computed without a K loop (one mma of whole-K tiles, K <= 64).  Expected: warning.
PK_KERNEL void k60(Tensor<bf16, 3> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64}))
    store(c, mma_t(load<64, 64>(a, 1, m, 0), load<64, 64>(b, n, 0), zeros<f32, 64, 64>()), a.dim(1) + m, n);
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64}))
    store(c, mma_t(load<64, 64>(a, 0, m, 0), load<64, 64>(b, n, 0), zeros<f32, 64, 64>()), m, n);
}

// k61: k59 with the slots written in separate trips of a host loop (slot 1 - s at trip s; a collective forces
//      the host loop).  Expected: the same warning as k59 (the padding of trip 1 lands on trip 0's rows).
//      Got: none (finding 1; the check is per launch by design).
PK_KERNEL void k61(Tensor<bf16, 3> a, Tensor<bf16, 2> c, Sym<f32, 1> u, Sym<f32, 1> v) {
  for (auto s : range(0, 2, 1)) {
    all_reduce(Sum, u, v);
    for (auto [m, n] : tiles(a.dim(1), a.dim(2), {64, 64}))
      store(c, load<64, 64>(a, 1 - s, m, n), (1 - s) * a.dim(1) + m, n);
  }
}

// k62: k60 with K = 32 operand tiles (shapes differ from the result).  Expected: the padding warning. Got: none (finding 1).
PK_KERNEL void k62(Tensor<bf16, 3> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64}))
    store(c, mma_t(load<64, 32>(a, 1, m, 0), load<64, 32>(b, n, 0), zeros<f32, 64, 64>()), a.dim(1) + m, n);
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64}))
    store(c, mma_t(load<64, 32>(a, 0, m, 0), load<64, 32>(b, n, 0), zeros<f32, 64, 64>()), m, n);
}

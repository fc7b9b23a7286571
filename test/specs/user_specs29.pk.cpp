// The twenty-ninth user set: W8A8 GEMMs (i8 x i8 into an i32 accumulator) with every epilogue kind a user writes,
// on the Hopper template's int8 tensor cores (s8 wgmma, s32 sums) and on the general tile path (A * B, A read
// transposed, batched, i8 or i64 outputs, loops that scale the accumulator), beside collectives and peers; and
// integer register tiles (i8, i32, i64) moved by whole runs of 8 elements or element by element (tails, origins
// that are not multiples of 8, odd row lengths, negative origins, 1-D / 3-D / 4-D tiles, i64 values past 2^32,
// i8 sign extension, Sym tensors and peers, reshape / transpose, gathers and scatters by index).
//
// Notation: acc[m, n] = sum_k x[m, k] * w[n, k] (mma_t) or sum_k x[m, k] * w[k, n] (mma), summed exactly in
// i32 and wrapping at 32 bits; f32(v) the nearest float to the integer v, bf16(x) / f16(x) round to nearest even,
// i32 arithmetic wraps, >> is arithmetic, / and % truncate (x / 0 = x % 0 = 0); cast<i8> of a float rounds toward
// zero and saturates to -128 .. 127; a load outside a tensor reads 0 and a store outside it is dropped. Written
// from docs/language.md and pk/spec.h; test/gpu/user_specs29_jit_test.cu runs every kernel against exact (integer)
// or float64 references; findings in test/specs/specs29_findings.md.
#include <pk/spec.h>
using namespace pk;

// ---------------------------------------------------------------------------------------------------------
// W8A8 GEMMs on the template: x i8 [M, K], w i8 [N, K].

// 1. c[m, n] = acc (the raw i32 sums).
PK_KERNEL void w29_raw_s32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// 2. y[m, n] = bf16(f32(acc) * sx[m, 0] * sw[n] + f32(bias[n])): per-token scale sx f32 [M, 1], per-channel
// scale sw f32 [N], bias bf16 [N].
PK_KERNEL void w29_token_channel_bias(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> sx, Tensor<f32, 1> sw,
                                      Tensor<bf16, 1> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    auto d = cast<f32>(acc) * load<128, 1>(sx, m, 0) * load<1, 256>(sw, n);
    store(y, cast<bf16>(d + cast<f32>(load<1, 256>(bias, n))), m, n);
  }
}

// 3. y[m, n] = f16(f32(acc) * (alpha * sw[n, 0])): alpha a float argument, sw f32 [N, 1] read transposed.
PK_KERNEL void w29_f16_alpha(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> sw, Tensor<f16, 2> y, float alpha) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(y, cast<f16>(cast<f32>(acc) * (alpha * transpose(load<256, 1>(sw, n, 0)))), m, n);
  }
}

// 4. Asymmetric activations: y[m, n] = f32(acc - zx[m] * rw[n]) * sx[m] * sw[n] in f32, zx i32 [M] (the token's
// zero point), rw i32 [N] (the row sums of w), sx f32 [M], sw f32 [N]; the integer correction wraps in i32.
PK_KERNEL void w29_zero_point_f32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 1> zx, Tensor<i32, 1> rw,
                                  Tensor<f32, 1> sx, Tensor<f32, 1> sw, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    auto q = acc - load<128, 1>(zx, m) * load<1, 256>(rw, n);
    store(y, cast<f32>(q) * load<128, 1>(sx, m) * load<1, 256>(sw, n), m, n);
  }
}

// 5. The same correction kept in i32: c[m, n] = acc - zx[m] * rw[n] (wrapping).
PK_KERNEL void w29_zero_point_i32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 1> zx, Tensor<i32, 1> rw,
                                  Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, acc - load<128, 1>(zx, m) * load<1, 256>(rw, n), m, n);
  }
}

// 6. Integer requantisation kept in i32: c[m, n] = min(max((acc + 128) >> 8, -127), 127).
PK_KERNEL void w29_shift_clamp(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, min(max((acc + 128) >> 8, -127), 127), m, n);
  }
}

// 7. Compares and selects against an index argument t: c[m, n] = acc > t ? acc & 0xFFFF : acc ^ -1 (i32; t's
// low 32 bits).
PK_KERNEL void w29_where_bits(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c, index t) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, where(acc > t, acc & 0xFFFF, acc ^ -1), m, n);
  }
}

// 8. A per-element i8 residual: c[m, n] = acc + 3 * i32(r[m, n]) (r i8 [M, N], sign-extended) and the compare
// flag: f[m, n] is not stored; one output.
PK_KERNEL void w29_i8_residual(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i8, 2> r, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, acc + 3 * cast<i32>(load<128, 256>(r, m, n)), m, n);
  }
}

// 9. Row and column coordinates in integer arithmetic: c[m, n] = acc * 65536 + (row % 5) - (col == 7) (wraps).
PK_KERNEL void w29_wrap_coords(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    auto r = cast<i32>(row_index<128, 256>(m)), cl = cast<i32>(col_index<128, 256>(n));
    store(c, acc * 65536 + r % 5 - (cl == 7), m, n);
  }
}

// 10. Other tile shapes and K steps (the template retiles to 128 x 256 stepping 128): 64 x 128 tiles, K by 64,
// c[m, n] = acc.
PK_KERNEL void w29_tiles_64x128_k64(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 128})) {
    auto acc = zeros<i32, 64, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<128, 64>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// 11. 128 x 128 tiles stepping K by 32: y[m, n] = bf16(f32(acc) * sw[n]).
PK_KERNEL void w29_tiles_128_k32_bf16(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 1> sw, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<i32, 128, 128>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<128, 32>(x, m, k), load<128, 32>(w, n, k), acc);
    store(y, cast<bf16>(cast<f32>(acc) * load<1, 128>(sw, n)), m, n);
  }
}

// 12. An activation after dequantisation: y[m, n] = bf16(gelu(f32(acc) * s)) (GELU's tanh form), s a float.
PK_KERNEL void w29_gelu(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<bf16, 2> y, float s) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(y, cast<bf16>(gelu(cast<f32>(acc) * s)), m, n);
  }
}

// 13. A length mask: y[m, n] = col < lens[m] ? f32(acc) * s : -1 in f32, lens i32 [M, 1].
PK_KERNEL void w29_lengths(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> lens, Tensor<f32, 2> y, float s) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    auto keep = cast<i32>(col_index<128, 256>(n)) < load<128, 1>(lens, m, 0);
    store(y, where(keep, cast<f32>(acc) * s, -1.0f), m, n);
  }
}

// 14. An integer part and a float part: y[m, n] = f32(acc >> 4) * s[m, 0] + f32(acc & 15) in f32.
PK_KERNEL void w29_split_hi_lo(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> s, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(y, cast<f32>(acc >> 4) * load<128, 1>(s, m, 0) + cast<f32>(acc & 15), m, n);
  }
}

// ---------------------------------------------------------------------------------------------------------
// W8A8 on the general path.

// 15. A * B with w stored [K, N]: c[m, n] = sum_k x[m, k] w[k, n] (8-bit wgmma reads B K-major only).
PK_KERNEL void w29_ab_general(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.cols(), {64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma(load<64, 32>(x, m, k), load<32, 64>(w, k, n), acc);
    store(c, acc, m, n);
  }
}

// 16. A read transposed (a stored [K, M]): c[m, n] = sum_k a[k, m] w[n, k].
PK_KERNEL void w29_at_general(Tensor<i8, 2> a, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(a.cols(), w.rows(), {64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, a.rows(), 32)) acc = mma_t(transpose(load<32, 64>(a, k, m)), load<64, 32>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// 17. Batched: c[z, m, n] = sum_k x[z, m, k] w[z, n, k] for x [Z, M, K], w [Z, N, K], c i32 [Z, M, N].
PK_KERNEL void w29_bmm_general(Tensor<i8, 3> x, Tensor<i8, 3> w, Tensor<i32, 3> c) {
  for (auto [z, m, n] : tiles(x.dim(0), x.dim(1), w.dim(1), {1, 64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, x.dim(2), 32)) acc = mma_t(load<64, 32>(x, z, m, k), load<64, 32>(w, z, n, k), acc);
    store(c, reshape<1, 64, 64>(acc), z, m, n);
  }
}

// 18. Requantised i8 output: q[m, n] = i8(round(f32(acc) * sx[m, 0] * sw[n])) (half-way cases to even, then
// saturating to -128 .. 127).
PK_KERNEL void w29_requant_i8(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> sx, Tensor<f32, 1> sw,
                              Tensor<i8, 2> q) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(q, cast<i8>(round(cast<f32>(acc) * load<128, 1>(sx, m, 0) * load<1, 256>(sw, n))), m, n);
  }
}

// 19. An i64 output: c[m, n] = i64(acc) * i64(acc) (exact, no wrap below 2^63).
PK_KERNEL void w29_i64_square(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i64, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    auto a = cast<i64>(acc);
    store(c, a * a, m, n);
  }
}

// 20. An accumulator the loop also scales: acc <- 2 * acc + x[:, k..k+32) w[:, k..k+32)^T each trip (i32, wrapping),
// c[m, n] = the last acc; small 16 x 8 tiles.
PK_KERNEL void w29_doubling_loop(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {16, 8})) {
    auto acc = zeros<i32, 16, 8>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<16, 32>(x, m, k), load<8, 32>(w, n, k), acc * 2);
    store(c, acc, m, n);
  }
}

// 21. Two products into one accumulator in one loop (two i8 weight halves): c = x1 w1^T + x2 w2^T.
PK_KERNEL void w29_two_products(Tensor<i8, 2> x1, Tensor<i8, 2> w1, Tensor<i8, 2> x2, Tensor<i8, 2> w2,
                                Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x1.rows(), w1.rows(), {32, 32})) {
    auto acc = zeros<i32, 32, 32>();
    for (auto k : range(0, x1.cols(), 32)) {
      acc = mma_t(load<32, 32>(x1, m, k), load<32, 32>(w1, n, k), acc);
      acc = mma_t(load<32, 32>(x2, m, k), load<32, 32>(w2, n, k), acc);
    }
    store(c, acc, m, n);
  }
}

// ---------------------------------------------------------------------------------------------------------
// W8A8 beside collectives (every rank's x, w its own).

// 22. c = sum over ranks of (x_r w_r^T) in i32 (wrapping): the GEMM into a Scratch, then an all-reduce.
PK_KERNEL void w29_gemm_all_reduce(Tensor<i8, 2> x, Tensor<i8, 2> w, Scratch<i32, 2> p, Sym<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(p, acc, m, n);
  }
  all_reduce(Sum, p, c);
}

// 23. Every rank's x shard [R, K] gathered into xf [W * R, K], then y = bf16(f32(xf w^T) * sw[n]).
PK_KERNEL void w29_all_gather_gemm(Sym<i8, 2> x, Sym<i8, 2> xf, Tensor<i8, 2> w, Tensor<f32, 1> sw,
                                   Tensor<bf16, 2> y) {
  all_gather(x, xf);
  for (auto [m, n] : tiles(xf.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, xf.cols(), 128)) acc = mma_t(load<128, 128>(xf, m, k), load<256, 128>(w, n, k), acc);
    store(y, cast<bf16>(cast<f32>(acc) * load<1, 256>(sw, n)), m, n);
  }
}

// 24. p = x w^T on every rank, then c (this rank's M / W rows) = the sum over ranks of p's rows of this rank.
PK_KERNEL void w29_gemm_reduce_scatter(Tensor<i8, 2> x, Tensor<i8, 2> w, Scratch<i32, 2> p, Sym<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(p, acc, m, n);
  }
  reduce_scatter(Sum, p, c);
}

// 25. Each rank's sums stored into the next rank's y [W * M, N] at rows rank * M ..: y on rank (r + 1) % W holds
// rank r's x_r w_r^T at rows r * M.
PK_KERNEL void w29_gemm_peer_store(Tensor<i8, 2> x, Tensor<i8, 2> w, Sym<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<64, 64>(w, n, k), acc);
    store(y.on((rank() + 1) % world_size()), acc, m + rank() * x.rows(), n);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Integer register tiles: whole runs where the tile lies inside and rows, origins and base allow, else elements.

// 26. i8 wrapping arithmetic by 16 x 64 tiles: y[m, n] = x[m, n] * 3 + 1 (wraps at 8 bits).
PK_KERNEL void t29_i8_affine(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n) * 3 + 1, m, n);
}

// 27. Sign extension: y[m, n] = i32(x[m, n]) * 1000 (x i8, so -1 gives -1000 and -128 gives -128000).
PK_KERNEL void t29_i8_widen(Tensor<i8, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 32})) store(y, cast<i32>(load<32, 32>(x, m, n)) * 1000, m, n);
}

// 28. A token shift by a load at m - 1: y[m, n] = x[m - 1, n] - x[m, n] (x[-1, n] reads 0), i32.
PK_KERNEL void t29_i32_shift_rows(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 64})) store(y, load<8, 64>(x, m - 1, n) - load<8, 64>(x, m, n), m, n);
}

// 29. Columns read 4 to the right (an origin that is not a multiple of 8): y[m, n] = x[m, n + 4] (0 past the end).
PK_KERNEL void t29_i32_col_offset(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n + 4), m, n);
}

// 30. i64 values past 2^32: y[m, n] = x[m, n] * 3 + (x[m, n] >> 33) ^ 0x100000000 (wrapping at 64 bits;
// ^ binds last).
PK_KERNEL void t29_i64_wide(Tensor<i64, 2> x, Tensor<i64, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto t = load<16, 32>(x, m, n);
    store(y, (t * 3 + (t >> 33)) ^ 0x100000000ll, m, n);
  }
}

// 31. 1-D tiles read 3 elements on: y[i] = x[i + 3] + 1 (i32; x[j] past the end reads 0).
PK_KERNEL void t29_i32_1d_shift(Tensor<i32, 1> x, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i + 3) + 1, i);
}

// 32. 3-D i8 tiles: y[b, s, c] = x[b, s, c] ^ 0x55 (bit operations on i8 keep 8 bits).
PK_KERNEL void t29_i8_3d(Tensor<i8, 3> x, Tensor<i8, 3> y) {
  for (auto [b, s, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 8, 32}))
    store(y, load<2, 8, 32>(x, b, s, c) ^ 0x55, b, s, c);
}

// 33. 4-D i32 tiles over x [A, 2, C, D]: y[a, b, c, d] = x[a, b, c, d] - 7 (the tile spans dimension 1).
PK_KERNEL void t29_i32_4d(Tensor<i32, 4> x, Tensor<i32, 4> y) {
  for (auto [a, c, d] : tiles(x.dim(0), x.dim(2), x.dim(3), {1, 4, 16}))
    store(y, load<1, 2, 4, 16>(x, a, 0, c, d) - 7, a, 0, c, d);
}

// 34. Transposed i32 tiles: y[n, m] = x[m, n] + 1 (x [M, N], y [N, M]).
PK_KERNEL void t29_i32_transpose(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 32})) store(y, transpose(load<32, 32>(x, m, n)) + 1, n, m);
}

// 35. A reshape: a 1-D i64 run of x [L] becomes a row of y [R, C]: y[r, c] = x[r * C + c] - 1 (x past its end
// reads 0).
PK_KERNEL void t29_i64_reshape(Tensor<i64, 1> x, Tensor<i64, 2> y) {
  for (auto [r, c] : tiles(y.rows(), y.cols(), {1, 64}))
    store(y, reshape<1, 64>(load<64>(x, r * y.cols() + c) - 1), r, c);
}

// 36. A gather next to a plain load: y[t, n] = table[ids[t], n] + table[t, n] (i8, wrapping; ids i32 [T]; a row
// outside the table reads 0).
PK_KERNEL void t29_i8_gather(Tensor<i32, 1> ids, Tensor<i8, 2> table, Tensor<i8, 2> y) {
  for (auto [t, n] : tiles(ids.size(), table.cols(), {16, 64})) {
    auto idx = load<16, 1>(ids, t);
    store(y, load_rows<16, 64>(table, idx, n) + load<16, 64>(table, t, n), t, n);
  }
}

// 37. A scatter: y[slot[t], n] = x[t, n] * 2 (i32; a slot outside y is dropped; slots are distinct).
PK_KERNEL void t29_i32_scatter(Tensor<i32, 1> slot, Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store_rows(y, load<16, 64>(x, t, n) * 2, load<16, 1>(slot, t), n);
}

// 38. Integer tiles into Sym tensors: y (this rank's) [M, N] = x + rank(); z on rank (r + 1) % W gets rank r's
// x at rows r * M (z [W * M, N]).
PK_KERNEL void t29_i32_sym_peer(Tensor<i32, 2> x, Sym<i32, 2> y, Sym<i32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    store(y, t + rank(), m, n);
    store(z.on((rank() + 1) % world_size()), t, m + rank() * x.rows(), n);
  }
}

// 39. i8 tiles into a peer: z on rank (r + 1) % W gets rank r's x - 1 (wrapping) at rows r * M (z [W * M, N]).
PK_KERNEL void t29_i8_peer(Tensor<i8, 2> x, Sym<i8, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64}))
    store(z.on((rank() + 1) % world_size()), load<32, 64>(x, m, n) - 1, m + rank() * x.rows(), n);
}

// i8 tensors and tiles: casts both ways (float to i8 rounds toward zero and saturates, i32 to
// i8 wraps), round / floor / ceil for quantising, arithmetic that wraps at 8 bits, bit operations, an element read as a scalar, rows
// gathered by an i32 index tile, an all-gather of i8 shards, and int8 weights widened to bf16 for
// a GEMM (the template's weight-only form, and the general path's mma).
#include <pk/spec.h>
using namespace pk;

// Per-row quantisation: q = i8(round(x * 127 / amax)) (half-way cases to even), s = amax / 127.
PK_KERNEL void i8_quantise_rows(Tensor<bf16, 2> x, Tensor<i8, 2> q, Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = cast<f32>(load<16, 256>(x, m, 0));
    auto amax = max(row_max(abs(t)), 1e-30f);
    store(q, cast<i8>(round(t * (127.0f / amax))), m, 0);
    store(s, amax * (1.0f / 127.0f), m, 0);
  }
}

// y = q * s, the row's scale broadcast over its columns.
PK_KERNEL void i8_dequantise_rows(Tensor<i8, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 128}))
    store(y, cast<bf16>(cast<f32>(load<16, 128>(q, m, n)) * load<16, 1>(s, m, 0)), m, n);
}

// Casts from f32 (saturating, NaN to 0) and from i32 (wrapping), and i8 arithmetic that wraps:
// c = a + b, d = a * 3 - b, e = (a ^ b) >> 1, f = a << 2, w = i8(v32), g = i32(a) * i32(b).
PK_KERNEL void i8_arith(Tensor<f32, 2> x, Tensor<i32, 2> v, Tensor<i8, 2> a, Tensor<i8, 2> b, Tensor<i8, 2> c,
                        Tensor<i8, 2> d, Tensor<i8, 2> e, Tensor<i8, 2> f, Tensor<i8, 2> w, Tensor<i8, 2> sat,
                        Tensor<i32, 2> g) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) {
    auto ta = load<16, 64>(a, m, n);
    auto tb = load<16, 64>(b, m, n);
    store(c, ta + tb, m, n);
    store(d, ta * 3 - tb, m, n);
    store(e, (ta ^ tb) >> 1, m, n);
    store(f, ta << 2, m, n);
    store(w, cast<i8>(load<16, 64>(v, m, n)), m, n);
    store(sat, cast<i8>(load<16, 64>(x, m, n)), m, n);
    store(g, cast<i32>(ta) * cast<i32>(tb), m, n);
  }
}

// Whole numbers of float tiles: r = round(x) (half-way cases to even), f = floor(x), c = ceil(x).
PK_KERNEL void rounding(Tensor<f32, 2> x, Tensor<f32, 2> r, Tensor<f32, 2> f, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    store(r, round(t), m, n);
    store(f, floor(t), m, n);
    store(c, cast<bf16>(ceil(t)), m, n);
  }
}

// Rows of an i8 table by i32 ids (an int8 embedding), scaled per row: y[r] = table[ids[r]] * s[ids[r]].
PK_KERNEL void i8_embedding(Tensor<i32, 1> ids, Tensor<i8, 2> table, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(ids.size(), y.cols(), {16, 128})) {
    auto idx = load<16, 1>(ids, m);
    auto rows = cast<f32>(load_rows<16, 128>(table, idx, n));
    store(y, cast<bf16>(rows * load_rows<16, 1>(s, idx, 0)), m, n);
  }
}

// The zero point of a row read as a scalar: y = (q - z) * scale, z = zp.at(0).
PK_KERNEL void i8_zero_point(Tensor<i8, 2> q, Tensor<i8, 1> zp, Tensor<f32, 2> y, float scale) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) {
    auto t = cast<i32>(load<16, 64>(q, m, n)) - zp.at(0);
    store(y, cast<f32>(t) * scale, m, n);
  }
}

// Every rank's i8 shard gathered into y along dimension 0.
PK_KERNEL void i8_all_gather(Sym<i8, 2> x, Sym<i8, 2> y) { all_gather(x, y); }

// Weight-only int8: y = (x * i8(w)^T) * s[n], x bf16 [M, K], w i8 [N, K] (per-output-channel scale).
PK_KERNEL void i8_weight_only_gemm(Tensor<bf16, 2> x, Tensor<i8, 2> w, Tensor<f32, 1> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64))
      acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc * load<1, 256>(s, n)), m, n);
  }
}

// W8A8 on the tensor cores' int8 path: acc = x w^T summed exactly in i32 (s8 wgmma on the GEMM
// template), then y = bf16(float(acc) * sx[m] * sw[n]) with per-token and per-channel scales.
PK_KERNEL void i8_w8a8_s32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> sx, Tensor<f32, 1> sw,
                           Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(y, cast<bf16>(cast<f32>(acc) * load<128, 1>(sx, m, 0) * load<1, 256>(sw, n)), m, n);
  }
}

// The raw sums: c = x w^T in i32 (exact; each sum wraps at 32 bits, as the tensor cores' do), and
// with an integer epilogue: d = c - 3 * (c >> 4), an i32 shift and products on the accumulator.
PK_KERNEL void i8_gemm_s32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c, Tensor<i32, 2> d) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, acc, m, n);
  }
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(d, acc - 3 * (acc >> 4), m, n);
  }
}

// W8A8 epilogues that leave the floats: c = i32(rint(float(acc) * s[m])) (requantised sums, the cast
// inside the epilogue), and d = bf16(acc) rounded once from the integer (sums past 2^24 too).
PK_KERNEL void i8_w8a8_requant(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> s, Tensor<i32, 2> c,
                               Tensor<bf16, 2> d) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, cast<i32>(round(cast<f32>(acc) * load<128, 1>(s, m, 0))), m, n);
  }
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(d, cast<bf16>(acc), m, n);
  }
}

// A GEMM whose epilogue reads int8 tensors on the template (8-bit predicated loads): an i8 mask [M, N]
// compared with 0, an i8 zero point per column clamped below by max, and an i8 scale code read as a
// scalar: y = bf16((mk[m, n] != 0 ? acc * code[0] : 0) - max(zp[n], -100)), acc = x w^T.
PK_KERNEL void i8_epilogue_gemm(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<i8, 2> mk, Tensor<i8, 1> zp,
                                Tensor<i8, 1> code, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    auto z = max(load<1, 256>(zp, n), -100);
    store(y, cast<bf16>(where(load<128, 256>(mk, m, n) != 0, acc * float(code.at(0)), 0.0f) - cast<f32>(z)), m, n);
  }
}

// The same in f16 through f32 (any chain of casts that is exact for i8), on 64 x 64 tiles:
// y = x * f16(w)^T with x f16.
PK_KERNEL void i8_weight_only_small(Tensor<f16, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 32))
      acc = mma_t(load<64, 32>(x, m, k), cast<f16>(cast<f32>(load<64, 32>(w, n, k))), acc);
    store(y, acc, m, n);
  }
}

// W8A8: both operands i8, multiplied as bf16 (exact) with the accumulator scaled per row and column:
// y = (i8(x) * i8(w)^T) * sx[m] * sw[n]. A cast in the loop keeps it on the general path (--explain says why).
PK_KERNEL void i8_w8a8(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> sx, Tensor<f32, 1> sw, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 32))
      acc = mma_t(cast<bf16>(load<64, 32>(x, m, k)), cast<bf16>(load<64, 32>(w, n, k)), acc);
    store(y, cast<bf16>(acc * load<64, 1>(sx, m, 0) * load<1, 64>(sw, n)), m, n);
  }
}

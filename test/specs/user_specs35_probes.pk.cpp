// Set 35: silent numeric / indexing errors. 64-bit offsets (tensors past 2^31 elements), integer
// semantics, float edge cases, reductions. Sizes in comments are the ones a user would run.
#include <pk/spec.h>
using namespace pk;

// ---------------- A. 64-bit offsets ----------------

// k01: y = 2x over [70000, 40000] bf16 (2.8e9 elements): every element written, offsets 64-bit.
PK_KERNEL void k01(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) store(y, load<16, 256>(x, m, n) * 2.0f, m, n);
}

// k02: per-row sum of a [3, 2^30] f32 tensor (row stride 2^30, row 2 starts at 2^31): exact row sums.
PK_KERNEL void k02(Tensor<f32, 2> x, Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {1})) {
    auto acc = zeros<f32, 1, 1>();
    for (auto k : range(0, x.cols(), 4096)) acc = acc + row_sum(load<1, 4096>(x, m, k));
    store(s, acc, m, 0);
  }
}

// k03: 4-D [64, 64, 1024, 1024] f32 (2^32 elements), tiles of the trailing [16, 1024]: y = x + 1.
PK_KERNEL void k03(Tensor<f32, 4> x, Tensor<f32, 4> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 1, 16}))
    store(y, load<1, 1, 16, 1024>(x, a, b, c, 0) + 1.0f, a, b, c, 0);
}

// k04: 1-D tensor of 3e9 f32: y = x * x, tiles of 4096 (732422 tiles).
PK_KERNEL void k04(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {4096})) {
    auto t = load<4096>(x, i);
    store(y, t * t, i);
  }
}

// k05: embedding gather from table [3e6, 1024] bf16 (row 2.1e6 * 1024 > 2^31) by i32 ids.
PK_KERNEL void k05(Tensor<i32, 1> ids, Tensor<bf16, 2> table, Tensor<bf16, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 256}))
    store(out, load_rows<16, 256>(table, load<16>(ids, t), n), t, n);
}

// k06: scatter rows into y [3e6, 1024] f32 at i64 slots: row slot[r] * 1024 past 2^31.
PK_KERNEL void k06(Tensor<f32, 2> x, Tensor<i64, 2> slot, Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store_rows(y, load<32, 128>(x, t, n), load<32, 1>(slot, t, 0), n);
}

// k07: scatter-add rows into y [3e6, 1024] f32 by i32 slots (MoE combine into a huge buffer).
PK_KERNEL void k07(Tensor<f32, 2> x, Tensor<i32, 1> slot, Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store_add_rows(y, load<32, 128>(x, t, n), load<32>(slot, t), n);
}

// k08: GEMM on the template with A [65536, 40000] bf16 (M*K = 2.6e9), B [N, K], C bf16.
PK_KERNEL void k08(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// k09: the same product off the template (row sum of the accumulator keeps the general path).
PK_KERNEL void k09(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, Tensor<f32, 2> rs) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
    store_add(rs, row_sum(acc), m, 0);
  }
}

// k10: attention over q,k,v [64, 300000, 128] bf16 (H*S*D = 2.5e9) on the template.
PK_KERNEL void k10(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 128})) {
    auto qt = load<128, 128>(q, h, m, 0);
    auto mx = zeros<f32, 128, 1>() - 1e30f;
    auto l = zeros<f32, 128, 1>();
    auto acc = zeros<f32, 128, 128>();
    for (auto j : range(0, k.dim(1), 128)) {
      auto s = where(col_index<128, 128>(j) < k.dim(1), mma_t(qt, load<128, 128>(k, h, j, 0), zeros<f32, 128, 128>()) * scale, -1e30f);
      auto mn = max(mx, row_max(s));
      auto p = exp(s - mn);
      auto corr = exp(mx - mn);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<128, 128>(v, h, j, 0), acc * corr);
      mx = mn;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// k11: scalar read of a huge [70000, 40000] f32 at (r, c) from arguments; y[0] = x[r, c].
PK_KERNEL void k11(Tensor<f32, 2> x, Tensor<f32, 2> y, index r, index c) {
  for (auto z : tiles(1, {1})) store(y, zeros<f32, 1, 1>() + x.at(r, c), z, 0);
}

// k12: store_add of 64x256 tiles into a [70000, 40000] f32 accumulator (gradient accumulation).
PK_KERNEL void k12(Tensor<f32, 2> g, Tensor<f32, 2> acc) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {64, 256})) store_add(acc, load<64, 256>(g, m, n), m, n);
}

// k13: dW = dY^T X on the A-transposed template, dY [3e6, 1024] (K along 3e6 rows, K*M > 2^31).
PK_KERNEL void k13(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 2> dw) {
  for (auto [m, n] : tiles(dy.cols(), x.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, dy.rows(), 64)) acc = mma(transpose(load<64, 128>(dy, k, m)), load<64, 256>(x, k, n), acc);
    store(dw, acc, m, n);
  }
}

// k14: exact positions past 2^31 columns: y[i] = i (as i64) over a 1-D i64 tensor of 3e9 elements.
PK_KERNEL void k14(Tensor<i64, 1> y) {
  for (auto i : tiles(y.size(), {1024})) store(y, cast<i64>(col_index<1, 1024>(i)), i);
}

// k15: mask by an index past 2^31: y = x where i < hi else 0, 1-D f32 of 3e9, hi ~ 2.5e9.
PK_KERNEL void k15(Tensor<f32, 1> x, Tensor<f32, 1> y, index hi) {
  for (auto i : tiles(x.size(), {1024}))
    store(y, where(reshape<1024>(col_index<1, 1024>(i)) < hi, load<1024>(x, i), 0.0f), i);
}

// k16: all-reduce of a 1-D Sym f32 of 3e9 elements (12 GB): every element summed.
PK_KERNEL void k16(Sym<f32, 1> x, Sym<f32, 1> y) { all_reduce(Sum, x, y); }

// k17: all-gather along dim 1 of [3, 2^30] bf16 (column shards past 2^31).
PK_KERNEL void k17(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_gather(x, y, 1); }

// k18: gather rows of a wide [1000, 3e6] f32 table by i64 ids (row*cols > 2^31), tiles of 8 x 512.
PK_KERNEL void k18(Tensor<i64, 1> ids, Tensor<f32, 2> table, Tensor<f32, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {8, 512}))
    store(out, load_rows<8, 512>(table, load<8>(ids, t), n), t, n);
}

// k19: gather with row ids from a column load (per-thread index path) into [3e6, 1024] bf16.
PK_KERNEL void k19(Tensor<i32, 2> ids, Tensor<bf16, 2> table, Tensor<bf16, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 256}))
    store(out, load_rows<16, 256>(table, load<16, 1>(ids, t, 0) + 1, n), t, n);
}

// ---------------- B. Integer semantics ----------------

// k20: i32 / and % by a constant and by an index: truncation toward zero (C), 0 for / 0.
PK_KERNEL void k20(Tensor<i32, 1> a, Tensor<i32, 1> q, Tensor<i32, 1> r, index d) {
  for (auto i : tiles(a.size(), {1024})) {
    auto v = load<1024>(a, i);
    store(q, v / 3 + v / d, i);
    store(r, v % -3 + v % d, i);
  }
}

// k21: index arithmetic with negatives: origin (off - 7) / 4 and % 4 with off an index (C truncation).
PK_KERNEL void k21(Tensor<f32, 2> x, Tensor<f32, 2> y, index off) {
  index a = (off - 7) / 4;
  index b = (off - 7) % 4;
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64}))
    store(y, load<16, 64>(x, m + a, n) + float(b), m, n);
}

// k22: float -> int casts: NaN -> 0, +-inf and 3e9 saturate (i32, i64, i8).
PK_KERNEL void k22(Tensor<f32, 1> x, Tensor<i32, 1> a, Tensor<i64, 1> b, Tensor<i8, 1> c) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = load<1024>(x, i);
    store(a, cast<i32>(t), i);
    store(b, cast<i64>(t * 1e10f), i);
    store(c, cast<i8>(t), i);
  }
}

// k23: i64 -> f32 / bf16 / f16 casts (nearest, once); f16 of 70000 -> inf as torch.
PK_KERNEL void k23(Tensor<i64, 1> a, Tensor<f32, 1> f, Tensor<bf16, 1> b, Tensor<f16, 1> h) {
  for (auto i : tiles(a.size(), {1024})) {
    auto t = load<1024>(a, i);
    store(f, cast<f32>(t), i);
    store(b, cast<bf16>(t), i);
    store(h, cast<f16>(t), i);
  }
}

// k24: i32 overflow wraps: x * 65536 + 2147483647, abs(INT_MIN), -INT_MIN, INT_MIN / -1.
PK_KERNEL void k24(Tensor<i32, 1> a, Tensor<i32, 1> y) {
  for (auto i : tiles(a.size(), {1024})) {
    auto v = load<1024>(a, i);
    store(y, v * 65536 + 2147483647 + abs(v) + (-v) + v / -1, i);
  }
}

// k25: shifts: << 33 gives 0, >> 40 gives the sign fill, >> of a negative is arithmetic.
PK_KERNEL void k25(Tensor<i32, 1> a, Tensor<i32, 1> s, Tensor<i32, 1> y) {
  for (auto i : tiles(a.size(), {1024})) {
    auto v = load<1024>(a, i);
    auto k = load<1024>(s, i);
    store(y, (v << k) ^ (v >> k) ^ (v << 33) ^ (v >> 40), i);
  }
}

// k26: i64 tile compared with an i32 tile (cast explicitly), and an i64 tile against index 2^40.
PK_KERNEL void k26(Tensor<i64, 1> a, Tensor<i32, 1> b, Tensor<i32, 1> y, index big) {
  for (auto i : tiles(a.size(), {1024})) {
    auto u = load<1024>(a, i);
    auto w = load<1024>(b, i);
    store(y, cast<i32>((u < cast<i64>(w)) && (u < big)), i);
  }
}

// k27: i32 row sums wrap; integer mean row_sum / cols truncates (i32 tile / index).
PK_KERNEL void k27(Tensor<i32, 2> a, Tensor<i32, 2> s, Tensor<i32, 2> mean) {
  for (auto m : tiles(a.rows(), {8})) {
    auto t = load<8, 1024>(a, m, 0);
    store(s, row_sum(t), m, 0);
    store(mean, row_sum(t) / a.cols(), m, 0);
  }
}

// k28: i64 row sums, min and max; i64 / negative index, % negative.
PK_KERNEL void k28(Tensor<i64, 2> a, Tensor<i64, 2> y, index d) {
  for (auto m : tiles(a.rows(), {8})) {
    auto t = load<8, 512>(a, m, 0);
    store(y, row_sum(t) / d + row_max(t) % d - row_min(t), m, 0);
  }
}

// ---------------- C. Float edge semantics ----------------

// k29: softmax of rows masked fully (all -inf after where): torch gives NaN; rows with NaN stay NaN?
PK_KERNEL void k29(Tensor<f32, 2> x, Tensor<f32, 2> keep, Tensor<f32, 2> p, float neg) {
  for (auto m : tiles(x.rows(), {16})) {
    auto s = where(load<16, 256>(keep, m, 0) > 0.5f, load<16, 256>(x, m, 0), neg);
    auto e = exp(s - row_max(s));
    store(p, e / row_sum(e), m, 0);
  }
}

// k30: max / min / row_max with NaN operands (documented: fmaxf drops NaN).
PK_KERNEL void k30(Tensor<f32, 2> a, Tensor<f32, 2> b, Tensor<f32, 2> y, Tensor<f32, 2> r) {
  for (auto m : tiles(a.rows(), {16})) {
    auto u = load<16, 64>(a, m, 0);
    auto v = load<16, 64>(b, m, 0);
    store(y, max(u, v) - min(u, 0.0f), m, 0);
    store(r, row_max(u) + row_min(v), m, 0);
  }
}

// k31: f32 -> f16 of values past 65504 (torch: inf), f32 -> bf16 round-to-nearest-even.
PK_KERNEL void k31(Tensor<f32, 1> x, Tensor<f16, 1> h, Tensor<bf16, 1> b) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = load<1024>(x, i);
    store(h, cast<f16>(t), i);
    store(b, cast<bf16>(t), i);
  }
}

// k32: fp8 casts: e4m3 and e5m2 saturate (documented), NaN stays NaN; back to f32.
PK_KERNEL void k32(Tensor<f32, 1> x, Tensor<f8e4m3, 1> a, Tensor<f8e5m2, 1> b, Tensor<f32, 1> back) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = load<1024>(x, i);
    auto q = cast<f8e4m3>(t);
    store(a, q, i);
    store(b, cast<f8e5m2>(t), i);
    store(back, cast<f32>(q), i);
  }
}

// k33: bf16 arithmetic tile: x + y rounded once per op to bf16 (RNE); f16 tile multiply overflow -> inf.
PK_KERNEL void k33(Tensor<bf16, 1> x, Tensor<bf16, 1> y, Tensor<f16, 1> h, Tensor<bf16, 1> o, Tensor<f16, 1> oh) {
  for (auto i : tiles(x.size(), {1024})) {
    store(o, load<1024>(x, i) + load<1024>(y, i), i);
    auto t = load<1024>(h, i);
    store(oh, t * t, i);
  }
}

// k34: where with a NaN condition (doc: NaN is true), and !(s > 0) of NaN data.
PK_KERNEL void k34(Tensor<f32, 1> c, Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) {
    auto cc = load<1024>(c, i);
    store(y, where(cc, load<1024>(x, i), -1.0f) + where(!(cc > 0.0f), 10.0f, 0.0f), i);
  }
}

// k35: abs(-0.0) = +0, pow of negative bases by 2 and 3 (torch: 4, -8), pow(x, 0.5) of -1 = NaN, pow(0, 0) = 1.
PK_KERNEL void k35(Tensor<f32, 1> x, Tensor<f32, 1> y2, Tensor<f32, 1> y3, Tensor<f32, 1> yh, Tensor<f32, 1> ya) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = load<1024>(x, i);
    store(y2, pow(t, 2.0f), i);
    store(y3, pow(t, 3.0f), i);
    store(yh, pow(t, 0.5f), i);
    store(ya, abs(t) + pow(t, 0.0f), i);
  }
}

// k36: activations at large |x| (+-100, +-1e4, +-inf): gelu, gelu_erf, silu, sigmoid, tanh finite, no NaN.
PK_KERNEL void k36(Tensor<f32, 1> x, Tensor<f32, 2> y) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = reshape<1, 1024>(load<1024>(x, i));
    store(y, gelu(t), 0, i);
    store(y, gelu_erf(t), 1, i);
    store(y, silu(t), 2, i);
    store(y, sigmoid(t), 3, i);
    store(y, tanh(t), 4, i);
    store(y, exp(t), 5, i);
    store(y, log(t), 6, i);
  }
}

// k37: rms norm with eps = 0 of an all-zero row (torch: NaN), and division by a row vector whose value > 2^126.
PK_KERNEL void k37(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<f32, 2> z, float eps) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 256>(x, m, 0);
    store(y, t * rsqrt(row_sum(t * t) * (1.0f / 256.0f) + eps), m, 0);
    store(z, t / row_max(abs(t)), m, 0);
  }
}

// k38: row_sum of a long bf16 row (8192): accumulated in fp32, rounded to bf16 once.
PK_KERNEL void k38(Tensor<bf16, 2> x, Tensor<bf16, 2> s, Tensor<f32, 2> s32) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = load<4, 8192>(x, m, 0);
    store(s, row_sum(t), m, 0);
    store(s32, row_sum(cast<f32>(t)), m, 0);
  }
}

// k39: mean and variance of f32 rows with N an index: row_sum / x.cols() (float division), var = E[x^2] - mean^2.
PK_KERNEL void k39(Tensor<f32, 2> x, Tensor<f32, 2> mu, Tensor<f32, 2> var) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 1000>(x, m, 0);
    auto mean = row_sum(t) / x.cols();
    store(mu, mean, m, 0);
    store(var, row_sum((t - mean) * (t - mean)) * (1.0f / x.cols()), m, 0);
  }
}

// k40: t / v with v an f32 column of huge values (1e38) and tiny ones (1e-39 denormal): 1e30/1e38 = 1e-8.
PK_KERNEL void k40(Tensor<f32, 2> x, Tensor<f32, 2> v, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) store(y, load<16, 256>(x, m, 0) / load<16, 1>(v, m, 0), m, 0);
}

// k41: round/floor/ceil of huge and half-way values; round(2.5) = 2 (even), floor(-0.5) = -1.
PK_KERNEL void k41(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = load<1024>(x, i);
    store(y, round(t) + floor(t) * 8.0f + ceil(t) * 64.0f, i);
  }
}

// k42: cast<i32> of an index tile beyond 2^31 (col_index of a 3e9 column tensor): wrap or saturate?
PK_KERNEL void k42(Tensor<i32, 1> y) {
  for (auto i : tiles(y.size(), {1024})) store(y, cast<i32>(reshape<1024>(col_index<1, 1024>(i))), i);
}

// k43: cumsum of an f16 tile: running sum of 4096 ones (2048 + 1 = 2048 in f16 per op) vs f32.
PK_KERNEL void k43(Tensor<f16, 1> x, Tensor<f16, 1> y) {
  for (auto i : tiles(x.size(), {4096})) store(y, cumsum(load<4096>(x, i)), i);
}

// k44: GEMM template epilogue with integer ops: (col / 0), negative % and i32 bias rows.
PK_KERNEL void k44(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, Tensor<i32, 2> bias, index d) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto bi = load<1, 256>(bias, 0, n);
    store(c, cast<bf16>(acc + cast<f32>(bi / d + bi % d)), m, n);
  }
}

// k45: fp8 quantisation of an all-zero block: scale 448 / row_max(abs(t)) = inf, t * inf = NaN (torch same).
PK_KERNEL void k45(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto t = cast<f32>(load<32, 128>(x, m, n));
    auto amax = row_max(abs(t));
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(s, amax * (1.0f / 448.0f), m, n / 128);
  }
}

// k46: i8 tile arithmetic wraps at 8 bits; cast<i8>(300.f) = 127; cast<i8>(i32 300) wraps to 44.
PK_KERNEL void k46(Tensor<i8, 1> a, Tensor<f32, 1> f, Tensor<i32, 1> w, Tensor<i8, 1> y) {
  for (auto i : tiles(a.size(), {1024})) {
    auto v = load<1024>(a, i);
    store(y, v * 3 + cast<i8>(load<1024>(f, i)) + cast<i8>(load<1024>(w, i)), i);
  }
}

// k47: GEMM template epilogue with a residual r [M, N] (M*N = 4e9 > 2^31) and a row scale s [M, 1]: c = acc * s + r.
PK_KERNEL void k47(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> r, Tensor<f32, 2> s, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * load<128, 1>(s, m, 0) + cast<f32>(load<128, 256>(r, m, n))), m, n);
  }
}

// k48: attention template with a 2-D bias [S, S] (S = 50000: 2.5e9 elements) in the score map.
PK_KERNEL void k48(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<f32, 2> bias, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 128})) {
    auto qt = load<128, 128>(q, h, m, 0);
    auto mx = zeros<f32, 128, 1>() - 1e30f;
    auto l = zeros<f32, 128, 1>();
    auto acc = zeros<f32, 128, 128>();
    for (auto j : range(0, k.dim(1), 128)) {
      auto s = where(col_index<128, 128>(j) < k.dim(1), mma_t(qt, load<128, 128>(k, h, j, 0), zeros<f32, 128, 128>()) * scale + load<128, 128>(bias, m, j), -1e30f);
      auto mn = max(mx, row_max(s));
      auto p = exp(s - mn);
      auto corr = exp(mx - mn);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<128, 128>(v, h, j, 0), acc * corr);
      mx = mn;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// k49: attention with a per-head 3-D bias [H, S, S] (H = 16, S = 16384: 4.3e9 elements).
PK_KERNEL void k49(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, Tensor<bf16, 3> bias, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 128})) {
    auto qt = load<128, 128>(q, h, m, 0);
    auto mx = zeros<f32, 128, 1>() - 1e30f;
    auto l = zeros<f32, 128, 1>();
    auto acc = zeros<f32, 128, 128>();
    for (auto j : range(0, k.dim(1), 128)) {
      auto s = where(col_index<128, 128>(j) < k.dim(1), mma_t(qt, load<128, 128>(k, h, j, 0), zeros<f32, 128, 128>()) * scale + cast<f32>(load<128, 128>(bias, h, m, j)), -1e30f);
      auto mn = max(mx, row_max(s));
      auto p = exp(s - mn);
      auto corr = exp(mx - mn);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<128, 128>(v, h, j, 0), acc * corr);
      mx = mn;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// k50: batched GEMM template with a per-batch residual r [B, M, N] (B*M*N > 2^31) in the epilogue.
PK_KERNEL void k50(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> r, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(acc + cast<f32>(load<128, 256>(r, z, m, n))), z, m, n);
  }
}

// k51: 1-D positions by dim_index<0, 1024>(i) (the 1-D index tile), cast to i64: y[i] = i exactly past 2^24.
PK_KERNEL void k51(Tensor<i64, 1> y) {
  for (auto i : tiles(y.size(), {1024})) store(y, cast<i64>(dim_index<0, 1024>(i)), i);
}

// k52: 1-D mask dim_index<0, 1024>(i) < hi (hi an index ~ 2.5e9): exact i64 compare, as for row_index.
PK_KERNEL void k52(Tensor<f32, 1> x, Tensor<f32, 1> y, index hi) {
  for (auto i : tiles(x.size(), {1024}))
    store(y, where(dim_index<0, 1024>(i) < hi, load<1024>(x, i), 0.0f), i);
}

// k53: the same mask on a [1, N] 2-D view without reshape: col_index<1, 1024>(n) < hi (documented exact).
PK_KERNEL void k53(Tensor<f32, 2> x, Tensor<f32, 2> y, index hi) {
  for (auto n : tiles(x.cols(), {1024}))
    store(y, where(col_index<1, 1024>(n) < hi, load<1, 1024>(x, 0, n), 0.0f), 0, n);
}

// k54: cast<i32> of a reshaped col_index (k42 without the reshape): y[i] = i (i < 2^31), [1, N] i32.
PK_KERNEL void k54(Tensor<i32, 2> y) {
  for (auto n : tiles(y.cols(), {1024})) store(y, cast<i32>(col_index<1, 1024>(n)), 0, n);
}

// k55: row_index of a tall [3e9, 1] column tensor transposed view: rows tiled by 1024, cast<i64>(row_index<1024, 1>(m)).
PK_KERNEL void k55(Tensor<i64, 2> y) {
  for (auto m : tiles(y.rows(), {1024})) store(y, cast<i64>(row_index<1024, 1>(m)), m, 0);
}

// k56: exact row bound through a where chain: keep rows m < hi, hi an index past 2^24 (row_index compared directly).
PK_KERNEL void k56(Tensor<f32, 2> x, Tensor<f32, 2> y, index hi) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64}))
    store(y, where(row_index<64, 64>(m) < hi, load<64, 64>(x, m, n), 0.0f), m, n);
}

// k57: row position + 1 in integers: cast<i64>(row_index<64, 1>(m)) + 1 compared with hi (documented integer form).
PK_KERNEL void k57(Tensor<f32, 2> x, Tensor<f32, 2> y, index hi) {
  for (auto m : tiles(x.rows(), {64}))
    store(y, where(cast<i64>(row_index<64, 1>(m)) + 1 <= hi, load<64, 64>(x, m, 0), 0.0f), m, 0);
}

// k58: exact i32 column sums of a [64, 256] tile via transpose(row_sum(transpose(t))) (counts past 2^24).
PK_KERNEL void k58(Tensor<i32, 2> a, Tensor<i32, 2> y) {
  for (auto z : tiles(1, {1})) store(y, transpose(row_sum(transpose(load<64, 256>(a, 0, 0)))), z, 0);
}

// k59: i32 cumsum past 2^31 wraps (doc: exact for integers, arithmetic wraps).
PK_KERNEL void k59(Tensor<i32, 1> a, Tensor<i32, 1> y) {
  for (auto i : tiles(a.size(), {4096})) store(y, cumsum(load<4096>(a, i)), i);
}

// k60: f32 column max with NaN / -inf via the column-reduction form.
PK_KERNEL void k60(Tensor<bf16, 2> a, Tensor<bf16, 2> y) {
  for (auto n : tiles(a.cols(), {256})) store(y, transpose(row_max(transpose(load<64, 256>(a, 0, n)))), 0, n);
}

// k61: a float converted to an index as C++ does (truncation): h = x.cols() * frac. REFUSED (no float -> index conversion in the language; see findings "also seen").
PK_KERNEL void k61(Tensor<f32, 2> x, Tensor<f32, 2> y, float frac) {
  index h = x.cols() * frac;
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64})) store(y, load<16, 64>(x, m, n + h), m, n);
}

// k62: pow by -0.5, 0.5, 1.5, -1, 4 on a tile: torch.pow semantics (pow(-0, -0.5) = inf, pow(-inf, 0.5) = inf).
PK_KERNEL void k62(Tensor<f32, 1> x, Tensor<f32, 2> y) {
  for (auto i : tiles(x.size(), {1024})) {
    auto t = reshape<1, 1024>(load<1024>(x, i));
    store(y, pow(t, -0.5f), 0, i);
    store(y, pow(t, 1.5f), 1, i);
    store(y, pow(t, -1.0f), 2, i);
    store(y, pow(t, 4.0f), 3, i);
    store(y, pow(t, -4.0f), 4, i);
  }
}

// k63: gather rows by positions made from a reshaped column index: ids = cast<i64>(reshape<16>(col_index<1, 16>(t))) + off (rows past 2^24).
PK_KERNEL void k63(Tensor<f32, 2> table, Tensor<f32, 2> out, index off) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 256}))
    store(out, load_rows<16, 256>(table, cast<i64>(reshape<16>(col_index<1, 16>(t))) + off, n), t, n);
}

// k64: the same with transpose(col_index<1, 16>(t)) as the column of row ids.
PK_KERNEL void k64(Tensor<f32, 2> table, Tensor<f32, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {16, 256}))
    store(out, load_rows<16, 256>(table, cast<i64>(transpose(col_index<1, 16>(t))), n), t, n);
}

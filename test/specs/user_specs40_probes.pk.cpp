// Set 40: twelve small kernels mixing constructs as a new user writes them from docs/language.md (f16 and
// 1-D tensors, odd widths, a scalar read from a tensor in a GEMM epilogue, A·B, a ring shift before a local
// phase, collectives along columns or into a tile phase, a transposed operand, an index-bounded loop, 3-D
// tiles reshaped for row sums, adds into owners, int8 quantisation, rotary halves). test/Compile/user_specs40.test
// compiles them; test/specs/specs40_findings.md says what was checked.
#include <pk/spec.h>
using namespace pk;

// p01: f16 RMSNorm with odd columns (4000), weight row, eps scalar, rows by 4.
PK_KERNEL void p01(Tensor<f16, 2> x, Tensor<f16, 1> w, Tensor<f16, 2> y, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {4, 4096})) {
    auto t = cast<f32>(load<4, 4096>(x, m, n));
    auto r = rsqrt(row_sum(t * t) / float(x.cols()) + eps);
    store(y, cast<f16>(t * r * cast<f32>(load<1, 4096>(w, n))), m, n);
  }
}

// p02: A·B GEMM in f16 with scalar-from-tensor scale and tanh soft cap, f16 out.
PK_KERNEL void p02(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> s, Tensor<f16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, k), load<64, 256>(b, k, n), acc);
    float cap = s.at(0);
    store(c, cast<f16>(tanh(acc / cap) * cap), m, n);
  }
}

// p03: ring shift of 2-D tiles to next rank, then local add in a second phase.
PK_KERNEL void p03(Sym<bf16, 2> x, Sym<bf16, 2> y, Tensor<bf16, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 128}))
    store(y.on(next_rank()), load<64, 128>(x, m, n), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 128}))
    store(z, cast<bf16>(cast<f32>(load<64, 128>(y, m, n)) + cast<f32>(load<64, 128>(x, m, n))), m, n);
}

// p04: all_gather along columns then a row softmax of the gathered tensor in the same kernel.
PK_KERNEL void p04(Sym<bf16, 2> x, Sym<bf16, 2> g, Tensor<bf16, 2> y) {
  all_gather(x, g, 1);
  for (auto [m, n] : tiles(g.rows(), g.cols(), {1, 1024})) {
    auto t = cast<f32>(load<1, 1024>(g, m, n));
    auto e = exp(t - row_max(t));
    store(y, cast<bf16>(e / row_sum(e)), m, n);
  }
}

// p05: transposed load then mma_t (a tile of B read as [K, N] and transposed).
PK_KERNEL void p05(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), transpose(load<32, 64>(b, k, n)), acc);
    store(c, acc, m, n);
  }
}

// p06: integer scalar argument bounding a loop and masking columns.
PK_KERNEL void p06(Tensor<f32, 2> x, Tensor<f32, 2> y, index keep) {
  for (auto [m, n] : tiles(x.rows(), min(x.cols(), keep), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    auto col = col_index<16, 64>(n);
    store(y, where(col < keep - 1, t * 2.0f, t), m, n);
  }
}

// p07: reduce_scatter sum of a 2-D tensor along rows, then scale in place.
PK_KERNEL void p07(Sym<f32, 2> x, Sym<f32, 2> y, float s) {
  reduce_scatter(Sum, x, y);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {8, 256}))
    store(y, load<8, 256>(y, m, n) * s, m, n);
}

// p08: layer norm over a 3-D tensor's last dim: 3-D tiles reshaped to 2-D for the row sums.
PK_KERNEL void p08(Tensor<bf16, 3> x, Tensor<bf16, 3> y) {
  for (auto [b, m, n] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 2, 512})) {
    auto t = reshape<2, 512>(cast<f32>(load<1, 2, 512>(x, b, m, n)));
    auto mu = row_sum(t) / float(x.dim(2));
    auto d = t - mu;
    store(y, reshape<1, 2, 512>(cast<bf16>(d * rsqrt(row_sum(d * d) / float(x.dim(2)) + 1e-5f))), b, m, n);
  }
}

// p09: silu(x) * y with f16 in, bf16 out, 1-D tensors.
PK_KERNEL void p09(Tensor<f16, 1> x, Tensor<f16, 1> y, Tensor<bf16, 1> z) {
  for (auto i : tiles(x.size(), {2048}))
    store(z, cast<bf16>(silu(cast<f32>(load<2048>(x, i))) * cast<f32>(load<2048>(y, i))), i);
}

// p10: store_add into peer (tiles added into owners), rows split by rank.
PK_KERNEL void p10(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    index owner = (m / 32) % world_size();
    store_add(y.on(owner), load<32, 128>(x, m, n), m, n);
  }
}

// p11: quantise rows to int8 with per-row scale; dequantise check written back.
PK_KERNEL void p11(Tensor<bf16, 2> x, Tensor<i8, 2> q, Tensor<f32, 2> scale) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 1024})) {
    auto t = cast<f32>(load<16, 1024>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-8f);
    store(q, cast<i8>(round(t * (127.0f / amax))), m, n);
    store(scale, amax / 127.0f, m, 0);
  }
}

// p12: rotary embedding with cos/sin tables, half-split.
PK_KERNEL void p12(Tensor<bf16, 2> x, Tensor<f32, 2> cs, Tensor<f32, 2> sn, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols() / 2, {16, 64})) {
    auto a = cast<f32>(load<16, 64>(x, m, n));
    auto b = cast<f32>(load<16, 64>(x, m, n + x.cols() / 2));
    auto c = load<16, 64>(cs, m, n), s = load<16, 64>(sn, m, n);
    store(y, cast<bf16>(a * c - b * s), m, n);
    store(y, cast<bf16>(b * c + a * s), m, n + x.cols() / 2);
  }
}

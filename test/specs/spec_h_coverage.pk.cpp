// spec.h coverage: one short kernel per construct that pk/spec.h declares (every function,
// overload, element type, tensor kind and rank 1-4, collective with each optional argument,
// and the pk::prim primitives), each a minimal legal use. Every kernel here compiles to an
// sm_90a cubin (test/Compile/spec_h_coverage.test). Declared constructs that pkc rejects or
// miscompiles are not here: test/specs/audit_findings.md lists them with reproducers
// (load_peer_smem, Tma and Multimem primitives and Origin2 loop variables now lower:
// test/Emitter/prim-tma-ldst.cpp, prim-multimem-ldst.cpp, test/Frontend/origin-loop.cpp;
// Multimem on a move to or from one peer is an error, Frontend/reject/multimem-one-peer.cpp).
#include <pk/spec.h>
using namespace pk;

// ---- element types ----

// Tensor<bf16, 2> load/store round trip.
PK_KERNEL void copy_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}

// Tensor<f16, 2> load/store round trip.
PK_KERNEL void copy_f16(Tensor<f16, 2> x, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}

// Tensor<f32, 2> load/store round trip.
PK_KERNEL void copy_f32(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}

// Tensor<f8e4m3, 2> load/store round trip.
PK_KERNEL void copy_f8e4m3(Tensor<f8e4m3, 2> x, Tensor<f8e4m3, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}

// Tensor<f8e5m2, 2> load/store round trip.
PK_KERNEL void copy_f8e5m2(Tensor<f8e5m2, 2> x, Tensor<f8e5m2, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}

// Tensor<i32, 2> load/store round trip.
PK_KERNEL void copy_i32(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}

// Tensor<i64, 2> load/store round trip.
PK_KERNEL void copy_i64(Tensor<i64, 2> x, Tensor<i64, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}

// ---- tensor kinds and ranks ----

// Tensor rank 1, 1-D tile loop.
PK_KERNEL void rank1(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * 2.0f, i);
}

// Tensor rank 3, 3-D tile loop and 3-D tiles.
PK_KERNEL void rank3(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 16, 32})) store(y, load<2, 16, 32>(x, a, b, c), a, b, c);
}

// Tensor rank 4, 4-D tiles inside a 3-D loop plus a range loop.
PK_KERNEL void rank4(Tensor<f32, 4> x, Tensor<f32, 4> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 2, 16}))
    for (auto d : range(0, x.dim(3), 32)) store(y, load<1, 2, 16, 32>(x, a, b, c, d), a, b, c, d);
}

// Rank-4 tensor, 2-D tile of the trailing dimensions.
PK_KERNEL void rank4_trailing(Tensor<f32, 4> x, Tensor<f32, 4> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 1, 16})) store(y, load<16, 32>(x, a, b, c, 0), a, b, c, 0);
}

// Sym rank 1 as a tile loop source and destination.
PK_KERNEL void sym_rank1(Sym<f32, 1> x, Sym<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i), i);
}

// Sym rank 2 as a tile loop source and destination.
PK_KERNEL void sym_rank2(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto i : tiles(x.size(), {16})) store(y, load<16, 32>(x, i, 0), i, 0);
}

// Sym rank 3 as a tile loop source and destination.
PK_KERNEL void sym_rank3(Sym<f32, 3> x, Sym<f32, 3> y) {
  for (auto i : tiles(x.size(), {2})) store(y, load<2, 16, 32>(x, i, 0, 0), i, 0, 0);
}

// Sym rank 4 as a tile loop source and destination.
PK_KERNEL void sym_rank4(Sym<f32, 4> x, Sym<f32, 4> y) {
  for (auto i : tiles(x.size(), {1})) store(y, load<1, 2, 16, 32>(x, i, 0, 0, 0), i, 0, 0, 0);
}

// Scratch as a tile-loop destination, then all-reduced.
PK_KERNEL void scratch(Tensor<f32, 2> x, Scratch<f32, 2> s, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(s, load<16, 32>(x, m, n), m, n);
  all_reduce(Sum, s, y);
}

// ---- sizes, ranks and scalar reads ----

// rows, cols, size, dim and the rank queries as index arithmetic.
PK_KERNEL void sizes(Tensor<f32, 2> x, Tensor<i64, 1> y) {
  for (auto i : tiles(1, {1})) {
    index v = x.rows() + x.cols() * 3 - x.size() / 2 + x.dim(1) % 5 + rank() + world_size() + next_rank() + prev_rank();
    store(y, zeros<i64, 1>() + v, i);
  }
}

// Sym sizes: rows, cols, size, dim.
PK_KERNEL void sym_sizes(Sym<f32, 2> x, Tensor<i64, 1> y) {
  for (auto i : tiles(1, {1})) store(y, zeros<i64, 1>() + (x.rows() + x.cols() + x.size() + x.dim(1)), i);
}

// Tensor::at with 1 indices (float tensor) as a float scalar.
PK_KERNEL void at1(Tensor<f32, 1> s, Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {256})) store(y, zeros<f32, 256>() + s.at(0), i);
}

// Tensor::at with 2 indices (float tensor) as a float scalar.
PK_KERNEL void at2(Tensor<f32, 2> s, Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {256})) store(y, zeros<f32, 256>() + s.at(0, 1), i);
}

// Tensor::at with 3 indices (float tensor) as a float scalar.
PK_KERNEL void at3(Tensor<f32, 3> s, Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {256})) store(y, zeros<f32, 256>() + s.at(0, 1, 2), i);
}

// Tensor::at with 4 indices (float tensor) as a float scalar.
PK_KERNEL void at4(Tensor<f32, 4> s, Tensor<f32, 1> y) {
  for (auto i : tiles(y.size(), {256})) store(y, zeros<f32, 256>() + s.at(0, 1, 2, 3), i);
}

// Tensor<i32>::at as an index bounding a tile loop.
PK_KERNEL void at_int(Tensor<i32, 1> counts, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(counts.at(0), x.cols(), {16, 32})) store(y, load<16, 32>(x, m, n), m, n);
}

// Tensor<i64>::at as an index.
PK_KERNEL void at_i64(Tensor<i64, 2> counts, Tensor<i64, 1> y) {
  for (auto i : tiles(y.size(), {64})) store(y, zeros<i64, 64>() + counts.at(1, 2), i);
}

// ---- sequential loops ----

// range with the default step (two arguments).
PK_KERNEL void range2(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 32>();
    for (auto j : range(0, 4)) acc = acc + load<16, 32>(x, m, j * 32);
    store(y, acc, m, 0);
  }
}

// range with run-time bounds and step.
PK_KERNEL void range_runtime(Tensor<f32, 2> x, Tensor<f32, 2> y, index s) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : range(0, x.cols(), s)) store(y, load<16, 32>(x, m, n), m, n);
}

// range carrying an index and a float.
PK_KERNEL void range_carry(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    float w = 1.0f;
    index c = 0;
    for (auto j : range(0, 4, 1)) { w = w * 0.5f; c = c + j; }
    store(y, load<256>(x, i) * w + float(c), i);
  }
}

// ---- loads, stores, mma, element-wise ops, transpose ----

// load_smem from a Tensor, as mma operands.
PK_KERNEL void load_smem_tensor(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto kk : range(0, a.cols(), 32)) acc = mma(load_smem<64, 32>(a, m, kk), load_smem<32, 64>(b, kk, n), acc);
    store(c, acc, m, n);
  }
}

// load_smem from a Sym.
PK_KERNEL void load_smem_sym(Sym<bf16, 2> a, Sym<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto kk : range(0, a.cols(), 32)) acc = mma_t(load_smem<64, 32>(a, m, kk), load_smem<64, 32>(b, n, kk), acc);
    store(c, acc, m, n);
  }
}

// mma with register operands, f16, general path (f32 out).
PK_KERNEL void mma_regs(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {32, 32})) {
    auto acc = zeros<f32, 32, 32>();
    for (auto kk : range(0, a.cols(), 16)) acc = mma(load<32, 16>(a, m, kk), load<16, 32>(b, kk, n), acc);
    store(c, acc, m, n);
  }
}

// mma_t with fp8 operands (e4m3 x e5m2).
PK_KERNEL void mma_t_fp8(Tensor<f8e4m3, 2> a, Tensor<f8e5m2, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto kk : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, kk), load<64, 32>(b, n, kk), acc);
    store(c, acc, m, n);
  }
}

// the Hopper GEMM loop shape (bf16 out).
PK_KERNEL void gemm_template(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto kk : range(0, a.cols(), 64)) acc = mma(load<128, 64>(a, m, kk), load<64, 256>(b, kk, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// tile-tile + - * / and unary -, max, min.
PK_KERNEL void binary_ops(Tensor<f32, 2> x, Tensor<f32, 2> z, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto a = load<16, 32>(x, m, n);
    auto b = load<16, 32>(z, m, n);
    store(y, max(a + b, a - b) * min(a, b) / (b + 1.0f) + (-a), m, n);
  }
}

// broadcast of an M x 1 and a 1 x N tile (outer product).
PK_KERNEL void broadcast_row_col(Tensor<f32, 2> u, Tensor<f32, 2> v, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 32})) store(y, load<16, 1>(u, m, 0) * load<1, 32>(v, 0, n), m, n);
}

// transpose of a 16 x 32 tile.
PK_KERNEL void transpose_t(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, transpose(load<16, 32>(x, m, n)), n, m);
}

// transpose of an integer tile.
PK_KERNEL void transpose_i32(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, transpose(load<16, 32>(x, m, n)), n, m);
}

// ---- math on tiles ----

// exp of a tile.
PK_KERNEL void tile_exp(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, exp(load<16, 32>(x, m, n)), m, n);
}

// sqrt of a tile.
PK_KERNEL void tile_sqrt(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, sqrt(load<16, 32>(x, m, n)), m, n);
}

// rsqrt of a tile.
PK_KERNEL void tile_rsqrt(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, rsqrt(load<16, 32>(x, m, n)), m, n);
}

// log of a tile.
PK_KERNEL void tile_log(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, log(load<16, 32>(x, m, n)), m, n);
}

// tanh of a tile.
PK_KERNEL void tile_tanh(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, tanh(load<16, 32>(x, m, n)), m, n);
}

// sigmoid of a tile.
PK_KERNEL void tile_sigmoid(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, sigmoid(load<16, 32>(x, m, n)), m, n);
}

// silu of a tile.
PK_KERNEL void tile_silu(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, silu(load<16, 32>(x, m, n)), m, n);
}

// gelu of a tile.
PK_KERNEL void tile_gelu(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, gelu(load<16, 32>(x, m, n)), m, n);
}

// gelu_erf of a tile.
PK_KERNEL void tile_gelu_erf(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, gelu_erf(load<16, 32>(x, m, n)), m, n);
}

// sin of a tile.
PK_KERNEL void tile_sin(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, sin(load<16, 32>(x, m, n)), m, n);
}

// cos of a tile.
PK_KERNEL void tile_cos(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cos(load<16, 32>(x, m, n)), m, n);
}

// abs of a tile.
PK_KERNEL void tile_abs(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, abs(load<16, 32>(x, m, n)), m, n);
}

// pow of a tile.
PK_KERNEL void tile_pow(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, pow(load<16, 32>(x, m, n), 3.0f), m, n);
}

// ---- math on float scalars ----

// exp of a float scalar.
PK_KERNEL void scalar_exp(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * exp(s), i);
}

// sqrt of a float scalar.
PK_KERNEL void scalar_sqrt(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * sqrt(s), i);
}

// rsqrt of a float scalar.
PK_KERNEL void scalar_rsqrt(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * rsqrt(s), i);
}

// log of a float scalar.
PK_KERNEL void scalar_log(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * log(s), i);
}

// tanh of a float scalar.
PK_KERNEL void scalar_tanh(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * tanh(s), i);
}

// sigmoid of a float scalar.
PK_KERNEL void scalar_sigmoid(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * sigmoid(s), i);
}

// silu of a float scalar.
PK_KERNEL void scalar_silu(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * silu(s), i);
}

// gelu of a float scalar.
PK_KERNEL void scalar_gelu(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * gelu(s), i);
}

// gelu_erf of a float scalar.
PK_KERNEL void scalar_gelu_erf(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * gelu_erf(s), i);
}

// sin of a float scalar.
PK_KERNEL void scalar_sin(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * sin(s), i);
}

// cos of a float scalar.
PK_KERNEL void scalar_cos(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * cos(s), i);
}

// abs of a float scalar.
PK_KERNEL void scalar_abs(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * abs(s), i);
}

// pow, max, min of float scalars.
PK_KERNEL void scalar_pow_max_min(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * pow(s, 2.0f) + max(s, 1e-6f) - min(s, 0.5f), i);
}

// ---- float scalars beside tiles ----

// tile-float and float-tile + - * /, max and min with a float.
PK_KERNEL void float_splat_all(Tensor<f16, 2> x, Tensor<f16, 2> y, float s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto t = load<16, 32>(x, m, n);
    store(y, min(max((t + s) * (s - t) - (s * t) / (t / s + (1.0f + t)), 0.25f), s), m, n);
  }
}

// ---- integer scalars beside integer tiles ----

// integer tile with a int scalar on both sides of + - * / %, max, min.
PK_KERNEL void int_scalar_int(Tensor<i32, 1> x, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    auto t = load<256>(x, i);
    store(y, max(min((t + 3) * (3 - t) - (3 * t) / (t / 3 + 3 / (t + 1)) + t % 3 + 3 % (t + 1), 3), 3), i);
  }
}

// integer tile with a long scalar on both sides of + - * / %, max, min.
PK_KERNEL void int_scalar_long(Tensor<i32, 1> x, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    auto t = load<256>(x, i);
    store(y, max(min((t + 3L) * (3L - t) - (3L * t) / (t / 3L + 3L / (t + 1)) + t % 3L + 3L % (t + 1), 3L), 3L), i);
  }
}

// integer tile with a long long scalar on both sides of + - * / %, max, min.
PK_KERNEL void int_scalar_long_long(Tensor<i32, 1> x, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    auto t = load<256>(x, i);
    store(y, max(min((t + 3LL) * (3LL - t) - (3LL * t) / (t / 3LL + 3LL / (t + 1)) + t % 3LL + 3LL % (t + 1), 3LL), 3LL), i);
  }
}

// integer tile with a unsigned scalar on both sides of + - * / %, max, min.
PK_KERNEL void int_scalar_unsigned(Tensor<i32, 1> x, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    auto t = load<256>(x, i);
    store(y, max(min((t + 3u) * (3u - t) - (3u * t) / (t / 3u + 3u / (t + 1)) + t % 3u + 3u % (t + 1), 3u), 3u), i);
  }
}

// integer tile with a unsigned long scalar on both sides of + - * / %, max, min.
PK_KERNEL void int_scalar_unsigned_long(Tensor<i32, 1> x, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    auto t = load<256>(x, i);
    store(y, max(min((t + 3ul) * (3ul - t) - (3ul * t) / (t / 3ul + 3ul / (t + 1)) + t % 3ul + 3ul % (t + 1), 3ul), 3ul), i);
  }
}

// an i64 tile with an index scalar (rank()).
PK_KERNEL void int_index_scalar(Tensor<i64, 1> x, Tensor<i64, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) - rank() * x.size(), i);
}

// integer tile-tile % and - abs max min.
PK_KERNEL void int_tile_ops(Tensor<i32, 1> x, Tensor<i32, 1> z, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    auto a = load<256>(x, i);
    auto b = load<256>(z, i);
    store(y, abs(-(a % b)) + max(a, b) - min(a, b) * (a / b), i);
  }
}

// ---- casts ----

// cast from f32 to bf16.
PK_KERNEL void cast_f32_bf16(Tensor<f32, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<bf16>(load<16, 32>(x, m, n)), m, n);
}

// cast from bf16 to f32.
PK_KERNEL void cast_bf16_f32(Tensor<bf16, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<f32>(load<16, 32>(x, m, n)), m, n);
}

// cast from f32 to f16.
PK_KERNEL void cast_f32_f16(Tensor<f32, 2> x, Tensor<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<f16>(load<16, 32>(x, m, n)), m, n);
}

// cast from f32 to f8e4m3.
PK_KERNEL void cast_f32_f8e4m3(Tensor<f32, 2> x, Tensor<f8e4m3, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<f8e4m3>(load<16, 32>(x, m, n)), m, n);
}

// cast from f32 to f8e5m2.
PK_KERNEL void cast_f32_f8e5m2(Tensor<f32, 2> x, Tensor<f8e5m2, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<f8e5m2>(load<16, 32>(x, m, n)), m, n);
}

// cast from f8e4m3 to f32.
PK_KERNEL void cast_f8e4m3_f32(Tensor<f8e4m3, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<f32>(load<16, 32>(x, m, n)), m, n);
}

// cast from f32 to i32.
PK_KERNEL void cast_f32_i32(Tensor<f32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<i32>(load<16, 32>(x, m, n)), m, n);
}

// cast from i32 to f32.
PK_KERNEL void cast_i32_f32(Tensor<i32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<f32>(load<16, 32>(x, m, n)), m, n);
}

// cast from i64 to i32.
PK_KERNEL void cast_i64_i32(Tensor<i64, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<i32>(load<16, 32>(x, m, n)), m, n);
}

// cast from i32 to i64.
PK_KERNEL void cast_i32_i64(Tensor<i32, 2> x, Tensor<i64, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<i64>(load<16, 32>(x, m, n)), m, n);
}

// cast from f16 to i64.
PK_KERNEL void cast_f16_i64(Tensor<f16, 2> x, Tensor<i64, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<i64>(load<16, 32>(x, m, n)), m, n);
}

// cast from bf16 to f8e4m3.
PK_KERNEL void cast_bf16_f8e4m3(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, cast<f8e4m3>(load<16, 32>(x, m, n)), m, n);
}

// ---- cumsum and histogram ----

// cumsum of a 1-D f32 tile.
PK_KERNEL void cumsum_f32(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024})) store(y, cumsum(load<1024>(x, i)), i);
}

// cumsum of a 1-D i32 tile.
PK_KERNEL void cumsum_i32(Tensor<i32, 1> x, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, cumsum(load<256>(x, i)), i);
}

// cumsum of a 1-D bf16 tile.
PK_KERNEL void cumsum_bf16(Tensor<bf16, 1> x, Tensor<bf16, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, cumsum(load<256>(x, i)), i);
}

// histogram of a 2-D i64 tile.
PK_KERNEL void histogram_i64_2d(Tensor<i64, 2> x, Tensor<i32, 1> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, histogram<64>(load<16, 32>(x, m, n)), 0);
}

// histogram of a 1-D i32 tile.
PK_KERNEL void histogram_i32(Tensor<i32, 1> x, Tensor<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, histogram<8>(load<256>(x, i)), 0);
}

// ---- comparisons ----

// comparison <: tile-tile, tile-float and int tile-int scalar.
PK_KERNEL void cmp_lt(Tensor<f32, 2> x, Tensor<f32, 2> z, Tensor<i32, 2> ix, Tensor<f32, 2> y, Tensor<i32, 2> iy) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto a = load<16, 32>(x, m, n);
    store(y, (a < load<16, 32>(z, m, n)) + (a < 0.5f), m, n);
    store(iy, load<16, 32>(ix, m, n) < 7, m, n);
  }
}

// comparison <=: tile-tile, tile-float and int tile-int scalar.
PK_KERNEL void cmp_le(Tensor<f32, 2> x, Tensor<f32, 2> z, Tensor<i32, 2> ix, Tensor<f32, 2> y, Tensor<i32, 2> iy) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto a = load<16, 32>(x, m, n);
    store(y, (a <= load<16, 32>(z, m, n)) + (a <= 0.5f), m, n);
    store(iy, load<16, 32>(ix, m, n) <= 7, m, n);
  }
}

// comparison >: tile-tile, tile-float and int tile-int scalar.
PK_KERNEL void cmp_gt(Tensor<f32, 2> x, Tensor<f32, 2> z, Tensor<i32, 2> ix, Tensor<f32, 2> y, Tensor<i32, 2> iy) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto a = load<16, 32>(x, m, n);
    store(y, (a > load<16, 32>(z, m, n)) + (a > 0.5f), m, n);
    store(iy, load<16, 32>(ix, m, n) > 7, m, n);
  }
}

// comparison >=: tile-tile, tile-float and int tile-int scalar.
PK_KERNEL void cmp_ge(Tensor<f32, 2> x, Tensor<f32, 2> z, Tensor<i32, 2> ix, Tensor<f32, 2> y, Tensor<i32, 2> iy) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto a = load<16, 32>(x, m, n);
    store(y, (a >= load<16, 32>(z, m, n)) + (a >= 0.5f), m, n);
    store(iy, load<16, 32>(ix, m, n) >= 7, m, n);
  }
}

// comparison ==: tile-tile, tile-float and int tile-int scalar.
PK_KERNEL void cmp_eq(Tensor<f32, 2> x, Tensor<f32, 2> z, Tensor<i32, 2> ix, Tensor<f32, 2> y, Tensor<i32, 2> iy) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto a = load<16, 32>(x, m, n);
    store(y, (a == load<16, 32>(z, m, n)) + (a == 0.5f), m, n);
    store(iy, load<16, 32>(ix, m, n) == 7, m, n);
  }
}

// comparison !=: tile-tile, tile-float and int tile-int scalar.
PK_KERNEL void cmp_ne(Tensor<f32, 2> x, Tensor<f32, 2> z, Tensor<i32, 2> ix, Tensor<f32, 2> y, Tensor<i32, 2> iy) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto a = load<16, 32>(x, m, n);
    store(y, (a != load<16, 32>(z, m, n)) + (a != 0.5f), m, n);
    store(iy, load<16, 32>(ix, m, n) != 7, m, n);
  }
}

// ---- where and index tiles ----

// all five where overloads.
PK_KERNEL void where_all(Tensor<f32, 2> x, Tensor<i32, 2> ix, Tensor<f32, 2> y, Tensor<i32, 2> iy) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto a = load<16, 32>(x, m, n);
    auto c = a > 0.0f;
    store(y, where(c, a, -a) + where(c, a, 1.0f) + where(c, 2.0f, a), m, n);
    auto i = load<16, 32>(ix, m, n);
    auto ic = i > 0;
    store(iy, where(ic, i, 5) + where(ic, 5, i) + where(c, i, -i), m, n);
  }
}

// row_index and col_index.
PK_KERNEL void iota(Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 32})) store(y, row_index<16, 32>(m) * 1000.0f + col_index<16, 32>(n), m, n);
}

// ---- row reductions ----

// row_sum of a bf16 tile.
PK_KERNEL void row_sum_k(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) store(y, row_sum(load<16, 64>(x, m, 0)), m, 0);
}

// row_max of a bf16 tile.
PK_KERNEL void row_max_k(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) store(y, row_max(load<16, 64>(x, m, 0)), m, 0);
}

// row_min of a bf16 tile.
PK_KERNEL void row_min_k(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) store(y, row_min(load<16, 64>(x, m, 0)), m, 0);
}

// ---- gathers, scatters and claims ----

// load_rows from a Tensor by an i32 index tile.
PK_KERNEL void load_rows_Tensor(Tensor<bf16, 2> table, Tensor<i32, 1> ids, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(ids.size(), y.cols(), {16, 64})) store(y, load_rows<16, 64>(table, load<16>(ids, m), n), m, n);
}

// store_rows and store_add_rows into a Tensor by an i64 (R x 1) index tile.
PK_KERNEL void store_rows_Tensor(Tensor<f32, 2> x, Tensor<i64, 2> slots, Tensor<f32, 2> y, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    auto s = load<16, 1>(slots, m, 0);
    store_rows(y, t, s, n);
    store_add_rows(z, t, s, n);
  }
}

// load_rows from a Sym by an i32 index tile.
PK_KERNEL void load_rows_Sym(Sym<bf16, 2> table, Tensor<i32, 1> ids, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(ids.size(), y.cols(), {16, 64})) store(y, load_rows<16, 64>(table, load<16>(ids, m), n), m, n);
}

// store_rows and store_add_rows into a Sym by an i64 (R x 1) index tile.
PK_KERNEL void store_rows_Sym(Tensor<f32, 2> x, Tensor<i64, 2> slots, Sym<f32, 2> y, Sym<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    auto s = load<16, 1>(slots, m, 0);
    store_rows(y, t, s, n);
    store_add_rows(z, t, s, n);
  }
}

// load_rows from a peer's copy.
PK_KERNEL void load_rows_peer(Sym<bf16, 2> table, Tensor<i32, 1> ids, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(ids.size(), y.cols(), {16, 64})) store(y, load_rows<16, 64>(table.on(next_rank()), load<16>(ids, m), n), m, n);
}

// store_rows into a peer's copy.
PK_KERNEL void store_rows_peer(Tensor<f32, 2> x, Tensor<i32, 1> slots, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store_rows(y.on(next_rank()), load<16, 64>(x, m, n), load<16>(slots, m), n);
}

// store_add_rows into a peer's copy.
PK_KERNEL void store_add_rows_peer(Tensor<f32, 2> x, Tensor<i32, 1> slots, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store_add_rows(y.on(next_rank()), load<16, 64>(x, m, n), load<16>(slots, m), n);
}

// claim from a Tensor counter.
PK_KERNEL void claim_Tensor(Tensor<i32, 1> fill, Tensor<i32, 1> experts, Tensor<i32, 1> slot) {
  for (auto i : tiles(experts.size(), {256})) store(slot, claim(fill, load<256>(experts, i)), i);
}

// claim from a Sym counter.
PK_KERNEL void claim_Sym(Sym<i32, 1> fill, Tensor<i32, 1> experts, Tensor<i32, 1> slot) {
  for (auto i : tiles(experts.size(), {256})) store(slot, claim(fill, load<256>(experts, i)), i);
}

// claim with an i64 counter and i64 index tile.
PK_KERNEL void claim_i64(Tensor<i64, 1> fill, Tensor<i64, 1> experts, Tensor<i64, 1> slot) {
  for (auto i : tiles(experts.size(), {256})) store(slot, claim(fill, load<256>(experts, i)), i);
}

// ---- tiles to and from peers ----

// store into a peer's copy (ring shift).
PK_KERNEL void peer_store(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y.on(next_rank()), load<16, 32>(x, m, n), m, n);
}

// store_add into a peer's copy (f32, bf16, i32, i64).
PK_KERNEL void peer_store_add(Tensor<f32, 2> x, Sym<f32, 2> y, Tensor<bf16, 2> xb, Sym<bf16, 2> yb, Tensor<i32, 2> xi, Sym<i32, 2> yi, Tensor<i64, 2> xl, Sym<i64, 2> yl) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    store_add(y.on(0), load<16, 32>(x, m, n), m, n);
    store_add(yb.on(0), load<16, 32>(xb, m, n), m, n);
    store_add(yi.on(0), load<16, 32>(xi, m, n), m, n);
    store_add(yl.on(0), load<16, 32>(xl, m, n), m, n);
  }
}

// store_add of f16 into a peer.
PK_KERNEL void peer_store_add_f16(Tensor<f16, 2> x, Sym<f16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store_add(y.on(prev_rank()), load<16, 32>(x, m, n), m, n);
}

// load from a peer's copy.
PK_KERNEL void peer_load(Sym<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<16, 32>(x.on(prev_rank()), m, n), m, n);
}

// a peer's copy named once (auto ny = y.on(p)).
PK_KERNEL void peer_named(Tensor<f32, 2> x, Sym<f32, 2> y) {
  auto ny = y.on(next_rank());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(ny, load<16, 32>(x, m, n), m, n);
}

// peer load of a trailing 2-D tile of a 3-D Sym.
PK_KERNEL void peer_3d(Sym<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16})) store(y, load<16, 32>(x.on(next_rank()), h, m, 0), h, m, 0);
}

// ---- collectives (every optional argument) ----

// all_reduce(Sum) into a Sym.
PK_KERNEL void all_reduce_Sum(Sym<f32, 1> x, Sym<f32, 1> y) { all_reduce(Sum, x, y); }

// reduce_scatter(Sum) into a local Tensor.
PK_KERNEL void reduce_scatter_Sum(Sym<bf16, 2> x, Tensor<bf16, 2> y) { reduce_scatter(Sum, x, y); }

// reduce(Sum) to a run-time root.
PK_KERNEL void reduce_Sum(Sym<f32, 2> x, Sym<f32, 2> y, index root) { reduce(Sum, x, y, root); }

// all_reduce(Max) into a Sym.
PK_KERNEL void all_reduce_Max(Sym<f32, 1> x, Sym<f32, 1> y) { all_reduce(Max, x, y); }

// reduce_scatter(Max) into a local Tensor.
PK_KERNEL void reduce_scatter_Max(Sym<bf16, 2> x, Tensor<bf16, 2> y) { reduce_scatter(Max, x, y); }

// reduce(Max) to a run-time root.
PK_KERNEL void reduce_Max(Sym<f32, 2> x, Sym<f32, 2> y, index root) { reduce(Max, x, y, root); }

// all_reduce(Min) into a Sym.
PK_KERNEL void all_reduce_Min(Sym<f32, 1> x, Sym<f32, 1> y) { all_reduce(Min, x, y); }

// reduce_scatter(Min) into a local Tensor.
PK_KERNEL void reduce_scatter_Min(Sym<bf16, 2> x, Tensor<bf16, 2> y) { reduce_scatter(Min, x, y); }

// reduce(Min) to a run-time root.
PK_KERNEL void reduce_Min(Sym<f32, 2> x, Sym<f32, 2> y, index root) { reduce(Min, x, y, root); }

// all_reduce into a local Tensor.
PK_KERNEL void all_reduce_tensor_out(Sym<f16, 2> x, Tensor<f16, 2> y) { all_reduce(Sum, x, y); }

// all_reduce of i32.
PK_KERNEL void all_reduce_i32(Sym<i32, 1> x, Sym<i32, 1> y) { all_reduce(Max, x, y); }

// all_reduce of i64.
PK_KERNEL void all_reduce_i64(Sym<i64, 1> x, Sym<i64, 1> y) { all_reduce(Sum, x, y); }

// all_reduce of a rank-3 Sym.
PK_KERNEL void all_reduce_3d(Sym<f32, 3> x, Sym<f32, 3> y) { all_reduce(Sum, x, y); }

// all_reduce of a rank-4 Sym.
PK_KERNEL void all_reduce_4d(Sym<f32, 4> x, Sym<f32, 4> y) { all_reduce(Sum, x, y); }

// in-place all_reduce.
PK_KERNEL void all_reduce_inplace(Sym<f32, 1> x) { all_reduce(Sum, x, x); }

// reduce_scatter along dimension 1.
PK_KERNEL void reduce_scatter_dim(Sym<f32, 2> x, Sym<f32, 2> y) { reduce_scatter(Sum, x, y, 1); }

// reduce_scatter(Max) along dimension 2 of a rank-3 tensor.
PK_KERNEL void reduce_scatter_dim_max(Sym<f32, 3> x, Tensor<f32, 3> y) { reduce_scatter(Max, x, y, 2); }

// reduce_scatter with an explicit dimension 0.
PK_KERNEL void reduce_scatter_dim0(Sym<f32, 2> x, Sym<f32, 2> y) { reduce_scatter(Min, x, y, 0); }

// all_gather into a Sym.
PK_KERNEL void all_gather_plain(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_gather(x, y); }

// all_gather into a local Tensor.
PK_KERNEL void all_gather_tensor(Sym<f8e4m3, 1> x, Tensor<f8e4m3, 1> y) { all_gather(x, y); }

// all_gather along dimension 1.
PK_KERNEL void all_gather_dim(Sym<f32, 2> x, Tensor<f32, 2> y) { all_gather(x, y, 1); }

// in-place all_gather along dimension 1.
PK_KERNEL void all_gather_dim_inplace(Sym<f32, 2> x) { all_gather(x, x, 1); }

// all_gather along dimension 3 of a rank-4 tensor.
PK_KERNEL void all_gather_dim3(Sym<f32, 4> x, Sym<f32, 4> y) { all_gather(x, y, 3); }

// all_to_all.
PK_KERNEL void all_to_all_plain(Sym<f32, 2> x, Sym<f32, 2> y) { all_to_all(x, y); }

// all_to_all split 0, concat 1.
PK_KERNEL void all_to_all_split_concat(Sym<bf16, 3> x, Sym<bf16, 3> y) { all_to_all(x, y, 0, 1); }

// all_to_all split 1, concat 0, into a Tensor.
PK_KERNEL void all_to_all_concat_split(Sym<bf16, 3> x, Tensor<bf16, 3> y) { all_to_all(x, y, 1, 0); }

// all_to_all within dimension 1.
PK_KERNEL void all_to_all_same_dim(Sym<f32, 2> x, Sym<f32, 2> y) { all_to_all(x, y, 1, 1); }

// in-place all_to_all within dimension 1.
PK_KERNEL void all_to_all_inplace_dim(Sym<f32, 2> x) { all_to_all(x, x, 1, 1); }

// broadcast from a run-time root.
PK_KERNEL void broadcast_k(Sym<f32, 2> x, Tensor<f32, 2> y, index root) { broadcast(x, y, root); }

// broadcast from a constant root.
PK_KERNEL void broadcast_const_root(Sym<f32, 1> x, Sym<f32, 1> y) { broadcast(x, y, 0); }

// gather to a root.
PK_KERNEL void gather_k(Sym<f32, 2> x, Sym<f32, 2> y, index root) { gather(x, y, root); }

// scatter from a root.
PK_KERNEL void scatter_k(Sym<f32, 2> x, Tensor<f32, 2> y, index root) { scatter(x, y, root); }

// in-place gather and scatter.
PK_KERNEL void gather_inplace(Sym<f32, 2> x, index root) { gather(x, x, root); scatter(x, x, root); }

// a Scratch tensor as a collective input.
PK_KERNEL void scratch_in(Scratch<f32, 2> x, Sym<f32, 2> y) { all_gather(x, y); }

// a 4-D all_gather (a kernel's tensors have at most 4 dimensions: the rank-5 form is refused,
// test/Frontend/reject/rank5-tiles.cpp).
PK_KERNEL void collective_4d(Sym<f32, 4> x, Sym<f32, 4> y) { all_gather(x, y); }

// ---- expert primitives (pk::prim) ----

// prim::flag (Block, and Grid with a slot per tile), signal, signal_all, wait, barrier. (The
// first version waited for world_size() arrivals of W - 1 and bumped a Grid flag once per block:
// it would hang, and compiled because the checker could not model it; both are errors now.)
PK_KERNEL void prim_flags(Sym<f32, 2> x, Tensor<f32, 2> y) {
  auto f = prim::flag(0);
  prim::signal_all(f);
  prim::wait(f, world_size() - 1);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    store(y, load<16, 32>(x.on(next_rank()), m, n), m, n);
    auto g = prim::flag(3 + m / 16 * ((x.cols() + 31) / 32) + n / 32, Grid);
    prim::signal(g, prev_rank());
    prim::wait(g, 1);
  }
  prim::barrier(prim::flag(2, Block));
}

// prim::store_async over Ldst.
PK_KERNEL void prim_store_async(Tensor<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) prim::store_async(Ldst, y.on(next_rank()), load<16, 32>(x, m, n), m, n);
  prim::barrier(prim::flag(1));
}

// prim::store_add_async over Ldst.
PK_KERNEL void prim_store_add_async(Tensor<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) prim::store_add_async(Ldst, y.on(0), load<16, 32>(x, m, n), m, n);
  prim::barrier(prim::flag(1));
}

// prim::load_peer over Ldst.
PK_KERNEL void prim_load_peer(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) store(y, prim::load_peer<32, 128>(Ldst, x.on(prev_rank()), m, n), m, n);
  prim::barrier(prim::flag(1));
}

// prim::reduce(Sum/Max/Min) over Ldst.
PK_KERNEL void prim_reduce(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y, prim::reduce<16, 256>(Sum, Ldst, x, m, n) + prim::reduce<16, 256>(Max, Ldst, x, m, n) + prim::reduce<16, 256>(Min, Ldst, x, m, n), m, n);
  prim::barrier(prim::flag(1));
}

// prim::all_reduce over Ldst, each rank reducing its own share of rows (disjoint writes).
PK_KERNEL void prim_all_reduce_rows(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows() / world_size(), x.cols(), {1, 256}))
    prim::all_reduce<1, 256>(Max, Ldst, x, y, m + rank() * (x.rows() / world_size()), n);
  prim::barrier(prim::flag(1));
}

// prim::all_reduce of 1-element tiles of a 1-D Sym over Ldst.
PK_KERNEL void prim_all_reduce_1d(Sym<f32, 1> x, Sym<f32, 1> y) {
  prim::barrier(prim::flag(0));
  for (auto i : tiles(x.size() / world_size(), {256})) prim::all_reduce<1>(Sum, Ldst, x, y, i + rank() * (x.size() / world_size()));
  prim::barrier(prim::flag(1));
}

// ---- spec.h types spelled out ----

// broadcast_dim (constexpr, declared in spec.h) as a tile extent.
PK_KERNEL void broadcast_dim_constexpr(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) store(y, load<broadcast_dim(16, 1), 32>(x, m, n), m, n);
}

// an explicitly typed SmemTile local.
PK_KERNEL void smem_tile_typed(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto kk : range(0, a.cols(), 32)) {
      SmemTile<bf16, 64, 32> at = load_smem<64, 32>(a, m, kk);
      acc = mma(at, load<32, 64>(b, kk, n), acc);
    }
    store(c, acc, m, n);
  }
}

// explicitly typed locals: Peer<...>, Flag, Tile<...>, index, float. (Flag slots 2 and 3: slots 0 and 1 collide with the flags pkc puts around peer stores; see audit_findings.md.)
PK_KERNEL void explicit_types_slots(Tensor<f32, 2> x, Sym<f32, 2> y) {
  Peer<f32, 2> p = y.on(next_rank());
  Flag f = prim::flag(2);
  prim::barrier(f);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    Tile<f32, 16, 32> t = load<16, 32>(x, m, n);
    index mm = m;
    float s = 2.0f;
    store(p, t * s, mm, n);
  }
  prim::barrier(prim::flag(3));
}
// min / max of two integers: index values (a clamped origin and a clamped bound).
PK_KERNEL void index_min_max(Tensor<f32, 2> x, Tensor<f32, 2> y, index keep) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 32})) {
    auto t = zeros<f32, 16, 32>();
    for (auto k : range(0, min(x.rows(), keep), 16)) t = t + load<16, 32>(x, max(k - m, 0), n);
    store(y, t, m, n);
  }
}

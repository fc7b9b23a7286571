// The thirtieth user set: every kind of kernel argument the language allows, reached through every way in (the
// pkc command line, the typed launcher headers, the JIT C++ API and pk_torch). Local tensors (Tensor), symmetric
// ones (Sym) and workspace (Scratch) of every element type (i8, i32, i64, f8e4m3, f8e5m2, f16, bf16, f32) at ranks
// 1 to 4; float scalars and integer scalars declared index, long, int or long long; rank(), world_size(),
// next_rank() and prev_rank() as values; sizes (dim, rows, cols, size) as values; scalar reads that bound loops;
// kernels on the GEMM and int8 templates (with their twins), collectives of every integer and float type, tiles to
// peers, a Scratch feeding a collective, host loops of launches, and tensors that may be empty.
//
// Notation: x, y, ... the arguments; f32(v) / bf16(v) / f16(v) round to nearest even, i8 / i32 arithmetic wraps,
// cast<i8 / i32 / i64> of a float rounds toward zero and saturates; a load outside a tensor reads 0 and a store
// outside it is dropped; W = world_size(), r = rank(). Written from README.md, docs/language.md and pk/spec.h;
// test/gpu/user_specs30_jit_test.cu runs every kernel against float64 (or exact integer) references and checks the
// JIT's host-side refusals; python/tests/user_set30_torch.py does the same through pk_torch; test/Compile/
// user_specs30.test checks the command line, the launcher headers and the refusals; findings in
// test/specs/specs30_findings.md.
#include <pk/spec.h>
using namespace pk;

// ---------------------------------------------------------------------------------------------------------
// Local tensors of every element type and rank, with scalars.

// 1. y[i] = x[i] + add (i8, wrapping at 8 bits; add an index).
PK_KERNEL void a30_i8_1d_add(Tensor<i8, 1> x, Tensor<i8, 1> y, index add) {
  for (auto i : tiles(x.size(), {512})) store(y, load<512>(x, i) + add, i);
}

// 2. y[m, n] = x[m, n] * mul + add (i32, wrapping; mul and add declared long and int).
PK_KERNEL void a30_i32_2d_affine(Tensor<i32, 2> x, Tensor<i32, 2> y, long mul, int add) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n) * mul + add, m, n);
}

// 3. y[a, b, c] = x[a, b, c] * k - 7 (i64, values past 2^32; k declared long long).
PK_KERNEL void a30_i64_3d_scale(Tensor<i64, 3> x, Tensor<i64, 3> y, long long k) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 8, 64}))
    store(y, load<1, 8, 64>(x, a, b, c) * k - 7, a, b, c);
}

// 4. y = f16(f32(x) * s + 0.25) on a 4-D tensor, tiled along the last two dimensions.
PK_KERNEL void a30_f16_4d(Tensor<f16, 4> x, Tensor<f16, 4> y, float s) {
  for (auto [a, b] : tiles(x.dim(0), x.dim(1), {1, 1}))
    for (auto [m, n] : tiles(x.dim(2), x.dim(3), {16, 64}))
      store(y, cast<f16>(cast<f32>(load<1, 1, 16, 64>(x, a, b, m, n)) * s + 0.25f), a, b, m, n);
}

// 5. y[m, n] = bf16(f32(x[m, n]) * w[n]): w f32 [N] read as a row.
PK_KERNEL void a30_bf16_row_scale(Tensor<bf16, 2> x, Tensor<f32, 1> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store(y, cast<bf16>(cast<f32>(load<32, 128>(x, m, n)) * load<1, 128>(w, n)), m, n);
}

// 6. z = a * x + y (f32, 1-D).
PK_KERNEL void a30_f32_axpy(Tensor<f32, 1> x, Tensor<f32, 1> y, Tensor<f32, 1> z, float a) {
  for (auto i : tiles(x.size(), {1024})) store(z, load<1024>(x, i) * a + load<1024>(y, i), i);
}

// 7. Per-row e4m3 quantisation of a bf16 [M, 128 * k] tensor in blocks of 128 columns: s[m, n / 128] =
// amax / 448, q = e4m3(x * (448 / amax)).
PK_KERNEL void a30_e4m3_quant(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = cast<f32>(load<16, 128>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-12f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(s, amax * (1.0f / 448.0f), m, n / 128);
  }
}

// 8. y = f32(q) * s (e5m2 in, a float scale).
PK_KERNEL void a30_e5m2_dequant(Tensor<f8e5m2, 2> q, Tensor<f32, 2> y, float s) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 128})) store(y, cast<f32>(load<16, 128>(q, m, n)) * s, m, n);
}

// 9. y = f32(x) * s (i8 [A, B, C] to f32, 3-D tiles).
PK_KERNEL void a30_i8_3d_to_f32(Tensor<i8, 3> x, Tensor<f32, 3> y, float s) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 4, 32}))
    store(y, cast<f32>(load<2, 4, 32>(x, a, b, c)) * s, a, b, c);
}

// 10. y = i64(x) * 2^32 + x (i32 [A, B, C, D] widened to i64: exact past 2^32).
PK_KERNEL void a30_i32_4d_widen(Tensor<i32, 4> x, Tensor<i64, 4> y) {
  for (auto [a, b] : tiles(x.dim(0), x.dim(1), {1, 2}))
    for (auto [c, d] : tiles(x.dim(2), x.dim(3), {4, 32})) {
      auto w = cast<i64>(load<1, 2, 4, 32>(x, a, b, c, d));
      store(y, w * 4294967296L + w, a, b, c, d);
    }
}

// 11. y[m, n] = 1000 r + 100 W + 10 next_rank() + prev_rank() + x[m, n] (rank values as floats).
PK_KERNEL void a30_rank_values(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  float base = float(1000 * rank() + 100 * world_size() + 10 * next_rank() + prev_rank());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 256})) store(y, load<8, 256>(x, m, n) + base, m, n);
}

// 12. y = (x * a + b) * c - d with two float and two index scalars interleaved.
PK_KERNEL void a30_scalar_mix(Tensor<f32, 1> x, float a, index b, Tensor<f32, 1> y, float c, index d) {
  for (auto i : tiles(x.size(), {256})) store(y, (load<256>(x, i) * a + float(b)) * c - float(d), i);
}

// 13. The sizes as values: y[a, b, c, d] = x[a, b, c, d] + dim(0) + 10 dim(1) + 100 dim(2) + 1000 dim(3) (as f32).
PK_KERNEL void a30_dims_as_values(Tensor<f32, 4> x, Tensor<f32, 4> y) {
  float k = float(x.dim(0) + 10 * x.dim(1) + 100 * x.dim(2) + 1000 * x.dim(3));
  for (auto [a, b] : tiles(x.dim(0), x.dim(1), {1, 1}))
    for (auto [m, n] : tiles(x.dim(2), x.dim(3), {8, 32})) store(y, load<1, 1, 8, 32>(x, a, b, m, n) + k, a, b, m, n);
}

// 14. Rows up to a count read from memory: y[m, n] = x[m, n] * 2 for the first 16-row tiles that cover cnt[0]
// rows (whole tiles: rows past the count inside the last tile are written too, rows of later tiles are not).
PK_KERNEL void a30_count_bound(Tensor<i32, 1> cnt, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(cnt.at(0), x.cols(), {16, 128})) store(y, load<16, 128>(x, m, n) * 2.0f, m, n);
}

// 15. Embedding by i64 ids: out[r, :] = table[ids[r], :] (ids outside the table give zeros).
PK_KERNEL void a30_gather_i64(Tensor<f32, 2> table, Tensor<i64, 1> ids, Tensor<f32, 2> out) {
  for (auto [r, n] : tiles(ids.size(), table.cols(), {16, 128}))
    store(out, load_rows<16, 128>(table, load<16>(ids, r), n), r, n);
}

// 16. out = a ++ b (1-D concatenation; a or b may be empty).
PK_KERNEL void a30_concat(Tensor<f32, 1> a, Tensor<f32, 1> b, Tensor<f32, 1> out) {
  for (auto i : tiles(a.size(), {256})) store(out, load<256>(a, i), i);
  for (auto i : tiles(b.size(), {256})) store(out, load<256>(b, i), a.size() + i);
}

// 17. A scale read from a 2-D f32 tensor: y = x * s[0, 0] + s[0, 1].
PK_KERNEL void a30_scalar_reads(Tensor<f32, 2> s, Tensor<bf16, 1> x, Tensor<f32, 1> y) {
  float a = s.at(0, 0);
  float b = s.at(0, 1);
  for (auto i : tiles(x.size(), {512})) store(y, cast<f32>(load<512>(x, i)) * a + b, i);
}

// 18. y[m, n] = x[m, n] + bias[0, n]: bias f32 [1, N] (a 2-D row; pk_torch and the JIT must not take a 1-D [N]
// tensor for it).
PK_KERNEL void a30_row_bias(Tensor<f32, 2> x, Tensor<f32, 2> bias, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(y, load<16, 128>(x, m, n) + load<1, 128>(bias, 0, n), m, n);
}

// ---------------------------------------------------------------------------------------------------------
// Symmetric tensors and workspace.

// 19. Ring shift of i32 [R, C]: y on rank next_rank() = x + r (written by this rank).
PK_KERNEL void a30_sym_i32_ring(Sym<i32, 2> x, Sym<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y.on(next_rank()), load<16, 64>(x, m, n) + rank(), m, n);
}

// 20. y = sum over ranks of x (bf16, 1-D).
PK_KERNEL void a30_sym_bf16_all_reduce(Sym<bf16, 1> x, Sym<bf16, 1> y) { all_reduce(Sum, x, y); }

// 21. y = rows of every rank's x, rank order (f32 [R, C] -> [W R, C]).
PK_KERNEL void a30_sym_f32_all_gather(Sym<f32, 2> x, Sym<f32, 2> y) { all_gather(x, y); }

// 22. y = max over ranks of x (i64, 1-D).
PK_KERNEL void a30_sym_i64_max(Sym<i64, 1> x, Sym<i64, 1> y) { all_reduce(Max, x, y); }

// 23. y = this rank's block of rows of the sum over ranks of x (f16 [W R, C, D] -> [R, C, D]).
PK_KERNEL void a30_sym_f16_reduce_scatter(Sym<f16, 3> x, Sym<f16, 3> y) { reduce_scatter(Sum, x, y); }

// 24. i8 all-gather along the columns ([R, C] -> [R, W C]).
PK_KERNEL void a30_sym_i8_gather_cols(Sym<i8, 2> x, Sym<i8, 2> y) { all_gather(x, y, 1); }

// 25. e4m3 all-gather of rows into a local tensor.
PK_KERNEL void a30_sym_e4m3_gather(Sym<f8e4m3, 2> x, Tensor<f8e4m3, 2> y) { all_gather(x, y); }

// 26. Broadcast of a 4-D f32 tensor from rank `root`.
PK_KERNEL void a30_sym_4d_broadcast(Sym<f32, 4> x, Sym<f32, 4> y, index root) { broadcast(x, y, root); }

// 27. p = x * 2 + r into workspace, then y = sum over ranks of p (f32 [R, C]).
PK_KERNEL void a30_scratch_all_reduce(Tensor<f32, 2> x, Scratch<f32, 2> p, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(p, load<16, 128>(x, m, n) * 2.0f + float(rank()), m, n);
  all_reduce(Sum, p, y);
}

// 28. i32 workspace: p = x + r, y = sum over ranks of p.
PK_KERNEL void a30_scratch_i32(Tensor<i32, 1> x, Scratch<i32, 1> p, Sym<i32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(p, load<256>(x, i) + rank(), i);
  all_reduce(Sum, p, y);
}

// 29. Pull from the previous rank: y = x of rank prev_rank(), as f32 (i64 [N] in).
PK_KERNEL void a30_sym_i64_pull(Sym<i64, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, cast<f32>(load<256>(x.on(prev_rank()), i)), i);
}

// 30. Adds into the next rank: y (zeroed here first) on rank next_rank() = x of this rank (f32 [R, C]).
PK_KERNEL void a30_store_add_next(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128})) store(y, zeros<f32, 16, 128>(), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store_add(y.on(next_rank()), load<16, 128>(x, m, n), m, n);
}

// 31. A host loop of launches: `steps` times, y = sum over ranks of x, then x = y * scale + trip.
PK_KERNEL void a30_host_loop(Sym<f32, 1> x, Sym<f32, 1> y, index steps, float scale) {
  for (auto t : range(0, steps, 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.size(), {256})) store(x, load<256>(y, i) * scale + zeros<f32, 256>() + t, i);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Templates (with their general-path twins).

// 32. c = bf16(alpha * a b^T) on the GEMM template (a [M, K], b [N, K], bf16).
PK_KERNEL void a30_gemm_alpha(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c, float alpha) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc * alpha), m, n);
  }
}

// 33. c = a b^T + bias[n] in f32 (f16 operands, a 1-D f32 bias).
PK_KERNEL void a30_gemm_f16_bias_f32(Tensor<f16, 2> a, Tensor<f16, 2> b, Tensor<f32, 1> bias, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc + load<1, 256>(bias, n), m, n);
  }
}

// 34. W8A8: c = the i32 sums of x w^T (i8 x i8 on the int8 template).
PK_KERNEL void a30_w8a8_i32(Tensor<i8, 2> x, Tensor<i8, 2> w, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, x.cols(), 128)) acc = mma_t(load<128, 128>(x, m, k), load<256, 128>(w, n, k), acc);
    store(c, acc, m, n);
  }
}

// 35. Weight-only e5m2: y = bf16(x w^T) with w e5m2 [N, K] widened in the K loop.
PK_KERNEL void a30_gemm_e5m2_weights(Tensor<bf16, 2> x, Tensor<f8e5m2, 2> w, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// Set 39: the documentation against the compiler. One kernel per claim of docs/language.md and
// README.md, named kNN, each under a comment quoting the claim's location. Kernels the docs say
// compile are plain; kernels the docs say are refused sit under `#ifdef BAD_kNN`, so the file
// compiles as a whole and test/specs/set39_cli_checks.sh turns each refusal on alone
// (-DBAD_kNN --kernel=kNN) and checks the message. Findings: test/specs/specs39_findings.md.
#include <pk/spec.h>
using namespace pk;

// language.md:17: "float scalars ... take + - * / and unary - as in C++ (`1.0f / 256.0f`, `scale / x.cols()`
// ...), the math functions of tiles (...: `pk.scalar_map`), and casts (`float(x.cols())`; `static_cast<long>` of an index is the index)"
PK_KERNEL void k01(Tensor<f32, 2> x, Tensor<f32, 2> y, float scale) {
  float a = 1.0f / 256.0f;
  float b = scale / x.cols();
  float c = rsqrt(float(x.cols())) + pow(scale, 2.0f) + gelu_erf(scale) + -a;
  index n = static_cast<long>(x.cols());
  for (auto [m, j] : tiles(x.rows(), n, {16, 64})) store(y, load<16, 64>(x, m, j) * (a + b) + c, m, j);
}

// language.md:18: "a float scalar beside a bf16 or f16 tile keeps its fp32 value: `x - 1000.4f` is computed in fp32, then rounded once"
PK_KERNEL void k02(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n) - 1000.4f, m, n);
}

// language.md:19: "casts to them saturate (scale first: `cast<f8e4m3>(t * (448.0f / row_max(abs(t))))`)"
PK_KERNEL void k03(Tensor<f32, 2> x, Tensor<f8e4m3, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = load<16, 128>(x, m, n);
    store(y, cast<f8e4m3>(t * (448.0f / row_max(abs(t)))), m, n);
  }
}

// language.md:21: "quantise with `cast<i8>(round(t * (127.0f / amax)))` ... `cast<bf16>` of an i8 tile is exact"
PK_KERNEL void k04(Tensor<f32, 2> x, Tensor<i8, 2> q, Tensor<bf16, 2> d, float amax) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = cast<i8>(round(load<16, 128>(x, m, n) * (127.0f / amax)));
    store(q, t, m, n);
    store(d, cast<bf16>(t), m, n);
  }
}

#ifdef BAD_k05
// language.md:21: "an integer constant beside an i8 tile must fit -128 .. 127 (else an error: `cast<i32>(t)` first)"
PK_KERNEL void k05(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(y, load<16, 128>(x, m, n) + 200, m, n);
}
#endif

#ifdef BAD_k06
// language.md:21: "a run-time index beside one may only be added, subtracted, multiplied or combined bit by bit ...
// comparisons, `min` / `max`, shifts, `/` and `%` with an index are refused with the same fix"
PK_KERNEL void k06(Tensor<i8, 2> x, Tensor<i8, 2> y, index lim) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(y, min(load<16, 128>(x, m, n), lim), m, n);
}
#endif

// language.md:21: "a run-time index beside one may only be added, subtracted, multiplied or combined bit by bit"
PK_KERNEL void k07(Tensor<i8, 2> x, Tensor<i8, 2> y, index off) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(y, load<16, 128>(x, m, n) * off + off, m, n);
}

#ifdef BAD_k08
// language.md:89 / :82: "an i8 tile is an error that says to reduce `cast<i32>(t)`"
PK_KERNEL void k08(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto m : tiles(x.rows(), {16})) store(y, row_sum(load<16, 128>(x, m, 0)), m, 0);
}
#endif

#ifdef BAD_k09
// language.md:21: "Row indices, counters, histograms, running sums (`cumsum`) and reductions (row, collective, `store_add`) refuse i8 with the fix (`cast<i32>(t)`)"
PK_KERNEL void k09(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store_add(y, load<16, 128>(x, m, n), 0, n);
}
#endif

// language.md:21: "i8 tiles on both sides into an i32 accumulator (W8A8: exact integer sums, on the int8 tensor cores in a GEMM loop)"
PK_KERNEL void k10(Tensor<i8, 2> a, Tensor<i8, 2> b, Tensor<i32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<i32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// language.md:24: "Index arithmetic: `+ - * / %`, `min` and `max` of two integers (`min(i / 256, 7) * 256`,
// `range(0, min(x.cols(), keep), 64)`: an index, not a float), locals, assignment"
PK_KERNEL void k11(Tensor<f32, 2> x, Tensor<f32, 2> y, index keep) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto k : range(0, min(x.cols(), keep), 64)) acc = acc + row_sum(load<16, 64>(x, m, k));
    index i = min(m / 256, 7) * 256 + x.dim(1) % 3 + world_size() - rank() + next_rank() * prev_rank();
    i = i * 0;
    store(y, acc, m + i, 0);
  }
}

// language.md:25: "An index converts to a float where C++ converts it (`float n = x.size();`, a mask `col_index<64, 64>(n) < k.rows()`)"
PK_KERNEL void k12(Tensor<f32, 2> x, Tensor<f32, 2> k, Tensor<f32, 2> y) {
  float cnt = x.size();
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64}))
    store(y, where(col_index<64, 64>(n) < k.rows(), load<64, 64>(x, m, n) / cnt, 0.0f), m, n);
}

// language.md:36: "rotary embedding of packed heads [T, H * D] tiled by {16, 128} reads `n` and `n + 64`, then writes both"
PK_KERNEL void k13(Tensor<bf16, 2> x, Tensor<f32, 2> cs, Tensor<f32, 2> sn) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto a = cast<f32>(load<16, 64>(x, m, n));
    auto b = cast<f32>(load<16, 64>(x, m, n + 64));
    auto c = load<16, 64>(cs, m, 0);
    auto s = load<16, 64>(sn, m, 0);
    store(x, cast<bf16>(a * c - b * s), m, n);
    store(x, cast<bf16>(b * c + a * s), m, n + 64);
  }
}

#ifdef BAD_k14
// language.md:39: "Anything else (a read at `F + n` past the step along a tiled dimension, a read taller than the step) is an error at the read."
PK_KERNEL void k14(Tensor<f32, 2> x) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(x, load<16, 64>(x, m, n + 64) * 2.0f, m, n);
}
#endif

// language.md:47: "1-D and 3-D tile loops ... origin as one value `for (Origin2 o : tiles(...))`; `o.i0`, `o.i1` (`o.i2` of an `Origin3`)"
PK_KERNEL void k15(Tensor<f32, 1> a, Tensor<f32, 1> b, Tensor<f32, 3> c, Tensor<f32, 3> d, Tensor<f32, 2> e, Tensor<f32, 2> f) {
  for (auto i : tiles(a.size(), {4096})) store(b, load<4096>(a, i), i);
  for (Origin3 o : tiles(c.dim(0), c.dim(1), c.dim(2), {1, 16, 64})) store(d, load<1, 16, 64>(c, o.i0, o.i1, o.i2), o.i0, o.i1, o.i2);
  for (Origin2 o : tiles(e.rows(), e.cols(), {64, 128})) store(f, load<64, 128>(e, o.i0, o.i1), o.i0, o.i1);
}

#ifdef BAD_k16
// language.md:49: "A constant step of 0 or less, or past 2^31 - 1, is an error at the step"
PK_KERNEL void k16(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), 0)) acc = acc + row_sum(load<16, 64>(x, m, k));
    store(y, acc, m, 0);
  }
}
#endif

// language.md:49: "the bounds and the step may be run-time values (`range(0, x.cols(), s)`, `range(0, n, x.cols() / 4)`) ...
// a run-time one of 0 or less skips the loop and the launch returns an error (`pk::range_step_ok`, error code 5)"
PK_KERNEL void k17(Tensor<f32, 2> x, Tensor<f32, 2> y, index s) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), s)) acc = acc + row_sum(load<16, 1>(x, m, k));
    store(y, acc, m, 0);
  }
}

#ifdef BAD_k18
// language.md:49: "a loop that signals, waits, moves tiles to or from a peer ... needs a constant step (else an error at the loop"
PK_KERNEL void k18(Sym<f32, 2> x, Sym<f32, 2> y, index s) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto k : range(0, x.cols(), s)) store(y.on(next_rank()), load<16, 64>(x, m, k), m, k);
}
#endif

// language.md:50: "nested tile loop `for (auto m : tiles(x.rows(), {16})) for (auto n : tiles(x.cols(), {64}))`"
PK_KERNEL void k19(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : tiles(x.cols(), {64})) store(y, exp(load<16, 64>(x, m, n)), m, n);
}

#ifdef BAD_k20
// language.md:14: "a local tensor of rank R (1-4)"; "Tensors have 1 to 4 dimensions"
PK_KERNEL void k20(Tensor<f32, 5> x, Tensor<f32, 5> y) {
  for (auto [a, b, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 1, 1})) store(y, load<1, 1, 1, 4, 64>(x, a, b, c, 0, 0), a, b, c, 0, 0);
}
#endif

#ifdef BAD_k21
// language.md:55: "A collective cannot sit inside a tile loop (it moves whole tensors once per launch): call it before or after the loop."
PK_KERNEL void k21(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    store(x, load<16, 64>(x, m, 0) * 2.0f, m, 0);
    all_reduce(Sum, x, y);
  }
}
#endif

// language.md:54: "a once-only store goes in a one-tile loop (`for (auto z : tiles(1, {1})) store(counts, zeros<i32, 1, 64>(), z, 0);`)"
PK_KERNEL void k22(Tensor<i32, 2> counts) {
  for (auto z : tiles(1, {1})) store(counts, zeros<i32, 1, 64>(), z, 0);
}

#ifdef BAD_k23
// language.md:67: "Ranks that store row blocks of one symmetric tensor at `rank() * x.rows() + m` therefore overlap at
// the block ends (the protocol checker reports it as a race and says so)"
PK_KERNEL void k23(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [p, m, n] : tiles(world_size(), x.rows(), x.cols(), {1, 16, 64}))
    store(y.on(p), load<16, 64>(x, m, n), rank() * x.rows() + m, n);
}
#endif

// language.md:69: "start the blocks a whole number of tiles apart ... or ... scatter the rows instead:
// `store_rows(y.on(p), t, cast<i32>(row_index<16, 1>(m)) + rank() * x.rows(), n)`"
PK_KERNEL void k24(Sym<f32, 2> x, Sym<f32, 2> y, Sym<f32, 2> z) {
  for (auto [p, m, n] : tiles(world_size(), x.rows(), x.cols(), {1, 16, 64}))
    store_rows(y.on(p), load<16, 64>(x, m, n), cast<i32>(row_index<16, 1>(m)) + rank() * x.rows(), n);
  for (auto [p, m, n] : tiles(world_size(), x.rows(), x.cols(), {1, 16, 64}))
    store(z.on(p), load<16, 64>(x, m, n), rank() * ((x.rows() + 15) / 16 * 16) + m, n);
}

// language.md:65: "a partial tile's zero rows land in a larger destination too (where they land on what an earlier store
// of the launch wrote, pkc warns at the later store)"
PK_KERNEL void k25(Tensor<f32, 2> a, Tensor<f32, 2> b, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(b.rows(), b.cols(), {16, 64})) store(y, load<16, 64>(b, m, n), a.rows() + m, n);
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) store(y, load<16, 64>(a, m, n), m, n);
}

// language.md:81: load 1-4 dims; load_smem; "`load<1, 4096>(b, n)` and `store(y, col, m)` with `col` an M x 1 tile, both of [N] tensors";
// "`load<64, 128>(q, h, m, 0)` of a [H, S, D] tensor, `store(o, t, h, m, 0)`"; "`load<16, 32>(x.on(p), h, m, 0)`"
PK_KERNEL void k26(Tensor<f32, 1> b, Tensor<f32, 1> y, Tensor<f32, 3> q, Tensor<f32, 3> o, Tensor<f32, 4> u, Tensor<f32, 4> w) {
  for (auto m : tiles(b.size(), {64})) {
    auto row = load<1, 64>(b, m);
    store(y, transpose(row) * 2.0f, m);
  }
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) store(o, exp(load<64, 128>(q, h, m, 0)), h, m, 0);
  for (auto [a, c] : tiles(u.dim(0), u.dim(2), {1, 8})) store(w, load<1, 2, 8, 16>(u, a, 0, c, 0), a, 0, c, 0);
}
PK_KERNEL void k26b(Sym<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16})) store(y, load<16, 32>(x.on(prev_rank()), h, m, 0), h, m, 0);
}

#ifdef BAD_k27
// language.md:83: "store ... the tile's type must be the tensor's (`cast` first)"
PK_KERNEL void k27(Tensor<f32, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), m, n);
}
#endif

// language.md:86: "`t / v` with `v` an f32 row or column vector (`e / row_sum(e)`)"; broadcasting
// "`i - load<1>(off, p)`, `load<4, 16, 64>(x, b, s, d) + load<1, 1, 64>(bias, 0, 0, d)`, `load<M, 1>(u, m, 0) * load<1, N>(v, 0, n)`"
PK_KERNEL void k28(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<i32, 1> ids, Tensor<i32, 1> off, Tensor<i32, 1> out,
                   Tensor<f32, 3> t3, Tensor<f32, 3> bias, Tensor<f32, 3> o3, Tensor<f32, 2> u, Tensor<f32, 2> v, Tensor<f32, 2> uv, index p) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto e = exp(load<16, 64>(x, m, n));
    store(y, e / row_sum(e), m, n);
  }
  for (auto i : tiles(ids.size(), {256})) store(out, load<256>(ids, i) - load<1>(off, p), i);
  for (auto [b, s, d] : tiles(t3.dim(0), t3.dim(1), t3.dim(2), {4, 16, 64}))
    store(o3, load<4, 16, 64>(t3, b, s, d) + load<1, 1, 64>(bias, 0, 0, d), b, s, d);
  for (auto [m, n] : tiles(u.rows(), v.cols(), {32, 64})) store(uv, load<32, 1>(u, m, 0) * load<1, 64>(v, 0, n), m, n);
}

// language.md:88: "math `exp sqrt rsqrt log tanh sigmoid silu gelu gelu_erf erf sin cos abs round floor ceil`, `pow(t, 2.0f)`"
PK_KERNEL void k29(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    store(y, exp(t) + sqrt(t) + rsqrt(t) + log(t) + tanh(t) + sigmoid(t) + silu(t) + gelu(t) + gelu_erf(t) + erf(t) +
             sin(t) + cos(t) + abs(t) + round(t) + floor(t) + ceil(t) + pow(t, 2.0f), m, n);
  }
}

// language.md:89: "row reductions ... of an i32 or i64 tile, exact in its type ... at most 4096 rows (2048 for i64)"
PK_KERNEL void k30(Tensor<i32, 2> a, Tensor<i64, 2> b, Tensor<i32, 2> ra, Tensor<i64, 2> rb) {
  for (auto m : tiles(a.rows(), {4096})) store(ra, row_sum(load<4096, 8>(a, m, 0)) + row_max(load<4096, 8>(a, m, 0)), m, 0);
  for (auto m : tiles(b.rows(), {2048})) store(rb, row_min(load<2048, 8>(b, m, 0)), m, 0);
}

#ifdef BAD_k31
// language.md:89: "row reductions ... at most 4096 rows"
PK_KERNEL void k31(Tensor<f32, 2> a, Tensor<f32, 2> r) {
  for (auto m : tiles(a.rows(), {8192})) store(r, row_sum(load<8192, 8>(a, m, 0)), m, 0);
}
#endif

#ifdef BAD_k31b
// language.md:89: "at most 4096 rows (2048 for i64)"
PK_KERNEL void k31b(Tensor<i64, 2> a, Tensor<i64, 2> r) {
  for (auto m : tiles(a.rows(), {4096})) store(r, row_sum(load<4096, 8>(a, m, 0)), m, 0);
}
#endif

// language.md:91: "`where(mask, s, -1e30f)`, `where(x > 0.0f, 1.0f, -1.0f)`, `where(keep, t, row_max(t))` ... two integers an i32 one,
// whatever their C++ integer types: `where(owner == p, place, -1)` with `place` an `index`"
PK_KERNEL void k32(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<i32, 2> owner, Tensor<i32, 2> slot, index p, index place) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    auto keep = t > 0.0f;
    store(y, where(keep, t, row_max(t)) + where(t > 0.0f, 1.0f, -1.0f), m, n);
    store(slot, where(load<16, 64>(owner, m, n) == p, place, -1), m, n);
  }
}

#ifdef BAD_k33
// language.md:91: "an integer tile beside a float scalar is a C++ error that says to cast the tile"
PK_KERNEL void k33(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) { auto t = load<16, 64>(x, m, n); store(y, where(t > 0, t, 0.5f), m, n); }
}
#endif

// language.md:92: "`!(c > r) && !(c <= r - w)` is the window `(c <= r) && (c > r - w)` and takes the attention template"
PK_KERNEL void k34(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale, index w) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, m + 64, 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      auto c = col_index<64, 64>(n);
      auto r = row_index<64, 64>(m);
      s = where(!(c > r) && !(c <= r - w) && (c < k.rows()), s, -1e30f);
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

// language.md:92: "Masks of two element types (`(p > thr) && (ids >= 0)`: an f32 and an i32 tile) join as an f32 mask"
PK_KERNEL void k35(Tensor<f32, 2> x, Tensor<i32, 2> ids, Tensor<f32, 2> y, float thr) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto p = load<16, 64>(x, m, n);
    store(y, where((p > thr) && (load<16, 64>(ids, m, n) >= 0), p, 0.0f), m, n);
  }
}

// language.md:93: "`dim_index<1, 2, 16, 32>(s)`"; "`cast<i32>(reshape<1024>(col_index<1, 1024>(i)))` is an integer iota, and
// a comparison of one with an integer scalar (`row_index<64, 1>(j) < hi`) is made in i64"
PK_KERNEL void k36(Tensor<f32, 3> x, Tensor<f32, 3> y, Tensor<i32, 1> pos, Tensor<f32, 2> a, Tensor<f32, 2> b, index hi) {
  for (auto [bb, s] : tiles(x.dim(0), x.dim(1), {2, 16})) store(y, load<2, 16, 32>(x, bb, s, 0) * dim_index<1, 2, 16, 32>(s), bb, s, 0);
  for (auto i : tiles(pos.size(), {1024})) store(pos, cast<i32>(reshape<1024>(col_index<1, 1024>(i))), i);
  for (auto j : tiles(a.rows(), {64})) store(b, where(row_index<64, 1>(j) < hi, load<64, 1>(a, j, 0), 0.0f), j, 0);
}

// language.md:94: "`uniform<32, 128>(seed, m, n)`, `uniform<64, 128>(seed, h, m, 0)` of a [H, S, D] tensor ... the `seed` (an integer)"
PK_KERNEL void k37(Tensor<f32, 2> x, Tensor<f32, 3> q, index seed) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) store(x, uniform<32, 128>(seed, m, n), m, n);
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) store(q, uniform<64, 128>(seed, h, m, 0), h, m, 0);
}

// language.md:95: "any other use the tile library, on the tensor cores (mma.sync m16n8k16) for bf16 / f16 operands with M and K
// multiples of 16, N a multiple of 8 ... else in fp32 FMAs (M + N up to 4096)"
PK_KERNEL void k38(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, Tensor<f32, 2> d) {
  for (auto m : tiles(a.rows(), {32})) {
    auto acc = zeros<f32, 32, 40>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<32, 32>(a, m, k), load<32, 40>(b, k, 0), acc);
    store(c, acc, m, 0);
    store(d, row_sum(acc), m, 0);
  }
}

// language.md:94-96: load_rows from a peer, store_rows, store_add_rows, claim
PK_KERNEL void k39(Sym<f32, 2> table, Tensor<i32, 1> ids, Tensor<f32, 2> out, Tensor<f32, 2> acc, Tensor<i32, 1> fill, Tensor<i32, 1> slots) {
  for (auto [m, n] : tiles(ids.size(), out.cols(), {16, 256})) {
    auto idx = load<16>(ids, m);
    auto t = load_rows<16, 256>(table.on(next_rank()), idx, n);
    store_rows(out, t, idx, n);
    store_add_rows(acc, t, idx, n);
  }
  for (auto i : tiles(ids.size(), {256})) store(slots, claim(fill, load<256>(ids, i)), i);
}

// language.md:99: "`row_topk<2>(load<2, 16, 64>(x, b, s, 0))` is [2, 16, 2]"
PK_KERNEL void k40(Tensor<f32, 3> x, Tensor<f32, 3> v, Tensor<i32, 3> ix) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {2, 16})) {
    Tile<f32, 2, 16, 2> t = row_topk<2>(load<2, 16, 64>(x, b, s, 0));
    Tile<i32, 2, 16, 2> i = row_topk_index<2>(load<2, 16, 64>(x, b, s, 0));
    store(v, t, b, s, 0);
    store(ix, i, b, s, 0);
  }
}

// language.md:100: "A column reduction written `transpose(row_sum(transpose(t)))` ... is one pass through the stage (`pk::tile::reduce_cols`)"
PK_KERNEL void k41(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto n : tiles(x.cols(), {64})) store(y, transpose(row_sum(transpose(load<128, 64>(x, 0, n)))), 0, n);
}

#ifdef BAD_k42
// language.md:101: "`reshape<1, 64>(t)` ... anything else is an error naming both shapes"
PK_KERNEL void k42(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) store(y, reshape<32, 8>(load<16, 16>(x, m, 0)), m, 0);
}
#endif

// language.md:102: "`cumsum(t)`"; "`histogram<64>(experts)`: an i32 tile of 64 counts"
PK_KERNEL void k43(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<i32, 1> e, Tensor<i32, 2> h) {
  for (auto m : tiles(x.rows(), {16})) store(y, cumsum(load<16, 256>(x, m, 0)), m, 0);
  for (auto i : tiles(e.size(), {1024})) store_add(h, reshape<1, 64>(histogram<64>(load<1024>(e, i))), 0, 0);
}

// language.md:104: "`counts.at(e)` ... it may bound a tile loop"
PK_KERNEL void k44(Tensor<i32, 1> counts, Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<f32, 1> scale) {
  float s = scale.at(0);
  for (auto [m, n] : tiles(counts.at(0), x.cols(), {16, 128})) store(y, load<16, 128>(x, m, n) * s, m, n);
}

#ifdef BAD_k45
// language.md:104: "in a kernel that communicates an integer read cannot choose a peer or bound a loop that touches peers (a compile error at that use"
PK_KERNEL void k45(Tensor<i32, 1> dest, Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y.on(dest.at(0)), load<16, 64>(x, m, n), m, n);
}
#endif

// language.md:109: bit operations, "`(w >> (4 * j)) & 15`", "`0x9E3779B97F4A7C15UL` ... taken modulo 2^64",
// "`cast<i64>(where(c, 1, 0)) * 4294967296L` is the i64 form"
PK_KERNEL void k46(Tensor<i32, 2> w, Tensor<i32, 2> y, Tensor<i64, 2> h, Tensor<i64, 2> g) {
  for (auto [m, n] : tiles(w.rows(), w.cols(), {16, 64})) {
    auto t = load<16, 64>(w, m, n);
    index j = 3;
    store(y, ((t >> (4 * j)) & 15) ^ (t << 2) | (t >> 40), m, n);
    store(h, cast<i64>(t) * 0x9E3779B97F4A7C15UL, m, n);
    store(g, cast<i64>(where(t > 0, 1, 0)) * 4294967296L, m, n);
  }
}

#ifdef BAD_k47
// language.md:114: "beside an i32 tile ... a constant that does not fit 32 bits is an error"
PK_KERNEL void k47(Tensor<i32, 2> w, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(w.rows(), w.cols(), {16, 64})) store(y, load<16, 64>(w, m, n) * 4294967296L, m, n);
}
#endif

#ifdef BAD_k48
// language.md:114: "(and in `where(c, a, b)` of two integers, an i32 tile) a constant that does not fit 32 bits is an error"
PK_KERNEL void k48(Tensor<i32, 2> w, Tensor<i64, 2> y) {
  for (auto [m, n] : tiles(w.rows(), w.cols(), {16, 64})) store(y, cast<i64>(where(load<16, 64>(w, m, n) > 0, 4294967296L, 0)), m, n);
}
#endif

#ifdef BAD_k49
// language.md:117: "`exp(ids)` or `ids * 0.5f` is a C++ overload error at its source location (cast first)"
PK_KERNEL void k49(Tensor<i32, 2> w, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(w.rows(), w.cols(), {16, 64})) store(y, load<16, 64>(w, m, n) * 0.5f, m, n);
}
#endif

#ifdef BAD_k49b
// language.md:111: "index scalars have no bit operations"
PK_KERNEL void k49b(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  index half = x.cols() >> 1;
  index odd = x.rows() & 1;
  for (auto [m, n] : tiles(x.rows(), half, {16, 64})) store(y, load<16, 64>(x, m, n), m + odd, n);
}
#endif

// language.md:142: "Examples (all compile)": causal_softmax, verbatim
PK_KERNEL void causal_softmax(Tensor<f32, 2> s, Tensor<f32, 2> p) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 256})) {
    auto x = where(col_index<16, 256>(n) <= row_index<16, 256>(m), load<16, 256>(s, m, n), -1e30f);
    auto e = exp(x - row_max(x));
    store(p, e / row_sum(e), m, n);
  }
}

// language.md:154: "GEMM + bias + GELU (A·B, 64 x 64 tiles): takes the Hopper template, retiled, with the bias and GELU fused"
PK_KERNEL void gemm_bias_gelu(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> bias, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(c, cast<bf16>(gelu(acc + cast<f32>(load<1, 64>(bias, 0, n)))), m, n);
  }
}

// language.md:171: "stores ... `epilogue(acc)` itself into an f32 tensor ... becomes one persistent Hopper kernel"; :183 f32 output
PK_KERNEL void k52(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// language.md:176: "a weight-only quantised B: fp8 (e4m3 or e5m2) or i8 weights ... `mma_t(load(x, m, k), cast<bf16>(load(w, n, k)), acc)`"
PK_KERNEL void k53(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<i8, 2> w8, Tensor<bf16, 2> c, Tensor<bf16, 2> d) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
PK_KERNEL void k53b(Tensor<f16, 2> x, Tensor<i8, 2> w8, Tensor<f16, 2> d) {
  for (auto [m, n] : tiles(x.rows(), w8.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<f16>(cast<i32>(load<256, 64>(w8, n, k))), acc);
    store(d, cast<f16>(acc), m, n);
  }
}

// language.md:186: "a second product after the K loop ... `acc = mma_t(load<BM, R>(u, m, 0), load<BN, R>(lb, n, 0), acc)`"
PK_KERNEL void k54(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> u, Tensor<bf16, 2> lb, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    acc = mma_t(load<128, 16>(u, m, 0), load<256, 16>(lb, n, 0), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// language.md:192: "A read transposed, stored [K, M]: `tiles(a.cols(), <N>, ...)`, `range(0, a.rows(), BK)` and
// `mma(transpose(load<BK, BM>(a, k, m)), load(b, k, n), acc)`"
PK_KERNEL void k55(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.cols(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.rows(), 64)) acc = mma(transpose(load<64, 128>(a, k, m)), load<64, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// language.md:209-215: equivalent spellings: loop over C's extents written (n, m), `mma(a, transpose(load(b, n, k)), acc)`,
// "`acc = acc + mma_t(a, b, zeros<f32, BM, BN>())`; an accumulator started from a tile instead of zeros (`cast<f32>(load(c0, m, n))`)"
PK_KERNEL void k56(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c0, Tensor<bf16, 2> c) {
  for (auto [n, m] : tiles(c.cols(), c.rows(), {256, 128})) {
    auto acc = cast<f32>(load<128, 256>(c0, m, n));
    for (auto k : range(0, a.cols(), 64)) acc = acc + mma(load<128, 64>(a, m, k), transpose(load<256, 64>(b, n, k)), zeros<f32, 128, 256>());
    store(c, cast<bf16>(acc), m, n);
  }
}

// language.md:215: epilogue: "`where(col_index<128, 256>(n) < vocab, acc, -1e4f)`", "`transpose(load<BN, 1>(s, n, 0))`",
// "`s.at(0)`", "`rsqrt(float(a.cols()))`", 1-D bias `load<1, BN>(bias, n)`, "`cast<i32>(col_index<..>(n)) % 2 == 0`"
PK_KERNEL void k57(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> s, Tensor<f32, 1> sc, Tensor<bf16, 1> bias,
                   Tensor<bf16, 2> c, index vocab) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    auto e = acc * transpose(load<256, 1>(s, n, 0)) * (sc.at(0) * rsqrt(float(a.cols()))) + cast<f32>(load<1, 256>(bias, n));
    e = where(cast<i32>(col_index<128, 256>(n)) % 2 == 0, e, 0.0f);
    store(c, cast<bf16>(where(col_index<128, 256>(n) < vocab, e, -1e4f)), m, n);
  }
}

// language.md:216: "`row_index<1, BN>(m)` is the tile's first row broadcast, which depends on the tile the spec chose, so such a loop takes the general path"
PK_KERNEL void k58(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc + row_index<1, 256>(m)), m, n);
  }
}

// language.md:236-242: batched GEMM with one 2-D weight every batch multiplies by (`load<BN, BK>(w, n, k)`), per-batch `s.at(z)`
PK_KERNEL void k59(Tensor<bf16, 3> a, Tensor<bf16, 2> w, Tensor<f32, 1> s, Tensor<bf16, 3> c) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), w.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(w, n, k), acc);
    store(c, cast<bf16>(acc * s.at(z)), z, m, n);
  }
}

// language.md:263: "A loop that does not fit (an fp8 or integer output, a row reduction of the accumulator, a second store)
// takes the general tile path instead, and `--explain` names the reason"
PK_KERNEL void k60(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f8e4m3, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<f8e4m3>(acc), m, n);
  }
}

// language.md:325: ALiBi score map "`--explain` says "with a score map of N steps""; "A scale computed from scalars alone
// (`rsqrt(float(q.cols()))`) ... (`--explain`: "the scale computed once per launch")"
PK_KERNEL void k61(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 128>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    float slope = pow(2.f, -8.f * float(h + 1) / float(q.dim(0)));
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, h, n, 0), zeros<f32, 64, 64>()) * scale - (row_index<64, 64>(m) - col_index<64, 64>(n)) * slope;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 128>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}
PK_KERNEL void k61b(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 128>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 128>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 128>(k, n, 0), zeros<f32, 64, 64>()) * rsqrt(float(q.cols()));
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

// language.md:348: "an output that is a local `Tensor` rather than a `Sym` is always one-shot"
PK_KERNEL void k62(Sym<bf16, 1> x, Tensor<bf16, 1> y) { all_reduce(Sum, x, y); }

// language.md:350: "integer reductions `all_reduce(Sum, x_i32, y_i32)`, `reduce_scatter(Max, x_i64, y_i64)`, `reduce(Min, ...)`"
PK_KERNEL void k63(Sym<i32, 1> a, Sym<i32, 1> b, Sym<i64, 2> c, Sym<i64, 2> d, Sym<i32, 1> e, Sym<i32, 1> f, index root) {
  all_reduce(Sum, a, b);
  reduce_scatter(Max, c, d);
  reduce(Min, e, f, root);
}

#ifdef BAD_k64
// language.md:356: "fp8 tensors do not reduce (a clear error): reduce in f32 or bf16"
PK_KERNEL void k64(Sym<f8e4m3, 1> x, Sym<f8e4m3, 1> y) { all_reduce(Sum, x, y); }
#endif

// language.md:350-353: along a dimension, in place too (`all_gather(x, x, 1)`); all-to-all two dims; within one dim (in place too)
PK_KERNEL void k65(Sym<bf16, 2> x, Sym<bf16, 2> y, Sym<bf16, 2> z, Sym<f32, 3> q, Sym<f32, 3> qh, Sym<f32, 2> u, Sym<f32, 2> w) {
  all_gather(x, y, 1);
  all_gather(z, z, 1);
  reduce_scatter(Sum, x, y, 1);
  all_to_all(q, qh, 0, 1);
  all_to_all(u, w, 1, 1);
  all_to_all(u, u, 1, 1);
}

// language.md:359: rooted, and in place: "`broadcast(x, x, r)`, `reduce(Sum, x, x, r)`, `all_to_all(x, x)`, `all_gather(x, x)`,
// `reduce_scatter(Sum, x, x)`, `gather(x, x, r)`, `scatter(x, x, r)`"
PK_KERNEL void k66(Sym<f32, 1> a, Sym<f32, 1> b, Sym<f32, 1> c, Sym<f32, 1> d, Sym<f32, 1> e, Sym<f32, 1> f, Sym<f32, 1> g, index r) {
  broadcast(a, a, r);
  reduce(Sum, b, b, r);
  all_to_all(c, c);
  all_gather(d, d);
  reduce_scatter(Sum, e, e);
  gather(f, f, r);
  scatter(g, g, r);
}

// language.md:360: "A peer's copy may be named once, `auto ny = y.on(next_rank());`, and used by later moves with p as it was there"
PK_KERNEL void k67(Sym<f32, 2> x, Sym<f32, 2> y) {
  auto ny = y.on(next_rank());
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(ny, load<16, 64>(x, m, n), m, n);
}

// language.md:362: "`store_add(y.on(owner), t, m, n)` ... `red.global.add` (f32, bf16, f16, and i32 and i64 exactly) ... zero `y` first in the spec"
PK_KERNEL void k68(Sym<bf16, 2> x, Sym<bf16, 2> y, Sym<i64, 2> xi, Sym<i64, 2> yi) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {64, 256})) store(y, zeros<bf16, 64, 256>(), m, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store_add(y.on(m / y.rows()), load<16, 64>(x, m, n), m % y.rows(), n);
  for (auto [m, n] : tiles(xi.rows(), xi.cols(), {16, 64})) store_add(yi.on(0), load<16, 64>(xi, m, n), m, n);
}

// language.md:363: "`store_add(db, colsum, 0, n)` (db a local `Tensor<T, 2>`, or a `Sym<T, 2>`) ... a column sum over row tiles"
PK_KERNEL void k69(Tensor<f32, 2> dy, Tensor<f32, 2> db, Sym<f32, 2> ds) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {64, 128})) {
    auto colsum = transpose(row_sum(transpose(load<64, 128>(dy, m, n))));
    store_add(db, colsum, 0, n);
    store_add(ds, colsum, 0, n);
  }
}

#ifdef BAD_k70
// language.md:363: "a 1-D tensor is refused (declare it [1, N]), and so is one of 3 or more dimensions (view it as 2-D)"
PK_KERNEL void k70(Tensor<f32, 2> dy, Tensor<f32, 1> db) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {64, 128}))
    store_add(db, reshape<128>(transpose(row_sum(transpose(load<64, 128>(dy, m, n))))), n);
}
#endif
#ifdef BAD_k70b
PK_KERNEL void k70b(Tensor<f32, 3> dy, Tensor<f32, 3> db) {
  for (auto [h, m] : tiles(dy.dim(0), dy.dim(1), {1, 64})) store_add(db, load<1, 64, 128>(dy, h, m, 0), h, 0, 0);
}
#endif

// language.md:380: "Tensor-parallel RMSNorm", verbatim
PK_KERNEL void tp_rms_norm(Tensor<f32, 2> x, Tensor<f32, 2> w, Sym<f32, 2> ss, Sym<f32, 2> total,
                           Tensor<f32, 2> y, float inv_n, float eps) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 2048>(x, m, 0);
    store(ss, row_sum(t * t), m, 0);
  }
  all_reduce(Sum, ss, total);
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 2048>(x, m, 0);
    store(y, t * rsqrt(load<8, 1>(total, m, 0) * inv_n + eps) * load<1, 2048>(w, 0, 0), m, 0);
  }
}

// language.md:441: "x = scale * (sum over ranks of x) + s, `steps` times: a host loop of `steps` launches.", verbatim
PK_KERNEL void iterate(Sym<f32, 1> x, Sym<f32, 1> y, index steps, float scale) {
  for (auto s : range(0, steps, 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.dim(0), {256})) store(x, load<256>(y, i) * scale + zeros<f32, 256>() + s, i);
  }
}

#ifdef BAD_k74
// language.md:435: "the bounds evaluated on the host. They must be known there ... (a bound read from device memory is an error at the loop)"
PK_KERNEL void k74(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<i32, 1> steps) {
  for (auto s : range(0, steps.at(0), 1)) all_reduce(Sum, x, y);
}
#endif

#ifdef BAD_k75
// language.md:454: "an inner loop's bounds must not depend on the outer loop's variable (an error at the inner loop)"
PK_KERNEL void k75(Sym<f32, 1> x, Sym<f32, 1> y, index steps) {
  for (auto s : range(0, steps, 1))
    for (auto t : range(0, s, 1)) all_reduce(Sum, x, y);
}
#endif

// language.md:474-481: pull_prev, verbatim
PK_KERNEL void pull_prev(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));  // every rank's x is ready
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    store(y, prim::load_peer<32, 128>(Ldst, x.on(prev_rank()), m, n), m, n);
  prim::barrier(prim::flag(1));  // nobody reuses x while a peer reads it
}

#ifdef BAD_k77
// language.md:463: "a constant slot must be below 1024"
PK_KERNEL void k77(Sym<f32, 2> x) { prim::barrier(prim::flag(1024)); }
#endif

#ifdef BAD_k78
// language.md:464: "A `Grid` flag signalled outside a tile loop is bumped once per block, so waits on it cannot count its signals: such a protocol is refused"
PK_KERNEL void k78(Sym<f32, 2> x) {
  auto f = prim::flag(0, Grid);
  prim::signal(f, next_rank());
  prim::wait(f, 1);
}
#endif

#ifdef BAD_k79
// language.md:484: "A move to or from one peer (`store_async`, ...) has no multicast form: `Multimem` there is an error at the argument."
PK_KERNEL void k79(Sym<f32, 2> x, Sym<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) prim::store_async(Multimem, y.on(next_rank()), load<32, 128>(x, m, n), m, n);
  prim::barrier(prim::flag(1));
}
#endif

// language.md:480: "`Multimem` is for the reductions over every rank (`prim::reduce`, `prim::all_reduce`): they run by register loads and stores, as `--explain` says"
PK_KERNEL void k80(Sym<f32, 2> x, Tensor<f32, 2> y) {
  prim::barrier(prim::flag(0));
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) store(y, prim::reduce<16, 256>(Sum, Multimem, x, m, n), m, n);
  prim::barrier(prim::flag(1));
}

#ifdef BAD_k81
// language.md:491: "storing into elements another iteration stores into (a tile wider or taller than the step, a second store part of a tile on, a store at `n / 2` ...; stores of equal values are refused too)"
PK_KERNEL void k81(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, zeros<f32, 16, 64>(), m, n / 2);
}
#endif

#ifdef BAD_k82
// language.md:500: "a store whose indices ignore one of its loop's dimensions ... (a constant extent is checked at compile time)"
PK_KERNEL void k82(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(128, x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), 0, n);
}
#endif

// README.md:83-91: gemm_rs, verbatim
PK_KERNEL void gemm_rs(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> c) {
  index rows = a.rows() / world_size();
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store_add(c.on(m / rows), cast<bf16>(acc), m % rows, n);
  }
}

// README.md:137-143: rms_norm, verbatim
PK_KERNEL void rms_norm(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> y, float inv_n, float eps) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 4096})) {
    auto t = cast<f32>(load<8, 4096>(x, m, n));
    auto r = rsqrt(row_sum(t * t) * inv_n + eps);
    store(y, cast<bf16>(t * r * cast<f32>(load<1, 4096>(w, 0, n))), m, n);
  }
}

// README.md:303 "Anything else beside a GEMM loop (another collective, ..., a max all-reduce, ...) is an error at its line"
// against language.md:499-500 "(A fusion a template cannot implement as written is not refused: the kernel runs as separate launches or on the general path"
PK_KERNEL void k85(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Max, p, c);
}

// README.md:310: "The shipped gemm_ar (its product `p`) ... declare them [Scratch] so; without it pkc refuses the fusion and says why"
PK_KERNEL void k86(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> p, Sym<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(p, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, p, c);
}

#ifdef BAD_k87
// language.md:4: "A function marked `PK_KERNEL` is a kernel (a free function: a member function is an error)"
struct S { PK_KERNEL void k87(Tensor<f32, 1> x); };
PK_KERNEL void S::k87(Tensor<f32, 1> x) { for (auto i : tiles(x.size(), {256})) store(x, load<256>(x, i) * 2.0f, i); }
#endif

#ifdef BAD_k88
// language.md:46: "steps are constants from 1 to 2^31 - 1"
PK_KERNEL void k88(Tensor<f32, 1> x) { for (auto i : tiles(x.size(), {0})) store(x, load<256>(x, i) * 2.0f, i); }
#endif

#ifdef BAD_k89
// language.md:49: "A constant step ... past 2^31 - 1, is an error at the step"
PK_KERNEL void k89(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto k : range(0, x.cols(), 2147483648L)) acc = acc + row_sum(load<16, 64>(x, m, k));
    store(y, acc, m, 0);
  }
}
#endif

#ifdef BAD_k90
// language.md:21: "comparisons, `min` / `max`, shifts, `/` and `%` with an index are refused with the same fix" (shift and ==)
PK_KERNEL void k90(Tensor<i8, 2> x, Tensor<i8, 2> y, index s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(y, (load<16, 128>(x, m, n) >> s) + (load<16, 128>(x, m, n) == s), m, n);
}
#endif

#ifdef BAD_k91
// language.md:82: "one index per tensor dimension, fewer tile extents" (here: fewer indices than dimensions)
PK_KERNEL void k91(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [m, n] : tiles(x.dim(1), x.dim(2), {16, 64})) store(y, load<16, 64>(x, m, n), 0, m, n);
}
#endif

#ifdef BAD_k92
// language.md:23: "Sizes: ... `x.dim(d)`" (d past the tensor's rank)
PK_KERNEL void k92(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.dim(0), x.dim(3), {16, 64})) store(y, load<16, 64>(x, m, n), m, n);
}
#endif

#ifdef BAD_k93
// language.md:99: "each row's K largest elements (K at most N)"
PK_KERNEL void k93(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) store(y, row_topk<32>(load<16, 16>(x, m, 0)), m, 0);
}
#endif

#ifdef BAD_k94
// language.md:353: "along a dimension `all_gather(x, y, 1)` (the dimension a constant)": a dimension past the rank
PK_KERNEL void k94(Sym<f32, 2> x, Sym<f32, 2> y) { all_gather(x, y, 2); }
#endif

#ifdef BAD_k95
// language.md:344: all_reduce of two element types (the docs say nothing: expect a clear error)
PK_KERNEL void k95(Sym<f32, 1> x, Sym<bf16, 1> y) { all_reduce(Sum, x, y); }
#endif

#ifdef BAD_k96
// language.md:81: "extents of 1 beyond the tensor's rank are dropped": a 16 x 64 tile stored into a 1-D tensor
PK_KERNEL void k96(Tensor<f32, 2> x, Tensor<f32, 1> y) {
  for (auto m : tiles(x.rows(), {16})) store(y, load<16, 64>(x, m, 0), m);
}
#endif

// language.md:24: "`/` truncates toward zero and `/` or `%` by a run-time zero gives 0, as for integer tiles"
PK_KERNEL void k97(Tensor<f32, 2> x, Tensor<f32, 2> y, index d) {
  index q = x.rows() / d + x.cols() % d;
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n) + float(q), m, n);
}

// language.md:86: "a division by a constant power of two multiplies by its exact inverse; any other tile division is fp32 division, correctly rounded"
PK_KERNEL void k98(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    store(y, t / 4.0f, m, n);
    store(z, t / load<16, 64>(y, m, n), m, n);
  }
}

#ifdef BAD_k99
// language.md:103: histogram "of the values 0..63 in an integer tile": an i8 tile (spec.h: cast<i32> first)
PK_KERNEL void k99(Tensor<i8, 1> e, Tensor<i32, 2> h) {
  for (auto i : tiles(e.size(), {1024})) store_add(h, reshape<1, 64>(histogram<64>(load<1024>(e, i))), 0, 0);
}
#endif

// language.md:262-263: "An f32-output GEMM takes the template only as a kernel of its own."
PK_KERNEL void k100(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c, Tensor<f32, 2> d) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
  for (auto [m, n] : tiles(c.rows(), c.cols(), {16, 256})) store(d, exp(load<16, 256>(c, m, n)), m, n);
}

// language.md:294: "optionally `lse = m + log(l)` into ... a 1-D [S] one at [m]), with head dim 64 or 128 and q, k, v, o of one
// 16-bit type (bf16, or f16 with `cast<f16>(p)` and `cast<f16>(acc / l)`)"; GQA "K and V loaded at head `h / G` ... an argument (`index group`)"
PK_KERNEL void k101(Tensor<f16, 3> q, Tensor<f16, 3> k, Tensor<f16, 3> v, Tensor<f16, 3> o, Tensor<f32, 3> lse, float scale, index group) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h / group, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<f16>(p), load<64, 64>(v, h / group, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<f16>(acc / l), h, m, 0);
    store(lse, mx + log(l), h, m, 0);
  }
}

// language.md:295: "with head dim 64 or 128" ... "any difference keeps the general tile path and `--explain` names the first step that differs" (head dim 96)
PK_KERNEL void k102(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, float scale) {
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 96>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 96>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 96>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 96>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}

// language.md:294: "optionally `lse = m + log(l)` into an f32 [S, 1] ... or a 1-D [S] one at [m]"
PK_KERNEL void k103(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<bf16, 2> o, Tensor<f32, 1> lse, float scale) {
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
    store(lse, mx + log(l), m);
  }
}

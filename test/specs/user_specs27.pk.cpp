// The twenty-seventh user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and test/specs/int8.pk.cpp as a new user of the 8-bit
// integer type `i8` (and round / floor / ceil) in real kernels: int8 quantisation of activations, KV caches and
// gradients (per token, per 128-wide block, per tensor), int8 embeddings and KV-cache gathers by index tiles,
// scatters by slot, int8 masks, i8 bit packing, shifts and wrapping arithmetic at the edges, casts between i8 and
// f16 / fp8 / i32 / i64 / f32 at their saturation edges, i8 GEMM operands in both layouts with tails, GEMMs whose
// epilogue quantises to i8, dequantise + norms, and across ranks int8 communication (all_gather along dimension 1,
// all_to_all, peer stores and pulls, ring shifts, rows scattered into peers). Nothing assumes a world size.
// Each kernel compiles alone (pkc FILE --kernel NAME) and the file compiles as a whole. Each comment gives the exact
// semantics: W = world_size(), r = rank(); wrap8(v) = v mod 2^8 in -128 .. 127; sat8(v) = v truncated toward zero
// and clamped to -128 .. 127 (NaN -> 0); rne(v) = v rounded half to even; "x[i]" of a Sym is this rank's copy.
// Part (b) is user_specs27_bad.pk.cpp; the findings' reproducers user_specs27_probes.pk.cpp; findings in
// test/specs/specs27_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ Quantisation

// 1. Per-block (128 columns) symmetric int8 quantisation, as DeepSeek's activation blocks: x f32 [M, K];
// q i8 [M, K]: q[m, k] = sat8(rne(x[m, k] * (127 / a))) with a = max(amax of x[m, 128 b .. 128 b + 127], 1e-12)
// (b = k / 128; columns past K count as 0); s f32 [M, ceil(K / 128)]: s[m, b] = a / 127.
PK_KERNEL void i8_block_quant_128(Tensor<f32, 2> x, Tensor<i8, 2> q, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = load<16, 128>(x, m, n);
    auto a = max(row_max(abs(t)), 1e-12f);
    store(q, cast<i8>(round(t * (127.0f / a))), m, n);
    store(s, a * (1.0f / 127.0f), m, n / 128);
  }
}

// 2. Per-tensor int8 quantisation in three phases: amax f32 [M, 1]: amax[m] = max |x[m, :]| (K <= 512);
// g f32 [1, 1]: g = max(max over m of amax[m], 1e-12) (M <= 1024); q i8 [M, K]: q = sat8(rne(x * (127 / g))).
PK_KERNEL void i8_per_tensor_quant(Tensor<f32, 2> x, Tensor<f32, 2> amax, Tensor<f32, 2> g, Tensor<i8, 2> q) {
  for (auto m : tiles(x.rows(), {16})) store(amax, row_max(abs(load<16, 512>(x, m, 0))), m, 0);
  for (auto z : tiles(1, {1})) {
    auto col = load<1024, 1>(amax, 0, 0);
    store(g, max(transpose(row_max(transpose(col))), 1e-12f), 0, 0);
  }
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64})) {
    float gm = g.at(0, 0);
    store(q, cast<i8>(round(load<32, 64>(x, m, n) * (127.0f / gm))), m, n);
  }
}

// 3. Asymmetric (zero-point) uint8-style quantisation held in i8: per row lo = min(x[m, :]), hi = max(x[m, :]) over
// K <= 256 columns (the clipped columns excluded: masked to x's row value), sc = max(hi - lo, 1e-8) / 255,
// q[m, k] = sat8(rne((x[m, k] - lo) / sc) - 128); sz f32 [M, 2]: sz[m, 0] = sc, sz[m, 1] = lo.
PK_KERNEL void i8_asym_quant_rows(Tensor<bf16, 2> x, Tensor<i8, 2> q, Tensor<f32, 2> sz) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = cast<f32>(load<16, 256>(x, m, 0));
    auto inside = col_index<16, 256>(0) < x.cols();
    auto lo = row_min(where(inside, t, 3e38f));
    auto hi = row_max(where(inside, t, -3e38f));
    auto sc = max(hi - lo, 1e-8f) * (1.0f / 255.0f);
    store(q, cast<i8>(round((t - lo) / sc) - 128.0f), m, 0);
    store(sz, sc, m, 0);
    store(sz, lo, m, 1);
  }
}

// 4. Round-half-up against half-to-even: x f32 [M, N]; up i8 = sat8(floor(x + 0.5)); ev i8 = sat8(rne(x));
// dn i8 = sat8(ceil(x - 0.5)) (half down); tz i8 = sat8(x) (toward zero, no rounding call).
PK_KERNEL void i8_rounding_modes(Tensor<f32, 2> x, Tensor<i8, 2> up, Tensor<i8, 2> ev, Tensor<i8, 2> dn,
                                 Tensor<i8, 2> tz) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48})) {
    auto t = load<16, 48>(x, m, n);
    store(up, cast<i8>(floor(t + 0.5f)), m, n);
    store(ev, cast<i8>(round(t)), m, n);
    store(dn, cast<i8>(ceil(t - 0.5f)), m, n);
    store(tz, cast<i8>(t), m, n);
  }
}

// 5. Casts at the edges: h f16 [M, N], e fp8 e4m3 [M, N], l i64 [M, N], q i8 [M, N];
// qh i8 = sat8(h); qe i8 = sat8(e); ql i8 = wrap8(l); q16 f16 = f16(q) (exact); q8 e4m3 = e4m3(q) (nearest, ties to
// even: 127 -> 128, 124 -> 128, 123 -> 120); q64 i64 = q (sign-extended); qf f32 = q.
PK_KERNEL void i8_cast_edges(Tensor<f16, 2> h, Tensor<f8e4m3, 2> e, Tensor<i64, 2> l, Tensor<i8, 2> q,
                             Tensor<i8, 2> qh, Tensor<i8, 2> qe, Tensor<i8, 2> ql, Tensor<f16, 2> q16,
                             Tensor<f8e4m3, 2> q8, Tensor<i64, 2> q64, Tensor<f32, 2> qf) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {16, 64})) {
    auto tq = load<16, 64>(q, m, n);
    store(qh, cast<i8>(load<16, 64>(h, m, n)), m, n);
    store(qe, cast<i8>(load<16, 64>(e, m, n)), m, n);
    store(ql, cast<i8>(load<16, 64>(l, m, n)), m, n);
    store(q16, cast<f16>(tq), m, n);
    store(q8, cast<f8e4m3>(tq), m, n);
    store(q64, cast<i64>(tq), m, n);
    store(qf, cast<f32>(tq), m, n);
  }
}

// 6. Dequantise + RMSNorm + requantise (a SmoothQuant block): q i8 [M, D], s f32 [M, 1], w bf16 [D] (D <= 512);
// x = q * s; y = x * rsqrt(mean(x^2) + eps) * w (mean over D); out i8 = sat8(rne(y * 127 / max(amax(y), 1e-12)));
// os f32 [M, 1] = max(amax(y), 1e-12) / 127. Columns past D are 0 in x and y (w reads 0 there).
PK_KERNEL void i8_dequant_rmsnorm_requant(Tensor<i8, 2> q, Tensor<f32, 2> s, Tensor<bf16, 1> w, Tensor<i8, 2> out,
                                          Tensor<f32, 2> os, float eps) {
  for (auto m : tiles(q.rows(), {8})) {
    auto x = cast<f32>(load<8, 512>(q, m, 0)) * load<8, 1>(s, m, 0);
    auto y = x * rsqrt(row_sum(x * x) * (1.0f / float(q.cols())) + eps) * cast<f32>(load<1, 512>(w, 0));
    auto a = max(row_max(abs(y)), 1e-12f);
    store(out, cast<i8>(round(y * (127.0f / a))), m, 0);
    store(os, a * (1.0f / 127.0f), m, 0);
  }
}

// 7. Dequantise + LayerNorm to bf16: q i8 [M, D] (D <= 256), scale a float; x = q * scale;
// y[m, :] = bf16((x - mean) * rsqrt(var + eps) * g + b), mean and var over the D valid columns (biased var);
// g, b f32 [D].
PK_KERNEL void i8_dequant_layernorm(Tensor<i8, 2> q, Tensor<f32, 1> g, Tensor<f32, 1> b, Tensor<bf16, 2> y,
                                    float scale, float eps) {
  for (auto m : tiles(q.rows(), {16})) {
    auto x = cast<f32>(load<16, 256>(q, m, 0)) * scale;
    float inv = 1.0f / float(q.cols());
    auto mean = row_sum(x) * inv;
    auto c = where(col_index<16, 256>(0) < q.cols(), x - mean, 0.0f);
    auto var = row_sum(c * c) * inv;
    store(y, cast<bf16>(c * rsqrt(var + eps) * load<1, 256>(g, 0) + load<1, 256>(b, 0)), m, 0);
  }
}

// ============================================================================ KV caches and embeddings

// 8. Quantised KV-cache write by slot: k bf16 [T, D] (D = 128), slot i32 [T] (-1: skip the token);
// kc i8 [S, D]: kc[slot[t], :] = sat8(rne(k[t, :] * 127 / a_t)), a_t = max(amax(k[t, :]), 1e-6);
// ks f32 [S, 1]: ks[slot[t], 0] = a_t / 127. Other slots untouched.
PK_KERNEL void i8_kv_cache_write(Tensor<bf16, 2> k, Tensor<i32, 1> slot, Tensor<i8, 2> kc, Tensor<f32, 2> ks) {
  for (auto t : tiles(k.rows(), {16})) {
    auto x = cast<f32>(load<16, 128>(k, t, 0));
    auto a = max(row_max(abs(x)), 1e-6f);
    auto sl = load<16, 1>(slot, t);
    store_rows(kc, cast<i8>(round(x * (127.0f / a))), sl, 0);
    store_rows(ks, a * (1.0f / 127.0f), sl, 0);
  }
}

// 9. Paged int8 KV gather + dequantise: kc i8 [S, D], ks f32 [S, 1], bt i32 [B, P] (block table, blocks of 16 slots;
// -1 = no block); out bf16 [B, P * 16, D]: out[b, 16 p + i, d] = bf16(kc[bt[b, p] * 16 + i, d] * ks[...]) (zeros
// where bt is -1). D <= 128, one tile of D per row.
PK_KERNEL void i8_kv_cache_gather(Tensor<i8, 2> kc, Tensor<f32, 2> ks, Tensor<i32, 2> bt, Tensor<bf16, 3> out) {
  for (auto [b, j] : tiles(out.dim(0), out.dim(1), {1, 16})) {
    index blk = bt.at(b, j / 16);
    auto r = where(zeros<i32, 16, 1>() + blk >= 0, cast<i32>(row_index<16, 1>(0)) + blk * 16, -1);
    auto v = cast<f32>(load_rows<16, 128>(kc, r, 0)) * load_rows<16, 1>(ks, r, 0);
    store(out, reshape<1, 16, 128>(cast<bf16>(v)), b, j, 0);
  }
}

// 10. int8 embedding by i64 ids with a 1-D id tile, 48-wide column tiles (tails in both dimensions):
// ids i64 [T]; table i8 [V, D]; y i8 [T, D]: y[t, :] = table[ids[t], :] (zeros for ids outside 0 .. V - 1).
PK_KERNEL void i8_embedding_i64_ids(Tensor<i64, 1> ids, Tensor<i8, 2> table, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(ids.size(), y.cols(), {16, 48})) store(y, load_rows<16, 48>(table, load<16>(ids, m), n), m, n);
}

// 11. int8 rows scattered by index (a permutation's inverse): x i8 [T, D], dst i32 [T]; y i8 [R, D]:
// y[dst[t], :] = x[t, :] + 1 (wrapping: 127 -> -128); rows no dst names keep what they held.
PK_KERNEL void i8_scatter_rows_wrap(Tensor<i8, 2> x, Tensor<i32, 1> dst, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store_rows(y, load<16, 64>(x, m, n) + 1, load<16>(dst, m), n);
}

// 12. Quantised MoE dispatch: x bf16 [T, D] (D = 128), expert i32 [T]; fill i32 [E] counters (in: 0); cap rows per
// expert; buf i8 [E * cap, D], bs f32 [E * cap, 1]: each token t (0 <= expert < E) claims slot c of its expert
// (distinct, 0 .. count - 1) and, where c < cap, buf[e * cap + c] = sat8(rne(x[t] * 127 / a_t)), bs = a_t / 127,
// a_t = max(amax(x[t]), 1e-6); slot i32 [T] = e * cap + c, or -1 (dropped or no expert).
PK_KERNEL void i8_moe_dispatch(Tensor<bf16, 2> x, Tensor<i32, 1> expert, Tensor<i32, 1> fill, Tensor<i8, 2> buf,
                               Tensor<f32, 2> bs, Tensor<i32, 1> slot, index cap) {
  for (auto t : tiles(x.rows(), {32})) {
    auto e = load<32, 1>(expert, t);
    auto c = claim(fill, e);
    auto s = where((c >= 0) && (c < cap), e * cap + c, -1);
    auto v = cast<f32>(load<32, 128>(x, t, 0));
    auto a = max(row_max(abs(v)), 1e-6f);
    store_rows(buf, cast<i8>(round(v * (127.0f / a))), s, 0);
    store_rows(bs, a * (1.0f / 127.0f), s, 0);
    store(slot, s, t);
  }
}

// ============================================================================ Integer arithmetic and bits

// 13. int4 pairs packed in i8: lo, hi i8 [M, N] in -8 .. 7; p i8 = (lo & 15) | (hi << 4) (wrapping);
// ulo i8 = (p << 4) >> 4 (the low nibble sign-extended), uhi i8 = p >> 4 (arithmetic). ulo == lo, uhi == hi.
PK_KERNEL void i8_int4_pack_unpack(Tensor<i8, 2> lo, Tensor<i8, 2> hi, Tensor<i8, 2> p, Tensor<i8, 2> ulo,
                                   Tensor<i8, 2> uhi) {
  for (auto [m, n] : tiles(lo.rows(), lo.cols(), {16, 48})) {
    auto packed = (load<16, 48>(lo, m, n) & 15) | (load<16, 48>(hi, m, n) << 4);
    store(p, packed, m, n);
    store(ulo, (packed << 4) >> 4, m, n);
    store(uhi, packed >> 4, m, n);
  }
}

// 14. Shifts by per-element counts (tile by tile, counts anywhere in -128 .. 127): x, c i8 [M, N];
// l i8 = (0 <= c < 8) ? wrap8(x * 2^c) : 0; r i8 = (0 <= c < 8) ? x >> c (floor of x / 2^c) : (x < 0 ? -1 : 0);
// l7 = wrap8(x << 7); r7 = x >> 7 (-1 or 0); r8 = x >> 8 (a constant count 8: the sign fill); l8 = x << 8 (0).
PK_KERNEL void i8_shift_counts(Tensor<i8, 2> x, Tensor<i8, 2> c, Tensor<i8, 2> l, Tensor<i8, 2> r, Tensor<i8, 2> l7,
                               Tensor<i8, 2> r7, Tensor<i8, 2> r8, Tensor<i8, 2> l8) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto tx = load<16, 64>(x, m, n);
    auto tc = load<16, 64>(c, m, n);
    store(l, tx << tc, m, n);
    store(r, tx >> tc, m, n);
    store(l7, tx << 7, m, n);
    store(r7, tx >> 7, m, n);
    store(r8, tx >> 8, m, n);
    store(l8, tx << 8, m, n);
  }
}

// 15. Wrapping at the edges: a, b i8 [M, N]; neg = wrap8(-a); ab = wrap8(|a|) (|-128| = -128); dv = a / b truncated
// (b == 0 -> 0; -128 / -1 -> wrap8(128) = -128); md = a % b (sign of a; b == 0 or -1 -> 0); mx = max(a, b);
// mn = min(a, b); sq = wrap8(a * a); k = wrap8(a * -128 + 127).
PK_KERNEL void i8_wrap_edges(Tensor<i8, 2> a, Tensor<i8, 2> b, Tensor<i8, 2> neg, Tensor<i8, 2> ab, Tensor<i8, 2> dv,
                             Tensor<i8, 2> md, Tensor<i8, 2> mx, Tensor<i8, 2> mn, Tensor<i8, 2> sq, Tensor<i8, 2> k) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) {
    auto ta = load<16, 64>(a, m, n);
    auto tb = load<16, 64>(b, m, n);
    store(neg, -ta, m, n);
    store(ab, abs(ta), m, n);
    store(dv, ta / tb, m, n);
    store(md, ta % tb, m, n);
    store(mx, max(ta, tb), m, n);
    store(mn, min(ta, tb), m, n);
    store(sq, ta * ta, m, n);
    store(k, ta * -128 + 127, m, n);
  }
}

// 16. Saturating int8 add (as a requantised residual): a, b i8 [M, N]; y i8 = clamp(a + b, -128, 127) computed in i32;
// w i8 = wrap8(a + b) (the plain i8 sum).
PK_KERNEL void i8_saturating_add(Tensor<i8, 2> a, Tensor<i8, 2> b, Tensor<i8, 2> y, Tensor<i8, 2> w) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 48})) {
    auto ta = load<16, 48>(a, m, n);
    auto tb = load<16, 48>(b, m, n);
    store(y, cast<i8>(min(max(cast<i32>(ta) + cast<i32>(tb), -128), 127)), m, n);
    store(w, ta + tb, m, n);
  }
}

// 17. Zero point and scale per row read as scalars: q i8 [M, N], zp i8 [M] (per row), sc f32 [M];
// y f32 [M, N] = (q[m, n] - zp[m]) * sc[m] (difference in i32: -255 .. 255). One row per tile.
PK_KERNEL void i8_zero_point_rows(Tensor<i8, 2> q, Tensor<i8, 1> zp, Tensor<f32, 1> sc, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {1, 128})) {
    index z = zp.at(m);
    float s = sc.at(m);
    store(y, cast<f32>(cast<i32>(load<1, 128>(q, m, n)) - z) * s, m, n);
  }
}

// 18. An i8 scalar from memory beside an i8 tile, wrapping: q i8 [N] (1-D), off i8 [1]; y i8 [N] = wrap8(q + off[0]);
// z i8 [N] = wrap8(q * off[0] - 3).
PK_KERNEL void i8_scalar_offset_1d(Tensor<i8, 1> q, Tensor<i8, 1> off, Tensor<i8, 1> y, Tensor<i8, 1> z) {
  for (auto i : tiles(q.size(), {1000})) {
    index o = off.at(0);
    auto t = load<1000>(q, i);
    store(y, t + o, i);
    store(z, t * o - 3, i);
  }
}

// 19. Counts of int8 values: q i8 [N]; h i32 [1, 256]: h[0, v + 128] = number of n with q[n] == v; one tile of
// 4096 elements per step, counts added with store_add (h zeroed first by the kernel).
PK_KERNEL void i8_value_histogram(Tensor<i8, 1> q, Tensor<i32, 2> h) {
  for (auto z : tiles(1, {1})) store(h, zeros<i32, 1, 256>(), 0, 0);
  for (auto i : tiles(q.size(), {4096})) {
    auto v = cast<i32>(load<4096>(q, i)) + 128;
    auto inside = cast<i32>(dim_index<0, 4096>(0)) < q.size() - i;
    store_add(h, reshape<1, 256>(histogram<256>(where(inside, v, -1))), 0, 0);
  }
}

// 20. Row sums and running sums of int8 values: q i8 [M, N] (N <= 256); rs i32 [M, 1] = sum_n q[m, n];
// cs i32 [M, N] = inclusive prefix sums along the row; nz i32 [M, 1] = number of n with q[m, n] != 0.
PK_KERNEL void i8_row_sums(Tensor<i8, 2> q, Tensor<i32, 2> rs, Tensor<i32, 2> cs, Tensor<i32, 2> nz) {
  for (auto m : tiles(q.rows(), {16})) {
    auto t = load<16, 256>(q, m, 0);
    store(rs, cast<i32>(row_sum(cast<f32>(t))), m, 0);
    store(cs, cumsum(cast<i32>(t)), m, 0);
    store(nz, cast<i32>(row_sum(cast<f32>(t != 0))), m, 0);
  }
}

// ============================================================================ Masks and selects

// 21. int8 attention mask: s f32 [M, N] scores, mk i8 [M, N] (nonzero: keep); p f32 [M, N] = softmax over the row of
// where(mk != 0, s, -1e30) (N <= 128; columns past N are masked too, so a row with no kept key gives 1 / 128 in
// each column: its 128 masked scores tie).
PK_KERNEL void i8_masked_softmax(Tensor<f32, 2> s, Tensor<i8, 2> mk, Tensor<f32, 2> p) {
  for (auto m : tiles(s.rows(), {16})) {
    auto keep = (load<16, 128>(mk, m, 0) != 0) && (cast<i32>(col_index<16, 128>(0)) < s.cols());
    auto x = where(keep, load<16, 128>(s, m, 0), -1e30f);
    auto e = exp(x - row_max(x));
    store(p, e / row_sum(e), m, 0);
  }
}

// 22. Selects of i8 values: a, b i8 [M, N], c f32 [M, N]; y i8 = c > 0 ? a : b; z i8 = a > b ? a : -128;
// u i8 = c < 0 ? 127 : a (an i8 mask from a float comparison: an i8 where with an integer scalar).
PK_KERNEL void i8_selects(Tensor<i8, 2> a, Tensor<i8, 2> b, Tensor<f32, 2> c, Tensor<i8, 2> y, Tensor<i8, 2> z,
                          Tensor<i8, 2> u) {
  for (auto [m, n] : tiles(a.rows(), a.cols(), {16, 64})) {
    auto ta = load<16, 64>(a, m, n);
    auto tb = load<16, 64>(b, m, n);
    auto tc = load<16, 64>(c, m, n);
    store(y, where(tc > 0.0f, ta, tb), m, n);
    store(z, where(ta > tb, ta, -128), m, n);
    store(u, where(tc < 0.0f, 127, ta), m, n);
  }
}

// 23. An int8 dropout / keep mask computed and applied: x bf16 [M, N]; mk i8 [M, N] = 1 where u >= p else 0, with
// u = uniform(seed, m, n); y bf16 = bf16(x * mk * (1 / (1 - p))).
PK_KERNEL void i8_dropout_mask(Tensor<bf16, 2> x, Tensor<i8, 2> mk, Tensor<bf16, 2> y, index seed, float p) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto keep = cast<i8>(uniform<16, 128>(seed, m, n) >= p);
    store(mk, keep, m, n);
    store(y, cast<bf16>(cast<f32>(load<16, 128>(x, m, n)) * cast<f32>(keep) * (1.0f / (1.0f - p))), m, n);
  }
}

// 24. Top-2 of dequantised int8 logits per row: q i8 [M, 64], s f32 [M, 1]; v f32 [M, 2] = the two largest of
// q[m, :] * s[m] (ties: the lower column first), ix i32 [M, 2] their columns.
PK_KERNEL void i8_topk_dequant(Tensor<i8, 2> q, Tensor<f32, 2> s, Tensor<f32, 2> v, Tensor<i32, 2> ix) {
  for (auto m : tiles(q.rows(), {16})) {
    auto x = cast<f32>(load<16, 64>(q, m, 0)) * load<16, 1>(s, m, 0);
    store(v, row_topk<2>(x), m, 0);
    store(ix, row_topk_index<2>(x), m, 0);
  }
}

// ============================================================================ Shapes

// 25. i8 transpose with tails: x i8 [M, N]; y i8 [N, M] = x^T. 16 x 48 tiles.
PK_KERNEL void i8_transpose(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48})) store(y, transpose(load<16, 48>(x, m, n)), n, m);
}

// 26. 3-D int8 tiles: x i8 [B, S, D]; bias i8 [D]; y i8 [B, S, D] = wrap8(x + bias[d]); head i8 [S, D] =
// x[0, :, :] (reshaped from the first batch's [1, S, D] tile).
PK_KERNEL void i8_3d_bias(Tensor<i8, 3> x, Tensor<i8, 1> bias, Tensor<i8, 3> y, Tensor<i8, 2> head) {
  for (auto [b, s, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {2, 16, 32})) {
    auto t = load<2, 16, 32>(x, b, s, d);
    store(y, t + reshape<1, 1, 32>(load<32>(bias, d)), b, s, d);
  }
  for (auto [s, d] : tiles(x.dim(1), x.dim(2), {16, 32})) store(head, reshape<16, 32>(load<1, 16, 32>(x, 0, s, d)), s, d);
}

// 27. A 1-D int8 stream dequantised per 128-element group: q i8 [N], s f32 [ceil(N / 128)];
// y f32 [N] = q[i] * s[i / 128]. 128-element tiles.
PK_KERNEL void i8_dequant_groups_1d(Tensor<i8, 1> q, Tensor<f32, 1> s, Tensor<f32, 1> y) {
  for (auto i : tiles(q.size(), {128})) store(y, cast<f32>(load<128>(q, i)) * s.at(i / 128), i);
}

// ============================================================================ GEMMs

// 28. W8A8 in the A·B layout with tails: a i8 [M, K], b i8 [K, N]; sa f32 [M, 1], sb f32 [1, N];
// y f32 [M, N] = (sum_k a[m, k] b[k, n]) * sa[m] * sb[n]. Operands widened to bf16 (exact), f32 accumulation.
PK_KERNEL void i8_gemm_ab_layout(Tensor<i8, 2> a, Tensor<i8, 2> b, Tensor<f32, 2> sa, Tensor<f32, 2> sb,
                                 Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {32, 64})) {
    auto acc = zeros<f32, 32, 64>();
    for (auto k : range(0, a.cols(), 32))
      acc = mma(cast<bf16>(load<32, 32>(a, m, k)), cast<bf16>(load<32, 64>(b, k, n)), acc);
    store(y, acc * load<32, 1>(sa, m, 0) * load<1, 64>(sb, 0, n), m, n);
  }
}

// 29. A GEMM whose epilogue quantises its output to int8: x bf16 [M, K], w bf16 [N, K], inv f32 scalar;
// y i8 [M, N] = sat8(rne((x w^T)[m, n] * inv)).
PK_KERNEL void i8_gemm_quant_epilogue(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<i8, 2> y, float inv) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<64, 64>(w, n, k), acc);
    store(y, cast<i8>(round(acc * inv)), m, n);
  }
}

// 30. Weight-only int8 with the template (K % 16 == 0 at launch, else the twin) and a per-channel scale read as an
// [N, 1] column transposed into a row, plus a bias: x bf16 [M, K], w i8 [N, K], ws f32 [N, 1], bias bf16 [1, N];
// y bf16 [M, N] = bf16((x w^T)[m, n] * ws[n] + bias[n]).
PK_KERNEL void i8_weight_only_bias(Tensor<bf16, 2> x, Tensor<i8, 2> w, Tensor<f32, 2> ws, Tensor<bf16, 2> bias,
                                   Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<256, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc * transpose(load<256, 1>(ws, n, 0)) + cast<f32>(load<1, 256>(bias, 0, n))), m, n);
  }
}

// 31. Dynamic int8 quantisation then a W8A8 GEMM (two phases): x bf16 [M, K] (K <= 256), w i8 [N, K], sw f32 [N];
// xq i8 [M, K] = sat8(rne(x * 127 / a_m)), xs f32 [M, 1] = a_m / 127 (a_m = max(amax(x[m]), 1e-6));
// y f32 [M, N] = (sum_k xq[m, k] w[n, k]) * xs[m] * sw[n].
PK_KERNEL void i8_dynamic_quant_gemm(Tensor<bf16, 2> x, Tensor<i8, 2> xq, Tensor<f32, 2> xs, Tensor<i8, 2> w,
                                     Tensor<f32, 1> sw, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = cast<f32>(load<16, 256>(x, m, 0));
    auto a = max(row_max(abs(t)), 1e-6f);
    store(xq, cast<i8>(round(t * (127.0f / a))), m, 0);
    store(xs, a * (1.0f / 127.0f), m, 0);
  }
  for (auto [m, n] : tiles(x.rows(), w.rows(), {32, 32})) {
    auto acc = zeros<f32, 32, 32>();
    for (auto k : range(0, x.cols(), 32))
      acc = mma_t(cast<f16>(load<32, 32>(xq, m, k)), cast<f16>(load<32, 32>(w, n, k)), acc);
    store(y, acc * load<32, 1>(xs, m, 0) * load<1, 32>(sw, n), m, n);
  }
}

// ============================================================================ Across ranks

// 32. int8 gradient compression with an all-gather: g f32 [R, C] per rank (C <= 256); gq Sym i8 [R, C] and gs Sym
// f32 [R, 1] = this rank's per-row quantisation (sat8(rne(g * 127 / a)), a / 127, a = max(amax(g[row]), 1e-12));
// aq i8 [W R, C], as f32 [W R, 1] = all-gathered; out f32 [R, C] = (sum_p aq[p R + row] * as[p R + row]) / W.
PK_KERNEL void i8_grad_allgather_mean(Tensor<f32, 2> g, Sym<i8, 2> gq, Sym<f32, 2> gs, Tensor<i8, 2> aq,
                                      Tensor<f32, 2> as, Tensor<f32, 2> out) {
  for (auto m : tiles(g.rows(), {16})) {
    auto t = load<16, 256>(g, m, 0);
    auto a = max(row_max(abs(t)), 1e-12f);
    store(gq, cast<i8>(round(t * (127.0f / a))), m, 0);
    store(gs, a * (1.0f / 127.0f), m, 0);
  }
  all_gather(gq, aq);
  all_gather(gs, as);
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 128})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto p : range(0, world_size(), 1))
      acc = acc + cast<f32>(load<16, 128>(aq, p * g.rows() + m, n)) * load<16, 1>(as, p * g.rows() + m, 0);
    store(out, acc * (1.0f / float(world_size())), m, n);
  }
}

// 33. int8 column shards all-gathered along dimension 1: x Sym i8 [R, C] (rank r's columns r C .. r C + C - 1 of the
// whole); y Sym i8 [R, W C]: y[:, p C + j] = x_p[:, j].
PK_KERNEL void i8_all_gather_cols(Sym<i8, 2> x, Sym<i8, 2> y) { all_gather(x, y, 1); }

// 34. int8 all-to-all of column blocks: x Sym i8 [R, C] (C a multiple of W); y Sym i8 [R, C]: block j (C / W columns)
// of rank r's x lands on rank j as block r.
PK_KERNEL void i8_all_to_all_cols(Sym<i8, 2> x, Sym<i8, 2> y) { all_to_all(x, y, 1, 1); }

// 35. Sequence to head parallelism of an int8 KV block: x Sym i8 [H, S / W, D]; y Sym i8 [H / W, S, D]:
// all_to_all(x, y, 0, 1) (rank r's head block j lands on rank j as sequence block r).
PK_KERNEL void i8_all_to_all_heads(Sym<i8, 3> x, Sym<i8, 3> y) { all_to_all(x, y, 0, 1); }

// 36. Ring shift of int8 tiles with a wrapping increment: x Sym i8 [R, C]; y Sym i8 [R, C]: y on rank next_rank() =
// wrap8(x + r + 1) of rank r (so y_r = wrap8(x_{r-1} + r)) where r - 1 is prev_rank (mod W) and the addend is the
// sender's rank + 1.
PK_KERNEL void i8_ring_shift(Sym<i8, 2> x, Sym<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(next_rank()), load<16, 64>(x, m, n) + (rank() + 1), m, n);
}

// 37. int8 rows pulled from the previous rank and XOR-ed with ours: x Sym i8 [R, C]; y i8 [R, C] = x_r ^ x_{prev}.
PK_KERNEL void i8_pull_prev_xor(Sym<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48}))
    store(y, load<16, 48>(x, m, n) ^ load<16, 48>(x.on(prev_rank()), m, n), m, n);
}

// 38. Gather int8 rows to rank 0 by scatter: x i8 [R, C] per rank; y Sym i8 [W R, C]: rank r's row i lands at rank 0's
// y[r R + i] (y on ranks other than 0 untouched).
PK_KERNEL void i8_gather_rows_to_root(Tensor<i8, 2> x, Sym<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store_rows(y.on(0), load<16, 64>(x, m, n), cast<i32>(row_index<16, 1>(m)) + rank() * x.rows(), n);
}

// 39. int8 gradient sums across ranks in i32: gq Sym i8 [R, C] (C <= 128) quantised gradients with one shared scale
// sc (a float); acc Sym i32 [R, C] (workspace), tot Sym i32 [R, C] = sum over ranks of gq (exact);
// y i8 [R, C] = sat8(rne(tot * sc / W / osc)) requantised to the output scale osc.
PK_KERNEL void i8_allreduce_requant(Sym<i8, 2> gq, Sym<i32, 2> acc, Sym<i32, 2> tot, Tensor<i8, 2> y, float sc,
                                    float osc) {
  for (auto [m, n] : tiles(gq.rows(), gq.cols(), {16, 128})) store(acc, cast<i32>(load<16, 128>(gq, m, n)), m, n);
  all_reduce(Sum, acc, tot);
  for (auto [m, n] : tiles(gq.rows(), gq.cols(), {16, 128})) {
    auto t = cast<f32>(load<16, 128>(tot, m, n)) * (sc / float(world_size()) / osc);
    store(y, cast<i8>(round(t)), m, n);
  }
}

// 40. Expert-parallel int8 send of rows to owners: x i8 [T, D], dst i32 [T] (global row: owner p = dst / R, local row
// dst % R; dst < 0 or >= W R: dropped); y Sym i8 [R, D]: y_p[dst % R] = x[t] for the rows sent to p. The kernel
// sends to every p in a loop (rows for other owners masked to -1).
PK_KERNEL void i8_rows_to_owners(Tensor<i8, 2> x, Tensor<i32, 1> dst, Sym<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto d = load<16, 1>(dst, m);
    auto t = load<16, 64>(x, m, n);
    for (auto p : range(0, world_size(), 1)) {
      auto local = where((d >= p * y.rows()) && (d < (p + 1) * y.rows()), d - p * y.rows(), -1);
      store_rows(y.on(p), t, local, n);
    }
  }
}

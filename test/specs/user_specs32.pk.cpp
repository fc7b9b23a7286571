// User spec set 32: integer and indexed tensors, fp8, transposes and per-peer variable sizes, as MoE
// layers, embeddings, vocabulary-parallel losses, samplers and quantised communication write them.
// Written from README.md, docs/language.md and pk/spec.h as a new user would; findings in
// test/specs/specs32_findings.md, the GPU test in test/gpu/user_specs32_jit_test.cu.
// Sizes are never multiples of the tiles; every kernel must be right for tails in every dimension.
#include <pk/spec.h>
using namespace pk;

// ---- integer arithmetic ----

// q = x / d and r = x % d (C++: truncation toward zero, r takes x's sign), and the floor forms Python
// writes, fq = floor(x / d), fr = x mod d in [0, d) for d > 0. d is a run-time index (may be 0: all give 0).
PK_KERNEL void b32_divmod_neg(Tensor<i32, 2> x, Tensor<i32, 2> q, Tensor<i32, 2> r, Tensor<i32, 2> fq,
                              Tensor<i32, 2> fr, index d) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 48})) {
    auto v = load<16, 48>(x, m, n);
    auto rr = v % d;
    store(q, v / d, m, n);
    store(r, rr, m, n);
    auto pos = (rr + d) % d;  // Python's mod for d > 0
    store(fr, pos, m, n);
    store(fq, (v - pos) / d, m, n);
  }
}

// Tile by tile: q = x / y, r = x % y with both tiles i64 (negative divisors, zero divisors give 0).
PK_KERNEL void b32_divmod_tiles_i64(Tensor<i64, 2> x, Tensor<i64, 2> y, Tensor<i64, 2> q, Tensor<i64, 2> r) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 40})) {
    auto a = load<8, 40>(x, m, n);
    auto b = load<8, 40>(y, m, n);
    store(q, a / b, m, n);
    store(r, a % b, m, n);
  }
}

// A 64-bit hash of token ids (n-gram / hashed embeddings): h = ((x ^ (x >> 33)) * C) ^ (x << s), bucket
// = (h & 0x7fffffffffffffff) % buckets. Shifts by a run-time count s (0..63) and a constant.
PK_KERNEL void b32_hash_i64(Tensor<i64, 1> x, Tensor<i64, 1> h, Tensor<i64, 1> bucket, index s, index buckets) {
  for (auto i : tiles(x.size(), {200})) {
    auto v = load<200>(x, i);
    auto hh = ((v ^ (v >> 33)) * 0x9E3779B97F4A7C15UL) ^ (v << s);
    store(h, hh, i);
    store(bucket, (hh & 0x7fffffffffffffffL) % buckets, i);
  }
}

// i32 comparisons, min / max / abs and where on negatives: clamp ids into [lo, hi], flag those clamped.
PK_KERNEL void b32_clamp_ids(Tensor<i32, 2> x, Tensor<i32, 2> y, Tensor<i32, 2> flag, Tensor<i32, 2> a, index lo,
                             index hi) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 24})) {
    auto v = load<16, 24>(x, m, n);
    auto c = min(max(v, lo), hi);
    store(y, c, m, n);
    store(flag, where((v < lo) || (v > hi), 1, 0), m, n);
    store(a, abs(v) - (v >= 0), m, n);
  }
}

// ---- casts ----

// f32 -> i32 / i64 (toward zero, saturating, NaN -> 0), i32 -> f32 (nearest), i64 -> f32, i64 -> i32 (wraps),
// and f32 -> bf16 of the i64 values.
PK_KERNEL void b32_casts(Tensor<f32, 2> x, Tensor<i64, 2> w, Tensor<i32, 2> xi, Tensor<i64, 2> xl, Tensor<f32, 2> wf,
                         Tensor<i32, 2> wi, Tensor<bf16, 2> wb) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 72})) {
    auto f = load<8, 72>(x, m, n);
    store(xi, cast<i32>(f), m, n);
    store(xl, cast<i64>(f), m, n);
    auto l = load<8, 72>(w, m, n);
    store(wf, cast<f32>(l), m, n);
    store(wi, cast<i32>(l), m, n);
    store(wb, cast<bf16>(l), m, n);
  }
}

// Rounding to integers as quantisers write it: q = cast<i32>(round(x * s)), and floor / ceil forms.
PK_KERNEL void b32_round_to_int(Tensor<f32, 2> x, Tensor<i32, 2> r, Tensor<i32, 2> fl, Tensor<i32, 2> ce, float s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 40})) {
    auto f = load<32, 40>(x, m, n) * s;
    store(r, cast<i32>(round(f)), m, n);
    store(fl, cast<i32>(floor(f)), m, n);
    store(ce, cast<i32>(ceil(f)), m, n);
  }
}

// ---- scalar reads as bounds and offsets ----

// Grouped rows (an MoE layer's expert segments): expert e owns rows offs[e] .. offs[e] + cnt[e] of x; each
// segment's rows are scaled by g[e]. Bounds and offsets read from memory.
PK_KERNEL void b32_segments_scale(Tensor<f32, 2> x, Tensor<i32, 1> offs, Tensor<i32, 1> cnt, Tensor<f32, 1> g,
                                  Tensor<f32, 2> y) {
  for (auto e : tiles(cnt.size(), {1})) {
    index o = offs.at(e);
    index c = cnt.at(e);
    float ge = g.at(e);
    for (auto t : range(0, c, 16)) {
      auto keep = cast<i32>(row_index<16, 1>(t)) < c;
      auto rows = cast<i32>(row_index<16, 1>(t)) + o;
      for (auto n : range(0, x.cols(), 64)) {
        auto v = load_rows<16, 64>(x, where(keep, rows, -1), n);
        store_rows(y, v * ge, where(keep, rows, -1), n);
      }
    }
  }
}

// Per-row lengths (a ragged batch): y[b, j] = x[b, j] for j < len[b], else 0. The length read per tile row.
PK_KERNEL void b32_ragged_mask(Tensor<f32, 2> x, Tensor<i64, 2> len, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 96})) {
    auto l = load<16, 1>(len, m, 0);
    auto keep = cast<i64>(col_index<16, 96>(n)) < l;
    store(y, where(keep, load<16, 96>(x, m, n), 0.0f), m, n);
  }
}

// ---- gathers and scatters by index tiles ----

// Embedding lookup with i64 ids: ids may be -1 (padding) or >= vocab (out of range): those rows read zeros.
PK_KERNEL void b32_embed_i64(Tensor<bf16, 2> table, Tensor<i64, 1> ids, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(ids.size(), table.cols(), {32, 128})) {
    auto id = load<32>(ids, t);
    store(y, load_rows<32, 128>(table, id, n), t, n);
  }
}

// Embedding backward with duplicates: dtable[ids[t]] += dy[t] (i32 ids, some -1 and some past the table).
PK_KERNEL void b32_embed_grad_dup(Tensor<f32, 2> dy, Tensor<i32, 2> ids, Tensor<f32, 2> dtable) {
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {24, 64}))
    store_add_rows(dtable, load<24, 64>(dy, t, n), load<24, 1>(ids, t, 0), n);
}

// A permutation and its inverse: y[perm[i]] = x[i] (store_rows), then z[i] = y[perm[i]] (load_rows) in a second
// phase. i64 indices.
PK_KERNEL void b32_permute_roundtrip(Tensor<f32, 2> x, Tensor<i64, 2> perm, Tensor<f32, 2> y, Tensor<f32, 2> z) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 32}))
    store_rows(y, load<16, 32>(x, t, n), load<16, 1>(perm, t, 0), n);
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 32}))
    store(z, load_rows<16, 32>(y, load<16, 1>(perm, t, 0), n), t, n);
}

// Rows pulled from a peer's copy by index: y[i] = table_on_rank(src[i])[row[i]] for a table sharded by rank.
PK_KERNEL void b32_gather_from_peers(Sym<f32, 2> table, Tensor<i32, 2> src, Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(src.rows(), table.cols(), {16, 64})) {
    auto s = load<16, 1>(src, t, 0);
    auto r = load<16, 1>(src, t, 1);
    auto acc = zeros<f32, 16, 64>();
    for (auto p : range(0, world_size())) acc = acc + load_rows<16, 64>(table.on(p), where(s == p, r, -1), n);
    store(y, acc, t, n);
  }
}

// ---- running sums and counts ----

// Inclusive prefix sum of a long 1-D i64 tensor (values past 2^24, so no f32 detour): the natural one-block form
// (carry the chunk's last sum, read back from y) is refused (specs32_findings.md, finding 2), so in three phases:
// each 1000-element chunk's total scattered to tot[chunk] by store_rows of its last running sum, an exclusive scan
// of the totals (at most 4096 chunks), then each chunk's running sums plus its offset.
PK_KERNEL void b32_cumsum_long(Tensor<i64, 1> x, Tensor<i64, 2> tot, Tensor<i64, 2> off, Tensor<i64, 1> y) {
  for (auto i : tiles(x.size(), {1000})) {
    auto c = cumsum(load<1000>(x, i));
    auto last = cast<i64>(dim_index<0, 1000>(i)) == min(i + 999, x.size() - 1);
    store_rows(tot, reshape<1000, 1>(c), where(last, i / 1000, -1L), 0);  // -1L: see finding 3
  }
  for (auto z : tiles(1, {1})) {
    auto t = reshape<4096>(load<4096, 1>(tot, 0, 0));
    store(off, reshape<4096, 1>(cumsum(t) - t), 0, 0);
  }
  for (auto i : tiles(x.size(), {1000})) store(y, cumsum(load<1000>(x, i)) + off.at(i / 1000, 0), i);
}

// The same in one block, the carry an exact i64 row_sum (finding 2, fixed: integer row reductions).
PK_KERNEL void b32_cumsum_carry(Tensor<i64, 1> x, Tensor<i64, 1> y) {
  for (auto z : tiles(1, {1})) {
    auto c = zeros<i64, 1, 1>();
    for (auto i : range(0, x.size(), 1024)) {
      auto v = reshape<1, 1024>(load<1024>(x, i));
      store(y, reshape<1024>(cumsum(v) + c), i);
      c = c + row_sum(v);
    }
  }
}

// Exact integer row reductions: i32 sum, max and min of 16 x 64 tiles (rows past the end: a tail), i64 sums of
// 1000-column rows whose totals pass 2^53.
PK_KERNEL void b32_int_row_stats(Tensor<i32, 2> x, Tensor<i32, 2> s, Tensor<i32, 2> mx, Tensor<i32, 2> mn,
                                 Tensor<i64, 2> w, Tensor<i64, 2> ws) {
  for (auto t : tiles(x.rows(), {16})) {
    auto v = load<16, 64>(x, t, 0);
    store(s, row_sum(v), t, 0);
    store(mx, row_max(v), t, 0);
    store(mn, row_min(v), t, 0);
  }
  for (auto t : tiles(w.rows(), {4})) store(ws, row_sum(load<4, 1000>(w, t, 0)), t, 0);
}

// Row-wise running sums of a wide i32 matrix: tiles of 40 columns, the carry an [8, 1] column.
PK_KERNEL void b32_cumsum_rows(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto m : tiles(x.rows(), {8})) {
    auto carry = zeros<i32, 8, 1>();
    for (auto n : range(0, x.cols(), 40)) {
      auto c = cumsum(load<8, 40>(x, m, n)) + carry;
      store(y, c, m, n);
      carry = carry + cast<i32>(row_sum(cast<f32>(load<8, 40>(x, m, n))));
    }
  }
}

// Expert counts over E = 37 experts (not a multiple of anything), from [T, K] top-k ids, then the exclusive
// offsets, one block: cnt zeroed, added into by every tile, read back.
PK_KERNEL void b32_hist_e37(Tensor<i32, 2> ids, Tensor<i32, 2> cnt, Tensor<i32, 2> off) {
  for (auto z : tiles(1, {1})) store(cnt, zeros<i32, 1, 37>(), z, 0);
  for (auto t : tiles(ids.rows(), {100})) store_add(cnt, reshape<1, 37>(histogram<37>(load<100, 3>(ids, t, 0))), 0, 0);
  for (auto z : tiles(1, {1})) {
    auto c = load<1, 37>(cnt, z, 0);
    store(off, cumsum(c) - c, z, 0);
  }
}

// A histogram of i64 ids over 300 bins in 128-wide bin tiles: each tile of ids counts bins b .. b + 128 by
// histogram<128>(ids - b).
PK_KERNEL void b32_hist_bins_tiled(Tensor<i64, 1> ids, Tensor<i32, 2> cnt) {
  for (auto z : tiles(1, {1}))
    for (auto b : range(0, cnt.cols(), 128)) store(cnt, zeros<i32, 1, 128>(), 0, b);
  for (auto [t, b] : tiles(ids.size(), cnt.cols(), {256, 128}))
    store_add(cnt, reshape<1, 128>(histogram<128>(load<256>(ids, t) - b)), 0, b);
}

// ---- MoE: routing, dispatch and combine on one rank ----

// Top-2 of 20 experts, softmax over the two, slots by claim, rows dispatched into expert-major buffers of
// `cap` rows each (rows past capacity dropped: slot -1).
PK_KERNEL void b32_moe_route_dispatch(Tensor<f32, 2> logits, Tensor<bf16, 2> x, Scratch<i32, 1> fill,
                                      Tensor<i32, 2> slot, Tensor<f32, 2> wts, Tensor<bf16, 2> buf, index cap) {
  for (auto e : tiles(fill.size(), {32})) store(fill, zeros<i32, 32>(), e);
  for (auto t : tiles(logits.rows(), {16})) {
    auto lg = where(col_index<16, 20>(0) < logits.cols(), load<16, 20>(logits, t, 0), -1e30f);
    auto top = row_topk<2>(lg);
    auto idx = row_topk_index<2>(lg);
    auto e = exp(top - row_max(top));
    store(wts, e / row_sum(e), t, 0);
    auto place = claim(fill, idx);
    auto s = where((place >= 0) && (place < cap), idx * cap + place, -1);
    store(slot, s, t, 0);
  }
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto rows = load<16, 64>(x, t, n);
    for (auto k : range(0, 2)) store_rows(buf, rows, load<16, 1>(slot, t, k), n);
  }
}

// Combine: y[t] = sum_k wts[t, k] * out[slot[t, k]] (slot -1: dropped, contributes nothing).
PK_KERNEL void b32_moe_combine(Tensor<bf16, 2> out, Tensor<i32, 2> slot, Tensor<f32, 2> wts, Tensor<bf16, 2> y) {
  for (auto [t, n] : tiles(slot.rows(), out.cols(), {16, 64})) {
    auto acc = zeros<f32, 16, 64>();
    for (auto k : range(0, slot.cols()))
      acc = acc + cast<f32>(load_rows<16, 64>(out, load<16, 1>(slot, t, k), n)) * load<16, 1>(wts, t, k);
    store(y, cast<bf16>(acc), t, n);
  }
}

// Expert-parallel dispatch over ranks: expert e lives on rank e / El; rows pushed into the owner's buffer at
// (rank * El + e % El) * cap + place, the places claimed per (local expert) on the sender.
PK_KERNEL void b32_moe_dispatch_peers(Tensor<bf16, 2> x, Tensor<i32, 2> ids, Scratch<i32, 1> fill, Tensor<i32, 2> slot,
                                      Sym<bf16, 2> recv, index experts_per_rank, index cap) {
  for (auto e : tiles(fill.size(), {64})) store(fill, zeros<i32, 64>(), e);
  for (auto t : tiles(ids.rows(), {64})) {
    auto e = load<64, 1>(ids, t, 0);
    auto place = claim(fill, e);
    store(slot, where((place >= 0) && (place < cap), (e % experts_per_rank + rank() * experts_per_rank) * cap + place,
                      -1),
          t, 0);
  }
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto rows = load<32, 128>(x, t, n);
    auto owner = load<32, 1>(ids, t, 0) / experts_per_rank;
    auto s = load<32, 1>(slot, t, 0);
    for (auto p : range(0, world_size())) store_rows(recv.on(p), rows, where(owner == p, s, -1), n);
  }
}

// ---- fp8 ----

// Per-block (1 x 128) e4m3 quantisation with a zero-block guard: scale = amax / 448 (0 blocks give scale 0 and
// values 0, not NaN).
PK_KERNEL void b32_fp8_block_quant(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto v = cast<f32>(load<32, 128>(x, m, n));
    auto amax = row_max(abs(v));
    auto inv = where(amax > 0.0f, 448.0f / amax, 0.0f);
    store(q, cast<f8e4m3>(v * inv), m, n);
    store(s, amax * (1.0f / 448.0f), m, n / 128);
  }
}

// Per-row e5m2 quantisation of rows wider than a tile: a first range pass for the row's amax, a second to quantise.
PK_KERNEL void b32_fp8_row_quant_e5m2(Tensor<f32, 2> x, Tensor<f8e5m2, 2> q, Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {16})) {
    auto amax = zeros<f32, 16, 1>();
    for (auto n : range(0, x.cols(), 256)) amax = max(amax, row_max(abs(load<16, 256>(x, m, n))));
    store(s, amax * (1.0f / 57344.0f), m, 0);
    for (auto n : range(0, x.cols(), 256))
      store(q, cast<f8e5m2>(load<16, 256>(x, m, n) * where(amax > 0.0f, 57344.0f / amax, 0.0f)), m, n);
  }
}

// Saturation and NaN without scaling: q4 = e4m3(x), q5 = e5m2(x), back to f32.
PK_KERNEL void b32_fp8_saturate(Tensor<f32, 1> x, Tensor<f8e4m3, 1> q4, Tensor<f8e5m2, 1> q5, Tensor<f32, 1> b4,
                                Tensor<f32, 1> b5) {
  for (auto i : tiles(x.size(), {96})) {
    auto v = load<96>(x, i);
    auto a = cast<f8e4m3>(v);
    auto b = cast<f8e5m2>(v);
    store(q4, a, i);
    store(q5, b, i);
    store(b4, cast<f32>(a), i);
    store(b5, cast<f32>(b), i);
  }
}

// Dequantise per-block scaled e4m3 (the layout b32_fp8_block_quant writes) to bf16.
PK_KERNEL void b32_fp8_block_dequant(Tensor<f8e4m3, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(q.rows(), q.cols(), {32, 128}))
    store(y, cast<bf16>(cast<f32>(load<32, 128>(q, m, n)) * load<32, 1>(s, m, n / 128)), m, n);
}

// fp8 x fp8 -> f32 on the general path with per-row (a) and per-column (b) scales: C = (sa A)(B^T sb).
PK_KERNEL void b32_fp8_mma_t_scaled(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 2> sa, Tensor<f32, 2> sb,
                                    Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), load<64, 32>(b, n, k), acc);
    store(c, acc * load<64, 1>(sa, m, 0) * transpose(load<64, 1>(sb, n, 0)), m, n);
  }
}

// e4m3 A times e5m2 B stored [K, N] (mma, mixed fp8), bf16 out.
PK_KERNEL void b32_fp8_mma_mixed(Tensor<f8e4m3, 2> a, Tensor<f8e5m2, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {32, 64})) {
    auto acc = zeros<f32, 32, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<32, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// Weight-only fp8 GEMM with a per-output-channel scale as an [N, 1] column read as a row.
PK_KERNEL void b32_w8_gemm_chscale(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<f32, 2> ws, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), cast<bf16>(load<128, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc * transpose(load<128, 1>(ws, n, 0))), m, n);
  }
}

// ---- transposes ----

// y = x^T of a [R, C] f32 matrix by 48 x 80 tiles (tails in both dimensions).
PK_KERNEL void b32_transpose_tails(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {48, 80})) store(y, transpose(load<48, 80>(x, m, n)), n, m);
}

// An i32 transpose plus arithmetic on the transposed tile: y = (x^T) * 3 - col.
PK_KERNEL void b32_transpose_i32(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 40}))
    store(y, transpose(load<16, 40>(x, m, n)) * 3 - cast<i32>(col_index<40, 16>(m)), n, m);
}

// Column sums written as transpose(row_sum(transpose(t))) and added across row tiles.
PK_KERNEL void b32_colsum_transposed(Tensor<f32, 2> x, Tensor<f32, 2> cs) {
  for (auto z : tiles(1, {1}))
    for (auto n : range(0, cs.cols(), 64)) store(cs, zeros<f32, 1, 64>(), 0, n);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64}))
    store_add(cs, transpose(row_sum(transpose(load<32, 64>(x, m, n)))), 0, n);
}

// ---- communication with sizes known at run time ----

// all_to_all_v with counts computed on the device from routing (at most 1024 rows): send[p] = rows whose dest == p (x
// grouped by destination), exchanged, then rows pushed after the lower ranks' rows.
PK_KERNEL void b32_a2av_counts(Tensor<f32, 2> x, Tensor<i32, 1> dest, Sym<i32, 1> recv, Sym<f32, 2> y) {
  for (auto p : tiles(world_size(), {1}))
    store(recv.on(p), reshape<1>(cast<i32>(row_sum(reshape<1, 1024>(
                          cast<f32>((load<1024>(dest, 0) == p) && (cast<i32>(dim_index<0, 1024>(0)) < dest.size())))))),
          rank());
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 64})) {
    auto rows = load<32, 64>(x, t, n);
    auto d = load<32>(dest, t);
    auto i = cast<i32>(dim_index<0, 32>(t));
    for (auto p : range(0, world_size())) {
      auto first = reshape<1>(cast<i32>(row_min(reshape<1, 1024>(where((load<1024>(dest, 0) == p) &&
                                                                              (cast<i32>(dim_index<0, 1024>(0)) < dest.size()),
                                                                        cast<f32>(dim_index<0, 1024>(0)), 1e9f)))));
      auto base = zeros<i32, 1>();
      for (auto s : range(0, rank())) base = base + load<1>(recv.on(p), s);
      store_rows(y.on(p), rows, where(d == p, base + i - first, -1), n);
    }
  }
}

// ---- vocabulary-parallel embedding, loss and sampling ----

// Embedding over a vocabulary split across ranks (rank r holds rows r*V .. r*V + V of the full table; i32 ids);
// partial rows summed by an all-reduce.
PK_KERNEL void b32_vp_embed(Tensor<bf16, 2> table, Tensor<i32, 1> ids, Sym<f32, 2> part, Sym<f32, 2> out) {
  for (auto [t, n] : tiles(ids.size(), table.cols(), {32, 64})) {
    auto local = load<32>(ids, t) - rank() * table.rows();
    auto inside = (local >= 0) && (local < table.rows());
    store(part, cast<f32>(load_rows<32, 64>(table, where(inside, local, -1), n)), t, n);
  }
  all_reduce(Sum, part, out);
}

// Vocabulary-parallel cross entropy over any V (range over 256-wide column tiles with an online max/sum), ignore
// index -100 giving loss 0; target logits picked by comparing i64 targets with column ids.
PK_KERNEL void b32_vp_xent(Tensor<f32, 2> logits, Tensor<i64, 2> target, Sym<f32, 2> st, Sym<f32, 2> gmx,
                           Sym<f32, 2> gse, Sym<f32, 2> gtl, Tensor<f32, 2> loss) {
  for (auto t : tiles(logits.rows(), {16})) {
    auto mx = zeros<f32, 16, 1>() - 1e30f;
    auto tl = zeros<f32, 16, 1>();
    auto local = load<16, 1>(target, t, 0) - rank() * logits.cols();
    for (auto n : range(0, logits.cols(), 256)) {
      auto lg = where(col_index<16, 256>(n) < logits.cols(), load<16, 256>(logits, t, n), -1e30f);
      mx = max(mx, row_max(lg));
      tl = tl + row_sum(where(cast<i64>(col_index<16, 256>(n)) == local, lg, 0.0f));
    }
    store(st, mx, t, 0);
    store(st, tl, t, 1);
  }
  all_reduce(Max, st, gmx);
  all_reduce(Sum, st, gtl);
  for (auto t : tiles(logits.rows(), {16})) {
    auto g = load<16, 1>(gmx, t, 0);
    auto se = zeros<f32, 16, 1>();
    for (auto n : range(0, logits.cols(), 256))
      se = se + row_sum(where(col_index<16, 256>(n) < logits.cols(), exp(load<16, 256>(logits, t, n) - g), 0.0f));
    store(st, se, t, 2);
  }
  all_reduce(Sum, st, gse);
  for (auto t : tiles(logits.rows(), {16})) {
    auto valid = load<16, 1>(target, t, 0) != -100;
    store(loss, where(valid, log(load<16, 1>(gse, t, 2)) + load<16, 1>(gmx, t, 0) - load<16, 1>(gtl, t, 1), 0.0f),
          t, 0);
  }
}

// Greedy / Gumbel-max sampling over a wide vocabulary: argmax over 512-column chunks of logits / temp - log(-log(u)),
// carrying the best value and its global column (i64: vocabularies past 2^31 columns in total).
PK_KERNEL void b32_gumbel_sample(Tensor<f32, 2> logits, Tensor<i64, 2> token, index seed, float inv_temp) {
  for (auto t : tiles(logits.rows(), {8})) {
    auto best = zeros<f32, 8, 1>() - 3e38f;
    auto bi = zeros<i64, 8, 1>() - 1;
    for (auto n : range(0, logits.cols(), 512)) {
      auto u = max(uniform<8, 512>(seed, t, n), 1e-20f);
      auto g = load<8, 512>(logits, t, n) * inv_temp - log(-log(u));
      auto s = where(col_index<8, 512>(n) < logits.cols(), g, -3e38f);
      auto v = row_topk<1>(s);
      auto j = cast<i64>(row_topk_index<1>(s)) + n;
      auto better = v > best;
      bi = where(better, j, bi);
      best = where(better, v, best);
    }
    store(token, bi, t, 0);
  }
}

// ---- edge shapes ----

// A one-row tensor and a possibly empty one: y = x * 2 over [1, C], z = cumsum over an [N] i32 tensor with N
// possibly 0 (nothing stored).
PK_KERNEL void b32_one_row_and_empty(Tensor<f32, 2> x, Tensor<f32, 2> y, Tensor<i32, 1> a, Tensor<i32, 1> b) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {4, 128})) store(y, load<4, 128>(x, m, n) * 2.0f, m, n);
  for (auto i : tiles(a.size(), {64})) store(b, cumsum(load<64>(a, i)), i);
}

// Rows by an index tile where the tile is R x 1 loaded from a 2-D id tensor with a column offset k (a [T, K]
// top-k id matrix read column by column), i64 slots, into an fp8 buffer with per-row scales.
PK_KERNEL void b32_scatter_fp8_rows(Tensor<bf16, 2> x, Tensor<i64, 2> slot, Tensor<f8e4m3, 2> buf,
                                    Tensor<f32, 2> bscale) {
  for (auto t : tiles(x.rows(), {16})) {
    auto v = cast<f32>(load<16, 256>(x, t, 0));
    auto amax = max(row_max(abs(v)), 1e-12f);
    auto q = cast<f8e4m3>(v * (448.0f / amax));
    for (auto k : range(0, slot.cols())) {
      auto s = load<16, 1>(slot, t, k);
      store_rows(buf, q, s, 0);
      store_rows(bscale, amax * (1.0f / 448.0f), s, 0);
    }
  }
}

// Set 41: twelve small kernels around mixture-of-experts layers and indexed rows, written as a new user writes
// them from docs/language.md: a top-2 router, expert counts and offsets, gathers scaled by a weight column,
// scatters of loaded rows (held packed) with a mask, fp8 rows pulled from a peer and dequantised, a causal
// softmax, a weighted combine, a transpose with tails, an int8 product, a top-p filter, and an all-to-all
// before a local phase. test/Compile/user_specs41.test compiles them; test/specs/specs41_findings.md says what
// was checked.
#include <pk/spec.h>
using namespace pk;

// q01: top-2 router: softmax over 64 experts, the two largest probabilities and their experts.
PK_KERNEL void q01(Tensor<f32, 2> logits, Tensor<i32, 2> ids, Tensor<f32, 2> weights) {
  for (auto [t, e] : tiles(logits.rows(), logits.cols(), {16, 64})) {
    auto x = load<16, 64>(logits, t, e);
    auto p = exp(x - row_max(x));
    p = p / row_sum(p);
    store(ids, row_topk_index<2>(p), t, 0);
    store(weights, row_topk<2>(p), t, 0);
  }
}

// q02: tokens per expert: a histogram of each block of routed ids, added into the counts.
PK_KERNEL void q02(Tensor<i32, 1> ids, Tensor<i32, 2> counts) {
  for (auto i : tiles(ids.size(), {1024})) store_add(counts, reshape<1, 64>(histogram<64>(load<1024>(ids, i))), 0, 0);
}

// q03: each expert's first row: the exclusive prefix sum of 64 counts.
PK_KERNEL void q03(Tensor<i32, 1> counts, Tensor<i32, 1> offsets) {
  for (auto e : tiles(counts.size(), {64})) {
    auto c = load<64>(counts, e);
    store(offsets, cumsum(c) - c, e);
  }
}

// q04: f16 rows gathered by token index and scaled by each row's routing weight.
PK_KERNEL void q04(Tensor<f16, 2> x, Tensor<i32, 1> tok, Tensor<f32, 1> w, Tensor<f16, 2> y) {
  for (auto [r, n] : tiles(tok.size(), x.cols(), {16, 256})) {
    auto rows = load_rows<16, 256>(x, load<16>(tok, r), n);
    store(y, cast<f16>(cast<f32>(rows) * load<16, 1>(w, r)), r, n);
  }
}

// q05: loaded f16 rows scattered twice, the second copy only for rows whose slot is even (held packed).
PK_KERNEL void q05(Tensor<f16, 2> x, Tensor<i32, 1> slot, Tensor<f16, 2> a, Tensor<f16, 2> b) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {8, 96})) {
    auto rows = load<8, 96>(x, t, n);
    auto s = load<8>(slot, t);
    store_rows(a, rows, s, n);
    store_rows(b, rows, where(s % 2 == 0, s / 2, -1), n);
  }
}

// q06: fp8 rows pulled from rank p's copy by slot, dequantised by their per-row scale, bf16 out.
PK_KERNEL void q06(Sym<f8e4m3, 2> recv, Sym<f32, 2> scale, Tensor<i32, 1> slots, Tensor<bf16, 2> y, index p) {
  for (auto [r, n] : tiles(slots.size(), recv.cols(), {32, 128})) {
    auto s = load<32>(slots, r);
    auto q = cast<f32>(load_rows<32, 128>(recv.on(p), s, n));
    auto sc = load_rows<32, 1>(scale.on(p), s, n / 128);
    store(y, cast<bf16>(q * sc), r, n);
  }
}

// q07: causal softmax of 64 x 64 score tiles with a scale argument (rows of at most 64 keys).
PK_KERNEL void q07(Tensor<f32, 2> s, Tensor<bf16, 2> p, float scale) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {64, 64})) {
    auto x = where(col_index<64, 64>(n) <= row_index<64, 64>(m), load<64, 64>(s, m, n) * scale, -1e30f);
    auto e = exp(x - row_max(x));
    store(p, cast<bf16>(e / row_sum(e)), m, n);
  }
}

// q08: combine: expert rows weighted and added into their tokens (bf16, odd width).
PK_KERNEL void q08(Tensor<bf16, 2> h, Tensor<i32, 1> tok, Tensor<f32, 1> w, Tensor<bf16, 2> out) {
  for (auto [r, n] : tiles(h.rows(), h.cols(), {16, 200})) {
    auto rows = cast<f32>(load<16, 200>(h, r, n)) * load<16, 1>(w, r);
    store_add_rows(out, cast<bf16>(rows), load<16>(tok, r), n);
  }
}

// q09: transpose of a bf16 [M, N] tensor with tails on both sides.
PK_KERNEL void q09(Tensor<bf16, 2> x, Tensor<bf16, 2> xt) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 64})) store(xt, transpose(load<32, 64>(x, m, n)), n, m);
}

// q10: int8 x int8 -> i32 product of 64 x 64 tiles, then dequantised by two scales.
PK_KERNEL void q10(Tensor<i8, 2> a, Tensor<i8, 2> b, Tensor<f32, 1> sa, Tensor<f32, 1> sb, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<i32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<64, 32>(a, m, k), load<64, 32>(b, n, k), acc);
    store(c, cast<bf16>(cast<f32>(acc) * load<64, 1>(sa, m) * load<1, 64>(sb, n)), m, n);
  }
}

// q11: top-p filter: each 32-wide row of probabilities sorted, its running sum, and the kept mass.
PK_KERNEL void q11(Tensor<f32, 2> probs, Tensor<f32, 2> kept, float top_p) {
  for (auto [r, n] : tiles(probs.rows(), probs.cols(), {32, 32})) {
    auto sorted = row_topk<32>(load<32, 32>(probs, r, n));
    auto run = cumsum(sorted);
    store(kept, where(run - sorted < top_p, sorted, 0.0f), r, n);
  }
}

// q12: all-to-all of [W R, C] blocks, then the received rows scaled in place by a scalar.
PK_KERNEL void q12(Sym<bf16, 2> x, Sym<bf16, 2> y, float s) {
  all_to_all(x, y);
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 256}))
    store(y, cast<bf16>(cast<f32>(load<16, 256>(y, m, n)) * s), m, n);
}

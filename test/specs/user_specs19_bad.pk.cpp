// The nineteenth user-written spec set, part (b): kernels pkc must refuse (misuse of the newest constructs:
// uniform(), dim_index, row_topk / row_topk_index, cumsum, reshape, masks of mixed element types, the GEMM
// template's A-transposed form; races of local adds and of stores beside them, of top-k results stored at
// overlapping columns, of a dispatch that scatters rows into peers beside a plain store), each with the
// refusal checked in test/Compile/user_specs19.test, and kernels that exhibit a finding of
// test/specs/specs19_findings.md (w1, w2: they compile, and compute the wrong thing). Kernels whose error
// is a Clang error sit behind -D PK_CXX_<ID> (a Clang error anywhere fails every kernel of a file).
#include <pk/spec.h>
using namespace pk;

// R1: a dropout whose seed is a float argument (a seed must be an integer): refused, but the message says
// the argument is "a tile, tensor or flag" (finding 3).
PK_KERNEL void r1_uniform_float_seed(Tensor<f32, 2> x, Tensor<f32, 2> y, float fseed) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, where(uniform<16, 64>(fseed, m, n) < 0.5f, 0.0f, load<16, 64>(x, m, n)), m, n);
}

// R2: random numbers for one head of [H, S, D] written as loads are (a 2-D tile of the trailing dimensions
// at (h, m, n)): uniform takes one origin per tile dimension (write uniform<1, 16, 64>(seed, h, m, n) and
// reshape it; finding 2).
PK_KERNEL void r2_uniform_trailing_dims(Tensor<f32, 3> x, Tensor<f32, 3> y, index seed) {
  for (auto [h, m] : tiles(x.dim(0), x.dim(1), {1, 16}))
    store(y, load<16, 64>(x, h, m, 0) * uniform<16, 64>(seed, h, m, 0), h, m, 0);
}

// R3: dim_index along a dimension the tile does not have.
PK_KERNEL void r3_dim_index_out_of_range(Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64})) store(y, dim_index<2, 16, 64>(m), m, n);
}

// R4: the top 8 of a tile 5 wide (K above the tile's width; language.md does not say K <= N: finding 2).
PK_KERNEL void r4_topk_k_exceeds_tile(Tensor<f32, 2> x, Tensor<f32, 2> v) {
  for (auto m : tiles(x.rows(), {4})) store(v, row_topk<8>(load<4, 5>(x, m, 0)), m, 0);
}

// R5: K = 0: refused with the generic "the result must be a tile ... (load<128, 64>(A, m, k))" message,
// which does not name K (finding 3).
PK_KERNEL void r5_topk_zero_k(Tensor<f32, 2> x, Tensor<f32, 2> v) {
  for (auto m : tiles(x.rows(), {4})) store(v, row_topk<0>(load<4, 64>(x, m, 0)), m, 0);
}

// R6: the top 100 of rows of 4000 (more than 4096 - 2K elements a row).
PK_KERNEL void r6_topk_row_too_long(Tensor<f32, 2> x, Tensor<f32, 2> v) {
  for (auto m : tiles(x.rows(), {4})) store(v, row_topk<100>(load<4, 4000>(x, m, 0)), m, 0);
}

// R7: reshape that merges two dimensions ([2, 4, 128] into [8, 128]).
PK_KERNEL void r7_reshape_merge_dims(Tensor<i64, 3> c, Tensor<i64, 2> y) {
  for (auto [b, g] : tiles(c.dim(0), c.dim(1), {2, 4})) store(y, reshape<8, 128>(cumsum(load<2, 4, 128>(c, b, g, 0))), b, 0);
}

// R8: a plain store of the tile and an add of the same tile one row down into the same tensor: tile m's
// add lands on rows tile m + 1 stores.
PK_KERNEL void r8_store_beside_shifted_add(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
    store(y, t, m, n);
    store_add(y, t * 0.5f, m + 1, n);
  }
}

// R9: the top 3 of 96-column chunks stored at column n / 64 (chunks 0, 1, 2 at columns 0, 1, 3: the 3-wide
// results overlap).
PK_KERNEL void r9_topk_results_overlap(Tensor<f32, 2> x, Tensor<f32, 2> cv) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 96})) store(cv, row_topk<3>(load<16, 96>(x, m, n)), m, n / 64);
}

// R10: row running sums in 64-column chunks with the carry read from the output's previous column (the
// chunk to the left, another tile of the same loop).
PK_KERNEL void r10_cumsum_carry_from_left_tile(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, cumsum(load<16, 64>(x, m, n)) + load<16, 1>(y, m, n - 1), m, n);
}

// R11: a weight gradient with bf16 dY and f16 X.
PK_KERNEL void r11_wgrad_mixed_types(Tensor<bf16, 2> dy, Tensor<f16, 2> x, Tensor<f32, 2> dw) {
  for (auto [n, k] : tiles(dy.cols(), x.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto t : range(0, dy.rows(), 32)) acc = mma(transpose(load<32, 64>(dy, t, n)), load<32, 64>(x, t, k), acc);
    store(dw, acc, n, k);
  }
}

// R12: a weight gradient whose transposed dY tile is 32 tokens deep and X tile 64 (the K extents differ).
PK_KERNEL void r12_wgrad_k_mismatch(Tensor<bf16, 2> dy, Tensor<bf16, 2> x, Tensor<f32, 2> dw) {
  for (auto [n, k] : tiles(dy.cols(), x.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto t : range(0, dy.rows(), 32)) acc = mma(transpose(load<32, 64>(dy, t, n)), load<64, 64>(x, t, k), acc);
    store(dw, acc, n, k);
  }
}

// R13: a dispatch that scatters token rows into the experts' ranks and, in the same phase, stores a
// header row into every rank's receive buffer with a plain store (row moves touch the whole tensor).
PK_KERNEL void r13_dispatch_scatter_beside_store(Tensor<bf16, 2> x, Tensor<i32, 2> slot, Sym<bf16, 2> recv) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto rows = load<32, 128>(x, t, n);
    for (auto p : range(0, world_size())) {
      store_rows(recv.on(p), rows, load<32, 1>(slot, t, 0), n);
      store(recv.on(p), rows, t, n);
    }
  }
}

// R14: a loss sum added into a local 1-D tensor (local adds take 2-D tensors: declare it [1, 1]).
PK_KERNEL void r14_store_add_local_1d(Tensor<f32, 2> l, Tensor<f32, 1> total) {
  for (auto m : tiles(l.rows(), {16})) store_add(total, reshape<1>(row_sum(transpose(row_sum(load<16, 64>(l, m, 0))))), 0);
}

// R15: top-k of an integer tile (expert ids): row_topk takes float tiles (cast<f32> first).
#ifdef PK_CXX_R15
PK_KERNEL void r15_topk_of_i32(Tensor<i32, 2> ids, Tensor<i32, 2> top) {
  for (auto m : tiles(ids.rows(), {16})) store(top, row_topk<2>(load<16, 64>(ids, m, 0)), m, 0);
}
#endif

// R16 (accepted since the thirty-seventh session: masks of two element types join as an f32 mask): a bf16 comparison && an f32 comparison (masks of two element types: cast one side).
#ifdef PK_CXX_R16
PK_KERNEL void r16_bf16_mask_and_f32_mask(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 128>(x, m, 0);
    store(y, where((t > t * 0.5f) && (col_index<16, 128>(0) < x.cols()), t, t * 0.0f), m, 0);
  }
}
#endif

// R17: a mask && a C++ bool (a scalar is not a mask: the bool would have to be a tile; finding 3).
#ifdef PK_CXX_R17
PK_KERNEL void r17_mask_and_bool(Tensor<f32, 2> x, Tensor<f32, 2> y, index causal) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, where((col_index<16, 64>(n) <= row_index<16, 64>(m)) && (causal != 0), load<16, 64>(x, m, n), 0.0f), m, n);
}
#endif

// R18: claim by the top-2 values instead of their columns (claim takes integer indices).
#ifdef PK_CXX_R18
PK_KERNEL void r18_claim_by_topk_values(Tensor<f32, 2> logits, Tensor<i32, 1> fill, Tensor<i32, 2> slot) {
  for (auto t : tiles(logits.rows(), {32})) store(slot, claim(fill, row_topk<2>(load<32, 64>(logits, t, 0))), t, 0);
}
#endif

// R19: the top 2 along the last dimension of a 3-D tile ([B, S, V] chunks): refused when row_topk took 2-D
// tiles only (a bare "failed template argument deduction", finding 2); legal since row_topk takes tiles of
// any rank (kept here, behind its flag, so the lines of the kernels after it stay put).
#ifdef PK_CXX_R19
PK_KERNEL void r19_topk_of_3d_tile(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {2, 8})) store(y, row_topk<2>(load<2, 8, 64>(x, b, s, 0)), b, s, 0);
}
#endif

// W1 (finding 1, silent wrong result): a batched GEMM (attention scores of every head, QKᵀ per batch) with
// dropout drawn with a seed per batch, seed + z (the 2-D tile's coordinates do not include z). The batched
// GEMM template computes the per-batch seed split in prepare(head) in 32-bit ints, where the documented
// hash's constants 2^32 and 2^31 become 0 and INT_MIN: (seed + z) mod 0 = 0 and (seed + z) / 0 = 0, so
// every seed and every batch draws seed 0's numbers. The general-path twin draws the documented ones.
PK_KERNEL void w1_bmm_dropout_seed_per_batch(Tensor<bf16, 3> a, Tensor<bf16, 3> b, Tensor<bf16, 3> c, index seed,
                                             float p) {
  for (auto [z, m, n] : tiles(a.dim(0), a.dim(1), b.dim(1), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<128, 64>(a, z, m, k), load<256, 64>(b, z, n, k), acc);
    store(c, cast<bf16>(where(uniform<128, 256>(seed + z, m, n) < p, 0.0f, acc * (1.0f / (1.0f - p)))), z, m, n);
  }
}

// W2 (finding 1, the attention template's score map): noise added to every score with a seed per head
// (seed + h), as a perturbed-attention probe does; the score map's prepare(head) has the same 32-bit
// constants, so the noise does not depend on the seed or the head on the template.
PK_KERNEL void w2_attention_noise_seed_per_head(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v,
                                                Tensor<bf16, 3> o, index seed, float amp, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale + uniform<64, 64>(seed + h, m, n) * amp;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// Set 26, part (c): reproducers of the findings in test/specs/specs26_findings.md that are not refusals of wrong
// code: kernels pkc accepts but compiles to wrong values at some sizes (P1, P2), slow routes (P3, P4), a false
// warning (P5), and valid C++ that pkc refuses (behind #ifdef PK_PROBE_<ID>, one Clang or pkc error each).
// Each comment gives the finding's number. test/Compile/user_specs26.test checks them.
#include <pk/spec.h>
using namespace pk;

// P1 (finding 1): per-node edge softmax over a destination-sorted CSR, written with the position idiom the docs
// suggest, cast<i32>(row_index<64, 1>(j)) for rows j .. j + 63. row_index is an f32 tile, so for j + r >= 2^24 the
// position is rounded to an even (then a multiple of 4, ...) row: with more than 16 777 216 edges two tile rows
// scatter into one alpha row and another alpha row is never written, and the mask row_index < hi lets a row of the
// next node in or drops one of this node. pkc accepts the kernel without a word. (user_specs26.pk.cpp's
// gat_edge_softmax writes the exact form, cast<i32>(row_index<64, 1>(0)) + j and row_index<64, 1>(0) < hi - j.)
PK_KERNEL void p1_edge_softmax_f32_positions(Tensor<i32, 1> rowptr, Tensor<f32, 2> score, Tensor<f32, 2> alpha) {
  for (auto v : tiles(rowptr.size() - 1, {1})) {
    index lo = rowptr.at(v);
    index hi = rowptr.at(v + 1);
    auto mx = zeros<f32, 8, 1>() - 1e30f;
    for (auto j : range(lo, hi, 64))
      mx = max(mx, row_max(transpose(where(row_index<64, 1>(j) < hi, load<64, 8>(score, j, 0), -1e30f))));
    auto mrow = transpose(mx);
    auto s = zeros<f32, 1, 8>();
    for (auto j : range(lo, hi, 64))
      s = s + transpose(row_sum(transpose(where(row_index<64, 1>(j) < hi, exp(load<64, 8>(score, j, 0) - mrow), 0.0f))));
    for (auto j : range(lo, hi, 64)) {
      auto pos = cast<i32>(row_index<64, 1>(j));
      store_rows(alpha, exp(load<64, 8>(score, j, 0) - mrow) / s, where(pos < hi, pos, -1), 0);
    }
  }
}

// P2 (finding 7): padded dense to jagged written with a plain store at the sequence's offset read from memory: the
// 16-row tile clipped at L in `dense` is not clipped in `values`, so its padding rows (zeros) land on the first rows
// of sequence b + 1 whenever len_b = L (and on rows past len_b of its own sequence otherwise), racing with the
// tile that writes them. Indices read from memory are taken on trust (documented), so pkc accepts it silently;
// the same mistake with an arithmetic offset is refused (set 25's B1). The correct form is user_specs26.pk.cpp's
// padded_dense_to_jagged (store_rows with the rows past the length masked).
PK_KERNEL void p2_dense_to_jagged_plain_store(Tensor<bf16, 3> dense, Tensor<i32, 1> offsets, Tensor<bf16, 2> values) {
  for (auto [b, l] : tiles(dense.dim(0), dense.dim(1), {1, 16})) {
    index lo = offsets.at(b);
    store(values, reshape<16, 128>(load<1, 16, 128>(dense, b, l, 0)), lo + l, 0);
  }
}

// P3 (finding 2): a Gram matrix X X^T (DLRM's interaction, a kernel matrix, contrastive similarities) with the one
// tensor as both operands: the GEMM template refuses it ("the operands and the output must be distinct tensors"),
// though only C is written. The same loop with a second argument bound to the same tensor takes the template.
PK_KERNEL void p3_gram_same_operand(Tensor<bf16, 2> x, Tensor<bf16, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(x, n, k), acc);
    store(z, cast<bf16>(acc), m, n);
  }
}

// P4 (finding 3): a dequantisation scale read from a tensor once, before the GEMM loop (as one writes a per-kernel
// constant): pkc splits the kernel into two launches, the first of which does nothing (a scalar read outside the
// tile loops counts as a phase). Read inside the epilogue (acc * sa.at(0)) it is one launch.
PK_KERNEL void p4_gemm_scale_hoisted(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> sa, Tensor<bf16, 2> y) {
  float s = sa.at(0);
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc * s), m, n);
  }
}

// P5 (finding 8): the row-wise sharded EmbeddingBag with jagged bags (TorchRec ROW_WISE, include_last_offset):
// each rank sums the rows of its shard over every bag, then reduce_scatter. The bag loop's bounds come from
// `offsets` (memory) and the loop only reads local tensors, yet pkc warns that the protocol is not verified.
PK_KERNEL void p5_rowwise_bag_jagged(Tensor<i32, 1> ids, Tensor<i32, 1> offsets, Tensor<bf16, 2> table,
                                     Scratch<f32, 2> part, Sym<f32, 2> out) {
  index base = rank() * table.rows();
  for (auto [b, n] : tiles(part.rows(), part.cols(), {1, 128})) {
    index lo = offsets.at(b);
    index hi = offsets.at(b + 1);
    auto acc = zeros<f32, 1, 128>();
    for (auto j : range(lo, hi, 32)) {
      auto pos = cast<i32>(row_index<32, 1>(0)) + j;
      auto id = where(pos < hi, load<32, 1>(ids, j) - base, -1);
      acc = acc + transpose(row_sum(transpose(cast<f32>(load_rows<32, 128>(table, id, n)))));
    }
    store(part, acc, b, n);
  }
  reduce_scatter(Sum, part, out);
}

// P6 (finding 3; accepted since the thirty-seventh session, the literal taken modulo 2^64): Fibonacci hashing of i64 ids with the 64-bit golden-ratio multiplier 0x9E3779B97F4A7C15 written as
// an unsigned C++ literal (wrapping multiplication, as i64 tiles do): refused, "integer constant does not fit in 64
// bits". The signed spelling -7046029254386353131L of the same bits is accepted (user code can work around it).
#ifdef PK_PROBE_P6
PK_KERNEL void p6_fibonacci_hash_u64(Tensor<i64, 1> ids, Tensor<bf16, 2> table, Tensor<bf16, 2> out) {
  index nb = table.rows();
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 128}))
    store(out, load_rows<32, 128>(table, ((load<32>(ids, t) * 0x9E3779B97F4A7C15UL) % nb + nb) % nb, n), t, n);
}
#endif

// P7 (finding 6): include_last_offset=False bags, the last bag's end chosen by a conditional on indices: refused with
// a message about tile clipping that does not say how to choose between two indices (min / max arithmetic, as
// user_specs26.pk.cpp's embedding_bag_sum_no_last_offset does).
#ifdef PK_PROBE_P7
PK_KERNEL void p7_bag_end_conditional(Tensor<bf16, 2> table, Tensor<i32, 1> ids, Tensor<i32, 1> offsets,
                                      Tensor<f32, 2> out) {
  index nb = offsets.size();
  for (auto [b, n] : tiles(out.rows(), out.cols(), {1, 128})) {
    index lo = offsets.at(b);
    index hi = b + 1 < nb ? offsets.at(b + 1) : ids.size();
    auto acc = zeros<f32, 1, 128>();
    for (auto j : range(lo, hi, 32)) {
      auto id = where(cast<i32>(row_index<32, 1>(0)) + j < hi, load<32, 1>(ids, j), -1);
      acc = acc + transpose(row_sum(transpose(cast<f32>(load_rows<32, 128>(table, id, n)))));
    }
    store(out, acc, b, n);
  }
}
#endif

// P8 (finding 2): an int8 tensor type, the storage of int8 weights, activations and KV caches (i8 since the
// fortieth session; it was refused as an undeclared identifier).
#ifdef PK_PROBE_P8
PK_KERNEL void p8_int8_tensor(Tensor<i8, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [t, d] : tiles(q.rows(), q.cols(), {16, 256}))
    store(y, cast<bf16>(cast<f32>(load<16, 256>(q, t, d)) * load<16, 1>(s, t, 0)), t, d);
}
#endif

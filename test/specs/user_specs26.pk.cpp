// The twenty-sixth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only, as a new user writing the pieces
// of recommendation models, graph neural networks and quantised inference: embedding bags (sum / mean / max pooling
// over offsets, per-sample weights, fp8 row-wise quantised tables, hashed and quotient-remainder ids), DLRM's
// dot-product feature interaction, jagged (ragged) sequences given by offsets, GNN message passing (gather by edge
// source, scatter-add by edge destination, mean aggregation by degrees, GCN normalisation, GAT edge softmax),
// SpMM as a gather and segment sums, top-k retrieval, bucketing and sketches of ids, int8 / int4 / fp8 weight-only
// and fp8 x fp8 GEMMs, per-token and per-channel quantisation, KV-cache quantisation, and across ranks:
// table-wise, row-wise and column-wise sharded embeddings with all_to_all / reduce_scatter of pooled embeddings,
// fp8-compressed all-to-all, partitioned graphs (all-gathered features, features pulled from the owners), and
// top-k retrieval over item shards (local top-k, all-gather along a dimension, merge). Nothing assumes a world size.
// Each kernel compiles alone (pkc FILE --kernel NAME) and the file compiles as a whole. Each kernel's comment gives
// its exact semantics (W = world_size(), r = rank(); "x[i]" of a Sym is this rank's copy unless said otherwise).
// The language has no 8-bit integer type and no bit operations: int8 values are held one per i32 or packed four to
// an i32 (byte j = (u / 256^j) % 256 of the unsigned word u), int4 eight to an i32, and decoded by integer division
// and remainder (see specs26_findings.md). Positions of rows in tensors that may pass 2^24 rows (edges, jagged
// tokens, ids) are built in i32 as cast<i32>(row_index<R, 1>(0)) + j, and masks compare positions relative to the
// tile (row_index<R, 1>(0) < hi - j): row_index is an f32 tile (finding 1). Part (b) is user_specs26_bad.pk.cpp;
// part (c), the findings' reproducers, user_specs26_probes.pk.cpp; findings in test/specs/specs26_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ Embedding bags

// 1. EmbeddingBag(mode="sum") with offsets (torch.nn.functional.embedding_bag, include_last_offset=True):
// table bf16 [V, D]; ids i32 [N]; offsets i32 [B + 1] (bag b is ids[offsets[b] .. offsets[b + 1]));
// out f32 [B, D]: out[b, :] = sum_{j in bag b} table[ids[j], :]. An empty bag gives 0. One bag and 128 columns
// per tile; the bag is walked 32 ids at a time, ids past the bag's end masked to -1 (a row of zeros), so the last
// chunk never reads the next bag's ids. Rows are summed over the chunk by transpose + row_sum.
PK_KERNEL void embedding_bag_sum(Tensor<bf16, 2> table, Tensor<i32, 1> ids, Tensor<i32, 1> offsets,
                                 Tensor<f32, 2> out) {
  for (auto [b, n] : tiles(out.rows(), out.cols(), {1, 128})) {
    index lo = offsets.at(b);
    index hi = offsets.at(b + 1);
    auto acc = zeros<f32, 1, 128>();
    for (auto j : range(lo, hi, 32)) {
      auto pos = cumsum(zeros<i32, 32>() + 1) + (j - 1);  // j .. j + 31
      auto id = where(pos < hi, load<32>(ids, j), -1);
      auto rows = cast<f32>(load_rows<32, 128>(table, id, n));
      acc = acc + transpose(row_sum(transpose(rows)));
    }
    store(out, acc, b, n);
  }
}

// 2. EmbeddingBag(mode="mean") with per-bag length division: as 1, then out[b, :] /= max(len_b, 1); output bf16.
// (torch gives 0 for an empty bag.)
PK_KERNEL void embedding_bag_mean(Tensor<bf16, 2> table, Tensor<i32, 1> ids, Tensor<i32, 1> offsets,
                                  Tensor<bf16, 2> out) {
  for (auto [b, n] : tiles(out.rows(), out.cols(), {1, 128})) {
    index lo = offsets.at(b);
    index hi = offsets.at(b + 1);
    float inv = 1.0f / float(max(hi - lo, 1));
    auto acc = zeros<f32, 1, 128>();
    for (auto j : range(lo, hi, 32)) {
      auto pos = cumsum(zeros<i32, 32>() + 1) + (j - 1);
      auto id = where(pos < hi, load<32>(ids, j), -1);
      acc = acc + transpose(row_sum(transpose(cast<f32>(load_rows<32, 128>(table, id, n)))));
    }
    store(out, cast<bf16>(acc * inv), b, n);
  }
}

// 3. EmbeddingBag(mode="sum", per_sample_weights=w): table f32 [V, D]; ids i32 [N]; w f32 [N]; offsets i32 [B + 1];
// out f32 [B, D]: out[b, :] = sum_{j in bag b} w[j] * table[ids[j], :]. The weights past the bag's end are the
// next bag's: they multiply rows of zeros (masked ids), so they add nothing.
PK_KERNEL void embedding_bag_weighted(Tensor<f32, 2> table, Tensor<i32, 1> ids, Tensor<f32, 1> w,
                                      Tensor<i32, 1> offsets, Tensor<f32, 2> out) {
  for (auto [b, n] : tiles(out.rows(), out.cols(), {1, 64})) {
    index lo = offsets.at(b);
    index hi = offsets.at(b + 1);
    auto acc = zeros<f32, 1, 64>();
    for (auto j : range(lo, hi, 64)) {
      auto pos = cumsum(zeros<i32, 64>() + 1) + (j - 1);
      auto id = where(pos < hi, load<64>(ids, j), -1);
      auto rows = load_rows<64, 64>(table, id, n) * load<64, 1>(w, j);
      acc = acc + transpose(row_sum(transpose(rows)));
    }
    store(out, acc, b, n);
  }
}

// 4. EmbeddingBag(mode="max"): table f32 [V, D]; ids, offsets as in 1; out f32 [B, D]:
// out[b, d] = max_{j in bag b} table[ids[j], d], 0 for an empty bag (torch's value). Masked rows are -inf so a
// row of zeros never wins; the running max starts at -inf and an empty bag is caught at the store.
PK_KERNEL void embedding_bag_max(Tensor<f32, 2> table, Tensor<i32, 1> ids, Tensor<i32, 1> offsets,
                                 Tensor<f32, 2> out) {
  for (auto [b, n] : tiles(out.rows(), out.cols(), {1, 128})) {
    index lo = offsets.at(b);
    index hi = offsets.at(b + 1);
    auto mx = zeros<f32, 128, 1>() - 1e30f;
    for (auto j : range(lo, hi, 32)) {
      auto pos = cumsum(zeros<i32, 32>() + 1) + (j - 1);
      auto ok = pos < hi;
      auto rows = load_rows<32, 128>(table, where(ok, load<32>(ids, j), -1), n);
      auto masked = where(reshape<32, 1>(cast<f32>(ok)) != 0.0f, rows, -1e30f);
      mx = max(mx, row_max(transpose(masked)));
    }
    auto res = where(zeros<f32, 1, 128>() + float(hi - lo) > 0.0f, transpose(mx), 0.0f);
    store(out, res, b, n);
  }
}

// 5. EmbeddingBag in COO form (per-id bag index, as torch's `input` + `offsets` turned into a segment id per id):
// table bf16 [V, D]; ids i32 [N]; bag i32 [N] (the bag of id j); w f32 [N] per-sample weights; out f32 [B, D]
// zeroed here, then out[bag[j], :] += w[j] * table[ids[j], :] by atomic row adds (any order of bags).
PK_KERNEL void embedding_bag_coo(Tensor<bf16, 2> table, Tensor<i32, 1> ids, Tensor<i32, 1> bag, Tensor<f32, 1> w,
                                 Tensor<f32, 2> out) {
  for (auto [b, n] : tiles(out.rows(), out.cols(), {32, 256})) store(out, zeros<f32, 32, 256>(), b, n);
  for (auto [j, n] : tiles(ids.size(), out.cols(), {64, 128})) {
    auto rows = cast<f32>(load_rows<64, 128>(table, load<64>(ids, j), n)) * load<64, 1>(w, j);
    store_add_rows(out, rows, load<64>(bag, j), n);
  }
}

// 6. EmbeddingBag over an fp8 row-wise quantised table (fbgemm's "rowwise" tables with an fp8 payload):
// table f8e4m3 [V, D]; scale f32 [V, 1] (one per row); ids, offsets as in 1; out bf16 [B, D]:
// out[b, :] = bf16(sum_{j in bag b} float(table[ids[j], :]) * scale[ids[j]]). The row scales are gathered by the
// same ids as a [32, 1] tile.
PK_KERNEL void embedding_bag_fp8_rowwise(Tensor<f8e4m3, 2> table, Tensor<f32, 2> scale, Tensor<i32, 1> ids,
                                         Tensor<i32, 1> offsets, Tensor<bf16, 2> out) {
  for (auto [b, n] : tiles(out.rows(), out.cols(), {1, 128})) {
    index lo = offsets.at(b);
    index hi = offsets.at(b + 1);
    auto acc = zeros<f32, 1, 128>();
    for (auto j : range(lo, hi, 32)) {
      auto pos = cumsum(zeros<i32, 32>() + 1) + (j - 1);
      auto id = where(pos < hi, load<32>(ids, j), -1);
      auto rows = cast<f32>(load_rows<32, 128>(table, id, n)) * load_rows<32, 1>(scale, id, 0);
      acc = acc + transpose(row_sum(transpose(rows)));
    }
    store(out, cast<bf16>(acc), b, n);
  }
}

// 7. Hashed embedding lookup (the "hashing trick" of DLRM / TorchRec's hashed id features): raw ids i64 [T]
// (any 64-bit value, negative too); table bf16 [NB, D] of NB buckets; out bf16 [T, D]:
// out[t, :] = table[h(ids[t]), :] with h(x) = ((x * 40503 + 12345) mod NB + NB) mod NB computed in i64 (the
// product wraps modulo 2^64 as C++ unsigned arithmetic would; the double mod makes the bucket non-negative).
PK_KERNEL void hashed_embedding_lookup(Tensor<i64, 1> ids, Tensor<bf16, 2> table, Tensor<bf16, 2> out) {
  index nb = table.rows();
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 256})) {
    auto h = ((load<32>(ids, t) * 40503 + 12345) % nb + nb) % nb;
    store(out, load_rows<32, 256>(table, h, n), t, n);
  }
}

// 8. Quotient-remainder embedding (Shi et al., "compositional embeddings"): ids i32 [T] in [0, Q M);
// tq f32 [Q, D] and tr f32 [M, D] with M = tr.rows(); out f32 [T, D]:
// out[t, :] = tq[ids[t] / M, :] * tr[ids[t] % M, :] (element-wise product of the two partial embeddings).
PK_KERNEL void qr_embedding(Tensor<i32, 1> ids, Tensor<f32, 2> tq, Tensor<f32, 2> tr, Tensor<f32, 2> out) {
  index m = tr.rows();
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 128})) {
    auto id = load<32>(ids, t);
    store(out, load_rows<32, 128>(tq, id / m, n) * load_rows<32, 128>(tr, id % m, n), t, n);
  }
}

// 9. Bucketize dense features (torch.bucketize(x, boundaries, right=False)): x f32 [T, F]; boundaries f32 [NB]
// sorted ascending (NB <= 64); out i32 [T, F]: out[t, f] = #{k : boundaries[k] < x[t, f]}.
// Each feature column becomes a [16, 64] comparison against the boundary row; padding boundaries (k >= NB) are
// masked out (they read 0 and would count for x > 0).
PK_KERNEL void bucketize_features(Tensor<f32, 2> x, Tensor<f32, 1> boundaries, Tensor<i32, 2> out) {
  index nb = boundaries.size();
  for (auto [t, f] : tiles(x.rows(), x.cols(), {16, 1})) {
    auto v = load<16, 1>(x, t, f);
    auto bnd = load<1, 64>(boundaries, 0);
    auto below = (bnd < v) && (col_index<16, 64>(0) < nb);
    store(out, cast<i32>(row_sum(cast<f32>(below))), t, f);
  }
}

// 10. Count-min sketch update for id frequencies (streaming feature statistics): ids i64 [N]; sketch i32 [DH W', 1]
// (DH = 4 hash rows of width W' = sketch.rows() / 4, rows stacked); sketch[i W' + h_i(id), 0] += 1 for each of the
// 4 hash functions h_i(x) = ((x * a_i + b_i) mod W' + W') mod W' with fixed odd a_i. Integer row adds (exact).
PK_KERNEL void count_min_sketch_update(Tensor<i64, 1> ids, Tensor<i32, 2> sketch) {
  index w = sketch.rows() / 4;
  for (auto j : tiles(ids.size(), {128})) {
    auto id = reshape<128, 1>(load<128>(ids, j));
    auto one = zeros<i32, 128, 1>() + 1;
    store_add_rows(sketch, one, ((id * 2654435761L + 1) % w + w) % w, 0);
    store_add_rows(sketch, one, ((id * 40503 + 7) % w + w) % w + w, 0);
    store_add_rows(sketch, one, ((id * 97 + 31) % w + w) % w + 2 * w, 0);
    store_add_rows(sketch, one, ((id * 2246822519L + 3) % w + w) % w + 3 * w, 0);
  }
}

// 11. Id frequency histogram for 64 categories (a small categorical feature): cat i32 [N] with values 0..63 (others
// ignored); counts i32 [1, 64] zeroed here, then counts[0, c] += #{j : cat[j] == c}: a per-tile histogram added
// into the total (tiles meet in any order).
PK_KERNEL void category_histogram(Tensor<i32, 1> cat, Tensor<i32, 2> counts) {
  for (auto z : tiles(1, {1})) store(counts, zeros<i32, 1, 64>(), z, 0);
  for (auto j : tiles(cat.size(), {1024})) store_add(counts, reshape<1, 64>(histogram<64>(load<1024>(cat, j))), 0, 0);
}

// ============================================================================ DLRM feature interaction

// 12. DLRM dot interaction (interaction_op="dot", self_interaction=False), gather form: x bf16 [B F, D] (the
// bottom-MLP output and the F - 1 pooled embeddings of each sample, stacked: row b F + i is feature i of sample b);
// li, lj i32 [P] with P = F (F - 1) / 2 the pair list (torch.tril_indices(F, F, -1)); out f32 [B, P]:
// out[b, k] = sum_d x[b F + li[k], d] * x[b F + lj[k], d]. D <= 128.
PK_KERNEL void dlrm_dot_interaction(Tensor<bf16, 2> x, Tensor<i32, 1> li, Tensor<i32, 1> lj, Tensor<f32, 2> out,
                                    index features) {
  for (auto [b, k] : tiles(out.rows(), out.cols(), {1, 64})) {
    auto a = cast<f32>(load_rows<64, 128>(x, load<64>(li, k) + b * features, 0));
    auto c = cast<f32>(load_rows<64, 128>(x, load<64>(lj, k) + b * features, 0));
    store(out, transpose(row_sum(a * c)), b, k);
  }
}

// 13. DLRM dot interaction, matrix form: z = X X^T per sample as a batched GEMM (A·Bᵀ with B = A): x bf16 [B, F, D];
// z f32 [B, F, F]: z[b, i, j] = sum_d x[b, i, d] x[b, j, d]. The batched GEMM loop of the docs (its twin runs
// when F is not a multiple of 4).
PK_KERNEL void dlrm_gram_batched(Tensor<bf16, 3> x, Tensor<f32, 3> z) {
  for (auto [b, m, n] : tiles(x.dim(0), x.dim(1), x.dim(1), {1, 64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.dim(2), 64)) acc = mma_t(load<64, 64>(x, b, m, k), load<64, 64>(x, b, n, k), acc);
    store(z, acc, b, m, n);
  }
}

// 14. DLRM interaction output with the dense features concatenated (the top MLP's input): dense bf16 [B, D]
// (bottom-MLP output); z f32 [B, F, F] from 13; li, lj i32 [P]; out bf16 [B, D + P]:
// out[b, 0 : D] = dense[b], out[b, D + k] = z[b, li[k], lj[k]]. The pair values are gathered from z viewed as
// zf f32 [B F F, 1] (the same memory, a separate argument only read here). D a multiple of 64.
PK_KERNEL void dlrm_interaction_concat(Tensor<bf16, 2> dense, Tensor<f32, 2> zf, Tensor<i32, 1> li,
                                       Tensor<i32, 1> lj, Tensor<bf16, 2> out, index features) {
  index d = dense.cols();
  for (auto [b, n] : tiles(dense.rows(), dense.cols(), {16, 64})) store(out, load<16, 64>(dense, b, n), b, n);
  index ff = features * features;
  for (auto [b, k] : tiles(out.rows(), out.cols() - d, {1, 64})) {
    auto idx = load<64>(li, k) * features + load<64>(lj, k) + b * ff;
    store(out, cast<bf16>(transpose(load_rows<64, 1>(zf, idx, 0))), b, d + k);
  }
}

// ============================================================================ Jagged (ragged) sequences

// 15. Jagged to padded dense (fbgemm jagged_to_padded_dense, pad value 0): values bf16 [N, D] (the rows of all
// sequences back to back); offsets i32 [B + 1]; out bf16 [B, L, D]: out[b, l, :] = values[offsets[b] + l, :] for
// l < min(len_b, L), 0 elsewhere (sequences longer than L are truncated). Rows gathered by computed index, -1
// (zeros) past the sequence's end.
PK_KERNEL void jagged_to_padded_dense(Tensor<bf16, 2> values, Tensor<i32, 1> offsets, Tensor<bf16, 3> out) {
  for (auto [b, l, n] : tiles(out.dim(0), out.dim(1), out.dim(2), {1, 16, 128})) {
    index lo = offsets.at(b);
    index len = offsets.at(b + 1) - lo;
    auto pos = cast<i32>(row_index<16, 1>(l));  // l .. l + 15
    auto idx = where(pos < len, pos + lo, -1);
    store(out, load_rows<16, 128>(values, idx, n), b, l, n);
  }
}

// 15b. EmbeddingBag(mode="sum") with offsets WITHOUT the trailing total (include_last_offset=False, torch's
// default): offsets i32 [B] (bag b is ids[offsets[b] .. offsets[b + 1]), the last bag ends at N = ids.size()).
// The end of bag b is max(offsets.at(b + 1), (b + 1) / B * N): offsets.at(B) reads 0 (outside the tensor) and
// (b + 1) / B is 1 for the last bag only (the language has no conditional operator on indices).
// table bf16 [V, D]; out f32 [B, D] as in 1.
PK_KERNEL void embedding_bag_sum_no_last_offset(Tensor<bf16, 2> table, Tensor<i32, 1> ids, Tensor<i32, 1> offsets,
                                                Tensor<f32, 2> out) {
  index nb = offsets.size();
  for (auto [b, n] : tiles(out.rows(), out.cols(), {1, 128})) {
    index lo = offsets.at(b);
    index hi = max(offsets.at(b + 1), (b + 1) / nb * ids.size());
    auto acc = zeros<f32, 1, 128>();
    for (auto j : range(lo, hi, 32)) {
      auto pos = cast<i32>(row_index<32, 1>(0)) + j;  // exact i32 positions (row_index<32, 1>(j) is f32)
      auto id = where(pos < hi, load<32, 1>(ids, j), -1);
      acc = acc + transpose(row_sum(transpose(cast<f32>(load_rows<32, 128>(table, id, n)))));
    }
    store(out, acc, b, n);
  }
}

// 16. Padded dense to jagged (the inverse; fbgemm dense_to_jagged): dense bf16 [B, L, D]; offsets i32 [B + 1];
// values bf16 [N, D]: values[offsets[b] + l, :] = dense[b, l, :] for l < min(len_b, L); rows of values no sequence
// covers are untouched. Scattered with store_rows (a plain store at offsets[b] + l would spill the padding rows
// of the last tile into the next sequence's rows).
PK_KERNEL void padded_dense_to_jagged(Tensor<bf16, 3> dense, Tensor<i32, 1> offsets, Tensor<bf16, 2> values) {
  for (auto [b, l, n] : tiles(dense.dim(0), dense.dim(1), dense.dim(2), {1, 16, 128})) {
    index lo = offsets.at(b);
    index len = offsets.at(b + 1) - lo;
    auto pos = cast<i32>(row_index<16, 1>(l));
    store_rows(values, reshape<16, 128>(load<1, 16, 128>(dense, b, l, n)), where(pos < len, pos + lo, -1), n);
  }
}

// 17. Jagged sum and mean pooling (segment_sum / segment_mean over a jagged tensor): values f32 [N, D]; offsets
// i32 [B + 1]; sum f32 [B, D], mean f32 [B, D]: sum[b] = sum_{i in [offsets[b], offsets[b+1])} values[i, :],
// mean[b] = sum[b] / max(len_b, 1). Contiguous rows are loaded directly; the last chunk's rows of the next
// sequence are masked by their row index.
PK_KERNEL void jagged_sum_mean(Tensor<f32, 2> values, Tensor<i32, 1> offsets, Tensor<f32, 2> sum, Tensor<f32, 2> mean) {
  for (auto [b, n] : tiles(sum.rows(), sum.cols(), {1, 128})) {
    index lo = offsets.at(b);
    index hi = offsets.at(b + 1);
    auto acc = zeros<f32, 1, 128>();
    for (auto i : range(lo, hi, 32)) {
      auto t = where(row_index<32, 1>(0) < hi - i, load<32, 128>(values, i, n), 0.0f);
      acc = acc + transpose(row_sum(transpose(t)));
    }
    store(sum, acc, b, n);
    store(mean, acc * (1.0f / float(max(hi - lo, 1))), b, n);
  }
}

// 18. Jagged softmax (a softmax within each sequence of per-item scores, as in DIN / jagged attention weights):
// x f32 [N, 1]; offsets i32 [B + 1]; y f32 [N, 1]: y[i] = exp(x[i] - max_seq) / sum_seq exp(x[j] - max_seq) over
// the sequence holding i. Three passes over the sequence (max, sum, write); the writes are row scatters masked to
// the sequence, as the tile past its end belongs to the next sequence.
PK_KERNEL void jagged_softmax(Tensor<f32, 2> x, Tensor<i32, 1> offsets, Tensor<f32, 2> y) {
  for (auto b : tiles(offsets.size() - 1, {1})) {
    index lo = offsets.at(b);
    index hi = offsets.at(b + 1);
    auto mx = zeros<f32, 1, 1>() - 1e30f;
    for (auto i : range(lo, hi, 256)) {
      auto t = where(row_index<256, 1>(0) < hi - i, load<256, 1>(x, i, 0), -1e30f);
      mx = max(mx, row_max(transpose(t)));
    }
    auto s = zeros<f32, 1, 1>();
    for (auto i : range(lo, hi, 256)) {
      auto e = where(row_index<256, 1>(0) < hi - i, exp(load<256, 1>(x, i, 0) - mx), 0.0f);
      s = s + row_sum(transpose(e));
    }
    for (auto i : range(lo, hi, 256)) {
      auto pos = cast<i32>(row_index<256, 1>(0)) + i;
      store_rows(y, exp(load<256, 1>(x, i, 0) - mx) / s, where(pos < hi, pos, -1), 0);
    }
  }
}

// 19. Jagged + dense broadcast add (fbgemm jagged_dense_elementwise_add with a per-sequence dense row, e.g. a user
// embedding added to each of the user's history items): values bf16 [N, D]; seg i32 [N] (the sequence of row i);
// dense bf16 [B, D]; out bf16 [N, D]: out[i, :] = values[i, :] + dense[seg[i], :].
PK_KERNEL void jagged_dense_add(Tensor<bf16, 2> values, Tensor<i32, 1> seg, Tensor<bf16, 2> dense,
                                Tensor<bf16, 2> out) {
  for (auto [i, n] : tiles(values.rows(), values.cols(), {32, 256}))
    store(out, load<32, 256>(values, i, n) + load_rows<32, 256>(dense, load<32>(seg, i), n), i, n);
}

// 20. Jagged sequence lengths to offsets (torch.cumsum with a leading 0, asynchronous_complete_cumsum):
// lengths i32 [B] with B <= 4096; offsets i32 [B + 1]: offsets[0] = 0, offsets[b + 1] = sum_{c <= b} lengths[c].
// One tile (a single block) holds every length; the running sums are stored one place on.
PK_KERNEL void lengths_to_offsets(Tensor<i32, 1> lengths, Tensor<i32, 1> offsets) {
  for (auto z : tiles(1, {1})) {
    store(offsets, zeros<i32, 1>(), 0);
    store(offsets, cumsum(load<4096>(lengths, 0)), 1);
  }
}

// 20b. Jagged causal self-attention over user histories (HSTU / jagged flash attention, one head, D = 64):
// q, k, v bf16 [N, 64] (the tokens of all sequences back to back); offsets i32 [B + 1]; o bf16 [N, 64]:
// for a token at position i of sequence b (row lo_b + i), o = softmax_j(q_i . k_j * scale) v_j over the positions
// j <= i of the same sequence. Query tiles of 64 positions (m up to `max_len`), keys from the sequence start up to
// the tile's last query, an online softmax; the rows of a query tile past the sequence's end belong to the next
// sequence, so the output is scattered by row with those rows masked to -1.
PK_KERNEL void jagged_causal_attention(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<i32, 1> offsets,
                                       Tensor<bf16, 2> o, index max_len, float scale) {
  for (auto [b, m] : tiles(offsets.size() - 1, max_len, {1, 64})) {
    index lo = offsets.at(b);
    index hi = offsets.at(b + 1);
    auto qt = load<64, 64>(q, lo + m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto j : range(lo, min(hi, lo + m + 64), 64)) {
      auto row = row_index<64, 64>(m);       // positions inside the sequence (exact in f32 below 2^24)
      auto col = col_index<64, 64>(j - lo);
      auto s = where((col <= row) && (col < hi - lo), mma_t(qt, load<64, 64>(k, j, 0), zeros<f32, 64, 64>()) * scale, -1e30f);
      auto mn = max(mx, row_max(s));
      auto p = exp(s - mn);
      auto corr = exp(mx - mn);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, j, 0), acc * corr);
      mx = mn;
    }
    auto pos = cast<i32>(row_index<64, 1>(m));
    store_rows(o, cast<bf16>(acc / max(l, 1e-30f)), where(pos < hi - lo, pos + lo, -1), 0);
  }
}

// ============================================================================ Graph neural networks

// 21. Message passing with sum aggregation (PyG's MessagePassing(aggr="add") with message x_j, COO edges):
// x f32 [V, D]; src, dst i32 [E]; out f32 [V, D] zeroed here, then out[dst[e], :] += x[src[e], :] for every edge.
PK_KERNEL void gnn_scatter_add(Tensor<f32, 2> x, Tensor<i32, 1> src, Tensor<i32, 1> dst, Tensor<f32, 2> out) {
  for (auto [v, n] : tiles(out.rows(), out.cols(), {32, 256})) store(out, zeros<f32, 32, 256>(), v, n);
  for (auto [e, n] : tiles(src.size(), x.cols(), {64, 128}))
    store_add_rows(out, load_rows<64, 128>(x, load<64>(src, e), n), load<64>(dst, e), n);
}

// 22. Mean aggregation with in-degrees (GraphSAGE's mean aggregator): x bf16 [V, D]; src, dst i32 [E];
// agg f32 [V, D] and deg f32 [V, 1] are workspaces zeroed here; out bf16 [V, D]:
// deg[v] = #{e : dst[e] = v}, agg[v] = sum_{dst[e] = v} x[src[e]], out[v] = bf16(agg[v] / max(deg[v], 1)).
// Three phases: zero, scatter-add (messages and degrees), divide.
PK_KERNEL void gnn_mean_aggregate(Tensor<bf16, 2> x, Tensor<i32, 1> src, Tensor<i32, 1> dst, Tensor<f32, 2> agg,
                                  Tensor<f32, 2> deg, Tensor<bf16, 2> out) {
  for (auto [v, n] : tiles(agg.rows(), agg.cols(), {32, 256})) store(agg, zeros<f32, 32, 256>(), v, n);
  for (auto v : tiles(deg.rows(), {256})) store(deg, zeros<f32, 256, 1>(), v, 0);
  for (auto [e, n] : tiles(src.size(), x.cols(), {64, 128}))
    store_add_rows(agg, cast<f32>(load_rows<64, 128>(x, load<64>(src, e), n)), load<64>(dst, e), n);
  for (auto e : tiles(dst.size(), {256})) store_add_rows(deg, zeros<f32, 256, 1>() + 1.0f, load<256>(dst, e), 0);
  for (auto [v, n] : tiles(out.rows(), out.cols(), {32, 256}))
    store(out, cast<bf16>(load<32, 256>(agg, v, n) / max(load<32, 1>(deg, v, 0), 1.0f)), v, n);
}

// 23. GCN propagation (Kipf & Welling, with self loops): x f32 [V, D]; src, dst i32 [E] (no self loops in the list);
// deg f32 [V] = 1 + in-degree (given); out f32 [V, D]:
// out[v] = x[v] / deg[v] + sum_{dst[e] = v} x[src[e]] * rsqrt(deg[src[e]]) * rsqrt(deg[v]).
// Phase 1 writes the self-loop term (zeroing out), phase 2 adds the edge messages; the degrees are gathered by
// the same index tiles from deg viewed [V, 1].
PK_KERNEL void gcn_propagate(Tensor<f32, 2> x, Tensor<i32, 1> src, Tensor<i32, 1> dst, Tensor<f32, 2> deg,
                             Tensor<f32, 2> out) {
  for (auto [v, n] : tiles(out.rows(), out.cols(), {32, 256}))
    store(out, load<32, 256>(x, v, n) / load<32, 1>(deg, v, 0), v, n);
  for (auto [e, n] : tiles(src.size(), x.cols(), {64, 128})) {
    auto s = load<64>(src, e);
    auto d = load<64>(dst, e);
    auto norm = rsqrt(load_rows<64, 1>(deg, s, 0)) * rsqrt(load_rows<64, 1>(deg, d, 0));
    store_add_rows(out, load_rows<64, 128>(x, s, n) * norm, d, n);
  }
}

// 24. GAT layer, one head, destination-sorted CSR (rowptr i32 [V + 1], col i32 [E] = the source of each edge,
// edges of node v at rowptr[v] .. rowptr[v + 1]): h bf16 [V, D] (D = 64, the projected features), as f32 [V, 1]
// = a_src . h[u], ad f32 [V, 1] = a_dst . h[v] (precomputed); out bf16 [V, D]:
// e_uv = leaky_relu(as[u] + ad[v], 0.2), alpha_uv = softmax over the in-edges of v, out[v] = sum alpha_uv h[u].
// An online softmax over 32-edge chunks (as flash attention over keys); a node without in-edges gives 0.
PK_KERNEL void gat_aggregate(Tensor<i32, 1> rowptr, Tensor<i32, 1> col, Tensor<bf16, 2> h, Tensor<f32, 2> as,
                             Tensor<f32, 2> ad, Tensor<bf16, 2> out) {
  for (auto v : tiles(out.rows(), {1})) {
    index lo = rowptr.at(v);
    index hi = rowptr.at(v + 1);
    auto adv = load<1, 1>(ad, v, 0);
    auto m = zeros<f32, 1, 1>() - 1e30f;
    auto l = zeros<f32, 1, 1>();
    auto acc = zeros<f32, 1, 64>();
    for (auto j : range(lo, hi, 32)) {
      auto pos = cumsum(zeros<i32, 32>() + 1) + (j - 1);
      auto ok = reshape<32, 1>(pos < hi);
      auto u = where(pos < hi, load<32>(col, j), -1);
      auto z = load_rows<32, 1>(as, u, 0) + adv;
      auto e = where(ok != 0, max(z, z * 0.2f), -1e30f);   // leaky_relu, masked
      auto mnew = max(m, row_max(transpose(e)));
      auto p = exp(e - mnew);                               // masked edges give exp(-1e30 - m) = 0
      auto corr = exp(m - mnew);
      l = l * corr + row_sum(transpose(p));
      acc = acc * corr + transpose(row_sum(transpose(cast<f32>(load_rows<32, 64>(h, u, 0)) * p)));
      m = mnew;
    }
    store(out, cast<bf16>(acc / max(l, 1e-30f)), v, 0);
  }
}

// 25. GAT edge softmax coefficients, all heads (DGL's edge_softmax on a destination-sorted CSR): rowptr i32 [V + 1];
// score f32 [E, H] (H = 8 heads, the leaky-relu'd logits of each edge); alpha f32 [E, H]:
// alpha[e, h] = exp(score[e, h] - max_v) / sum over the in-edges e' of v of exp(score[e', h] - max_v), per head.
// Edge rows are contiguous per node: loads of 64 edge rows masked by row index; the writes are row scatters
// masked to the node's edges.
PK_KERNEL void gat_edge_softmax(Tensor<i32, 1> rowptr, Tensor<f32, 2> score, Tensor<f32, 2> alpha) {
  for (auto v : tiles(rowptr.size() - 1, {1})) {
    index lo = rowptr.at(v);
    index hi = rowptr.at(v + 1);
    auto mx = zeros<f32, 8, 1>() - 1e30f;
    for (auto j : range(lo, hi, 64))
      mx = max(mx, row_max(transpose(where(row_index<64, 1>(0) < hi - j, load<64, 8>(score, j, 0), -1e30f))));
    auto mrow = transpose(mx);  // [1, 8]
    auto s = zeros<f32, 1, 8>();
    for (auto j : range(lo, hi, 64))
      s = s + transpose(row_sum(transpose(where(row_index<64, 1>(0) < hi - j, exp(load<64, 8>(score, j, 0) - mrow), 0.0f))));
    for (auto j : range(lo, hi, 64)) {
      auto pos = cast<i32>(row_index<64, 1>(0)) + j;
      store_rows(alpha, exp(load<64, 8>(score, j, 0) - mrow) / s, where(pos < hi, pos, -1), 0);
    }
  }
}

// 26. SpMM in CSR (torch.sparse.mm / PyG's SparseTensor matmul): rowptr i32 [R + 1]; colidx i32 [NNZ];
// vals f32 [NNZ]; x bf16 [K, D]; y f32 [R, D]: y[r, :] = sum_{j in row r} vals[j] * x[colidx[j], :].
// Rows of the sparse matrix are tiles; the nonzeros 32 at a time, gathered by column index.
PK_KERNEL void spmm_csr(Tensor<i32, 1> rowptr, Tensor<i32, 1> colidx, Tensor<f32, 1> vals, Tensor<bf16, 2> x,
                        Tensor<f32, 2> y) {
  for (auto [r, n] : tiles(y.rows(), y.cols(), {1, 128})) {
    index lo = rowptr.at(r);
    index hi = rowptr.at(r + 1);
    auto acc = zeros<f32, 1, 128>();
    for (auto j : range(lo, hi, 32)) {
      auto pos = cumsum(zeros<i32, 32>() + 1) + (j - 1);
      auto c = where(pos < hi, load<32>(colidx, j), -1);
      auto w = where(reshape<32, 1>(pos < hi) != 0, load<32, 1>(vals, j), 0.0f);
      acc = acc + transpose(row_sum(transpose(cast<f32>(load_rows<32, 128>(x, c, n)) * w)));
    }
    store(y, acc, r, n);
  }
}

// 27. SpMM in COO as gather + segment sums (PyG's scatter(x[col] * val, row, reduce="sum")): row, col i32 [NNZ];
// val f32 [NNZ]; x f32 [K, D]; y f32 [R, D] zeroed here: y[row[j], :] += val[j] * x[col[j], :].
PK_KERNEL void spmm_coo(Tensor<i32, 1> row, Tensor<i32, 1> col, Tensor<f32, 1> val, Tensor<f32, 2> x,
                        Tensor<f32, 2> y) {
  for (auto [r, n] : tiles(y.rows(), y.cols(), {32, 256})) store(y, zeros<f32, 32, 256>(), r, n);
  for (auto [j, n] : tiles(row.size(), x.cols(), {64, 128}))
    store_add_rows(y, load_rows<64, 128>(x, load<64>(col, j), n) * load<64, 1>(val, j), load<64>(row, j), n);
}

// 28. Edge features from node features (the "message" of an edge network / EdgeConv, x_i || x_j - x_i):
// x bf16 [V, D]; src, dst i32 [E]; msg bf16 viewed [E, 2, D] (the [E, 2 D] concatenation):
// msg[e, 0, :] = x[dst[e]], msg[e, 1, :] = x[src[e]] - x[dst[e]]. The two halves are a dimension of their own, so
// a partial column tile clips at its half (the flat [E, 2 D] form is refused: user_specs26_bad.pk.cpp B4).
PK_KERNEL void edgeconv_messages(Tensor<bf16, 2> x, Tensor<i32, 1> src, Tensor<i32, 1> dst, Tensor<bf16, 3> msg) {
  for (auto [e, n] : tiles(src.size(), x.cols(), {32, 128})) {
    auto xi = load_rows<32, 128>(x, load<32>(dst, e), n);
    auto xj = load_rows<32, 128>(x, load<32>(src, e), n);
    store(msg, reshape<32, 1, 128>(xi), e, 0, n);
    store(msg, reshape<32, 1, 128>(xj - xi), e, 1, n);
  }
}

// ============================================================================ Top-k retrieval

// 29. Retrieval scores (two-tower / ANN exhaustive scoring): q bf16 [Q, D]; items bf16 [N, D]; s f32 [Q, N]:
// s[i, j] = sum_d q[i, d] items[j, d] * inv_temp. The plain GEMM loop (A·Bᵀ), f32 output, epilogue a scale.
PK_KERNEL void retrieval_scores(Tensor<bf16, 2> q, Tensor<bf16, 2> items, Tensor<f32, 2> s, float inv_temp) {
  for (auto [m, n] : tiles(q.rows(), items.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, q.cols(), 64)) acc = mma_t(load<128, 64>(q, m, k), load<256, 64>(items, n, k), acc);
    store(s, acc * inv_temp, m, n);
  }
}

// 30. Local top-8 of score rows in blocks of 1024 candidates (the first stage of a two-stage top-k): s f32 [Q, N];
// cv f32 [Q, 8 NC] and ci i32 [Q, 8 NC] with NC = ceil(N / 1024): for block c, cv[i, 8c .. 8c + 7] are the 8 largest
// s[i, 1024 c ..] (largest first) and ci the item ids (column in s, plus `base`, this shard's first item id).
// Columns past N (a partial last block) are never chosen: a block of fewer than 8 candidates leaves -inf values
// and index -1, kept as id -1 (not -1 + c + base).
PK_KERNEL void topk_blocks(Tensor<f32, 2> s, Tensor<f32, 2> cv, Tensor<i32, 2> ci, index base) {
  for (auto [i, c] : tiles(s.rows(), s.cols(), {8, 1024})) {
    auto t = load<8, 1024>(s, i, c);
    auto idx = row_topk_index<8>(t);
    store(cv, row_topk<8>(t), i, c / 1024 * 8);
    store(ci, where(idx >= 0, idx + (c + base), -1), i, c / 1024 * 8);
  }
}

// 31. Merge of candidate lists (the second stage, also the merge after an all-gather): cv f32 [Q, C], ci i32 [Q, C]
// with C <= 256 candidates per query; tv f32 [Q, 8], ti i32 [Q, 8]: the 8 largest cv[i, :] (largest first) and the
// ids ci[i, p] at their positions p. The id at a chosen position is picked out by a one-hot mask per output column
// (ids below 2^24, exact in f32): ti[i, k] = sum_p ci[i, p] [p == pos[i, k]].
PK_KERNEL void topk_merge(Tensor<f32, 2> cv, Tensor<i32, 2> ci, Tensor<f32, 2> tv, Tensor<i32, 2> ti) {
  for (auto i : tiles(cv.rows(), {16})) {
    auto v = where(col_index<16, 256>(0) < cv.cols(), load<16, 256>(cv, i, 0), -1e30f);
    auto pos = cast<f32>(row_topk_index<8>(v));  // [16, 8]
    auto ids = cast<f32>(load<16, 256>(ci, i, 0));
    store(tv, row_topk<8>(v), i, 0);
    for (auto k : range(0, 8)) {
      auto pk = row_sum(where(col_index<16, 8>(0) == float(k), pos, 0.0f));  // [16, 1]: pos[:, k]
      auto id = row_sum(where(col_index<16, 256>(0) == pk, ids, 0.0f));
      store(ti, cast<i32>(id), i, k);
    }
  }
}

// 32. Sharded top-k retrieval across ranks, in one kernel: each rank holds an item shard items bf16 [N, D] (global ids
// r N + j); q bf16 [Q, D] is the same on every rank; s f32 [Q, N] a workspace; lv f32 [Q, 8], li i32 [Q, 8] (Sym) this
// rank's top 8 (N <= 1024); gv f32 [Q, 8 W], gi i32 [Q, 8 W] the lists of all ranks, all-gathered along dimension 1;
// tv f32 [Q, 8], ti i32 [Q, 8] the global top 8 on every rank. Scores, local top-k, two all-gathers, merge.
PK_KERNEL void sharded_topk_retrieval(Tensor<bf16, 2> q, Tensor<bf16, 2> items, Tensor<f32, 2> s, Sym<f32, 2> lv,
                                      Sym<i32, 2> li, Tensor<f32, 2> gv, Tensor<i32, 2> gi, Tensor<f32, 2> tv,
                                      Tensor<i32, 2> ti) {
  for (auto [m, n] : tiles(q.rows(), items.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, q.cols(), 64)) acc = mma_t(load<64, 64>(q, m, k), load<64, 64>(items, n, k), acc);
    store(s, acc, m, n);
  }
  for (auto i : tiles(s.rows(), {8})) {
    auto t = load<8, 1024>(s, i, 0);
    auto idx = row_topk_index<8>(t);
    store(lv, row_topk<8>(t), i, 0);
    store(li, where(idx >= 0, idx + rank() * items.rows(), -1), i, 0);
  }
  all_gather(lv, gv, 1);
  all_gather(li, gi, 1);
  for (auto i : tiles(gv.rows(), {16})) {
    auto v = where(col_index<16, 128>(0) < gv.cols(), load<16, 128>(gv, i, 0), -1e30f);
    auto pos = cast<f32>(row_topk_index<8>(v));
    auto ids = cast<f32>(load<16, 128>(gi, i, 0));
    store(tv, row_topk<8>(v), i, 0);
    for (auto k : range(0, 8)) {
      auto pk = row_sum(where(col_index<16, 8>(0) == float(k), pos, 0.0f));
      store(ti, cast<i32>(row_sum(where(col_index<16, 128>(0) == pk, ids, 0.0f))), i, k);
    }
  }
}

// 33. In-batch sampled softmax with logQ correction across ranks (two-tower retrieval training, Yi et al. 2019):
// u bf16 [B, D] user embeddings (this rank's batch), it Sym bf16 [B, D] item embeddings, ids Sym i32 [B, 1] item ids;
// logq f32 [V, 1] log sampling probability per item id; gi bf16 [W B, D], gids i32 [W B, 1] all-gathered; loss f32
// [B, 1]: logits[b, c] = u[b] . gi[c] / tau - logq[gids[c]] (c over all W B items), loss[b] = logsumexp_c logits[b, c]
// - logits[b, r B + b] (the positive is the user's own item). D <= 128; online logsumexp over 64-item chunks.
PK_KERNEL void sampled_softmax_logq(Tensor<bf16, 2> u, Sym<bf16, 2> it, Sym<i32, 2> ids, Tensor<f32, 2> logq,
                                    Tensor<bf16, 2> gi, Tensor<i32, 2> gids, Tensor<f32, 2> loss, float inv_tau) {
  all_gather(it, gi);
  all_gather(ids, gids);
  index pos0 = rank() * u.rows();
  for (auto b : tiles(u.rows(), {16})) {
    auto ub = load<16, 128>(u, b, 0);
    auto m = zeros<f32, 16, 1>() - 1e30f;
    auto l = zeros<f32, 16, 1>();
    auto pos = zeros<f32, 16, 1>();
    for (auto c : range(0, gi.rows(), 64)) {
      auto corr = transpose(load_rows<64, 1>(logq, load<64, 1>(gids, c, 0), 0));  // [1, 64]
      auto z = mma_t(ub, load<64, 128>(gi, c, 0), zeros<f32, 16, 64>()) * inv_tau - corr;
      auto zl = where(col_index<16, 64>(c) < gi.rows(), z, -1e30f);
      auto mn = max(m, row_max(zl));
      l = l * exp(m - mn) + row_sum(exp(zl - mn));
      m = mn;
      pos = pos + row_sum(where(col_index<16, 64>(c) == row_index<16, 64>(b) + float(pos0), z, 0.0f));
    }
    store(loss, m + log(l) - pos, b, 0);
  }
}

// ============================================================================ Quantisation

// 34. Per-token symmetric int8 quantisation of activations (SmoothQuant / LLM.int8() dynamic quant): x bf16 [T, D]
// with D <= 4096; q i32 [T, D] holding int8 values (the language has no 8-bit integer type); s f32 [T, 1]:
// s[t] = max(amax_t, 1e-8) / 127, q[t, d] = clamp(round_half_away(x[t, d] / s[t]), -127, 127).
// cast<i32> truncates toward zero, so rounding adds +-0.5 first.
PK_KERNEL void quant_per_token_int8(Tensor<bf16, 2> x, Tensor<i32, 2> q, Tensor<f32, 2> s) {
  for (auto t : tiles(x.rows(), {4})) {
    auto v = cast<f32>(load<4, 4096>(x, t, 0));
    auto sc = max(row_max(abs(v)), 1e-8f) * (1.0f / 127.0f);
    auto y = v / sc;
    auto r = y + where(y >= 0.0f, 0.5f, -0.5f);
    store(q, max(min(cast<i32>(r), 127), -127), t, 0);
    store(s, sc, t, 0);
  }
}

// 35. SmoothQuant: activations divided by per-channel smoothing factors, then per-token int8 as in 34, the int8
// values packed four to an i32 (byte j of word w holds column 4 w + j, two's complement, little-endian as
// torch's int8 tensor viewed as int32): x bf16 [T, D] (D <= 4096, a multiple of 4); smooth f32 [1, D];
// qp i32 [T, D / 4]; s f32 [T, 1]. The word is sum_j (q_j mod 256) 256^j, wrapping: the four columns of a word
// are read as a [4, 4, 1024] view x4 of x ([T, D/4, 4] -> the bytes along the last dimension, 1024 words a tile).
PK_KERNEL void smoothquant_pack_int8(Tensor<bf16, 3> x4, Tensor<f32, 2> smooth4, Tensor<i32, 2> qp, Tensor<f32, 2> s) {
  // x4 is x viewed [T, D / 4, 4]; smooth4 is smooth viewed [D / 4, 4].
  for (auto t : tiles(x4.dim(0), {1})) {
    auto v = cast<f32>(load<1, 1024, 4>(x4, t, 0, 0)) / reshape<1, 1024, 4>(load<1024, 4>(smooth4, 0, 0));
    auto v2 = reshape<1024, 4>(v);
    auto sc = max(row_max(transpose(row_max(abs(v2)))), 1e-8f) * (1.0f / 127.0f);  // [1, 1]
    auto y = v2 / sc;
    auto qi = max(min(cast<i32>(y + where(y >= 0.0f, 0.5f, -0.5f)), 127), -127);
    auto ub = (qi + 256) % 256;                                                       // the byte, 0..255
    // Integer rows cannot be reduced (row_sum takes float tiles, exact below 2^24): each byte is picked out of
    // the [1024, 4] tile by a column mask and row-summed in f32 (exact, < 256), then combined in i64.
    auto b0 = cast<i64>(row_sum(cast<f32>(where(col_index<1024, 4>(0) == 0.0f, ub, 0))));
    auto b1 = cast<i64>(row_sum(cast<f32>(where(col_index<1024, 4>(0) == 1.0f, ub, 0))));
    auto b2 = cast<i64>(row_sum(cast<f32>(where(col_index<1024, 4>(0) == 2.0f, ub, 0))));
    auto b3 = cast<i64>(row_sum(cast<f32>(where(col_index<1024, 4>(0) == 3.0f, ub, 0))));
    auto w64 = b0 + b1 * 256 + b2 * 65536 + b3 * 16777216;
    store(qp, reshape<1, 1024>(cast<i32>(w64)), t, 0);
    store(s, sc, t, 0);
  }
}

// 36. W4A16 GEMM, GPTQ layout (symmetric, group size 128): x bf16 [M, K]; qw i32 [K / 8, N] packed int4 (nibble j
// of qw[kk, n], counted from the low bits, is q[8 kk + j, n] in 0..15); scales f32 [K / 128, N]; y bf16 [M, N]:
// y[m, n] = bf16(sum_k x[m, k] * bf16((q[k, n] - 8) * scales[k / 128, n])). Each 64-row K step gathers the packed
// rows (k + r) / 8 (each repeated 8 times: the unpacking by load_rows), takes the word as unsigned in i64 and the
// nibble (r % 8) by division and remainder; the group's scale row is the same over the step (64 divides 128).
PK_KERNEL void w4a16_gemm_gptq(Tensor<bf16, 2> x, Tensor<i32, 2> qw, Tensor<f32, 2> scales, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), qw.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, x.cols(), 64)) {
      auto kr = cast<i32>(row_index<64, 1>(k));                       // k .. k + 63 as a column
      auto word = cast<i64>(load_rows<64, 128>(qw, kr / 8, n));
      auto u = word + cast<i64>(word < 0) * 4294967296L;              // the word as unsigned
      auto j = kr % 8;
      auto div = cast<i64>(where(j == 0, 1, where(j == 1, 16, where(j == 2, 256, where(j == 3, 4096,
                 where(j == 4, 65536, where(j == 5, 1048576, where(j == 6, 16777216, 268435456))))))));
      auto nib = (u / div) % 16;
      auto w = cast<f32>(nib - 8) * load<1, 128>(scales, k / 128, n);
      acc = mma(load<64, 64>(x, m, k), cast<bf16>(w), acc);
    }
    store(y, cast<bf16>(acc), m, n);
  }
}

// 37. W8A16 GEMM with packed int8 weights and per-channel scales: x bf16 [M, K]; qw i32 [K / 4, N] (byte j of
// qw[kk, n], two's complement, is q[4 kk + j, n] in -128..127); ws f32 [1, N]; y bf16 [M, N]:
// y[m, n] = bf16(ws[n] * sum_k x[m, k] * q[k, n]) (the int8 weights are exact in bf16; the scale is applied once,
// in the epilogue).
PK_KERNEL void w8a16_gemm_packed(Tensor<bf16, 2> x, Tensor<i32, 2> qw, Tensor<f32, 2> ws, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), qw.cols(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, x.cols(), 64)) {
      auto kr = cast<i32>(row_index<64, 1>(k));
      auto word = cast<i64>(load_rows<64, 128>(qw, kr / 4, n));
      auto u = word + cast<i64>(word < 0) * 4294967296L;
      auto j = kr % 4;
      auto div = cast<i64>(where(j == 0, 1, where(j == 1, 256, where(j == 2, 65536, 16777216))));
      auto b = (u / div) % 256;
      auto q = b - cast<i64>(b >= 128) * 256;
      acc = mma(load<64, 64>(x, m, k), cast<bf16>(cast<f32>(q)), acc);
    }
    store(y, cast<bf16>(acc * load<1, 128>(ws, 0, n)), m, n);
  }
}

// 38. W8A16 GEMM with one int8 value per i32 (unpacked weights, torch.linear layout W [N, K]) and per-channel
// scales: x bf16 [M, K]; w i32 [N, K]; ws f32 [N] (1-D); y bf16 [M, N]: y = bf16((x W^T) * ws[n]).
PK_KERNEL void w8a16_gemm_unpacked(Tensor<bf16, 2> x, Tensor<i32, 2> w, Tensor<f32, 1> ws, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 64))
      acc = mma_t(load<64, 64>(x, m, k), cast<bf16>(cast<f32>(load<64, 64>(w, n, k))), acc);
    store(y, cast<bf16>(acc * load<1, 64>(ws, n)), m, n);
  }
}

// 39. FP8 weight-only GEMM (W8A16 with e4m3 weights): x bf16 [M, K]; w f8e4m3 [N, K]; ws f32 [1, N] per-channel
// scales; bias bf16 [1, N]; y bf16 [M, N]: y = bf16(x · (float(w) ws)^T + bias), the weights cast to bf16 (exact:
// e4m3 has fewer mantissa bits) and the scale applied to the accumulator.
PK_KERNEL void fp8_weight_only_gemm(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> w, Tensor<f32, 2> ws, Tensor<bf16, 2> bias,
                                    Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, x.cols(), 64))
      acc = mma_t(load<64, 64>(x, m, k), cast<bf16>(load<128, 64>(w, n, k)), acc);
    store(y, cast<bf16>(acc * load<1, 128>(ws, 0, n) + cast<f32>(load<1, 128>(bias, 0, n))), m, n);
  }
}

// 40. FP8 x FP8 GEMM with per-tensor scales (FP8 inference linear, as torch._scaled_mm): a f8e4m3 [M, K]; b f8e4m3
// [N, K]; sa, sb f32 [1] (dequantisation scales); y bf16 [M, N]: y = bf16((a b^T) * sa[0] * sb[0]). K a multiple of 16.
PK_KERNEL void fp8_gemm_tensor_scales(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<f32, 1> sa, Tensor<f32, 1> sb,
                                      Tensor<bf16, 2> y) {
  float s = sa.at(0) * sb.at(0);
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc * s), m, n);
  }
}

// 41. FP8 GEMM with per-token and per-channel scales (row-wise scaling of torch._scaled_mm): a f8e4m3 [M, K], as f32
// [M, 1]; b f8e4m3 [N, K], bs f32 [1, N]; y bf16 [M, N]: y[m, n] = bf16(as[m] * bs[n] * sum_k a[m, k] b[n, k]).
PK_KERNEL void fp8_gemm_rowwise_scales(Tensor<f8e4m3, 2> a, Tensor<f32, 2> as, Tensor<f8e4m3, 2> b,
                                       Tensor<f32, 2> bs, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc * load<128, 1>(as, m, 0) * load<1, 256>(bs, 0, n)), m, n);
  }
}

// 42. Dynamic per-token FP8 activation quantisation followed by the FP8 GEMM (one kernel, two phases): x bf16 [M, K]
// (K <= 4096); xq f8e4m3 [M, K] and xs f32 [M, 1] workspaces; w f8e4m3 [N, K], ws f32 [1, N]; y bf16 [M, N]:
// xs[m] = max(amax_m, 1e-12) / 448, xq = e4m3(x / xs), y = bf16(xs[m] ws[n] sum_k xq[m, k] w[n, k]).
PK_KERNEL void fp8_dynamic_quant_gemm(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> xq, Tensor<f32, 2> xs, Tensor<f8e4m3, 2> w,
                                      Tensor<f32, 2> ws, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {4})) {
    auto t = cast<f32>(load<4, 4096>(x, m, 0));
    auto amax = max(row_max(abs(t)), 1e-12f);
    store(xq, cast<f8e4m3>(t * (448.0f / amax)), m, 0);
    store(xs, amax * (1.0f / 448.0f), m, 0);
  }
  for (auto [m, n] : tiles(xq.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, xq.cols(), 64)) acc = mma_t(load<128, 64>(xq, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc * load<128, 1>(xs, m, 0) * load<1, 256>(ws, 0, n)), m, n);
  }
}

// 43. Per-channel fp8 weight quantisation of a [K, N] weight (per output column, as stored for x W): w bf16 [K, N];
// wq f8e4m3 [K, N]; ws f32 [1, N]: ws[n] = max(max_k |w[k, n]|, 1e-12) / 448, wq = e4m3(w / ws[n]). Two passes over
// the rows of a 256-column strip (the column maxima carried as a [1, 256] tile).
PK_KERNEL void quant_per_channel_fp8(Tensor<bf16, 2> w, Tensor<f8e4m3, 2> wq, Tensor<f32, 2> ws) {
  for (auto n : tiles(w.cols(), {256})) {
    auto amax = zeros<f32, 1, 256>();
    for (auto k : range(0, w.rows(), 32)) amax = max(amax, transpose(row_max(transpose(abs(cast<f32>(load<32, 256>(w, k, n)))))));
    auto sc = max(amax, 1e-12f) * (1.0f / 448.0f);
    for (auto k : range(0, w.rows(), 32)) store(wq, cast<f8e4m3>(cast<f32>(load<32, 256>(w, k, n)) / sc), k, n);
    store(ws, sc, 0, n);
  }
}

// 44. Block-wise fp8 weight quantisation (DeepSeek-V3's 128 x 128 blocks): w bf16 [N, K]; wq f8e4m3 [N, K];
// ws f32 [ceil(N / 128), ceil(K / 128)]: for block (i, j), ws[i, j] = max(amax, 1e-12) / 448 over
// w[128 i .., 128 j ..], wq = e4m3(w / ws[i, j]). Padding elements of partial blocks read 0 and never raise amax.
PK_KERNEL void quant_block_fp8(Tensor<bf16, 2> w, Tensor<f8e4m3, 2> wq, Tensor<f32, 2> ws) {
  for (auto [i, j] : tiles(w.rows(), w.cols(), {128, 128})) {
    auto t = cast<f32>(load<128, 128>(w, i, j));
    auto amax = row_max(transpose(row_max(abs(t))));  // [1, 1]
    auto sc = max(amax, 1e-12f) * (1.0f / 448.0f);
    store(wq, cast<f8e4m3>(t / sc), i, j);
    store(ws, sc, i / 128, j / 128);
  }
}

// 45. FP8 KV-cache write with per-token, per-head scales into a paged cache (vLLM's reshape_and_cache with fp8
// "dynamic per-token" scales): k bf16 [T, H D] (D = 128); slot i32 [T] (the cache slot of each new token, -1 for a
// padding token: not written); kc f8e4m3 [S, H D]; ks f32 [S, H]:
// ks[slot[t], h] = max(amax_{t,h}, 1e-12) / 448, kc[slot[t], h D ..] = e4m3(k[t, h D ..] / ks[slot[t], h]).
PK_KERNEL void kv_cache_write_fp8(Tensor<bf16, 2> k, Tensor<i32, 1> slot, Tensor<f8e4m3, 2> kc, Tensor<f32, 2> ks) {
  for (auto [t, h] : tiles(k.rows(), k.cols() / 128, {16, 1})) {
    auto x = cast<f32>(load<16, 128>(k, t, h * 128));
    auto sc = max(row_max(abs(x)), 1e-12f) * (1.0f / 448.0f);
    auto s = load<16>(slot, t);
    store_rows(kc, cast<f8e4m3>(x / sc), s, h * 128);
    store_rows(ks, sc, s, h);
  }
}

// 46. Paged fp8 KV-cache gather and dequantisation (the keys of one sequence batch for a non-paged attention):
// kc f8e4m3 [S, H D], ks f32 [S, H] as in 45 (D = 128); bt i32 [B MB, 1] the block tables (row b MB + i is the i-th
// block of sequence b), block size `bs`; out bf16 [B, L, H D]: out[b, l, h D + d] = bf16(kc[slot, h D + d] *
// ks[slot, h]) with slot = bt[b MB + l / bs] bs + l % bs, for every l < L (the caller's L covers the context).
PK_KERNEL void kv_cache_gather_dequant(Tensor<f8e4m3, 2> kc, Tensor<f32, 2> ks, Tensor<i32, 2> bt, Tensor<bf16, 3> out,
                                       index bs, index mb) {
  for (auto [b, l, h] : tiles(out.dim(0), out.dim(1), out.dim(2) / 128, {1, 32, 1})) {
    auto pos = cast<i32>(row_index<32, 1>(l));
    auto blk = load_rows<32, 1>(bt, pos / bs + b * mb, 0);
    auto s = blk * bs + pos % bs;
    auto x = cast<f32>(load_rows<32, 128>(kc, s, h * 128)) * load_rows<32, 1>(ks, s, h);
    store(out, reshape<1, 32, 128>(cast<bf16>(x)), b, l, h * 128);
  }
}

// 47. Group-wise int4 quantisation of a weight and packing in the GPTQ layout (the producer of 36): w bf16 viewed
// w3 [K / 8, 8, N] (row 8 kk + j of W [K, N] is w3[kk, j, :]); scales f32 [K / 128, N] given; qw i32 [K / 8, N]:
// q[k, n] = clamp(round_half_away(w[k, n] / scales[k / 128, n]) + 8, 0, 15),
// qw[kk, n] = sum_j q[8 kk + j, n] 16^j (wrapping to the i32 with those bits). The 8 rows of a word are walked by
// a range loop carrying the word and the place value.
PK_KERNEL void int4_pack_gptq(Tensor<bf16, 3> w3, Tensor<f32, 2> scales, Tensor<i32, 2> qw) {
  for (auto [kk, n] : tiles(w3.dim(0), w3.dim(2), {16, 128})) {
    auto word = zeros<i32, 16, 128>();
    index place = 1;
    for (auto j : range(0, 8)) {
      auto x = reshape<16, 128>(cast<f32>(load<16, 1, 128>(w3, kk, j, n)));
      // The group of row 8 kk + j is (8 kk + j) / 128 = kk / 16: one group per 16-word tile (kk steps by 16).
      auto y = x / load<1, 128>(scales, kk / 16, n);
      auto q = max(min(cast<i32>(y + where(y >= 0.0f, 0.5f, -0.5f)) + 8, 15), 0);
      word = word + q * place;
      place = place * 16;
    }
    store(qw, word, kk, n);
  }
}

// 48. INT8 dequantisation of a per-token quantised activation back to bf16 (the inverse of 34, for a layer that
// runs in bf16): q i32 [T, D] (int8 values); s f32 [T, 1]; y bf16 [T, D]: y = bf16(float(q) * s[t]).
PK_KERNEL void dequant_per_token_int8(Tensor<i32, 2> q, Tensor<f32, 2> s, Tensor<bf16, 2> y) {
  for (auto [t, d] : tiles(q.rows(), q.cols(), {16, 256}))
    store(y, cast<bf16>(cast<f32>(load<16, 256>(q, t, d)) * load<16, 1>(s, t, 0)), t, d);
}

// 49. Int8 item embeddings for ANN scoring (scalar-quantised index, one f32 scale per item): q bf16 [Q, D];
// items i32 [N, D] (int8 values); iscale f32 [1, N]; s f32 [Q, N]: s[i, j] = iscale[j] sum_d q[i, d] items[j, d].
PK_KERNEL void int8_ann_scores(Tensor<bf16, 2> q, Tensor<i32, 2> items, Tensor<f32, 2> iscale, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(q.rows(), items.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, q.cols(), 64))
      acc = mma_t(load<64, 64>(q, m, k), cast<bf16>(cast<f32>(load<64, 64>(items, n, k))), acc);
    store(s, acc * load<1, 64>(iscale, 0, n), m, n);
  }
}

// ============================================================================ Across ranks

// 50. Table-wise model-parallel embeddings, the whole TorchRec forward (fixed pooling factor L): each rank holds T_l
// = tables.rows() / V tables stacked in tables bf16 [T_l V, D] (D <= 128 a tile; V = `vocab`). Input: ids Sym i32
// [T, B, L] with T = W T_l: this rank's local batch of B samples, for every table (table t lives on rank t / T_l).
// 1) all_to_all(ids, gids, 0, 1): gids [T_l, W B, L] holds this rank's tables' ids for the global batch (rank j's
// samples at rows j B ..); 2) pooled[s, t, :] = sum_l tables[t V + gids[t, s, l], :] into pooled Sym bf16
// [W B, T_l, D]; 3) all_to_all(pooled, out, 0, 1): out [B, W T_l, D] holds every table's pooled embedding for this
// rank's samples, table t at t (tables of rank j at j T_l ..). Ids outside [0, V) read zeros.
PK_KERNEL void tablewise_embedding_forward(Sym<i32, 3> ids, Sym<i32, 3> gids, Tensor<bf16, 2> tables,
                                           Sym<bf16, 3> pooled, Sym<bf16, 3> out, index vocab) {
  all_to_all(ids, gids, 0, 1);
  for (auto [s, t] : tiles(gids.dim(1), gids.dim(0), {16, 1})) {
    auto acc = zeros<f32, 16, 128>();
    for (auto l : range(0, gids.dim(2))) {
      auto id = reshape<16, 1>(load<1, 16, 1>(gids, t, s, l));
      auto ok = (id >= 0) && (id < vocab);
      acc = acc + cast<f32>(load_rows<16, 128>(tables, where(ok, id + t * vocab, -1), 0));
    }
    store(pooled, reshape<16, 1, 128>(cast<bf16>(acc)), s, t, 0);
  }
  all_to_all(pooled, out, 0, 1);
}

// 51. Row-wise sharded embedding bag (TorchRec ROW_WISE): the [W V, D] table is split by rows, rank r holding rows
// [r V, (r + 1) V) as table bf16 [V, D]. ids Sym i32 [B, L] this rank's samples (global row ids, fixed pooling L);
// gids [W B, L] all-gathered; part Scratch f32 [W B, D]: part[s] = sum_l table[gids[s, l] - r V] over the ids this
// rank owns; reduce_scatter(Sum, part, out): out f32 [B, D] on rank r = the pooled embeddings of its own samples.
PK_KERNEL void rowwise_embedding_bag(Sym<i32, 2> ids, Tensor<i32, 2> gids, Tensor<bf16, 2> table, Scratch<f32, 2> part,
                                     Sym<f32, 2> out) {
  all_gather(ids, gids);
  index base = rank() * table.rows();
  for (auto [s, n] : tiles(gids.rows(), table.cols(), {32, 128})) {
    auto acc = zeros<f32, 32, 128>();
    for (auto l : range(0, gids.cols())) acc = acc + cast<f32>(load_rows<32, 128>(table, load<32, 1>(gids, s, l) - base, n));
    store(part, acc, s, n);
  }
  reduce_scatter(Sum, part, out);
}

// 52. Column-wise sharded embedding (TorchRec COLUMN_WISE): rank r holds columns [r Dl, (r + 1) Dl) of every row
// as table bf16 [V, Dl]. ids Sym i32 [B, 1] this rank's samples (one id each); gids [W B, 1] all-gathered;
// emb Sym bf16 [W B, Dl]: emb[s] = table[gids[s]]; all_to_all(emb, out, 0, 1): out bf16 [B, W Dl] on rank r holds
// its samples' full embeddings (rank j's column shard at columns j Dl ..).
PK_KERNEL void colwise_embedding_lookup(Sym<i32, 2> ids, Tensor<i32, 2> gids, Tensor<bf16, 2> table, Sym<bf16, 2> emb,
                                        Sym<bf16, 2> out) {
  all_gather(ids, gids);
  for (auto [s, n] : tiles(gids.rows(), table.cols(), {32, 128}))
    store(emb, load_rows<32, 128>(table, load<32, 1>(gids, s, 0), n), s, n);
  all_to_all(emb, out, 0, 1);
}

// 53. FP8-compressed all-to-all of pooled embeddings (communication compression in DLRM training): pooled bf16
// [W B, D] (rows j B .. for rank j); pq Sym f8e4m3 [W B, D] and ps Sym f32 [W B, D / 128] workspaces (one scale per
// row and 128 columns); rq, rs the received ones; out bf16 [W B, D]: rows j B .. hold rank j's rows for this rank,
// dequantised: out = bf16(float(rq) * rs). D a multiple of 128.
PK_KERNEL void fp8_all_to_all_pooled(Tensor<bf16, 2> pooled, Sym<f8e4m3, 2> pq, Sym<f32, 2> ps, Sym<f8e4m3, 2> rq,
                                     Sym<f32, 2> rs, Tensor<bf16, 2> out) {
  for (auto [m, n] : tiles(pooled.rows(), pooled.cols(), {16, 128})) {
    auto t = cast<f32>(load<16, 128>(pooled, m, n));
    auto amax = max(row_max(abs(t)), 1e-30f);
    store(pq, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(ps, amax * (1.0f / 448.0f), m, n / 128);
  }
  all_to_all(pq, rq);
  all_to_all(ps, rs);
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 128}))
    store(out, cast<bf16>(cast<f32>(load<16, 128>(rq, m, n)) * load<16, 1>(rs, m, n / 128)), m, n);
}

// 54. Row-wise sharded embedding backward (sparse gradients reduced to their owners): grad bf16 [B, D] (this rank's
// samples' pooled-embedding gradient, sum pooling); ids i32 [B, L] global row ids; g Scratch f32 [W V, D] the dense
// table gradient (zeroed here); gshard Sym f32 [V, D]: g[ids[b, l]] += grad[b] for every (b, l), then
// reduce_scatter(Sum, g, gshard): rank r gets the gradient of its rows [r V, (r + 1) V).
PK_KERNEL void rowwise_embedding_backward(Tensor<bf16, 2> grad, Tensor<i32, 2> ids, Scratch<f32, 2> g,
                                          Sym<f32, 2> gshard) {
  for (auto [v, n] : tiles(g.rows(), g.cols(), {32, 256})) store(g, zeros<f32, 32, 256>(), v, n);
  for (auto [b, n] : tiles(grad.rows(), grad.cols(), {32, 128})) {
    auto t = cast<f32>(load<32, 128>(grad, b, n));
    for (auto l : range(0, ids.cols())) store_add_rows(g, t, load<32, 1>(ids, b, l), n);
  }
  reduce_scatter(Sum, g, gshard);
}

// 55. Partitioned GNN layer, features all-gathered (each rank owns Vl consecutive nodes, rank r nodes [r Vl, ..)):
// x Sym f32 [Vl, D] this rank's node features; xa [W Vl, D] all-gathered; src i32 [E] global source ids, dst i32 [E]
// local destination ids of the edges into this rank's nodes; out f32 [Vl, D]: out[v] = x[v] + sum_{dst[e] = v}
// xa[src[e]] (sum aggregation with a self term, as GIN with eps = 0).
PK_KERNEL void partitioned_gnn_allgather(Sym<f32, 2> x, Tensor<f32, 2> xa, Tensor<i32, 1> src, Tensor<i32, 1> dst,
                                         Tensor<f32, 2> out) {
  all_gather(x, xa);
  for (auto [v, n] : tiles(out.rows(), out.cols(), {32, 256})) store(out, load<32, 256>(x, v, n), v, n);
  for (auto [e, n] : tiles(src.size(), out.cols(), {64, 128}))
    store_add_rows(out, load_rows<64, 128>(xa, load<64>(src, e), n), load<64>(dst, e), n);
}

// 56. Partitioned GNN layer, features pulled from their owners (no all-gathered copy): as 55, but each edge's source
// row is read from the owner's x by NVLink (owner = src / Vl, row src % Vl), one pass over the ranks per edge tile;
// out f32 [Vl, D]: out[v] = sum_{dst[e] = v} x_{owner}[src[e] % Vl] (zeroed first).
PK_KERNEL void partitioned_gnn_pull(Sym<f32, 2> x, Tensor<i32, 1> src, Tensor<i32, 1> dst, Tensor<f32, 2> out) {
  index vl = x.rows();
  for (auto [v, n] : tiles(out.rows(), out.cols(), {32, 256})) store(out, zeros<f32, 32, 256>(), v, n);
  for (auto [e, n] : tiles(src.size(), out.cols(), {64, 128})) {
    auto s = load<64>(src, e);
    auto acc = zeros<f32, 64, 128>();
    for (auto p : range(0, world_size())) acc = acc + load_rows<64, 128>(x.on(p), where(s / vl == p, s % vl, -1), n);
    store_add_rows(out, acc, load<64>(dst, e), n);
  }
}

// 57. Data-parallel DLRM dense-gradient all-reduce with a pre-scaled mean (the bottom / top MLP weights): g Sym f32
// [R, C]; out Sym f32 [R, C] = (sum over ranks of g) / W. The division is a tile loop after the all-reduce (in place
// on out).
PK_KERNEL void dp_grad_allreduce_mean(Sym<f32, 2> g, Sym<f32, 2> out) {
  all_reduce(Sum, g, out);
  float inv = 1.0f / float(world_size());
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 256})) store(out, load<16, 256>(out, m, n) * inv, m, n);
}

// 58. Sequence-parallel jagged history features: each rank holds a row block of a jagged values tensor (rank r rows
// [r N, (r + 1) N) of the global [W N, D]) and per-row segment ids seg i32 [N] (global user ids 0..U-1); the pooled
// sum per user over every rank's rows: part Sym f32 [U, D] (zeroed, then scatter-added), all_reduce into
// users f32 [U, D] on every rank.
PK_KERNEL void sp_jagged_pool_allreduce(Tensor<bf16, 2> values, Tensor<i32, 1> seg, Sym<f32, 2> part,
                                        Sym<f32, 2> users) {
  for (auto [u, n] : tiles(part.rows(), part.cols(), {32, 256})) store(part, zeros<f32, 32, 256>(), u, n);
  for (auto [i, n] : tiles(values.rows(), values.cols(), {64, 128}))
    store_add_rows(part, cast<f32>(load<64, 128>(values, i, n)), load<64>(seg, i), n);
  all_reduce(Sum, part, users);
}

// 59. Top-k candidates gathered to one root for the final merge (retrieval serving with a coordinator rank):
// lv Sym f32 [Q, 8] and li Sym i32 [Q, 8] are each rank's local top 8 (global ids, largest first); gather(lv, gv,
// root) and gather(li, gi, root) fill gv f32 [W Q, 8], gi i32 [W Q, 8] on the root, rank j's lists at rows j Q ..;
// then (on every rank; meaningful on the root) tv f32 [Q, 8], ti i32 [Q, 8] = the 8 largest of query i's W lists
// and their ids, ties to the lower rank then the lower list position. W <= 16: query i's lists are the rows
// j Q + i of a [16, 8] tile gathered by index; 8 rounds each take the largest remaining value (the first by
// position r 8 + c among equals), record it and its id, and mask it out.
PK_KERNEL void topk_gather_to_root(Sym<f32, 2> lv, Sym<i32, 2> li, Tensor<f32, 2> gv, Tensor<i32, 2> gi,
                                   Tensor<f32, 2> tv, Tensor<i32, 2> ti, index root) {
  gather(lv, gv, root);
  gather(li, gi, root);
  index q = lv.rows();
  for (auto i : tiles(q, {1})) {
    auto r = cast<i32>(row_index<16, 1>(0));
    auto v = where(r < world_size(), load_rows<16, 8>(gv, r * q + i, 0), -1e30f);  // [16, 8]
    auto ids = cast<f32>(load_rows<16, 8>(gi, r * q + i, 0));
    auto p = row_index<16, 8>(0) * 8.0f + col_index<16, 8>(0);                   // position 0..127
    for (auto k : range(0, 8)) {
      auto m = row_max(transpose(row_max(v)));                                      // [1, 1]
      auto first = row_min(transpose(row_min(where(v == m, p, 1e9f))));            // [1, 1]
      auto hit = p == first;
      store(tv, m, i, k);
      store(ti, cast<i32>(row_sum(transpose(row_sum(where(hit, ids, 0.0f))))), i, k);
      v = where(hit, -1e30f, v);
    }
  }
}

// 60. Feature-parallel GNN layer with L2-normalised output (GraphSAGE's normalize=True): each rank holds a column
// shard of the node features, xs f32 [V, Dl]; src, dst i32 [E]; part Sym f32 [V, Dl] (zeroed, then
// part[v] = xs[v] + sum_{dst[e] = v} xs[src[e]]); all_gather(part, full, 1): full f32 [V, W Dl] on every rank;
// out f32 [V, W Dl]: out[v] = full[v] / max(||full[v]||_2, 1e-12). W Dl <= 1024.
PK_KERNEL void feature_parallel_sage_norm(Tensor<f32, 2> xs, Tensor<i32, 1> src, Tensor<i32, 1> dst, Sym<f32, 2> part,
                                          Tensor<f32, 2> full, Tensor<f32, 2> out) {
  for (auto [v, n] : tiles(part.rows(), part.cols(), {32, 128})) store(part, load<32, 128>(xs, v, n), v, n);
  for (auto [e, n] : tiles(src.size(), xs.cols(), {64, 128}))
    store_add_rows(part, load_rows<64, 128>(xs, load<64>(src, e), n), load<64>(dst, e), n);
  all_gather(part, full, 1);
  for (auto v : tiles(full.rows(), {8})) {
    auto t = load<8, 1024>(full, v, 0);
    store(out, t / max(sqrt(row_sum(t * t)), 1e-12f), v, 0);
  }
}

// 61. Model-parallel interaction MLP with the input features split over ranks (K-parallel first top-MLP layer):
// xk bf16 [B, Kl] this rank's feature slice; wk bf16 [N, Kl] the matching weight slice; part Scratch f32 [B, N] the
// partial product; reduce_scatter(Sum, part, out, 1): out f32 [B, N / W] on rank r = columns [r N/W, ..) of
// sum_ranks xk wk^T.
PK_KERNEL void kparallel_mlp_reduce_scatter_cols(Tensor<bf16, 2> xk, Tensor<bf16, 2> wk, Scratch<f32, 2> part,
                                                 Sym<f32, 2> out) {
  for (auto [m, n] : tiles(xk.rows(), wk.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, xk.cols(), 64)) acc = mma_t(load<128, 64>(xk, m, k), load<256, 64>(wk, n, k), acc);
    store(part, acc, m, n);
  }
  reduce_scatter(Sum, part, out, 1);
}

// 62. GCN symmetric degree normalisation from a CSR row pointer: rowptr i32 [V + 1]; dinv f32 [V]:
// dinv[v] = rsqrt(1 + rowptr[v + 1] - rowptr[v]) (in-degree with a self loop).
PK_KERNEL void gcn_degree_norm(Tensor<i32, 1> rowptr, Tensor<f32, 1> dinv) {
  for (auto v : tiles(dinv.size(), {1024}))
    store(dinv, rsqrt(cast<f32>(load<1024>(rowptr, v + 1) - load<1024>(rowptr, v)) + 1.0f), v);
}

// 63. COO to CSR by destination (a counting sort of the edges, as torch_sparse / PyG build a CSR): src, dst i32 [E];
// cnt i32 [V, 1] in-degree counts and fill i32 [V] per-node slot counters (workspaces zeroed here); rowptr i32
// [V + 1, 1] with V <= 4096; col i32 [E, 1]: rowptr[0] = 0, rowptr[v + 1] = sum_{u <= v} deg(u); each edge e gets a
// distinct slot rowptr[dst[e]] + k_e in its node's range (in no fixed order among a node's edges) and
// col[slot] = src[e]. Phases: zero, count, scan (one tile), claim and scatter.
PK_KERNEL void coo_to_csr(Tensor<i32, 1> src, Tensor<i32, 1> dst, Tensor<i32, 2> cnt, Tensor<i32, 1> fill,
                          Tensor<i32, 2> rowptr, Tensor<i32, 2> col) {
  for (auto v : tiles(cnt.rows(), {256})) {
    store(cnt, zeros<i32, 256, 1>(), v, 0);
    store(fill, zeros<i32, 256>(), v);
  }
  for (auto e : tiles(dst.size(), {256})) store_add_rows(cnt, zeros<i32, 256, 1>() + 1, load<256>(dst, e), 0);
  for (auto z : tiles(1, {1})) {
    store(rowptr, zeros<i32, 1, 1>(), 0, 0);
    store(rowptr, reshape<4096, 1>(cumsum(reshape<4096>(load<4096, 1>(cnt, 0, 0)))), 1, 0);
  }
  for (auto e : tiles(dst.size(), {256})) {
    auto d = load<256>(dst, e);
    auto slot = load_rows<256, 1>(rowptr, d, 0) + reshape<256, 1>(claim(fill, d));
    store_rows(col, reshape<256, 1>(load<256>(src, e)), slot, 0);
  }
}

// 64. Uniform negative sampling and scoring (sampled softmax's negatives, two-tower training): u bf16 [B, D]
// (D <= 128); items bf16 [N, D]; neg i32 [B, K] and score f32 [B, K]: for each (b, k) an item id
// neg[b, k] = min(floor(uniform(seed; b, k) N), N - 1) (the language's hash of the seed and the coordinates) and
// score[b, k] = u[b] . items[neg[b, k]].
PK_KERNEL void negative_sampling_scores(Tensor<bf16, 2> u, Tensor<bf16, 2> items, Tensor<i32, 2> neg,
                                        Tensor<f32, 2> score, index seed) {
  float n = items.rows();
  for (auto b : tiles(u.rows(), {16})) {
    auto ub = cast<f32>(load<16, 128>(u, b, 0));
    for (auto k : range(0, neg.cols())) {
      auto id = min(cast<i32>(uniform<16, 1>(seed, b, k) * n), items.rows() - 1);
      store(neg, id, b, k);
      store(score, row_sum(ub * cast<f32>(load_rows<16, 128>(items, id, 0))), b, k);
    }
  }
}

// 65. Gather-GEMM-scatter (a relational / edge-typed GNN layer, R-GCN's per-relation message W_r x_src, one relation):
// x bf16 [V, K]; w bf16 [N, K] (the relation's weight, torch layout); src, dst i32 [E]; out f32 [V, N] (zeroed here):
// out[dst[e], :] += x[src[e], :] W^T. The source rows are gathered straight into the A operand; each edge tile's
// product is scatter-added into its destinations.
PK_KERNEL void gather_gemm_scatter(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<i32, 1> src, Tensor<i32, 1> dst,
                                   Tensor<f32, 2> out) {
  for (auto [v, n] : tiles(out.rows(), out.cols(), {32, 256})) store(out, zeros<f32, 32, 256>(), v, n);
  for (auto [e, n] : tiles(src.size(), w.rows(), {64, 64})) {
    auto s = load<64>(src, e);
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load_rows<64, 64>(x, s, k), load<64, 64>(w, n, k), acc);
    store_add_rows(out, acc, load<64>(dst, e), n);
  }
}

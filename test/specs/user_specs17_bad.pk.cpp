// The seventeenth user-written spec set, part (b): kernels pkc must refuse (races between blocks or
// ranks, out-of-range uses, misuse), each with the refusal checked in test/Compile/user_specs17.test,
// and kernels that exhibit a finding of test/specs/specs17_findings.md. Kernels whose error is a Clang
// error sit behind -D PK_CXX_<ID> (a Clang error anywhere fails every kernel of a file).
#include <pk/spec.h>
using namespace pk;

// R1: pipeline send to both neighbours at the same tile: at world size 2 next_rank() == prev_rank(),
// so both stores land in one copy of recv at the same elements.
PK_KERNEL void r1_send_both_neighbours(Tensor<bf16, 2> act, Sym<bf16, 2> recv) {
  for (auto [m, n] : tiles(act.rows(), act.cols(), {32, 128})) {
    auto t = load<32, 128>(act, m, n);
    store(recv.on(next_rank()), t, m, n);
    store(recv.on(prev_rank()), t, m, n);
  }
}

// R2: a column reduction written as a plain store of each row block's partial sums at row 0: every
// row tile stores into the same [1, N] elements (should be store_add_rows or a range loop over rows).
PK_KERNEL void r2_colsum_plain_store(Tensor<f32, 2> dy, Tensor<f32, 2> db) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {16, 128}))
    store(db, transpose(row_sum(transpose(load<16, 128>(dy, m, n)))), 0, n);
}

// R3: a "one-pass" prefix sum that reads the previous tile's result in the loop that writes it.
PK_KERNEL void r3_scan_reads_prev_tile(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {1024}))
    store(y, cumsum(load<1024>(x, i)) + load<1>(y, i - 1), i);
}

// R4: a pipeline stage that writes its own send buffer and pulls the previous rank's buffer in the
// same phase: the previous rank's blocks may still be writing the tile being pulled.
PK_KERNEL void r4_pull_while_peer_writes(Tensor<f32, 2> x, Sym<f32, 2> buf, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(buf, load<16, 128>(x, m, n), m, n);
    store(y, load<16, 128>(buf.on(prev_rank()), m, n), m, n);
  }
}

// R5: every rank adds its loss-scale overflow flag into rank 0's copy and rank 0 reads it in the same
// phase.
PK_KERNEL void r5_flag_add_and_read_root(Tensor<f32, 1> g, Sym<f32, 1> flag, Tensor<f32, 1> out) {
  for (auto i : tiles(g.size(), {256})) {
    store_add(flag.on(0), load<256>(g, i), i);
    store(out, load<256>(flag, i), i);
  }
}

// R6: a constant step of 0 in a range loop over a vocabulary.
PK_KERNEL void r6_range_step_zero(Tensor<f32, 2> logits, Tensor<f32, 1> mx) {
  for (auto b : tiles(logits.rows(), {8})) {
    auto best = zeros<f32, 8, 1>() - 3.0e38f;
    for (auto v : range(0, logits.cols(), 0)) best = max(best, row_max(load<8, 256>(logits, b, v)));
    store(mx, best, b);
  }
}

// R7: a tile of 2^31 elements or more.
PK_KERNEL void r7_tile_too_large(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {65536, 65536})) store(y, load<65536, 65536>(x, m, n), m, n);
}

// R8: a histogram with more bins than the shared-memory stage holds.
PK_KERNEL void r8_histogram_too_many_bins(Tensor<i32, 1> ids, Tensor<i32, 1> counts) {
  for (auto t : tiles(1, {1})) store(counts, histogram<65536>(load<4096>(ids, 0)), 0);
}

// R9: mma with mismatched K extents (A is 64 x 32, B is 16 x 64).
PK_KERNEL void r9_mma_k_mismatch(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<16, 64>(b, k, n), acc);
    store(c, acc, m, n);
  }
}

// R10: an embedding backward that zeroes the gradient table and scatter-adds into it in the same loop
// (the zeroing of one tile races with other tiles' row adds).
PK_KERNEL void r10_zero_and_add_same_loop(Tensor<i32, 1> ids, Tensor<f32, 2> dy, Tensor<f32, 2> dtable) {
  for (auto [t, n] : tiles(dy.rows(), dy.cols(), {32, 128})) {
    store(dtable, zeros<f32, 32, 128>(), t, n);
    store_add_rows(dtable, load<32, 128>(dy, t, n), load<32>(ids, t), n);
  }
}

// R11: a paged-cache append whose row indices are a float tile (a Clang overload error).
#ifdef PK_CXX_R11
PK_KERNEL void r11_rows_by_float_index(Tensor<bf16, 2> knew, Tensor<f32, 1> slot, Tensor<bf16, 2> cache) {
  for (auto [t, n] : tiles(knew.rows(), knew.cols(), {16, 128}))
    store_rows(cache, load<16, 128>(knew, t, n), load<16>(slot, t), n);
}
#endif

// R12: a pipeline stage that reads the peer's activation buffer chosen by a run-time scalar read
// (stage id from a tensor) in a communicating kernel.
PK_KERNEL void r12_peer_from_scalar_read(Tensor<i32, 1> stage, Sym<f32, 2> act, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 128}))
    store(y, load<16, 128>(act.on(stage.at(0)), m, n), m, n);
}

// G1 (finding: cannot express a local atomic tile add): dbias as adds of each row block's column sums
// into a local [N] tensor. store_add takes only a peer's copy (y.on(p)); the legal forms are
// store_add_rows with an all-zero index tile (layernorm_bwd_dw_db_atomic) or store_add(y.on(rank())) of
// a Sym. (Since the finding: store_add into a local 2-D tensor lowers; into this 1-D one it is refused
// with a message that says to view it as [1, N].)
#ifdef PK_CXX_G1
PK_KERNEL void g1_local_store_add(Tensor<f32, 2> dy, Tensor<f32, 1> db) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {16, 128}))
    store_add(db, row_sum(transpose(load<16, 128>(dy, m, n))), n);
}
#endif

// G2 (finding: no scan along a dimension of a 2-D tile): top-p (nucleus) needs per-row running sums
// of sorted probabilities; cumsum takes 1-D tiles only (and there is no sort). (Since the finding,
// cumsum sums along each row of a 2-D tile: this compiles; there is still no sort.)
#ifdef PK_CXX_G2
PK_KERNEL void g2_row_cumsum(Tensor<f32, 2> probs, Tensor<f32, 2> csum) {
  for (auto b : tiles(probs.rows(), {8})) store(csum, cumsum(load<8, 512>(probs, b, 0)), b, 0);
}
#endif

// G3 (finding: no index tiles above 2-D): 3-D position ids need row_index / col_index of a 3-D tile.
#ifdef PK_CXX_G3
PK_KERNEL void g3_iota_3d(Tensor<i32, 3> pos) {
  for (auto [b, s, d] : tiles(pos.dim(0), pos.dim(1), pos.dim(2), {2, 16, 8}))
    store(pos, cast<i32>(row_index<2, 16, 8>(s)), b, s, d);
}
#endif

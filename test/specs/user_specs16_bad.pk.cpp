// The sixteenth user-written spec set, part (b): kernels that pkc must refuse (races, out-of-range
// uses, misuse), plus kernels that exhibit a finding of test/specs/specs16_findings.md (F*: a legal
// spec refused or a question of lowering). Each is compiled alone: pkc FILE --kernel NAME. Kernels whose error is a C++ (Clang) error sit
// behind #ifdef PK_CXX_<ID> (pkc -D PK_CXX_<ID>): a Clang error anywhere in a file fails every kernel of it.
#include <pk/spec.h>
using namespace pk;

// ---------------------------------------------------------------- findings (legal specs)


// F1b: the 2-D form: in-place SwiGLU-style update of the gate half from the up half of one [M, 2F]
// buffer (x[:, :F] *= silu-free scale of x[:, F:]): reads at (m, n) and (m, F + n), writes at (m, n).
// The iterations' elements are disjoint (the write at (m, n) is read only by its own iteration), so
// only F1's rule refuses it: the read at (m, F + n) is "at another tile". Here it is a genuine
// question when F is not a multiple of 128 (the tile at n = F - 128 + r reads columns past F that the
// next tile along n writes), so this one is refused rightly; it is kept beside F1 to show the rule
// cannot simply drop untiled offsets in a tiled dimension.
PK_KERNEL void f1b_gate_times_up_inplace(Tensor<f32, 2> x, index F) {
  for (auto [m, n] : tiles(x.rows(), F, {16, 128}))
    store(x, load<16, 128>(x, m, n) * load<16, 128>(x, m, F + n), m, n);
}

// F2: a scalar read of a symmetric tensor (the result of a broadcast) is a C++ error, "no member named
// 'at' in 'pk::Sym<pk::f32, 1>'" (language.md: "one element of a local tensor"); the message does not
// say to use load<1, 1>(sym, 0) or a local Tensor output. (Since fixed: spec.h's Sym::at is a
// static_assert that says so.)
#ifdef PK_CXX_F2
PK_KERNEL void f2_sym_at(Sym<f32, 1> sc, Sym<f32, 1> scb, Tensor<f32, 2> x, Tensor<f32, 2> y, index root) {
  broadcast(sc, scb, root);
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 128})) store(y, load<8, 128>(x, m, n) * scb.at(0), m, n);
}
#endif

// F3: an M x 1 column (one scale per row) stored into a 3-D [B, H, S] scale tensor at [b, h, t]: the
// tile of the trailing dimensions puts the column's 32 values along H (dimension 1), not along S.
// A user writing one scale per (b, h, t) row gets 32 heads written per tile. The write-overlap check
// refuses it (h steps by 1), which is right, but the message speaks of overlapping tiles only.
PK_KERNEL void f3_col_into_3d(Tensor<bf16, 4> kv, Tensor<f8e4m3, 4> q, Tensor<f32, 3> s) {
  for (auto [b, h, t] : tiles(kv.dim(0), kv.dim(1), kv.dim(2), {1, 1, 32})) {
    auto x = cast<f32>(load<32, 64>(kv, b, h, t, 0));
    auto amax = max(row_max(abs(x)), 1e-12f);
    store(q, cast<f8e4m3>(x * (448.0f / amax)), b, h, t, 0);
    store(s, amax * (1.0f / 448.0f), b, h, t);
  }
}

// ---------------------------------------------------------------- must be refused

// R1: ring shift in place: each rank overwrites the next rank's x while that rank may still be
// reading its own x in the same loop.
PK_KERNEL void r1_ring_shift_in_place(Sym<bf16, 2> x) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(x.on(next_rank()), load<16, 128>(x, m, n), m, n);
}

// R2: every rank stores the same tile of rank 0's y (write-write race between ranks).
PK_KERNEL void r2_all_ranks_store_root(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y.on(0), load<16, 64>(x, m, n), m, n);
}

// R3: mma on f32 operands (the docs: bf16 / f16 / fp8 in).
PK_KERNEL void r3_mma_f32_operands(Tensor<f32, 2> a, Tensor<f32, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32)) acc = mma(load<64, 32>(a, m, k), load<32, 64>(b, k, n), acc);
    store(c, acc, m, n);
  }
}

// R4: a collective inside a tile loop.
PK_KERNEL void r4_collective_in_loop(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    all_reduce(Sum, x, y);
    store(x, load<16, 64>(y, m, 0), m, 0);
  }
}

// R5: fp8 reduce-scatter (fp8 tensors do not reduce).
PK_KERNEL void r5_fp8_reduce_scatter(Sym<f8e4m3, 2> x, Sym<f8e4m3, 2> y) { reduce_scatter(Sum, x, y); }

// R6: all-gather along a dimension the tensors do not have.
PK_KERNEL void r6_all_gather_dim2_of_2d(Sym<f32, 2> x, Sym<f32, 2> y) { all_gather(x, y, 2); }

// R7: a tile loop that reads the row below its own (a stencil in place): a race between iterations.
PK_KERNEL void r7_stencil_in_place(Tensor<f32, 2> x) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(x, (load<16, 64>(x, m, n) + load<16, 64>(x, m + 1, n)) * 0.5f, m, n);
}

// R8: a store of a tile twice as tall as the loop's row step (overlap between iterations).
PK_KERNEL void r8_tile_taller_than_step(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<32, 64>(x, m, n), m, n);
}

// R9: a constant range step of 0.
PK_KERNEL void r9_range_step_zero(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 1>();
    for (auto n : range(0, x.cols(), 0)) acc = acc + row_sum(load<16, 64>(x, m, n));
    store(y, acc, m, 0);
  }
}

// R10: a peer index from an integer tensor read in a communicating kernel.
PK_KERNEL void r10_peer_from_tensor(Tensor<i32, 1> dest, Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y.on(dest.at(0)), load<16, 64>(x, m, n), m, n);
}

// R11: a store of a bf16 tile into an f32 tensor (cast first).
PK_KERNEL void r11_store_wrong_type(Tensor<bf16, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n), m, n);
}

// R12: a histogram of a float tile.
#ifdef PK_CXX_R12
PK_KERNEL void r12_histogram_of_floats(Tensor<f32, 1> x, Tensor<i32, 1> h) {
  for (auto i : tiles(x.size(), {256})) store(h, histogram<64>(load<256>(x, i)), 0);
}
#endif

// R13: a load with more indices than the tensor has dimensions.
PK_KERNEL void r13_too_many_indices(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<16, 64>(x, m, n, 0), m, n);
}

// R14: a tile step of 0.
PK_KERNEL void r14_tile_step_zero(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {0})) store(y, load<256>(x, i), i);
}

// R15: math on an integer tile (cast first).
#ifdef PK_CXX_R15
PK_KERNEL void r15_exp_of_ints(Tensor<i32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, exp(load<256>(x, i)), i);
}
#endif

// R16: a tile of 2^31 elements or more.
PK_KERNEL void r16_huge_tile(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {65536, 65536})) store(y, load<65536, 65536>(x, m, n), m, n);
}

// R17: a scatter into a peer beside a plain store into the same tensor of that peer (row moves race with
// any other access).
PK_KERNEL void r17_rows_beside_store(Tensor<f32, 2> x, Tensor<i32, 1> slot, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    store_rows(y.on(next_rank()), load<16, 64>(x, m, n), load<16>(slot, m), n);
    store(y.on(next_rank()), load<16, 64>(x, m, n), m, n);
  }
}

// R18: reading a symmetric tensor that a peer pushes into in the same loop (no barrier between).
PK_KERNEL void r18_read_while_peer_pushes(Sym<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> z) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    store(y.on(next_rank()), load<16, 64>(x, m, n), m, n);
    store(z, load<16, 64>(y, m, n), m, n);
  }
}

// R19: transposing a 1-D tile.
#ifdef PK_CXX_R19
PK_KERNEL void r19_transpose_1d(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, transpose(load<256>(x, i)), i);
}
#endif

// R20: claim on a float counter.
#ifdef PK_CXX_R20
PK_KERNEL void r20_claim_float_counter(Tensor<f32, 1> fill, Tensor<i32, 1> e, Tensor<i32, 1> pos) {
  for (auto i : tiles(e.size(), {256})) store(pos, claim(fill, load<256>(e, i)), i);
}
#endif

// The eighteenth user-written spec set, part (b): kernels pkc must refuse (races between ranks and
// between tiles, out-of-range dimensions, type misuse), each with the refusal checked in
// test/Compile/user_specs18.test, and kernels that exhibit a finding of test/specs/specs18_findings.md.
// Kernels whose error is a Clang error sit behind -D PK_CXX_<ID> (a Clang error anywhere fails every
// kernel of a file).
#include <pk/spec.h>
using namespace pk;

// R1: a ring step that keeps its own copy and sends the next rank one, at the same tile: rank r writes
// its own y while rank r - 1 writes the same tile of it.
PK_KERNEL void r1_ring_own_and_next(Tensor<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128})) {
    auto t = load<32, 128>(x, m, n);
    store(y, t, m, n);
    store(y.on(next_rank()), t, m, n);
  }
}

// R2: every rank zeroes its accumulator and adds into rank 0's in the same phase.
PK_KERNEL void r2_zero_and_add_into_root(Tensor<f32, 2> x, Sym<f32, 2> acc) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    store(acc, zeros<f32, 16, 128>(), m, n);
    store_add(acc.on(0), load<16, 128>(x, m, n), m, n);
  }
}

// R3: a bias gradient added into a local [1, N] tensor (store_add) and read back in the same loop for a
// centring step: other row tiles are still adding into it.
PK_KERNEL void r3_read_while_adding(Tensor<f32, 2> dy, Tensor<f32, 2> db, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {16, 128})) {
    store_add(db, transpose(row_sum(transpose(load<16, 128>(dy, m, n)))), 0, n);
    store(out, load<16, 128>(dy, m, n) - load<1, 128>(db, 0, n), m, n);
  }
}

// R4: attention's log-sum-exp (a 64 x 1 column) stored into a 2-D [H, S] tensor at [h, m]: the column
// lies along dimension 0 (heads h .. h + 63), so consecutive heads overlap.
PK_KERNEL void r4_lse_column_into_2d(Tensor<f32, 3> s, Tensor<f32, 2> lse) {
  for (auto [h, m] : tiles(s.dim(0), s.dim(1), {1, 64})) {
    auto t = load<64, 128>(s, h, m, 0);
    store(lse, row_max(t), h, m);
  }
}

// R5: a Gram matrix symmetrised in place: reads c at the transposed tile another iteration writes.
PK_KERNEL void r5_symmetrize_inplace(Tensor<bf16, 2> a, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), a.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(a, n, k), acc);
    store(c, acc + transpose(load<64, 64>(c, n, m)), m, n);
  }
}

// R6: an in-place GEMM epilogue reading the output's next column block.
PK_KERNEL void r6_gemm_residual_next_block(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, acc + load<128, 128>(c, m, n + 128), m, n);
  }
}

// R7: split-K written with a plain store instead of store_add, over a constant K of 1024: every K chunk
// writes the same output tile.
PK_KERNEL void r7_splitk_plain_store(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n, kc] : tiles(a.rows(), b.rows(), 1024, {64, 64, 256})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(kc, kc + 256, 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// R8: the same split-K over a run-time K: compiles, with a launch check that refuses more than one
// K chunk (finding 1 of set 17, still a launch-time refusal).
PK_KERNEL void r8_splitk_plain_store_runtime(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n, kc] : tiles(a.rows(), b.rows(), a.cols(), {64, 64, 256})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(kc, min(kc + 256, a.cols()), 64))
      acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// R9: double-buffered row blocks by parity: tiles m and m + 128 store into the same rows.
PK_KERNEL void r9_parity_blocks_collide(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 64})) store(y, load<64, 64>(x, m, n), (m / 64) % 2 * 64, n);
}

// R10: an f16 activation times a bf16 weight (mixed 16-bit operand types).
PK_KERNEL void r10_mma_mixed_types(Tensor<f16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<64, 64>(a, m, k), load<64, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// R11: the f32 accumulator stored into a bf16 output without a cast.
PK_KERNEL void r11_store_f32_into_bf16(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<128, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// R12: a reshape that is a transpose in disguise ([64, 2] to [2, 64]).
PK_KERNEL void r12_reshape_not_unit_dims(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {64, 2})) store(y, reshape<2, 64>(load<64, 2>(x, m, n)), m, n);
}

// R13: an all-gather along dimension 2 of a 2-D tensor.
PK_KERNEL void r13_all_gather_dim_out_of_range(Sym<bf16, 2> x, Sym<bf16, 2> y) { all_gather(x, y, 2); }

// R14: a column all-gather inside the tile loop that produces its input.
PK_KERNEL void r14_collective_in_tile_loop(Tensor<f32, 2> x, Sym<f32, 2> xs, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    store(xs, load<16, 64>(x, m, n), m, n);
    all_gather(xs, y, 1);
  }
}

// R15: a tile with a zero extent.
PK_KERNEL void r15_zero_extent_tile(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) store(y, load<0, 64>(x, m, n), m, n);
}

// R16 (finding 3, message): a bias gradient of 3-D activations added into a local 3-D tensor. Refused as
// it should be (store_add into a local tensor takes a 2-D one), but the message tells the user to view
// "a 1-D one as [1, N]".
PK_KERNEL void r16_store_add_local_3d(Tensor<f32, 3> dy, Tensor<f32, 3> acc) {
  for (auto [b, s, n] : tiles(dy.dim(0), dy.dim(1), dy.dim(2), {1, 16, 128}))
    store_add(acc, load<16, 128>(dy, b, s, n), b, s, n);
}

// R17: a ring shift out of a local Tensor (not a Sym): a Clang error ("no member named 'on'") that does
// not say to declare the destination Sym (finding 4, message).
#ifdef PK_CXX_R17
PK_KERNEL void r17_on_of_local_tensor(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) store(y.on(next_rank()), load<16, 128>(x, m, n), m, n);
}
#endif

// R18: an integer mask (from i32 index math) multiplied by a float mask (a comparison of f32 tiles):
// a Clang error about Broadcasted<Tile<...>> operands that does not say to cast one of them
// (finding 5, message).
#ifdef PK_CXX_R18
PK_KERNEL void r18_int_mask_times_float_mask(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 32>(x, m, 0);
    auto odd = cast<i32>(col_index<8, 32>(0)) % 2 == 1;
    store(y, where(odd * (t > 0.0f), t, 0.0f), m, 0);
  }
}
#endif

// R19: exp of an integer tile (the language's rule: math is for float tiles; cast first).
#ifdef PK_CXX_R19
PK_KERNEL void r19_exp_of_i64(Tensor<i64, 2> ids, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(ids.rows(), ids.cols(), {16, 64})) store(y, exp(load<16, 64>(ids, m, n)), m, n);
}
#endif

// R20 (finding 6, language gap): a running sum along the last dimension of a 3-D tile ([B, S, V] chunks):
// cumsum takes 1-D and 2-D tiles only.
#ifdef PK_CXX_R20
PK_KERNEL void r20_cumsum_3d_tile(Tensor<f32, 3> p, Tensor<f32, 3> c) {
  for (auto [b, s] : tiles(p.dim(0), p.dim(1), {2, 8})) store(c, cumsum(load<2, 8, 256>(p, b, s, 0)), b, s, 0);
}
#endif

// R21 (finding 2, legal spec refused, wrong message): a gradient accumulated into a local f32 buffer with
// store_add and read back at the very tile it added (each tile adds only its own elements). The
// language allows reading a tensor at the tile a loop writes; pk-check-tile-races treats the add (a row
// scatter by index) as a write elsewhere and says the loop "reads a tensor at other tiles than it writes".
PK_KERNEL void r21_add_then_read_same_tile(Tensor<f32, 2> g, Tensor<f32, 2> acc, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 128})) {
    store_add(acc, load<16, 128>(g, m, n), m, n);
    store(y, load<16, 128>(acc, m, n) * 2.0f, m, n);
  }
}

// W1 (finding 1: store and store_add disagree at the last tile): the backward pass of a two-tap causal
// conv1d (y[t] = w0 x[t] + w1 x[t - 1]), dx[t] += w0 dy[t] + w1 dy[t + 1], accumulated into a local
// gradient buffer with store_add. dy[T] reads as zero, so dx[T - 1] should get w0 dy[T - 1]; but the
// look-ahead load's padding row makes the sum's row T - 1 "computed from padding", and the add
// (store_add_rows underneath) moves it nowhere: dx[T - 1] gets nothing (and when T % 16 == 1 the last
// tile adds nothing at all, its look-ahead load lying wholly past the end). The same expression written
// store(dx, load(dx) + ...) adds it. Compiles; the GPU reproducer is user_specs18_jit_test's
// PK_SPECS18_W1 case.
PK_KERNEL void w1_conv1d_bwd_store_add(Tensor<f32, 2> dy, Tensor<f32, 2> w, Tensor<f32, 2> dx) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {16, 128}))
    store_add(dx, load<16, 128>(dy, m, n) * load<1, 128>(w, 0, n) + load<16, 128>(dy, m + 1, n) * load<1, 128>(w, 1, n),
              m, n);
}

// W1's form with a plain store of dx + the same sum (in place at the tile): row T - 1 gets w0 dy[T - 1].
PK_KERNEL void w1_conv1d_bwd_store(Tensor<f32, 2> dy, Tensor<f32, 2> w, Tensor<f32, 2> dx) {
  for (auto [m, n] : tiles(dy.rows(), dy.cols(), {16, 128}))
    store(dx, load<16, 128>(dx, m, n) + load<16, 128>(dy, m, n) * load<1, 128>(w, 0, n) +
                  load<16, 128>(dy, m + 1, n) * load<1, 128>(w, 1, n),
          m, n);
}

// The twentieth user-written spec set, part (b): kernels a user porting whole layers and serving kernels
// could plausibly write that pkc must refuse (or that it refuses although they look legal: noted), each
// with the refusal checked in test/Compile/user_specs20.test. The expected key words of each error are in
// the comment above the kernel. Kernels whose error is a Clang error sit behind -D PK_CXX_<ID> (a Clang
// error anywhere fails every kernel of a file).
#include <pk/spec.h>
using namespace pk;

// B2: rotary on [T, H, 128] with a 2-D tile of the trailing dimensions while the loop steps one head: the
// [16, 64] tile at (t, h, 0) covers 16 heads of token t, so neighbouring iterations store the same elements.
// Expected: "this store writes elements that the same store writes at another tile of the loop".
PK_KERNEL void b2_rope_trailing_tile_one_head_step(Tensor<bf16, 3> x, Tensor<bf16, 3> y) {
  for (auto [t, h] : tiles(x.dim(0), x.dim(1), {16, 1}))
    store(y, load<16, 64>(x, t, h, 0), t, h, 0);
}

// B3: an all-gather of the normalised rows called inside the tile loop that computes them.
// Expected: "collective" "inside a tile loop" (call it after the loop).
PK_KERNEL void b3_all_gather_inside_tile_loop(Tensor<f32, 2> x, Sym<f32, 2> yl, Sym<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 1024>(x, m, 0);
    store(yl, t * rsqrt(row_sum(t * t) * (1.0f / 1024.0f) + 1e-6f), m, 0);
    all_gather(yl, y);
  }
}

// B4: fp8 gradients reduce-scattered directly (fp8 tensors do not reduce).
// Expected: "fp8" (reduce in f32 or bf16).
PK_KERNEL void b4_reduce_scatter_fp8(Sym<f8e4m3, 2> g, Sym<f8e4m3, 2> out) { reduce_scatter(Sum, g, out); }

// B5: an MLP GEMM on f32 operands (the user forgot to keep the activations in bf16).
// Expected: "mma: a and b must both be bf16, both f16, or both fp8".
PK_KERNEL void b5_mma_f32_operands(Tensor<f32, 2> x, Tensor<f32, 2> w, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 32)) acc = mma_t(load<64, 32>(x, m, k), load<64, 32>(w, n, k), acc);
    store(y, acc, m, n);
  }
}

// B6: a ring shift whose loop also reads this rank's own copy of the ring buffer, which the previous rank
// is writing into at the same time.
// Expected: "race" (the own copy read while the previous rank writes it).
PK_KERNEL void b6_ring_shift_reads_own_ring_copy(Sym<f32, 2> y, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 256})) {
    auto t = load<16, 256>(y, m, n);
    store(y.on(next_rank()), t * 2.0f, m, n);
    store(out, t, m, n);
  }
}

// B7: an all-gather by stores into peers at rank() * x.rows() + m: with 16-row tiles and x.rows() not a
// multiple of 16, rank r's last tile overlaps rank r + 1's first rows (language.md: scatter the rows or
// start the blocks whole tiles apart).
// Expected: "race" naming the overlapping stores.
PK_KERNEL void b7_gather_blocks_overlap(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    auto t = load<16, 256>(x, m, n);
    for (auto p : range(0, world_size())) store(y.on(p), t, rank() * x.rows() + m, n);
  }
}

// B8: a softmax of wide rows in place whose second pass rewrites the row with wider tiles than the first
// pass read (language.md: the read and written tiles must have one shape).
// Expected: "reads a tensor at other tiles than it writes" or a read/write shape error at the read.
PK_KERNEL void b8_inplace_two_pass_shapes_differ(Tensor<f32, 2> x) {
  for (auto m : tiles(x.rows(), {8})) {
    auto l = zeros<f32, 8, 1>();
    for (auto n : range(0, x.cols(), 512)) l = l + row_sum(exp(load<8, 512>(x, m, n)));
    for (auto n : range(0, x.cols(), 1024)) store(x, exp(load<8, 1024>(x, m, n)) / l, m, n);
  }
}

// B9: column sums of a [32, C] tensor with a constant row extent of 64 (two row tiles), each storing (not
// adding) its partial sums at row 0.
// Expected: a store that ignores the loop's row dimension ("store_add" to sum across tiles).
PK_KERNEL void b9_colsum_store_not_add(Tensor<f32, 2> x, Tensor<f32, 2> csum) {
  for (auto [m, n] : tiles(64, x.cols(), {32, 256}))
    store(csum, transpose(row_sum(transpose(load<32, 256>(x, m, n)))), 0, n);
}

// B10: a KV-cache walk with a step of 0.
// Expected: "step" (a constant step of 0 or less).
PK_KERNEL void b10_range_step_zero(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 64>();
    for (auto n : range(0, x.cols(), 0)) acc = acc + load<16, 64>(x, m, n);
    store(y, acc, m, 0);
  }
}

// B11: expert-parallel routing that picks the peer from a scalar read of a device tensor (the destination
// rank of this block), in a kernel that communicates.
// Expected: "cannot choose a peer".
PK_KERNEL void b11_peer_from_scalar_read(Tensor<f32, 2> x, Tensor<i32, 1> dst, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256}))
    store(y.on(dst.at(0)), load<16, 256>(x, m, n), m, n);
}

// B12: optimizer steps as a host loop whose trip count is read from device memory.
// Expected: an error at the loop: the bound "device memory" / must be known on the host.
PK_KERNEL void b12_host_loop_bound_from_device(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<i32, 1> steps) {
  for (auto s : range(0, steps.at(0), 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.dim(0), {256})) store(x, load<256>(y, i) * 0.5f, i);
  }
}

// B13: an fp32 update stored into bf16 weights without a cast.
// Expected: "the tile's type must be the tensor's" (cast first).
PK_KERNEL void b13_store_f32_into_bf16(Tensor<bf16, 2> w, Tensor<f32, 2> g, float lr) {
  for (auto [m, n] : tiles(w.rows(), w.cols(), {16, 256}))
    store(w, cast<f32>(load<16, 256>(w, m, n)) - load<16, 256>(g, m, n) * lr, m, n);
}

// B14: a paged gather of 4096 slots at once (load_rows takes at most 2048 rows).
// Expected: "2048 rows".
PK_KERNEL void b14_load_rows_too_many(Tensor<bf16, 2> cache, Tensor<i32, 1> slots, Tensor<bf16, 2> out) {
  for (auto i : tiles(out.rows(), {4096})) store(out, load_rows<4096, 64>(cache, load<4096>(slots, i), 0), i, 0);
}

// B15: an all-reduce of a tensor the kernel never wrote, in place, then a read of another rank's copy of
// the output in the same phase as a peer store into it (a vocab-parallel argmax exchange written wrong: the
// candidates are pushed to the next rank and read back from the previous rank's copy in one loop).
// Expected: "race".
PK_KERNEL void b15_push_and_pull_one_loop(Tensor<f32, 2> v, Sym<f32, 2> cand, Tensor<f32, 2> out) {
  for (auto t : tiles(v.rows(), {16})) {
    store(cand.on(next_rank()), load<16, 8>(v, t, 0), t, 0);
    store(out, load<16, 8>(cand.on(prev_rank()), t, 0), t, 0);
  }
}

// B16: a GEMM on the general path (a row reduction of the accumulator keeps it off the template) whose
// tile has M + N above 4096.
// Expected: "M + N" (at most 4096).
PK_KERNEL void b16_general_mma_too_wide(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> rs) {
  for (auto m : tiles(a.rows(), {128})) {
    auto acc = zeros<f32, 128, 4096>();
    for (auto k : range(0, a.cols(), 32)) acc = mma_t(load<128, 32>(a, m, k), load<4096, 32>(b, 0, k), acc);
    store(rs, row_sum(acc), m, 0);
  }
}

// B17 (-D PK_CXX_B17): paged append with positions as a float tile (row_index not cast to an integer type).
// Expected: a static assertion of pk/spec.h, "rows move by an integer index tile (i32 or i64): cast it first".
#ifdef PK_CXX_B17
PK_KERNEL void b17_store_rows_float_index(Tensor<bf16, 2> key, Tensor<bf16, 2> cache, index base) {
  for (auto t : tiles(key.rows(), {16})) store_rows(cache, load<16, 128>(key, t, 0), row_index<16, 1>(t), 0);
}
#endif

// B18 (-D PK_CXX_B18): a token's KV row appended into a 1-D cache (store_rows takes 2-D tensors).
// Expected: a static assertion of pk/spec.h, "move rows of a 2-D tensor: declare a [N] tensor as [N, 1]".
#ifdef PK_CXX_B18
PK_KERNEL void b18_store_rows_1d(Tensor<f32, 1> v, Tensor<i32, 1> slots, Tensor<f32, 1> cache) {
  for (auto t : tiles(v.size(), {16})) store_rows(cache, load<16>(v, t), load<16>(slots, t), 0);
}
#endif

// B19 (-D PK_CXX_B19): the accepted-token count as a row sum of an i32 mask (reduce cast<f32> instead).
// Expected: "row_sum / row_max / row_min reduce float tiles".
#ifdef PK_CXX_B19
PK_KERNEL void b19_row_sum_of_i32(Tensor<i32, 2> draft, Tensor<i32, 2> target, Tensor<i32, 2> n) {
  for (auto b : tiles(draft.rows(), {16}))
    store(n, row_sum(cast<i32>(cumsum(cast<i32>(load<16, 16>(draft, b, 0) != load<16, 16>(target, b, 0))) == 0)), b, 0);
}
#endif

// B20 (-D PK_CXX_B20): a scalar read of a symmetric tensor (the global norm read with .at()).
// Expected: "a symmetric tensor has no .at()".
#ifdef PK_CXX_B20
PK_KERNEL void b20_sym_at(Tensor<f32, 2> g, Sym<f32, 2> tot, float max_norm) {
  for (auto [m, n] : tiles(g.rows(), g.cols(), {16, 256}))
    store(g, load<16, 256>(g, m, n) * min(max_norm / sqrt(tot.at(0, 0)), 1.0f), m, n);
}
#endif

// B21 (-D PK_CXX_B21): an all-gather from a local Tensor (the input of a collective must be symmetric).
// Expected: a static assertion of pk/spec.h, "a collective's input must be symmetric: declare it Sym<T, R>".
#ifdef PK_CXX_B21
PK_KERNEL void b21_all_gather_local_input(Tensor<bf16, 2> x, Sym<bf16, 2> y) { all_gather(x, y); }
#endif

// F1 (compiles; finding 1 of specs20_findings.md): greedy speculative acceptance that marks the columns
// past K as misses explicitly. Meant: nacc[b] = the number of leading j < K with draft[b, j] == target[b, j].
// When cumsum skipped what was computed from padding, the "+ (col >= K)" term was inert there while
// row_sum counted the padding columns (nacc = 16 for a fully accepted row). Fixed: cumsum counts every
// element as the tile holds it, as row_sum does, so the mask works (row_padding_jit_test's
// accepted_prefix runs this kernel on the GPU). Kept here so the lines above stay put. Expected: compiles.
PK_KERNEL void f1_accept_count_mask_inert(Tensor<i32, 2> draft, Tensor<i32, 2> target, Tensor<i32, 1> nacc) {
  for (auto b : tiles(draft.rows(), {16})) {
    auto col = col_index<16, 16>(0);
    auto miss = cast<i32>(load<16, 16>(draft, b, 0) != load<16, 16>(target, b, 0)) + cast<i32>(col >= float(draft.cols()));
    store(nacc, cast<i32>(row_sum(cast<f32>(cumsum(miss) == 0))), b);
  }
}

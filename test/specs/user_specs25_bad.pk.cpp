// Set 25 (user specs, vision / diffusion kernels and layouts), kernels pkc must refuse: each comment says why and
// gives the error's key words. Kernels whose error is a Clang error sit behind #ifdef PK_CXX_<ID> (one Clang error
// fails the whole file). Findings in test/specs/specs25_findings.md.
#include <pk/spec.h>
using namespace pk;

// B1: Swin patch merging written into flattened token rows [B H/2 W/2, 4C] at row bi * (W/2) + j: when W/2 is not a
// multiple of 16, the last j tile of image row bi stores its padding rows over the first tokens of row bi + 1
// (a store clips only at the tensor's end). Key words: "race for world size 1", "cat4". (The correct form stores
// into the [B H/2, W/2, 4C] view: user_specs25.pk.cpp's swin_patch_merging.)
PK_KERNEL void b1_patch_merging_flat_rows(Tensor<f32, 4> x, Tensor<f32, 2> cat4) {
  index wh = x.dim(2);
  for (auto [bi, j] : tiles(x.dim(0), x.dim(2), {1, 16})) {
    index row = bi * wh + j;
    store(cat4, reshape<16, 96>(load<1, 1, 16, 96>(x, bi, 0, j, 0)), row, 0);
  }
}

// B2: GroupNorm statistics by row_sum of a 3-D [1, 8, 256] tile (row reductions take 2-D tiles; reshape<8, 256>
// first). A Clang overload error. Key words: "no matching function for call to 'row_sum'".
#ifdef PK_CXX_B2
PK_KERNEL void b2_row_sum_3d_tile(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [bg, n] : tiles(x.dim(0), x.dim(2), {1, 256})) {
    auto t = load<1, 8, 256>(x, bg, 0, n);
    store(y, t - row_sum(t), bg, 0, n);
  }
}
#endif

// B3 (accepted since the thirty-seventh session: masks of two element types join as an f32 mask): a key-padding mask of an i32 tensor combined with a float mask (no cast). Key words: "different element
// types", "cast<f32>(mask)".
#ifdef PK_CXX_B3
PK_KERNEL void b3_mask_f32_and_i32(Tensor<f32, 2> s, Tensor<i32, 1> keep, Tensor<f32, 2> p) {
  for (auto [m, n] : tiles(s.rows(), s.cols(), {16, 64}))
    store(p, where((col_index<16, 64>(n) < s.cols()) && (load<1, 64>(keep, n) != 0), load<16, 64>(s, m, n), -1e4f), m, n);
}
#endif

// B4: channels-first to channels-last by transposing a [1, 32, 64] tile of the trailing dimensions directly.
// Key words: "transpose takes a 2-D tile", "reshape".
#ifdef PK_CXX_B4
PK_KERNEL void b4_transpose_3d_tile(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [b, c, p] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 32, 64}))
    store(y, transpose(load<1, 32, 64>(x, b, c, p)), b, p, c);
}
#endif

// B5: a 1-D depthwise (horizontal) 3-tap conv written in place: it reads columns w - 1 and w + 1 of the image it
// rewrites. Key words: "reads a tensor at other tiles than it writes".
PK_KERNEL void b5_dwconv_in_place(Tensor<f32, 3> x, Tensor<f32, 2> k) {
  for (auto [h, w] : tiles(x.dim(0), x.dim(1), {1, 32})) {
    auto acc = load<32, 64>(x, h, w - 1, 0) * load<1, 64>(k, 0, 0) + load<32, 64>(x, h, w, 0) * load<1, 64>(k, 1, 0) +
               load<32, 64>(x, h, w + 1, 0) * load<1, 64>(k, 2, 0);
    store(x, acc, h, w, 0);
  }
}

// B6: patch-parallel halo exchange that reads its own halo row in the same loop that stores into the next rank's
// halo (no barrier between a neighbour's store and this rank's read). Key words: "race for world size 2", "reads
// rank 0's copy", "writes it".
PK_KERNEL void b6_halo_read_before_exchange(Sym<bf16, 3> x, Tensor<bf16, 3> y) {
  index hl = y.dim(0);
  for (auto [w, c] : tiles(x.dim(1), x.dim(2), {32, 64})) {
    store(x.on(next_rank()), load<32, 64>(x, hl, w, c), 0, w, c);
    store(y, load<32, 64>(x, 0, w, c), 0, w, c);
  }
}

// B7: nearest 2x upsampling into the [B H, 2, W, 2C] view with the column copy at C + c: when C is not a multiple of
// 64 the tile at c stores padding columns over the copy's first columns. Key words: "race for world size 1",
// "reaches into".
PK_KERNEL void b7_upsample_copy_at_c_plus_col(Tensor<bf16, 3> x, Tensor<bf16, 4> y) {
  index ch = x.dim(2);
  for (auto [bh, w, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 64})) {
    auto t = reshape<1, 1, 16, 64>(load<1, 16, 64>(x, bh, w, c));
    store(y, t, bh, 0, w, c);
    store(y, t, bh, 0, w, ch + c);
  }
}

// B8: pixel shuffle's interleave written as a reshape of the two [64]-column planes into [64, 2] (a reshape keeps
// the element order; the interleave is a transpose). Key words: "reshape adds or drops dimensions of 1 only",
// "[2, 64] cannot become [64, 2]".
PK_KERNEL void b8_pixel_shuffle_by_reshape(Tensor<f32, 4> x, Tensor<f32, 3> y) {
  for (auto [bci, h, w] : tiles(x.dim(0), x.dim(2), x.dim(3), {1, 1, 64})) {
    auto t = reshape<2, 64>(load<1, 2, 1, 64>(x, bci, 0, h, w));
    store(y, reshape<1, 64, 2>(reshape<64, 2>(t)), bci * x.dim(2) + h, w, 0);
  }
}

// B9: half the image height computed with a float factor (x.dim(1) * 0.5f) into an index. Key words: "a float
// scalar cannot initialise an index variable".
PK_KERNEL void b9_float_half_height(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  index half = x.dim(1) * 0.5f;
  for (auto [b, n] : tiles(x.dim(0), half, {1, 64})) store(y, load<1, 64>(x, b, 0, n * 2), b, 0, n);
}

// B10: K/V of image tokens [H, s, D] all-gathered along the head dimension's index 3 (a tensor of rank 3 has
// dimensions 0..2). Key words: "all_gather: dimension 3 is out of range for a tensor of rank 3".
PK_KERNEL void b10_all_gather_dim_out_of_range(Sym<bf16, 3> k, Sym<bf16, 3> kf) { all_gather(k, kf, 3); }

// B11: the column coordinate of a [1, 16, 64] NHWC tile taken as dim_index<3> (its dimensions are 0..2).
// Key words: "dim_index<D, S...>: D (3) must name one of the tile's 3 dimensions".
PK_KERNEL void b11_dim_index_out_of_range(Tensor<f32, 3> x, Tensor<f32, 3> y) {
  for (auto [b, n] : tiles(x.dim(0), x.dim(2), {1, 64}))
    store(y, load<1, 1, 64>(x, b, 0, n) + dim_index<3, 1, 1, 64>(0), b, 0, n);
}

// B12: implicit-GEMM convolution with the weight tile's K rows not matching the activation tile's K columns.
// Key words: "mma: inner dimensions differ: a is 64x32, b is 64x64".
PK_KERNEL void b12_conv_gemm_k_mismatch(Tensor<bf16, 4> x, Tensor<bf16, 3> wt, Tensor<f32, 4> y) {
  for (auto [bh, w, o] : tiles(x.dim(0) * x.dim(1), x.dim(2), wt.dim(2), {1, 64, 64})) {
    index b = bh / x.dim(1);
    index h = bh % x.dim(1);
    auto acc = zeros<f32, 64, 64>();
    for (auto i : range(0, x.dim(3), 32)) acc = mma(load<64, 32>(x, b, h, w, i), load<64, 64>(wt, 4, i, o), acc);
    store(y, acc, b, h, w, o);
  }
}

// B13: a sampler loop whose step count is read from device memory around a collective (patch-parallel sampling
// all-reducing the latent each step). Key words: "host loop of launches", "bounds must be known on the host".
PK_KERNEL void b13_sampler_steps_from_memory(Sym<f32, 1> x, Tensor<i32, 1> steps) {
  for (auto s : range(0, steps.at(0), 1)) all_reduce(Sum, x, x);
}

// B14: a 2-D tile stored into an NHWC image with three indices (one per tile dimension plus the batch) instead of
// four. Key words: "give one index per tensor dimension (4)".
PK_KERNEL void b14_store_too_few_indices(Tensor<f32, 4> x, Tensor<f32, 4> y) {
  for (auto [b, n] : tiles(x.dim(0), x.dim(3), {1, 64})) store(y, load<16, 64>(x, b, 0, 0, n), b, 0, n);
}

// B15: Swin window gather with row ids left as f32 (row_index is f32; load_rows takes an i32 / i64 index tile).
// Key words: "index tile", "cast<i32>".
#ifdef PK_CXX_B15
PK_KERNEL void b15_load_rows_float_ids(Tensor<bf16, 2> q, Tensor<bf16, 2> o) {
  for (auto win : tiles(q.rows() / 49, {1})) {
    auto ids = row_index<64, 1>(0) + float(win * 49);
    store_rows(o, load_rows<64, 32>(q, ids, 0), cast<i32>(ids), 0);
  }
}
#endif

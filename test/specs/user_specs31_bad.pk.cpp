// Set 31's refusals and findings (test/specs/specs31_findings.md), each checked at its line by
// test/Compile/user_specs31.test. Clang errors sit behind -D PK_CXX_B<n>.
#include <pk/spec.h>
using namespace pk;

// Finding 1 (fixed): a one-tile loop (constant extent 1) that reduces a tensor and writes the result back
// into it compiles, with a block barrier before the write.
PK_KERNEL void b1_one_tile_reduce_in_place(Tensor<f32, 1> part) {
  for (auto z : tiles(1, {1})) {
    auto pm = load<4096>(part, 0);
    store(part, reshape<1>(row_max(reshape<1, 4096>(pm))), 0);
  }
}

// Still refused: a one-tile loop that reads what it wrote (the read may be fetched ahead of the body).
PK_KERNEL void b1b_one_tile_read_after_write(Tensor<f32, 1> part) {
  for (auto z : tiles(1, {1})) {
    store(part, zeros<f32, 1>(), 0);
    auto pm = load<4096>(part, 0);
    store(part, reshape<1>(row_max(reshape<1, 4096>(pm))), 1);
  }
}

// Finding 2 (fixed): row_topk / row_topk_index of an integer tile says to rank cast<f32>(t).
#ifdef PK_CXX_B2
PK_KERNEL void b2_topk_of_ints(Tensor<i32, 2> x, Tensor<i32, 2> y) {
  for (auto t : tiles(x.rows(), {16})) store(y, row_topk_index<2>(load<16, 64>(x, t, 0)), t, 0);
}
#endif

// Finding 3 (fixed): where() of an integer tile and a float scalar says to cast the tile.
#ifdef PK_CXX_B3
PK_KERNEL void b3_where_int_tile_float_scalar(Tensor<i32, 2> x, Tensor<f32, 2> y) {
  for (auto t : tiles(x.rows(), {16})) store(y, where(load<16, 64>(x, t, 0) > 0, load<16, 64>(x, t, 0), 0.5f), t, 0);
}
#endif

// A rotary step of 64 over a 128-wide head reads the next tile's half: refused at the second store.
PK_KERNEL void b4_rope_step_too_small(Tensor<bf16, 2> x) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto x1 = load<16, 64>(x, t, n);
    auto x2 = load<16, 64>(x, t, n + 64);
    store(x, x1 - x2, t, n);
    store(x, x2 + x1, t, n + 64);
  }
}

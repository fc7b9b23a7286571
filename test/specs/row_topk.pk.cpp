// Each row's K largest elements and their columns (row_topk, row_topk_index): MoE routers and
// top-k filters. GPU test: test/gpu/row_topk_jit_test.cu; lit: test/Frontend/topk.cpp.
#include <pk/spec.h>
using namespace pk;

// An MoE router over 64 experts: the top 2 experts of each token and their softmax weights.
PK_KERNEL void router_top2(Tensor<f32, 2> logits, Tensor<i32, 2> ids, Tensor<f32, 2> w) {
  for (auto m : tiles(logits.rows(), {64})) {
    auto x = load<64, 64>(logits, m, 0);
    auto v = row_topk<2>(x);
    auto e = exp(v - row_max(v));
    store(w, e / row_sum(e), m, 0);
    store(ids, row_topk_index<2>(x), m, 0);
  }
}

// The top 8 of rows of up to 64 values (fewer columns leave the rest padding, never chosen).
PK_KERNEL void top8(Tensor<f32, 2> x, Tensor<f32, 2> v, Tensor<i32, 2> i) {
  for (auto m : tiles(x.rows(), {32})) {
    auto t = load<32, 64>(x, m, 0);
    store(v, row_topk<8>(t), m, 0);
    store(i, row_topk_index<8>(t), m, 0);
  }
}

// bf16 values, and the top-k mask of a vocabulary chunk: keep the k largest of each 256-wide tile.
PK_KERNEL void top4_bf16(Tensor<bf16, 2> x, Tensor<bf16, 2> v, Tensor<i32, 2> i) {
  for (auto m : tiles(x.rows(), {16})) {
    auto t = load<16, 256>(x, m, 0);
    store(v, row_topk<4>(t), m, 0);
    store(i, row_topk_index<4>(t) + 1000, m, 0);
  }
}

// A whole-row sort (K = N): descending, ties by column.
PK_KERNEL void sort_rows(Tensor<f32, 2> x, Tensor<f32, 2> v, Tensor<i32, 2> i) {
  for (auto m : tiles(x.rows(), {8})) {
    auto t = load<8, 32>(x, m, 0);
    store(v, row_topk<32>(t), m, 0);
    store(i, row_topk_index<32>(t), m, 0);
  }
}

// The largest of each 2048-wide chunk of long rows (one row of the stage at a time) and its column.
PK_KERNEL void top1_wide(Tensor<f32, 2> x, Tensor<f32, 2> v, Tensor<i32, 2> i) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 2048})) {
    auto t = load<8, 2048>(x, m, n);
    store(v, row_topk<1>(t), m, n / 2048);
    store(i, row_topk_index<1>(t) + n, m, n / 2048);
  }
}

// The top 3 of a 1-D tensor's 256-wide chunks (a [256] tile is one row), at 3c .. 3c + 2.
PK_KERNEL void top3_1d(Tensor<f32, 1> x, Tensor<f32, 1> v, Tensor<i32, 1> i) {
  for (auto c : tiles(x.dim(0), {256})) {
    auto t = load<256>(x, c);
    store(v, row_topk<3>(t), c / 256 * 3);
    store(i, row_topk_index<3>(t) + c, c / 256 * 3);
  }
}

// Per-token top 2 of 3-D logits [B, S, V] (V <= 64): rows along the last dimension.
PK_KERNEL void top2_3d(Tensor<bf16, 3> x, Tensor<bf16, 3> v, Tensor<i32, 3> i) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {2, 16})) {
    auto t = load<2, 16, 64>(x, b, s, 0);
    store(v, row_topk<2>(t), b, s, 0);
    store(i, row_topk_index<2>(t), b, s, 0);
  }
}

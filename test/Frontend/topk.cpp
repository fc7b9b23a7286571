// RUN: pkc %s --emit=mlir | FileCheck %s
// RUN: pkc %s -o %t.cu && FileCheck %s --check-prefix=CUDA --input-file=%t.cu
// RUN: not pkc %s -DBAD_K -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD_K
// RUN: not pkc %s -DWIDE -o /dev/null 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: not pkc %s -DZERO_K -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO_K
// Tests row_topk / row_topk_index: one pk.tile.topk for both of one tile and K (values of the
// input's type, i32 columns), lowered to the tile library's row_topk through the stage; K past
// the row is an error, and so is a row the stage cannot hold.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @router
// CHECK: %[[V:.*]], %[[I:.*]] = pk.tile.topk %{{.*}} : !pk.tile<64x64xf32> -> !pk.tile<64x2xf32>, !pk.tile<64x2xi32>
// CHECK-NOT: pk.tile.topk
// CHECK: pk.tile.store %[[I]]
// CUDA: #include <pk/tile/topk.cuh>
// CUDA: pk::tile::row_topk(tile{{[0-9]+}}, tile{{[0-9]+}}, tile{{[0-9]+}}, pk_stage);
PK_KERNEL void router(Tensor<f32, 2> logits, Tensor<i32, 2> ids, Tensor<f32, 2> w) {
  for (auto m : tiles(logits.rows(), {64})) {
    auto x = load<64, 64>(logits, m, 0);
    auto v = row_topk<2>(x);
    auto e = exp(v - row_max(v));
    store(w, e / row_sum(e), m, 0);
    store(ids, row_topk_index<2>(x), m, 0);
  }
}

// CHECK-LABEL: pk.kernel @bf16_values
// CHECK: pk.tile.topk %{{.*}} : !pk.tile<16x256xbf16> -> !pk.tile<16x4xbf16>, !pk.tile<16x4xi32>
PK_KERNEL void bf16_values(Tensor<bf16, 2> x, Tensor<bf16, 2> v) {
  for (auto m : tiles(x.rows(), {16})) store(v, row_topk<4>(load<16, 256>(x, m, 0)), m, 0);
}

// Tests that a tile of rank 1 is one row and one of rank 3 has its rows along the last dimension
// (the leading dimensions kept, K in the last).
// CHECK-LABEL: pk.kernel @one_row
// CHECK: pk.tile.topk %{{.*}} : !pk.tile<256xf32> -> !pk.tile<3xf32>, !pk.tile<3xi32>
// CUDA: pk::tile::rt<float, 1, 3, 1, 1, 1, {{[0-9]+}}> tile{{[0-9]+}};
PK_KERNEL void one_row(Tensor<f32, 1> x, Tensor<i32, 1> i) {
  for (auto c : tiles(x.dim(0), {256})) store(i, row_topk_index<3>(load<256>(x, c)), c / 256 * 3);
}
// CHECK-LABEL: pk.kernel @per_token
// CHECK: pk.tile.topk %{{.*}} : !pk.tile<2x16x64xbf16> -> !pk.tile<2x16x2xbf16>, !pk.tile<2x16x2xi32>
PK_KERNEL void per_token(Tensor<bf16, 3> x, Tensor<bf16, 3> v) {
  for (auto [b, s] : tiles(x.dim(0), x.dim(1), {2, 16})) store(v, row_topk<2>(load<2, 16, 64>(x, b, s, 0)), b, s, 0);
}

#ifdef BAD_K
PK_KERNEL void k_past_row(Tensor<f32, 2> x, Tensor<f32, 2> v) {
// BAD_K: topk.cpp:[[@LINE+1]]:49: error: topk: K (16) is more than the row's 8 elements
  for (auto m : tiles(x.rows(), {16})) store(v, row_topk<16>(load<16, 8>(x, m, 0)), m, 0);
}
#endif

#ifdef WIDE
PK_KERNEL void wide_row(Tensor<f32, 2> x, Tensor<f32, 2> v) {
// WIDE: topk.cpp:[[@LINE+1]]:48: error: the general tile path takes the top k of rows of at most 4096 - 2k elements (this row has 8192, k = 4)
  for (auto m : tiles(x.rows(), {1})) store(v, row_topk<4>(load<1, 8192>(x, m, 0)), m, 0);
}
#endif

#ifdef ZERO_K
PK_KERNEL void zero_k(Tensor<f32, 2> x, Tensor<f32, 2> v) {
// ZERO_K: topk.cpp:[[@LINE+1]]:49: error: row_topk<K>: K (the elements each row keeps) must be at least 1, got 0
  for (auto m : tiles(x.rows(), {16})) store(v, row_topk<0>(load<16, 8>(x, m, 0)), m, 0);
}
#endif

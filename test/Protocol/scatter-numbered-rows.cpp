// RUN: not pkc %s --kernel packed_kv -o /dev/null 2>&1 | FileCheck %s --check-prefix=PACKED
// RUN: not pkc %s --kernel gather_col_blocks -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCKS
// RUN: not pkc %s --kernel shifted_rows -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHIFTED
// RUN: pkc %s --kernel whole_rows -o /dev/null
// Scatters whose rows are numbered from the tile's origin (cast<i32>(row_index(m)), plus one value
// for every row) write known rows: two of them on the same rows whose column blocks start less
// than a tile apart race through the padding columns a clipped tile carries (set 33, finding 1).
#include <pk/spec.h>
using namespace pk;
// PACKED: scatter-numbered-rows.cpp:[[@LINE+5]]:5: error: race for world size 1: this scatter writes rows of argument 2 (kv) at columns {{.*}} writes the same rows (both number the rows from their tiles' origins)
PK_KERNEL void packed_kv(Tensor<f32, 2> k, Tensor<f32, 2> v, Tensor<f32, 2> kv) {
  for (auto [m, n] : tiles(k.rows(), k.cols(), {16, 64})) {
    auto rows = cast<i32>(row_index<16, 1>(m));
    store_rows(kv, load<16, 64>(k, m, n), rows, n);
    store_rows(kv, load<16, 64>(v, m, n), rows, k.cols() + n);
  }
}
// A hand all-gather of column blocks into every peer: rank r's padding columns land on rank r + 1's.
// BLOCKS: scatter-numbered-rows.cpp:[[@LINE+4]]:7: error: race for world size 2: {{.*}}both number the rows from their tiles' origins
PK_KERNEL void gather_col_blocks(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    for (auto p : range(0, world_size()))
      store_rows(y.on(p), load<16, 64>(x, m, n), cast<i32>(row_index<16, 1>(m)), rank() * x.cols() + n);
}
// The rows plus one value for every row are numbered rows too.
// SHIFTED: scatter-numbered-rows.cpp:[[@LINE+5]]:5: error: race for world size 1: {{.*}}both number the rows from their tiles' origins
PK_KERNEL void shifted_rows(Tensor<f32, 2> k, Tensor<f32, 2> kv) {
  for (auto [m, n] : tiles(k.rows(), k.cols(), {16, 64})) {
    auto rows = cast<i32>(row_index<16, 1>(m)) + 5;
    store_rows(kv, load<16, 64>(k, m, n), rows, n);
    store_rows(kv, load<16, 64>(k, m, n), rows, k.cols() + n);
  }
}
// Whole rows into each peer at rank()'s row block (the documented gather): no columns overlap.
PK_KERNEL void whole_rows(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    for (auto p : range(0, world_size()))
      store_rows(y.on(p), load<16, 64>(x, m, n), cast<i32>(row_index<16, 1>(m)) + rank() * x.rows(), n);
}

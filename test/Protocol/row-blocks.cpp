// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// RUN: pkc %s -o /dev/null -DALIGNED 2>&1 | FileCheck %s --check-prefix=ALIGNED
// Tests that ranks storing row blocks of every peer's y at rank() * x.rows() + m race at the
// tails: a partial last tile's padding rows are stored too (the store clips at y's end, not
// x's), and the report says so. Blocks a whole number of tiles apart are accepted, as are
// rows scattered at the fixed offset by store_rows (which skips padding rows), and blocks
// whose valid rows overlap get the plain race report.
#include <pk/spec.h>
using namespace pk;
#ifdef ALIGNED
// ALIGNED: pkc: wrote
PK_KERNEL void aligned(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    for (auto p : range(0, world_size()))
      store(y.on(p), load<16, 128>(x, m, n), rank() * ((x.rows() + 15) / 16 * 16) + m, n);
}
PK_KERNEL void scattered(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    for (auto p : range(0, world_size()))
      store_rows(y.on(p), load<16, 128>(x, m, n), cast<i32>(row_index<16, 1>(m)) + rank() * x.rows(), n);
}
#else
PK_KERNEL void tails(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    for (auto p : range(0, world_size()))
// CHECK: row-blocks.cpp:[[@LINE+1]]:7: error: race for world size 2: {{.*}} with no wait ordering the two: rank 0 stores a tile of 16 rows at rows [{{[0-9]+}}, {{[0-9]+}}) whose last 15 are padding of a clipped load (a store writes them too: it clips only at the end of the tensor it writes), and they overlap rows [{{[0-9]+}}, {{[0-9]+}}) that rank 1 stores; start each block of rows a whole number of tiles apart (an offset of r * ((rows + 15) / 16 * 16) rather than r * rows), store into a view with the blocks as a dimension ([B, R, C] for B blocks of R rows) so that each tile clips at its own block, or, where the blocks' layout is fixed, scatter the rows: store_rows(y, t, cast<i32>(row_index<16, 1>(m)) + offset, n) moves none of a clipped load's padding rows
      store(y.on(p), load<16, 128>(x, m, n), rank() * x.rows() + m, n);
}

PK_KERNEL void overlap(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {32, 128}))
    for (auto p : range(0, world_size()))
// CHECK: row-blocks.cpp:[[@LINE+1]]:7: error: race for world size 2: {{.*}}, with no wait ordering the two{{$}}
      store(y.on(p), load<32, 128>(x, m, n), rank() * 16 + m, n);
}
#endif

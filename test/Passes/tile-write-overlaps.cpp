// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// RUN: pkc %s -DPK_DISJOINT -o /dev/null 2>&1 | FileCheck %s --check-prefix=OK
// Tests that pk-check-tile-races refuses stores that two tiles of one tile loop make to the same
// elements (specs14 finding 2: a tile wider than the step, a second store a part of a tile on;
// specs15 finding 1: indices such as n / 2 or min(n, 256); along any dimension, into this rank's
// tensor or a peer's), and accepts stores that only touch their own tile, overlap only where the
// loop has a single tile, or lie a stride apart.
#include <pk/spec.h>
using namespace pk;

#ifndef PK_DISJOINT
// CHECK: tile-write-overlaps.cpp:[[@LINE+4]]:5: error: this store writes elements that the store at {{.*}}tile-write-overlaps.cpp:[[@LINE+3]]:5 writes at another tile of the loop (the tiles at (0, 256) and (0, 0))
PK_KERNEL void second_store_half_a_tile_on(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    store(y, load<16, 256>(x, m, n), m, n);
    store(y, load<16, 256>(x, m, n) * 2.0f, m, n + 128);
  }
}

// CHECK: tile-write-overlaps.cpp:[[@LINE+3]]:5: error: this store writes elements that the same store writes at another tile of the loop (the tiles at (0, 0) and (0, 128))
PK_KERNEL void tile_wider_than_step(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, load<16, 256>(x, m, n), m, n);
}

// CHECK: tile-write-overlaps.cpp:[[@LINE+3]]:5: error: this store writes elements that the same store writes at another tile of the loop (the tiles at (0, 0) and (8, 0))
PK_KERNEL void tile_taller_than_step_to_peer(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 128}))
    store(y.on(next_rank()), load<16, 128>(x, m, n), m, n);
}

// CHECK: tile-write-overlaps.cpp:[[@LINE+4]]:5: error: this store writes elements that the store at {{.*}}:[[@LINE+3]]:5 writes at another tile of the loop (the tiles at (512) and (0))
PK_KERNEL void two_tiles_on(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) {
    store(y, load<256>(x, i), i);
    store(y, load<256>(x, i), i + 512);
  }
}

// CHECK: tile-write-overlaps.cpp:[[@LINE+3]]:5: error: this store writes elements that the same store writes at another tile of the loop (the tiles at (0, 0) and (0, 64))
PK_KERNEL void half_the_column(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n), m, n / 2);
}

// CHECK: tile-write-overlaps.cpp:[[@LINE+3]]:5: error: this store writes elements that the same store writes at another tile of the loop (the tiles at (0, 256) and (0, 320))
PK_KERNEL void clamped_to_a_peer(Tensor<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(next_rank()), load<16, 64>(x, m, n), m, min(n, 256));
}

// A scatter whose tile is wider than the column step writes the same rows at two tiles (specs33
// finding 1, reproducer C): rows numbered from the tile's origin, or loaded by the row tile.
// CHECK: tile-write-overlaps.cpp:[[@LINE+4]]:5: error: this store_rows writes the same rows (its index tile is the same at both tiles) and overlapping columns at two tiles of the loop (the tiles at (0, 0) and (0, 32), its tile 64 columns wide)
PK_KERNEL void wide_scatter_to_peer(Sym<f32, 2> x, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32})) {
    auto t = load<16, 64>(x, m, n);
    store_rows(y.on(next_rank()), t - row_max(t), cast<i32>(row_index<16, 1>(m)), n);
  }
}
// CHECK: tile-write-overlaps.cpp:[[@LINE+3]]:5: error: this store_rows writes the same rows
PK_KERNEL void wide_scatter_by_loaded_rows(Tensor<f32, 2> x, Tensor<i32, 1> slot, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
    store_rows(y, load<16, 64>(x, m, n) * 2.0f, load<16>(slot, m), n);
}
#else
// Scatters no wider than the step; a wide one whose rows follow the column tile too (other
// rows at every tile); a wide one into slots claimed at every tile (different rows each time).
PK_KERNEL void scatter_within_step(Tensor<f32, 2> x, Tensor<i32, 1> slot, Sym<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store_rows(y.on(next_rank()), load<16, 64>(x, m, n), load<16>(slot, m), n);
}
PK_KERNEL void wide_scatter_rows_follow_columns(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
    store_rows(y, load<16, 64>(x, m, n), cast<i32>(row_index<16, 1>(m) + n * 1000), n);
}
PK_KERNEL void wide_scatter_claimed(Tensor<f32, 2> x, Tensor<i32, 1> expert, Tensor<i32, 1> fill, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 32}))
    store_rows(y, load<16, 64>(x, m, n), claim(fill, load<16>(expert, m)), n);
}
// Two stores into halves of a 256-column step; a 256-column tile in a loop with one column tile
// (its extent a constant 128); a store inside a range loop (not claimed here).
PK_KERNEL void halves(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 256})) {
    store(y, load<16, 128>(x, m, n), m, n);
    store(y, load<16, 128>(x, m, n + 128) * 2.0f, m, n + 128);
  }
}
PK_KERNEL void one_column_tile(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), 128, {16, 128}))
    store(y, load<16, 256>(x, m, n), m, n);
}
// Every other column block: a stride of twice the tile.
PK_KERNEL void strided(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y, load<16, 64>(x, m, n), m, 2 * n);
}
PK_KERNEL void rows_of_a_range(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto n : range(0, x.cols(), 128)) store(y, load<16, 128>(x, m, n), m, n);
}
// OK-NOT: error
// OK: pkc: wrote
#endif

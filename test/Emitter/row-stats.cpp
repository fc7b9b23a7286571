// RUN: pkc %s -o - | FileCheck %s
// Tests row statistics kept in registers (pk/tile/row_stats.cuh): a row reduction whose rows lie
// in warps (whole runs of 8, at most 32 threads a row) and whose every use is a column map, a
// broadcast over its rows or a store is reduced by shuffles into a RowValues; the columns made
// from it are rebuilt where they are used and never declared, and its stores are made by the
// thread that holds each row's first run. Any other use keeps the staged reduction.
#include <pk/spec.h>
using namespace pk;

// An fp8 quantisation with per-block scales: the block maximum, broadcast back, and stored.
// CHECK: #include <pk/tile/row_stats.cuh>
// CHECK-LABEL: quantise(
// CHECK-NOT: pk::tile::reduce_rows(
// CHECK: const auto [[ST:stats[0-9]+]] = pk::tile::reduce_rows_in_warps<float>({{tile[0-9]+}}, pk::tile::RowOp::max);
// CHECK-NOT: { return fmaxf(x, y); });
// CHECK: const auto [[INV:rowvec[0-9]+]] = pk::tile::row_values<pk::tile::rt<float, 2, 16, 128, 1, 1, {{[0-9]+}}>>([&](int s, long long r) { return [](float x, float y) { return x / y; }({{c[0-9]+}}, [](float x, float y) { return fmaxf(x, y); }([[ST]].at(s, r), {{c[0-9]+}})); }, min(16LL, [[ST]].valid0));
// CHECK-NEXT: pk::tile::map_broadcast({{tile[0-9]+}}, {{tile[0-9]+}}, [[INV]], false, [](float x, float y) { return x * y; }, nullptr);
// CHECK: const auto [[SC:rowvec[0-9]+]] = pk::tile::row_values<pk::tile::rt<float, 2, 16, 128, 1, 1, {{[0-9]+}}>>([&](int s, long long r) { return [](float x, float y) { return x * y; }([](float x, float y) { return fmaxf(x, y); }([[ST]].at(s, r), {{c[0-9]+}}), {{c[0-9]+}}); }, min(16LL, [[ST]].valid0));
// CHECK-NEXT: { const long long o[4] = {{[{]}}{{i[0-9]+}}, {{v[0-9]+}}}; pk::tile::store_row_values([[SC]], arg2.data, arg2.shape, o); }
PK_KERNEL void quantise(Tensor<bf16, 2> x, Tensor<f8e4m3, 2> q, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128})) {
    auto t = cast<f32>(load<16, 128>(x, m, n));
    auto amax = max(row_max(abs(t)), 1e-30f);
    store(q, cast<f8e4m3>(t * (448.0f / amax)), m, n);
    store(s, amax * 0.002232142857f, m, n / 128);
  }
}

// A statistic scattered by an index the loop's trip loads: the trip's index loads are made for
// the rows of the reduced tile, and the scatter writes one value per row.
// CHECK-LABEL: scatter_scales(
// CHECK: const auto [[ST:stats[0-9]+]] = pk::tile::reduce_rows_in_warps<float>({{tile[0-9]+}}, pk::tile::RowOp::sum);
// CHECK: for (long long [[K:k[0-9]+]] = {{.*}}) {
// CHECK-NEXT: const auto [[NOW:rows[0-9]+]] = pk::tile::row_values<pk::tile::rt<float, 2, 32, 64, 1, 1, {{[0-9]+}}>>(
// CHECK-NOT: row_values<pk::tile::rt<float, 2, 32, 1, 1
// CHECK: const auto [[V:rowvec[0-9]+]] = pk::tile::row_values<pk::tile::rt<float, 2, 32, 64, 1, 1, {{[0-9]+}}>>([&](int s, long long r) { return [[ST]].at(s, r); }, min(32LL, [[ST]].valid0));
// CHECK-NEXT: const auto [[IDX:rowvec[0-9]+]] = pk::tile::row_values<pk::tile::rt<float, 2, 32, 64, 1, 1, {{[0-9]+}}>>([&](int s, long long r) { return [[NOW]].at(s, r); }, min(32LL, [[NOW]].valid0));
// CHECK-NEXT: pk::tile::scatter_row_values<true>([[V]], [[IDX]], arg2.data, arg2.shape, {{.*}});
PK_KERNEL void scatter_scales(Tensor<f32, 2> x, Tensor<i32, 2> slot, Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 64})) {
    auto sum = row_sum(load<32, 64>(x, t, n));
    for (auto k : range(0, slot.cols())) store_add_rows(y, sum, load<32, 1>(slot, t, k), n / 64);
  }
}

// Two statistics of one tile combined, then broadcast (a softmax over 256 columns).
// CHECK-LABEL: short_softmax(
// CHECK-NOT: pk::tile::reduce_rows(
// CHECK: const auto [[MX:stats[0-9]+]] = pk::tile::reduce_rows_in_warps<float>({{tile[0-9]+}}, pk::tile::RowOp::max);
// CHECK: const auto [[SUM:stats[0-9]+]] = pk::tile::reduce_rows_in_warps<float>({{tile[0-9]+}}, pk::tile::RowOp::sum);
// CHECK: pk::tile::row_values<pk::tile::rt<float, 2, 8, 256, 1, 1, {{[0-9]+}}>>([&](int s, long long r) { return 1.f / ([[SUM]].at(s, r)); }
PK_KERNEL void short_softmax(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 256})) {
    auto t = load<8, 256>(x, m, n);
    auto e = exp(t - row_max(t));
    store(y, e / row_sum(e), m, n);
  }
}

// Rows of 512 columns span 64 threads: the staged reduction.
// CHECK-LABEL: long_rows(
// CHECK-NOT: reduce_rows_in_warps
// CHECK: pk::tile::reduce_rows(
PK_KERNEL void long_rows(Tensor<f32, 2> x, Tensor<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 512})) store(s, row_sum(load<16, 512>(x, m, n)), m, n / 512);
}

// A statistic carried across a loop's trips (an online maximum) is a tile: staged.
// CHECK-LABEL: running_max(
// CHECK-NOT: reduce_rows_in_warps
// CHECK: pk::tile::reduce_rows(
PK_KERNEL void running_max(Tensor<f32, 2> x, Tensor<f32, 2> s) {
  for (auto m : tiles(x.rows(), {16})) {
    auto mx = row_max(load<16, 128>(x, m, 0));
    for (auto n : range(128, x.cols(), 128)) mx = max(mx, row_max(load<16, 128>(x, m, n)));
    store(s, mx, m, 0);
  }
}

// A statistic stored into a peer's copy goes through the tile path's peer stores: staged.
// CHECK-LABEL: peer_sums(
// CHECK-NOT: reduce_rows_in_warps
// CHECK: pk::tile::reduce_rows(
PK_KERNEL void peer_sums(Tensor<f32, 2> x, Sym<f32, 2> s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(s.on(next_rank()), row_sum(load<16, 128>(x, m, n)), m, n / 128);
}

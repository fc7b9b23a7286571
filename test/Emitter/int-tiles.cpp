// RUN: pkc %s -o - | FileCheck %s
// Tests the CUDA of integer tiles and rows moved by index: integer lambdas (division and
// remainder by zero give 0; by a scalar, through the pk::tile::Divisor declared beside it),
// index scalars filled as integers, and gathers and scatters through
// pk/tile/gather.cuh with the indices rebuilt by every thread for its own rows (a row vector
// made of the loads and maps that made the index tile: no stage, no barrier), and the index
// columns a sequential loop reads loaded at the top of each trip.
#include <pk/spec.h>
using namespace pk;

// CHECK: #include <pk/tile/gather.cuh>
// CHECK-LABEL: combine(
// CHECK: __shared__ __align__(16) float pk_stage[pk::tile::kStageFloats];
// CHECK: pk::tile::rt<int, 1, 32, 1, 1, 1, {{[0-9]+}}> [[ID:tile[0-9]+]];
// CHECK: pk::tile::fill([[LO:tile[0-9]+]], arg3);
// CHECK: pk::tile::map([[S:tile[0-9]+]], [[ID]], [[LO]], [](int x, int y) { return pk::tile::wrap_sub(x, y); });
// CHECK: const pk::tile::Divisor [[D:divisor[0-9]+]](pk::tile::convert<int>({{c[0-9]+}}));
// CHECK: pk::tile::map({{tile[0-9]+}}, [[S]], [&](int x) { return [[D]].rem(x); });
// CHECK: const auto [[RV:rowvec[0-9]+]] = pk::tile::row_values<pk::tile::rt<float, 2, 32, 128, 1, 1, {{[0-9]+}}>>([&](int s, long long r) { return [[D]].rem([](int x, int y) { return pk::tile::wrap_sub(x, y); }(pk::tile::convert<int>(pk::tile::read_scalar(arg0.data, arg0.shape, {{i[0-9]+}} + r)), pk::tile::convert<int>(arg3))); }, min(32LL, pk::tile::valid_rows(32LL, arg0.shape, {{[{]}}{{i[0-9]+}}})));
// CHECK: pk::tile::load_rows([[R:tile[0-9]+]], [[RV]], arg1.data, arg1.shape, {{.*}}, pk_stage);
// CHECK-NOT: row_values
// CHECK: pk::tile::store_rows<true>({{tile[0-9]+}}, [[RV]], arg2.data, arg2.shape, {{.*}}, pk_stage);
PK_KERNEL void combine(Tensor<i32, 1> ids, Tensor<f32, 2> x, Tensor<f32, 2> y, index lo) {
  for (auto [t, n] : tiles(ids.size(), x.cols(), {32, 128})) {
    auto slot = (load<32>(ids, t) - lo) % 64;
    store_add_rows(y, load_rows<32, 128>(x, slot, n), slot, n);
  }
}

// A weight column broadcast over a tile's rows is rebuilt by every thread too: no stage.
// CHECK-LABEL: weighted_rows(
// CHECK: const auto [[W:rowvec[0-9]+]] = pk::tile::row_values<pk::tile::rt<float, 2, 16, 128, 1, 1, {{[0-9]+}}>>([&](int s, long long r) { return pk::tile::read_column(arg1.data, arg1.shape, {{i[0-9]+}}, r, {{c[0-9]+}}); }
// CHECK: pk::tile::map_broadcast({{tile[0-9]+}}, {{tile[0-9]+}}, [[W]], false, [](float x, float y) { return x * y; }, nullptr);
PK_KERNEL void weighted_rows(Tensor<f32, 2> x, Tensor<f32, 2> w, Tensor<f32, 2> y) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, load<16, 128>(x, t, n) * load<16, 1>(w, t, 0), t, n);
}

// Indices read from a tensor the loop also writes could change before a later re-read: they
// pass through the stage.
// CHECK-LABEL: written_ids(
// CHECK-NOT: row_values
// CHECK: pk::tile::load_rows({{tile[0-9]+}}, {{tile[0-9]+}}, arg1.data, arg1.shape, {{.*}}, pk_stage);
PK_KERNEL void written_ids(Tensor<i32, 1> ids, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto t : tiles(ids.size(), {32})) {
    auto s = load<32>(ids, t);
    store(ids, s + 1, t);
    store(y, load_rows<32, 128>(x, s, 0), t, 0);
  }
}

// Indices loaded before the tile loop are not loaded again inside it (a phase in between may
// write them): they pass through the stage.
// CHECK-LABEL: hoisted_ids(
// CHECK-NOT: row_values
// CHECK: pk::tile::load_rows({{tile[0-9]+}}, {{tile[0-9]+}}, arg1.data, arg1.shape, {{.*}}, pk_stage);
PK_KERNEL void hoisted_ids(Tensor<i32, 1> ids, Tensor<f32, 2> x, Tensor<f32, 2> y) {
  auto s = load<32>(ids, 0);
  for (auto [t, n] : tiles(x.rows(), x.cols(), {32, 128})) store(y, load_rows<32, 128>(x, s, n), t, n);
}

// Routing columns read at the loop's trip k are loaded at the top of the trip, into registers
// of the rows each thread gathers; the row vector of the trip reads them there (the MoE combine).
// CHECK-LABEL: routed_sum(
// CHECK: for (long long [[K:k[0-9]+]] = {{.*}}) {
// CHECK-NEXT: const auto [[NOW:rows[0-9]+]] = pk::tile::row_values<pk::tile::rt<float, 2, 32, 256, 1, 1, {{[0-9]+}}>>([&](int, long long r) { return pk::tile::convert<int>(pk::tile::read_column(arg1.data, arg1.shape, {{i[0-9]+}}, r, [[K]])); }, pk::tile::valid_rows(32LL, arg1.shape, {{[{]}}{{i[0-9]+}}, [[K]]}));
// CHECK: const auto [[RV:rowvec[0-9]+]] = pk::tile::row_values<pk::tile::rt<float, 2, 32, 256, 1, 1, {{[0-9]+}}>>([&](int s, long long r) { return [[NOW]].at(s, r); }, min(32LL, [[NOW]].valid0));
// CHECK-NEXT: pk::tile::rt<pk::bf16, 2, 32, 256, 1, 1, {{[0-9]+}}> [[G:tile[0-9]+]];
// CHECK-NEXT: pk::tile::load_rows([[G]], [[RV]], arg0.data, arg0.shape, {{.*}}, pk_stage);
PK_KERNEL void routed_sum(Tensor<bf16, 2> y, Tensor<i32, 2> slot, Tensor<bf16, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 256})) {
    auto acc = zeros<f32, 32, 256>();
    for (auto k : range(0, slot.cols()))
      acc = acc + cast<f32>(load_rows<32, 256>(y, load<32, 1>(slot, t, k), n));
    store(out, cast<bf16>(acc), t, n);
  }
}

// A column the loop also writes is read where it is used, not at the top of the trip.
// CHECK-LABEL: rewritten_slots(
// CHECK-NOT: const auto rows{{[0-9]+}} =
// CHECK: pk::tile::load_rows(
PK_KERNEL void rewritten_slots(Tensor<bf16, 2> y, Tensor<i32, 2> slot, Tensor<bf16, 2> out) {
  for (auto [t, n] : tiles(out.rows(), out.cols(), {32, 256})) {
    auto acc = zeros<f32, 32, 256>();
    for (auto k : range(0, slot.cols())) {
      auto s = load<32, 1>(slot, t, k);
      acc = acc + cast<f32>(load_rows<32, 256>(y, s, n));
      store(slot, s + 1, t, k);
    }
    store(out, cast<bf16>(acc), t, n);
  }
}

// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: pkc %s --kernel gemm_128 --templates=false -o - | FileCheck %s --check-prefix=GENERAL
// RUN: pkc %s --kernel decayed_sum --templates=false -o - | FileCheck %s --check-prefix=DECAY
// Tests that tile loops outside the Hopper templates lower op by op onto the tile library.
#include <pk/spec.h>
using namespace pk;

// CHECK: #include <pk/tile/mma.cuh>
// CHECK-LABEL: void __launch_bounds__(512, 2) softmax(
// CHECK: __shared__ __align__(16) float pk_stage[pk::tile::kStageFloats];
// CHECK: pk::tile::rt<pk::bf16, 2, 16, 1024, 1, 1, 512> [[X:tile[0-9]+]];
// CHECK: pk::tile::load_prefetched([[X]], {{.*}}, arg0.data, arg0.shape, o);
// CHECK: pk::tile::cast([[T:tile[0-9]+]], [[X]]);
// CHECK: pk::tile::reduce_rows([[MX:rows[0-9]+]], [[T]], pk::tile::RowOp::max, pk_stage, pk_rows);
// CHECK: pk::tile::map_broadcast([[D:tile[0-9]+]], [[T]], [[MX]], false, [](float x, float y) { return x - y; }, pk_stage);
// CHECK: pk::tile::map([[E:tile[0-9]+]], [[D]], [](float x) { return pk::tile::exp_ftz(x); });
// CHECK: pk::tile::reduce_rows([[S:rows[0-9]+]], [[E]], pk::tile::RowOp::sum
// The f32 quotient is stored as it is: the store rounds it to bf16, so no cast is emitted.
// CHECK: pk::tile::map_broadcast([[Q:tile[0-9]+]], [[E]],
// CHECK-NOT: pk::tile::cast(
// CHECK: pk::tile::store([[Q]], arg1.data, arg1.shape, o);
PK_KERNEL void softmax(Tensor<bf16, 2> x, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 1024})) {
    auto t = cast<f32>(load<16, 1024>(x, m, n));
    auto e = exp(t - row_max(t));
    store(y, cast<bf16>(e / row_sum(e)), m, n);
  }
}

// A GEMM loop that stores its f32 accumulator takes the Hopper template's f32 storer; with
// templates off it takes the general path's mma, the accumulator carried in mma fragments
// (only the mma updates it in the loop) and made a register tile after the loop.
// CHECK: using Job = pk::gemm::GemmJobT<pk::bf16, float, false, pk::gemm::NoEpilogue>;
// GENERAL-LABEL: gemm_128(
// GENERAL: pk::tile::zeros([[Z:tile[0-9]+]]);
// GENERAL: pk::tile::mma_carry<true, pk::tile::rt<float, 2, 128, 128, 1, 1, 512>, pk::tile::rt<pk::bf16, 2, 128, 64, 1, 1, 512>, pk::tile::rt<pk::bf16, 2, 128, 64, 1, 1, 512>> [[ACC:acc_carry[0-9]+]]([[Z]], pk_stage);
// GENERAL: for (long long [[K:k[0-9]+]] = {{.*}}; [[K]] < {{.*}}; [[K]] += {{.*}}) {
// GENERAL: [[ACC]].step({{tile[0-9]+}}, {{tile[0-9]+}}, pk_stage);
// GENERAL-NEXT: }
// GENERAL-NEXT: pk::tile::rt<float, 2, 128, 128, 1, 1, 512> [[R:acc[0-9]+]] = [[ACC]].result(pk_stage);
// GENERAL: pk::tile::store([[R]], arg2.data, arg2.shape, o);
// EXPLAIN: gemm: persistent LCSC kernel{{.*}}, f32 output; the spec's 128x128 tiles
PK_KERNEL void gemm_128(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 128})) {
    auto acc = zeros<f32, 128, 128>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<128, 64>(b, n, k), acc);
    store(c, acc, m, n);
  }
}

// An accumulator the loop also scales is no fragment carry: the mma adds into a register tile.
// DECAY-LABEL: decayed_sum(
// DECAY-NOT: mma_carry
// DECAY: pk::tile::rt<float, 2, 64, 64, 1, 1, {{[0-9]+}}> [[ACC:carried[0-9]+]] = {{tile[0-9]+}};
// DECAY: pk::tile::mma<true>({{acc[0-9]+}}, {{tile[0-9]+}}, {{tile[0-9]+}}, pk_stage);
// DECAY: [[ACC]] = {{next[0-9]+}};
PK_KERNEL void decayed_sum(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.cols(), 32))
      acc = mma_t(load<64, 32>(a, m, k), load<64, 32>(b, n, k), acc * 0.5f);
    store(c, acc, m, n);
  }
}

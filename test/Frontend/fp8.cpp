// RUN: pkc %s --emit=mlir | FileCheck %s
// RUN: pkc %s -o - | FileCheck %s --check-prefix=CUDA
// RUN: not pkc %s -DREDUCE_FP8 --emit=mlir 2>&1 | FileCheck %s --check-prefix=REDUCE
// RUN: pkc %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// Tests fp8 element types: f8e4m3 and f8e5m2 tensors and tiles become MLIR's f8E4M3FN and
// f8E5M2 and CUDA's pk::f8e4m3 / pk::f8e5m2; their loads ride the prefetch ring (8-byte runs);
// an all-gather of fp8 moves bytes, and a reduction of fp8 is an error at its source location;
// an fp8 GEMM loop (mma_t) takes the Hopper template's fp8 wgmma, and one with B stored [K, N]
// (mma) the general path, which --explain says why.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @quantise(
// CHECK-SAME: !pk.tensor<?x?xf8E4M3FN>, %{{.*}}: !pk.tensor<?x?xf8E5M2>
// CHECK: pk.tile.load {{.*}} -> !pk.tile<16x128xf8E4M3FN>
// CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x128xf8E4M3FN> to !pk.tile<16x128xf32>
// CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x128xf32> to !pk.tile<16x128xf8E5M2>
// CUDA-LABEL: quantise(
// CUDA-SAME: pk::Tensor<pk::f8e4m3> arg0, pk::Tensor<pk::f8e5m2> arg1
// CUDA: pk::tile::prefetch<pk::tile::rt<pk::f8e4m3, 2, 16, 128, 1, 1, {{[0-9]+}}>>
// CUDA: pk::tile::rt<pk::f8e5m2, 2, 16, 128, 1, 1, {{[0-9]+}}> [[Q:tile[0-9]+]];
// CUDA: pk::tile::cast([[Q]], {{tile[0-9]+}});
// CUDA: pk::tile::store([[Q]], arg1.data, arg1.shape, o);
PK_KERNEL void quantise(Tensor<f8e4m3, 2> x, Tensor<f8e5m2, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 128}))
    store(y, cast<f8e5m2>(cast<f32>(load<16, 128>(x, m, n)) * 2.0f), m, n);
}

// CHECK-LABEL: pk.kernel @gather_fp8(
// CHECK: pk.coll.all_gather %{{.*}} into %{{.*}} : !pk.sym<?x?xf8E4M3FN>, !pk.sym<?x?xf8E4M3FN>
PK_KERNEL void gather_fp8(Sym<f8e4m3, 2> x, Sym<f8e4m3, 2> y) { all_gather(x, y); }

// CHECK-LABEL: pk.kernel @fp8_gemm(
// CHECK: pk.tile.mma %{{.*}}, %{{.*}}, %{{.*}} {transpose_b} : !pk.tile<128x64xf8E4M3FN, smem>, !pk.tile<256x64xf8E5M2, smem>, !pk.tile<128x256xf32>
// EXPLAIN: pk.tile.foreach at {{.*}}fp8.cpp:[[@LINE+2]]:3: gemm: persistent LCSC kernel{{.*}}f8E4M3FN and f8E5M2 operands, B stored [N, K] (C = A * B^T), bf16 output; fp8 wgmma (m64n256k32), stepping K by 128 fp8 elements
PK_KERNEL void fp8_gemm(Tensor<f8e4m3, 2> a, Tensor<f8e5m2, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64))
      acc = mma_t(load_smem<128, 64>(a, m, k), load_smem<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// EXPLAIN: pk.tile.foreach at {{.*}}fp8.cpp:[[@LINE+2]]:3: general tile path {{.*}}GEMM: the template multiplies fp8 and i8 tiles with B stored [N, K] (mma_t) only, as 8-bit wgmma has no transpose; this is mma with B stored [K, N]
PK_KERNEL void fp8_gemm_kn(Tensor<f8e4m3, 2> a, Tensor<f8e4m3, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 128))
      acc = mma(load_smem<128, 128>(a, m, k), load_smem<128, 256>(b, k, n), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

#ifdef REDUCE_FP8
// REDUCE: fp8.cpp:[[@LINE+1]]:62: error: all_reduce: reductions support bf16, f16, f32, i32 and i64, got 'f8e5m2'; fp8 values do not add: reduce them as f32 or bf16 (cast, then quantise the result)
PK_KERNEL void sum_fp8(Sym<f8e5m2, 1> x, Sym<f8e5m2, 1> y) { all_reduce(Sum, x, y); }
#endif

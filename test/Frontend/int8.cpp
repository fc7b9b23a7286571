// RUN: pkc %s --emit=mlir | FileCheck %s
// RUN: pkc %s -o - | FileCheck %s --check-prefix=CUDA
// RUN: not pkc %s -DWIDE_CONSTANT --emit=mlir 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: not pkc %s -DROW_SUM --emit=mlir 2>&1 | FileCheck %s --check-prefix=ROWSUM
// RUN: not pkc %s -DI8_MMA --emit=mlir 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not pkc %s -DI8_MIXED_MMA --emit=mlir 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not pkc %s -DI8_INDEX --emit=mlir 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not pkc %s -DI8_ALL_REDUCE --emit=mlir 2>&1 | FileCheck %s --check-prefix=ALLREDUCE
// Tests the i8 element type: i8 tensors and tiles become MLIR's i8 and CUDA's signed char, with
// wrapping maps (pk::tile::wrap_*), round (rintf) and casts both ways; a constant that does not fit an i8 tile,
// a row reduction of i8, i8 operands of mma into an f32 accumulator or beside a bf16 one, an i8
// index tile and an i8 all-reduce are errors at
// their source locations, each naming the fix.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: pk.kernel @i8_tiles(
// CHECK-SAME: !pk.tensor<?x?xi8>, %{{.*}}: !pk.tensor<?x?xi8>
// CHECK: pk.tile.load {{.*}} -> !pk.tile<16x64xi8>
// CHECK: pk.tile.map <add> {{.*}} -> !pk.tile<16x64xi8>
// CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x64xi8> to !pk.tile<16x64xf32>
// CHECK: pk.tile.map <round> %{{.*}} : !pk.tile<16x64xf32> -> !pk.tile<16x64xf32>
// CHECK: pk.tile.cast %{{.*}} : !pk.tile<16x64xf32> to !pk.tile<16x64xi8>
// CUDA-LABEL: i8_tiles(
// CUDA-SAME: pk::Tensor<signed char> arg0, pk::Tensor<signed char> arg1
// CUDA: pk::tile::rt<signed char, 2, 16, 64, 1, 1, {{[0-9]+}}> [[T:tile[0-9]+]];
// CUDA: pk::tile::wrap_add(x, y)
// CUDA: rintf(x)
PK_KERNEL void i8_tiles(Tensor<i8, 2> x, Tensor<i8, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64})) {
    auto t = load<16, 64>(x, m, n);
#if defined(WIDE_CONSTANT)
    // WIDE: int8.cpp:[[@LINE+1]]:18: error: 200 does not fit the i8 tile it meets (it would wrap); make that tile i32 first: cast<i32>(t)
    store(y, t + 200, m, n);
#elif defined(ROW_SUM)
    // ROWSUM: error: static assertion failed{{.*}}row_sum / row_max / row_min of i8 tiles would wrap at 8 bits
    store(y, row_sum(t), m, 0);
#elif defined(I8_MMA)
    auto acc = zeros<f32, 16, 16>();
    // MMA: int8.cpp:[[@LINE+1]]:11: error: mma: i8 operands accumulate into an i32 register tile, got 'f32'
    acc = mma_t(load<16, 64>(x, m, 0), load<16, 64>(x, n, 0), acc);
    store(y, cast<i8>(acc), m, n);
#elif defined(I8_MIXED_MMA)
    auto acc = zeros<f32, 16, 16>();
    // MIXED: int8.cpp:[[@LINE+1]]:11: error: mma: a and b must both be bf16, both f16, or both fp8 (e4m3 or e5m2) (or both i8, into an i32 accumulator); i8 tiles multiply as bf16 beside a float tile (cast<bf16>(t) is exact for every i8 value)
    acc = mma_t(load<16, 64>(x, m, 0), cast<bf16>(load<16, 64>(x, n, 0)), acc);
    store(y, cast<i8>(acc), m, n);
#elif defined(I8_INDEX)
    // INDEX: error: static assertion failed{{.*}}rows move by an integer index tile (i32 or i64)
    store(y, load_rows<16, 64>(x, load<16, 1>(x, m, 0), 0), m, n);
#else
    store(y, cast<i8>(round(cast<f32>(t + t) * 0.5f)), m, n);
#endif
  }
}

#ifdef I8_ALL_REDUCE
// ALLREDUCE: int8.cpp:[[@LINE+1]]:53: error: all_reduce: reductions support bf16, f16, f32, i32 and i64, got 'i8'; i8 values would wrap at 8 bits: reduce them as i32
PK_KERNEL void i8_sum(Sym<i8, 1> x, Sym<i8, 1> y) { all_reduce(Sum, x, y); }
#endif

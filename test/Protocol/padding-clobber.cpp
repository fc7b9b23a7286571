// RUN: pkc %s -o /dev/null 2>&1 | FileCheck %s
// Tests the warning for a partial tile whose padding rows a later store writes over what an
// earlier store of the launch wrote (set 34, findings 1 and 3): it follows the valid rows through
// a GEMM's K loop (the carried accumulator takes A's rows) and through one mma_t whose operands
// differ in shape from the product, and between a host loop's trips; it stays quiet where a tile
// rewrites the very box an earlier store filled (zero fill, then accumulate).
#include <pk/spec.h>
using namespace pk;

// a [2, M, K]; slot 1's product into rows M + m, then slot 0's into rows m: slot 0's last tile's
// padding rows land on slot 1's first rows.
// CHECK: padding-clobber.cpp:[[@LINE+10]]:5: warning: this store writes its tile's padding {{.*}} over what the store at {{.*}}padding-clobber.cpp:[[@LINE+5]]:5 wrote earlier in the launch
PK_KERNEL void gemm_slots(Tensor<bf16, 3> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<64, 64>(a, 1, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), a.dim(1) + m, n);
  }
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, a.dim(2), 64)) acc = mma_t(load<64, 64>(a, 0, m, k), load<64, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}

// CHECK: padding-clobber.cpp:[[@LINE+5]]:5: warning: this store writes its tile's padding {{.*}} over what the store at {{.*}}padding-clobber.cpp:[[@LINE+3]]:5 wrote earlier in the launch
PK_KERNEL void one_product(Tensor<bf16, 3> a, Tensor<bf16, 2> b, Tensor<f32, 2> c) {
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64}))
    store(c, mma_t(load<64, 32>(a, 1, m, 0), load<64, 32>(b, n, 0), zeros<f32, 64, 64>()), a.dim(1) + m, n);
  for (auto [m, n] : tiles(a.dim(1), b.rows(), {64, 64}))
    store(c, mma_t(load<64, 32>(a, 0, m, 0), load<64, 32>(b, n, 0), zeros<f32, 64, 64>()), m, n);
}

// CHECK-NOT: padding-clobber.cpp:[[@LINE+4]]:{{.*}}warning
PK_KERNEL void zero_then_accumulate(Tensor<f32, 2> x, Tensor<f32, 2> out) {
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 64})) store(out, zeros<f32, 16, 64>(), m, n);
  for (auto [m, n] : tiles(out.rows(), out.cols(), {16, 64}))
    store(out, load<16, 64>(out, m, n) + load<16, 64>(x, m, n), m, n);
}
// The same across a host loop's trips (set 34, k61): slot 1 - s at trip s, a collective making
// each trip a launch; trip 1's last tile pads over the rows trip 0 wrote. The padded fix (slots a
// whole number of tiles apart) is quiet.
// CHECK: padding-clobber.cpp:[[@LINE+5]]:7: warning: this store writes its tile's padding {{.*}} over what it wrote in the host loop's trip before
PK_KERNEL void trip_slots(Tensor<bf16, 3> a, Tensor<bf16, 2> c, Sym<f32, 1> u, Sym<f32, 1> v) {
  for (auto s : range(0, 2, 1)) {
    all_reduce(Sum, u, v);
    for (auto [m, n] : tiles(a.dim(1), a.dim(2), {64, 64}))
      store(c, load<64, 64>(a, 1 - s, m, n), (1 - s) * a.dim(1) + m, n);
  }
}
// CHECK-NOT: padding-clobber.cpp:[[@LINE+5]]:{{.*}}warning
PK_KERNEL void trip_slots_padded(Tensor<bf16, 3> a, Tensor<bf16, 2> c, Sym<f32, 1> u, Sym<f32, 1> v) {
  for (auto s : range(0, 2, 1)) {
    all_reduce(Sum, u, v);
    for (auto [m, n] : tiles(a.dim(1), a.dim(2), {64, 64}))
      store(c, load<64, 64>(a, 1 - s, m, n), (1 - s) * ((a.dim(1) + 63) / 64 * 64) + m, n);
  }
}
// CHECK-NOT: warning
// CHECK: pkc: wrote

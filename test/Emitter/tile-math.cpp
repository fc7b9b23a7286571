// RUN: pkc %s -o - | FileCheck %s
// Tests the CUDA forms of tile math on the general path: sigmoid and silu divide by
// rcp.approx (__fdividef, beside the approximate exp), tanh stays precise.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: void {{.*}} math(
// CHECK: return __fdividef(x, 1.f + pk::tile::exp_ftz(-x));
// CHECK: return __fdividef(1.f, 1.f + pk::tile::exp_ftz(-x));
// CHECK: return tanhf(x);
// CHECK-NOT: x / (1.f
PK_KERNEL void math(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 256})) {
    auto t = load<8, 256>(x, m, n);
    store(y, tanh(sigmoid(silu(t))), m, n);
  }
}

// Tests that pow by a constant integer from -4 to 4 multiplies, and any other exponent
// calls powf.
// CHECK-LABEL: void {{.*}} powers(
// CHECK: return x * x;
// CHECK: return (x * x) * (x * x);
// CHECK: return 1.f / (x * x * x);
// CHECK: return 1.f;
// CHECK: return powf(x, y);
PK_KERNEL void powers(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 256})) {
    auto t = load<8, 256>(x, m, n);
    store(y, pow(t, 2.0f) + pow(t, 4.0f) + pow(t, -3.0f) + pow(t, 0.0f) + pow(t, 2.5f), m, n);
  }
}

// Tests that a tile divided by a constant power of two multiplies by its exact inverse, and
// that other divisors (7, a run-time scalar) keep the division.
// CHECK-LABEL: void {{.*}} by_scalar(
// CHECK: return x * 0x1p-3f;
// CHECK: return x * -0x1p1f;
// CHECK: return x / y;
// CHECK: return x / y;
PK_KERNEL void by_scalar(Tensor<f32, 2> x, Tensor<f32, 2> y, float temperature) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {8, 256})) {
    auto t = load<8, 256>(x, m, n);
    store(y, t / 8.0f + t / -0.5f + t / 7.0f + t / temperature, m, n);
  }
}

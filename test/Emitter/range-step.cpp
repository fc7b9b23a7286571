// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --emit=mlir | FileCheck %s --check-prefix=MLIR
// Tests that a range() loop takes a run-time step (a kernel argument, a size divided at run time):
// the emitted loop advances by pk::range_next (which stops at the bound where k += step would
// wrap) behind pk::range_step_ok, which skips the loop and reports the launch when the step is
// not positive, while a constant step needs no guard.
#include <pk/spec.h>
using namespace pk;

// MLIR-LABEL: pk.kernel @by_argument
// MLIR-SAME: %[[S:arg[0-9]+]]: index
// MLIR: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[S]] iter_args
// CHECK-LABEL: by_argument(
// CHECK-SAME: long long [[S:arg[0-9]+]])
// CHECK: if (pk::range_step_ok(ctx, [[S]])) for (long long [[K:k[0-9]+]] = {{.*}}; [[K]] < [[HI:[a-z0-9]+]]; [[K]] = pk::range_next([[K]], [[S]], [[HI]])) {
PK_KERNEL void by_argument(Tensor<f32, 2> x, Tensor<f32, 2> y, index s) {
  for (auto m : tiles(x.rows(), {16})) {
    auto acc = zeros<f32, 16, 64>();
    for (auto k : range(0, x.cols(), s)) acc = acc + load<16, 64>(x, m, k);
    store(y, acc, m, 0);
  }
}

// CHECK-LABEL: by_size(
// CHECK: const long long [[Q:v[0-9]+]] = {{.*}} / {{.*}};
// CHECK: if (pk::range_step_ok(ctx, [[Q]])) for (long long [[K:k[0-9]+]] = {{.*}}; [[K]] = pk::range_next([[K]], [[Q]], {{.*}})) {
PK_KERNEL void by_size(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto k : range(0, x.cols(), x.cols() / 4)) store(y, load<16, 64>(x, m, k) * 2.0f, m, k);
}

// CHECK-LABEL: constant_step(
// CHECK-NOT: range_step_ok
// CHECK: for (long long [[K:k[0-9]+]] = {{.*}}; [[K]] += {{c[0-9]+}}) {
PK_KERNEL void constant_step(Tensor<f32, 2> x, Tensor<f32, 2> y) {
  for (auto m : tiles(x.rows(), {16}))
    for (auto k : range(0, x.cols(), 64)) store(y, load<16, 64>(x, m, k), m, k);
}

// RUN: pkc %s -o - | FileCheck %s
// RUN: pkc %s --emit=cubin -o %t.cubin
// Tests that index scalars divided by a run-time value go through pk::scalar_div / scalar_rem
// (0 for a zero divisor, no overflow for the minimum over -1: defined on the GPU), while a
// constant divisor other than 0 and -1 keeps C++'s own `/` and `%`.
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: owner_by_rows(
// CHECK: const long long [[OWNER:v[0-9]+]] = pk::scalar_div<long long>({{i[0-9]+}}, arg2);
// CHECK: pk::peer_in_range(ctx, [[OWNER]])
PK_KERNEL void owner_by_rows(Sym<f32, 2> part, Sym<f32, 2> acc, index rows_per) {
  for (auto [m, n] : tiles(part.rows(), part.cols(), {32, 128}))
    store_add(acc.on(m / rows_per), load<32, 128>(part, m, n), m, n);
}

// CHECK-LABEL: shifted_ids(
// CHECK: = pk::scalar_rem<long long>({{i[0-9]+}}, arg2);
// CHECK: = {{i[0-9]+}} / {{c[0-9]+}};
PK_KERNEL void shifted_ids(Tensor<i64, 1> ids, Tensor<i64, 1> out, index period) {
  for (auto i : tiles(ids.size(), {256})) store(out, load<256>(ids, i) + i % period + i / 3, i);
}

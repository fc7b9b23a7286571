// RUN: pkc %s -o %t.cu --explain 2>&1 | FileCheck %s --implicit-check-not=error
// Tests that a range loop whose one tile loop moves a tensor between ranks that it also reads or
// writes locally (a ring all-gather written step by step: push what the previous step received,
// or pull what the peer received) runs as a host loop of launches, one launch per step, rather
// than being refused as a race between steps (specs10 finding 4).
#include <pk/spec.h>
using namespace pk;

// CHECK-LABEL: decisions for kernel 'ring_ag_push':
// CHECK-NEXT: launches: {{.*}}for each trip of the range loop at {{.*}}ring-step-loop.cpp:{{[0-9]+}}:3, a host loop: ring_ag_push_launch1
PK_KERNEL void ring_ag_push(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 256}))
    store(y, load<1, 256>(x, m, n), rank() * x.rows() + m, n);
  for (auto s : range(0, world_size() - 1)) {
    index c = (rank() + world_size() - s) % world_size();
    for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 256}))
      store(y.on(next_rank()), load<1, 256>(y, c * x.rows() + m, n), c * x.rows() + m, n);
  }
}

// CHECK-LABEL: decisions for kernel 'ring_ag_pull':
// CHECK-NEXT: launches: {{.*}}for each trip of the range loop at {{.*}}ring-step-loop.cpp:{{[0-9]+}}:3, a host loop: ring_ag_pull_launch1
PK_KERNEL void ring_ag_pull(Sym<bf16, 2> x, Sym<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 256}))
    store(y, load<1, 256>(x, m, n), rank() * x.rows() + m, n);
  for (auto s : range(0, world_size() - 1)) {
    index c = (rank() + world_size() - s - 1) % world_size();
    for (auto [m, n] : tiles(x.rows(), x.cols(), {1, 256}))
      store(y, load<1, 256>(y.on(prev_rank()), c * x.rows() + m, n), c * x.rows() + m, n);
  }
}

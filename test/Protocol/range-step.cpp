// RUN: not pkc %s -o /dev/null 2>&1 | FileCheck %s
// RUN: pkc %s -o /dev/null -DLOCAL 2>&1 | FileCheck %s --check-prefix=LOCAL
// Tests that the protocol checker takes a range() loop with a run-time step where it only loads,
// computes and stores on this rank (modelled with every value of [lo, hi) as a trip, which
// covers the accesses of any positive step), and rejects one that moves tiles to a peer, whose
// trips it would have to count, at the loop.
#include <pk/spec.h>
using namespace pk;
#ifdef LOCAL
// LOCAL: pkc: wrote
// A kernel that does not communicate may also carry an index through such a loop (it is checked
// for blocks racing only where the model can follow it).
PK_KERNEL void local_only_kernel(Tensor<f32, 1> x, Tensor<f32, 1> y, index s) {
  for (auto i : tiles(x.size(), {256})) {
    index j = 0;
    for (auto k : range(0, 8, s)) j = j + k;
    store(y, load<256>(x, i) * float(j), i);
  }
}
PK_KERNEL void local_loop(Tensor<f32, 2> x, Sym<f32, 2> y, Tensor<f32, 2> z, index s) {
  for (auto [m, n] : tiles(x.rows(), x.cols(), {16, 64}))
    store(y.on(next_rank()), load<16, 64>(x, m, n), m, n);
  for (auto m : tiles(x.rows(), {16}))
    for (auto k : range(0, x.cols(), s)) store(z, load<16, 64>(x, m, k) * 2.0f, m, k);
}
#else
PK_KERNEL void peer_loop(Tensor<f32, 2> x, Sym<f32, 2> y, index s) {
  for (auto m : tiles(x.rows(), {16}))
// CHECK: range-step.cpp:[[@LINE+1]]:5: error: this range() loop signals, waits or communicates (pk.comm.store_async at {{.*}}range-step.cpp:[[@LINE+2]]:7) with a run-time step, so the protocol checker cannot count its trips: give it a positive integer constant step (a run-time step is fine in loops that only load, compute and store)
    for (auto k : range(0, x.cols(), s))
      store(y.on(next_rank()), load<16, 64>(x, m, k), m, k);
}
#endif
